"""AppTests for the views in ui/views/: the public-information tab (pi_*, public_information.py) and the
partially private release (pp_*, partially_private.py).

Each panel is rendered by a tiny script that calls its render function, as the host pages do inside a tab.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PRELUDE = f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
TAB_A = PRELUDE + ("from ui.views.public_information import render_public_information_tab\n"
                   "render_public_information_tab()\n")
TAB_B = PRELUDE + ("from ui.views.partially_private import render_partially_private_release\n"
                   "render_partially_private_release()\n")


def _app(script: str) -> AppTest:
    at = AppTest.from_string(script, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metric(at: AppTest, label_start: str) -> str:
    for m in at.metric:  # labels read as shown: ui.show.cards Markdown-escapes them (as tests/product/walk.py reads)
        if re.sub(r"\\(.)", r"\1", m.label).replace("\u2060", "").startswith(label_start):
            return m.value
    raise AssertionError(f"no metric starting with {label_start!r}: {[m.label for m in at.metric]}")


# ------------------------------------------------------------------------------------------- Tab A
def test_public_information_defaults():
    at = _app(TAB_A)
    # spec defaults: ε = 1, N = 100 discrete, n = 50, z0 = .2, z1 = .4 → Δ_z = 13 (spec P1)
    assert _metric(at, "Sensitivity Δ_z") == "13"
    assert _metric(at, "Effective ε = ε·Δ_z") == "13"
    assert _metric(at, "Laplace scale needed") == "13"
    # discrete, N = 100 equals the N = ∞ limit ε + log(1 + e^−ε − e^−2ε) to display precision (spec §2.1)
    assert float(_metric(at, "Effective ε*")) == pytest.approx(1 + math.log(1 + math.exp(-1) - math.exp(-2)), abs=1e-4)
    assert len(at.get("plotly_chart")) >= 5
    assert any("Total budget" in m.label for m in at.metric)  # matching ledger labels → a total
    assert _metric(at, "Total budget").endswith("1.2")


def test_public_information_controls_change_outputs():
    at = _app(TAB_A)
    before = _metric(at, "Effective ε*")
    half = min((float(o) for o in at.select_slider(key="pi_epsilon").options), key=lambda v: abs(v - 0.5))
    at.select_slider(key="pi_epsilon").set_value(half).run()  # a value on the slider's log grid
    assert not at.exception
    assert _metric(at, "Effective ε*") != before
    at.select_slider(key="pi_epsilon").set_value(0.1).run()
    at.select_slider(key="pi_N").set_value(10).run()
    assert float(_metric(at, "Effective ε*")) == pytest.approx(0.173803, abs=1e-4)  # spec P4
    at.radio(key="pi_kind").set_value("continuous").run()
    assert float(_metric(at, "Effective ε*")) == pytest.approx(0.185570, abs=1e-4)
    at.slider(key="pi_z1").set_value(0.2).run()
    assert _metric(at, "Sensitivity Δ_z") == "1"
    at.slider(key="pi_n").set_value(100).run()
    at.slider(key="pi_z0").set_value(0.5).run()
    at.slider(key="pi_z1").set_value(0.75).run()
    assert _metric(at, "Sensitivity Δ_z") == "28"
    at.radio(key="pi_kappa").set_value(1).run()
    real1 = _metric(at, "Realised ε")
    at.radio(key="pi_kappa").set_value(2).run()
    assert _metric(at, "Realised ε") != real1
    at.slider(key="pi_em_n").set_value(1).run()
    at.select_slider(key="pi_epsilon").set_value(1.0).run()
    assert float(_metric(at, "Realised ε")) == pytest.approx(0.5, abs=1e-4)  # n = 1 gives ε/κ (spec P5)
    at.slider(key="pi_p0").set_value(0.5).run()
    at.slider(key="pi_l7_n").set_value(5).run()
    at.radio(key="pi_l7_noise").set_value("laplace").run()
    at.radio(key="pi_l7_post").set_value("round_clamp").run()
    at.slider(key="pi_theta0").set_value(0.3).run()
    assert not at.exception


def test_public_information_gaussian_invalid_shows_error():
    at = _app(TAB_A)
    at.number_input(key="pi_g_rho").set_value(0.4).run()  # n = 10, r = 0 → ρ² > a
    assert not at.exception
    assert any("not a valid model" in e.value for e in at.error)


def test_public_information_query_params_restore():
    at = AppTest.from_string(TAB_A, default_timeout=120)
    at.query_params["pi_n"] = "100"
    at.query_params["pi_z0"] = "0.9"
    at.query_params["pi_z1"] = "0.1"
    at.run()
    assert not at.exception
    assert _metric(at, "Sensitivity Δ_z") == "79"  # spec P1


# ------------------------------------------------------------------------------------------- Tab B
def test_release_defaults_render():
    at = _app(TAB_B)
    assert any("synthetic county data" in i.value.lower() for i in at.info)
    charts = at.get("plotly_chart")
    assert len(charts) >= 4  # relative error, series, contraction, Algorithm 1
    guarantees = at.dataframe[0].value
    assert guarantees["guaranteed ε"].tolist() == pytest.approx([2.0, 0.5, 1.0, 1.0])  # spec P18
    # Verdict first (the first element of the view): PP's error and the unequal guarantees, named.
    # Shown Markdown-escaped, in boxes by tone (the unequal guarantees are a warning).
    verdict = " ".join(e.value for e in list(at.success) + list(at.info) + list(at.warning)).replace("\\", "")
    assert "PP (post-processing)" in verdict and "ε = 2.0" in verdict and "WEM-naive ε = 0.50" in verdict
    assert any("Runs on this server" in c.value for c in at.caption)  # where the WEM runs execute


def test_release_controls_change_outputs():
    at = _app(TAB_B)
    g0 = at.dataframe[0].value["guaranteed ε"].tolist()
    at.checkbox(key="pp_calibrate").check().run()
    assert not at.exception
    assert at.dataframe[0].value["guaranteed ε"].tolist() == pytest.approx([1.0, 0.5, 1.0, 1.0])
    at.select_slider(key="pp_epsilon").set_value(2.0).run()
    assert at.dataframe[0].value["guaranteed ε"].tolist() != g0
    loss0 = at.dataframe[1].value["mean total ℓ₂ loss"].iloc[0]
    at.select_slider(key="pp_epsilon").set_value(0.25).run()
    assert at.dataframe[1].value["mean total ℓ₂ loss"].iloc[0] > loss0  # more noise, more error
    at.checkbox(key="pp_state_total").uncheck().run()
    assert not at.exception
    assert any("WEM-prior is skipped" in i.value for i in at.info)
    at.slider(key="pp_exact_share").set_value(0.5).run()
    at.slider(key="pp_reps").set_value(2).run()
    at.selectbox(key="pp_month").set_value(9).run()
    at.number_input(key="pp_seed").set_value(3).run()
    assert not at.exception


@pytest.mark.slow
def test_release_wem_run_button():
    at = _app(TAB_B)
    at.multiselect(key="pp_methods").set_value(["pp", "wem_congenial"]).run()
    at.slider(key="pp_sweeps").set_value(10).run()
    at.slider(key="pp_reps").set_value(1).run()
    at.button(key="pp_run").click().run(timeout=300)
    assert not at.exception
    methods = set(at.dataframe[1].value["method"])
    assert methods == {"PP (post-processing)", "WEM-congenial"}
    at.button(key="pp_run_alpha").click().run(timeout=300)
    assert not at.exception


def test_release_bad_upload_shows_message():
    at = _app(TAB_B)
    at.radio(key="pp_data").set_value("upload").run()
    assert not at.exception
    bad = (b"county,month,cases,deaths,population\nA,1,5,7,100\nA,2,5,1,100\nB,1,3,0,50\nB,2,3,0,50\nC,1,1,0,9\n"
           b"C,2,1,0,9\n")
    uploader = at.get("file_uploader")
    assert uploader, "no file uploader rendered"
    uploader[0].set_value(("bad.csv", bad, "text/csv")).run()
    assert not at.exception
    errs = [e.value for e in at.error]
    assert any("data row 1" in e and "exceed cases" in e for e in errs), errs
    assert any("synthetic county data" in i.value.lower() for i in at.info)  # fell back to the synthetic panel


def test_release_algorithm1_expander():
    at = _app(TAB_B)
    tables = [d.value for d in at.dataframe if "acceptance rate" in d.value.columns]
    assert tables
    t = tables[0]
    assert t["mean p1"].iloc[0] == pytest.approx(0.453188, abs=1e-6)  # spec P15
    assert t["acceptance rate"].iloc[0] == pytest.approx(0.076902, abs=1e-6)
    at.text_input(key="pp_alg_y").set_value("6, 1").run()
    assert any("exactly 3 cells" in e.value for e in at.warning) and not at.error


def test_release_query_params_restore():
    at = AppTest.from_string(TAB_B, default_timeout=120)
    at.query_params["pp_epsilon"] = "2.0"
    at.query_params["pp_month"] = "Month 10"  # bound selectboxes use the displayed label
    at.query_params["pp_calibrate"] = "true"
    at.query_params["pp_methods"] = ["PP (post-processing)", "WEM-naive"]
    at.run()
    assert not at.exception
    assert at.select_slider(key="pp_epsilon").value == 2.0
    assert at.selectbox(key="pp_month").value == 9
    assert at.checkbox(key="pp_calibrate").value is True
    # ε = 2, Δ = 2, κ = 2, calibrated: PP 4·2/4 = 2, WEM-naive 2·2/4 = 1 (spec §2.7)
    assert at.dataframe[0].value["guaranteed ε"].tolist() == pytest.approx([2.0, 1.0])
    assert any("Month 10" in h.value for h in at.subheader)


def test_release_methods_link_takes_tokens_and_names_unknown_ones():
    """Methods in a link are short tokens (labels still accepted); an unknown item is dropped, the rest kept (the
    notice naming it is drawn by page_end, tested with multi_choice in tests/ui/test_widgets_multi_choice.py)."""
    at = AppTest.from_string(TAB_B, default_timeout=120)
    at.query_params["pp_methods"] = "pp,wem_naive,telepathy"
    at.run()
    assert not at.exception
    assert at.multiselect(key="pp_methods").value == ["pp", "wem_naive"]


# ------------------------------------------------------------------------------------------- issue 12 / 17
def test_release_upload_names_do_not_reach_markdown():
    # A county name quoted in the validator's message is shown as typed, not as a Markdown image.
    evil = "![x](http://evil.example/p)"
    rows = ["county,month,cases,deaths,population"]
    rows += [f"{c},{m},5,1,100" for c in ("A", "B", evil) for m in (1, 2)]
    at = _app(TAB_B)
    at.radio(key="pp_data").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("e.csv", ("\n".join(rows[:-1]) + "\n").encode(), "text/csv")).run()
    assert not at.exception
    errs = [e.value for e in at.error]
    assert errs and "has no row for month" in errs[0]
    assert not [t for t in errs if "](http://evil" in t]


def test_release_algorithm1_non_finite_input_gets_a_message():
    at = _app(TAB_B)
    at.text_input(key="pp_alg_y").set_value("inf, 1, 4").run()
    assert not at.exception
    assert any("finite" in w.value for w in at.warning)


def test_release_uploaded_month_names_are_inert():
    evil = "Zz ![m](http://evil.example/q)"  # sorts last: the default month
    rows = ["county,month,cases,deaths,population"]
    rows += [f"{c},{m},{5 + i},1,{100 * (i + 1)}" for i, c in enumerate("ABC") for m in ("2020-01", evil)]
    at = _app(TAB_B)
    at.radio(key="pp_data").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("m.csv", ("\n".join(rows) + "\n").encode(), "text/csv")).run()
    assert not at.exception and not at.error
    texts = [e.value for kind in ("subheader", "markdown", "caption", "info", "success", "warning")
             for e in getattr(at, kind)]
    assert not [t for t in texts if "](http://evil" in t]


def test_partially_private_release_offers_the_opendp_script():
    """Issue 24 item 3: the PP release with OpenDP's noise, where the county file lives, at the tab's ε and Δ_PP."""
    at = _app(TAB_B)
    src = [c.value for c in at.code if "opendp.prelude" in c.value]
    assert len(src) == 1
    compile(src[0], "ppd_opendp", "exec")
    assert "dp.m.make_laplace" in src[0] and "release.postprocess" in src[0] and "EPSILON = 1.0" in src[0]
