"""The coherence explorer's theory and Section 7 numbers, computed once for the page's cards and its "Copy as code"
scripts (issue 15 item 2: one engine result shared by card and script).

Source: seeds/000_f379639b976c7ffb.txt, Theorems 7, 8, 9 and 11 (§6.2, §7); specs/coherence_explorer.md §3.5
(largest certified ε, smallest certified α), §7.4 (theory panel) and E1, E5, E9–E11 (errata, applied in
``dpdash.accounting.maxinfo`` and ``dpdash.coherence.core``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpdash.coherence import core as co
from dpdash.accounting import maxinfo as mi

__all__ = ["SWEEP_EPSILONS", "FLOOR_REPS", "TheoryNumbers", "collection", "theory_numbers", "section7_result"]

#: The ε of the "W1 vs ε" tab; ∞ is the exact histogram (not DP).
SWEEP_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0, math.inf)
#: Splits behind the "random splitting alone" level (``dpdash.coherence.core.noise_floor``) the runs and sweep tabs
#: show.
FLOOR_REPS = 200
#: Smallest α the theorems are evaluated at (they need α > 0; the page's α slider starts at 0).
ALPHA_FLOOR = 0.01


def collection(group_sizes: Mapping[str, int], gamma: float) -> list[str]:
    """The kept groups 𝒞*: at least ``max(γ, 2)`` members (Def. 3; two members are needed for a W1)."""
    return [nm for nm, s in group_sizes.items() if s >= max(float(gamma), 2)]


@dataclass(frozen=True)
class TheoryNumbers:
    """Every number the theory tab shows for one setting (NaN where a theorem certifies nothing)."""

    epsilon: float
    n: int
    alpha: float  # the α the theorems use: max(α, 0.01)
    beta: float
    kept: tuple[str, ...]  # 𝒞*, in the page's group order
    sizes: tuple[int, ...]  # members of each kept group
    n_groups: int  # |𝒞*| for the theorems (at least 1)
    thm7: mi.SizeConstraint
    meets: int  # kept groups with at least Theorem 7's γ members
    smallest: str | None
    eps_pure: float  # largest ε Theorem 7 certifies for the smallest kept group
    eps_approx: float  # same for Theorem 8
    delta_for_approx: float  # the δ Theorem 8 then needs
    thm8_gamma: float  # NaN when ε > 0.5 (Theorem 8 needs ε ≤ 0.5)
    thm9_gamma: float
    alpha_min: tuple[float, ...]  # smallest α Theorem 7 certifies for each kept group at ε


def theory_numbers(*, epsilon: float, n: int, alpha: float, beta: float, group_sizes: Mapping[str, int],
                   gamma: float) -> TheoryNumbers:
    """Theorems 7, 8 and 9 for the page's data: γ required, groups meeting it, the largest ε certifying the
    smallest kept group, and the smallest α certified for each (``dpdash.accounting.maxinfo``; spec §3.5, §7.4)."""
    kept = collection(group_sizes, gamma)
    g = max(1, len(kept))
    a = max(float(alpha), ALPHA_FLOOR)
    sc = mi.gamma_pure(epsilon, n, a, beta, g)
    sizes = tuple(int(group_sizes[nm]) for nm in kept)
    smallest = min(kept, key=lambda nm: group_sizes[nm], default=None)
    e_p = e_a = d_a = math.nan
    if smallest is not None:
        m = min(group_sizes[smallest], n)
        e_p = mi.eps_max(n, a, beta, g, m)
        e_a = mi.eps_max(n, a, beta, g, m, kind="approx")
        if math.isfinite(e_a):
            d_a = mi.delta_max_approx(e_a, n, beta, g)
    thm8 = mi.gamma_approx(epsilon, n, a, beta, g).gamma if epsilon <= mi.APPROX_EPSILON_MAX else math.nan
    return TheoryNumbers(
        epsilon=float(epsilon), n=int(n), alpha=a, beta=float(beta), kept=tuple(kept), sizes=sizes, n_groups=g,
        thm7=sc, meets=sum(s >= sc.gamma for s in sizes), smallest=smallest, eps_pure=e_p, eps_approx=e_a,
        delta_for_approx=d_a, thm8_gamma=thm8, thm9_gamma=mi.gamma_single_column(n, a, beta, g),
        alpha_min=tuple(mi.alpha_min(epsilon, n, beta, g, s) for s in sizes))


def section7_result(df: pd.DataFrame, *, label: str, column: str, one_value: str, groups: Sequence[co.GroupSpec],
                    rng: int, beta: float, curator: str, reps: int = 1000) -> co.SingleColumnResult:
    """The Section 7 demonstration on the labelled rows: ``column == one_value`` released as one bit, W1 of the
    one-bit predictor over ``reps`` random splits for every group with at least 2 members (Theorem 9 for the
    column, Theorem 11 for the count; ``dpdash.coherence.core.single_column_experiment``)."""
    d = df[df[label].notna()].reset_index(drop=True)
    col = d[column]
    bits = (col.to_numpy(dtype=float, na_value=np.nan) == float(one_value)) \
        if pd.api.types.is_numeric_dtype(col) else (col.astype(str) == one_value).to_numpy()
    masks = {k: v for k, v in co.group_masks(d, groups).items() if v.sum() >= 2}
    return co.single_column_experiment(bits, masks, reps=reps, rng=rng, beta=beta, curator=curator)
