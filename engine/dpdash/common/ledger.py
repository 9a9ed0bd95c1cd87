"""Privacy budget ledger: what each randomized release spends, one entry per noisy step (issue 26 item 1).

Release functions call :func:`record` next to each noise draw with the cost of that draw *derived from the noise
they actually add* (Laplace: ε = Δ₁/b; Gaussian: ρ = Δ₂²/(2σ²); exponential mechanism: ε = 2·c·Δ for the logit
coefficient c), so a changed noise scale changes the ledger. Nobody listening costs one context-variable read:
:func:`record` returns at once unless a :func:`recording` block is active in this context (thread or task).
Worker processes (``dpdash.common.parallel``) do not report back; audit with ``n_jobs=1``.

Composition (:meth:`Ledger.total`): entries in one :func:`partition` (disjoint rows, e.g. one stratum) compose
sequentially inside the partition and in parallel (maximum) across sibling partitions; entries outside any
partition add up (basic sequential composition for ε and δ; zCDP adds ρ).

References
----------
Dwork & Roth (2014), Thm. 3.14 (sequential composition), parallel composition (McSherry 2009, Thm. 4);
Bun & Steinke (2016), Lemma 2.3 (zCDP composes by adding ρ) and Prop. 1.4 (ε-DP ⇒ ε²/2-zCDP; the exponential
mechanism is ε²/8-zCDP, Cesar & Rogers 2021). Seed ``004_c5ca305e20a1adba.txt`` Def. 7, Prop. 8 (parallel
composition over strata).
"""

from __future__ import annotations

import contextlib
import math
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple

__all__ = ["Spend", "Budget", "Ledger", "recording", "partition", "record", "active"]


@dataclass(frozen=True)
class Spend:
    """One noisy step: its privacy cost and the noise that pays for it (``scale``: b or σ; NaN if none)."""

    step: str
    epsilon: float = 0.0
    delta: float = 0.0
    rho: float = 0.0
    mechanism: str = ""
    scale: float = math.nan
    sensitivity: float = math.nan
    group: tuple = ()


class Budget(NamedTuple):
    epsilon: float
    delta: float
    rho: float


@dataclass
class Ledger:
    """The spends recorded inside one :func:`recording` block, in order."""

    spends: list[Spend] = field(default_factory=list)

    def total(self) -> Budget:
        """Composed (ε, δ, ρ): sequential sums, except sibling partitions, which take the maximum."""
        return _compose(self.spends, 0)

    def steps(self, mechanism: str | None = None) -> list[Spend]:
        return [s for s in self.spends if mechanism is None or s.mechanism == mechanism]


def _sum_up(values: list[float]) -> float:
    """Σ values rounded up (a total spent is a loss: never reported below its exact value, issue 36 item 6).

    math.fsum is correctly rounded; the sign of the exact residual fsum(values − s) says whether it fell below.
    (``dpdash.accounting.conversions.sum_up`` is the same; ``common`` may not import ``accounting``.)
    """
    s = math.fsum(values)
    if not math.isfinite(s):
        return s
    return math.nextafter(s, math.inf) if math.fsum(values + [-s]) > 0.0 else s


def _compose(spends: list[Spend], depth: int) -> Budget:
    here = [s for s in spends if len(s.group) == depth]
    eps = _sum_up([s.epsilon for s in here])
    dl = _sum_up([s.delta for s in here])
    rho = _sum_up([s.rho for s in here])
    keys = {s.group[depth] for s in spends if len(s.group) > depth}
    if keys:
        parts = [_compose([s for s in spends if len(s.group) > depth and s.group[depth] == k], depth + 1)
                 for k in keys]
        eps += max(p.epsilon for p in parts)
        dl += max(p.delta for p in parts)
        rho += max(p.rho for p in parts)
    return Budget(eps, dl, rho)


_LEDGER: ContextVar[Ledger | None] = ContextVar("dpdash_ledger", default=None)
_GROUP: ContextVar[tuple] = ContextVar("dpdash_ledger_group", default=())


def active() -> bool:
    """True when a :func:`recording` block listens in this context."""
    return _LEDGER.get() is not None


@contextlib.contextmanager
def recording() -> Iterator[Ledger]:
    """Collect every :func:`record` made inside the block (nested blocks collect separately)."""
    led = Ledger()
    token = _LEDGER.set(led)
    try:
        yield led
    finally:
        _LEDGER.reset(token)


@contextlib.contextmanager
def partition(label) -> Iterator[None]:
    """Spends inside the block touch only the rows of ``label`` (disjoint from its sibling partitions)."""
    if _LEDGER.get() is None:
        yield
        return
    token = _GROUP.set(_GROUP.get() + (label,))
    try:
        yield
    finally:
        _GROUP.reset(token)


def record(step: str, *, epsilon: float = 0.0, delta: float = 0.0, rho: float = 0.0, mechanism: str = "",
           scale: float = math.nan, sensitivity: float = math.nan, group=None) -> None:
    """Append one spend to the listening ledger, if any; ``group`` adds one more partition level."""
    led = _LEDGER.get()
    if led is None:
        return
    g = _GROUP.get() + (() if group is None else (group,))
    led.spends.append(Spend(step, float(epsilon), float(delta), float(rho), mechanism, float(scale),
                            float(sensitivity), g))
