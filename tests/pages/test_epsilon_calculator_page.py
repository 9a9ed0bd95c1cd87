"""AppTest for pages/epsilon_calculator.py: every tab renders, each control group changes its output.

Only the open tab draws its numbers and charts (the tabs are bound to the URL as ``eps_tab``), so each check
opens the tab it looks at, through the URL as a shared link would; every tab's controls are drawn in every run.
"""

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "epsilon_calculator.py")
TABS = ["Noise & accuracy", "Composition", "Budget planner", "Adaptive analysis", "ε as risk",
        "DP vs data splitting", "Private tests", "Max-information & coherence", "Public information"]
COMP, BUDGET, ADAPT, RISK, WIDTHS, TESTS, MAXINFO = TABS[1:8]
PLD, BASIC = "Privacy loss distributions (PLD)", "Basic sum (Thm 2.1.4)"  # the composition table's rule names


def editors_show_no_none(at) -> int:
    """Every editable table sets the text of an empty cell (blank or a dash), so none shows "None" (issue 14 item
    2: Streamlit prints "None" unless ``placeholder`` is given); returns how many editors it checked."""
    editors = [d for d in at.dataframe if d.proto.editing_mode != 0]  # 0: a read-only st.dataframe
    for d in editors:
        assert d.proto.HasField("placeholder") and d.proto.placeholder in ("", "—"), list(d.value.columns)
    return len(editors)


def fresh(**params) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def metric(at, label_start: str) -> str:
    for m in at.metric:  # labels are Markdown-escaped by ui.show.cards ("± half\\-width")
        if m.label.replace("\\", "").startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}: {[m.label for m in at.metric]}")


def frames(at):
    return [d.value for d in at.dataframe]


def table_with(at, column: str):
    found = [f for f in frames(at) if column in f.columns]
    assert found, f"no table with column {column!r}"
    return found[0]


@pytest.fixture(scope="module")
def at():
    return fresh()


def test_defaults_render(at):
    assert len(at.tabs) == 9
    assert metric(at, "± half-width") == "2.996"  # Laplace, ε = 1, 95%: ln(20)
    assert [c.key for c in at.get("plotly_chart")] == ["eps_n1_fig_hw", "eps_n1_fig_noise"]  # the open tab's only
    assert not at.error
    labels = [b.label for b in at.get("download_button")]
    assert any("CSV" in x for x in labels) and any("JSON" in x for x in labels) and any("HTML" in x for x in labels)


@pytest.mark.parametrize("tab", TABS)
def test_every_tab_renders_when_open(tab):
    at = fresh(eps_tab=tab)
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) >= 1
    labels = [b.label for b in at.get("download_button")]
    assert any("HTML" in x for x in labels) and any("JSON" in x for x in labels)
    # issue 15 item 2: every tab hands over a runnable script (its own, only for the open tab)
    assert editors_show_no_none(at) == {BUDGET: 2, "Public information": 1}.get(tab, 0)
    copy = [e for e in at.expander if e.label == "Copy as code"]
    assert len(copy) == 1, [e.label for e in at.expander]
    code = copy[0].get("code")
    assert code and "engine." in code[0].value and "independent" in code[0].value


def test_closed_tab_keeps_controls_and_link_values():
    from scipy import stats
    at = fresh(eps_t_d="10")  # a Private-tests setting in the link, page opened on Tab 1
    assert at.slider(key="eps_t_d").value == 10  # the closed tab's control is still drawn with the link value
    assert not [c for c in at.get("plotly_chart") if c.key.startswith("eps_t_")]
    assert not [f for f in frames(at) if "critical value" in f.columns]
    at.query_params["eps_tab"] = TESTS
    at.run()
    cv = table_with(at, "critical value")
    assert cv["critical value"].iloc[0] == pytest.approx(stats.chi2.isf(0.05, 9), rel=1e-9)  # d − 1 = 9


def test_untouched_tab_draws_nothing_until_opened():
    # (a tab changed and then left keeps its controls: tests/e2e, which can click back to another tab)
    at = fresh()
    assert "eps_t_d" not in {w.key for w in at.get("slider")}  # never opened, nothing in the link: not drawn
    at.query_params["eps_tab"] = TESTS
    at.run()
    assert at.slider(key="eps_t_d").value == 4
    assert {c.key for c in at.get("plotly_chart")} >= {"eps_t_fig_size", "eps_t_fig_pn", "eps_t_fig_pr"}


