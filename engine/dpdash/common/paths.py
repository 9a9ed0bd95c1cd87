"""Where the bundled datasets are: ``data/`` of a checkout, or ``dpdash/bundled`` inside an installed wheel.

The wheel maps the repository's ``data/`` folder to the package ``dpdash.bundled`` (pyproject.toml), so a "Copy as
code" script that loads UCI Adult or acs12 runs on a machine with only the installed package (issue 24 item 1).
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
_CHECKOUT_DATA = _HERE.parent / "data"

#: The folder holding ``adult/``, ``acs12/`` and ``deployments.csv``.
DATA_DIR = _CHECKOUT_DATA if (_CHECKOUT_DATA / "DATA.md").is_file() else _HERE / "bundled"
