"""dpdash/sortition/views.py: every number a tab view shows, checked against an independent computation.

Independent sources: the spec's worked examples solved by hand (LX1 at k = 3: x = (2/3, 1/3, 0, 0, 1, 1),
y = (3/2, 31/30, 31/30, 19/15); LX9's leximin chances 3/4, 5/12, 1/4), counts taken straight from the drawn cohorts
with numpy, enumeration of k-subsets (uniform selection), and the paper's memberships for the five-committee
example (spec LX6).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from dpdash.sortition import core as lx
from dpdash.sortition import views as lxv
from dpdash.common.formatting import percent

LX1_POOL = lx.Pool(tuple(f"c{i}" for i in range(1, 7)), ("G1", "G2", "G3", "G4"), lx.LX1_VALUES)
X3 = np.array([2 / 3, 1 / 3, 0, 0, 1, 1])                 # spec LX1, k = 3: one optimal x (worked by hand)
Y3 = np.array([3 / 2, 31 / 30, 31 / 30, 19 / 15])


def _mc(x, *, n_draws=10_000, seed=0, scheme="dependent", delta=0.1):
    return lx.monte_carlo(lx.LX1_VALUES, x, n_draws=n_draws, rng=seed, scheme=scheme, delta=delta)


def test_simulation_view_lx1_k3_lowest_draw_and_its_share():
    """Issue 22: "in 5% of draws less than 0.9" — only {c1,c5,c6} (worst 1.0) and {c2,c5,c6} (worst 0.9) occur."""
    mc = _mc(X3)
    cohorts = lx.sample_dependent(X3, n_draws=10_000, rng=0)      # the same seed: the same cohorts
    share_09 = float(cohorts[:, 1].mean())                        # c2 drawn ⇔ the cohort whose worst-off gets 0.9
    view = lxv.simulation_view(LX1_POOL, mc, k=3, x=X3, expected_min=31 / 30, n_draws=10_000, seed=0,
                               sampler="dependent", delta=0.1)
    text = " ".join(view.verdict_text)
    assert "less than 0.9" not in text
    assert f"The lowest it got was 0.9, in {percent(share_09)} of draws." in text
    assert "in 100% of 10,000 simulated single draws" in text      # 1.0 and 0.9 are both below 31/30
    tab = view.tables["simulation"].set_index("group")
    # per group: the two cohorts' utilities worked out by hand, the share of the lower one counted in the draws
    low = {"G1": (1.3, share_09), "G2": (0.9, share_09), "G3": (1.0, 1 - share_09), "G4": (1.2, 1 - share_09)}
    for g, (value, share) in low.items():
        assert tab.loc[g, "lowest in the draws"] == pytest.approx(value)
        assert tab.loc[g, "share of draws at the lowest"] == pytest.approx(share)
        # the 5th percentile is the lowest value here: the share at or below it is that value's share, not 5%
        assert tab.loc[g, "share of draws at or below the 5th percentile"] == pytest.approx(share)
    np.testing.assert_allclose(tab["expected"], Y3, atol=1e-12)
    assert view.seed == 0


def test_simulation_view_independent_coins_size_sentence():
    """Independent coins: P(size = 3) = 5/9 for x = (2/3, 1/3, 0, 0, 1, 1) (spec LX4), by enumerating the coins."""
    mc = _mc(X3, scheme="independent")
    view = lxv.simulation_view(LX1_POOL, mc, k=3, x=X3, expected_min=31 / 30, n_draws=10_000, seed=0,
                               sampler="independent", delta=0.1)
    p3 = sum(np.prod([p if b else 1 - p for p, b in zip(X3, bits)])
             for bits in itertools.product([0, 1], repeat=6) if sum(bits) == 3)
    assert p3 == pytest.approx(5 / 9)
    assert f"exactly 3 members in {percent(p3)} of draws" in view.verdict_text[-1]
    # sizes 2, 3, 4 carry all the mass (2/9 + 5/9 + 2/9): the range holds 100% of draws, not "95%"
    assert "95% of draws" not in view.verdict_text[-1]
    assert "100% of draws have 2 to 4 members" in view.verdict_text[-1]


def _uniform_by_enumeration(V, k):
    """Expected group utilities when every k-subset is equally likely (enumerated, no k/n formula)."""
    combos = list(itertools.combinations(range(V.shape[0]), k))
    return np.mean([V[list(c)].sum(axis=0) for c in combos], axis=0)


def test_cohort_view_lx1_k3_cards_tables_and_sentences_agree():
    exact = lx.leximax_marginals(lx.LX1_VALUES, k=3)
    util = lx.utilitarian_marginals(lx.LX1_VALUES, k=3)
    view = lxv.cohort_view(LX1_POOL, k=3, exact=exact, utilitarian_x=util, values_code="lx.LX1_VALUES")
    # card: 31/30 (spec LX1, worked by hand) with 4 significant figures, the same text in the verdict
    assert view.headline("Worst-off group can expect").value == "1.033"
    assert view.headline("Worst-off group can expect").raw == pytest.approx(31 / 30, abs=1e-7)
    assert "G2 and G3, can each expect 1.033 in total value" in view.verdicts[0].text
    uni = _uniform_by_enumeration(lx.LX1_VALUES, 3)
    assert view.headline("Uniform selection, worst-off group").value == f"{uni.min():.4g}" == "0.65"
    assert f"the worst-off group (G2) {uni.min():.4g}" in view.verdicts[0].text
    np.testing.assert_allclose(view.tables["groups"]["expected utility"], Y3, atol=1e-6)
    np.testing.assert_allclose(view.tables["groups"]["uniform selection"], uni, atol=1e-12)
    # largest total at k = 3 (spec LX1): x = (1,1,0,0,0,1), y = (1.6, 1.2, 0.9, 1.6)
    np.testing.assert_allclose(view.tables["groups"]["largest total"], [1.6, 1.2, 0.9, 1.6], atol=1e-9)
    x = view.tables["chances"]["chance of selection"].to_numpy()
    assert view.headline("Smallest chance").value == percent(x.min()) == "0%"
    assert view.headline("Largest chance").value == "100%"
    # the chart's alt text names the card's number, not a coarser rounding of it (issue 22's class)
    assert "the worst-off group gets 1.033 (leximax) and 0.65 (uniform)" in view.figures["groups_alt"]
    assert any("(c3 and c4) can never be selected" in s.text and s.tone == "warning" for s in view.verdicts)
    np.testing.assert_allclose(view.tables["levels"]["gain at this level"], [31 / 30, 31 / 30, 19 / 15, 3 / 2],
                               atol=1e-6)
    assert view.script["values_code"] == "lx.LX1_VALUES" and view.script["alpha"] is None


def test_cohort_view_slack_warning_uses_the_cards_precision():
    exact = lx.leximax_marginals(lx.LX1_VALUES, k=1)               # worst-off 4/11 = 0.3636
    approx = lx.leximax_marginals(lx.LX1_VALUES, k=1, alpha=0.5)
    view = lxv.cohort_view(LX1_POOL, k=1, exact=exact, approx=approx, what="slack-ε (ε = 0.5)")
    warn = [s.text for s in view.verdicts if s.tone == "warning" and "slack" in s.text]
    assert warn and "(0.5) is at least the worst-off group's exact leximax utility (0.3636)" in warn[0]
    assert view.script["alpha"] == [0.5, 0.5, 0.5, 0.5]
    assert list(view.figures["profiles"]) == ["leximax", "slack-ε (ε = 0.5)", "uniform (k/n each)"]


def test_cohort_view_names_groups_nobody_serves_and_skipped_integer_optimum():
    V = np.c_[lx.LX1_VALUES, np.zeros(6)]
    pool = lx.Pool(LX1_POOL.ids, LX1_POOL.group_names + ("z",), V)
    view = lxv.cohort_view(pool, k=2, exact=lx.leximax_marginals(V, k=2), n_cohorts=15)
    assert "no cohort can serve them: z" in view.sections[0].lines[0]
    assert "there are 15 cohorts" in view.figures["profiles_caption"]


def test_finite_view_five_committees():
    """Spec LX6 at ε = 0.05: leximax {0}; tradeoff = recursive {0, 4}; significant {4}; chain of Def 12."""
    U = [[Fraction(v) for v in r] for r in (["0.30", "0.10", "0.08"], ["0.80", "0.90", "0.00"],
                                            ["0.04", "0.10", "0.08"], ["0.30", "0.04", "0.50"],
                                            ["0.04", "0.70", "0.40"])]
    view = lxv.finite_view(U, epsilon=0.05, example="Five committees")
    assert [h.value for h in view.headlines] == ["S1", "S1 S5", "S5"]
    assert view.sections[0].lines[0] == "{S1, S2, S3, S4, S5} ⊇ {S1, S3, S4, S5} ⊇ {S5} ⊇ {S5}"
    assert "S1 is leximax" in view.verdicts[0].text and "leaves out the exact leximax" in view.verdicts[0].text
    assert view.script["epsilon"] == "1/20"
    tab = view.tables["membership"]
    assert len(tab) == 5


def test_quota_view_tiny_example():
    """Spec LX9: π = 3/4 (P01), 5/12 (P02–P04), 1/4 (eight old); Gini 0.1875; k/n = 1/3."""
    pool, quotas = lx.tiny_pool(), lx.tiny_quotas()
    dist = lx.leximin_panels(pool, quotas, k=4, rng=0)
    view = lxv.quota_view(pool, quotas, dist, k=4, seed=0, source="Tiny", pool_code="lx.tiny_pool()")
    vals = {h.label: h.value for h in view.headlines}
    assert vals["Smallest chance"] == percent(1 / 4) == "25%"
    assert vals["Equal share k/n"] == percent(4 / 12) == "33%"
    assert vals["Largest chance"] == percent(3 / 4) == "75%"
    pi = np.array([3 / 4] + [5 / 12] * 3 + [1 / 4] * 8)
    gini = np.abs(pi[:, None] - pi[None, :]).sum() / (2 * pi.size ** 2 * pi.mean())
    assert gini == pytest.approx(0.1875) and vals["Inequality (Gini)"] == "0.1875"
    text = " ".join(view.verdict_text)
    # the verdict writes the chances exactly as the cards do
    assert f"at least a {vals['Smallest chance']} chance of a seat (equal chances would be k/n = 33%)" in text
    assert f"the largest chance is {vals['Largest chance']}" in text
    assert "8 of 12 people below k/n" not in text
    assert f"{percent(8 / 12)} of people below k/n" in view.sections[0].lines[0]
    chances = view.tables["chances"].set_index("person_id")["chance of a seat"]
    assert list(view.tables["chances"].columns) == list(pool.columns) + ["chance of a seat"]   # the pool file + 1
    lot = view.tables["lottery_file"]                       # Strat App multiple selections: 1,000 panels of 4
    assert lot.shape == (4, 1_000) and lot.columns[0] == "Assembly 0"
    counts = {}
    for col in lot.columns:
        panel = tuple(sorted(pool.set_index("person_id").loc[list(lot[col]), "gender"] + "-"
                             + pool.set_index("person_id").loc[list(lot[col]), "age"]))
        counts[panel] = counts.get(panel, 0) + 1
    # LX9's lottery: one of each type with 3/4, {2 F-old, 2 M-young} with 1/4
    assert counts == {("F-old", "F-young", "M-old", "M-young"): 750, ("F-old", "F-old", "M-young", "M-young"): 250}
    assert chances["P01"] == pytest.approx(3 / 4, abs=1e-7) and chances["P05"] == pytest.approx(1 / 4, abs=1e-7)
    assert view.tables["lottery"]["probability of this panel"].sum() == pytest.approx(1.0)
    assert view.script["pool_code"] == "lx.tiny_pool()" and view.script["pool_records"] is None
    # the comparison caption counts its share (it was a fixed "leaves more people below", true or not)
    base = np.array([0.2] * 3 + [0.3] * 9)
    cap = lxv.quota_view(pool, quotas, dist, k=4, seed=0, baseline=base).figures["compare_caption"]
    assert f"leaves {percent(3 / 12)} of people below the leximin minimum, 25%" in cap
    flat = lxv.quota_view(pool, quotas, dist, k=4, seed=0, baseline=np.full(12, 1 / 3)).figures["compare_caption"]
    assert "leaves nobody below the leximin minimum" in flat


def test_quota_infeasible_view_lx10():
    """Spec LX10: F [3,3], M [1,1], young [3,3], old [1,1] on the tiny pool: 2 seat bounds change."""
    q = [lx.Quota("gender", "F", 3, 3), lx.Quota("gender", "M", 1, 1), lx.Quota("age", "young", 3, 3),
         lx.Quota("age", "old", 1, 1)]
    view = lxv.quota_infeasible_view(lx.check_quotas(lx.tiny_pool(), q, k=4))
    assert view.verdicts[0].tone == "warning" and "cannot all be met" in view.verdicts[0].text
    assert "(2 seat bound(s) changed" in view.sections[0].title
    assert len(view.tables["relaxation"]) >= 1


def test_combine_keeps_cards_and_adds_the_simulation():
    exact = lx.leximax_marginals(lx.LX1_VALUES, k=3)
    cohort = lxv.cohort_view(LX1_POOL, k=3, exact=exact)
    sim = lxv.simulation_view(LX1_POOL, _mc(X3, n_draws=1_000, seed=4), k=3, x=X3, expected_min=31 / 30,
                              n_draws=1_000, seed=4, sampler="dependent", delta=0.1)
    both = lxv.combine(cohort, sim, None)
    assert both.headlines == cohort.headlines and both.seed == 4
    assert both.verdicts[-1] == sim.verdicts[-1] and "simulation" in both.tables and "levels" in both.tables


def test_noise_view_delta_defaults_to_the_largest_difference_and_guards_the_lemmas():
    """S3 Lemmas 18–19: δ is the largest |U − N| entry (here 3/100, found by hand); a smaller δ is a warning with no
    tables; Lemma 18's table needs ε ≥ 2δ."""
    Fr = Fraction
    U = [[Fr(0), Fr(1)], [Fr(1, 2), Fr(1, 2)], [Fr(1), Fr(0)]]
    N = [[Fr(1, 100), Fr(1)], [Fr(1, 2), Fr(47, 100)], [Fr(1), Fr(0)]]
    v = lxv.noise_view(U, N, epsilon=Fr(1, 10))
    assert v.figures["dmax"] == Fr(3, 100) and v.figures["delta"] == Fr(3, 100) and not v.verdicts
    assert set(v.tables) == {"lemma19", "lemma18"}                 # ε = 0.1 ≥ 2δ = 0.06
    assert v.figures["notes"][0].text == "δ = 0.03 (largest difference between the two matrices: 0.03)."
    small = lxv.noise_view(U, N, epsilon=Fr(1, 10), delta=Fr(1, 100))
    assert small.verdicts[0].tone == "warning" and "Raise δ to at least 0.03" in small.verdicts[0].text
    assert not small.tables
    narrow = lxv.noise_view(U, N, epsilon=Fr(1, 20))                # ε = 0.05 < 2δ = 0.06
    assert set(narrow.tables) == {"lemma19"}
    assert narrow.figures["notes"][2].text == "Lemma 18 needs ε ≥ 2δ (here ε = 0.05, 2δ = 0.06): not shown."


