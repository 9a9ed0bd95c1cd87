"""Random walks over the Epsilon calculator, one per tab, with an independent oracle (issue 12, deliver 4).

Each walk opens the page on one tab through its link (``eps_tab``) and moves that tab's controls. After every
move the oracle reads the visible controls and the shown numbers and recomputes the headline numbers from the
formulas of the spec and the papers, with scipy and dp-accounting, never through ``engine``:

- Tab 1: scale, std, half-width, ε and ρ cards (Laplace b = Δ₁/ε, exact tail; analytic Gaussian σ by a scipy
  root of Balle–Wang δ(ε; σ); classic σ = Δ√(2 ln(1.25/δ))/ε; zCDP σ = Δ/√(2ρ); discrete Laplace smallest m).
- Tab 2: the table's basic row (Σεᵢ, Gaussian εᵢ at δ/(2K)), zCDP row (Bun–Steinke) and RDP row
  (dp-accounting's RdpAccountant).
- Tab 3: each allocation's ε/ρ/scale/achieved ± are consistent (Laplace ε = Δ₁/b, ± = b ln(1/β)); accuracy-first
  ε are the spec's minima Δ₁ ln(1/β)/w; the budget bars sum to the budget in the unit on the axis.
- Tab 4: rounds the basic and zCDP filters allow, and the basic odometer Σεᵢ (constant sequences).
- Tab 5: the posterior card [expit(logit p − ε), expit(logit p + ε)].
- Tab 6: non-adaptive and Hoeffding-split widths.
- Tab 7: χ² critical values (scipy.stats.chi2).
- Tab 8: the description length log₂(|Y|/β).
- Tab 9: effective ε = ε·Δ_z, Laplace scale Δ_z/ε, and ε* ∈ [ε, 2ε] (Lemma 5).
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import pytest
from scipy import optimize, special, stats

from tests import opendp_oracle as oracle
from tests.product.walk import metric_number, metrics, walk, widget_values

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "epsilon_calculator.py")
TABS = ["Noise & accuracy", "Composition", "Budget planner", "Adaptive analysis", "ε as risk",
        "DP vs data splitting", "Private tests", "Max-information & coherence", "Public information"]
PREFIXES = [("eps_n1_", "eps_epsilon"), ("eps_comp_",), ("eps_b_", "eps_cmp_"), ("eps_a_",), ("eps_r_", "eps_inv_"),
            ("eps_w_",),
            ("eps_t_",), ("eps_m_",), ("pi_",)]
# long runs behind buttons, and inputs whose every value costs seconds (simulation size, heavy Tab 7 grids)
SKIP = ["eps_t_sim", "eps_comp_pldbtn", "eps_t_trials", "eps_t_points", "eps_t_sweep", "eps_reset", "eps_t_seed",
        # the budget comparison's confidence select_slider shows "90%" for 0.9; AppTest cannot set it by that label
        "eps_cmp_conf"]
# user-correctable states the page reports as errors (a shared link or a typed value can reach them)
ALLOWED = [r"must be < 1/e|delta_g", r"held at a fixed accuracy need", r"the plan needs", r"cannot cover", r"sum to 1",
           r"positive and sum", r"make the shift smaller", r"sum to 0", r"shift", r"No total",
           # Tab 9 (ui/views/public_information): correlations no covariance matrix has, pinned as an error
           r"not a valid model"]
REL = 6e-4  # cards show 4 significant figures


_SUP = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def _num(text) -> float:
    """A card's number, including the views' "1.428·10⁻¹¹" form for very large or small values."""
    import re

    m = re.search(r"(?:(-?[\d.,]+)·)?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", str(text))  # "1.4·10⁻¹¹" or "10⁻⁹"
    if m:
        return float((m.group(1) or "1").replace(",", "")) * 10.0 ** int(m.group(2).translate(_SUP))
    v = metric_number(text)
    assert v is not None, f"no number in {text!r}"
    return v


def _close(shown: float, expected: float, what: str, rel: float = REL) -> None:
    assert math.isclose(shown, expected, rel_tol=rel, abs_tol=1e-12), f"{what}: shown {shown}, expected {expected}"


def _card(at, start: str) -> str:
    for label, value in metrics(at).items():  # labels are Markdown-escaped ("± half\\-width")
        if label.replace("\\", "").startswith(start):
            return value
    raise AssertionError(f"no card {start!r}: {list(metrics(at))}")


def _frames(at):
    return [d.value for d in at.dataframe]


def _frame_with(at, col):
    found = [f for f in _frames(at) if col in f.columns]
    return found[0] if found else None


# --------------------------------------------------------------------------- independent formulas
def z2(conf: float) -> float:
    return float(stats.norm.ppf(1 - (1 - conf) / 2))


def log_bw_delta(eps: float, sigma: float, sens: float) -> float:
    """log δ(ε; σ) of the Gaussian mechanism (Balle–Wang 2018 Thm 8), from scipy's log_ndtr."""
    a = sens / (2 * sigma) - eps * sigma / sens
    b = -sens / (2 * sigma) - eps * sigma / sens
    la, lb = special.log_ndtr(a), special.log_ndtr(b)
    r = eps + lb - la
    return -math.inf if r >= 0 else float(la + math.log(-math.expm1(r)))