def test_tab1_controls_change_output(at):
    at.select_slider(key="eps_epsilon").set_value(0.5).run()
    assert not at.exception
    assert metric(at, "± half-width") == "5.991"
    at.selectbox(key="eps_n1_mech").set_value("gaussian").run()
    assert metric(at, "Noise std") != "2"
    at.radio(key="eps_n1_fix").set_value("accuracy").run()
    at.number_input(key="eps_n1_hw").set_value(10.0).run()
    assert metric(at, "± half-width") == "10"
    at.selectbox(key="eps_n1_query").set_value("mean").run()
    at.radio(key="eps_n1_neigh").set_value("add_remove").run()
    assert "release sum and count" in at.warning[0].value.replace("\\", "")


def test_tab2_composition_changes():
    at = fresh(eps_tab=COMP)
    t0 = table_with(at, "rule").copy()
    at.select_slider(key="eps_comp_eps").set_value(0.2).run()
    t1 = table_with(at, "rule")
    assert not at.exception
    assert t1["total ε"].iloc[0] == pytest.approx(2 * t0["total ε"].iloc[0])  # basic: k·ε₀
    assert t1["releases k"].iloc[0] == 1000  # the table (and its CSV) says which k
    at.radio(key="eps_comp_mode").set_value("list").run()
    assert not at.exception
    t2 = table_with(at, "rule").set_index("rule")
    assert t2.loc[BASIC, "total ε"] == pytest.approx(15.50196, rel=1e-6)


def test_tab2_bad_list_from_link():
    bad = json.dumps({"cols": ["kind", "epsilon", "delta", "multiplier", "sigma", "scale", "sensitivity", "rho",
                               "count"],
                      "rows": [["gaussian", None, 0, None, None, None, 1, None, 3]]})
    at = fresh(eps_tab=COMP, eps_comp_mode="A list", eps_comp_rows=bad)
    assert editors_show_no_none(at) == 1  # the list's empty cells (ε of a Gaussian row) show blank
    assert any("row 1" in e.value and "multiplier" in e.value for e in at.error)


def test_tab3_budget_and_deep_link():
    rows = {"cols": ["name", "query", "mechanism", "L", "U", "n", "cells", "target ±", "confidence", "hold ±",
                     "hold share", "weight"],
            "rows": [["visits", "count", "laplace", 0, 1, None, 1, 20.0, 0.95, None, None, 1.0]]}
    at = fresh(eps_tab=BUDGET, eps_b_rows=json.dumps(rows))
    md = " ".join(m.value for m in at.markdown)
    assert "Total ε = 0.1498" in md  # ln(20)/20
    at.radio(key="eps_b_mode").set_value("budget_first").run()
    assert not at.exception
    md2 = " ".join(m.value for m in at.markdown)
    assert "Total ε = 1" in md2 or "Total ε = 0.9999" in md2
    at.selectbox(key="eps_b_rule").set_value("zcdp").run()
    assert not at.exception
    assert "ρ =" in " ".join(m.value for m in at.markdown)


def test_tab3_infeasible_hold_message():
    rows = {"cols": ["name", "query", "mechanism", "L", "U", "n", "cells", "target ±", "confidence", "hold ±",
                     "hold share", "weight"],
            "rows": [["a", "count", "laplace", 0, 1, None, 1, 50.0, 0.95, 0.5, None, 1.0],
                     ["b", "count", "laplace", 0, 1, None, 1, 50.0, 0.95, None, None, 1.0]]}
    at = fresh(eps_tab=BUDGET, eps_b_rows=json.dumps(rows), eps_b_mode="Budget first")
    assert any("held at a fixed accuracy need" in w.value for w in at.warning)  # the plan's reason, under the verdict
    assert any("cannot be met" in w.value for w in at.warning)  # bad news in a warning box, not a green one
    assert not at.success


def test_tab4_adaptive_changes():
    at = fresh(eps_tab=ADAPT)
    # the verdict comes first: the basic filter stops at 100 requests of 0.01 (0.01 × 100 = ε_g = 1)
    # not every request is answered: plain information (blue), not good news (issue 22: tone matches the news)
    assert "basic filter answers 100 of 2,000" in at.info[0].value.replace("\\", "")
    at.select_slider(key="eps_a_epsg").set_value(2.0).run()
    assert "basic filter answers 200 of 2,000" in at.info[0].value.replace("\\", "")
    at.selectbox(key="eps_a_seq").set_value("pasted").run()
    at.text_area(key="eps_a_paste").set_value("0.1, oops").run()
    assert any("pasted list" in e.value for e in at.error)


