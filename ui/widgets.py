"""URL-bound controls shared by the pages: a log-scale ε slider, a seed box and a δ exponent.

Every control has a stable ``key`` and ``bind="query-params"``, so a presenter's link restores the view.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st


def log_grid(min_value: float, max_value: float, steps_per_decade: int = 20) -> list[float]:
    """Log-spaced values from min to max, rounded to 2 significant figures (0.5, 1, 2, 5 are on the grid).

    Steps are aligned to decades (10^(k/steps)), so the grid is the same whatever ``min_value``; the ends are
    included exactly. Short numbers read well on the slider and in URLs.
    """
    if not (0 < min_value < max_value):
        raise ValueError("need 0 < min_value < max_value")
    lo, hi = math.log10(min_value), math.log10(max_value)
    ks = np.arange(math.ceil(lo * steps_per_decade - 1e-9), math.floor(hi * steps_per_decade + 1e-9) + 1)
    vals = {float(f"{10 ** (k / steps_per_decade):.2g}") for k in ks}
    vals |= {float(min_value), float(max_value)}
    return sorted(v for v in vals if min_value <= v <= max_value)


def _nearest(grid: list[float], value: float) -> float:
    return min(grid, key=lambda g: abs(math.log(g) - math.log(value)))


def format_number(v: float) -> str:
    return f"{v:g}"


def log_slider(label: str, *, key: str, min_value: float = 1e-3, max_value: float = 20.0, value: float = 1.0,
               steps_per_decade: int = 20, help: str | None = None, container=None, disabled: bool = False) -> float:
    """A log-scale slider (e.g. for ε), URL-bound; the value is snapped to a 3-significant-figure grid.

    ``disabled`` greys it out where it does not apply (its value and link are kept).
    """
    grid = log_grid(min_value, max_value, steps_per_decade)
    default = float(value) if min_value <= value <= max_value else _nearest(grid, value)
    if default not in grid:
        grid = sorted(set(grid) | {default})
    target = container if container is not None else st
    return float(target.select_slider(label, options=grid, value=default, key=key, format_func=format_number,
                                      help=help, disabled=disabled, bind="query-params"))


def seed_input(*, key: str, value: int = 0, label: str = "Seed", help: str | None = None, container=None,
               disabled: bool = False) -> int:
    """A seed box (0 to 2**31 − 1), URL-bound: the same seed reproduces every random result on the page."""
    target = container if container is not None else st
    return int(target.number_input(label, min_value=0, max_value=2**31 - 1, value=int(value), step=1, key=key,
                                   help=help or "Same seed, same random draws: share the link to reproduce.",
                                   disabled=disabled, bind="query-params"))


def delta_exponent(*, key: str, value: int = -6, min_exp: int = -300, max_exp: int = -1,
                   label: str = "δ = 10^x, x =", help: str | None = None, container=None,
                   disabled: bool = False) -> float:
    """δ chosen by its exponent (URL-bound integer slider); returns 10**exponent."""
    target = container if container is not None else st
    e = target.slider(label, min_value=min_exp, max_value=max_exp, value=value, step=1, key=key,
                      help=help or "δ is the small probability that the ε guarantee fails; 10⁻⁶ or smaller is usual.",
                      disabled=disabled, bind="query-params")
    return 10.0 ** int(e)