def test_quota_view_says_when_no_chance_was_settled_in_time():
    """A run stopped before its first level (the relaxation comes first and may use all the time) says that its
    chances are not the leximin's, instead of calling the lowest ones exact."""
    pool, quotas = lx.volunteer_pool(2000, rng=1), lx.volunteer_quotas(100)
    dist = lx.leximin_panels(pool, quotas, k=100, rng=0, time_limit_s=0.5)
    assert not dist.complete and dist.levels == ()
    view = lxv.quota_view(pool, quotas, dist, k=100, seed=0, source="Volunteers", pool_code="lx.volunteer_pool()")
    text = " ".join(view.verdict_text)
    assert "before any chance was settled" in text and "not from the leximin" in text
    assert "the lowest chances are exact" not in text


def test_quota_view_partial_with_levels_calls_only_the_fixed_chances_exact():
    import dataclasses

    pool, quotas = lx.tiny_pool(), lx.tiny_quotas()
    done = lx.leximin_panels(pool, quotas, k=4, rng=0)
    part = dataclasses.replace(done, complete=False, levels=done.levels[:1])
    text = " ".join(lxv.quota_view(pool, quotas, part, k=4, seed=0, source="Tiny").verdict_text)
    assert "the lowest chances are exact; the others come from the best lottery found so far" in text
    assert "upper estimate" not in text
    assert "Time limit" not in " ".join(lxv.quota_view(pool, quotas, done, k=4, seed=0, source="Tiny").verdict_text)