def test_tab5_risk_changes():
    at = fresh(eps_tab=RISK)
    before = metric(at, "Worst-case posterior")
    at.slider(key="eps_r_prior").set_value(50).run()
    assert metric(at, "Worst-case posterior") != before
    at.checkbox(key="eps_r_hasdelta").check().run()
    assert any("no uniform posterior bound" in w.value for w in at.warning)
    at.radio(key="eps_r_shape").set_value("laplace").run()
    assert not at.exception


def test_tab6_and_tab7_and_tab8_change():
    at = fresh(eps_tab=WIDTHS)
    w0 = table_with(at, "error for all answers τ").copy()
    at.number_input(key="eps_w_n").set_value(100_000).run()
    w1 = table_with(at, "error for all answers τ")
    assert not w0.equals(w1)
    at = fresh(eps_tab=TESTS)
    cv0 = table_with(at, "critical value").copy()
    at.slider(key="eps_t_d").set_value(10).run()
    cv1 = table_with(at, "critical value")
    assert not cv0.equals(cv1)
    at = fresh(eps_tab=MAXINFO)
    g0 = metric(at, "Corrected threshold")
    at.select_slider(key="eps_m_eps").set_value(0.001).run()
    assert metric(at, "Corrected threshold") != g0


def test_tab7_simulate_renders_table():
    at = fresh(eps_tab=TESTS, eps_t_trials="50")
    at.button(key="eps_t_sim").click().run()
    assert not at.exception
    sims = [f for f in frames(at) if "standard error" in f.columns]
    assert sims and set(sims[0]["quantity"]) == {"size (false alarms)", "power"}
    assert any("Seed 0" in c.value for c in at.caption)


def test_tab7_bad_vector_message():
    at = fresh(eps_tab=TESTS, eps_t_p0mode="entered", eps_t_p0="0.5, abc, 0.25, 0.25")
    assert any("cannot read" in e.value for e in at.warning)


def test_reset_to_defaults():
    at = fresh(eps_epsilon="0.5")
    assert metric(at, "± half-width") == "5.991"
    at.button(key="eps_reset").click().run()
    assert metric(at, "± half-width") == "2.996"


def _cv(at) -> dict:
    t = table_with(at, "critical value")
    return dict(zip(t["test"], t["critical value"]))


def test_tab7_independence_rxc_controls_change_output():
    from scipy import stats
    at = fresh(eps_tab=TESTS)
    at.radio(key="eps_t_test").set_value("independence").run()
    assert not at.exception and not at.error
    cv0 = _cv(at)
    assert list(cv0.values())[0] == pytest.approx(stats.chi2.isf(0.05, 1), rel=1e-6)
    asym0 = [v for k, v in cv0.items() if k.startswith("AsymptIndep")][0]
    at.slider(key="eps_t_r").set_value(3).run()
    assert not at.exception and not at.error
    # a 3 × 2 table: the marginals of the old length become uniform, the tests have 2 degrees of freedom
    assert at.text_input(key="eps_t_pi1").value == "1/3, 1/3, 1/3"
    cv1 = _cv(at)
    assert list(cv1.values())[0] == pytest.approx(stats.chi2.isf(0.05, 2), rel=1e-6)
    asym1 = [v for k, v in cv1.items() if k.startswith("AsymptIndep")][0]
    assert asym1 != pytest.approx(asym0, rel=1e-3)
    at.text_input(key="eps_t_pi2").set_value("0.9, 0.1").run()
    asym2 = [v for k, v in _cv(at).items() if k.startswith("AsymptIndep")][0]
    assert asym2 != pytest.approx(asym1, rel=1e-3)
    # the one-table demo: a seeded noisy 3 × 2 table, its 2MLE projection and both decisions
    dec = table_with(at, "decision")
    assert set(dec["decision"]) <= {"reject", "do not reject", "no conclusion"} and len(dec) == 2
    proj = [f for f in frames(at) if list(f.columns) == ["column 1", "column 2"]]
    assert len(proj) == 2 and float(proj[1].to_numpy().sum()) == pytest.approx(10_000)
    assert (proj[1].to_numpy() >= 0).all()
    at.number_input(key="eps_t_seed").set_value(5).run()
    assert not table_with(at, "decision")["statistic"].equals(dec["statistic"])
    at.text_input(key="eps_t_pi2").set_value("0.5, 0.6").run()
    assert any("sum to 1" in e.value for e in at.warning)