def bw_sigma(eps: float, delta: float, sens: float) -> float:
    f = lambda ls: log_bw_delta(eps, math.exp(ls), sens) - math.log(delta)  # noqa: E731
    return math.exp(optimize.brentq(f, math.log(sens) - 60, math.log(sens) + 60, xtol=1e-13))


def bw_epsilon(delta: float, sigma: float, sens: float) -> float:
    if log_bw_delta(0.0, sigma, sens) <= math.log(delta):
        return 0.0
    hi = 1.0
    while log_bw_delta(hi, sigma, sens) > math.log(delta):
        hi *= 2
        if hi > 1e12:
            return math.inf
    return optimize.brentq(lambda e: log_bw_delta(e, sigma, sens) - math.log(delta), 0, hi, xtol=1e-14)


def zcdp_eps(rho: float, delta: float) -> float:
    """"best" of spec §4.2 (amended): min of Bun–Steinke Prop. 1.3, Thm 2.2.4 of the thesis (clamped) and the tight
    Canonne–Kamath–Steinke conversion, the last computed by OpenDP (an independent library)."""
    return min(rho + 2 * math.sqrt(rho * math.log(1 / delta)),
               rho + 2 * math.sqrt(rho * max(0.0, math.log(math.sqrt(math.pi * rho) / delta))),
               oracle.cdp_epsilon(rho, delta))


def sensitivity(query, neigh, lo, hi, n):
    if query == "count":
        return 1.0, 1.0
    if query == "histogram":
        return (2.0, math.sqrt(2)) if neigh == "replace" else (1.0, 1.0)
    if query == "sum":
        s = hi - lo if neigh == "replace" else max(abs(lo), abs(hi))
        return s, s
    return (hi - lo) / n, (hi - lo) / n


