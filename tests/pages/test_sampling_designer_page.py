"""AppTest checks for pages/sampling_designer.py: defaults, every control moves the output, bad uploads.

Only the open tab draws its numbers and charts (the tabs are bound to the URL as ``sd_tab``), so each check opens
the tab it looks at; every tab's controls are drawn in every run.
"""

from __future__ import annotations

import hashlib
import json
import math

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

PAGE = str(ROOT / "pages" / "sampling_designer.py")


SIMPLE, RANDOM, ROUNDING, CLUSTER, STRATA = ("Simple random samples", "Random sample size",
                                             "Rounding & data-dependent size", "Cluster sampling",
                                             "Stratified sampling & allocation")


def fresh(tab: str | None = None) -> AppTest:
    """A new session, opened on ``tab`` through the URL (``?sd_tab=...``) as a shared link would."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    if tab is not None:
        at.query_params["sd_tab"] = tab
    return at


def open_tab(at: AppTest, tab: str) -> AppTest:
    # through the URL: AppTest re-sends the tab widget's last value, which outranks a Session State write
    at.query_params["sd_tab"] = tab
    return at.run()


@pytest.fixture(scope="module")
def base() -> dict[str, AppTest]:
    """The default design, one run per open tab."""
    out = {}
    for tab in (SIMPLE, RANDOM, ROUNDING, CLUSTER, STRATA):
        at = fresh(tab).run()
        assert not at.exception
        out[tab] = at
    return out


def snapshot(at: AppTest) -> str:
    """Everything a user sees that depends on the inputs: metrics, text, and the charts' specs."""
    parts = [f"{m.label}={m.value}" for m in at.metric]
    parts += [e.value for e in at.markdown] + [e.value for e in at.caption]
    parts += [e.value for e in at.error] + [e.value for e in at.warning]
    parts += [hashlib.sha1(c.proto.spec.encode()).hexdigest() for c in at.get("plotly_chart")]
    return "\n".join(parts)


def metric_value(at: AppTest, label: str) -> float:
    for m in at.metric:
        if m.label.replace("\\", "") == label:   # labels are Markdown-escaped (ui.show.cards)
            return float(m.value.replace(",", ""))
    raise KeyError(label)


def test_defaults_render(base):
    for at in base.values():
        assert not at_errors_unexpected(at)
    # the open tab's charts only: 1 + 2 + 1 + 2 + 3 (the CBP chart sits in a closed expander, still drawn)
    charts = {tab: len(at.get("plotly_chart")) for tab, at in base.items()}
    assert charts == {SIMPLE: 1, RANDOM: 2, ROUNDING: 1, CLUSTER: 2, STRATA: 4}
    # SRSWOR default: ε = 1, m = 100, n = 10,000 → log1p(0.01·(e − 1)) (Theorem 2)
    assert metric_value(base[SIMPLE], "population ε′") == pytest.approx(math.log1p(0.01 * math.expm1(1.0)),
                                                                       rel=1e-3)
    # Tab 4 equal clusters c = 20, k = 100, ℓ = 10, ε = 1: near-total loss of amplification
    assert metric_value(base[CLUSTER], "upper ε′ (Thm 8)") == pytest.approx(1.0, abs=1e-3)
    # stratified default (SP18): worst Neyman shift 9.589, rounded ‖Δ‖₁ = 10, ‖Δ‖∞ = 5
    assert metric_value(base[STRATA], "shift before rounding") == pytest.approx(9.589, abs=1e-3)
    assert metric_value(base[STRATA], "sample sizes moved in total") == 10
    assert any("make privacy worse" in e.value for e in base[STRATA].error)
    # every tab explains its plots in plain words with a paper reference
    assert sum("Reading:" in c.value or "Theorems 7–9" in c.value
               for at in base.values() for c in at.caption) >= 8


def _alerts(at: AppTest) -> list[str]:
    return [e.value.replace("\\", "") for kind in ("success", "info", "warning", "error") for e in getattr(at, kind)]


