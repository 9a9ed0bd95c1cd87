"""Tests for dpdash.accounting.composition: spec §9 worked examples, §8 cross-checks against dp-accounting,
properties.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dp_accounting
from dp_accounting.pld import accountant as pld_accountant
from dp_accounting.pld.common import DifferentialPrivacyParameters
from dp_accounting.rdp import rdp_privacy_accountant as rdpa
from tests import opendp_oracle as oracle
from dpdash.accounting import composition as A
from dpdash.accounting import mechanisms as M

REL = 1e-6


# --------------------------------------------------------------------------- worked examples (spec §9)
def test_conversion_examples():
    assert A.zcdp_to_dp(0.1, 1e-5, method="standard") == pytest.approx(2.245966, rel=REL)
    assert A.zcdp_to_dp(0.1, 1e-5, method="bun_steinke") == pytest.approx(2.191315, rel=REL)
    assert A.zcdp_to_dp(0.1, 1e-5) == pytest.approx(1.914239, rel=REL)            # spec §9 amended: cks = best
    assert A.zcdp_rho_for_epsilon(2.0, 1e-5) == pytest.approx(0.1082564, rel=REL)
    assert A.pure_to_zcdp(0.2) == pytest.approx(0.02, rel=1e-12)


def test_laplace_50_example():
    t = A.composition_table([A.laplace(0.2, count=50)], delta=1e-5).set_index("rule")["epsilon"]
    assert t["basic"] == pytest.approx(10, rel=REL)
    assert t["advanced"] == pytest.approx(7.782820, rel=REL)
    assert t["kov_analytic"] == pytest.approx(7.782820, rel=REL)
    assert t["kov_optimal"] == pytest.approx(6.307778, rel=REL)
    assert t["zcdp"] == pytest.approx(7.077197, rel=REL)               # spec §9 amended (ρ = 1, tight conversion)
    assert t["zcdp"] == pytest.approx(oracle.cdp_epsilon(1.0, 1e-5), rel=1e-9)


def test_kov_optimal_delta_example():
    expected = (math.e**2 - math.e) / (1 + math.exp(0.5)) ** 4
    assert expected == pytest.approx(0.09489511, rel=REL)
    assert A.kov_optimal_delta([0.5] * 4, epsilon_g=1.0) == pytest.approx(expected, rel=1e-12)


def test_mixed_list_example():
    ms = [A.laplace(0.2, count=30), A.gaussian(10, count=20)]
    assert M.gaussian_epsilon(2.5e-8, sigma=10) == pytest.approx(0.4750978, rel=REL)
    r = {rule: A.compose(ms, delta=1e-6, rule=rule) for rule in A.ALL_RULES}
    assert r["basic"].epsilon == pytest.approx(15.50196, rel=REL)
    assert r["advanced"].epsilon == pytest.approx(15.69060, rel=REL)
    assert r["kov_optimal"].epsilon == pytest.approx(12.36985, rel=REL)
    # ρ = 30·0.2²/2 + 20/(2·10²) = 0.7; the tight conversion (OpenDP's cdp_epsilon gives 6.323141) replaces the
    # old "best" 6.919600 of the spec's table
    assert r["zcdp"].epsilon == pytest.approx(oracle.cdp_epsilon(0.7, 1e-6), rel=1e-9)
    assert r["zcdp"].epsilon == pytest.approx(6.323141, rel=REL)
    assert r["rdp"].epsilon == pytest.approx(5.710805, rel=REL)
    assert r["rdp"].order == pytest.approx(6.3)
    assert r["pld"].epsilon == pytest.approx(5.4275, abs=2e-3)
    assert not r["advanced_drv"].valid and not r["kov_analytic"].valid
    assert "homogeneous" in r["kov_analytic"].note


def test_rdp_laplace_example_matches_dp_accounting():
    conv = A.rdp_to_dp(A.rdp_curve(A.laplace(1.0)), delta=1e-5)
    assert conv.epsilon == pytest.approx(1.002824, rel=REL)
    assert conv.order == 1024
    acc = rdpa.RdpAccountant(list(A.RDP_ORDERS))
    acc.compose(dp_accounting.LaplaceDpEvent(1.0))
    assert conv.epsilon == pytest.approx(acc.get_epsilon(1e-5), rel=1e-9)


def test_adaptive_examples():
    seq = [0.1] * 5 + [0.05] * 20 + [0.2] * 3
    assert A.filter_trace(seq, epsilon_g=2, delta_g=1e-6, rule="basic").halt_round == 28
    assert A.filter_trace(seq, epsilon_g=2, delta_g=1e-6, rule="advanced").halt_round == 9
    assert A.filter_trace(seq, epsilon_g=2, delta_g=1e-6, rule="zcdp").halt_round == 26
    assert A.zcdp_rho_for_epsilon(2, 1e-6, method="standard") == pytest.approx(0.06757388, rel=REL)
    assert A.odometer_advanced(seq, delta_g=1e-6, n=10**4) == pytest.approx(4.150081, rel=REL)
    assert A.odometer_advanced(seq[:5], delta_g=1e-6, n=10**4) == pytest.approx(1.948346, rel=REL)
    assert A.odometer_zcdp([e * e / 2 for e in seq], delta_g=1e-6, n=10**4) == pytest.approx(4.141732, rel=REL)
    assert A.filter_rounds(0.05, epsilon_g=1, delta_g=1e-5) == 7
    assert A.filter_rounds(0.05, epsilon_g=1, delta_g=1e-5, rule="basic") == 20


def test_filter_constant():
    c = A.filter_constant_optimal() / 8
    assert c == pytest.approx(2 + math.log1p(c), rel=1e-12)
    assert A.filter_constant_optimal() == pytest.approx(A.FILTER_CONSTANT, abs=0.01)


# --------------------------------------------------------------------------- §8 cross-checks
@pytest.mark.parametrize("e0", [0.01, 0.1, 0.5])
@pytest.mark.parametrize("k", [1, 10, 100, 1000])
def test_laplace_ordering(e0, k):
    ms = [A.laplace(e0, count=k)]
    r = {rule: A.compose(ms, delta=1e-6, rule=rule) for rule in ("basic", "advanced", "kov_analytic", "kov_optimal",
                                                                  "rdp", "pld")}
    assert r["kov_optimal"].epsilon <= r["kov_analytic"].epsilon + 1e-12
    assert r["kov_analytic"].epsilon <= min(r["basic"].epsilon, r["advanced"].epsilon) + 1e-12
    assert r["pld"].epsilon <= r["kov_optimal"].epsilon + 1e-4
    assert r["rdp"].epsilon >= r["pld"].epsilon - 1e-4


@pytest.mark.parametrize("rows", [
    [(0.3, 0.0, 40)],
    [(0.1, 0.0, 25), (0.4, 0.0, 10)],
    [(0.05, 0.0, 20), (0.2, 0.0, 6), (0.5, 0.0, 3)],
    [(0.2, 1e-8, 30)],
])
def test_pld_equals_optimal_composition(rows):
    ms = [A.approx_dp(e, d, count=c) if d else A.pure_dp(e, count=c) for e, d, c in rows]
    opt = A.compose(ms, delta=1e-5, rule="kov_optimal").epsilon
    pld = A.compose(ms, delta=1e-5, rule="pld").epsilon
    assert pld == pytest.approx(opt, abs=1e-4)
    if all(d == 0 for _, d, _ in rows):
        # discrete Laplace with Δ/t = εᵢ has privacy loss ±εᵢ: the same worst case
        dl = [A.discrete_laplace(1.0 / e, count=c) for e, _, c in rows]
        assert A.compose(dl, delta=1e-5, rule="pld").epsilon == pytest.approx(opt, abs=1e-4)


@pytest.mark.parametrize("e0,k", [(0.1, 10), (0.5, 50), (0.2, 100), (1.0, 7)])
def test_kov_optimal_within_dp_accounting_grid(e0, k):
    a = pld_accountant.advanced_composition(DifferentialPrivacyParameters(e0, 0), k, 1e-6)
    opt = A.kov_optimal_composition([e0] * k, delta=1e-6).epsilon
    assert a - 2 * e0 < opt <= a + 1e-9


def test_rdp_matches_rdp_accountant():
    ms = [A.laplace(0.3, count=7), A.gaussian(4.0, count=11), A.zcdp(0.01, count=3)]
    acc = rdpa.RdpAccountant(list(A.RDP_ORDERS))
    acc.compose(dp_accounting.LaplaceDpEvent(1 / 0.3), 7)
    acc.compose(dp_accounting.GaussianDpEvent(4.0), 11)
    acc.compose(dp_accounting.ZCDpEvent(0.01), 3)
    for delta in (1e-3, 1e-6, 1e-10):
        ours = A.compose(ms, delta=delta, rule="rdp").epsilon
        assert ours == pytest.approx(acc.get_epsilon(delta), rel=1e-9)


@pytest.mark.parametrize("m,k", [(2.0, 1), (5.0, 10), (20.0, 100)])
def test_gaussian_composition(m, k):
    ms = [A.gaussian(m, count=k)]
    exact = M.gaussian_epsilon(1e-6, sigma=m / math.sqrt(k))
    pld = A.compose(ms, delta=1e-6, rule="pld").epsilon
    rdp = A.compose(ms, delta=1e-6, rule="rdp").epsilon
    assert pld == pytest.approx(exact, abs=1e-4)
    assert rdp >= exact - 1e-12


@settings(max_examples=30)
@given(lr=st.floats(math.log(1e-3), math.log(10)), ld=st.floats(math.log(1e-10), math.log(1e-3)))
def test_zcdp_tighter_than_rdp_grid_looser_than_exact(lr, ld):
    # the tight zCDP conversion is CKS Prop. 12 minimised over every α > 1; the rdp rule minimises the same
    # expression over dp-accounting's grid of orders, so it can only be looser, and both bound the exact Gaussian
    rho, delta = math.exp(lr), math.exp(ld)
    m = 1 / math.sqrt(2 * rho)  # one Gaussian with this ρ
    z = A.zcdp_to_dp(rho, delta)
    r = A.rdp_to_dp(rho * A.RDP_ORDERS, delta=delta).epsilon
    assert z <= r + 1e-12
    assert z >= M.gaussian_epsilon(delta, sigma=m) - 1e-9


@settings(max_examples=40)
@given(lr=st.floats(math.log(1e-5), math.log(10)), ld=st.floats(math.log(1e-300), math.log(0.5)))
def test_zcdp_best_and_roundtrip(lr, ld):
    rho, delta = math.exp(lr), math.exp(ld)
    best = A.zcdp_to_dp(rho, delta)
    assert best == min(A.zcdp_to_dp(rho, delta, method=m) for m in ("standard", "bun_steinke", "cks"))
    assert best == pytest.approx(min(oracle.cdp_epsilon(rho, delta), A.zcdp_to_dp(rho, delta, method="standard"),
                                     A.zcdp_to_dp(rho, delta, method="bun_steinke")), rel=1e-9)
    assert best >= M.gaussian_epsilon(delta, sigma=1 / math.sqrt(2 * rho)) - 1e-9
    if best > 0:    # at large δ a small ρ costs nothing (ε = 0): no unique inverse there
        assert A.zcdp_rho_for_epsilon(best, delta) == pytest.approx(rho, rel=1e-10)


def test_discrete_gaussian_row():
    r = A.compose([A.discrete_gaussian(3.0, count=5)], delta=1e-5, rule="pld")
    c = A.compose([A.gaussian(3.0, count=5)], delta=1e-5, rule="pld")
    assert r.valid and r.epsilon == pytest.approx(c.epsilon, rel=0.05)


# --------------------------------------------------------------------------- properties
@settings(max_examples=25)
@given(e0=st.floats(0.01, 2.0), k=st.integers(1, 300), ld=st.floats(-12, -2))
def test_optimal_below_advanced_and_basic(e0, k, ld):
    ms = [A.laplace(e0, count=k)]
    delta = 10**ld
    opt = A.compose(ms, delta=delta, rule="kov_optimal").epsilon
    assert opt <= A.compose(ms, delta=delta, rule="basic").epsilon + 1e-9
    assert opt <= A.compose(ms, delta=delta, rule="advanced").epsilon + 1e-9
    assert opt <= A.compose(ms, delta=delta, rule="kov_analytic").epsilon + 1e-9


@settings(max_examples=25)
@given(e0=st.floats(0.01, 2.0), k=st.integers(1, 200))
def test_rules_monotone_in_k_and_delta(e0, k):
    for rule in ("basic", "advanced", "kov_optimal", "zcdp", "rdp"):
        a = A.compose([A.laplace(e0, count=k)], delta=1e-6, rule=rule).epsilon
        b = A.compose([A.laplace(e0, count=k + 1)], delta=1e-6, rule=rule).epsilon
        c = A.compose([A.laplace(e0, count=k)], delta=1e-4, rule=rule).epsilon
        assert b >= a - 1e-9
        assert c <= a + 1e-9


@settings(max_examples=25)
@given(seq=st.lists(st.floats(0.001, 0.5), min_size=1, max_size=60), lg=st.floats(-12, -1))
def test_odometer_at_least_realised_sum(seq, lg):
    dg = 10**lg * 0.36
    s = math.fsum(seq)
    assert A.odometer_basic(seq, delta_prime=dg) == pytest.approx(s)
    # advanced-style odometers pay for not knowing the plan: never below the tanh-part nor the √ part
    odo = A.odometer_advanced(seq, delta_g=dg, n=10**4)
    assert odo >= math.fsum(e * math.expm1(e) / 2 for e in seq)
    # ... and never below advanced composition with the plan known in advance (the invalid heuristic)
    assert odo >= A.realized_advanced_heuristic(seq, delta=dg) - 1e-12
    rhos = [e * e / 2 for e in seq]
    z = A.odometer_zcdp(rhos, delta_g=dg, n=10**4)
    if math.isfinite(z):
        assert z >= A.zcdp_to_dp(math.fsum(rhos), dg, method="standard") - 1e-12


@settings(max_examples=20)
@given(e0=st.floats(0.001, 0.3), eg=st.floats(0.1, 5), lg=st.floats(-12, -2))
def test_filter_rounds_agree_with_trace(e0, eg, lg):
    dg = 10**lg
    for rule in ("basic", "advanced", "zcdp"):
        k = A.filter_rounds(e0, epsilon_g=eg, delta_g=dg, rule=rule)
        if k > 3000:
            continue
        tr = A.filter_trace([e0] * (k + 1), epsilon_g=eg, delta_g=dg, rule=rule)
        assert sum(tr.decisions) == k


def test_filter_respects_budget_basic():
    f = A.PrivacyFilter(epsilon_g=1.0, delta_g=1e-6, rule="basic")
    assert all(f.request(epsilon=0.25) for _ in range(4))
    assert not f.request(epsilon=0.01)
    assert not f.request(epsilon=0.001)  # once halted, stays halted


def test_pld_invalid_below_range_and_zcdp():
    r = A.compose([A.laplace(0.1, count=5)], delta=1e-13, rule="pld")
    assert not r.valid and "range" in r.note
    r = A.compose([A.zcdp(0.1)], delta=1e-6, rule="pld")
    assert not r.valid


def test_kov_too_many_terms():
    eps = list(np.linspace(0.01, 0.5, 25))
    r = A.compose([A.pure_dp(e) for e in eps], delta=1e-6, rule="kov_optimal")
    assert not r.valid and "PLD" in r.note


def test_kov_exact_log_space_large():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = A.kov_optimal_composition([0.5] * 1000, delta=1e-6)
    assert r.valid and math.isfinite(r.epsilon)
    assert r.epsilon < A.advanced_composition([0.5] * 1000, delta=1e-6).epsilon


def test_extremes_no_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for rule in A.ALL_RULES:
            if rule == "pld":
                continue
            r = A.compose([A.laplace(50.0, count=3)], delta=1e-300, rule=rule)
            assert r.valid is False or r.epsilon > 0
        assert A.zcdp_to_dp(1e4, 1e-300) > 0
        assert A.filter_bound([1e3, 2e3], epsilon_g=1, delta_g=1e-6) == math.inf
        assert A.odometer_advanced([800.0], delta_g=1e-6, n=100) == math.inf


@pytest.mark.parametrize("call,match", [
    (lambda: A.compose([], delta=1e-6, rule="basic"), "empty"),
    (lambda: A.compose([A.laplace(1)], delta=0, rule="basic"), "delta"),
    (lambda: A.odometer_advanced([0.1], delta_g=0.5, n=100), "1/e"),
    (lambda: A.odometer_advanced([0.1], delta_g=1e-6, n=100, gamma=0.1), "exactly one"),
    (lambda: A.odometer_advanced([0.1], delta_g=1e-6, n=5), "n must be a number ≥ 6"),
    (lambda: A.advanced_composition_drv(-1, k=2, delta=1e-6), "epsilon"),
    (lambda: A.laplace(float("inf")), "finite"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_curve_and_table_shapes():
    df = A.composition_curve([A.laplace(0.1, count=1000)], delta=1e-6, ks=A.default_ks(1000, 40))
    assert set(df["rule"]) == set(A.ALL_RULES)
    assert (df["rule"] == "pld").sum() <= 12
    lst = A.composition_curve([A.laplace(0.2, count=30), A.gaussian(10, count=20)], delta=1e-6, ks=[1, 30, 50])
    b = lst[(lst.rule == "basic")].set_index("k")["epsilon"]
    assert b[1] == pytest.approx(0.2) and b[30] == pytest.approx(6.0)


def test_per_mechanism_and_max_mechanisms():
    e0 = A.per_mechanism_epsilon("basic", epsilon=1.0, delta=1e-6, k=10)
    assert e0 == pytest.approx(0.1, rel=1e-8)
    assert A.max_mechanisms("basic", epsilon_each=0.1, epsilon=1.0, delta=1e-6) in (9, 10)
    e0 = A.per_mechanism_epsilon("kov_optimal", epsilon=2.0, delta=1e-6, k=200)
    assert A.compose([A.laplace(e0, count=200)], delta=1e-6, rule="kov_optimal").epsilon <= 2.0 + 1e-9


@pytest.mark.parametrize("eps, k", [(1e7, 1), (5e6, 3), (4e4, 1)])
def test_per_mechanism_epsilon_under_zcdp_at_very_large_budgets(eps, k):
    # k Laplace(ε₀) are (kε₀²/2)-zCDP, so ε₀ = √(2ρ/k) with ρ the zCDP level whose tight conversion is ε at
    # δ = 1e-5: CKS Cor. 13, ε(α) = αρ + ln(1−1/α) + (ln(1/δ) − ln α)/(α−1), minimised here by scipy's bounded
    # search (OpenDP overflows at this scale), then solved for ρ by brentq. The search used to answer 0 once
    # ε ≫ 2·10⁶·k.
    from scipy import optimize

    def cks(r, d=1e-5):
        f = lambda t: ((1 + math.exp(t)) * r + t - math.log1p(math.exp(t))  # noqa: E731
                       + (math.log(1 / d) - math.log1p(math.exp(t))) / math.exp(t))
        return optimize.minimize_scalar(f, bounds=(-40, 10), method="bounded", options={"xatol": 1e-12}).fun

    rho = math.exp(optimize.brentq(lambda lr: cks(math.exp(lr)) - eps, math.log(eps / 2), math.log(eps),
                                   xtol=1e-13))
    assert A.per_mechanism_epsilon("zcdp", epsilon=eps, delta=1e-5, k=k) == pytest.approx(math.sqrt(2 * rho / k),
                                                                                        rel=1e-6)


def test_composition_figure_envelope():
    from dpdash.epsilon import figures as ef
    curve = A.composition_curve([A.laplace(0.2, count=5)], delta=1e-6, ks=[1, 2, 5], rules=("basic", "advanced"))
    env = ef.best_valid_envelope(curve).set_index("k")["epsilon"]
    # at k = 1 advanced exceeds basic (the reason for the envelope): the envelope takes basic there
    assert env[1] == pytest.approx(0.2)
    assert env[5] == pytest.approx(min(1.0, A.compose([A.laplace(0.2, count=5)], delta=1e-6, rule="advanced").epsilon))
    fig = ef.make_composition_figure(curve, log_axes=True)
    assert [t.name for t in fig.data][-1].startswith("best valid")  # the envelope is drawn last, on top
    assert fig.layout.xaxis.type == "log"


# --------------------------------------------------------------------------- PLD progress callback
def _dp_accounting_pld(events, delta, resolution):
    from dp_accounting.pld import pld_privacy_accountant as pa
    acc = pa.PLDAccountant(value_discretization_interval=resolution)
    for ev, count in events:
        acc.compose(ev, count)
    return acc.get_epsilon(delta)


def test_pld_progress_nondecreasing_and_result_unchanged():
    # duplicate Laplace rows are composed as one distinct mechanism (self_compose of 40)
    ms = [A.laplace(0.2, count=30), A.gaussian(10, count=20), A.laplace(0.2, count=10)]
    calls = []
    with_cb = A.compose(ms, delta=1e-6, rule="pld", progress=calls.append)
    without = A.compose(ms, delta=1e-6, rule="pld")
    assert with_cb.epsilon == without.epsilon
    assert calls == sorted(calls) and calls[-1] == 1.0 and len(calls) >= 3 and 0 < calls[0] < 1
    ref = _dp_accounting_pld([(dp_accounting.LaplaceDpEvent(5.0), 40), (dp_accounting.GaussianDpEvent(10.0), 20)],
                             1e-6, 1e-4)
    assert with_cb.epsilon == pytest.approx(ref, abs=1e-5)


def test_pld_progress_more_than_1000_mechanisms():
    ms = [A.laplace(0.1, count=1500), A.pure_dp(0.05, count=400), A.gaussian(20, count=300)]
    calls = []
    r = A.pld_epsilon(ms, delta=1e-6, resolution=1e-3, progress=calls.append)
    # one report per distinct mechanism (weighted by count) and per tree merge, then 1.0
    assert calls[:3] == pytest.approx([1500 / 2202, 1900 / 2202, 2200 / 2202])
    assert calls == sorted(calls) and calls[-1] == 1.0
    assert r.epsilon == A.pld_epsilon(ms, delta=1e-6, resolution=1e-3).epsilon
    ref = _dp_accounting_pld([(dp_accounting.LaplaceDpEvent(10.0), 1500), (dp_accounting.GaussianDpEvent(20.0), 300)],
                             1e-6, 1e-3)
    # dp-accounting's accountant has no event for a black-box pure-DP row: compare the Laplace + Gaussian part
    lg = A.pld_epsilon([A.laplace(0.1, count=1500), A.gaussian(20, count=300)], delta=1e-6, resolution=1e-3)
    assert lg.epsilon == pytest.approx(ref, abs=1e-4)
    assert r.epsilon > lg.epsilon


def test_curve_and_table_progress():
    ms = [A.laplace(0.1, count=1200)]
    calls = []
    curve = A.composition_curve(ms, delta=1e-6, ks=A.default_ks(1200, 30), rules=("basic", "pld"),
                                progress=calls.append)
    assert calls == sorted(calls) and calls[-1] == 1.0 and len(calls) >= 12
    assert curve.equals(A.composition_curve(ms, delta=1e-6, ks=A.default_ks(1200, 30), rules=("basic", "pld")))
    tcalls = []
    table = A.composition_table(ms, delta=1e-6, rules=("basic", "pld"), progress=tcalls.append)
    assert tcalls == sorted(tcalls) and tcalls[-1] == 1.0
    pld = table.set_index("rule").loc["pld", "epsilon"]
    assert pld == pytest.approx(_dp_accounting_pld([(dp_accounting.LaplaceDpEvent(10.0), 1200)], 1e-6, 1e-4), abs=1e-5)


def test_gaussian_rows_compose_at_delta_1e_300():
    # δᵢ = 1e-300/(2·20) is below the input floor; the (ε, δ) rules must still give a value (issue 17)
    from scipy import optimize, special
    ms = [A.gaussian(10, count=20), A.laplace(0.2, count=30)]
    di = 1e-300 / 40

    def log_delta(e, s=10.0):  # Balle–Wang δ(ε), in logs through scipy's log_ndtr
        la, lb = special.log_ndtr(1 / (2 * s) - e * s), special.log_ndtr(-1 / (2 * s) - e * s)
        return la + math.log(-math.expm1(e + lb - la))
    ei = optimize.brentq(lambda e: log_delta(e) - math.log(di), 0.1, 20, xtol=1e-14)
    assert A.compose(ms, delta=1e-300, rule="basic").epsilon == pytest.approx(30 * 0.2 + 20 * ei, rel=1e-9)
    for rule in ("advanced", "kov_analytic", "kov_optimal"):
        r = A.compose(ms, delta=1e-300, rule=rule)
        assert r.valid is False or math.isfinite(r.epsilon)


_extreme = st.one_of(st.sampled_from([1e-300, 1e-12, 1.0, 1e12, 1e300]),
                     st.floats(1e-300, 1e300).filter(lambda x: x > 0))


@given(kind=st.sampled_from(A.KINDS), v=_extreme, count=st.sampled_from([1, 2, 100, 100_000]),
       delta=st.sampled_from([1e-300, 1e-6, 0.5, 0.9]), rule=st.sampled_from([r for r in A.ALL_RULES if r != "pld"]))
def test_compose_at_extreme_parameters_returns_a_result_never_overflow(kind, v, count, delta, rule):
    # spec §3: overflowing bounds are ∞, never raise (issue 17: OverflowError from expm1, ** and log1p sums)
    m = {"laplace": lambda: A.laplace(v, count), "pure_dp": lambda: A.pure_dp(v, count),
         "approx_dp": lambda: A.approx_dp(v, 0.5, count), "gaussian": lambda: A.gaussian(v, count),
         "discrete_laplace": lambda: A.discrete_laplace(v, 1, count),
         "discrete_gaussian": lambda: A.discrete_gaussian(v, 1, count), "zcdp": lambda: A.zcdp(v, count)}[kind]()
    r = A.compose([m], delta=delta, rule=rule)
    assert (not r.valid and math.isnan(r.epsilon)) or r.epsilon >= 0


def test_pld_profile_equals_one_composition_per_delta():
    ms = [A.laplace(0.2, count=30), A.gaussian(10, count=20)]
    deltas = [1e-10, 1e-6, 1e-3, 0.1]
    prof = A.pld_profile(ms, deltas, resolution=1e-3)
    for d, e in zip(prof["delta"], prof["epsilon"]):
        assert e == pytest.approx(A.compose(ms, delta=d, rule="pld", pld_resolution=1e-3).epsilon, abs=1e-9)
    assert list(prof["delta"]) == deltas


# --------------------------------------------------------------------------- issue 13: closed forms from the papers
@pytest.mark.parametrize("e0,k,delta,d0", [(0.1, 100, 1e-6, 0.0), (0.5, 20, 1e-3, 1e-5), (0.01, 5000, 1e-8, 1e-12)])
def test_drv_advanced_composition_is_the_printed_bound(e0, k, delta, d0):
    # Dwork–Rothblum–Vadhan 2010 (Dwork–Roth Thm 3.20): ε₀√(2k ln(1/δ′)) + kε₀(e^{ε₀} − 1), δ′ = δ − kδ₀
    ref = e0 * math.sqrt(2 * k * math.log(1 / (delta - k * d0))) + k * e0 * (math.exp(e0) - 1)
    r = A.advanced_composition_drv(e0, k=k, delta=delta, delta_each=d0)
    assert r.valid and r.epsilon == pytest.approx(ref, rel=1e-12)


def _kov34(e, k, delta, d0):
    # Kairouz–Oh–Viswanath 2015 Thm 3.4, with δ̃ from δ = 1 − (1 − δ₀)^k (1 − δ̃)
    dt = 1 - (1 - delta) / (1 - d0) ** k
    base = k * e * (math.exp(e) - 1) / (math.exp(e) + 1)
    return min(k * e, base + e * math.sqrt(2 * k * math.log(math.e + math.sqrt(k * e * e) / dt)),
               base + e * math.sqrt(2 * k * math.log(1 / dt)))


@pytest.mark.parametrize("e0,k,delta,d0", [
    (0.005, 10_000, 1e-6, 0.0),   # the e + √(kε²)/δ̃ branch is the smallest
    (0.3, 50, 1e-6, 1e-9),        # the ln(1/δ̃) branch
    (2.0, 3, 1e-3, 0.0),          # kε itself
])
def test_kov_analytic_is_theorem_3_4(e0, k, delta, d0):
    r = A.kov_analytic_composition(e0, k=k, delta=delta, delta_each=d0)
    assert r.valid and r.epsilon == pytest.approx(_kov34(e0, k, delta, d0), rel=1e-9)  # δ̃ by log1p in the engine
    # and it is a valid bound: never below the exact optimum (KOV Thm 3.3) for pure mechanisms
    if d0 == 0.0 and k <= 50:
        assert r.epsilon >= A.kov_optimal_composition([e0] * k, delta=delta).epsilon - 1e-9


def test_kov_analytic_branches_really_differ():
    # the three parameter sets above pick three different branches (else the test could not see a changed constant)
    picks = []
    for e0, k, delta, d0 in [(0.005, 10_000, 1e-6, 0.0), (0.3, 50, 1e-6, 1e-9), (2.0, 3, 1e-3, 0.0)]:
        dt = 1 - (1 - delta) / (1 - d0) ** k
        base = k * e0 * math.tanh(e0 / 2)
        b = [k * e0, base + e0 * math.sqrt(2 * k * math.log(math.e + math.sqrt(k) * e0 / dt)),
             base + e0 * math.sqrt(2 * k * math.log(1 / dt))]
        picks.append(int(np.argmin(b)))
    assert sorted(picks) == [0, 1, 2]


# --------------------------------------------------------------------------- live plans (issue 23 item 3)
@pytest.mark.parametrize("m", [0.3, 0.82, 2.0, 13.0, 200.0])
@pytest.mark.parametrize("vdi", [1e-4, 1e-3])
def test_fast_gaussian_pld_is_dp_accountings_to_the_bit(m, vdi):
    from dp_accounting.pld import privacy_loss_distribution as P
    ref = P.from_gaussian_mechanism(m, pessimistic_estimate=True, value_discretization_interval=vdi)._pmf_remove
    ours = A._gaussian_pld(m, vdi)._pmf_remove
    assert type(ours) is type(ref) and ours._infinity_mass == ref._infinity_mass
    if hasattr(ref, "_probs"):
        assert ours._lower_loss == ref._lower_loss and np.array_equal(ours._probs, ref._probs)
    else:
        assert ours._loss_probs == ref._loss_probs


def test_gaussian_rows_merge_exactly_and_match_dp_accounting():
    # c runs of multipliers mᵢ are one Gaussian with m = (Σ cᵢ/mᵢ²)^(−1/2) (Dong–Roth–Su Cor. 3.3); the merged PLD
    # is within the discretization of dp-accounting's own composition of the separate rows
    ms = [A.gaussian(3.0, count=4), A.gaussian(7.5, count=9), A.gaussian(20.0, count=1)]
    ref = _dp_accounting_pld([(dp_accounting.GaussianDpEvent(3.0), 4), (dp_accounting.GaussianDpEvent(7.5), 9),
                              (dp_accounting.GaussianDpEvent(20.0), 1)], 1e-6, 1e-4)
    ours = A.compose(ms, delta=1e-6, rule="pld").epsilon
    assert ours <= ref + 1e-9 and ours == pytest.approx(ref, abs=2e-3)
    m = (4 / 9 + 9 / 7.5**2 + 1 / 400) ** -0.5
    assert ours == pytest.approx(M.gaussian_epsilon(1e-6, sigma=m), abs=2e-3)   # the exact merged Gaussian
    assert ours >= M.gaussian_epsilon(1e-6, sigma=m) - 1e-12                    # pessimistic: never below it


def test_pld_cache_is_bounded_and_returns_the_same_answer():
    cache = A._PldCache(max_entries=3, max_points=10**6)
    built = []
    for e in (0.1, 0.2, 0.3, 0.4, 0.1):
        cache.get(("k", e), lambda e=e: built.append(e) or A._pld_for(A.laplace(e), 0.0, 1e-3))
    assert len(cache) == 3 and built == [0.1, 0.2, 0.3, 0.4, 0.1]     # 0.1 had been evicted
    cache.get(("k", 0.4), lambda: built.append("again"))
    assert built[-1] == 0.1                                          # 0.4 still cached
    first = A.compose([A.laplace(0.3, count=7)], delta=1e-6, rule="pld").epsilon
    assert A.compose([A.laplace(0.3, count=7)], delta=1e-6, rule="pld").epsilon == first