def _sim_table(at):
    sims = [f for f in frames(at) if "standard error" in f.columns]
    assert sims, "no simulation table"
    return sims[0]


def test_tab7_simulation_sweeps_privacy_and_grid():
    at = fresh(eps_tab=TESTS, eps_t_trials="50")
    at.radio(key="eps_t_sweep").set_value("privacy").run()
    charts_before = len(at.get("plotly_chart"))
    at.button(key="eps_t_sim").click().run()
    assert not at.exception
    t = _sim_table(at)
    assert sorted(set(t["ρ"])) == pytest.approx([0.000125, 0.00125, 0.0125])
    assert set(t["n"]) == {10_000}
    assert len(at.get("plotly_chart")) == charts_before + 1
    at.slider(key="eps_t_points").set_value(2).run()
    at.radio(key="eps_t_sweep").set_value("both").run()
    at.button(key="eps_t_sim").click().run()
    t = _sim_table(at)
    assert set(t["n"]) == {1000, 100_000} and len(set(t["ρ"])) == 2
    assert len(t) == 2 * 2 * 2 * 4  # n × ρ × {size, power} × 4 GOF tests
    assert any("Seed 0" in c.value for c in at.caption)


def test_tab7_independence_simulation_rxc():
    at = fresh(eps_tab=TESTS, eps_t_trials="50")
    at.radio(key="eps_t_test").set_value("independence").run()
    at.slider(key="eps_t_c").set_value(3).run()
    at.button(key="eps_t_sim").click().run()
    assert not at.exception
    t = _sim_table(at)
    assert set(t["test"]) == {"classical on noisy counts", "AsymptIndep (2MLE)", "projected"}
    assert set(t["quantity"]) == {"size (false alarms)", "power"} and set(t["n"]) == {1000, 10_000, 100_000}


def test_tab2_pld_over_1000_behind_button():
    from dp_accounting import LaplaceDpEvent
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
    at = fresh(eps_tab=COMP, eps_comp_kmax="2000")
    assert PLD not in set(table_with(at, "rule")["rule"])
    assert any("press the button" in i.value for i in at.info)
    at.button(key="eps_comp_pldbtn").click().run()
    assert not at.exception
    t = table_with(at, "rule").set_index("rule")
    acc_ = PLDAccountant(value_discretization_interval=1e-4)
    acc_.compose(LaplaceDpEvent(10.0), 2000)  # Laplace ε = 0.1 is scale 10
    assert t.loc[PLD, "total ε"] == pytest.approx(acc_.get_epsilon(1e-6), abs=1e-4)
    # a different list needs the button again
    at.select_slider(key="eps_comp_eps").set_value(0.2).run()
    assert PLD not in set(table_with(at, "rule")["rule"])


# =========================================================================== issue 12 / 17 regressions
def _fig(at, key):
    for p in at.get("plotly_chart"):
        if getattr(p, "key", None) == key or key in str(p.proto.id):
            return json.loads(p.proto.spec)
    raise AssertionError(f"no chart {key!r}")


def _rows(name_target_mech):
    return json.dumps({"cols": ["name", "query", "mechanism", "L", "U", "n", "cells", "target ±", "confidence",
                                "hold ±", "hold share", "weight"],
                       "rows": [[nm, "count", m, 0, 1, None, 1, t, 0.95, None, None, 1.0]
                                for nm, t, m in name_target_mech]})


def _bar_total(fig) -> float:
    return sum(sum(t["x"]) for t in fig["data"] if t.get("type") == "bar")


def _alloc(at):
    return table_with(at, "achieved ±")


def test_budget_chart_sums_to_the_budget_under_pld():
    # issue 12 example 2: 20 Gaussian counts, budget-first ε = 1, PLD: the bars stacked to ≈ 4.9
    rows = _rows([(f"c{i}", 50.0, "gaussian") for i in range(20)])
    at = fresh(eps_tab=BUDGET, eps_b_rows=rows, eps_b_mode="Budget first", eps_b_rule="PLD (dp-accounting)")
    assert not at.exception and not at.error, [e.value for e in at.error]
    fig = _fig(at, "eps_b_fig")
    assert _bar_total(fig) == pytest.approx(1.0, rel=1e-9)  # the budget, in ε
    assert "ε" in fig["layout"]["xaxis"]["title"]["text"]


