"""Plain logic of the partially private views (no Streamlit): job units, cache keys, parsing and tables.

The partially private release (``ui.views.partially_private``) runs its WEM draws as units
``(month t, ε, method, α, reps)``: this module builds the unit lists of its three buttons, the session key under
which a computed unit is remembered, the release tables it shows and downloads, and the parser of the
Algorithm 1 toy's typed vectors. Source: Seeman, Slavković & Reimherr (2022), *A Formal Privacy Framework for
Partially Private Data* (``shared/seeds/001_cddb039cfb564267.txt``), §5; spec ``shared/specs/partially_private.md``.
Tested in ``tests/ui/test_ppd_jobs.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpdash.stratify import partial_release as release

#: The Algorithm 1 toy has three cells; a typed vector longer than this is refused before it is split.
TOY_CELLS = 3
MAX_VECTOR_CHARS = 200

SWEEP_EPS = (0.5, 1.0, 2.0, 5.0)
SWEEP_ALPHA = (1e-3, 1e-2, 0.1, 1.0, 10.0)
WEM_METHODS = ("wem_naive", "wem_congenial", "wem_prior")

Unit = tuple  # (t, epsilon, method, alpha, reps)


def method_alpha(method: str, alpha: float) -> float:
    """The prior strength α a method uses: α for WEM-prior, NaN (not applicable) for every other method."""
    return float(alpha) if method == "wem_prior" else float("nan")


def public_tuple(public: release.PublicInfo) -> tuple:
    """A hashable cache-key form of the public information; ``release.PublicInfo(*t)`` rebuilds it.

    >>> t = public_tuple(release.PublicInfo(state_total=True, cases_ge_deaths=False, nonnegative=True,
    ...                                 previous_month_prior=False, exact_share=0.25))
    >>> t
    (True, False, True, False, 0.25)
    >>> release.PublicInfo(*t).exact_share
    0.25
    """
    return (public.state_total, public.cases_ge_deaths, public.nonnegative, public.previous_month_prior,
            public.exact_share)


def unit_key(panel_key: str, unit: Unit, cfg: dict) -> tuple:
    """The session key of one computed unit: the unit plus every setting its draws depend on.

    A NaN α (a method without a prior) is keyed as ``None``: NaN never equals itself, and since Python 3.10 each
    NaN object hashes by identity, so a unit computed once would not be found again.
    """
    t, e, m, a, reps = unit
    a = None if isinstance(a, float) and math.isnan(a) else a
    return (panel_key, t, e, m, a, reps, cfg["sensitivity"], cfg["kappa"], cfg["public"], cfg["sweeps"],
            cfg["pp_sensitivity"], cfg["seed"])


def units_at_epsilon(wem: list[str], *, t: int, epsilon: float, alpha: float, reps: int,
                     months: int = 0) -> list[Unit]:
    """"Run at this ε": every selected WEM at month ``t`` with all replicates, plus one draw per month
    1 … ``months`` − 1 for the time series (``months`` = months in the panel, month 0 being public; 0: no series).
    """
    units = [(t, float(epsilon), m, method_alpha(m, alpha), int(reps)) for m in wem]
    units += [(tt, float(epsilon), m, method_alpha(m, alpha), 1) for m in wem for tt in range(1, months)]
    return units


def units_epsilon_sweep(active: list[str], *, t: int, alpha: float, reps: int) -> list[Unit]:
    """"Run ε sweep": every active method at each ε of :data:`SWEEP_EPS`, month ``t``."""
    return [(t, e, m, method_alpha(m, alpha), int(reps)) for e in SWEEP_EPS for m in active]


def units_alpha_sweep(*, t: int, epsilon: float, reps: int) -> list[Unit]:
    """"Run α sweep": WEM-prior at each α of :data:`SWEEP_ALPHA`, and the two prior-free WEMs as references."""
    units = [(t, float(epsilon), "wem_prior", a, int(reps)) for a in SWEEP_ALPHA]
    units += [(t, float(epsilon), m, float("nan"), int(reps)) for m in ("wem_naive", "wem_congenial")]
    return units


def export_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A release table for download without its entirely empty columns (α when no WEM-prior draw is in it), so
    the CSV reads back with any reader, this product's included (an all-missing column is refused)."""
    return frame.dropna(axis=1, how="all")


def loss_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean, sd and number of draws of the total ℓ₂ loss per method, one row per method, named for people.

    A release frame has one row per county and draw; ``total_l2`` repeats the draw's total on each of its rows,
    so each (rep, method) draw is counted once.
    """
    per_draw = frame.drop_duplicates(["rep", "method"])
    loss = per_draw.groupby("method")["total_l2"].agg(["mean", "std", "count"]).reset_index()
    loss["method"] = loss["method"].map(release.METHOD_LABELS)
    return loss.rename(columns={"mean": "mean total ℓ₂ loss", "std": "sd", "count": "draws"})


def parse_vector(text: str, name: str, *, integer: bool = False, size: int = TOY_CELLS) -> np.ndarray:
    """Parse ``size`` finite numbers separated by commas or semicolons; raise ``ValueError`` with a message that
    names ``name`` and says what is expected.

    >>> parse_vector("6, 1; 4", "y").tolist()
    [6.0, 1.0, 4.0]
    """
    text = str(text)
    if len(text) > MAX_VECTOR_CHARS:
        raise ValueError(f"{name}: at most {MAX_VECTOR_CHARS} characters, e.g. 6, 1, 4")
    try:
        vals = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{name}: write numbers separated by commas, e.g. 6, 1, 4") from None
    if len(vals) != size:
        raise ValueError(f"{name}: the toy has exactly {size} cells, got {len(vals)} values")
    if not all(math.isfinite(v) for v in vals):
        raise ValueError(f"{name}: every value must be a finite number")
    if integer and any(v != round(v) for v in vals):
        raise ValueError(f"{name}: counts must be whole numbers")
    return np.array(vals)