def test_every_tab_leads_with_a_verdict_naming_its_numbers(base):
    """Issue 14 item 1: a plain sentence with the result's numbers on every tab (values from closed forms)."""
    # Simple: ε = 1, q = 0.01 → log1p(0.01·(e − 1)) = 0.017 (Theorem 2)
    assert any(a.startswith("A 1% simple random sample (100 of 10,000) turns ε = 1 into ε′ = 0.017")
               for a in _alerts(base[SIMPLE])), _alerts(base[SIMPLE])
    # Random size defaults: upper 0.999903 (mpmath, issue 12 ex. 1) → almost none
    assert any("gives almost no amplification" in a for a in _alerts(base[RANDOM]))
    # Rounding: r = 0.05, ε = 1: log1p(0.1·(e² − 1)) + log1p(0.05·(e² − 1)) = 0.771
    assert any("r = 5% with randomised rounding turns ε = 1 into at most ε′ = 0.77" in a
               for a in _alerts(base[ROUNDING]))
    # Cluster: 10 of 100 clusters of 20, ε = 1 → B(1, 0.1, 40) = 1.0; SRS reasoning log1p(0.1·(e − 1)) = 0.16
    assert any(a.startswith("Cluster sampling of 10 of 100 clusters (20 records each) gives no amplification")
               and "would wrongly claim ε′ = 0.16" in a for a in _alerts(base[CLUSTER]))
    # Stratified SP18: Theorem 11 at r = 120/4,250 and ‖Δ‖₁ = 10
    r = 120 / 4250
    thm11 = math.log1p(2 * r * math.expm1(2)) + math.log1p(r * math.expm1(2))
    assert any(f"turns ε = 1 into ε′ = {thm11:.2f} (Theorem 11)" in a and "by 10 in total" in a
               for a in _alerts(base[STRATA])), _alerts(base[STRATA])
    assert any(a.startswith("The privacy-aware allocation gives the smallest error") for a in _alerts(base[STRATA]))


def test_every_tab_offers_its_copy_as_code_script_with_the_tab_settings(base):
    """Issue 15 item 2: the open tab's script (dpdash.sampling.script) is on the page, with the tab's settings."""
    want = {SIMPLE: "epsilon, n, m, rate, delta, target = 1.0, 10000, 100, 0.01, 0.0, 1.0",
            RANDOM: "family, base, mean, sd, low, high, p_full = 'gaussian', 'gaussian', 5000.0, 100.0",
            ROUNDING: "epsilon, rate, pair_n, target = 1.0, 0.05, 14, 1.0",
            CLUSTER: "size_counts = {20: 100}", STRATA: "N_h = np.array([3000, 1000, 250], dtype=float)"}
    for tab, at in base.items():
        scripts = [c.value for c in at.code if "from dpdash.sampling import core as sp" in c.value]
        assert len(scripts) == 1 and want[tab] in scripts[0], (tab, scripts[0][:600] if scripts else None)


def test_page_says_it_works_on_its_own_data(base):
    assert any("works on its own data" in c.value for c in base[SIMPLE].sidebar.caption)


def test_closed_tabs_draw_controls_but_no_outputs(base):
    at = base[SIMPLE]
    assert [m.label for m in at.metric] == ["population ε′", "population δ′"] * 2
    # the open tab's controls, and the Cluster tab's (the Simple tab overlays its design), are mounted
    for key in ("sd_m", "sd_k", "sd_ell"):
        at.number_input(key=key)
    at.number_input(key="sd_c")
    at.toggle(key="sd_show_cluster")
    # tabs never opened and not named in the link draw nothing: their controls are at their defaults
    for kind, key in (("number_input", "sd_mean"), ("number_input", "sd_pair_n"), ("number_input", "sd_alloc_m"),
                      ("number_input", "sd_saw_len"), ("number_input", "sd_mmin")):
        with pytest.raises(KeyError):
            getattr(at, kind)(key=key)
    # the Cluster tab's controls shown among its outputs are drawn too (issue 25: they left the link)
    at.slider(key="sd_et")
    at.slider(key="sd_ec_share")
    for kind, key in (("toggle", "sd_logy"), ("number_input", "sd_draw_seed")):   # the Stratified tab: never opened
        with pytest.raises(KeyError):
            getattr(at, kind)(key=key)


def test_link_setting_of_a_closed_tab_draws_its_controls():
    at = fresh(SIMPLE)
    at.query_params["sd_pair_n"] = "30"   # a Rounding-tab setting in a link opened on the Simple tab
    at.run()
    assert not at.exception
    assert at.number_input(key="sd_pair_n").value == 30   # drawn, so its URL parameter stays
    with pytest.raises(KeyError):
        at.number_input(key="sd_mean")                     # the Random-size tab is still untouched
    open_tab(at, ROUNDING)
    assert at.number_input(key="sd_pair_n").value == 30


def test_simple_tab_overlays_the_cluster_design_from_a_closed_tab():
    at = fresh().run()
    before = snapshot(at)
    at.number_input(key="sd_c").set_value(1).run()    # the Cluster tab is closed; its controls still run
    assert not at.exception
    assert snapshot(at) != before                     # the red cluster mark on the rate plot moved
    at.toggle(key="sd_show_cluster").set_value(False).run()
    hidden = snapshot(at)
    at.number_input(key="sd_c").set_value(20).run()
    assert snapshot(at) == hidden                     # overlay off: the cluster design no longer shows