def test_budget_chart_accuracy_first_pld_equals_composed_total():
    from dp_accounting.pld import privacy_loss_distribution as pldlib
    from scipy import stats
    rows = _rows([(f"c{i}", 50.0, "gaussian") for i in range(20)])
    at = fresh(eps_tab=BUDGET, eps_b_rows=rows, eps_b_rule="PLD (dp-accounting)", eps_b_reserve="20")
    assert not at.exception and not at.error
    sigma = 50.0 / stats.norm.ppf(0.975)  # each count's σ at its target (continuous Gaussian, Δ₂ = 1)
    pld = pldlib.from_gaussian_mechanism(sigma, value_discretization_interval=1e-4).self_compose(20)
    total = pld.get_epsilon_for_delta(1e-6)
    fig = _fig(at, "eps_b_fig")
    assert _bar_total(fig) == pytest.approx(total / 0.8, rel=2e-3)  # spent + 20% reserve = the budget
    reserve = [t for t in fig["data"] if t["name"] == "reserve"][0]["x"][0]
    assert reserve == pytest.approx(0.2 * total / 0.8, rel=2e-3)


def test_budget_chart_zcdp_is_in_rho_and_sums_to_rho_budget():
    from scipy import optimize
    rows = _rows([(f"c{i}", 50.0, "laplace") for i in range(20)])
    at = fresh(eps_tab=BUDGET, eps_b_rows=rows, eps_b_mode="Budget first", eps_b_rule="zCDP")
    assert not at.exception and not at.error
    d = 1e-6

    def cks(r):  # Canonne–Kamath–Steinke Cor. 13: min over α > 1, searched in t = ln(α − 1)
        f = lambda t: ((1 + math.exp(t)) * r + t - math.log1p(math.exp(t))
                       + (math.log(1 / d) - math.log1p(math.exp(t))) / math.exp(t))
        return optimize.minimize_scalar(f, bounds=(-40.0, 40.0), method="bounded", options={"xatol": 1e-12}).fun

    def eps_of(r):  # the tightest of Bun–Steinke Prop. 1.3, their Lemma 3.6 and CKS (spec §4.2 amended)
        return min(r + 2 * math.sqrt(r * math.log(1 / d)),
                   r + 2 * math.sqrt(r * max(0.0, math.log(math.sqrt(math.pi * r) / d))), cks(r))
    rho_b = optimize.brentq(lambda r: eps_of(r) - 1.0, 1e-12, 1.0, xtol=1e-15)
    fig = _fig(at, "eps_b_fig")
    assert "ρ" in fig["layout"]["xaxis"]["title"]["text"]
    assert _bar_total(fig) == pytest.approx(rho_b, rel=1e-6)


def test_budget_zcdp_laplace_rows_show_their_pure_epsilon():
    # issue 12 example 2: under zCDP the ε column said 0.2066 while the Laplace noise used is pure ε ≈ 0.044
    rows = _rows([(f"c{i}", 50.0, "laplace") for i in range(20)])
    at = fresh(eps_tab=BUDGET, eps_b_rows=rows, eps_b_mode="Budget first", eps_b_rule="zCDP")
    a = _alloc(at)
    for _, r in a.iterrows():
        assert r["ε"] == pytest.approx(1.0 / r["noise scale"], rel=1e-9)  # Laplace: ε = Δ₁/b, Δ₁ = 1
        assert r["δ"] == 0.0
        assert r["ρ"] == pytest.approx(r["ε"] ** 2 / 2, rel=1e-9)
        assert r["achieved ±"] == pytest.approx(r["noise scale"] * math.log(20), rel=1e-9)


