"""Issue 36 item 3: the privacy filters and odometers halt exactly where Rogers 2017 (seed 002) says.

Each rule is driven with (εᵢ, δᵢ) sequences at and just past each of its thresholds, and the halt point is checked
against the theorem's inequality written out here in mpmath (40 digits), never against the engine:
- basic filter, [T] Thm 5.3.7: HALT if Σδᵢ > δ_g or Σεᵢ > ε_g;
- advanced filter, [T] Thm 5.5.1: HALT if Σδᵢ > δ_g/2 or K > ε_g, K of eq. (5.12) with x = ε_g²/(28.04 ln(1/δ_g));
- zCDP filter ([derived] from Thms 5.7.5–5.7.6): HALT if Σρᵢ > ρ_g, ρ_g the largest ρ with ρ + 2√(ρ ln(1/δ_g)) ≤ ε_g,
  that is ρ_g = (√(ln(1/δ_g) + ε_g) − √ln(1/δ_g))²;
- odometers: basic (Thm 5.3.7: ∞ if Σδᵢ > δ′), fixed x (Lemma 5.6.4), advanced (Thm 5.6.5, eqs 5.17/5.18, ∞ if
  Σδᵢ > δ_g/2), zCDP (Thm 5.7.6, defined for 2R ∈ [1/n², 1]).
"At" cases sit on the threshold exactly (binary-exact sums) or 1e-9 relative inside it; "past" cases 1e-9 relative
outside. Loosening any threshold by more than that turns a test red (tried: the advanced filter's K > ε_g·(1 + 1e-6),
its δ_g/2 → δ_g, the basic filter's slack 1e-12 → 1e-8, the zCDP filter's ρ_g·(1 + 1e-6)).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpdash.accounting import composition as A

mp = mpmath.mp
mp.dps = 40
C28 = mpmath.mpf("28.04")
IN, OUT = mpmath.mpf(1) + mpmath.mpf("1e-9"), mpmath.mpf(1) - mpmath.mpf("1e-9")


def K_exact(eps, eps_g, delta_g):
    """K of [T] eq. (5.12) for the sequence eps (x = ε_g²/(28.04 ln(1/δ_g)))."""
    e = [mpmath.mpf(v) for v in eps]
    eg, dg = mpmath.mpf(eps_g), mpmath.mpf(delta_g)
    x = eg ** 2 / (C28 * mpmath.log(1 / dg))
    S = sum(v * v for v in e)
    tail = sum(v * mpmath.expm1(v) / 2 for v in e)
    return tail + mpmath.sqrt(2 * (S + x) * (1 + mpmath.log(S / x + 1) / 2) * mpmath.log(2 / dg))


def K_homog(k, e0, eps_g, delta_g):
    e0, eg, dg = mpmath.mpf(e0), mpmath.mpf(eps_g), mpmath.mpf(delta_g)
    x = eg ** 2 / (C28 * mpmath.log(1 / dg))
    S = k * e0 * e0
    return k * e0 * mpmath.expm1(e0) / 2 + mpmath.sqrt(2 * (S + x) * (1 + mpmath.log(S / x + 1) / 2)
                                                          * mpmath.log(2 / dg))


def eps_g_where_k_exactly_fits(k, e0, delta_g):
    """The ε_g at which K(k) = ε_g for k runs of e0 (K grows slower than ε_g, so the root is unique)."""
    return mpmath.findroot(lambda g: K_homog(k, e0, g, delta_g) - g, mpmath.mpf(1))


def first_halt(bounds_exceed):
    for i, b in enumerate(bounds_exceed):
        if b:
            return i + 1
    return None


# --------------------------------------------------------------------------- basic filter (Thm 5.3.7)
def basic_halt(eps, deltas, eg, dg):
    se = sd = mpmath.mpf(0)
    out = []
    for e, d in zip(eps, deltas):
        se, sd = se + mpmath.mpf(e), sd + mpmath.mpf(d)
        out.append(sd > mpmath.mpf(dg) or se > mpmath.mpf(eg))
    return first_halt(out)


@pytest.mark.parametrize("eps,deltas,eg,dg", [
    ([0.25] * 5, [0.0] * 5, 1.0, 1e-5),                                # at: Σε = 1 exactly after 4; past at 5
    ([0.5, 0.5 * (1 + 1e-10)], [0.0, 0.0], 1.0, 1e-5),                 # past by 5e-11 relative
    ([0.125] * 8 + [1e-9], [0.0] * 9, 1.0, 1e-5),                      # at, then a hair past
    ([0.01] * 4, [2.0 ** -19] * 4, 1.0, 2.0 ** -17),                   # δ at: Σδ = δ_g exactly
    ([0.01] * 5, [2.0 ** -19] * 4 + [2.0 ** -17 * 1e-9], 1.0, 2.0 ** -17),   # δ just past
    ([0.01] * 2, [2.0 ** -18, 2.0 ** -18 * (1 + 1e-9)], 1.0, 2.0 ** -17),
])
def test_basic_filter_halts_where_theorem_5_3_7_says(eps, deltas, eg, dg):
    tr = A.filter_trace(eps, deltas, epsilon_g=eg, delta_g=dg, rule="basic")
    assert tr.halt_round == basic_halt(eps, deltas, eg, dg)
    assert all(tr.decisions[: (tr.halt_round or len(eps) + 1) - 1])
    assert not any(tr.decisions[(tr.halt_round or len(eps) + 1) - 1:])


def test_basic_filter_rounds_and_trace_agree_with_the_inequality():
    for e0, eg in ((0.1, 1.0), (0.3, 1.0), (0.25, 2.0), (1 / 3, 1.0)):
        k = 0
        while (k + 1) * mpmath.mpf(e0) <= mpmath.mpf(eg) * (1 + mpmath.mpf("1e-12")):
            k += 1
        assert A.filter_rounds(e0, epsilon_g=eg, delta_g=1e-5, rule="basic") == k
        df = A.adaptive_trace([e0] * (k + 2), epsilon_g=eg, delta_g=1e-5, n=100)
        halted = df[df.rule == "basic"].halted.tolist()
        assert halted == [False] * k + [True] * 2


# --------------------------------------------------------------------------- advanced filter (Thm 5.5.1)
@pytest.mark.parametrize("e0,k,dg", [(0.01, 50, 1e-6), (0.05, 7, 1e-8), (0.2, 3, 1e-3), (0.001, 2000, 1e-9)])
def test_advanced_filter_halts_at_and_just_past_K_equal_eps_g(e0, k, dg):
    g = eps_g_where_k_exactly_fits(k, e0, dg)
    for eg, allowed in ((g * IN, k), (g * OUT, k - 1)):
        eg = float(eg)
        # the theorem written out: the first round whose K exceeds ε_g
        ref = next(j for j in range(1, k + 3) if K_homog(j, e0, eg, dg) > eg)
        assert ref == allowed + 1
        tr = A.filter_trace([e0] * (k + 2), epsilon_g=eg, delta_g=dg, rule="advanced")
        assert tr.halt_round == ref, (e0, k, dg, eg)
        assert A.filter_rounds(e0, epsilon_g=eg, delta_g=dg, rule="advanced") == allowed
        df = A.adaptive_trace([e0] * (k + 2), epsilon_g=eg, delta_g=dg, n=100)
        assert first_halt(df[df.rule == "filter_advanced"].halted.tolist()) == ref
        # the bound the filter shows is K itself, never below it
        for j, b in enumerate(tr.bound[:allowed], start=1):
            assert mpmath.mpf(b) >= K_homog(j, e0, eg, dg)
            assert mpmath.mpf(b) <= K_homog(j, e0, eg, dg) * (1 + mpmath.mpf("1e-12"))


def test_advanced_filter_on_a_heterogeneous_sequence():
    rng = np.random.default_rng(36)
    eps = rng.uniform(0.005, 0.08, 400).tolist()
    dg = 1e-6
    # put ε_g 1e-9 inside and outside K at round 150
    g = mpmath.findroot(lambda g: K_exact(eps[:150], g, dg) - g, mpmath.mpf(1))
    for eg, expect in ((float(g * IN), 151), (float(g * OUT), 150)):
        ref = first_halt([K_exact(eps[:j], eg, dg) > eg for j in range(1, 160)])
        assert ref == expect
        assert A.filter_trace(eps, epsilon_g=eg, delta_g=dg, rule="advanced").halt_round == ref
        assert mpmath.mpf(A.filter_bound(eps[:149], epsilon_g=eg, delta_g=dg)) >= K_exact(eps[:149], eg, dg)


@pytest.mark.parametrize("deltas,halt", [
    ([2.0 ** -20] * 5, 5),                                  # Σδ = δ_g/2 exactly after 4: CONT; the 5th is past
    ([2.0 ** -19, 2.0 ** -19 * (1 + 1e-9)], 2),              # just past δ_g/2 at the 2nd
    ([2.0 ** -19 * (1 - 1e-9), 2.0 ** -19], None),           # just inside
])
def test_advanced_filter_delta_split_is_half_of_delta_g(deltas, halt):
    dg = 2.0 ** -17          # δ_g/2 = 2^-18: the δ half of the advanced rule's split ([T] Thm 5.5.1)
    eps = [1e-6] * len(deltas)      # K far below ε_g: only the δ half can halt
    sd = mpmath.mpf(0)
    ref = None
    for j, d in enumerate(deltas, start=1):
        sd += mpmath.mpf(d)
        if sd > mpmath.mpf(dg) / 2:
            ref = j
            break
    assert ref == halt
    assert A.filter_trace(eps, deltas, epsilon_g=1.0, delta_g=dg, rule="advanced").halt_round == ref
    # the odometers of Thm 5.6.5 and Lemma 5.6.4 use the same δ_g/2 split
    past = ref is not None
    upto = deltas[: ref or len(deltas)]
    assert math.isinf(A.odometer_advanced([1e-3] * len(upto), upto, delta_g=dg, n=1000)) == past
    assert math.isinf(A.odometer_fixed_x([1e-3] * len(upto), upto, delta_g=dg, x=1e-4)) == past


# --------------------------------------------------------------------------- zCDP filter
@pytest.mark.parametrize("eg,dg", [(1.0, 1e-5), (0.3, 1e-9), (4.0, 1e-3)])
def test_zcdp_filter_halts_at_rho_g(eg, dg):
    L = -mpmath.log(mpmath.mpf(dg))
    rho_g = (mpmath.sqrt(L + eg) - mpmath.sqrt(L)) ** 2        # ρ + 2√(ρL) = ε_g solved for ρ
    f = A.PrivacyFilter(epsilon_g=eg, delta_g=dg, rule="zcdp")
    assert f.request(rho=float(rho_g * OUT / 2))
    assert f.request(rho=float(rho_g * OUT / 2))               # Σρ just inside ρ_g: CONT
    assert not f.request(rho=float(rho_g * 2e-9))               # now just past: HALT
    f = A.PrivacyFilter(epsilon_g=eg, delta_g=dg, rule="zcdp")
    assert not f.request(rho=float(rho_g * IN))
    # constant pure requests ε₀ (charged ε₀²/2): the count the inequality allows
    for e0 in (0.01, 0.037, 0.2):
        k = int(mpmath.floor(rho_g / (mpmath.mpf(e0) ** 2 / 2)))
        if abs(k * mpmath.mpf(e0) ** 2 / 2 / rho_g - 1) < mpmath.mpf("1e-9"):
            continue
        assert A.filter_rounds(e0, epsilon_g=eg, delta_g=dg, rule="zcdp") == k
        assert A.filter_trace([e0] * (k + 1), epsilon_g=eg, delta_g=dg, rule="zcdp").halt_round == k + 1


# --------------------------------------------------------------------------- odometers
def test_basic_odometer_threshold_and_value():
    d = [2.0 ** -20] * 4
    assert A.odometer_basic([0.1] * 4, d, delta_prime=2.0 ** -18) == pytest.approx(0.4, rel=1e-15)
    assert mpmath.mpf(A.odometer_basic([0.1] * 4, d, delta_prime=2.0 ** -18)) >= 4 * mpmath.mpf(0.1)
    assert A.odometer_basic([0.1] * 4, d[:3] + [2.0 ** -20 * (1 + 1e-9)], delta_prime=2.0 ** -18) == math.inf


def odo_advanced_exact(eps, dg, n):
    """[T] Thm 5.6.5: eq. (5.17) when Σεᵢ² ∈ [1/n², 1], else eq. (5.18)."""
    e = [mpmath.mpf(v) for v in eps]
    dg, n = mpmath.mpf(dg), mpmath.mpf(n)
    S = sum(v * v for v in e)
    tail = sum(v * mpmath.expm1(v) / 2 for v in e)
    if 1 / n ** 2 <= S <= 1:
        return tail + mpmath.sqrt(2 * S * (mpmath.log(48 * mpmath.e) + 2 * mpmath.log(mpmath.log(n) / dg)))
    return tail + mpmath.sqrt(2 * (1 / n ** 2 + S) * (1 + mpmath.log(1 + n ** 2 * S) / 2)
                              * mpmath.log(4 * mpmath.log(n, 2) / dg))


@pytest.mark.parametrize("n", [10, 1000])
@pytest.mark.parametrize("where", ["low_in", "low_out", "high_in", "high_out", "middle"])
def test_advanced_odometer_branches_at_their_edges(n, where):
    # four equal εᵢ with Σεᵢ² a hair inside or outside [1/n², 1] (the edges of eq. 5.17)
    target = {"low_in": IN / n ** 2, "low_out": OUT / n ** 2, "high_in": OUT, "high_out": IN,
              "middle": mpmath.mpf("0.3")}[where]
    e0 = float(mpmath.sqrt(target / 4))
    eps = [e0] * 4
    exact = odo_advanced_exact(eps, 1e-6, n)
    got = A.odometer_advanced(eps, delta_g=1e-6, n=n)
    assert mpmath.mpf(got) >= exact
    assert mpmath.mpf(got) <= exact * (1 + mpmath.mpf("1e-12"))


def test_fixed_x_odometer_is_lemma_5_6_4():
    rng = np.random.default_rng(7)
    eps = rng.uniform(0.01, 0.2, 30).tolist()
    for x, dg in ((1e-4, 1e-6), (0.5, 1e-3)):
        e = [mpmath.mpf(v) for v in eps]
        S = sum(v * v for v in e)
        exact = sum(v * mpmath.expm1(v) / 2 for v in e) + mpmath.sqrt(
            2 * (S + x) * (1 + mpmath.log(S / x + 1) / 2) * mpmath.log(2 / mpmath.mpf(dg)))
        got = mpmath.mpf(A.odometer_fixed_x(eps, delta_g=dg, x=x))
        assert exact <= got <= exact * (1 + mpmath.mpf("1e-12"))


@pytest.mark.parametrize("n", [10, 1000])
def test_zcdp_odometer_range_and_value(n):
    dg = 1e-6
    L = mpmath.log(48 * mpmath.e) + 2 * mpmath.log(mpmath.log(n) / mpmath.mpf(dg))
    for two_r, defined in ((IN / n ** 2, True), (OUT / n ** 2, False), (OUT, True), (IN, False),
                           (mpmath.mpf("0.2"), True)):
        rhos = [float(two_r / 4)] * 2
        got = A.odometer_zcdp(rhos, delta_g=dg, n=n)
        assert math.isnan(got) == (not defined)
        if defined:
            R = sum(mpmath.mpf(r) for r in rhos)
            exact = R + 2 * mpmath.sqrt(R * L)
            assert exact <= mpmath.mpf(got) <= exact * (1 + mpmath.mpf("1e-12"))