def test_tab_deep_link_opens_that_tab():
    at = fresh(CLUSTER)
    at.query_params["sd_c"] = "7"
    at.query_params["sd_k"] = "40"
    at.query_params["sd_ell"] = "4"
    at.query_params["sd_eps"] = "0.05"
    at.run()
    assert not at.exception
    # Theorem 8 with equal sizes c = 7 (pair of clusters N = 14), q = 4/40, ε = 0.05 (paper's formula)
    q, eps = 0.1, 0.05
    expected = math.log1p(q / (q + (1 - q) * math.exp(-14 * eps)) * math.expm1(eps))
    assert metric_value(at, "upper ε′ (Thm 8)") == pytest.approx(expected, rel=1e-3)


def at_errors_unexpected(at: AppTest) -> list[str]:
    expected = ("make privacy worse", "Almost no amplification", "No amplification", "gives no amplification",
                "no guaranteed amplification")
    return [e.value for e in at.error if not any(x in e.value for x in expected)]


def _set(at: AppTest, key: str, value):
    for kind in ("select_slider", "slider", "number_input", "toggle", "radio", "selectbox", "multiselect",
                 "text_input", "text_area"):
        try:
            w = getattr(at, kind)(key=key)
        except KeyError:
            continue
        if kind == "select_slider":   # log sliders snap to a 3-significant-figure grid
            opts = [float(o) for o in w.options]
            value = min(opts, key=lambda o: abs(math.log(o) - math.log(value)))
        w.set_value(value)
        return at.run()
    raise KeyError(key)


CONTROLS = [
    # (tab to open, setup: list of (key, value) applied first, key, new value); the global strip is checked on
    # the default tab and, for ε, on every tab
    (SIMPLE, [], "sd_eps", 0.5),
    (RANDOM, [], "sd_eps", 0.5),
    (ROUNDING, [], "sd_eps", 0.5),
    (CLUSTER, [], "sd_eps", 0.5),
    (STRATA, [], "sd_eps", 0.5),
    (SIMPLE, [], "sd_delta_on", True),
    (SIMPLE, [("sd_delta_on", True)], "sd_delta", 1e-4),
    (SIMPLE, [], "sd_n", "20000"),
    (SIMPLE, [], "sd_target", 0.5),
    (SIMPLE, [("sd_m", 500)], "sd_size_mode", "rate"),
    (SIMPLE, [("sd_size_mode", "rate")], "sd_rate", 0.1),
    (SIMPLE, [], "sd_m", 500),
    (SIMPLE, [], "sd_schemes", ["srswr"]),
    (SIMPLE, [], "sd_show_rounding", False),
    (SIMPLE, [], "sd_show_cluster", False),
    (RANDOM, [], "sd_family", "uniform"),
    (RANDOM, [], "sd_mean", 3000.0),
    (RANDOM, [], "sd_sigma", 900.0),
    (RANDOM, [("sd_family", "uniform")], "sd_low", 1000),
    (RANDOM, [("sd_family", "uniform")], "sd_high", 9000),
    (RANDOM, [("sd_family", "mixture")], "sd_base", "point"),
    (RANDOM, [("sd_family", "mixture"), ("sd_eps", 0.01)], "sd_p_full", 0.1),
    (ROUNDING, [], "sd_r", 0.2),
    (ROUNDING, [], "sd_pair_n", 24),
    (ROUNDING, [], "sd_saw_from", 100),
    (ROUNDING, [], "sd_saw_len", 500),
    (ROUNDING, [], "sd_delta_sizes", "1, 1"),
    (CLUSTER, [], "sd_size_src", "list"),
    (CLUSTER, [], "sd_k", 50),
    (CLUSTER, [], "sd_c", 2),
    (CLUSTER, [("sd_size_src", "list")], "sd_size_list", "1, 2, 3, 4, 5, 6"),
    (CLUSTER, [("sd_size_src", "lognormal")], "sd_gen_median", 3.0),
    (CLUSTER, [("sd_size_src", "lognormal")], "sd_gen_sigma", 1.5),
    (CLUSTER, [("sd_size_src", "lognormal")], "sd_gen_seed", 7),
    (CLUSTER, [], "sd_ell", 50),
    (CLUSTER, [("sd_c", 1)], "sd_rw", 0.1),
    (CLUSTER, [], "sd_ec_share", 0.5),
    (CLUSTER, [], "sd_et", 10.0),
    (STRATA, [], "sd_preset", "allocation"),
    (STRATA, [], "sd_alloc_m", 300),
    (STRATA, [], "sd_U", 50.0),
    (STRATA, [("sd_alloc_m", 12)], "sd_mmin", 4),
    (STRATA, [], "sd_methods", ["proportional"]),
    (STRATA, [], "sd_logy", True),
    (STRATA, [], "sd_outside", True),
]