def test_usecol_takes_n_from_the_dataset():
    # issue 12 example 3: UCI Adult has 48,842 rows; n stayed at 1,000, so the mean's noise was ~49× too large
    from dpdash.common.data import load_dataset
    df = load_dataset("adult").frame
    col = "age"
    at = fresh(dataset="UCI Adult", eps_n1_usecol="true", eps_n1_query="Mean", eps_n1_col=col)
    assert not at.exception and not at.error, [e.value for e in at.error]
    x = df[col].dropna()
    expected = (x.max() - x.min()) / len(x) * math.log(20)  # Laplace, ε = 1, 95%
    assert float(metric(at, "± half-width")) == pytest.approx(expected, rel=1e-3)
    assert "eps_n1_n" not in {w.key for w in at.number_input}  # the data give n: no box beside it
    at.sidebar.selectbox(key="dataset").set_value("acs12").run()  # the picker stores the key
    x2 = load_dataset("acs12").frame
    num = [c for c in x2.columns if pd.api.types.is_numeric_dtype(x2[c])]
    chosen = at.selectbox(key="eps_n1_col").value
    assert chosen in num
    v = x2[chosen].dropna()
    assert float(metric(at, "± half-width")) == pytest.approx((v.max() - v.min()) / len(v) * math.log(20), rel=1e-3)


def test_fix_accuracy_replaces_the_privacy_slider():
    # issue 12 example 9: the card said ε = 0.0599 beside an ε slider still at 1
    at = fresh(eps_n1_fix="accuracy", eps_n1_hw="50")
    keys = {w.key for w in at.select_slider}
    assert "eps_epsilon" not in keys and "eps_n1_rho" not in keys
    assert float(metric(at, "ε")) == pytest.approx(math.log(20) / 50, rel=1e-3)
    at = fresh()  # Laplace, fix privacy: ε slider, no ρ slider, no Gaussian rule, no scale/half-width boxes
    assert "eps_epsilon" in {w.key for w in at.select_slider}
    assert "eps_n1_rho" not in {w.key for w in at.select_slider}
    assert not {"eps_n1_scale", "eps_n1_hw"} & {w.key for w in at.number_input}
    assert "eps_n1_rule" not in {w.key for w in at.selectbox}
    at = fresh(eps_n1_mech="Gaussian", eps_n1_rule="zcdp")  # zCDP by ρ: the ρ slider drives, ε is computed
    assert "eps_n1_rho" in {w.key for w in at.select_slider}
    assert "eps_epsilon" not in {w.key for w in at.select_slider}


def test_link_table_bombs_do_not_crash():
    for key, tab in (("eps_b_rows", BUDGET), ("eps_comp_rows", COMP)):
        for bomb in ("[" * 1500 + "]" * 1500, '{"cols": [[["kind"]]], "rows": []}'):
            at = fresh(eps_tab=tab, eps_comp_mode="A list", **{key: bomb})
            assert not at.exception
            assert len(table_with(at, "name" if key == "eps_b_rows" else "kind")) in (2, 3)  # the default table
        assert any("nested" in w.value for w in at.warning)  # depth 4: past the link sanitiser, refused here
    bad = '{"cols": ["kind", "epsilon", "delta", "multiplier", "sigma", "scale", "sensitivity", "rho", "count"], ' \
          '"rows": [["laplace", 0.1, 0, null, null, null, 1, null, 1e999]]}'
    at = fresh(eps_tab=COMP, eps_comp_mode="A list", eps_comp_rows=bad)
    assert not at.exception


def test_budget_row_name_is_not_markdown():
    rows = _rows([("![x](http://host/path)", -1.0, "laplace")])
    at = fresh(eps_tab=BUDGET, eps_b_rows=rows)
    assert not at.exception
    shown = [e.value for e in (*at.error, *at.warning, *at.markdown, *at.caption, *at.success, *at.info)]
    assert not any("](http://host" in s for s in shown), shown


def test_long_runs_replay_without_touching_ui_from_a_cache():
    # issue 12 (state integrity): a cached function must not drive a progress bar made outside it, or the
    # second identical run (same session, or the same link in a new session) fails on cache replay
    for _ in range(2):
        at = fresh(eps_tab=TESTS, eps_t_trials="50")
        for _ in range(2):
            at.button(key="eps_t_sim").click().run()
            assert not at.exception, [e.value for e in at.exception]
            assert [f for f in frames(at) if "standard error" in f.columns]
    for _ in range(2):
        at = fresh(eps_tab=COMP, eps_comp_kmax="1500")
        for _ in range(2):
            at.button(key="eps_comp_pldbtn").click().run()
            assert not at.exception, [e.value for e in at.exception]
            assert PLD in set(table_with(at, "rule")["rule"])


