"""dpdash.sampling.views: each tab's view states the numbers of the paper's formulas, and every sentence, banner,
headline and chart text restates them as the card does.

Expected values come from the closed forms of paper 1 of 003_4b386133f61617e9.txt written out here in mpmath /
scipy, or from the spec's worked examples (shared/specs/sampling_designer.md §9) — never from dpdash.sampling.core.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from dpdash.sampling import core as sp
from dpdash.sampling import views as vw

mp.mp.dps = 40


def g4(x) -> str:
    return f"{float(x):.4g}"


def g2(x) -> str:
    """Two significant figures as the verdicts print them ("0.014", "0.50", "1.0")."""
    x = float(x)
    mag = math.floor(math.log10(abs(x)))
    return f"{round(x, 1 - mag):.{max(0, 1 - mag)}f}"


def srs(eps, q):
    """Theorem 2: log(1 + q(e^ε − 1))."""
    return mp.log1p(mp.mpf(q) * mp.expm1(eps))


def thm8(eps, q, npair):
    """Theorems 7/8: B(ε, q, N) = log(1 + q/(q + (1 − q)e^{−Nε})·(e^ε − 1))."""
    eps, q = mp.mpf(eps), mp.mpf(q)
    return mp.log1p(q / (q + (1 - q) * mp.exp(-npair * eps)) * mp.expm1(eps))


def thm6(eps, r):
    z = mp.expm1(2 * mp.mpf(eps))
    return mp.log1p(2 * mp.mpf(r) * z) + mp.log1p(mp.mpf(r) * z)


# ---------------------------------------------------------------------------------------------------------------
# Tab 1
# ---------------------------------------------------------------------------------------------------------------

def test_simple_view_cards_verdict_calibration_and_chart_agree():
    v = vw.simple_view(epsilon=1.0, delta=1e-6, n=10_000, m=100, rate=0.01, schemes=["srswor", "poisson"],
                       target=0.5)
    want = srs(1, mp.mpf(100) / 10_000)
    eps_cards = [h for h in v.headlines if h.label == "population ε′"]
    assert len(eps_cards) == 2
    for h in eps_cards:
        assert h.raw == pytest.approx(float(want), rel=1e-12) and h.value == g4(want)
    deltas = [h for h in v.headlines if h.label == "population δ′"]
    assert deltas[0].raw == pytest.approx(1e-8, rel=1e-12)   # δ′ = qδ
    assert v.verdicts[0].tone == "good"
    assert f"ε′ = {g2(want)}" in v.verdicts[0].text and "100 of 10,000" in v.verdicts[0].text
    # calibration: λ = log(1 + (e^{ε′_t} − 1)/q)
    lam = mp.log1p(mp.expm1(mp.mpf("0.5")) / mp.mpf("0.01"))
    assert v.headline("ε to spend on the sample for the target").raw == pytest.approx(float(lam), rel=1e-12)
    cal = v.sections[0]
    assert cal.title == vw.CALIBRATION and f"per-record ε = {g4(lam)}" in cal.lines[0]
    assert f"ε′ = {g4(want)}" in v.figures["rate"]["alt"]
    assert v.epsilon == pytest.approx(float(want)) and v.delta == pytest.approx(1e-8)
    assert dict(v.script) == {"epsilon": 1.0, "n": 10_000, "m": 100, "rate": 0.01, "delta": 1e-6,
                              "epsilon_target": 0.5}


def test_simple_view_whole_population_is_a_warning():
    m, q, notes = vw.simple_design(n=50, mode="m", m=80, rate=0.01)
    assert (m, q) == (50, 1.0) and notes[0].tone == "warning"
    v = vw.simple_view(epsilon=2.0, delta=0.0, n=50, m=m, rate=q, schemes=["srswor"], target=1.0)
    assert v.headlines[0].raw == pytest.approx(2.0, rel=1e-12)
    assert v.verdicts[0].tone == "warning" and "no amplification" in v.verdicts[0].text
    assert any(s.text.startswith("To gain from sampling") for s in v.verdicts)


def test_simple_design_rate_rounds_half_up():
    m, q, notes = vw.simple_design(n=1000, mode="rate", m=1, rate=0.0125)
    assert m == 13 and q == 0.0125 and "m = 13" in notes[0].text   # floor(12.5 + 0.5)


# ---------------------------------------------------------------------------------------------------------------
# Tab 2
# ---------------------------------------------------------------------------------------------------------------

def _gauss_bounds(n, mean, sd, eps):
    m = np.arange(n + 1, dtype=float)
    lw = -0.5 * ((m - mean) / sd) ** 2 + eps * m
    et = math.exp(logsumexp(lw, b=np.where(m > 0, m, 1e-300)) - logsumexp(lw))
    f = mp.mpf(et) / n
    return float(-mp.log1p(f * mp.expm1(-eps))), float(mp.log1p(f * mp.expm1(eps))), et


def test_random_view_sp7a_cards_and_sentence():
    v = vw.random_view(epsilon=0.05, n=2000, target=0.02, family="gaussian", base="gaussian", mean=1000.0, sd=20.0,
                       low=0, high=0, p_full=0.0)
    lo, up, et = _gauss_bounds(2000, 1000.0, 20.0, 0.05)
    assert lo == pytest.approx(0.0251875534, abs=1e-8) and up == pytest.approx(0.0258122384, abs=1e-8)   # SP7a
    assert v.headline("lower ε′ (Thm 3)").raw == pytest.approx(lo, abs=1e-10)
    assert v.headline("upper ε′ (Thm 3)").value == g4(up)
    assert v.headline("weighted average size").raw == pytest.approx(et, rel=1e-9)
    assert v.verdicts[0].tone == "good" and f"ε′ between {g2(lo)} and {g2(up)}" in v.verdicts[0].text
    sig = v.tables["sigma"]
    cur = sig[sig["current"]]
    assert float(cur["upper"].iloc[0]) == v.headline("upper ε′ (Thm 3)").raw   # the chart's cross is the card
    assert v.epsilon == v.headline("upper ε′ (Thm 3)").raw


def test_random_design_notes_say_what_was_cut():
    mean, low, high, notes = vw.random_design(n=100, family="uniform", base="gaussian", mean=50.0, low=300, high=20)
    assert (low, high) == (20, 100) and "cut to n" in notes[0].text and "swapped" in notes[0].text


# ---------------------------------------------------------------------------------------------------------------
# Tab 3
# ---------------------------------------------------------------------------------------------------------------

def test_rounding_view_sp9_and_banner_above_crossover():
    v = vw.rounding_view(epsilon=0.3, n=10_000, target=0.5, rate=0.02, pair_n=24, saw_from=0, saw_len=50,
                         delta_text="2, -3, 5")
    assert v.headline("Theorem 6 bound ε′").raw == pytest.approx(float(thm6(0.3, "0.02")), abs=1e-12)
    assert float(thm6(0.3, "0.02")) == pytest.approx(0.0486642815, abs=1e-9)   # SP9
    rstar = 2 * mp.expm1(0.3) / (mp.expm1(0.6) * (mp.sqrt(1 + 8 * mp.exp(0.3)) + 3))
    assert v.headline("crossover rate r*(ε)").raw == pytest.approx(float(rstar), rel=1e-12)
    assert not v.figures["errors"] and v.verdicts[0].tone == "good"
    assert "ε·‖Δ‖₁ = 3" in v.figures["degradation"].text and "ε·‖Δ‖∞ = 1.5" in v.figures["degradation"].text
    hi = vw.rounding_view(epsilon=1.0, n=10_000, target=0.5, rate=0.2, pair_n=14, saw_from=0, saw_len=10,
                          delta_text="x")
    val = thm6(1, "0.2")
    assert hi.verdicts[0].tone == "warning" and f"up to {g2(val)}" in hi.verdicts[0].text
    assert hi.figures["errors"] and f"({g4(val)})" in hi.figures["errors"][0]
    assert hi.figures["degradation"].tone == "warning"


# ---------------------------------------------------------------------------------------------------------------
# Tab 4
# ---------------------------------------------------------------------------------------------------------------

def test_cluster_view_two_stage_design_leads_with_its_bound():
    """Issue 22: c = 30, k = 40, ℓ = 4, ε = 0.5, r_w = 0.05 — card 0.01385, verdict 0.014, not 'no amplification'."""
    v = vw.cluster_view(epsilon=0.5, target=0.1, sizes=[30] * 40, n_drawn=4, within_rate=0.05, sizes_words="")
    eps_w = srs(mp.mpf("0.5"), mp.mpf("0.05"))
    two = thm8(eps_w, mp.mpf(4) / 40, 60)
    assert float(two) == pytest.approx(0.0138503030, abs=1e-9)   # SP17
    assert v.headline("two-stage upper ε′").value == "0.01385"
    first = v.verdicts[0].text.split(". ")[0]
    assert f"at most ε′ = {g2(two)}" in first and "no amplification" not in first
    assert v.verdicts[0].tone == "good"
    assert v.epsilon == pytest.approx(float(two), rel=1e-12)   # the report's ε′ is the design's
    single = thm8(0.5, mp.mpf(4) / 40, 60)
    assert v.headline("upper ε′ (Thm 8)").raw == pytest.approx(float(single), rel=1e-12)


def test_cluster_view_single_stage_and_theorem9():
    v = vw.cluster_view(epsilon=0.5, target=0.1, sizes=[20] * 100, n_drawn=20, within_rate=1.0, sizes_words="",
                        ec_share=1.0, epsilon_test=1.5)
    assert v.headline("Theorem 9 lower bound ε̃").raw == pytest.approx(0.2947432902, abs=1e-9)   # SP16
    up = thm8(0.5, mp.mpf("0.2"), 40)
    assert v.verdicts[0].tone == "warning" and "gives" in v.verdicts[0].text
    assert v.epsilon == pytest.approx(float(up), rel=1e-12)
    assert any("keeping 10% of each drawn cluster" in s.text for s in v.verdicts)
    k10 = thm8(srs(0.5, "0.1"), mp.mpf("0.2"), 40)
    assert any(f"ε′ ≤ {g4(k10)}" in s.text for s in v.verdicts)


def test_cluster_view_sp15_unequal_sizes():
    v = vw.cluster_view(epsilon=0.05, target=0.01, sizes=[3, 8, 15, 40], n_drawn=1, within_rate=1.0,
                        sizes_words="3 to 40")
    assert v.headline("upper ε′ (Thm 8)").raw == pytest.approx(0.0421208, abs=1e-7)
    assert v.headline("lower ε′ (Thm 7)").raw == pytest.approx(0.0372900, abs=1e-7)
    assert v.params["cluster sizes"] == "3 to 40"


# ---------------------------------------------------------------------------------------------------------------
# Tab 5
# ---------------------------------------------------------------------------------------------------------------

def _strata(N, S, mean, lo, hi, eps):
    df = pd.DataFrame({"stratum": [f"s{i}" for i in range(len(N))], "N_h": N, "S_h": S, "mean_h": mean,
                       "lo_h": lo, "hi_h": hi, "eps_h": [""] * len(N)})
    return sp.strata_from_table(df, epsilon=eps)


SP18 = dict(N=[3000, 1000, 250], S=[2.0, 12.0, 150.0], mean=[4.0, 25.0, 400.0], lo=[0.0, 10.0, 100.0],
            hi=[10.0, 100.0, 2000.0])


def test_strata_view_sp18_theorem11_and_neyman_shift():
    v = vw.strata_view(epsilon=1.0, target=0.5, strata=_strata(**SP18, eps=1.0), m=120, value_max=2000.0, m_min=1,
                       methods=("neyman", "proportional", "privacy_aware"), strata_words="preset")
    t11 = thm6(1, mp.mpf(120) / 4250)
    assert v.headline("population ε′").raw == pytest.approx(float(t11), rel=1e-12)
    assert v.headline("shift before rounding").raw == pytest.approx(9.588834, abs=1e-5)   # SP18
    assert v.headline("sample sizes moved in total").value == "10"
    assert v.headline("loss if one count is released").raw == pytest.approx(5.0)
    assert f"ε′ = {g2(t11)} (Theorem 11)" in v.verdicts[0].text and "by 10 in total" in v.verdicts[0].text
    assert v.verdicts[0].tone == "warning"
    assert "by 10 in total (up to 5 in one stratum)" in v.figures["errors"][0]
    assert "value 2,000 in stratum “s2”" in v.figures["shift"]["worst"]


def test_strata_view_census_is_epsilon():
    """Issue 22: m = N is a census, ε′ = ε (was 'no amplification: ε′ = 4.6 for ε = 1')."""
    v = vw.strata_view(epsilon=1.0, target=0.5, strata=_strata(**SP18, eps=1.0), m=4250, value_max=2000.0,
                       m_min=1, methods=(), strata_words="preset")
    assert v.headline("population ε′").raw == 1.0 and v.headline("population ε′").value == "1"
    assert "ε′ = ε = 1" in v.verdicts[0].text and "4.6" not in " ".join(v.verdict_text)
    assert v.headline("ε to spend on the sample for the target").raw == 0.5
    assert v.epsilon == 1.0


def test_strata_view_sp20_allocation_totals():
    st = _strata([4000, 1500, 400, 100], [8, 30, 150, 800], [20, 100, 600, 2500], [0] * 4, [5000] * 4, 0.5)
    v = vw.strata_view(epsilon=0.5, target=0.5, strata=st, m=300, value_max=5000.0, m_min=1,
                       methods=("neyman", "proportional", "privacy_aware"), strata_words="preset")
    want = {"Neyman (take-all)": 737.3532, "proportional": 358.8908, "privacy-aware": 240.6699}   # SP20, e = 0.5
    for name, total in want.items():
        assert v.headline(f"variance of the private mean, {name}").raw == pytest.approx(total, abs=1e-3)
    assert v.verdicts[-1].text.startswith("The privacy-aware allocation gives the smallest error")
    assert "variance 240" in v.verdicts[-1].text
    assert list(v.tables["allocation_wide"]["privacy-aware"]) == [153, 85, 40, 22]


def test_strata_view_uncovered_strata_show_no_guarantee():
    st = _strata([4000, 1500, 400, 100], [8, 30, 150, 800], [20, 100, 600, 2500], [0] * 4, [5000] * 4, 1.0)
    v = vw.strata_view(epsilon=1.0, target=0.5, strata=st, m=20, value_max=5000.0, m_min=1, methods=(),
                       strata_words="preset")
    h = v.headline("population ε′")
    assert h.value == "—" and h.raw is None and v.epsilon is None
    assert any("does not cover stratum “s3”" in n for n in v.figures["groups"][0]["notes"])
    assert "has no guarantee here" in v.verdicts[0].text


def test_strata_feasible():
    assert vw.strata_feasible(np.array([5, 5]), m=1, m_min=1).startswith("The minimum per stratum (1)")
    assert vw.strata_feasible(np.array([5, 5]), m=4, m_min=2) is None


def test_strata_view_m_equal_to_n_is_read_as_a_census_everywhere():
    """Issue 22: m = N samples everyone (3,000 + 1,000 + 250 = 4,250 units), so no sampling happens: the card group
    is titled a census and the calibration spends ε = ε′; one unit fewer is proportional sampling again."""
    assert sum(SP18["N"]) == 4250
    kw = dict(epsilon=1.0, target=0.5, strata=_strata(**SP18, eps=1.0), value_max=2000.0, m_min=1, methods=(),
              strata_words="preset")
    v = vw.strata_view(m=4250, **kw)
    assert v.figures["groups"][0]["title"] == "A census: everyone sampled"
    assert v.sections[0].lines[1] == "A census (m = N = 4,250): no sampling, so ε = ε′."
    assert v.verdicts[0].tone == "warning"  # sampling everyone keeps all of ε: no gain to report as good news
    part = vw.strata_view(m=4249, **kw)
    assert part.figures["groups"][0]["title"] == "Proportional allocation, randomised rounding (Thm 11)"
    assert part.sections[0].lines[1].startswith(f"Proportional allocation at r = m/N = {4249 / 4250:.4g};")


# ---------------------------------------------------------------------------------------------------------------
# Branches the engine tests missed (issue 22: views under the coverage floor); expected values written out here
# ---------------------------------------------------------------------------------------------------------------

def _theorem3(sizes, log_p, n, eps):
    """Theorem 3 from a size law written out: E_t̃[m] with weights p(m)·e^(ε·m); bounds
    ∓log(1 + (E_t̃[m]/n)(e^(±ε) − 1))."""
    m = np.asarray(sizes, dtype=float)
    lw = np.asarray(log_p, dtype=float) + eps * m
    et = math.exp(logsumexp(lw, b=np.where(m > 0, m, 1e-300)) - logsumexp(lw))
    f = mp.mpf(et) / n
    return float(-mp.log1p(f * mp.expm1(-eps))), float(mp.log1p(f * mp.expm1(eps))), et


def test_simple_design_caps_m_at_n_and_keeps_a_whole_rate():
    m, q, notes = vw.simple_design(n=100, mode="m", m=150, rate=0.0)
    assert (m, q) == (100, 1.0) and notes[0].tone == "warning"
    assert vw.simple_design(n=100, mode="m", m=40, rate=0.0) == (40, 0.4, ())
    assert vw.simple_design(n=100, mode="rate", m=1, rate=0.25) == (25, 0.25, ())   # q·n = 25 exactly: no note


def test_simple_view_without_a_scheme_asks_for_one():
    v = vw.simple_view(epsilon=1.0, delta=0.0, n=1000, m=100, rate=0.1, schemes=(), target=0.5)
    assert [(s.text, s.tone) for s in v.verdicts] == [("Pick at least one sampling scheme to see its guarantee.",
                                                       "neutral")]
    assert v.figures["groups"] == () and v.epsilon is None and v.params["schemes"] == "none"


def test_random_view_census_population_point_law_is_theorem2():
    """n = 2·10⁶ is above the dense laws' 10⁶: the census sums must give Theorem 3 for a fixed size m = n/4."""
    v = vw.random_view(epsilon=1.0, n=2_000_000, target=0.5, family="point", base="gaussian", mean=500_000.0,
                       sd=0.0, low=0, high=0, p_full=0.0)
    assert v.headline("upper ε′ (Thm 3)").raw == pytest.approx(float(srs(1, mp.mpf(1) / 4)), rel=1e-9)
    assert v.headline("lower ε′ (Thm 3)").raw == pytest.approx(float(-mp.log1p(mp.expm1(-1) / 4)), rel=1e-9)
    assert v.headline("weighted average size").raw == pytest.approx(500_000, rel=1e-12)
    assert v.verdicts[0].tone == "good" and len(v.verdicts) == 1


