"""Issue 34 item 3 and issue 36 item 5: tones by stakes, one rule in one table, used by every view of the epsilon
calculator and the sampling designer, and decided from the bound that is the guarantee.

The thresholds are written here as the issue states them (ε > 1 a caution, ε ≥ 10 a warning; δ above 10⁻⁵ a
caution, from 10⁻³ or 1/n a warning), never read from the module, and each is probed on both sides with the
neighbouring floats (``math.nextafter``): moving a threshold in ``dpdash.accounting.tones`` turns a case red.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdash.accounting import budget as bud
from dpdash.accounting import composition as acc
from dpdash.accounting import mechanisms as mech
from dpdash.accounting import tones
from dpdash.epsilon import public_info_views as piv
from dpdash.epsilon import views as evw
from dpdash.sampling import views as svw

up, down = (lambda x: math.nextafter(x, math.inf)), (lambda x: math.nextafter(x, -math.inf))

EPSILON_TABLE = [  # (ε, tone): both sides of 1 and of 10
    (1e-6, "good"), (0.5, "good"), (1.0, "good"), (up(1.0), "neutral"), (5.4, "neutral"), (down(10.0), "neutral"),
    (10.0, "warning"), (up(10.0), "warning"), (149.8, "warning"), (5474.0, "warning"), (math.inf, "warning"),
]
DELTA_TABLE = [  # (δ, n, tone): both sides of 10⁻⁵, 10⁻³ and 1/n
    (0.0, None, "good"), (1e-6, None, "good"), (1e-5, None, "good"), (up(1e-5), None, "neutral"),
    (down(1e-3), None, "neutral"), (1e-3, None, "warning"), (0.3, None, "warning"),
    (down(1 / 50_000), 50_000, "neutral"), (1 / 50_000, 50_000, "warning"), (1e-6, 10**6, "warning"),
    (down(1e-6), 10**6, "good"),
]


@pytest.mark.parametrize("epsilon,tone", EPSILON_TABLE)
def test_epsilon_table(epsilon, tone):
    call = tones.epsilon_tone(epsilon)
    assert call.tone == tone
    assert bool(call.reasons) == (tone != "good")  # every caution and warning says why in words


@pytest.mark.parametrize("delta,n,tone", DELTA_TABLE)
def test_delta_table(delta, n, tone):
    call = tones.delta_tone(delta, n=n)
    assert call.tone == tone and bool(call.reasons) == (tone != "good")


@pytest.mark.parametrize("epsilon,etone", EPSILON_TABLE[::2])
@pytest.mark.parametrize("delta,n,dtone", DELTA_TABLE[::3])
def test_privacy_tone_is_the_worse_of_the_two(epsilon, etone, delta, n, dtone):
    order = ["good", "neutral", "warning"]
    assert tones.privacy_tone(epsilon=epsilon, delta=delta, n=n).tone == max(etone, dtone, key=order.index)


def test_reasons_in_words():
    w = tones.epsilon_tone(20.0).text
    assert "4.9·10⁸" in w and "protects almost nothing" in w  # e²⁰ = 4.85·10⁸
    assert "220" in tones.epsilon_tone(5.4, name="ε′").text and "ε′ = 5.4" in tones.epsilon_tone(5.4, name="ε′").text
    assert "10⁻⁵" in tones.delta_tone(2e-5).text


# --------------------------------------------------------------------------- the epsilon calculator's views
def _noise(fixed, *, mechanism="laplace", delta=0.0):
    gauss = mechanism == "gaussian"
    cal = mech.calibrate(mechanism, sensitivity=1.0, confidence=0.95, gaussian_rule="analytic",
                         **({"delta": delta} if gauss else {}), **fixed)
    return evw.noise_view(cal, query="count", neighbour="replace", lower=None, upper=None, n=None,
                          mechanism=mechanism, rule="analytic", fix=next(iter(fixed)).replace("epsilon", "privacy"),
                          fixed=fixed, confidence_pct=95.0, delta=delta, l1=1.0, l2=1.0,
                          mechanisms=("laplace",), by_rho=False)


@pytest.mark.parametrize("epsilon,tone", [(1.0, "good"), (up(1.0), "neutral"), (down(10.0), "neutral"),
                                          (10.0, "warning")])
def test_noise_tab_tone_at_the_thresholds(epsilon, tone):
    """The issue: a green box for ε = 10 on the noise tab."""
    assert _noise({"epsilon": epsilon}).verdicts[0].tone == tone


def test_noise_scale_of_one_hundredth_is_a_warning():
    """A Laplace scale b fixed by the user gives ε = Δ/b (Thm 2.1.2); at b = 1/5474 that is ε = 5,474."""
    v = _noise({"scale": 1 / 5474})
    assert v.headline("ε").raw == pytest.approx(5474, rel=1e-9)
    assert v.verdicts[0].tone == "warning"


@pytest.mark.parametrize("epsilon,tone", [(1.0, "good"), (up(1.0), "neutral"), (10.0, "warning")])
def test_risk_tab_tone_at_the_thresholds(epsilon, tone):
    v = evw.risk_view(epsilon=epsilon, delta=0.0, prior=0.1, shape="generic", mu=None)
    assert v.verdicts[0].tone == tone


def test_composition_with_every_rule_unticked_is_no_good_news():
    ms = [acc.laplace(0.1, count=10)]
    v = evw.composition_view(acc.composition_curve(ms, delta=1e-6, ks=[1, 10], rules=()),
                             acc.composition_table(ms, delta=1e-6, rules=()), mechanisms=ms, delta=1e-6, rules=(),
                             log_axes=True)
    assert v.verdicts[0].tone == "warning" and "tick" in v.verdicts[0].text


@pytest.mark.parametrize("eps_each,count,tone", [(0.1, 9, "good"), (0.1, 11, "neutral"), (0.1, 99, "neutral"),
                                                 (0.1, 101, "warning")])
def test_composition_tone_from_the_tightest_total(eps_each, count, tone):
    """k pure releases of ε: the basic sum kε is exact for pure composition (Thm 2.1.4) and the tightest bound
    here, so the tone follows kε: 0.9 good, 1.1 and 9.9 a caution, 10.1 a warning."""
    ms = [acc.laplace(eps_each, count=count)]
    table = acc.composition_table(ms, delta=1e-6, rules=("basic",))
    curve = acc.composition_curve(ms, delta=1e-6, ks=[1, count], rules=("basic",))
    v = evw.composition_view(curve, table, mechanisms=ms, delta=1e-6, rules=("basic",), log_axes=True)
    assert v.verdicts[0].tone == tone


def _count_spec(target):
    return bud.StatisticSpec(name="count", query="count", mechanism="laplace", lower=0.0, upper=1.0, n=None,
                             cells=1, target_half_width=target, confidence=0.95)


@pytest.mark.parametrize("target,tone", [(math.log(20) / 0.99, "good"), (math.log(20) / 1.01, "neutral"),
                                         (math.log(20) / 149.8, "warning")])
def test_budget_plan_tone_from_its_total(target, tone):
    """Accuracy first, one Laplace count: ε = ln(20)/target (P(|Lap(1/ε)| ≤ ln20/ε) = 95%); ε = 0.99, 1.01, 149.8."""
    spec = _count_spec(target)
    plan = bud.plan_accuracy_first([spec], rule="basic", delta=1e-6)
    assert plan.epsilon == pytest.approx(math.log(20) / target, rel=1e-6)
    v = evw.budget_view(plan, statistics=[spec.__dict__], shares=bud.budget_shares(plan), mode="accuracy_first",
                        rule="basic", delta=1e-6, reserve=0.0, joint_confidence=None, budget=1.0,
                        objective="equal_ratio")
    assert v.verdicts[0].tone == tone


@pytest.mark.parametrize("with_laplace", [False, True])
def test_basic_rule_with_gaussian_rows_spends_all_of_delta(with_laplace):
    """Basic composition adds the δᵢ (Rogers Thm 2.1.4) and needs no slack: the Gaussian statistics share all of δ
    (a Laplace statistic needs none), the sum stays within δ, and no sentence says part of δ is left unused."""
    g = bud.StatisticSpec(name="count", query="count", mechanism="gaussian", lower=0.0, upper=1.0, n=None, cells=1,
                          target_half_width=100.0, confidence=0.95)
    second = {**g.__dict__, "name": "count 2", "mechanism": "laplace" if with_laplace else "gaussian"}
    g2 = bud.StatisticSpec(**second)
    plan = bud.plan_budget_first([g, g2], epsilon=1.0, delta=1e-6, rule="basic")
    spent = math.fsum(a.delta for a in plan.allocations)
    assert spent <= 1e-6
    assert spent == pytest.approx(1e-6, rel=1e-12)
    v = evw.budget_view(plan, statistics=[g.__dict__, second], shares=bud.budget_shares(plan), mode="budget_first",
                        rule="basic", delta=1e-6, reserve=0.0, joint_confidence=None, budget=1.0,
                        objective="equal_ratio")
    assert "spends δ =" not in " ".join(v.verdict_text)


def test_zcdp_budget_first_shows_the_typed_epsilon_and_its_rho():
    """The typed ε = 1 and the ρ it becomes at δ = 10⁻⁶: converting that ρ back with Canonne–Kamath–Steinke's
    bound (Prop. 12 of CKS 2020, minimised over α here with scipy) gives ε = 1 again."""
    from scipy import optimize

    g = bud.StatisticSpec(name="count", query="count", mechanism="gaussian", lower=0.0, upper=1.0, n=None, cells=1,
                          target_half_width=100.0, confidence=0.95)
    plan = bud.plan_budget_first([g], epsilon=1.0, delta=1e-6, rule="zcdp")
    v = evw.budget_view(plan, statistics=[g.__dict__], shares=bud.budget_shares(plan), mode="budget_first",
                        rule="zcdp", delta=1e-6, reserve=0.0, joint_confidence=None, budget=1.0,
                        objective="equal_ratio")
    assert v.headline("Budget ε").value == "1"
    rho = v.headline("Budget ρ").raw
    assert v.headline("Budget ρ").value == f"{rho:.4g}"

    def eps(a):
        return rho * a + (math.log(1e6) + (a - 1) * math.log1p(-1 / a) - math.log(a)) / (a - 1)

    back = optimize.minimize_scalar(eps, bounds=(1.0001, 1e4), method="bounded", options={"xatol": 1e-10}).fun
    assert back == pytest.approx(1.0, abs=1e-6)


# --------------------------------------------------------------------------- public information
def test_correlated_information_that_doubles_epsilon_is_no_good_news():
    """Example 3 of S1: Δ_z = W∞ between Bin(n, z₀) and Bin(n, z₁); z₀ = z₁ gives Δ_z = 1 (nothing added)."""
    same = piv.correlated_view(epsilon=0.5, n=20, z0=0.3, z1=0.3, prior=0.1)
    assert same.verdicts[0].tone == "good"  # ε = 0.5 keeps its meaning
    high = piv.correlated_view(epsilon=5.0, n=20, z0=0.3, z1=0.3, prior=0.1)
    assert high.verdicts[0].tone == "neutral"  # nothing added, but ε = 5 itself deserves a caution
    dbl = piv.correlated_view(epsilon=0.5, n=20, z0=0.2, z1=0.4, prior=0.1)
    assert dbl.headline("Effective ε = ε·Δ_z").raw >= 2 * 0.5 - 1e-12 and dbl.verdicts[0].tone == "warning"


# --------------------------------------------------------------------------- the sampling designer's views
def test_sampling_simple_view_epsilon_prime_5_4_is_not_good():
    """Poisson sampling at rate q: ε′ = ln(1 + q(e^ε − 1)) (Thm 2 of paper 1); ε = 6, q = 0.5 gives ε′ = 5.31."""
    v = svw.simple_view(epsilon=6.0, delta=0.0, n=1000, m=500, rate=0.5, schemes=["poisson"], target=0.5)
    assert v.headline("population ε′").raw == pytest.approx(math.log1p(0.5 * math.expm1(6.0)), rel=1e-9)
    assert v.verdicts[0].tone == "neutral"
    small = svw.simple_view(epsilon=1.0, delta=0.0, n=1000, m=100, rate=0.1, schemes=["poisson"], target=0.5)
    assert math.log1p(0.1 * math.expm1(1.0)) < 1 and small.verdicts[0].tone == "good"




def test_random_size_tone_comes_from_the_upper_bound_not_the_lower():
    """Search the uniform size laws for one whose lower ε′ is at most 1 and upper above 1: there the guarantee is
    the upper bound, so the tone is a caution, not good news."""
    for eps in np.linspace(1.0, 6.0, 26):
        v = svw.random_view(epsilon=float(eps), n=200, target=0.5, family="uniform", base="gaussian", mean=0.0,
                            sd=0.0, low=0, high=100, p_full=0.0)
        lo, hi = v.headline("lower ε′ (Thm 3)").raw, v.headline("upper ε′ (Thm 3)").raw
        if lo <= 1 < hi < 10:
            assert v.verdicts[0].tone in ("neutral", "warning")
            assert any("above 1" in s.text for s in v.verdicts)
            return
    pytest.fail("no uniform design with lower ε′ ≤ 1 < upper ε′ found")
