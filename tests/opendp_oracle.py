"""OpenDP as an independent oracle for zCDP → (ε, δ) conversions (its ``make_zCDP_to_approxDP``, whose privacy
profile is Canonne–Kamath–Steinke 2020 Prop. 12 / Cor. 13, implemented in Rust by OpenDP: ``cdp_epsilon`` and
``cdp_delta``)."""

from __future__ import annotations

import functools

import opendp.prelude as dp

dp.enable_features("contrib", "honest-but-curious")


@functools.lru_cache(maxsize=4096)
def _profile(rho: float):
    # a measurement whose privacy map is the constant ρ: its zCDP → approx-DP profile is the conversion itself
    m = dp.m.make_user_measurement(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                                   dp.zero_concentrated_divergence(), function=lambda x: x,
                                   privacy_map=lambda d_in: rho)
    return dp.c.make_zCDP_to_approxDP(m).map(1.0)


def cdp_epsilon(rho: float, delta: float) -> float:
    """OpenDP's ε of ρ-zCDP at δ."""
    return float(_profile(float(rho)).epsilon(float(delta)))


def cdp_delta(rho: float, epsilon: float) -> float:
    """OpenDP's δ of ρ-zCDP at ε."""
    return float(_profile(float(rho)).delta(float(epsilon)))