def test_random_view_without_gain_says_how_to_get_one():
    n = 1000
    uni = vw.random_view(epsilon=5.0, n=n, target=0.5, family="uniform", base="gaussian", mean=0.0, sd=0.0, low=0,
                         high=n, p_full=0.0)
    lo, up, et = _theorem3(np.arange(n + 1), np.zeros(n + 1), n, 5.0)
    assert uni.headline("upper ε′ (Thm 3)").raw == pytest.approx(up, rel=1e-9)
    assert uni.headline("weighted average size").raw == pytest.approx(et, rel=1e-9)
    # the lead, the stake of ε′ (a caution: 1 < ε′ < 10, issue 34) and the fix
    assert 1 < up < 10 and [s.tone for s in uni.verdicts] == ["warning", "neutral", "warning"]
    assert "use a smaller ε or a smaller largest size" in uni.verdicts[-1].text
    mix = vw.random_view(epsilon=1.0, n=n, target=0.5, family="mixture", base="point", mean=100.0, sd=0.0, low=0,
                         high=0, p_full=0.5)
    lo, up, et = _theorem3([100, n], [math.log(0.5), math.log(0.5)], n, 1.0)
    assert mix.headline("upper ε′ (Thm 3)").raw == pytest.approx(up, rel=1e-9)
    assert mix.verdicts[-1].tone == "warning" and "remove the chance of sampling everyone" in mix.verdicts[-1].text


