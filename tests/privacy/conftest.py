"""Print the empirical audits' ε lower bounds at the end of a run that included tests/privacy (for release notes)."""

from .audit import RESULTS


def pytest_terminal_summary(terminalreporter):
    if not RESULTS:
        return
    terminalreporter.section("privacy audit: ε lower bounds (Clopper–Pearson, α = 1e-3)")
    for name, (claimed, at, half) in RESULTS.items():
        terminalreporter.write_line(f"{name}: claimed ε = {claimed:g}; bound at the claimed noise {at:.3f}, "
                                    f"at half the noise {half:.3f}")