# --------------------------------------------------------------------------- per-tab oracles
def oracle_noise(at) -> None:
    w = widget_values(at)
    if any("Change the" in x.value for x in at.warning) or not metrics(at):
        return  # a user-correctable state (e.g. U ≤ L, classic rule at ε ≥ 1) shown as a warning
    if w.get("eps_n1_usecol"):
        return  # the bounds come from the data (tests/pages check that case against the dataset)
    mech_, fix, conf = w["eps_n1_mech"], w["eps_n1_fix"], w["eps_n1_conf"] / 100
    if w["eps_n1_query"] in ("count", "histogram"):  # L, U and n play no part: not drawn (issue 25)
        assert not {"eps_n1_lower", "eps_n1_upper", "eps_n1_n"} & set(w), "bounds drawn for a count"
    l1, l2 = sensitivity(w["eps_n1_query"], w["eps_n1_neigh"], w.get("eps_n1_lower"), w.get("eps_n1_upper"),
                         w.get("eps_n1_n"))
    beta = 1 - conf
    if "gaussian" not in mech_:  # pure ε: no δ control (issue 25: it was live and written to the link)
        assert "eps_n1_delta" not in w, "a δ control is drawn for a Laplace mechanism"
    delta = 10.0 ** w.get("eps_n1_delta", -6)
    rule = w.get("eps_n1_rule", "analytic")
    shown = {k: _card(at, k) for k in ("Noise scale", "Noise std", "± half-width", "ε", "ρ")}
    if mech_ == "laplace":
        b = l1 / w["eps_epsilon"] if fix == "privacy" else w["eps_n1_scale"] if fix == "scale" \
            else w["eps_n1_hw"] / math.log(1 / beta)
        _close(_num(shown["Noise scale"]), b, "Laplace b")
        _close(_num(shown["Noise std"]), math.sqrt(2) * b, "Laplace std")
        _close(_num(shown["± half-width"]), b * math.log(1 / beta), "Laplace half-width")
        eps = l1 / b
        if eps <= 1e4:
            _close(_num(shown["ε"]), eps, "Laplace ε")
        else:
            assert "more than" in shown["ε"], shown["ε"]
        _close(_num(shown["ρ"]), eps * eps / 2, "Laplace ρ")
        assert "eps_n1_rho" not in w, "a ρ slider is drawn for a pure-ε mechanism"
    elif mech_ == "gaussian":
        if fix == "privacy":
            if rule == "zcdp":
                s = l2 / math.sqrt(2 * w["eps_n1_rho"])
            elif rule == "classic":
                s = l2 * math.sqrt(2 * math.log(1.25 / delta)) / w["eps_epsilon"]
            else:
                s = bw_sigma(w["eps_epsilon"], delta, l2)
        elif fix == "scale":
            s = w["eps_n1_scale"]
        else:
            s = w["eps_n1_hw"] / z2(conf)
        _close(_num(shown["Noise scale"]), s, "Gaussian σ", rel=1e-3)
        _close(_num(shown["± half-width"]), s * z2(conf), "Gaussian half-width", rel=1e-3)
        rho = 0.5 * (l2 / s) ** 2
        _close(_num(shown["ρ"]), rho, "Gaussian ρ", rel=2e-3)
        if fix != "privacy":
            eps = zcdp_eps(rho, delta) if rule == "zcdp" else bw_epsilon(delta, s, l2)
            if rule == "classic":
                eps_c = l2 * math.sqrt(2 * math.log(1.25 / delta)) / s
                eps = eps_c if eps_c < 1 else eps
            if eps <= 1e4:
                _close(_num(shown["ε"]), eps, "Gaussian ε", rel=2e-3)
            else:
                assert "more than" in shown["ε"]
    elif mech_ == "discrete_laplace":
        t = _num(shown["Noise scale"])  # shown to 4 significant figures: the true t is within ±5e-4 of it
        m = _num(shown["± half-width"])

        def ok(k, tt):  # 2p^{k+1}/(1+p) ≤ β with p = e^{−1/t} (spec §4.1), in logs; easier for smaller t
            return math.log(2) - (k + 1) / tt - math.log1p(math.exp(-1 / tt)) <= math.log(beta)
        assert ok(m, t * (1 - 5e-4)) and (m == 0 or not ok(m - 1, t * (1 + 5e-4))), f"discrete ± {m} at t={t}"
        if l1 / t <= 1e4 * (1 - 1e-3):
            _close(_num(shown["ε"]), l1 / t, "discrete Laplace ε = Δ/t", rel=1.2e-3)
        elif l1 / t > 1e4 * (1 + 1e-3):
            assert "more than" in shown["ε"], shown["ε"]
    # the control that a computed value overrides is not drawn beside it
    if fix != "privacy":
        assert "eps_epsilon" not in w and "eps_n1_rho" not in w


def oracle_composition(at) -> None:
    w = widget_values(at)
    t = _frame_with(at, "rule")
    if t is None:
        assert at.error or at.warning or any("press the button" in i.value for i in at.info), "no composition table"
        return
    # the table names rules in plain words; back to the rule ids for the oracle
    t = t.assign(rule=t["rule"].map({"Basic sum (Thm 2.1.4)": "basic", "zCDP": "zcdp", "Rényi DP": "rdp"})).dropna(
        subset=["rule"]).set_index("rule").rename(columns={"total ε": "epsilon"})
    t["valid"] = True  # the table shows the valid rules only (the others are named under it)
    delta = 10.0 ** w["eps_comp_delta"]
    if w["eps_comp_mode"] == "one":
        k = int(w["eps_comp_kmax"])
        if w["eps_comp_kind"] == "laplace":
            e = w["eps_comp_eps"]
            basic, rho, event = k * e, k * e * e / 2, "laplace"
        else:
            m = w["eps_comp_mult"]
            basic, rho, event = k * bw_epsilon(delta / (2 * k), m, 1.0), k / (2 * m * m), "gaussian"
    else:  # the default list (a walk does not edit the table): Laplace 0.2 × 30 + Gaussian m = 10 × 20
        basic = 30 * 0.2 + 20 * bw_epsilon(delta / 40, 10.0, 1.0)
        rho, event = 30 * 0.02 + 20 / 200, None
    if "basic" in t.index and t.loc["basic", "valid"]:
        _close(float(t.loc["basic", "epsilon"]), basic, "basic composition", rel=1e-7)
    if "zcdp" in t.index:
        _close(float(t.loc["zcdp", "epsilon"]), zcdp_eps(rho, delta), "zCDP composition", rel=1e-7)
    if "rdp" in t.index and event is not None and delta >= 1e-250:
        import dp_accounting
        from dp_accounting.rdp import RdpAccountant
        acc = RdpAccountant()
        ev = dp_accounting.LaplaceDpEvent(1 / w["eps_comp_eps"]) if event == "laplace" \
            else dp_accounting.GaussianDpEvent(w["eps_comp_mult"])
        acc.compose(ev, int(w["eps_comp_kmax"]))
        _close(float(t.loc["rdp", "epsilon"]), acc.get_epsilon(delta), "RDP vs dp-accounting", rel=1e-6)