@pytest.mark.slow
@pytest.mark.parametrize("tab, setup, key, value", CONTROLS, ids=[f"{c[2]}-{c[0].split()[0]}" for c in CONTROLS])
def test_each_control_changes_output(tab, setup, key, value):
    at = fresh(tab).run()
    for k, v in setup:
        at = _set(at, k, v)
    before = snapshot(at)
    at = _set(at, key, value)
    assert not at.exception, at.exception
    assert not at_errors_unexpected(at), at_errors_unexpected(at)
    assert snapshot(at) != before, f"moving {key} changed nothing"


def test_figure2_button_and_draw_button():
    at = fresh(RANDOM).run()
    at.button(key="sd_fig2").click().run()
    assert not at.exception
    assert at.select_slider(key="sd_eps").value == pytest.approx(0.01)
    assert at.text_input(key="sd_n").value == "10000"
    # Figure 2 at σ = 100: bounds close to ε/2
    assert metric_value(at, "upper ε′ (Thm 3)") == pytest.approx(0.005, abs=2e-4)
    at = open_tab(at, STRATA)
    at.number_input(key="sd_draw_seed").set_value(3).run()
    at.button(key="sd_draw").click().run()
    assert not at.exception
    assert any("Draw (seed 3)" in m.value for m in at.markdown)


def test_deep_link_restores_state():
    at = fresh()
    at.query_params["sd_eps"] = "0.5"
    at.query_params["sd_m"] = "2000"
    at.query_params["sd_n"] = "10000"
    at.run()
    assert not at.exception
    assert at.select_slider(key="sd_eps").value == pytest.approx(0.5)
    assert metric_value(at, "population ε′") == pytest.approx(math.log1p(0.2 * math.expm1(0.5)), rel=1e-3)


def test_rounding_banner_above_crossover():
    at = fresh(ROUNDING).run()
    at = _set(at, "sd_r", 0.5)
    assert any("No amplification guaranteed" in e.value for e in at.error)


def _upload(at: AppTest, data: bytes, name: str = "frame.csv") -> AppTest:
    at.file_uploader(key="sd_frame").set_value((name, data, "text/csv"))
    return at.run()


def test_good_frame_upload_fills_strata_and_clusters():
    rows = ["region,block,income"] + [f"{'north' if i % 3 else 'south'},{i % 7},{(i * 37) % 100}" for i in range(300)]
    at = _upload(fresh(STRATA).run(), "\n".join(rows).encode())
    at.selectbox(key="sd_col_stratum").set_value("region").run()
    at.selectbox(key="sd_col_cluster").set_value("block").run()
    at.selectbox(key="sd_col_value").set_value("income").run()
    assert not at.exception
    assert any("Design values computed from this file" in w.value for w in at.warning)
    assert any("300 units" in s.value for s in at.success)
    before = snapshot(at)
    at.toggle(key="sd_ddof1").set_value(True).run()      # S_h with n − 1 changes the Neyman design
    assert not at.exception and snapshot(at) != before
    assert any("strata table was filled" in c.value for c in at.caption)
    at = open_tab(at, CLUSTER)                        # the upload sits above the tabs and survives the switch
    at.radio(key="sd_size_src").set_value("frame").run()
    assert not at.exception and not at_errors_unexpected(at)
    assert any("7 clusters" in s.value for s in at.success)
    # 300 rows in blocks i mod 7: six clusters of 43 and one of 42, drawn as bars labelled by size
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)      # 300 rows over 7 blocks: six of 43, one of 42
    assert spec["data"][0]["x"] == ["42", "43"] and "7 clusters" in spec["layout"]["title"]["text"]


@pytest.mark.parametrize("data, columns, message", [
    (b"", None, "empty"),
    (b"\x00\x01\x02\xff\xfe", None, "not CSV text"),
    (b"s,v\na,1\nb,x\nc,3\n", ("s", "(none)", "v"), "must be numeric"),
    (("s,v\n" + "\n".join(f"s{i},{i}" for i in range(250))).encode(), ("s", "(none)", "v"), "at most 200"),
    (b"s,k\na,1\nb,1\n", ("(none)", "k", "(none)"), "fewer than 2"),
])
def test_bad_frame_upload_shows_clear_error(data, columns, message):
    at = _upload(fresh().run(), data)
    if columns:
        for key, col in zip(("sd_col_stratum", "sd_col_cluster", "sd_col_value"), columns):
            at.selectbox(key=key).set_value(col).run()
    assert not at.exception
    # a file that cannot be read is an error; a column choice that does not fit it is a warning
    shown = [e.value for e in at.error] + [w.value for w in at.warning]
    assert any(message in v for v in shown), shown


def test_paper_43_button_shows_deterministic_jump():
    at = fresh(ROUNDING).run()
    at.button(key="sd_paper43").click().run()
    assert not at.exception
    assert at.number_input(key="sd_pair_n").value == 14
    # [a] §4.3: 14 → 1 case, 15 → 2 cases, so deterministic rounding loses the full ε = 1 on the size
    assert metric_value(at, "deterministic rounding: loss from the size") == pytest.approx(1.0)


