"""Where the bundled datasets are: ``data/`` of a checkout, or ``dpdash/bundled`` inside an installed wheel.

The wheel carries the repository's ``data/`` folder as the package ``dpdash.bundled`` (``engine/dpdash/bundled`` is a
link to ``../../data``; engine/pyproject.toml), so a "Copy as
code" script that loads UCI Adult or acs12 runs on a machine with only the installed package (issue 24 item 1).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # engine/dpdash in a checkout, site-packages/dpdash when installed
_CHECKOUT_DATA = _PACKAGE.parents[1] / "data"

#: The folder holding ``adult/``, ``acs12/`` and ``deployments.csv``.
DATA_DIR = _CHECKOUT_DATA if (_CHECKOUT_DATA / "DATA.md").is_file() else _PACKAGE / "bundled"