def test_a_stopped_run_shows_what_it_has_proved_never_a_bare_zero():
    """Issue 35 item 1: a run stopped at its CPU limit says so, states the smallest chance its lottery guarantees
    (recomputed here from its panels) and the relaxation's upper bound, both bracketing the complete run's."""
    from dpdash.common.formatting import percent

    pool, quotas = lx.volunteer_pool(2000, rng=1), lx.volunteer_quotas(100)
    part = lx.leximin_panels(pool, quotas, k=100, rng=0, time_limit_s=1.0)
    assert not part.complete and part.stopped == "cpu"
    sizes = part.type_table["people"].to_numpy(float)
    chances = (part.panel_probabilities @ part.panels) / sizes if len(part.panels) else np.zeros(len(sizes))
    gmin = float(chances[part.type_index].min())
    view = lxv.quota_view(pool, quotas, part, k=100, seed=0, source="Volunteers", pool_code="lx.volunteer_pool()")
    text = " ".join(view.verdict_text)
    assert "Stopped at the computation limit" in text and "s of CPU time" in text
    card = next(h for h in view.headlines if h.label == "Smallest chance")
    if gmin > 0:
        assert f"this lottery gives everyone at least {percent(gmin)}" in text and card.value == f"≥ {percent(gmin)}"
    else:
        assert "nothing above zero" in text and card.value == "not proven yet"
    full = lx.leximin_panels(pool, quotas, k=100, rng=0)
    assert full.complete and gmin <= full.probabilities.min() + 1e-9
    if np.isfinite(part.upper_min):
        assert part.upper_min >= full.probabilities.min() - 1e-8
        assert f"no lottery can give everyone more than {percent(part.upper_min)}" in text