@pytest.mark.parametrize("n", [2, 10**9])
def test_extreme_population_sizes(n):
    at = fresh(RANDOM if n > 10**6 else SIMPLE)
    at.query_params["sd_n"] = str(n)
    at.run()
    assert not at.exception
    if n > 10**6:
        # census sizes (issue 23 item 4): the tab computes at n = 10⁹ (it refused above 10⁶); the default law
        # (Gaussian, mean 5,000, σ = 100, ε = 1) tilts to μ + εσ² = 15,000 far from n: f = 1.5·10⁻⁵
        f = 15_000 / n
        assert metric_value(at, "upper ε′ (Thm 3)") == pytest.approx(math.log1p(f * math.expm1(1.0)), rel=1e-3)
        assert metric_value(at, "weighted average size") == pytest.approx(15_000, rel=1e-3)
        assert not any("up to 1,000,000" in w.value for w in at.warning)
    else:
        assert any("is larger than the population" in w.value for w in at.warning)


def test_small_strata_not_covered_by_theorem11():
    at = fresh(STRATA)
    at.query_params["sd_preset"] = "Allocation example"
    at.query_params["sd_alloc_m"] = "20"
    at.run()
    assert not at.exception
    # r = 20/6000: stratum D (N_h = 100) has r·N_h = 1/3 < 1
    assert any("does not cover stratum “D”" in w.value for w in at.warning)
    # and the card does not show the Theorem 6 value as if it were a guarantee
    card = [m for m in at.metric if m.label == "population ε′"][0]
    assert card.value == "—" and "Not covered" in card.proto.help


# ----------------------------------------------------------------------------------------------------------
# Issue 12 / 17 regressions (written before the fixes)
# ----------------------------------------------------------------------------------------------------------

def test_random_size_defaults_cards_are_right():
    # issue 12 ex. 1: n = 10,000, ε = 1, mean 5,000, σ = 100; mpmath (40 digits): 0.999903, 0.999735, 9,998.46
    at = fresh(RANDOM).run()
    assert not at.exception
    assert metric_value(at, "upper ε′ (Thm 3)") == pytest.approx(0.999903, abs=1e-4)
    assert metric_value(at, "lower ε′ (Thm 3)") == pytest.approx(0.999735, abs=1e-4)
    assert metric_value(at, "weighted average size") == pytest.approx(9998.46, abs=1.0)


def _calib_text(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown if "for everyone in the population of" in m.value)


def test_cluster_calibration_names_the_design_population():
    # issue 12 ex. 3: k = 100 clusters of c = 20 → a population of 2,000, not the global n = 10,000
    at = fresh(CLUSTER).run()
    assert "population of 2,000" in _calib_text(at), _calib_text(at)
    at = _set(at, "sd_c", 7)
    assert "population of 700" in _calib_text(at), _calib_text(at)


def test_frame_cluster_calibration_uses_frame_sizes():
    rows = ["block"] + [str(i % 4) for i in range(30)]
    rows = ["block,x"] + [f"{i % 4},{i}" for i in range(30)]
    at = _upload(fresh(CLUSTER).run(), "\n".join(rows).encode())
    at.selectbox(key="sd_col_cluster").set_value("block").run()
    at.radio(key="sd_size_src").set_value("frame").run()
    assert not at.exception
    assert "population of 30" in _calib_text(at), _calib_text(at)


@pytest.mark.parametrize("data", [
    b'stratum,value\n"a,1\nb,2\n',                        # unclosed quote (issue 12 ex. 7)
    b"stratum,value\na,1,9\nb,2\nc,3\n",                  # ragged rows
])
def test_broken_csv_refused_with_message(data):
    at = _upload(fresh(STRATA).run(), data)
    assert not at.exception, at.exception
    assert any("cannot be used" in e.value for e in at.error), [e.value for e in at.error]


def test_same_column_twice_is_refused_clearly():
    rows = ["region,income"] + [f"{'N' if i % 3 else 'S'},{i}" for i in range(40)]
    at = _upload(fresh(STRATA).run(), "\n".join(rows).encode())
    at.selectbox(key="sd_col_stratum").set_value("region").run()
    at.selectbox(key="sd_col_value").set_value("region").run()
    assert not at.exception, at.exception
    msgs = [e.value for e in at.error] + [w.value for w in at.warning] + [i.value for i in at.info]
    assert any("same column" in m for m in msgs), msgs


