"""Tab views of the coherence explorer (dpdash/coherence/views.py; issue 22).

Each view's cards, sentences, tables and figure inputs are checked against computations written here: numpy for
W1 maxima, counts and means, scipy's beta quantiles for the Clopper–Pearson interval, the seed's Theorem 3/7
terms written out from the spec (§3.5, erratum E1), scipy's brentq for the largest ε and a bisection for the
smallest α. The card and the chart of one tab must say the same number (issue 25: γ 12,245 on the card,
12,244 on the chart)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.stats import beta as beta_dist

from dpdash.coherence import core as co
from dpdash.coherence import figures as cf
from dpdash.coherence import views as vw

PARAMS = {"Data": "test"}


def _pct(p: float) -> str:
    x = 100 * p
    return "0%" if x == 0 else f"{x:,.{max(0, 1 - math.floor(math.log10(abs(x))))}f}%"


def _thm7_terms(eps, n, alpha, beta, groups):
    """Theorem 7 = Theorem 3 with ζ = ε²n/4 + (ε/2)·sqrt(n·ln(4|C|/β)), L = ln(16|C|/β) (spec §3.5, E1)."""
    zeta = eps * eps * n / 4 + eps / 2 * math.sqrt(n * math.log(4 * groups / beta))
    L = math.log(16 * groups / beta)
    return (33.2 * (zeta + L) / alpha ** 2, 144 * math.log(6 / alpha) / alpha ** 2, 16.6 * (zeta + L), 10.6 / alpha,
            80.0)


# ------------------------------------------------------------------------------------------ preview
def _trial(w1, frac):
    g = len(w1)
    return co.TrialResult(0, np.asarray(w1, float), np.ones((g, 2)), np.asarray(frac, float))


def test_preview_view_cards_agree_with_the_verdict_and_the_bars():
    w = [0.10, 1.96, 0.31, 0.7]
    frac = [[0.054, 0.003], [0.986, 0.006], [0.2, 0.05], [0.5, 0.15]]
    kept = [True, True, True, False]  # the 0.7 group is left out: not counted, not the largest
    v = vw.preview_view(trial=_trial(w, frac), names=["Everyone", "DREM = 1", "Women", "Tiny"],
                        sizes=[18946, 1022, 9000, 12], in_collection=kept, alpha=0.2, output="hard",
                        release=co.ReleaseSpec(), seed=3, elapsed_s=0.5, params=PARAMS, script={"config": None})
    top = max(x for x, k in zip(w, kept) if k)
    above = sum(x > 0.2 for x, k in zip(w, kept) if k)
    assert v.headline("Largest W1 of a kept group").value == f"{top:.2f}" and "DREM = 1" in \
        v.headline("Largest W1 of a kept group").note
    assert v.headline("Kept groups above α").value == f"{above} of 3"
    assert v.verdicts[0].tone == "warning" and "W1 1.96" in v.verdicts[0].text
    assert f"{above} of 3 kept groups are above the line" in v.verdicts[0].text
    fig = cf.make_group_w1_figure(**v.figures["groups"])
    assert list(fig.data[0].text) == ["0.10", "1.96", "0.31", "0.70"]
    assert v.epsilon is None and v.seed == 3 and v.script["builder"] == "runs_script"


def test_preview_view_without_a_failure_is_not_bad_news_nor_good_news():
    v = vw.preview_view(trial=_trial([0.05, 0.12], [[0.1, 0.1], [0.2, 0.15]]), names=["A", "B"], sizes=[500, 80],
                        in_collection=[True, True], alpha=0.2, output="hard", release=co.ReleaseSpec(
                            kind="dp_histogram", epsilon=0.5), seed=0, elapsed_s=0.1, params=PARAMS, script={})
    assert v.verdicts[0].tone == "neutral" and v.headline("Kept groups above α").value == "0 of 2"
    assert v.epsilon == 0.5  # a DP release states its ε in the report


def test_a_w1_just_above_alpha_is_never_shown_as_alpha():
    v = vw.preview_view(trial=_trial([0.2004], [[0.2, 0.1]]), names=["A"], sizes=[900], in_collection=[True],
                        alpha=0.2, output="hard", release=co.ReleaseSpec(), seed=0, elapsed_s=0.1, params=PARAMS,
                        script={})
    card = v.headline("Largest W1 of a kept group").value
    bars = cf.make_group_w1_figure(**v.figures["groups"]).data[0].text
    assert card != "0.20" and float(card) > 0.2 and list(bars) == [card] and f"W1 {card}, above" in v.verdicts[0].text


# ------------------------------------------------------------------------------------------ runs
def _result(w1, sizes=(1000, 60), release=co.ReleaseSpec(), elapsed=2.5):
    R, G = w1.shape
    cfg = co.ExperimentConfig(label="y", sensitive_value=1, lens=("x",), release=release,
                              groups=tuple(co.GroupSpec(f"g{j}") for j in range(G)), repetitions=R, rng=7)
    tr = co.TrialResult(0, w1[0], np.ones((G, 2)), np.zeros((G, 2)))
    return co.ExperimentResult(cfg, ("Everyone", "Small"), tuple(sizes), 2000, 0, w1, np.ones((R, G, 2)),
                               np.zeros((R, G, 2)), tr, elapsed)


def test_runs_view_card_interval_and_sentence_say_the_same_numbers():
    rng = np.random.default_rng(4)
    w1 = np.column_stack([rng.uniform(0, 0.1, 20), rng.uniform(0, 0.6, 20)])
    floor = {"Everyone": rng.uniform(0, 0.05, 200), "Small": rng.uniform(0, 0.3, 200)}
    v = vw.runs_view(result=_result(w1), floor=floor, alpha=0.3, gamma=0, beta=0.05, where="here", stale=False,
                     params=PARAMS, script={"data": {}})
    k = int((w1.max(axis=1) > 0.3).sum())
    lo, hi = beta_dist.ppf(0.025, k, 20 - k + 1), beta_dist.ppf(0.975, k + 1, 20 - k)
    assert 0 < k < 20
    assert v.headline("Runs failing at α").value == f"{k}/20"
    assert v.headline("95% interval").value == f"{_pct(lo)}–{_pct(hi)}"
    assert f"between {_pct(lo)} and {_pct(hi)}" in v.verdicts[0].text and v.verdicts[0].tone == "warning"
    assert v.headline("Run time").value == "2.5 s" and v.seed == 7
    summary = v.tables["summary"]
    assert summary["mean W1 over runs"].tolist() == pytest.approx(w1.mean(axis=0).tolist())
    lines = v.sections[0].lines
    assert lines[1] == (f"Mean W1, Small: {w1[:, 1].mean():.2f} (60 members, chance alone "
                        f"{floor['Small'].mean():.2f})")
    fig = cf.make_sorted_w1_figure(**v.figures["sorted"])
    assert f"(95%: {_pct(lo)}–{_pct(hi)})" in fig.layout.title.text  # the chart says it as the card does


def test_runs_view_stale_first_and_without_failures_neutral():
    w1 = np.full((10, 2), 0.05)
    v = vw.runs_view(result=_result(w1), floor=None, alpha=0.1, gamma=0, beta=0.05, where="here", stale=True,
                     params=PARAMS, script=None)
    assert v.verdicts[0].tone == "warning" and v.verdicts[0].text.startswith("Settings changed")
    assert v.verdicts[1].tone == "neutral" and v.script == {}
    none_kept = vw.runs_view(result=_result(w1), floor=None, alpha=0.1, gamma=5000, beta=0.05, where="h",
                             stale=False, params=PARAMS, script=None)
    assert "lower γ" in none_kept.verdicts[0].text and not none_kept.tables


def test_runs_view_size_chart_gamma_of_theorem7_for_a_dp_release():
    w1 = np.full((5, 2), 0.05)
    v = vw.runs_view(result=_result(w1, release=co.ReleaseSpec(kind="dp_histogram", epsilon=0.05)), floor=None,
                     alpha=0.2, gamma=0, beta=0.05, where="h", stale=False, params=PARAMS, script=None)
    g7 = max(_thm7_terms(0.05, 2000, 0.2, 0.05, 2))
    assert v.figures["size"]["gamma_theorem7"] == pytest.approx(g7, rel=1e-9)
    assert v.epsilon == 0.05
    fig = cf.make_size_w1_figure(**v.figures["size"])
    assert any(a.text == f"Theorem 7: γ = {math.ceil(g7):,}" for a in fig.layout.annotations)


# ------------------------------------------------------------------------------------------ sweep
def _sweep(means):
    rows = [dict(epsilon=e, group=g, size=100, mean_w1=m, q05_w1=m / 2, q95_w1=m * 1.5)
            for (e, g), m in means.items()]
    return pd.DataFrame(rows)


def test_sweep_view_tone_follows_the_dp_epsilons_only():
    ok = _sweep({(0.1, "A"): 0.02, (1.0, "A"): 0.05, (math.inf, "A"): 0.9})
    v = vw.sweep_view(sweep=ok, floor=None, alpha=0.2, clear_means=None, release=co.ReleaseSpec(
        kind="dp_histogram"), stale=False, seed=1, params=PARAMS, script=None)
    assert v.verdicts[0].tone == "good"  # the exact histogram (not DP) above α is not a DP failure
    bad = _sweep({(0.1, "A"): 0.02, (1.0, "A"): 0.35, (math.inf, "A"): 0.9})
    v2 = vw.sweep_view(sweep=bad, floor=None, alpha=0.2, clear_means=None, release=co.ReleaseSpec(
        kind="dp_histogram"), stale=True, seed=1, params=PARAMS, script={"config": None})
    assert [s.tone for s in v2.verdicts] == ["warning", "warning"] and "0.35" in v2.verdicts[1].text
    assert v2.sections[0].lines == ("Mean W1 at ε = 0.1, A: 0.02", "Mean W1 at ε = 1, A: 0.35",
                                    "Mean W1 at ε = ∞, A: 0.90")
    assert list(v2.tables["sweep"]["mean W1"]) == [0.02, 0.35, 0.9] and v2.script["builder"] == "sweep_script"


# ------------------------------------------------------------------------------------------ theory
def test_theory_view_card_and_chart_say_the_same_gamma():
    # spec §9 example 8: at ε → 0, (n, α, β, |C|) = (20000, 0.2, 0.05, 4) needs γ = 12,244.31 members
    sizes = {"Everyone": 20000, "A": 13000, "B": 5000, "C": 900}
    v = vw.theory_view(epsilon=1e-9, release_kind="clear", release_epsilon=1.0, delta=1e-6, n=20000, alpha=0.2,
                       beta=0.05, group_sizes=sizes, gamma=100, show_table1=False, params=PARAMS, script={})
    g = max(_thm7_terms(1e-9, 20000, 0.2, 0.05, 4))
    assert g == pytest.approx(12244.3106, abs=1e-3)
    card = v.headline("Theorem 7: γ required").value
    assert card == f"{math.ceil(g):,}" == "12,245"
    assert f"at least {card} members" in v.verdicts[0].text
    assert v.headline("Groups that meet it").value == "2 of 4"
    theory_fig = cf.make_theory_figure(**v.figures["theory"])
    terms_fig = cf.make_terms_figure(**v.figures["terms"])
    assert f"needs {card} members" in cf.alt_text(theory_fig)  # was 12,244 on the chart beside 12,245
    assert f"γ = {card} " in terms_fig.layout.title.text and card in list(terms_fig.data[0].text)
    assert v.verdicts[0].tone == "neutral" and v.epsilon is None  # hypothetical ε: no privacy statement


def _eps_max_by_root(n, alpha, beta, groups, m):
    return brentq(lambda e: max(_thm7_terms(e, n, alpha, beta, groups)) - m, 1e-12, 1.0, xtol=1e-15)


def test_theory_view_largest_epsilon_is_rounded_down_and_smallest_alpha_up():
    sizes = {"Everyone": 27254, "Small": 1521}
    v = vw.theory_view(epsilon=0.1, release_kind="dp_histogram", release_epsilon=0.1, delta=1e-6, n=27254,
                       alpha=1.0, beta=0.05, group_sizes=sizes, gamma=2, show_table1=False, params=PARAMS, script={})
    e = _eps_max_by_root(27254, 1.0, 0.05, 2, 1521)
    assert e == pytest.approx(0.0635663984, abs=1e-9)  # spec §9 example 5
    line = next(x for x in v.sections[0].lines if x.startswith("Largest ε certified"))
    shown = float(line.split("pure ε ≤ ")[1].split(" ")[0])
    assert shown <= e and shown == 0.063  # 0.0636 would claim more than Theorem 7 gives
    assert "ε ≤ 0.063 would protect" in v.verdicts[0].text
    table = v.tables["alpha_min"].set_index("group")["smallest α certified (Thm 7)"]

    def alpha_min(m):  # bisection on the written-out theorem: smallest α with γ(α) ≤ m
        lo, hi = 1e-6, 2.0
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if max(_thm7_terms(0.1, 27254, mid, 0.05, 2)) <= m else (mid, hi)
        return hi
    a = alpha_min(27254)
    assert a == pytest.approx(0.336933, abs=1e-6)  # spec §9 example 6
    assert float(table["Everyone"]) >= a and float(table["Everyone"]) - a < 1e-3
    assert max(_thm7_terms(0.1, 27254, 2.0, 0.05, 2)) > 1521 and table["Small"].startswith("none")
    assert v.epsilon == 0.1


def test_theory_view_vacuous_warns_and_table1_counts_from_the_formula():
    v = vw.theory_view(epsilon=1.0, release_kind="dp_histogram", release_epsilon=1.0, delta=1e-6, n=2000,
                       alpha=0.2, beta=0.05, group_sizes={"Everyone": 2000}, gamma=2, show_table1=True,
                       params=PARAMS, script={})
    assert [s.tone for s in v.verdicts] == ["warning", "warning"] and v.verdicts[1].text.startswith("Vacuous guarantee")
    n, b, g = 5e6, math.exp(-30), 100
    ok = sum(max(_thm7_terms(e, n, a, b, g)) <= 0.05 * n for a, e in vw.TABLE1_ROWS)
    assert v.sections[-1].lines[0].split("here. ")[1].startswith(f"{ok} of 8 printed ε")


# ------------------------------------------------------------------------------------------ Section 7
def test_section7_view_tone_and_headlines():
    w = np.array([[0.01, 0.3], [0.02, 0.05], [0.5, 0.9], [0.03, 0.04]])
    res = co.SingleColumnResult(("Everyone", "Few"), (1000, 20), w, np.array([0.4, 0.8]), np.zeros(2))
    v = vw.section7_view(res=res, column="SEX", curator="column", alpha=0.2, beta=0.05, n=1000, n_groups=2,
                         seed=5, params=PARAMS, script={})
    exceeded = int(np.any(w > np.array([0.4, 0.8]), axis=1).sum())
    assert exceeded == 1 and v.verdicts[0].tone == "warning"  # 1 of 4 splits > β = 5%
    assert v.headline("Largest W1, Few").value == f"{w[:, 1].max():.2f}" and v.headline("Largest W1, Few").note \
        == "bound 0.80"
    gamma9 = 4 * math.sqrt(1000 * math.log(2 / 0.05)) / 0.2  # Theorem 9, written out
    assert f"γ = {math.ceil(gamma9):,} members" in v.sections[0].lines[-1]
    calm = co.SingleColumnResult(("A",), (1000,), np.full((100, 1), 0.1), np.array([0.4]), np.zeros(1))
    assert vw.section7_view(res=calm, column="SEX", curator="count", alpha=0.2, beta=0.05, n=1000, n_groups=1,
                            seed=5, params=PARAMS, script={}).verdicts[0].tone == "good"


def test_settings_words_use_the_readers():
    p = vw.settings_words(data="d", label="y", sensitive="1", lens=["a", "b"], release="clear", learner="tree",
                          alpha=1e-160, gamma=1022.3, seed=4)
    assert p["α (largest W1 tolerated)"] == "10⁻¹⁶⁰" and p["γ (smallest group kept)"] == "1,023"


# ------------------------------------------------------------------------------------------ branches (issue 22)
# Expected values written out from the seed's theorems (000_f379639b976c7ffb.txt), never read from the views.
def test_preview_view_with_every_group_left_out_has_no_cards_and_no_bad_news():
    v = vw.preview_view(trial=_trial([0.9, 0.5], [[0.1, 0.1], [0.2, 0.1]]), names=["A", "B"], sizes=[10, 12],
                        in_collection=[False, False], alpha=0.2, output="hard", release=co.ReleaseSpec(), seed=1,
                        elapsed_s=0.1, params=PARAMS, script={})
    assert v.headlines == () and v.verdicts[0].tone == "neutral"  # nothing kept, so nothing above α
    assert v.sections[0].lines == ("W1, A: 0.90 (10 members, left out: fewer than γ members)",
                                   "W1, B: 0.50 (12 members, left out: fewer than γ members)")


def test_runs_view_without_a_defined_run_says_why_as_a_warning():
    w1 = np.full((4, 2), np.nan)  # no group has members in both halves in any run
    v = vw.runs_view(result=_result(w1), floor=None, alpha=0.2, gamma=0, beta=0.05, where="h", stale=False,
                     params=PARAMS, script=None)
    assert [s.tone for s in v.verdicts] == ["warning"] and "no defined run" in v.verdicts[0].text
    assert [h.label for h in v.headlines] == ["Run time"]  # no failure rate to show


def test_theory_view_gaussian_release_reads_theorem8s_delta_bound():
    sizes = {"Everyone": 27254, "Small": 1521}
    kw = dict(epsilon=0.1, release_kind="gaussian_histogram", n=27254, alpha=1.0, beta=0.05, group_sizes=sizes,
              gamma=2, show_table1=False, params=PARAMS, script={})
    dmax = (0.1 * 0.05 / 2 / (120 * 27254)) ** 2  # Theorem 8: δ ≤ ε²(β/|𝒞|)²/(120n)², |𝒞| = 2 kept groups
    loose = vw.theory_view(release_epsilon=0.1, delta=1e-6, **kw)
    assert (f"Theorem 8 needs δ ≤ {dmax:.3g}; this release uses δ = 1e-06 — the theorem does not apply."
            in loose.sections[0].lines)
    tight = vw.theory_view(release_epsilon=0.1, delta=1e-30, **kw)
    assert f"Theorem 8 needs δ ≤ {dmax:.3g}; this release uses δ = 1e-30." in tight.sections[0].lines
    big = vw.theory_view(release_epsilon=0.8, delta=1e-6, **kw)  # Theorem 8 holds only for ε ≤ 1/2
    assert "Theorem 8 needs ε ≤ 0.5; it does not apply to this release." in big.sections[0].lines


def test_section7_intro_states_theorem11s_gamma_rounded_up():
    g11 = 112 * math.sqrt(1000 * math.log(10 * 1000 * 2 / 0.05)) / 0.2  # Theorem 11: 112·√(n ln(10n|𝒞|/β′))/α
    assert f"(Theorem 11: γ = {math.ceil(g11):,}, an asymptotic bound)" in vw.section7_intro(
        n=1000, alpha=0.2, beta=0.05, n_groups=2)