# =========================================================================== CSV round trips (issue 12)
@pytest.fixture
def captured_csvs(monkeypatch):
    """Every CSV download the page offers in a run: file name → bytes (the deferred data callables, called)."""
    import ui.exports as ex
    seen: dict[str, bytes] = {}
    original = ex.st.download_button

    def recording(label, data, *args, **kwargs):
        name = kwargs.get("file_name", "")
        if str(name).endswith(".csv"):
            seen[name] = data() if callable(data) else data
        return original(label, data, *args, **kwargs)
    monkeypatch.setattr(ex.st, "download_button", recording)
    return seen


def test_every_csv_reads_back_with_pandas_and_our_reader(captured_csvs):
    import io
    from dpdash.common.data import read_uploaded_csv
    for tab in TABS:
        at = fresh(eps_tab=tab, eps_t_trials="50")
        if tab == TESTS:
            at.button(key="eps_t_sim").click().run()
    names = set(captured_csvs)
    assert {"noise_accuracy.csv", "composition.csv", "budget_plan.csv", "adaptive.csv", "risk.csv",
            "dp_vs_splitting.csv", "private_tests.csv", "private_tests_simulation.csv", "maxinfo.csv"} <= names, names
    assert any(n.startswith("public_information_") for n in names)
    for name, data in captured_csvs.items():
        assert not data.startswith(b"#"), name  # no comment lines: metadata goes in the JSON sidecar
        df = pd.read_csv(io.BytesIO(data))
        assert len(df) >= 1 and len(df.columns) >= 1, name
        ds = read_uploaded_csv(data, min_cols=1, min_rows=1)
        assert list(ds.frame.columns) == list(df.columns), name
        assert len(ds.frame) == len(df), name


# ====================================================================== issue 14 / 15: verdicts, guidance, artefacts
def said(el) -> str:
    """An element's text as the reader sees it (Markdown escapes removed)."""
    return el.value.replace("\\", "")


@pytest.mark.parametrize("tab", TABS)
def test_every_tab_leads_with_a_verdict_and_offers_a_report(tab):
    at = fresh(eps_tab=tab)
    boxes = list(at.success) + list(at.info) + list(at.warning)  # its tone is the news's (issue 22)
    assert boxes, f"{tab}: no verdict"
    text = boxes[0].value.replace("\\", "")
    assert any(ch.isdigit() for ch in text), text  # the verdict names numbers
    assert "None" not in text and "_" not in text.replace("ε_g", "")  # no code names
    labels = [b.label for b in at.get("download_button")]
    assert "Report (HTML)" in labels and "Settings (JSON)" in labels


def test_bad_news_is_a_warning_not_a_green_box():
    """Issue 22: the tone matches the news. At the defaults the classical χ² test on noisy counts raises false
    alarms far above α = 5% (the private tests' verdict), so that verdict is a warning."""
    at = fresh(eps_tab=TESTS)
    assert not at.success and any("raises false alarms" in said(w) for w in at.warning)


def test_verdicts_name_the_independent_numbers():
    at = fresh()
    assert "within ±2.996 of its true value 95% of the time" in said(at.success[0])  # ln 20 = 2.996, as the card
    at = fresh(eps_tab=RISK)
    # Bayes with likelihood ratio e: 0.1e/(0.1e + 0.9) = 23%; tanh(1/2) = 0.46
    assert "at most 23% sure" in said(at.success[0]) and "46 percentage points" in said(at.success[0])


@pytest.mark.parametrize("tab, key", [(TABS[0], "eps_n1_art_script"), (COMP, "eps_comp_art_script"),
                                      (RISK, "eps_r_art_script")])
def test_copy_as_code_on_noise_composition_and_risk(tab, key):
    at = fresh(eps_tab=tab)
    assert key in [b.key for b in at.get("download_button")]
    code = [c.value for c in at.code]
    # scripts import the installed dpdash (no server path: commit ffd4c49)
    assert code and "import dpdash" in code[0] and "sys.path" not in code[0] and "independent." in code[0]


def test_links_take_short_tokens_and_guidance_offers_the_fix():
    at = fresh(eps_tab=BUDGET, eps_b_mode="budget_first", eps_b_rule="pld")
    assert at.radio(key="eps_b_mode").value == "budget_first" and at.selectbox(key="eps_b_rule").value == "pld"
    # a PLD plan spends δ, so it is named (a pure ε plan under the basic sum names none: issue 25)
    assert "A total budget of ε = 1 at δ = 10⁻⁶ (privacy loss distributions (PLD))" in said(at.success[0])
    at = fresh(eps_n1_query="mean", eps_n1_n="10", eps_epsilon="0.01")
    assert any("wider than the whole range of the mean" in said(w) and "raise ε or n" in said(w) for w in at.warning)