def test_column_names_are_escaped_in_markdown():
    rows = ["![x](http://evil.example/p),income"] + [f"{'N' if i % 3 else 'S'},{i}" for i in range(40)]
    at = _upload(fresh(STRATA).run(), "\n".join(rows).encode())
    at.selectbox(key="sd_col_stratum").set_value("![x](http://evil.example/p)").run()
    at.selectbox(key="sd_col_value").set_value("![x](http://evil.example/p)").run()
    assert not at.exception
    shown = [e.value for e in at.error] + [w.value for w in at.warning] + [m.value for m in at.markdown] \
        + [c.value for c in at.caption] + [i.value for i in at.info] + [s.value for s in at.success]
    assert not any("](http://evil" in s for s in shown), [s for s in shown if "evil" in s]


def test_every_csv_reads_back(monkeypatch):
    """Every table the page offers as CSV (all five tabs) reads back with pandas defaults and our own reader."""
    import io

    import pandas as pd

    import ui.exports as ex
    from dpdash.common.data import read_uploaded_csv

    written: dict[str, bytes] = {}
    orig = ex.download_csv

    def record(df, *, filename, key, **kw):
        written[filename] = ex.csv_bytes(df)
        return orig(df, filename=filename, key=key, **kw)

    monkeypatch.setattr(ex, "download_csv", record)
    for tab in (SIMPLE, RANDOM, ROUNDING, CLUSTER, STRATA):
        at = fresh(tab).run()
        assert not at.exception
    expected = {"sampling_rate_curve.csv", "random_size_bounds_vs_sigma.csv", "random_size_pmf.csv",
                "rounding_size_channel.csv", "cluster_heatmap.csv", "cluster_bounds.csv", "allocation_sizes.csv",
                "allocation_variance.csv", "neyman_sensitivity.csv", "cbp_example.csv"}
    assert expected <= set(written), expected - set(written)
    for name, data in written.items():
        assert not data.startswith(b"#"), name
        back = pd.read_csv(io.BytesIO(data))
        assert len(back) >= 1 and not any(str(c).startswith("Unnamed") for c in back.columns), name
        assert not any("_" in str(c) for c in back.columns), (name, list(back.columns))   # headers in words
        ds = read_uploaded_csv(data, min_rows=1)
        assert list(ds.frame.columns) == list(back.columns), name
        assert len(ds.frame) == len(back), name


def test_frame_with_huge_values_gives_a_message():
    # values near 1e308 squared in the allocation raised OverflowError (a traceback) on the Stratified tab
    at = _upload(fresh(STRATA).run(), b"s,v\na,1e308\nb,-1e308\nc,3\nc,4\n")
    at.selectbox(key="sd_col_stratum").set_value("s").run()
    at.selectbox(key="sd_col_value").set_value("v").run()
    assert not at.exception, at.exception
    assert any("1e\\+100" in e.value or "1e+100" in e.value for e in at.error), [e.value for e in at.error]


def test_one_record_strata_and_single_unit_sample():
    at = _upload(fresh(STRATA).run(), b"s,v\na,1\nb,2\nc,3\n")
    at.selectbox(key="sd_col_stratum").set_value("s").run()
    at.selectbox(key="sd_col_value").set_value("v").run()
    assert not at.exception and not at_errors_unexpected(at)
    # m = 3 of N = 3 (r = 1): a census, so ε′ = ε = 1 (issue 22; this test used to expect Theorem 6 at r = 1,
    # log1p(2z) + log1p(z) = 4.6, a valid bound but not the guarantee of running M on everyone)
    assert metric_value(at, "population ε′") == pytest.approx(1.0)
    at = _set(at, "sd_alloc_m", 1)            # fewer units than strata: a warning, not a traceback
    assert not at.exception and any("cannot be met" in w.value for w in at.warning)


def test_one_column_frame_and_text_codes():
    # a frame of cluster ids only is one column; codes such as "01" and "1" stay distinct strata (read as text)
    at = _upload(fresh(CLUSTER).run(), ("block\n" + "\n".join(["01", "1", "01", "2", "2", "2"]) + "\n").encode())
    assert not at.exception and not any("cannot be used" in e.value for e in at.error), [e.value for e in at.error]
    at.selectbox(key="sd_col_cluster").set_value("block").run()
    at.radio(key="sd_size_src").set_value("frame").run()
    assert any("3 clusters" in s.value for s in at.success), [s.value for s in at.success]
    assert "population of 6" in _calib_text(at)


def test_hostile_link_lists_do_not_inject_or_crash():
    for key, tab in (("sd_size_list", CLUSTER), ("sd_delta_sizes", ROUNDING)):
        for text in ("![x](http://evil.example/p)", "1, inf", "1e309, 2", "[" * 1500, "9" * 5000, "1," * 200_001):
            at = fresh(tab)
            at.query_params[key] = text
            if key == "sd_size_list":
                at.query_params["sd_size_src"] = "list"
            at.run()
            assert not at.exception, (key, text[:30])
            shown = [w.value for w in at.warning] + [e.value for e in at.error] + [m.value for m in at.markdown]
            assert not any("](http://evil" in s for s in shown), key


