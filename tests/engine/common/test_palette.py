"""One colour palette (issue 13): defined once in dpdash/common/palette.py, used by every figure builder and the UI.

The expected colours are Okabe & Ito's published "Color Universal Design" hex values, not read from the code.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from dpdash.common.palette import PALETTE, palette_color

ROOT = Path(__file__).resolve().parents[3]
OKABE_ITO = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}


def test_palette_is_okabe_ito_with_blue_first_and_black_last():
    assert set(PALETTE) == OKABE_ITO and len(PALETTE) == 8
    assert PALETTE[0] == "#0072B2" and PALETTE[-1] == "#000000"
    assert [palette_color(i) for i in (0, 7, 8, 17)] == ["#0072B2", "#000000", "#0072B2", "#E69F00"]


def test_every_figure_module_and_the_ui_template_use_the_one_palette():
    for name, attr in [("dpdash.sortition.figures", "PALETTE"), ("dpdash.epsilon.public_info_figures", "PALETTE"),
                       ("dpdash.stratify.partial_release_figures", "PALETTE"),
                       ("dpdash.epsilon.figures", "PALETTE"), ("dpdash.stratify.figures", "COLORS"),
                       ("dpdash.sampling.figures", "OKABE_ITO"), ("ui.charts", "PALETTE")]:
        assert getattr(importlib.import_module(name), attr) is PALETTE, name


def test_no_other_module_spells_out_a_palette():
    # A second copy would drift: any source file besides dpdash/common/palette.py holding three or more of these
    # colours is a copy. (One colour used as an accent on its own is fine.)
    hexes = re.compile("|".join(re.escape(h) for h in OKABE_ITO), re.I)
    copies = []
    for folder in ("engine", "ui", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "palette.py":
                continue
            if len(set(m.upper() for m in hexes.findall(path.read_text(encoding="utf-8")))) >= 3:
                copies.append(str(path.relative_to(ROOT)))
    if (ROOT / "app.py").exists() and len(set(hexes.findall((ROOT / "app.py").read_text()))) >= 3:
        copies.append("app.py")
    assert copies == []
