"""Issue 36 item 2: every budget-planner row's privacy loss against an independent accountant built from the row's
own noise and sensitivity (never from the engine's row privacy).

For every mechanism × query (count, sum, mean, histogram; sensitivities 0.002, 1, 7, 10⁴ for sum and mean) and
every planner rule, one statistic is planned; its row's noise scale b (or σ) and the query's sensitivity Δ
(written out here from the spec §4.1 table: count 1; sum U − L; mean (U − L)/n; histogram Δ₁ = 2, Δ₂ = √2 under
replace-one) go to
- OpenDP's measurements (``make_laplace`` / ``make_gaussian`` on float or integer domains, vector domains for a
  histogram; ``make_pureDP_to_zCDP``; its zCDP → (ε, δ) conversion): ε of a Laplace row, ρ of every row;
- dp_accounting's exact privacy-loss objects (``GaussianPrivacyLoss``, ``DiscreteGaussianPrivacyLoss``): the
  Gaussian rows' δ at the row's ε, which must be ≤ the row's δ (valid) and exceed it 1e-6 below the row's ε (tight).
"""

from __future__ import annotations

import math

import opendp.prelude as dp
import pytest
from dp_accounting.pld import privacy_loss_mechanism as plm

from dpdash.accounting import budget as B
from tests import opendp_oracle as oracle

dp.enable_features("contrib", "honest-but-curious")

N = 50
MECHS = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian")
CASES = [("count", None), ("histogram", None)] + [(q, s) for q in ("sum", "mean") for s in (0.002, 1.0, 7.0, 1e4)]


def spec_for(query, sens, mechanism):
    """The statistic and its sensitivities (Δ₁, Δ₂) by the spec's table, computed here."""
    if query == "count":
        lo, hi, d1, d2 = 0.0, 1.0, 1.0, 1.0
    elif query == "histogram":
        lo, hi, d1, d2 = 0.0, 1.0, 2.0, math.sqrt(2.0)
    elif query == "sum":
        lo, hi = 0.0, sens
        d1 = d2 = hi - lo
    else:
        lo, hi = 0.0, sens * N
        d1 = d2 = (hi - lo) / N
    target = 4.0 * d1
    s = B.StatisticSpec(name="q", query=query, target_half_width=target, mechanism=mechanism, lower=lo, upper=hi,
                        n=N if query == "mean" else None, cells=5 if query == "histogram" else 1)
    return s, d1, d2


def _integer(x):
    return abs(x - round(x)) < 1e-12


def opendp_laplace_epsilon(scale, d1, *, discrete, vector):
    atom = dp.atom_domain(T=int) if discrete else dp.atom_domain(T=float, nan=False)
    if vector:
        dom, met = dp.vector_domain(atom), (dp.l1_distance(T=int) if discrete else dp.l1_distance(T=float))
    else:
        dom, met = atom, (dp.absolute_distance(T=int) if discrete else dp.absolute_distance(T=float))
    m = dp.m.make_laplace(dom, met, scale=scale)
    return float(m.map(int(round(d1)) if discrete else d1)), m


def opendp_gaussian_rho(sigma, d2, *, discrete, vector):
    atom = dp.atom_domain(T=int) if discrete else dp.atom_domain(T=float, nan=False)
    if vector:
        dom, met = dp.vector_domain(atom), dp.l2_distance(T=float)
    else:
        dom, met = atom, (dp.absolute_distance(T=int) if discrete else dp.absolute_distance(T=float))
    m = dp.m.make_gaussian(dom, met, scale=sigma)
    return float(m.map(int(round(d2)) if discrete and not vector else d2))


def check_gaussian_epsilon(eps, delta, sigma, d2, *, discrete):
    """The row's (ε, δ) against dp_accounting's exact δ(ε) of the (discrete) Gaussian with this σ and Δ."""
    pl = (plm.DiscreteGaussianPrivacyLoss(sigma, sensitivity=int(round(d2))) if discrete
          else plm.GaussianPrivacyLoss(sigma, sensitivity=d2))
    assert pl.get_delta_for_epsilon(eps) <= delta * (1 + 1e-9), (eps, delta, sigma, d2)
    if eps > 1e-6:
        assert pl.get_delta_for_epsilon(eps * (1 - 1e-6)) > delta, (eps, delta, sigma, d2)