def test_sample_size_follows_the_strata_source():
    # m's default depends on the strata: switching preset (or uploading a frame) re-derives it
    at = fresh(STRATA).run()
    assert at.number_input(key="sd_alloc_m").value == 120
    at = _set(at, "sd_preset", "allocation")
    assert at.number_input(key="sd_alloc_m").value == 300
    at = _upload(at, ("s,v\n" + "\n".join(f"{'ab'[i % 2]},{i}" for i in range(50))).encode())
    at.selectbox(key="sd_col_stratum").set_value("s").run()
    assert at.number_input(key="sd_alloc_m").value == 50     # min(120, ΣN_h)
    # a link's m is kept on first load
    at = fresh(STRATA)
    at.query_params["sd_alloc_m"] = "77"
    assert at.run().number_input(key="sd_alloc_m").value == 77


def test_stratum_codes_n_and_na_are_strata_not_missing():
    # "N" (North) and "NA" (North America) are real codes in a frame: only an empty cell is missing
    rows = ["region"] + ["N"] * 5 + ["S"] * 4 + ["NA"] * 3
    at = _upload(fresh(STRATA).run(), ("\n".join(rows) + "\n").encode())
    at.selectbox(key="sd_col_stratum").set_value("region").run()
    assert not at.exception
    assert any("12 units" in s.value for s in at.success), [s.value for s in at.success]
    assert any("3 strata" in s.value for s in at.success), [s.value for s in at.success]


# ------------------------------------------------------------------ option tokens in links (issue 14 item 4)

def _notice(at: AppTest) -> str:
    return " ".join(t.value for t in at.toast)


def _cards(at: AppTest) -> list[str]:
    """The Simple tab's card titles, in the order shown."""
    titles = ("SRS without replacement", "Poisson sampling", "SRS with replacement")
    return [t for m in at.markdown for t in titles if m.value.startswith(f"**{t}**")]


def _one(value):
    return value[-1] if isinstance(value, list) else value


def test_scheme_and_method_links_use_short_tokens():
    at = fresh(SIMPLE)
    at.query_params["sd_schemes"] = "srswr,srswor"
    at.run()
    assert not at.exception and not _notice(at)
    assert at.multiselect(key="sd_schemes").value == ["srswr", "srswor"]   # the link's order, restored exactly
    assert _cards(at) == ["SRS without replacement", "SRS with replacement"]   # cards in their fixed order
    assert _one(at.query_params["sd_schemes"]) == "srswr,srswor"
    # choosing writes tokens; the default choice leaves the link
    at.multiselect(key="sd_schemes").set_value(["poisson"]).run()
    assert _one(at.query_params["sd_schemes"]) == "poisson" and _cards(at) == ["Poisson sampling"]
    at.multiselect(key="sd_schemes").set_value(["srswor", "poisson"]).run()
    assert "sd_schemes" not in dict(at.query_params)
    at = fresh(STRATA)
    at.query_params["sd_methods"] = "privacy_aware,neyman"
    at.run()
    assert not at.exception and not _notice(at)
    assert at.multiselect(key="sd_methods").value == ["privacy_aware", "neyman"]
    # the allocation table (a static table since issue 25): one column per method
    tables = [list(d.value.columns) for d in at.table]
    assert ["privacy-aware", "Neyman (take-all)"] in tables, tables


def test_older_links_with_display_labels_still_work():
    # Streamlit's own binding wrote one parameter per chosen item, with its display label
    at = fresh(SIMPLE)
    at.query_params["sd_schemes"] = ["SRSWR", "Poisson"]
    at.run()
    assert not at.exception and not _notice(at)
    assert at.multiselect(key="sd_schemes").value == ["srswr", "poisson"]
    assert _cards(at) == ["Poisson sampling", "SRS with replacement"]
    assert _one(at.query_params["sd_schemes"]) == "srswr,poisson"   # rewritten as tokens
    at = fresh(STRATA)
    at.query_params["sd_methods"] = ["Neyman (take-all)", "privacy-aware (derived)"]
    at.run()
    assert not at.exception and not _notice(at)
    assert at.multiselect(key="sd_methods").value == ["neyman", "privacy_aware"]
    assert _one(at.query_params["sd_methods"]) == "neyman,privacy_aware"


def test_unknown_items_in_a_link_are_named_and_the_rest_kept():
    at = fresh(SIMPLE)
    at.query_params["sd_schemes"] = "Poisson,stratified,srswr"
    at.query_params["sd_eps"] = "0.5"
    at.run()
    assert not at.exception
    assert "**sd\\_schemes** (“stratified” is not an option; the other items were used)" in _notice(at), _notice(at)
    assert at.multiselect(key="sd_schemes").value == ["poisson", "srswr"]
    assert _cards(at) == ["Poisson sampling", "SRS with replacement"]
    assert at.select_slider(key="sd_eps").value == pytest.approx(0.5)   # the rest of the link applies