def test_rounding_view_small_population_and_empty_delta_list_are_warnings():
    v = vw.rounding_view(epsilon=0.3, n=10, target=0.5, rate=0.02, pair_n=24, saw_from=0, saw_len=5, delta_text="")
    assert any(s.tone == "warning" and "at least 1/r = 50 records" in s.text for s in v.verdicts)   # 1/0.02
    assert v.figures["degradation"].tone == "warning" and "enter at least one number" in v.figures["degradation"].text


def test_strata_view_per_stratum_epsilon_note():
    df = pd.DataFrame({"stratum": ["s0", "s1", "s2"], "N_h": SP18["N"], "S_h": SP18["S"], "mean_h": SP18["mean"],
                       "lo_h": SP18["lo"], "hi_h": SP18["hi"], "eps_h": ["0.5", "", ""]})
    v = vw.strata_view(epsilon=1.0, target=0.5, strata=sp.strata_from_table(df, epsilon=1.0), m=120,
                       value_max=2000.0, m_min=1, methods=(), strata_words="preset")
    assert any(n.startswith("This card uses the global ε") for n in v.figures["groups"][0]["notes"])


def test_frame_to_editor_with_and_without_a_value_column():
    t = pd.DataFrame({"stratum": ["a", "b"], "N_h": [10.0, 20.0], "sd_h": [1.5, np.nan], "mean_h": [3.0, 4.0],
                      "min_h": [0.0, 1.0], "max_h": [9.0, 8.0]})
    ed = vw.frame_to_editor(sp.FrameSummary(n=30, strata=t, cluster_sizes=None))
    assert ed["N_h"].tolist() == [10, 20] and ed["S_h"].tolist() == [1.5, 0.0]   # one-record spread reads 0
    assert ed["lo_h"].tolist() == [0.0, 1.0] and ed["hi_h"].tolist() == [9.0, 8.0] and ed["eps_h"].tolist() == ["", ""]
    bare = vw.frame_to_editor(sp.FrameSummary(n=30, strata=t.assign(mean_h=np.nan), cluster_sizes=None))
    assert bare["S_h"].tolist() == [1.0, 1.0] and bare["lo_h"].tolist() == [0.0, 0.0]
    assert bare["hi_h"].tolist() == [1.0, 1.0]
