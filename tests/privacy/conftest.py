"""Print the empirical audits' ε lower bounds in the run's summary (also under xdist, via user_properties)."""

import pytest

from . import audit


@pytest.fixture(autouse=True)
def _audit_item(request):
    audit.CURRENT[0] = request.node
    yield
    audit.CURRENT[0] = None


def pytest_terminal_summary(terminalreporter):
    rows = [v for key in ("passed", "failed") for rep in terminalreporter.stats.get(key, [])
            if getattr(rep, "when", "") == "call" for k, v in rep.user_properties if k == "privacy_audit"]
    if not rows:
        return
    terminalreporter.section("privacy audit: ε lower bounds (Clopper–Pearson, α = 1e-3)")
    for name, claimed, at, half in sorted(rows):
        terminalreporter.write_line(f"{name}: claimed ε = {claimed:g}; bound at the claimed noise {at:.3f}, "
                                    f"at half the noise {half:.3f}")