def test_strata_editor_shows_empty_cells_blank():
    # a row just added, or a value not given, must not read "None" (issue 14 item 2): the editor's placeholder
    # for a missing value is the empty string
    at = fresh(STRATA).run()
    editors = [d for d in at.dataframe if d.proto.editing_mode != d.proto.EditingMode.READ_ONLY]
    assert len(editors) == 1
    assert editors[0].proto.HasField("placeholder") and editors[0].proto.placeholder == ""


# ----------------------------------------------------------------------------------------------------------
# Issue 22 regressions (written before the fixes): a banner must not restate a number differently from its card
# ----------------------------------------------------------------------------------------------------------

def test_two_stage_cluster_banner_states_the_designs_bound():
    """c = 30, k = 40, ℓ = 4, ε = 0.5, r_w = 0.05: the card's two-stage bound is 0.01385; the banner said
    "no amplification, ε′ = 0.50" (the single-stage Theorem 8 value) beside it."""
    at = fresh(CLUSTER)
    for k, v in (("sd_c", "30"), ("sd_k", "40"), ("sd_ell", "4"), ("sd_eps", "0.5"), ("sd_rw", "0.05")):
        at.query_params[k] = v
    at.run()
    assert not at.exception
    # [a] §5.2 made rigorous (spec §4.8): ε_w = log1p(r_w·expm1(ε)); Theorem 8 at ε_w, q = 4/40, N = 60
    eps_w = math.log1p(0.05 * math.expm1(0.5))
    q = 0.1
    two = math.log1p(q / (q + (1 - q) * math.exp(-60 * eps_w)) * math.expm1(eps_w))
    assert two == pytest.approx(0.0138503030, abs=1e-9)   # spec SP17
    alerts = _alerts(at)
    lead = [a for a in alerts if a.startswith("Cluster sampling of 4 of 40 clusters")]
    assert lead, alerts
    first = lead[0].split(". ")[0]   # the design's own verdict; a later sentence may say what r_w = 1 would give
    assert "no amplification" not in first, lead[0]
    assert f"{two:.2g}" in first, lead[0]   # 0.014, the card's number at the verdict's precision


def test_stratified_census_is_the_unsampled_mechanism():
    """m = N (everyone sampled): ε′ = ε, not the Theorem 11 bound 4.6 at r = 1."""
    at = fresh(STRATA)
    at.query_params["sd_alloc_m"] = "4250"   # the business preset's 3,000 + 1,000 + 250
    at.run()
    assert not at.exception
    assert metric_value(at, "population ε′") == pytest.approx(1.0)
    alerts = _alerts(at)
    assert not any("4.6" in a for a in alerts), alerts
    assert any("ε′ = ε = 1" in a for a in alerts), alerts


def test_size_and_count_controls_take_exact_values_and_refuse_invalid_minimums():
    """Issue 25: "Records per cluster c" was a 0–10,000 slider (c = 0 accepted, no box to type into)."""
    at = fresh(CLUSTER)
    at.query_params["sd_c"] = "0"
    at.run()
    assert not at.exception
    box = at.number_input(key="sd_c")
    assert box.min == 1 and box.value >= 1            # a link's c = 0 is not used
    box.set_value(4321).run()                          # any exact value, typed
    assert not at.exception and at.number_input(key="sd_c").value == 4321
    for key, lo in (("sd_k", 2), ("sd_ell", 1)):
        assert at.number_input(key=key).min == lo
    at = fresh(ROUNDING).run()
    assert at.number_input(key="sd_saw_len").min == 10 and at.number_input(key="sd_pair_n").min == 1
    at = fresh(STRATA).run()
    assert at.number_input(key="sd_mmin").min == 1 and at.number_input(key="sd_alloc_m").min == 1


def test_population_typed_with_a_decimal_comma_or_out_of_range_means_what_is_shown():
    """Issue 34 item 4: "0,5" in a number box became 5, and 0 or 1e300 stayed in the box while the page used the old
    n. The box now reads separators, clears what the page cannot use and names the range (2 to 1,000,000,000)."""
    at = fresh(SIMPLE).run()
    at.text_input(key="sd_n").set_value("20,000").run()
    assert at.text_input(key="sd_n").value == "20000"
    for bad in ("0", "-1", "1e300", "0,5"):
        at.text_input(key="sd_n").set_value(bad).run()
        assert not at.exception and at.text_input(key="sd_n").value == "20000"
        said = " ".join(w.value for w in at.warning)
        assert "2 to 1,000,000,000" in said and "still uses 20000" in said