@pytest.mark.parametrize("rule", B.PLAN_RULES)
@pytest.mark.parametrize("mechanism", MECHS)
@pytest.mark.parametrize("query,sens", CASES)
def test_row_privacy_from_its_noise(rule, mechanism, query, sens):
    s, d1, d2 = spec_for(query, sens, mechanism)
    delta = 1e-6
    if mechanism == "discrete_laplace" and not _integer(d1):
        with pytest.raises(ValueError, match="integer sensitivity"):
            B.plan_accuracy_first([s], rule=rule, delta=delta)
        return
    plan = B.plan_accuracy_first([s], rule=rule, delta=delta)
    if rule == "pld" and mechanism == "discrete_gaussian" and not _integer(d2) and query != "histogram":
        # a discrete Gaussian with a non-integer Δ has no privacy-loss distribution: refused in plain words
        assert not plan.feasible and "no privacy-loss distribution" in plan.message
        return
    assert plan.feasible, plan.message
    row = plan.allocations[0]
    vector = query == "histogram"
    if mechanism in ("laplace", "discrete_laplace"):
        eps, m = opendp_laplace_epsilon(row.scale, d1, discrete=mechanism == "discrete_laplace",
                                        vector=vector)
        assert row.epsilon == pytest.approx(eps, rel=1e-12)
        assert row.delta == 0.0
        rho = float(dp.c.make_pureDP_to_zCDP(m).map(int(round(d1)) if mechanism == "discrete_laplace" else d1))
        assert row.rho == pytest.approx(rho, rel=1e-12)
    else:
        discrete = mechanism == "discrete_gaussian"
        rho = opendp_gaussian_rho(row.scale, d2, discrete=discrete and _integer(d2), vector=vector)
        assert row.rho == pytest.approx(rho, rel=1e-12)
        # the δ the row is charged, for one Gaussian (K = 1): all of δ under basic (the δᵢ add up, Rogers Thm 2.1.4:
        # δᵢ = δ/K, never above it) and the plan's δ under zcdp; δ/2 under the other (ε, δ) rules (δᵢ = δ/(2K),
        # the other half is their composition slack)
        if rule == "basic":
            assert row.delta <= delta and row.delta == pytest.approx(delta, rel=1e-15)
        else:
            assert row.delta == pytest.approx(delta if rule == "zcdp" else delta / 2, rel=1e-15)
        if discrete and not _integer(d2):
            # no exact profile for a non-integer Δ: the zCDP conversion, against OpenDP's
            assert row.epsilon == pytest.approx(oracle.cdp_epsilon(rho, row.delta), rel=1e-9)
        else:       # a histogram's continuous Gaussian: Δ₂ = √2 under replace-one in the exact profile

            check_gaussian_epsilon(row.epsilon, row.delta, row.scale, d2, discrete=discrete)
    # a one-statistic plan's total is the row's own guarantee (never below it) under the additive rules and the
    # advanced one (optimal composition and PLD may trade the plan's δ for an ε below the row's pure ε)
    if rule == "zcdp":
        assert plan.rho >= row.rho
    elif rule == "basic" or (rule == "advanced" and mechanism in ("laplace", "discrete_laplace")):
        assert plan.epsilon >= row.epsilon


@pytest.mark.parametrize("rule", ["basic", "zcdp"])
def test_a_slip_in_the_rows_sensitivity_is_caught(rule, monkeypatch):
    """The test above sees a planner that prices a sum's noise with the wrong Δ (here ×0.5): proven by doing it."""
    real = B._sens
    monkeypatch.setattr(B, "_sens", lambda stat: real(stat) * (0.5 if stat.query == "sum" else 1.0))
    with pytest.raises(AssertionError):
        test_row_privacy_from_its_noise(rule, "laplace", "sum", 7.0)
    with pytest.raises(AssertionError):
        test_row_privacy_from_its_noise(rule, "gaussian", "sum", 7.0)
