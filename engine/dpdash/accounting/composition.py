"""Privacy accounting: composition rules, zCDP/RDP conversions, filters and odometers.

Pure Python (no streamlit). Formulas follow the Epsilon-calculator spec §4.2–4.3, which cites
Rogers 2017, *Leveraging Privacy in Data Analysis* (seed ``002_802572da4c9a19ad.txt``, "[T]"),
and external standard results (KOV, MV, DRV, BS, Mir, CKS). Numerical accounting (PLD, and the RDP
cross-check) uses Google's ``dp_accounting``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Literal, Sequence

import numpy as np
import pandas as pd
from scipy import optimize, special

from dpdash.accounting import mechanisms as mech
from dpdash.common.search import grow_until, largest_true
from dpdash.common.validation import ValidationError, check_delta, check_epsilon, check_positive, check_size
from dpdash.accounting.conversions import (RDP_ORDERS, RdpConversion, gaussian_rho, half_square, pure_to_zcdp,  # noqa: F401
                                           margin, rdp_to_dp, round_up, sum_up, zcdp_rho_for_epsilon, zcdp_to_dp)

Kind = Literal["laplace", "gaussian", "discrete_laplace", "discrete_gaussian", "pure_dp", "approx_dp", "zcdp"]
Rule = Literal["basic", "advanced", "advanced_drv", "kov_analytic", "kov_optimal", "zcdp", "rdp", "pld"]
ALL_RULES: tuple[str, ...] = ("basic", "advanced", "advanced_drv", "kov_analytic", "kov_optimal", "zcdp", "rdp", "pld")
KINDS: tuple[str, ...] = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian", "pure_dp", "approx_dp",
                          "zcdp")
RULE_LABELS = {
    "basic": "Basic (Thm 2.1.4)", "advanced": "Advanced (Thm 2.1.5)", "advanced_drv": "Advanced, DRV form",
    "kov_analytic": "KOV analytic (Thm 3.4)", "kov_optimal": "Optimal (KOV / MV)", "zcdp": "zCDP",
    "rdp": "Rényi DP", "pld": "PLD (dp-accounting)",
}
RULE_SOURCES = {
    "basic": "thesis", "advanced": "thesis", "advanced_drv": "external", "kov_analytic": "external",
    "kov_optimal": "external", "zcdp": "thesis-corrected", "rdp": "external", "pld": "external",
}
FILTER_CONSTANT = 28.04
ULP_TERMS = 1.0   # each ln(1 − δᵢ) of the product errs by about one rounding of its own size (log1p)
KOV_MAX_TERMS = 1_000_000
PLD_MIN_DELTA = 1e-12
_EPS_ONLY = ("laplace", "discrete_laplace", "pure_dp")
_DELTA_KINDS = ("gaussian", "discrete_gaussian", "zcdp")


# --------------------------------------------------------------------------- validation
# Scalars go through dpdash.common.validation. A target δ is any number in (0, 1) (the computations are in log space);
# the spec's 1e-300 input floor is the pages' control range. The filters and odometers need δ_g < 1/e.
def _delta_g(delta_g) -> float:
    d = check_delta(delta_g, name="delta_g", allow_zero=False)
    if d >= 1.0 / math.e:
        raise ValidationError(f"delta_g must be a number in (0, 1/e) ≈ (0, 0.3679); got {delta_g!r}")
    return d


def _eps_list(epsilons: Iterable[float], name: str = "epsilons") -> np.ndarray:
    e = np.asarray(list(epsilons) if not isinstance(epsilons, np.ndarray) else epsilons, dtype=float).ravel()
    if e.size == 0:
        raise ValidationError(f"{name} is empty: give at least one value")
    if not np.all(np.isfinite(e)) or np.any(e <= 0):
        raise ValidationError(f"every value in {name} must be a finite number > 0")
    return e


def _delta_list(deltas, size: int) -> np.ndarray:
    if deltas is None:
        return np.zeros(size)
    d = np.asarray(list(deltas) if not isinstance(deltas, np.ndarray) else deltas, dtype=float).ravel()
    if d.size != size:
        raise ValidationError(f"deltas has {d.size} entries, epsilons has {size}")
    if not np.all(np.isfinite(d)) or np.any(d < 0) or np.any(d >= 1):
        raise ValidationError("every value in deltas must be a number in [0, 1)")
    return d


def _log1m_prod(deltas: np.ndarray) -> float:
    """log Π(1 − δᵢ)."""
    return float(np.sum(np.log1p(-deltas))) if deltas.size else 0.0


def _residual_delta(delta: float, deltas: np.ndarray) -> float:
    """δ̂ = 1 − (1−δ)/Π(1−δᵢ), the δ left for the ε-part (exact, via log1p/expm1)."""
    return _one_minus_exp(math.log1p(-delta) - _log1m_prod(deltas))


def _exceeds(values: np.ndarray, limit: float) -> bool:
    """Σ values > limit, decided exactly (the sign of a correctly rounded sum is the exact sign)."""
    return math.fsum(values.tolist() + [-limit]) > 0.0


def _one_minus_exp(x: float) -> float:
    """1 − eˣ = −expm1(x), as −∞ where eˣ overflows (a used-up δ share), never OverflowError."""
    return -math.expm1(x) if x < 700.0 else -math.inf


def _expm1(x: float) -> float:
    """eˣ − 1 as ∞ where it overflows (spec §3: overflowing bounds are ∞)."""
    return math.expm1(x) if x < 700.0 else math.inf


# --------------------------------------------------------------------------- mechanisms
@dataclass(frozen=True)
class Mechanism:
    """One row of a composition list: a mechanism kind, its parameters, and how many times it runs."""

    kind: Kind
    epsilon: float | None = None
    delta: float = 0.0
    noise_multiplier: float | None = None
    sigma: float | None = None
    scale: float | None = None
    sensitivity: int = 1
    rho: float | None = None
    count: int = 1

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        check_size(self.count, name="count")
        need = {"laplace": "epsilon", "pure_dp": "epsilon", "approx_dp": "epsilon", "gaussian": "noise_multiplier",
                "discrete_laplace": "scale", "discrete_gaussian": "sigma", "zcdp": "rho"}[self.kind]
        check_positive(getattr(self, need), name=f"{self.kind} {need}")
        if self.kind == "approx_dp":
            check_delta(self.delta, name="approx_dp delta")
        if self.kind.startswith("discrete"):
            check_size(self.sensitivity, name="sensitivity of a discrete mechanism")


def laplace(epsilon, count=1) -> Mechanism:
    """Laplace mechanism with privacy ε (scale Δ/ε)."""
    return Mechanism("laplace", epsilon=float(epsilon), count=int(count))


def gaussian(noise_multiplier, count=1) -> Mechanism:
    """Gaussian mechanism with noise multiplier m = σ/Δ₂."""
    return Mechanism("gaussian", noise_multiplier=float(noise_multiplier), count=int(count))


def discrete_laplace(scale, sensitivity=1, count=1) -> Mechanism:
    """Discrete Laplace mechanism with scale t (privacy Δ/t) [X-CKS]."""
    return Mechanism("discrete_laplace", scale=float(scale), sensitivity=int(sensitivity), count=int(count))


def discrete_gaussian(sigma, sensitivity=1, count=1) -> Mechanism:
    """Discrete Gaussian mechanism with parameter σ [X-CKS]."""
    return Mechanism("discrete_gaussian", sigma=float(sigma), sensitivity=int(sensitivity), count=int(count))


def pure_dp(epsilon, count=1) -> Mechanism:
    """A black-box ε-DP mechanism."""
    return Mechanism("pure_dp", epsilon=float(epsilon), count=int(count))


def approx_dp(epsilon, delta, count=1) -> Mechanism:
    """A black-box (ε, δ)-DP mechanism."""
    return Mechanism("approx_dp", epsilon=float(epsilon), delta=float(delta), count=int(count))


def zcdp(rho, count=1) -> Mechanism:
    """A black-box ρ-zCDP mechanism."""
    return Mechanism("zcdp", rho=float(rho), count=int(count))


def _as_list(mechanisms) -> list[Mechanism]:
    if isinstance(mechanisms, Mechanism):
        mechanisms = [mechanisms]
    out = list(mechanisms)
    if not out:
        raise ValueError("the mechanism list is empty: add at least one row")
    for m in out:
        if not isinstance(m, Mechanism):
            raise ValueError(f"expected Mechanism rows, got {type(m).__name__}")
    return out


def _k_delta(ms: Sequence[Mechanism]) -> int:
    return sum(m.count for m in ms if m.kind in _DELTA_KINDS)


def mechanism_rho(m: Mechanism) -> float | None:
    """ρᵢ of one run (None if the kind has no zCDP guarantee: approx_dp)."""
    # ½(a/b)² by half_square: ∞ on overflow instead of OverflowError / ZeroDivisionError (issue 17)
    if m.kind in ("laplace", "pure_dp"):
        return half_square(m.epsilon, 1.0)
    if m.kind == "discrete_laplace":
        return half_square(m.sensitivity, m.scale)
    if m.kind == "gaussian":
        return half_square(1.0, m.noise_multiplier)
    if m.kind == "discrete_gaussian":
        return half_square(m.sensitivity, m.sigma)
    if m.kind == "zcdp":
        return m.rho
    return None


def mechanism_epsilon_delta(m: Mechanism, delta_i: float) -> tuple[float, float]:
    """(εᵢ, δᵢ) of one run under the (ε, δ) rules; δᵢ is charged only by the δ-kinds (spec §4.2 table)."""
    if m.kind in ("laplace", "pure_dp"):
        return m.epsilon, 0.0
    if m.kind == "discrete_laplace":
        return m.sensitivity / m.scale, 0.0
    if m.kind == "approx_dp":
        return m.epsilon, m.delta
    if m.kind == "gaussian":
        return mech.gaussian_epsilon(delta_i, sigma=m.noise_multiplier), delta_i
    if m.kind == "discrete_gaussian":
        return mech.discrete_gaussian_epsilon(delta_i, sigma=m.sigma, sensitivity=m.sensitivity), delta_i
    return zcdp_to_dp(m.rho, delta_i), delta_i


def _per_row_pairs(ms: Sequence[Mechanism], delta: float) -> list[tuple[float, float, int]]:
    kd = _k_delta(ms)
    delta_i = delta / (2.0 * kd) if kd else 0.0
    return [(*mechanism_epsilon_delta(m, delta_i), m.count) for m in ms]


# --------------------------------------------------------------------------- result
@dataclass(frozen=True)
class CompositionResult:
    """ε of a composition at the target δ under one rule; ``valid=False`` (with a note) when n/a."""

    rule: str
    epsilon: float
    delta: float
    k: int
    valid: bool
    note: str
    source: str
    order: float | None = None


def _invalid(rule: str, delta: float, k: int, note: str) -> CompositionResult:
    return CompositionResult(rule, math.nan, delta, k, False, note, RULE_SOURCES.get(rule, "derived"))


# --------------------------------------------------------------------------- (ε, δ) rules
def basic_composition(epsilons, deltas=None) -> CompositionResult:
    """Basic composition Σεᵢ, Σδᵢ ([T] Thm 2.1.4); both sums rounded up (issue 36 item 6)."""
    e = _eps_list(epsilons)
    d = _delta_list(deltas, e.size)
    return CompositionResult("basic", sum_up(e.tolist()), sum_up(d.tolist()), int(e.size), True, "", "thesis")


def _heterogeneous(epsilons, deltas, delta) -> tuple[np.ndarray, float, float]:
    """(εᵢ array, target δ, δ̂ left for the ε-part) of a heterogeneous list; δ̂ ≤ 0 when the δᵢ use δ up."""
    e = _eps_list(epsilons)
    d = _delta_list(deltas, e.size)
    delta = check_delta(delta, allow_zero=False)
    return e, delta, _residual_delta(delta, d)


def advanced_bound(sum_tanh, sum_sq, delta_hat):
    """Σεᵢ·tanh(εᵢ/2) + √(2Σεᵢ² ln(1/δ̂)) from its two sums ([T] Thm 2.1.5); elementwise on arrays.

    The one definition of the advanced-composition value: ``advanced_composition``, the realised-ε heuristic
    and the adaptive trace call it (with prefix sums for the trace).
    """
    return sum_tanh + np.sqrt(2.0 * sum_sq * -np.log(delta_hat))


def advanced_composition(epsilons, deltas=None, *, delta) -> CompositionResult:
    """Advanced composition Σεᵢ·tanh(εᵢ/2) + √(2Σεᵢ² ln(1/δ̂)) ([T] Thm 2.1.5, heterogeneous form).

    δ̂ = 1 − (1−δ)/Π(1−δᵢ); (e^x − 1)/(e^x + 1) = tanh(x/2). Rounded up (issue 36 item 6): the margin covers
    the sums' terms and ln(1/δ̂), whose error grows as the δᵢ use up δ (the cancellation in δ̂).
    """
    e, delta, dh = _heterogeneous(epsilons, deltas, delta)
    if dh <= 0:
        return _invalid("advanced", delta, e.size, "the per-mechanism δᵢ already use up the target δ")
    d = _delta_list(deltas, e.size)
    with np.errstate(over="ignore"):  # εᵢ² → ∞ makes the bound ∞
        st, sq = math.fsum((e * np.tanh(e / 2.0)).tolist()), math.fsum((e * e).tolist())
        val = float(advanced_bound(st, sq, dh))
    big_l = -math.log(dh)
    # ln(1/δ̂) errs by the relative error of δ̂: that of its log1p difference (terms of size |ln(1−δ)|, |Σ ln(1−δᵢ)|)
    x = math.log1p(-delta) - _log1m_prod(d)
    rel_dh = margin(1.0, (abs(math.log1p(-delta)) + abs(_log1m_prod(d)) + d.size * ULP_TERMS * delta) / abs(x))
    root = val - st
    err = margin(st, root) + (root * rel_dh / (2.0 * big_l) if big_l > 0 else 0.0)
    return CompositionResult("advanced", round_up(val, err), delta, int(e.size), True, "", "thesis")


def advanced_composition_drv(epsilon, *, k, delta, delta_each=0.0) -> CompositionResult:
    """Dwork–Rothblum–Vadhan advanced composition ε₀√(2k ln(1/δ′)) + kε₀(e^{ε₀}−1), δ′ = δ − kδ₀ [X-DRV]."""
    e0, k, delta = check_epsilon(epsilon), check_size(k, name="k"), check_delta(delta, allow_zero=False)
    dp = delta - k * float(delta_each)
    if dp <= 0:
        return _invalid("advanced_drv", delta, k, "kδ₀ already uses up the target δ")
    a, b = e0 * math.sqrt(2.0 * k * -math.log(dp)), k * e0 * _expm1(e0)
    # δ′ = δ − kδ₀ is one rounding of size δ + kδ₀: ln(1/δ′) errs by that relative error
    rel = margin(delta, k * float(delta_each), ops=2) / dp if dp < delta else 0.0
    err = margin(a, b) + a * rel / (2.0 * -math.log(dp))
    return CompositionResult("advanced_drv", round_up(a + b, err), delta, k, True, "", "external")


def kov_analytic_composition(epsilon, *, k, delta, delta_each=0.0) -> CompositionResult:
    """Kairouz–Oh–Viswanath analytic bound (KOV 2015 Thm 3.4) for k homogeneous (ε₀, δ₀) mechanisms."""
    e0, k, delta = check_epsilon(epsilon), check_size(k, name="k"), check_delta(delta, allow_zero=False)
    dt = _one_minus_exp(math.log1p(-delta) - k * math.log1p(-float(delta_each)))
    if dt <= 0:
        return _invalid("kov_analytic", delta, k, "the per-mechanism δ₀ already use up the target δ")
    base = k * e0 * math.tanh(e0 / 2.0)
    b2 = base + e0 * math.sqrt(2.0 * k * math.log(math.e + math.sqrt(k * e0 * e0) / dt))
    b3 = base + e0 * math.sqrt(2.0 * k * -math.log(dt))
    # each bound rounded up by its terms (δ̃ is computed exactly via log1p/expm1: ≤ a few roundings)
    val = min(round_up(k * e0, margin(k * e0, ops=1)), round_up(b2, margin(base, b2 - base)),
              round_up(b3, margin(base, b3 - base)))
    return CompositionResult("kov_analytic", val, delta, k, True, "", "external")


def _kov_terms(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """All subset classes of a grouped list: (A = Σ_{i∈S} εᵢ, log multiplicity), T = Σεᵢ, log Π(1+e^{εᵢ})."""
    A = np.zeros(1)
    logw = np.zeros(1)
    for v, c in zip(values, counts):
        ls = np.arange(c + 1)
        lc = special.gammaln(c + 1) - special.gammaln(ls + 1) - special.gammaln(c - ls + 1)
        with np.errstate(invalid="ignore"):  # an infinite εᵢ gives 0·∞ = NaN sums, masked out in _kov_log_delta
            A = (A[:, None] + ls[None, :] * v).ravel()
        logw = (logw[:, None] + lc[None, :]).ravel()
    T = float(np.dot(values, counts))
    logden = float(np.dot(counts, np.logaddexp(0.0, values)))
    return A, logw, T, logden


def _kov_log_delta(A, logw, T, logden, eg: float) -> float:
    with np.errstate(invalid="ignore"):  # ∞ − ∞ (an infinite εᵢ) is NaN: such a class never counts
        mask = T - 2.0 * A > eg
    if not np.any(mask):
        return -math.inf
    a = A[mask]
    # log(e^{T−A} − e^{eg + A}) = (T − A) + log(−expm1(eg + 2A − T))
    with np.errstate(divide="ignore"):
        terms = logw[mask] + (T - a) + np.log(-np.expm1(eg + 2.0 * a - T))
    return mech.logsumexp(terms) - logden


def _group(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    vals, counts = np.unique(np.round(e, 15), return_counts=True)
    return vals, counts


def kov_optimal_delta(epsilons, *, epsilon_g) -> float:
    """Exact optimal δ of composing pure εᵢ-DP mechanisms at ε_g (KOV 2015 Thm 3.3; Murtagh–Vadhan 2016).

    δ_opt(ε_g) = Σ_S max(0, e^{Σ_{i∉S}εᵢ} − e^{ε_g+Σ_{i∈S}εᵢ}) / Π(1+e^{εᵢ}), grouped and in log space.

    >>> round(kov_optimal_delta([0.5] * 4, epsilon_g=1.0), 8)
    0.09489511
    """
    e = _eps_list(epsilons)
    eg = check_epsilon(epsilon_g, name="epsilon_g", allow_zero=True)
    vals, counts = _group(e)
    if float(np.prod(counts.astype(float) + 1.0)) > KOV_MAX_TERMS:
        raise ValueError("too many distinct subset classes (> 1e6) for exact optimal composition")
    return math.exp(_kov_log_delta(*_kov_terms(vals, counts), eg))


def kov_optimal_composition(epsilons, deltas=None, *, delta) -> CompositionResult:
    """Smallest ε_g whose optimal composition meets δ (KOV 2015 Thm 3.3, heterogeneous: Murtagh–Vadhan 2016).

    With δᵢ > 0 the composition is (ε_g, 1 − Π(1−δᵢ)(1 − δ_opt)); bisection on [0, Σεᵢ] to 1e-10.
    """
    e, delta, target = _heterogeneous(epsilons, deltas, delta)
    if target <= 0:
        return _invalid("kov_optimal", delta, e.size, "the per-mechanism δᵢ already use up the target δ")
    vals, counts = _group(e)
    if float(np.prod(counts.astype(float) + 1.0)) > KOV_MAX_TERMS:
        return _invalid("kov_optimal", delta, e.size,
                        "more than 1e6 subset classes: use PLD of worst-case PLDs (same optimum)")
    terms = _kov_terms(vals, counts)
    lt = math.log(target)
    lo, hi = 0.0, terms[2]
    # the float ln δ_opt errs by a few roundings of its terms' size (≤ T + ln-denominator): test against a target
    # lowered by that much, so the ε_g found meets the exact target (issue 36 item 6)
    lt = lt - margin(terms[2], terms[3], lt)
    if _kov_log_delta(*terms, 0.0) <= lt:
        return CompositionResult("kov_optimal", 0.0, delta, int(e.size), True, "", "external")
    if _kov_log_delta(*terms, hi) > lt:       # not even Σεᵢ meets it (rounding at the top): report Σεᵢ
        return CompositionResult("kov_optimal", hi, delta, int(e.size), True, "", "external")
    # Brent's method on the monotone, continuous δ_opt(ε_g) (about 10 evaluations where bisection to 1e-10 took
    # 35; issue 23 item 3), then up to the side that meets the target: the answer is never below the optimum.
    tol = 1e-10 * max(1.0, hi)
    x = optimize.brentq(lambda g: _kov_log_delta(*terms, g) - lt, lo, hi, xtol=tol / 4, rtol=1e-12, maxiter=200)
    step = tol / 4
    for _ in range(60):
        if _kov_log_delta(*terms, x) <= lt:
            return CompositionResult("kov_optimal", min(x, hi), delta, int(e.size), True, "", "external")
        x += step
        step *= 2.0
    return CompositionResult("kov_optimal", hi, delta, int(e.size), True, "", "external")


# --------------------------------------------------------------------------- zCDP
# --------------------------------------------------------------------------- RDP
def _rr_rdp(eps: float, orders: np.ndarray) -> np.ndarray:
    return (np.logaddexp(orders * eps, (1.0 - orders) * eps) - np.logaddexp(0.0, eps)) / (orders - 1.0)


def _laplace_rdp(eps: float, orders: np.ndarray) -> np.ndarray:
    # ε + log1p((α−1)·expm1(ε(1−2α))/(2α−1))/(α−1)  [Mironov 2017 Prop. 6]
    return eps + np.log1p((orders - 1.0) * np.expm1(eps * (1.0 - 2.0 * orders)) / (2.0 * orders - 1.0)) / (orders - 1.0)


def rdp_curve(mechanism: Mechanism, *, orders=RDP_ORDERS) -> np.ndarray:
    """RDP ε(α) of ``count`` runs of the mechanism (spec §4.2 table: [X-Mir], RR curve [derived]).

    Raises ValueError for approx_dp, which has no RDP guarantee.
    """
    m = mechanism
    a = np.asarray(orders, dtype=float)
    if m.kind == "laplace":
        r = _laplace_rdp(m.epsilon, a)
    elif m.kind == "pure_dp":
        r = _rr_rdp(m.epsilon, a)
    elif m.kind == "discrete_laplace":
        r = _rr_rdp(m.sensitivity / m.scale, a)
    elif m.kind in ("gaussian", "discrete_gaussian", "zcdp"):
        r = mechanism_rho(m) * a
    else:
        raise ValueError("approx_dp has no Rényi-DP guarantee")
    return m.count * r


# --------------------------------------------------------------------------- PLD
def _pld_for(m: Mechanism, delta_i: float, resolution: float):
    from dp_accounting.pld import privacy_loss_distribution as pldmod

    vdi = resolution
    if m.kind == "laplace":
        return pldmod.from_laplace_mechanism(1.0 / m.epsilon, pessimistic_estimate=True,
                                             value_discretization_interval=vdi)
    if m.kind == "discrete_laplace" and m.sensitivity == 1:
        # with Δ = 1 the privacy loss is exactly ±1/t with the masses of RR_{1/t}: the same two-point PLD
        return _pld_for(Mechanism("pure_dp", epsilon=1.0 / m.scale), delta_i, resolution)
    if m.kind == "discrete_laplace":
        return pldmod.from_discrete_laplace_mechanism(1.0 / m.scale, sensitivity=m.sensitivity,
                                                      pessimistic_estimate=True, value_discretization_interval=vdi)
    if m.kind in ("pure_dp", "approx_dp"):
        # as pldmod.from_privacy_parameters, but ±ε that sit on the grid up to float error are not pushed
        # one step up (ceil(−0.3/1e-4) = −2999 in floating point), which would loosen every composition
        def idx(x: float) -> int:
            q = x / vdi
            return int(round(q)) if abs(q - round(q)) < 1e-9 * max(1.0, abs(q)) else math.ceil(q)

        e, d = m.epsilon, m.delta
        pmf: dict[int, float] = {}
        pmf[idx(e)] = (1 - d) / (1 + math.exp(-e))
        pmf[idx(-e)] = pmf.get(idx(-e), 0.0) + (1 - d) / (1 + math.exp(e))
        return pldmod.PrivacyLossDistribution.create_from_rounded_probability(pmf, d, vdi)
    if m.kind == "gaussian":
        return _gaussian_pld(m.noise_multiplier, vdi)
    if m.kind == "discrete_gaussian":
        return pldmod.from_discrete_gaussian_mechanism(m.sigma, sensitivity=m.sensitivity, pessimistic_estimate=True,
                                                       value_discretization_interval=vdi)
    raise ValueError("zCDP rows have no PLD")


class _PldCache:
    """Bounded, thread-safe cache of self-composed PLDs per distinct row (issue 23 item 3: live budget plans).

    Keyed by (mechanism with count 1, count, resolution); a PLD does not depend on δ, so a re-plan that changes
    δ, one row, or the rule back to PLD rebuilds only what changed. At most :attr:`max_entries` entries and
    :attr:`max_points` probabilities in all (about 8 bytes each): the oldest go first.
    """

    def __init__(self, max_entries: int = 256, max_points: int = 4_000_000):
        import threading
        from collections import OrderedDict
        self.max_entries, self.max_points = max_entries, max_points
        self._d: OrderedDict = OrderedDict()
        self._points = 0
        self._lock = threading.Lock()

    @staticmethod
    def _size(pld) -> int:
        n = 0
        for pmf in (getattr(pld, "_pmf_remove", None), getattr(pld, "_pmf_add", None)):
            probs = getattr(pmf, "_probs", None)
            n += len(probs) if probs is not None else 1000
        return n

    def get(self, key, build: Callable[[], object]):
        with self._lock:
            if key in self._d:
                self._d.move_to_end(key)
                return self._d[key][0]
        pld = build()
        n = self._size(pld)
        if n <= self.max_points // 4:
            with self._lock:
                if key not in self._d:
                    self._d[key] = (pld, n)
                    self._points += n
                while self._d and (len(self._d) > self.max_entries or self._points > self.max_points):
                    _, (_, m) = self._d.popitem(last=False)
                    self._points -= m
        return pld

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self._points = 0

    def __len__(self) -> int:
        return len(self._d)


PLD_CACHE = _PldCache()


def _row_pld(m: Mechanism, count: int, resolution: float):
    """PLD of ``count`` runs of ``m`` (``self_compose``), from the bounded cache."""
    def build():
        p = _pld_for(m, 0.0, resolution)
        return _self_compose(p, count) if count > 1 else p
    return PLD_CACHE.get((replace(m, count=1), int(count), float(resolution)), build)


#: Tail mass dp-accounting's ``self_compose`` may truncate (its default)
_TAIL_MASS = 1e-15


def _self_compose(pld, count: int):
    """dp-accounting's ``pld.self_compose(count)``, equal to the last bit, with the Chernoff truncation bounds of each
    dense self-convolution (its ``common.compute_self_convolve_bounds``: 40 scipy ``logsumexp`` calls, ~80% of a
    composition) taken in one vectorised call. ~4× faster per composition (issue 23 item 3: the Compare panel's
    whole-number noise searches ~20 PLD compositions per row). Sparse pmfs small enough to stay sparse take the
    library's own path.
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pldmod

    def one(pmf):
        if isinstance(pmf, pld_pmf.SparsePLDPmf):
            if pmf.size ** count <= pld_pmf._MAX_PMF_SPARSE_SIZE:
                return pmf.self_compose(count, _TAIL_MASS)
            pmf = pmf.to_dense_pmf()
        if not isinstance(pmf, pld_pmf.DensePLDPmf):
            return pmf.self_compose(count, _TAIL_MASS)
        lower, probs = _self_convolve(pmf._probs, count, _TAIL_MASS)
        inf_prob = _TAIL_MASS - math.expm1(count * math.log1p(-pmf._infinity_mass))
        return pld_pmf.DensePLDPmf(pmf._discretization, pmf._lower_loss * count + lower, np.array(probs), inf_prob,
                                   pmf._pessimistic_estimate)

    remove = one(pld._pmf_remove)
    if pld._symmetric:
        return pldmod.PrivacyLossDistribution(remove)
    return pldmod.PrivacyLossDistribution(remove, one(pld._pmf_add))