BUDGET_ROWS = [("count", 1.0, 50.0, 1), ("mean income", 20.0, 500.0, 1), ("histogram", 2.0, 100.0, 10)]


def _budget_fig(at):
    for p in at.get("plotly_chart"):
        if "eps_b_fig" in str(getattr(p, "key", "")) or "eps_b_fig" in str(p.proto.id):
            return json.loads(p.proto.spec)
    return None


def oracle_budget(at) -> None:
    w = widget_values(at)
    a = _frame_with(at, "achieved ±")
    if a is None:
        assert at.error or at.warning, "no allocation and no message"
        return
    mode, rule, reserve = w["eps_b_mode"], w["eps_b_rule"], w["eps_b_reserve"] / 100
    joint = bool(w.get("eps_b_joint"))
    for (name, d1, target, _cells), (_, r) in zip(BUDGET_ROWS, a.iterrows()):
        assert r["name"] == name
        # every default row is Laplace: the numbers describe the Laplace noise actually used
        _close(r["ε"], d1 / r["noise scale"], f"{name}: ε = Δ₁/b", rel=1e-9)
        _close(r["ρ"], r["ε"] ** 2 / 2, f"{name}: ρ = ε²/2", rel=1e-9)
        assert r["δ"] == 0.0
        if not joint:
            _close(r["achieved ±"], r["noise scale"] * math.log(20), f"{name}: ± = b ln 20", rel=1e-9)
            if mode == "accuracy_first":
                need = d1 * math.log(20) / target  # rounded up to 6 significant figures (spec §4.4)
                assert need <= r["ε"] <= need * (1 + 1e-5) + 1e-15, f"{name}: minimal ε {r['ε']} vs {need}"
    fig = _budget_fig(at)
    if fig is None:
        return
    bars = sum(sum(t["x"]) for t in fig["data"] if t.get("type") == "bar")
    unit = fig["layout"]["xaxis"]["title"]["text"]
    assert unit.startswith("ρ" if rule == "zcdp" else "ε"), unit
    if mode == "budget_first":
        eb = w["eps_b_eps"]
        if rule == "zcdp":
            eb = optimize.brentq(lambda x: zcdp_eps(x, 10.0 ** w["eps_b_delta"]) - eb, 1e-15, 1e4, xtol=1e-16)
        _close(bars, eb, "budget bars sum to the budget", rel=1e-7)
    elif rule in ("basic", "zcdp") and not joint:
        mins = [d1 * math.log(20) / t for _, d1, t, _ in BUDGET_ROWS]
        total = sum(mins) if rule == "basic" else sum(x * x / 2 for x in mins)
        _close(bars, total / (1 - reserve), "accuracy-first bars sum to total/(1 − r)", rel=2e-5)


def oracle_adaptive(at) -> None:
    w = widget_values(at)
    t = _frame_with(at, "quantity")
    if t is None or w["eps_a_seq"] != "constant":
        return
    c, k, eg = w["eps_a_const"], int(w["eps_a_count"]), w["eps_a_epsg"]
    dg = 10.0 ** w["eps_a_delta"]
    vals = dict(zip(t["quantity"], t["value"]))
    basic_rounds = 0
    while basic_rounds < k and math.fsum([c] * (basic_rounds + 1)) <= eg:
        basic_rounds += 1
    got = vals["requests allowed by the basic filter"]
    assert abs(got - basic_rounds) <= 1, f"basic filter rounds {got} vs {basic_rounds}"
    rho_g = optimize.brentq(lambda r: r + 2 * math.sqrt(r * math.log(1 / dg)) - eg, 1e-300, eg + 1, xtol=1e-300,
                            rtol=1e-14)
    z = min(k, math.floor(rho_g / (c * c / 2) * (1 + 1e-12)))
    assert abs(vals["requests allowed by the zCDP filter"] - z) <= 1, (vals["requests allowed by the zCDP filter"], z)
    basic_label = [q for q in vals if q.startswith("Basic")][0]
    _close(vals[basic_label], k * c, "basic odometer Σεᵢ", rel=1e-9)