def test_simulation_says_where_it_runs():
    at = fresh(eps_tab=TESTS, eps_t_trials="50")
    assert any("Runs on this server's" in c.value for c in at.caption)
    at.button(key="eps_t_sim").click().run()
    assert any("local worker process" in c.value and "Seed 0" in c.value for c in at.caption)


def test_budget_default_table_stays_out_of_the_link_and_pure_plan_disables_delta():
    """Issue 25: the budget planner wrote its default table into the link, and its δ stayed live (and named in the
    totals) on a plan of Laplace rows under the basic sum, where it changes nothing."""
    at = fresh(eps_tab=BUDGET)
    assert "eps_b_rows" not in at.query_params
    assert at.slider(key="eps_b_delta").disabled
    assert not any("10⁻⁶" in m.value for m in at.markdown if m.value.startswith("**Total ε"))
    at = fresh(eps_tab=BUDGET, eps_b_rule="zcdp")  # zCDP converts ρ to ε at δ: δ matters
    assert not at.slider(key="eps_b_delta").disabled


def test_engine_message_and_hint_read_as_two_sentences():
    """A refused plan's message and the hint after it were run together ("got -1 Expected per row")."""
    rows = {"cols": ["name", "query", "mechanism", "L", "U", "n", "cells", "target ±", "confidence", "hold ±",
                     "hold share", "weight"],
            "rows": [["a", "count", "laplace", 0, 1, None, 1, -1.0, 0.95, None, None, 1.0]]}
    at = fresh(eps_tab=BUDGET, eps_b_rows=json.dumps(rows))
    text = " ".join(said(w) for w in at.warning)
    assert "got -1. Expected per row" in text, text


def test_budget_comparison_discrete_rows_are_bounded():
    """A random walk found eps_cmp_discrete=true with a sensitivity of 10⁹ ran the server out of memory (the discrete
    sums run over ~Δ/ε terms); above 10⁶ the comparison shows the continuous rows and says why."""
    at = fresh(eps_tab=BUDGET, eps_cmp_discrete="true", eps_cmp_sens="1000000000", eps_cmp_k="142",
               eps_cmp_eps="0.01")
    assert any("Whole-number noise is computed for a sensitivity up to 1,000,000" in said(i) for i in at.info)


def test_budget_planner_offers_the_opendp_script_with_the_plans_budget():
    """Issue 24 item 3: beside "Copy as code", the plan performed with OpenDP (each row's ε as planned)."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["eps_tab"] = "Budget planner"
    at.run()
    assert not at.exception
    opendp = [c.value for c in at.code if "opendp.prelude" in c.value]
    assert len(opendp) == 1
    src = opendp[0]
    compile(src, "opendp_plan", "exec")
    assert "dp.Context.compositor" in src and "app_scale" in src and "pl.scan_csv" in src


def test_tab7_changing_d_after_a_preset_rebuilds_p0_and_shift():
    """Issue 34 item 4: after the power preset (d = 4, p⁰ typed), d = 5 left a 4-number p⁰ and shift behind and every
    result disappeared behind "expected 5 numbers, got 4"; now both are rebuilt for d = 5 and the page says so."""
    at = fresh(eps_tab=TESTS)
    at.button(key="eps_t_prep").click().run()
    assert at.text_input(key="eps_t_p0").value.count(",") == 3
    at.slider(key="eps_t_d").set_value(5).run()
    assert not at.exception
    assert at.text_input(key="eps_t_p0").value == "1/5, 1/5, 1/5, 1/5, 1/5"
    assert at.text_input(key="eps_t_shift").value == ""
    assert not any("expected 5 numbers" in e.value for e in at.error)
    assert any("d changed to 5" in i.value for i in at.info)
    assert len(table_with(at, "critical value")) > 0


def test_tab7_report_carries_its_figures():
    """Issue 34 item 5: the Private tests report had no figure. The report download is recorded as the house
    identity test records it (figures as spec digests) and must hold the tab's three charts."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from test_house_identity import _recording

    with _recording() as seen:
        fresh(eps_tab=TESTS)
    html = next(c for k, name, _, c in seen if name.endswith("_report.html"))
    html = html.decode() if isinstance(html, bytes) else str(html)
    assert html.count("data-plotly-sha256") >= 3