def _self_convolve(probs: np.ndarray, count: int, tail: float) -> tuple[int, np.ndarray]:
    """dp-accounting's ``common.self_convolve`` (FFT to the power ``count``, truncated by Chernoff bounds)."""
    from scipy import fft

    lo, hi = _self_convolve_bounds(probs, count, tail)
    size = hi - lo + 1
    out = np.real(fft.ifft(fft.fft(probs, fft.next_fast_len(max(size, len(probs)))) ** count))
    return lo, np.roll(out, -lo)[:size]


def _self_convolve_bounds(probs: np.ndarray, count: int, tail: float) -> tuple[int, int]:
    """dp-accounting's ``common.compute_self_convolve_bounds`` (Chernoff bound at 40 orders, supplementary eq. 5 of
    Doroshenko et al. 2022), the 40 log-moment-generating functions in row blocks of one ``logsumexp`` (a row's sum
    is the same pairwise sum as the library's one-dimensional call)."""
    n = len(probs)
    upper, lower = (n - 1) * count, 0
    if tail == 0:
        return lower, upper
    orders = np.concatenate((np.arange(-20, 0), np.arange(1, 21))) / n
    grid = np.arange(n)
    rows = max(1, 2_000_000 // n)          # bounded memory: at most ~16 MB of exponents at a time
    log_mgfs = np.concatenate([special.logsumexp(orders[i:i + rows, None] * grid[None, :], b=probs[None, :], axis=1)
                               for i in range(0, len(orders), rows)])
    for order, log_mgf in zip(orders, log_mgfs):
        bound = (count * log_mgf + math.log(2 / tail)) / order
        if not math.isfinite(bound):
            continue
        if order > 0:
            upper = min(upper, math.ceil(bound))
        if order < 0:
            lower = max(lower, math.floor(bound))
    return lower, upper


def _merge_gaussians(rows: list[tuple[Mechanism, int]]) -> list[tuple[Mechanism, int]]:
    """All Gaussian rows as one Gaussian: c runs of multipliers mᵢ compose exactly to one run of
    m = (Σ cᵢ/mᵢ²)^(−1/2).

    The Gaussian's privacy loss is N(μ²/2, μ²) with μ = 1/m, and composing adds means and variances (Dong, Roth &
    Su 2022, Cor. 3.3: μ-GDP composes to √(Σμᵢ²)-GDP); one pessimistic discretization of the merged Gaussian is
    then still an upper bound, with less rounding than one per row (issue 23 item 3).
    """
    gauss = [(m, c) for m, c in rows if m.kind == "gaussian"]
    if len(gauss) == 1 and gauss[0][1] == 1:
        return rows
    if not gauss:
        return rows
    inv = math.fsum(c / (m.noise_multiplier * m.noise_multiplier) for m, c in gauss)
    merged = (gaussian(1.0 / math.sqrt(inv)), 1)
    out = [r for r in rows if r[0].kind != "gaussian"]
    out.insert(next(i for i, r in enumerate(rows) if r[0].kind == "gaussian"), merged)
    return out


def _gaussian_pld(m: float, vdi: float):
    """dp-accounting's ``from_gaussian_mechanism(m, pessimistic_estimate=True, value_discretization_interval=vdi)``
    (connect-the-dots), with its one per-point Python loop vectorized.

    Its own ``GaussianPrivacyLoss`` gives the bounds, the CDFs and ``create_pmf_pessimistic_connect_dots_fixed_gap``
    the pmf; only the inverse privacy loss x(ε) = −Δ/2 − εσ²/Δ (its ``_inverse_privacy_loss_without_subsampling_
    remove``, Δ = 1, no subsampling) is evaluated on the whole grid at once. Equal to the library's PLD to the last
    bit (tests/engine/accounting/test_accounting.py); 10–20× faster at resolution 1e-4 (issue 23 item 3).
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pldmod
    from dp_accounting.pld import privacy_loss_mechanism as plm

    pl = plm.GaussianPrivacyLoss(m, sensitivity=1, pessimistic_estimate=True, log_mass_truncation_bound=-50,
                                 sampling_prob=1.0, adjacency_type=plm.AdjacencyType.REMOVE)
    b = pl.connect_dots_bounds()
    lo, hi = math.floor(b.epsilon_lower / vdi), math.ceil(b.epsilon_upper / vdi)
    eps = np.arange(lo, hi + 1) * vdi
    x = -0.5 * 1 - eps * (m ** 2) / 1
    deltas = np.clip(pl.mu_upper_cdf(x) - np.exp(eps + pl.mu_lower_log_cdf(x)), 0, 1)
    if hi - lo + 1 <= pld_pmf._MAX_PMF_SPARSE_SIZE or np.any(np.diff(deltas) > pld_pmf._DELTA_DIFF_TOLERANCE):
        pmf = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(vdi, lo, hi, deltas)
    else:
        # the library's Algorithm 1 of Doroshenko et al. 2022 as it computes it, without its dict → list round trip
        # (a Python loop over every point); the same DensePLDPmf results
        deltas = np.minimum.accumulate(deltas)
        dd = np.diff(deltas)
        probs = np.zeros_like(deltas)
        probs[0] = 1 - deltas[0] + dd[0] / math.expm1(vdi)
        probs[1:-1] = (dd[1:] - dd[:-1] * math.exp(vdi)) / math.expm1(vdi)
        probs[-1] = dd[-1] / math.expm1(-vdi)
        probs = np.maximum(0.0, probs)
        pmf = pld_pmf.DensePLDPmf(vdi, lo, probs, deltas[-1], True)
    return pldmod.PrivacyLossDistribution(pmf)


def _tree_compose(plds: list, tick: Callable[[], None] | None = None):
    while len(plds) > 1:
        nxt = []
        for i in range(0, len(plds), 2):
            if i + 1 < len(plds):
                nxt.append(plds[i].compose(plds[i + 1]))
                if tick is not None:
                    tick()
            else:
                nxt.append(plds[i])
        plds = nxt
    return plds[0]


def _distinct_rows(ms: Sequence[Mechanism]) -> list[tuple[Mechanism, int]]:
    """Equal mechanisms merged (first-appearance order) with their total count."""
    counts: dict[Mechanism, int] = {}
    for m in ms:
        key = replace(m, count=1)
        counts[key] = counts.get(key, 0) + m.count
    return list(counts.items())


def pld_epsilon(mechanisms, *, delta, resolution=1e-4,
                progress: Callable[[float], None] | None = None) -> CompositionResult:
    """ε at δ from dp-accounting's privacy-loss distribution (pessimistic estimate).

    One PLD per distinct mechanism, ``self_compose``d to its total count, then a balanced binary tree of
    ``compose``; all Gaussian rows first merge exactly into one Gaussian (:func:`_merge_gaussians`), and each
    row's PLD comes from a bounded cache (:data:`PLD_CACHE`). ``progress`` (optional) receives the fraction
    done after each distinct mechanism (weighted by
    its count) and each tree merge, nondecreasing and ending at 1.0; it does not change the result.

    References: spec epsilon_calculator.md §4.2 rule "pld" [X-PLD: dp-accounting ``pld``].
    """
    ms = _as_list(mechanisms)
    k = sum(m.count for m in ms)
    delta = check_delta(delta, allow_zero=False)
    if any(m.kind == "zcdp" for m in ms):
        return _invalid("pld", delta, k, "zCDP rows have no privacy-loss distribution")
    if delta < PLD_MIN_DELTA:
        return _invalid("pld", delta, k, "δ below the numeric accountant's range (1e-12)")
    rows = _merge_gaussians(_distinct_rows(ms))
    # work units: one per expanded mechanism (self-composition) plus one per tree merge; the merged Gaussian
    # counts as the runs it stands for
    weights = [c if m.kind != "gaussian" else sum(g.count for g in ms if g.kind == "gaussian") for m, c in rows]
    total = k + len(rows) - 1
    done = 0

    def report(units: int) -> None:
        nonlocal done
        done += units
        if progress is not None:
            progress(min(1.0, done / total))

    plds = []
    for (m, count), w in zip(rows, weights):
        plds.append(_row_pld(m, count, resolution))
        report(w)
    eps = float(_tree_compose(plds, lambda: report(1)).get_epsilon_for_delta(delta))
    if progress is not None:
        progress(1.0)
    if not math.isfinite(eps):
        return _invalid("pld", delta, k, "truncated tails: PLD returned ∞ at this δ")
    return CompositionResult("pld", max(eps, 0.0), delta, k, True, "", "external")


def pld_profile(mechanisms, deltas, *, resolution=1e-3) -> pd.DataFrame:
    """The privacy profile ε(δ) of a list at several δ from ONE composed PLD (columns delta, epsilon).

    The same PLD as ``pld_epsilon`` (pessimistic estimate), composed once and read at each δ, instead of one
    composition per δ (40 of them made "use the Composition tab's PLD profile" take seconds). δ below 1e-12
    and non-finite ε are left out.
    """
    ms = _as_list(mechanisms)
    if any(m.kind == "zcdp" for m in ms):
        raise ValueError("zCDP rows have no privacy-loss distribution")
    plds = [_row_pld(m, count, resolution) for m, count in _merge_gaussians(_distinct_rows(ms))]
    pld = _tree_compose(plds, lambda: None)
    rows = []
    for d in deltas:
        d = float(d)
        if PLD_MIN_DELTA <= d < 1.0:
            e = float(pld.get_epsilon_for_delta(d))
            if math.isfinite(e):
                rows.append((d, max(e, 0.0)))
    return pd.DataFrame(rows, columns=["delta", "epsilon"])


# --------------------------------------------------------------------------- dispatcher
def compose(mechanisms, *, delta, rule: Rule, pld_resolution=1e-4,
            progress: Callable[[float], None] | None = None) -> CompositionResult:
    """ε at the target δ of composing a list of mechanisms under one rule (spec §4.2); never raises for n/a.

    Under the (ε, δ) rules each Gaussian/discrete-Gaussian/zCDP run is charged δᵢ = δ/(2K_δ). ``progress``
    is passed to ``pld_epsilon`` for rule "pld"; the other rules report 1.0 when done. δ : float, in (0, 1)
    (any positive δ: the computations are in log space; the pages bound it below at 1e-300).
    """
    ms = _as_list(mechanisms)
    delta = check_delta(delta, allow_zero=False)
    k = sum(m.count for m in ms)
    if rule not in ALL_RULES:
        raise ValueError(f"rule must be one of {ALL_RULES}, got {rule!r}")
    if rule == "pld":
        return pld_epsilon(ms, delta=delta, resolution=pld_resolution, progress=progress)
    if progress is not None:
        res = compose(ms, delta=delta, rule=rule)
        progress(1.0)
        return res
    if rule in ("zcdp", "rdp"):
        if any(m.kind == "approx_dp" for m in ms):
            return _invalid(rule, delta, k, "approx_dp rows have no zCDP/RDP guarantee")
        if rule == "zcdp":
            rho = sum_up(round_up(m.count * mechanism_rho(m), 0.0) for m in ms)
            # ρ underflows to 0 for ε ≲ 1e-154: the exact ε is then 0 as well
            eps_z = (zcdp_to_dp(rho, delta) if math.isfinite(rho) else math.inf) if rho > 0 else 0.0
            return CompositionResult("zcdp", eps_z, delta, k, True, "", "thesis-corrected")
        curve = np.sum([rdp_curve(m) for m in ms], axis=0)
        conv = rdp_to_dp(curve, delta=delta)
        return CompositionResult("rdp", conv.epsilon, delta, k, True, "", "external", conv.order)
    # A Gaussian whose δ(0) is already ≤ δᵢ has εᵢ = 0; the rules below want εᵢ > 0, so such a row is charged
    # the smallest positive float (a larger ε is still a valid bound). One with εᵢ = ∞ makes the bound ∞.
    pairs = [(e if e > 0 else 5e-324, d, c) for e, d, c in _per_row_pairs(ms, delta)]
    if not all(math.isfinite(e) for e, _, _ in pairs):
        return _invalid(rule, delta, k, "a mechanism has infinite ε at its δᵢ")
    if rule in ("advanced_drv", "kov_analytic"):
        distinct = {(round(e, 15), d) for e, d, _ in pairs}
        if len(distinct) > 1:
            return _invalid(rule, delta, k, "homogeneous lists only (all mechanisms with the same ε, δ)")
        e0, d0, _ = pairs[0]
        fn = advanced_composition_drv if rule == "advanced_drv" else kov_analytic_composition
        return fn(e0, k=k, delta=delta, delta_each=d0)
    eps = np.repeat([p[0] for p in pairs], [p[2] for p in pairs])
    dls = np.repeat([p[1] for p in pairs], [p[2] for p in pairs])
    if rule == "basic":
        r = basic_composition(eps, dls)
        if r.delta > delta * (1 + 1e-12):
            return _invalid("basic", delta, k, "Σδᵢ exceeds the target δ")
        return replace(r, delta=delta)
    if rule == "advanced":
        return advanced_composition(eps, dls, delta=delta)
    return kov_optimal_composition(eps, dls, delta=delta)


def composition_table(mechanisms, *, delta, rules=ALL_RULES, pld_resolution=1e-4,
                      progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """One row per rule: rule, epsilon, delta, valid, note, ratio_to_basic.

    ``progress`` (optional) follows the PLD composition, the only slow rule; it ends at 1.0.
    """
    ms = _as_list(mechanisms)
    res = [compose(ms, delta=delta, rule=r, pld_resolution=pld_resolution,
                   progress=progress if r == "pld" else None) for r in rules]
    if progress is not None:
        progress(1.0)
    basic = compose(ms, delta=delta, rule="basic").epsilon
    return pd.DataFrame({
        "rule": [r.rule for r in res], "epsilon": [r.epsilon for r in res], "delta": [r.delta for r in res],
        "valid": [r.valid for r in res], "note": [r.note for r in res],
        "ratio_to_basic": [r.epsilon / basic if r.valid and basic > 0 else math.nan for r in res],
    })


def _prefix(ms: Sequence[Mechanism], k: int) -> list[Mechanism]:
    out, left = [], k
    for m in ms:
        if left <= 0:
            break
        c = min(m.count, left)
        out.append(replace(m, count=c))
        left -= c
    return out


def default_ks(kmax: int, points: int = 60) -> np.ndarray:
    """Log-spaced distinct integers in [1, kmax]."""
    return np.unique(np.round(np.geomspace(1, max(1, int(kmax)), points)).astype(int))


def composition_curve(mechanisms, *, delta, ks=None, rules=ALL_RULES, pld_points=12, pld_resolution=1e-3,
                      progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """ε vs k for each rule: k, rule, epsilon, valid.

    One row: the row repeated k times. A list: prefixes of the expanded list. PLD is evaluated at no more
    than ``pld_points`` of the ks (resolution 1e-3 by default). ``progress`` (optional) follows the PLD
    evaluations, weighted by k, nondecreasing and ending at 1.0.
    """
    ms = _as_list(mechanisms)
    total = sum(m.count for m in ms)
    single = len(ms) == 1
    if ks is None:
        ks = default_ks(ms[0].count if single else total)
    ks = np.asarray(sorted({int(k) for k in ks if int(k) >= 1}), dtype=int)
    if not single:
        ks = ks[ks <= total]
    rows = []
    pld_ks = set(ks[np.unique(np.round(np.linspace(0, len(ks) - 1, min(pld_points, len(ks)))).astype(int))].tolist())
    # the PLD work grows with k, so each PLD point's share of the bar is its k
    weight = float(sum(pld_ks)) if "pld" in rules and pld_ks else 0.0
    before = 0.0
    for k in ks:
        sub = [replace(ms[0], count=int(k))] if single else _prefix(ms, int(k))
        for r in rules:
            if r == "pld" and k not in pld_ks:
                continue
            inner = None
            if r == "pld" and progress is not None and weight > 0:
                inner = lambda f, b=before, kk=int(k): progress(min(1.0, (b + f * kk) / weight))  # noqa: E731
            res = compose(sub, delta=delta, rule=r, pld_resolution=pld_resolution, progress=inner)
            if r == "pld":
                before += int(k)
            rows.append((int(k), r, res.epsilon, res.valid))
    if progress is not None:
        progress(1.0)
    return pd.DataFrame(rows, columns=["k", "rule", "epsilon", "valid"])


def per_mechanism_epsilon(rule: Rule, *, epsilon, delta, k) -> float:
    """Largest ε₀ whose k-fold composition of Laplace(ε₀) is ≤ ε under the rule (bisection in ln ε₀)."""
    eps, k = check_epsilon(epsilon), check_size(k, name="k")
    f = lambda e0: compose([laplace(e0, count=k)], delta=delta, rule=rule).epsilon  # noqa: E731
    # zCDP charges k·ε₀²/2, so for ε ≫ k the usual start ε/(1000k) already overspends: move it down (by 1000× a
    # step, as 1/ε₀ grows) until it fits (it used to answer 0 there, e.g. ε = 10⁷, k = 1, where ε₀ ≈ 4,467 fits)
    inv = grow_until(lambda t: f(1.0 / t) <= eps, k * 1e3 / eps, factor=1e3, cap=1e300)
    if math.isinf(inv):
        return 0.0
    lo, hi = 1.0 / inv, eps * 2.0
    if f(hi) <= eps:
        return hi
    # Brent's method in ln ε₀ (each evaluation is a composition: about 10 where bisection to 1e-10 took 37),
    # then down to the side that fits the budget (bounded: 60 steps)
    x = optimize.brentq(lambda t: f(math.exp(t)) - eps, math.log(lo), math.log(hi), xtol=2.5e-11, rtol=1e-12,
                        maxiter=200)
    step = 2.5e-11
    for _ in range(60):
        if f(math.exp(x)) <= eps:
            return max(math.exp(x), lo)
        x -= step
        step *= 2.0
    return lo


def max_mechanisms(rule: Rule, *, epsilon_each, epsilon, delta) -> int:
    """Largest k such that k Laplace(ε₀) mechanisms compose to ≤ ε under the rule (0 if even one exceeds)."""
    e0, eps = check_epsilon(epsilon_each, name="epsilon_each"), check_epsilon(epsilon)
    f = lambda k: compose([laplace(e0, count=k)], delta=delta, rule=rule).epsilon <= eps  # noqa: E731
    return largest_true(f, cap=10**9)


# --------------------------------------------------------------------------- adaptive composition (Ch. 5)
def filter_constant_optimal() -> float:
    """8c*, where c* solves c = 2 + ln(1 + c) [derived]: the constant the proof of [T] Thm 5.5.1 supports."""
    c = optimize.brentq(lambda c: c - 2.0 - math.log1p(c), 1.0, 10.0, xtol=1e-15)
    return 8.0 * c


def _filter_x(epsilon_g: float, delta_g: float, c: float = FILTER_CONSTANT) -> float:
    """x = ε_g²/(c·ln(1/δ_g)) of [T] eq. 5.12."""
    return epsilon_g * epsilon_g / (c * math.log(1.0 / delta_g))


def _tail(e):
    """εᵢ(e^{εᵢ} − 1)/2, the first sum of [T] eq. 5.12 (∞ past ε ≈ 709); elementwise."""
    with np.errstate(over="ignore", invalid="ignore"):
        return e * np.expm1(e) / 2.0


def _odometer_log(lnn: float, delta_g: float) -> float:
    """L = ln(48e) + 2 ln(ln(n)/δ_g) of [T] eq. 5.17 and Thm 5.7.6."""
    return math.log(48.0 * math.e) + 2.0 * math.log(lnn / delta_g)


def _k_bound(sum_tail: np.ndarray, S: np.ndarray, x: float, delta_g: float) -> np.ndarray:
    """K of [T] eq. 5.12 from its sums, rounded up (issue 36 item 6: a filter must not CONT on a rounding)."""
    with np.errstate(over="ignore", invalid="ignore"):
        root = np.sqrt(2.0 * (S + x) * (1.0 + 0.5 * np.log(S / x + 1.0)) * math.log(2.0 / delta_g))
        return round_up(sum_tail + root, margin(sum_tail, root, ops=16))


def filter_bound(epsilons, *, epsilon_g, delta_g, c=FILTER_CONSTANT) -> float:
    """K of [T] eq. 5.12 (advanced privacy filter, Thm 5.5.1): Σεᵢ(e^{εᵢ}−1)/2 + √(2(S+x)(1+½ln(S/x+1))ln(2/δ_g)).

    x = ε_g²/(c·ln(1/δ_g)); c = 28.04 is the printed constant.
    """
    e = _eps_list(epsilons)
    eg, dg, c = check_epsilon(epsilon_g, name="epsilon_g"), _delta_g(delta_g), check_positive(c, name="c")
    x = _filter_x(eg, dg, c)
    tail = math.fsum(_tail(e).tolist())
    S = math.fsum((e * e).tolist())
    v = float(_k_bound(np.array([tail]), np.array([S]), x, dg)[0])
    return v if math.isfinite(v) else math.inf


class _RunningSum:
    """An exact running sum of floats (Shewchuk's partials, as math.fsum keeps them); ``value`` is correctly rounded.

    A filter adds one request at a time: a float running sum drifts by up to k roundings after k requests, which
    put the shown K below the exact one after 2,000 requests of ε₀ = 0.001 (issue 36).
    """

    def __init__(self, partials=()):
        self.partials = list(partials)

    def plus(self, x: float) -> "_RunningSum":
        if not math.isfinite(x):
            return _RunningSum([x])
        if self.partials and not math.isfinite(self.partials[0]):
            return _RunningSum(self.partials)
        out = []
        for y in self.partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                out.append(lo)
            x = hi
        out.append(x)
        return _RunningSum(out)

    @property
    def value(self) -> float:
        return math.fsum(self.partials)


class PrivacyFilter:
    """A privacy filter ([T] Alg. 4): asked before each mechanism runs; HALT (False) means "do not run".

    Rules: "basic" ([T] Thm 5.3.7, δ′_g = δ_g), "advanced" ([T] Thm 5.5.1, eq. 5.12) and "zcdp"
    ([derived] corollary of Thms 5.7.5–5.7.6: HALT if Σρᵢ > ρ_g with ρ_g = zcdp_rho_for_epsilon(ε_g, δ_g,
    "standard"); a pure request is charged εᵢ²/2). Once halted it stays halted.
    """

    def __init__(self, *, epsilon_g, delta_g, rule: Literal["basic", "advanced", "zcdp"], c=FILTER_CONSTANT):
        self.epsilon_g = check_epsilon(epsilon_g, name="epsilon_g")
        self.delta_g = _delta_g(delta_g)
        if rule not in ("basic", "advanced", "zcdp"):
            raise ValueError(f"rule must be basic, advanced or zcdp; got {rule!r}")
        self.rule = rule
        self.c = c
        self.rho_g = zcdp_rho_for_epsilon(self.epsilon_g, self.delta_g, method="standard") if rule == "zcdp" else None
        self._x = _filter_x(self.epsilon_g, self.delta_g, c)
        self._sums = tuple(_RunningSum() for _ in range(5))     # ε, δ, ε², tail, ρ: exact running sums
        self.halted = False
        self.history: list[float] = []

    sum_eps = property(lambda self: self._sums[0].value)
    sum_delta = property(lambda self: self._sums[1].value)
    sum_sq = property(lambda self: self._sums[2].value)
    sum_tail = property(lambda self: self._sums[3].value)
    sum_rho = property(lambda self: sum_up(self._sums[4].partials))

    def _bound(self, se, sd, sq, st, sr) -> float:
        if self.rule == "basic":
            return se
        if self.rule == "advanced":
            return float(_k_bound(np.array([st]), np.array([sq]), self._x, self.delta_g)[0])
        if not 0.0 < sr < math.inf:
            return sr  # 0 before any request; ∞ once ρ overflows
        return zcdp_to_dp(sr, self.delta_g, method="standard")

    def request(self, *, epsilon=None, delta=0.0, rho=None) -> bool:
        """Ask to run one mechanism; True = CONT (and the request is recorded), False = HALT."""
        if self.halted:
            return False
        if epsilon is None and rho is None:
            raise ValueError("give epsilon (and optionally delta) or rho")
        e = 0.0 if epsilon is None else check_epsilon(epsilon)
        d = check_delta(delta)
        r = float(rho) if rho is not None else half_square(e, 1.0)
        if self.rule == "zcdp" and rho is not None:
            check_positive(rho, name="rho")
        new = tuple(acc.plus(v) for acc, v in zip(self._sums, (
            e, d, e * e, float(_tail(np.float64(e))) if e < 700 else math.inf, r)))
        se, sd, sq, st = (acc.value for acc in new[:4])
        sr = sum_up(new[4].partials)
        if self.rule == "basic":
            # relative slack 1e-12: a budget spent exactly (0.001 × 1000) must not HALT through rounding
            halt = sd > self.delta_g * (1 + 1e-12) or se > self.epsilon_g * (1 + 1e-12)
        elif self.rule == "advanced":
            halt = sd > self.delta_g / 2.0 or self._bound(se, sd, sq, st, sr) > self.epsilon_g
        else:
            halt = sr > self.rho_g * (1 + 1e-12)
        if halt:
            self.halted = True
            return False
        self._sums = new
        self.history.append(self._bound(se, sd, sq, st, sr))
        return True


@dataclass(frozen=True)
class FilterTrace:
    """Decisions of a filter over a sequence; ``halt_round`` is 1-based (None if never halted)."""

    rule: str
    decisions: tuple[bool, ...]
    halt_round: int | None
    bound: tuple[float, ...]


def filter_trace(epsilons, deltas=None, *, epsilon_g, delta_g, rule) -> FilterTrace:
    """Run a ``PrivacyFilter`` over a whole sequence of requests ([T] Alg. 4)."""
    e = _eps_list(epsilons)
    d = _delta_list(deltas, e.size)
    f = PrivacyFilter(epsilon_g=epsilon_g, delta_g=delta_g, rule=rule)
    dec = []
    bound = []
    halt = None
    for i, (ei, di) in enumerate(zip(e, d)):
        ok = f.request(epsilon=float(ei), delta=float(di))
        dec.append(ok)
        if not ok and halt is None:
            halt = i + 1
        bound.append(f.history[-1] if f.history else 0.0)
    return FilterTrace(rule, tuple(dec), halt, tuple(bound))


def filter_rounds(epsilon_each, *, epsilon_g, delta_g, rule="advanced") -> int:
    """Number of constant ε₀ requests a filter answers before it halts."""
    e0, eg = check_epsilon(epsilon_each, name="epsilon_each"), check_epsilon(epsilon_g, name="epsilon_g")
    dg = _delta_g(delta_g)
    if rule == "basic":
        k = int(math.floor(eg / e0 * (1 + 1e-12)))
        return k if k * e0 <= eg * (1 + 1e-12) else k - 1
    if rule == "zcdp":
        rho_g = zcdp_rho_for_epsilon(eg, dg, method="standard")
        return int(math.floor(rho_g / half_square(e0, 1.0) * (1 + 1e-12)))
    if rule != "advanced":
        raise ValueError(f"rule must be basic, advanced or zcdp; got {rule!r}")
    x = _filter_x(eg, dg)
    tail0 = float(_tail(np.float64(e0))) if e0 < 700 else math.inf

    def ok(k: int) -> bool:
        return float(_k_bound(np.array([k * tail0]), np.array([k * e0 * e0]), x, dg)[0]) <= eg

    return largest_true(ok)


def odometer_basic(epsilons, deltas=None, *, delta_prime) -> float:
    """Basic privacy odometer ([T] Thm 5.3.7): Σεᵢ, or ∞ if Σδᵢ > δ′."""
    e = _eps_list(epsilons)
    d = _delta_list(deltas, e.size)
    if _exceeds(d, float(delta_prime)):
        return math.inf
    return sum_up(e.tolist())


def odometer_fixed_x(epsilons, deltas=None, *, delta_g, x) -> float:
    """Odometer with a data-independent x ([T] Lemma 5.6.4): K of eq. 5.12 with that x; ∞ if Σδᵢ > δ_g/2."""
    e = _eps_list(epsilons)
    d = _delta_list(deltas, e.size)
    dg, x = _delta_g(delta_g), check_positive(x, name="x")
    if _exceeds(d, dg / 2.0):
        return math.inf
    tail = math.fsum(_tail(e).tolist())
    v = float(_k_bound(np.array([tail]), np.array([math.fsum((e * e).tolist())]), x, dg)[0])
    return v if math.isfinite(v) else math.inf


def _granularity(n, gamma) -> tuple[float, float, float]:
    """(g, ln n or ½ln(1/γ), log₂ n or ½log₂(1/γ))."""
    if (n is None) == (gamma is None):
        raise ValueError("give exactly one of n and gamma")
    if n is not None:
        # n ≥ 6: the proof of Thm 5.6.5 needs it
        nn = check_positive(n, name="n")
        if nn < 6:
            raise ValidationError(f"n must be a number ≥ 6 (the proof of Thm 5.6.5 needs it); got {n!r}")
        return 1.0 / (nn * nn), math.log(nn), math.log2(nn)
    g = check_delta(gamma, name="gamma", allow_zero=False)
    return g, 0.5 * math.log(1.0 / g), 0.5 * math.log2(1.0 / g)


def _odometer_advanced_vec(tail: np.ndarray, S: np.ndarray, dg: float, g: float, lnn: float,
                           log2n: float) -> np.ndarray:
    L = _odometer_log(lnn, dg)
    inside = (S >= g * (1 - 1e-12)) & (S <= 1.0 + 1e-12)
    with np.errstate(over="ignore", invalid="ignore"):
        r17 = np.sqrt(2.0 * S * L)
        r18 = np.sqrt(2.0 * (g + S) * (1.0 + 0.5 * np.log1p(S / g)) * math.log(4.0 * log2n / dg))
        # rounded up (issue 36 item 6)
        b17 = round_up(tail + r17, margin(tail, r17, ops=16))
        b18 = round_up(tail + r18, margin(tail, r18, ops=16))
    out = np.where(inside, b17, b18)
    return np.where(np.isfinite(out), out, np.inf)


def odometer_advanced(epsilons, deltas=None, *, delta_g, n=None, gamma=None) -> float:
    """Advanced privacy odometer ([T] Thm 5.6.5, eqs 5.17/5.18); ∞ if Σδᵢ > δ_g/2.

    Granularity γ may replace 1/n² (ln n → ½ln(1/γ); in 5.18 log₂ n → ½log₂(1/γ) [derived]).
    Erratum (spec §4.9): n ≥ 6 is required; the stray Σ in the proof is ignored; the jump at S = 1 is kept.
    """
    e = _eps_list(epsilons)
    d = _delta_list(deltas, e.size)
    dg = _delta_g(delta_g)
    g, lnn, log2n = _granularity(n, gamma)
    if _exceeds(d, dg / 2.0):
        return math.inf
    tail = math.fsum(_tail(e).tolist())
    S = math.fsum((e * e).tolist())
    return float(_odometer_advanced_vec(np.array([tail]), np.array([S]), dg, g, lnn, log2n)[0])


def _zcdp_odometer(R, L):
    """R + 2√(R·L) of [T] Thm 5.7.6; elementwise, rounded up (issue 36 item 6)."""
    with np.errstate(over="ignore", invalid="ignore"):
        root = 2.0 * np.sqrt(R * L)
        return round_up(R + root, margin(R, root))


def odometer_zcdp(rhos, *, delta_g, n=None, gamma=None) -> float:
    """zCDP odometer ([T] Thms 5.7.5–5.7.6, general ρᵢ [derived]): R + 2√(R·L) when 2R ∈ [1/n², 1], else NaN.

    L = ln(48e) + 2ln(ln(n)/δ_g). Erratum (spec §4.9): "COMP" means V_COMP = 2R; "≤ λ²ρ" means ≤ e^{λ²ρ}.
    """
    r = _eps_list(rhos, "rhos")
    dg = _delta_g(delta_g)
    g, lnn, _ = _granularity(n, gamma)
    R = sum_up(r.tolist())
    if not (g * (1 - 1e-12) <= 2.0 * R <= 1.0 + 1e-12):
        return math.nan
    return float(_zcdp_odometer(R, _odometer_log(lnn, dg)))


def filter_zcdp_epsilon(rho_g, *, delta) -> float:
    """ε guaranteed by the zCDP filter with budget ρ_g: ρ_g + 2√(ρ_g ln(1/δ)) [derived]."""
    return zcdp_to_dp(rho_g, delta, method="standard")


def realized_advanced_heuristic(epsilons, *, delta) -> float:
    """Advanced composition applied to the realised εᵢ. INVALID as a bound ([T] Thm 5.6.1); plots only."""
    e = _eps_list(epsilons)
    d = check_delta(delta, allow_zero=False)
    return float(advanced_bound(math.fsum((e * np.tanh(e / 2.0)).tolist()), math.fsum((e * e).tolist()), d))


ADAPTIVE_LABELS = {
    "basic": "Basic (Σεᵢ)", "filter_advanced": "Advanced filter K (Thm 5.5.1)",
    "odometer_advanced": "Odometer (Thm 5.6.5)", "odometer_fixed_x": "Odometer, fixed x = ε₁² (Lemma 5.6.4)",
    "odometer_zcdp": "zCDP odometer (Thm 5.7.6)", "heuristic": "Invalid heuristic (Thm 5.6.1)",
}


def adaptive_trace(epsilons, *, epsilon_g, delta_g, n, rhos=None) -> pd.DataFrame:
    """Running bounds per round: round, rule, bound, halted (vectorised over prefixes).

    Rules: basic, filter_advanced (K of eq. 5.12), odometer_advanced (Thm 5.6.5), odometer_fixed_x
    (Lemma 5.6.4, x = ε₁²), odometer_zcdp (ρᵢ = εᵢ²/2 unless given), heuristic (INVALID, Thm 5.6.1).
    ``halted`` marks rounds at or after the filter's HALT for basic and filter_advanced.
    """
    e = _eps_list(epsilons)
    eg, dg = check_epsilon(epsilon_g, name="epsilon_g"), _delta_g(delta_g)
    r = half_square(e, 1.0) if rhos is None else _eps_list(rhos, "rhos")
    if r.size != e.size:
        raise ValueError("rhos and epsilons must have the same length")
    g, lnn, log2n = _granularity(n, None)
    with np.errstate(over="ignore", invalid="ignore"):
        tail = np.cumsum(_tail(e))
        S = np.cumsum(e * e)
        basic = np.cumsum(e)
        x = _filter_x(eg, dg)
        K = _k_bound(tail, S, x, dg)
        odo = _odometer_advanced_vec(tail, S, dg, g, lnn, log2n)
        fx = _k_bound(tail, S, e[0] ** 2, dg)
        R = np.cumsum(r)
        zc = np.where((2 * R >= g * (1 - 1e-12)) & (2 * R <= 1 + 1e-12),
                      _zcdp_odometer(R, _odometer_log(lnn, dg)), np.nan)
        heur = advanced_bound(np.cumsum(e * np.tanh(e / 2.0)), S, dg)
    rounds = np.arange(1, e.size + 1)
    halted_basic = np.cumsum(basic > eg * (1 + 1e-12)) > 0
    halted_k = np.cumsum(K > eg) > 0
    parts = []
    for name, vals, halted in (("basic", basic, halted_basic), ("filter_advanced", K, halted_k),
                               ("odometer_advanced", odo, np.zeros_like(halted_k)),
                               ("odometer_fixed_x", fx, np.zeros_like(halted_k)),
                               ("odometer_zcdp", zc, np.zeros_like(halted_k)),
                               ("heuristic", heur, np.zeros_like(halted_k))):
        parts.append(pd.DataFrame({"round": rounds, "rule": name, "bound": np.where(np.isinf(vals), np.inf, vals),
                                   "halted": halted.astype(bool)}))
    return pd.concat(parts, ignore_index=True)