def oracle_risk(at) -> None:
    w = widget_values(at)
    if not metrics(at):
        return
    text = _card(at, "Worst-case posterior")
    lo, hi = [float(x) / 100 for x in re.findall(r"([\d.]+)%", text)]
    p, e = w["eps_r_prior"] / 100, w["eps_r_eps"]
    logit = math.log(p / (1 - p))
    assert abs(lo - special.expit(logit - e)) <= 5.1e-4 and abs(hi - special.expit(logit + e)) <= 5.1e-4, text


def oracle_widths(at) -> None:
    w = widget_values(at)
    t = _frame_with(at, "error for all answers τ")
    if t is None:
        return
    n, beta = int(w["eps_w_n"]), float(w["eps_w_beta"])
    for _, r in t[t.method.isin(["Non-adaptive (Hoeffding)", "Split (Hoeffding)"])].iterrows():
        k = int(r["queries k"])
        m = n if r["method"].startswith("Non-adaptive") else n // k
        _close(float(r["error for all answers τ"]), min(0.5, math.sqrt(math.log(2 * k / beta) / (2 * m))),
               f"{r['method']} τ at k={k}", rel=1e-9)


def oracle_tests(at) -> None:
    w = widget_values(at)
    t = _frame_with(at, "critical value")
    if t is None:
        return
    a = w["eps_t_alpha"]
    cv = dict(zip(t["test"], t["critical value"]))
    if w["eps_t_test"] == "gof":
        d = w["eps_t_d"]
        first, proj, nonproj = list(cv.values())[0], list(cv.values())[2], list(cv.values())[3]
        _close(first, stats.chi2.isf(a, d - 1), "classical χ²", rel=1e-9)
        _close(proj, stats.chi2.isf(a, d - 1), "projected χ²_{d−1}", rel=1e-9)
        _close(nonproj, stats.chi2.isf(a, d), "nonprojected χ²_d", rel=1e-9)
    else:
        _close(list(cv.values())[0], stats.chi2.isf(a, (w["eps_t_r"] - 1) * (w["eps_t_c"] - 1)), "classical", rel=1e-9)


def oracle_maxinfo(at) -> None:
    w = widget_values(at)
    caps = [c.value for c in at.caption if c.value.startswith("log₂(|Y|/β)")]
    if caps and "eps_m_range" in w:
        shown = float(re.search(r"= ([\d.,]+) bits", caps[0]).group(1).replace(",", ""))
        _close(shown, math.log2(w["eps_m_range"] / 0.05), "description length", rel=REL)
        assert f"|Y| = {int(w['eps_m_range']):,}" in caps[0]  # in full: 2²⁰ read "1048580" (issue 25)


def oracle_public(at) -> None:
    w = widget_values(at)
    ms = metrics(at)
    if "Sensitivity Δ_z" in ms:
        dz, eff = _num(ms["Sensitivity Δ_z"]), _num(ms["Effective ε = ε·Δ_z"])
        _close(eff, w["pi_epsilon"] * dz, "effective ε = ε·Δ_z", rel=REL)
        _close(_num(ms["Laplace scale needed to keep ε"]), dz / w["pi_epsilon"], "scale Δ_z/ε", rel=REL)
    if "Effective ε*" in ms:
        r = _num(ms["ε* / ε"])
        assert 1 - 1e-3 <= r <= 2 + 1e-3, f"ε*/ε = {r} outside [1, 2] (Lemma 5)"


ORACLES = [oracle_noise, oracle_composition, oracle_budget, oracle_adaptive, oracle_risk, oracle_widths,
           oracle_tests, oracle_maxinfo, oracle_public]
STEPS = [50, 36, 40, 34, 36, 24, 12, 40, 30]  # Tab 7 reruns its χ² tails at every move: fewer steps


@pytest.mark.slow
def test_epsilon_calculator_random_walks():
    c0 = time.process_time()  # CPU of this process (AppTest runs the page in its threads), not wall time
    states = 0
    for i, tab in enumerate(TABS):
        res = walk(PAGE, seed=100 + i, steps=STEPS[i], oracle=ORACLES[i], start_params={"eps_tab": tab},
                   skip_keys=SKIP, key_prefixes=PREFIXES[i], allowed_errors=ALLOWED, timeout=120)
        states += res.states
    cpu = time.process_time() - c0
    print(f"epsilon calculator walks: {states} states in {cpu:.1f} CPU-s")
    assert states >= 300
    # about 0.3 CPU-s per state (one page rerun each): the bound catches a page several times slower
    assert cpu < 300