def test_quota_report_has_the_quota_table_and_what_was_drawn():
    """Issue 34: the quota report omitted the quota table; issue 31: it omitted the drawn panel and draw log. The
    expected seats per quota are recomputed here from the chances and lie within every quota."""
    pool, quotas = lx.tiny_pool(), lx.tiny_quotas()
    dist = lx.leximin_panels(pool, quotas, k=4, rng=0)
    view = lxv.quota_view(pool, quotas, dist, k=4, seed=0, source="Tiny")
    qt = view.tables["quotas"]
    assert any(sec.table == "quotas" for sec in view.sections)
    chance = dict(zip(dist.person_ids, dist.probabilities))
    for r in qt.itertuples(index=False):
        members = pool.loc[pool[r.feature] == r.value, "person_id"]
        assert r._4 == len(members)                                         # "in pool"
        seats = sum(chance[i] for i in members)
        assert r._5 == pytest.approx(seats, abs=1e-12) and r.min - 1e-9 <= seats <= r.max + 1e-9
    members = lx.draw_panel(dist, rng=7)
    log = [{"time (UTC)": "2026-12-02 04:00:00", "seed": 7, "k": 4, "lottery": "abc", "members": " ".join(members)}]
    selected = pool[pool["person_id"].isin(members)]
    check = lx.panel_quota_table(pool, quotas, members)
    full = lxv.combine(view, lxv.draw_view(log, lottery_id="abc", selected=selected, check=check))
    titles = [s.title for s in full.sections]
    assert {"Drawn panel", "Quotas on the drawn panel", "Draw log", "Quotas"} <= set(titles)
    text = " ".join(line for s in full.sections for line in s.lines)
    assert "seed 7" in text and "draw_panel(lottery, rng=7)" in text
    assert list(full.tables["drawn panel"]["person_id"]) == sorted(members)
    assert full.tables["draw log"]["members"][0] == " ".join(members) and full.seed == 0
    none = lxv.draw_view([], lottery_id="abc")
    assert none.sections[0].lines == ("No panel has been drawn from this lottery yet.",)


def test_uniform_comparison_states_its_interval_or_too_few_samples():
    pool, quotas = lx.tiny_pool(), lx.tiny_quotas()
    dist = lx.leximin_panels(pool, quotas, k=4, rng=0)
    good = lx.uniform_baseline(pool, quotas, k=4, n_draws=20_000, rng=3)
    text = " ".join(lxv.quota_view(pool, quotas, dist, k=4, seed=0, baseline=good).verdict_text)
    share, lo, hi = good.share_below(dist.probabilities.min(), rng=0)
    assert "95% interval" in text and f"the {good.accepted:,} of 20,000 random panels that met the quotas" in text
    rare = lx.uniform_baseline(pool, quotas, k=4, n_draws=2_000, rng=3)
    v = lxv.quota_view(pool, quotas, dist, k=4, seed=0, baseline=rare)
    assert "Picking uniformly" not in " ".join(v.verdict_text)
    assert v.figures["baseline"] is None
    assert v.figures["baseline_note"].startswith("Comparison unavailable: too few accepted samples. Only "
                                                 f"{rare.accepted:,} of 2,000 random panels")
