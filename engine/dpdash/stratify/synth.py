"""Private synthetic data: built-in synthesizers, MST and AIM on mbi, stratification, and fairness metrics.

Pure Python (numpy, pandas, scikit-learn; mbi/JAX imported lazily inside MST and AIM); never imports
streamlit.

References
----------
Seed ``004_c5ca305e20a1adba.txt`` ("S4"), *Stratified Data Synthesis* (L216–238), Def. 11 (L183–193),
App. C Defs. 13–14 (L501–523); normative restatement ``shared/specs/stratified_synthesis_viewer.md`` §2.9–2.11,
§3–4. MST: McKenna, Miklau & Sheldon (2021); AIM: McKenna et al. (2022); both written here on top of mbi 2.0's
estimation (``mbi.estimation.MirrorDescent``), following the reference algorithms. MWEM: Hardt, Ligett &
McSherry (2012). Budget conversion ``cdp_rho``: Canonne, Kamath & Steinke (2020), as in the reference code.

Errata (spec §2.11): E12 — the paper's "low privacy (ε < 0.1)" (L226) is read as the small-ε (strong privacy)
regime; E13 — "all synthesizers reduce parity error" (L230) is not asserted: the page shows both variants'
numbers; E14 — MST and AIM are (ε, δ = 1e-9)-DP, the paper reports ε only.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import numbers
import os
import threading
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np
import pandas as pd
from joblib import parallel_config

from dpdash.common import ledger
from dpdash.common.data import DiscreteTable
from dpdash.common.parallel import imap_unordered
from dpdash.stratify.core import draw_group_proportions, proportions_to_sizes
from dpdash.common.validation import as_generator, check_delta, check_epsilon

ProgressFn = Callable[[float, str], None]
SYNTHESIZERS = ("independent", "full_histogram", "mwem", "mst", "aim")
SYNTH_LABELS = {"independent": "Independent", "full_histogram": "Full histogram", "mwem": "MWEM", "mst": "MST",
                "aim": "AIM"}
SAMPLE_MODES = ("largest_remainder", "multinomial", "proportional")
DEFAULT_DELTA = 1e-9
_MBI_LOCK = threading.Lock()


class SynthesizerUnavailable(RuntimeError):
    """mbi/JAX cannot be imported, so MST and AIM are not available."""


class Synthesizer(Protocol):
    name: str
    epsilon: float
    delta: float

    def fit(self, df: pd.DataFrame, domain: Mapping[str, int], *, rng, progress: ProgressFn | None = None
            ) -> "Synthesizer": ...

    def sample(self, m: int, *, rng) -> pd.DataFrame: ...


# ---------------------------------------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------------------------------------




def _check_table(df: pd.DataFrame, domain: Mapping[str, int]) -> tuple[list[str], np.ndarray]:
    """Columns (in domain order) and the (n, d) int code matrix; codes must lie in [0, card)."""
    if df is None or len(df) == 0:
        raise ValueError("the table is empty: need at least one row")
    cols = [c for c in domain if c in df.columns]
    missing = [c for c in df.columns if c not in domain]
    if missing:
        raise ValueError(f"columns {missing} have no entry in the domain")
    if not cols:
        raise ValueError("the table has no columns to synthesize")
    X = df[cols].to_numpy()
    if not np.issubdtype(X.dtype, np.integer):
        if not np.all(np.isfinite(X.astype(float))) or not np.all(np.mod(X.astype(float), 1) == 0):
            raise ValueError("codes must be non-negative integers 0..card−1")
        X = X.astype(np.int64)
    X = X.astype(np.int64)
    for j, c in enumerate(cols):
        card = int(domain[c])
        if card < 1:
            raise ValueError(f"domain size of {c!r} must be ≥ 1, got {card}")
        if X[:, j].min() < 0 or X[:, j].max() >= card:
            raise ValueError(f"codes of column {c!r} must lie in [0, {card}); found "
                             f"[{X[:, j].min()}, {X[:, j].max()}]")
    return cols, X


def _domain_cells(domain: Mapping[str, int], cols: Sequence[str]) -> int:
    return int(np.prod([int(domain[c]) for c in cols], dtype=object))


def _normalise(counts: np.ndarray) -> np.ndarray:
    p = np.clip(counts, 0.0, None)
    s = p.sum()
    return np.full(p.size, 1.0 / p.size) if s <= 0 else p / s


def _report(progress: ProgressFn | None, frac: float, msg: str) -> None:
    if progress is not None:
        progress(float(min(max(frac, 0.0), 1.0)), msg)


def sample_counts(weights, m: int, *, mode: str = "largest_remainder", rng=None) -> np.ndarray:
    """Split m records over strata with weights: exact largest remainder, multinomial (S4 L28), or
    the reference code's max(⌊m·w⌋, 1) ("proportional", which may not sum to m)."""
    w = np.asarray(weights, dtype=float)
    if w.size == 0 or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be non-negative and not all zero")
    m = int(m)
    if m <= 0:
        raise ValueError(f"m must be > 0, got {m}")
    w = w / w.sum()
    if mode == "largest_remainder":
        return proportions_to_sizes(w, m, min_size=0)
    if mode == "multinomial":
        return as_generator(rng).multinomial(m, w)
    if mode == "proportional":
        return np.maximum(np.floor(m * w), 1).astype(np.int64)
    raise ValueError(f"sample_mode must be one of {SAMPLE_MODES}, got {mode!r}")


# ---------------------------------------------------------------------------------------------------------
# Budget conversion used by the reference MST/AIM code
# ---------------------------------------------------------------------------------------------------------

def _cdp_delta(rho: float, eps: float) -> float:
    amin, amax = 1.01, (eps + 1) / (2 * rho) + 2
    alpha = amin
    for _ in range(1000):
        alpha = (amin + amax) / 2
        derivative = (2 * alpha - 1) * rho - eps + math.log1p(-1.0 / alpha)
        if derivative < 0:
            amin = alpha
        else:
            amax = alpha
        if amax - amin <= 0 or (amin + amax) / 2 in (amin, amax):
            break  # the bisection has converged to machine precision; more steps change nothing
    delta = math.exp((alpha - 1) * (alpha * rho - eps) + alpha * math.log1p(-1 / alpha)) / (alpha - 1.0)
    return min(delta, 1.0)


def cdp_rho(epsilon: float, delta: float) -> float:
    """Largest ρ on [0, ε+1] whose zCDP guarantee gives (ε, δ)-DP by Canonne–Kamath–Steinke's conversion.

    Reproduces the reference MST/AIM budget (spec §3): δ(ρ, ε) = exp((a−1)(aρ−ε) + a·log(1−1/a))/(a−1),
    capped at 1, with the order a solving (2a−1)ρ − ε + log(1−1/a) = 0 (bisection on
    [1.01, (ε+1)/(2ρ)+2]); ρ by bisection. Not the "standard"/"best" conversion of ``dpdash.accounting.composition``.

    Examples
    --------
    >>> round(cdp_rho(1.0, 1e-9), 8)
    0.01497306
    """
    eps, delta = check_epsilon(epsilon), check_delta(delta, allow_zero=False)
    lo, hi = 0.0, eps + 1.0
    for _ in range(1000):
        rho = (lo + hi) / 2
        if rho in (lo, hi):
            break
        if _cdp_delta(rho, eps) <= delta:
            lo = rho
        else:
            hi = rho
    return lo


# ---------------------------------------------------------------------------------------------------------
# Built-in synthesizers (pure ε-DP)
# ---------------------------------------------------------------------------------------------------------

@dataclass
class IndependentLaplace:
    """Per-column histograms + Lap(d/ε) per cell (ε/d per column), clipped and normalised; columns sampled
    independently. Pure ε-DP (L1 sensitivity 1 per histogram; sequential composition over d columns)."""

    epsilon: float
    name: str = "independent"
    delta: float = 0.0

    def __post_init__(self):
        self.epsilon = check_epsilon(self.epsilon)

    def fit(self, df, domain, *, rng, progress=None):
        cols, X = _check_table(df, domain)
        r = as_generator(rng)
        d = len(cols)
        self.columns_ = cols
        self.probs_ = {}
        for j, c in enumerate(cols):
            h = np.bincount(X[:, j], minlength=int(domain[c])).astype(float)
            b = d / self.epsilon
            h += r.laplace(0.0, b, h.size)
            ledger.record(f"column {c} histogram", epsilon=1.0 / b, mechanism="laplace", scale=b, sensitivity=1.0)
            self.probs_[c] = _normalise(h)
        _report(progress, 1.0, "Independent marginals measured")
        return self

    def sample(self, m, *, rng):
        r = as_generator(rng)
        m = int(m)
        return pd.DataFrame({c: r.choice(p.size, size=m, p=p) for c, p in self.probs_.items()})


@dataclass
class FullHistogramLaplace:
    """Full-domain histogram + Lap(1/ε) per cell, clipped, normalised, sampled iid. Pure ε-DP.

    Illustrates S4 footnote 2 (L30): a histogram containing the group columns stratifies implicitly.
    Raises ``ValueError`` when the domain has more than ``max_cells`` cells.
    """

    epsilon: float
    max_cells: int = 200_000
    name: str = "full_histogram"
    delta: float = 0.0

    def __post_init__(self):
        self.epsilon = check_epsilon(self.epsilon)

    def fit(self, df, domain, *, rng, progress=None):
        cols, X = _check_table(df, domain)
        cells = _domain_cells(domain, cols)
        if cells > self.max_cells:
            raise ValueError(f"the full domain has {cells:,} cells, more than max_cells = {self.max_cells:,}; "
                             "use fewer or coarser columns, or another synthesizer")
        self.columns_ = cols
        self.shape_ = tuple(int(domain[c]) for c in cols)
        idx = np.ravel_multi_index(X.T, self.shape_)
        b = 1.0 / self.epsilon
        h = np.bincount(idx, minlength=cells).astype(float) + as_generator(rng).laplace(0.0, b, cells)
        ledger.record("full histogram", epsilon=1.0 / b, mechanism="laplace", scale=b, sensitivity=1.0)
        self.p_ = _normalise(h)
        _report(progress, 1.0, "Full histogram measured")
        return self

    def sample(self, m, *, rng):
        flat = as_generator(rng).choice(self.p_.size, size=int(m), p=self.p_)
        return pd.DataFrame(dict(zip(self.columns_, np.unravel_index(flat, self.shape_))))


@dataclass
class MWEM:
    """MWEM (Hardt, Ligett & McSherry 2012) on a dense histogram; workload = every cell of every
    ``way``-marginal (spec §3 item 3; S4 App. C discussion).

    Each of T rounds: exponential mechanism at ε/(2T) on |q(A) − q(D)| (sensitivity 1), Laplace
    measurement Lap(2T/ε), then ``sweeps`` multiplicative-weights passes over all measurements. Pure ε-DP.
    """

    epsilon: float
    rounds: int = 30
    way: int = 2
    sweeps: int = 5
    max_cells: int = 200_000
    name: str = "mwem"
    delta: float = 0.0

    def __post_init__(self):
        self.epsilon = check_epsilon(self.epsilon)
        if int(self.rounds) < 1:
            raise ValueError(f"rounds must be ≥ 1, got {self.rounds}")
        if int(self.way) < 1:
            raise ValueError(f"way must be ≥ 1, got {self.way}")

    def fit(self, df, domain, *, rng, progress=None):
        cols, X = _check_table(df, domain)
        cells = _domain_cells(domain, cols)
        if cells > self.max_cells:
            raise ValueError(f"the full domain has {cells:,} cells, more than max_cells = {self.max_cells:,}")
        r = as_generator(rng)
        shape = tuple(int(domain[c]) for c in cols)
        n = X.shape[0]
        T = int(self.rounds)
        way = min(int(self.way), len(cols))
        # Marginal-cell index of every full-domain cell, per workload marginal; queries by bincount.
        grid = np.indices(shape).reshape(len(cols), -1)
        data_idx = np.ravel_multi_index(X.T, shape)
        true_full = np.bincount(data_idx, minlength=cells).astype(float)
        margs = []
        offset = 0
        for S in itertools.combinations(range(len(cols)), way):
            sub = tuple(shape[i] for i in S)
            midx = np.ravel_multi_index(grid[list(S)], sub)
            size = int(np.prod(sub))
            margs.append((midx, size, offset))
            offset += size
        true_q = np.concatenate([np.bincount(mi, weights=true_full, minlength=sz) for mi, sz, _ in margs])
        owner = np.concatenate([np.full(sz, j) for j, (_, sz, _) in enumerate(margs)])
        A = np.full(cells, n / cells)
        eps_round = self.epsilon / (2 * T)
        measured: list[tuple[int, int, float]] = []   # (marginal j, local cell, noisy value)

        def answers(A_):
            return np.concatenate([np.bincount(mi, weights=A_, minlength=sz) for mi, sz, _ in margs])

        for t in range(T):
            score = np.abs(answers(A) - true_q)
            logits = eps_round * score / 2.0
            p = np.exp(logits - logits.max())
            q = int(r.choice(p.size, p=p / p.sum()))
            # exp(c·score) with c = ε_round/2 and score sensitivity 1 is (2c)-DP
            ledger.record(f"round {t + 1} select", epsilon=2 * (eps_round / 2.0), mechanism="exponential",
                          sensitivity=1.0)
            j = int(owner[q])
            local = q - margs[j][2]
            b = 2 * T / self.epsilon
            measured.append((j, local, float(true_q[q] + r.laplace(0.0, b))))
            ledger.record(f"round {t + 1} measure", epsilon=1.0 / b, mechanism="laplace", scale=b, sensitivity=1.0)
            for _ in range(int(self.sweeps)):
                for jj, cell, val in measured:
                    A = _mw_update(A, margs[jj][0] == cell, val, n)
            _report(progress, (t + 1) / T, f"MWEM round {t + 1}/{T}")
        self.columns_, self.shape_ = cols, shape
        self.p_ = _normalise(A)
        return self

    def sample(self, m, *, rng):
        flat = as_generator(rng).choice(self.p_.size, size=int(m), p=self.p_)
        return pd.DataFrame(dict(zip(self.columns_, np.unravel_index(flat, self.shape_))))


# ---------------------------------------------------------------------------------------------------------
# MST and AIM on mbi
# ---------------------------------------------------------------------------------------------------------

#: Where JAX keeps the compiled MST/AIM programs between server starts (issue 14 item 8): the project's git-ignored
#: ``.cache/jax`` at the repository root (this file is engine/dpdash/stratify/synth.py); JAX's own
#: ``JAX_COMPILATION_CACHE_DIR`` overrides it.
JAX_CACHE_DIR = Path(__file__).resolve().parents[3] / ".cache" / "jax"


#: Largest size of that cache (bytes); JAX evicts the least recently used programs beyond it.
JAX_CACHE_MAX_BYTES = 2 * 1024**3


def jax_cache_dir() -> Path:
    """The persistent compilation cache directory this process uses (``JAX_COMPILATION_CACHE_DIR`` or the default)."""
    return Path(os.environ.get("JAX_COMPILATION_CACHE_DIR") or JAX_CACHE_DIR)


def _configure_jax(jax) -> None:
    """float64, and every compiled program kept on disk (before the first compilation, which fixes the cache).

    Compilation is most of a first MST/AIM run (26–42 s on Adult in a fresh server, issue 14 item 8); mbi's
    programs are many and small, so the cache keeps all of them (no minimum compile time or size). Erratum:
    spec §3 item 6 disabled the cache, which mbi recommends for sweeps writing to one shared location; the issue's
    first-run target needs it, and a directory that cannot be created just leaves the cache off.
    """
    jax.config.update("jax_enable_x64", True)
    path = jax_cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        jax.config.update("jax_enable_compilation_cache", False)
        return
    jax.config.update("jax_enable_compilation_cache", True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    # A size limit turns on JAX's file lock around every cache read and write: without it a process could read an
    # entry another process was still writing ("Error -5 while decompressing" with concurrent MST runs, issue 26).
    jax.config.update("jax_compilation_cache_max_size", JAX_CACHE_MAX_BYTES)
    _stamp_unstamped_entries(path)


def _stamp_unstamped_entries(path: Path) -> None:
    """Give every cached program an access-time file, as JAX's size-limited cache expects.

    A cache written without a size limit has no ``-atime`` files; JAX's eviction scan then fails on the first one
    ("Error writing persistent compilation cache entry … FileNotFoundError …-atime") and no new program is kept.
    """
    import time

    stamp = time.time_ns().to_bytes(8, "little")
    try:
        for entry in path.glob("*-cache"):
            atime = entry.with_name(entry.name[: -len("-cache")] + "-atime")
            if not atime.exists():
                atime.write_bytes(stamp)
    except OSError:
        pass  # a read-only or vanishing cache only costs compile time


def _import_mbi():
    """Import mbi with float64 JAX and the persistent compilation cache (see :func:`_configure_jax`)."""
    try:
        import jax

        _configure_jax(jax)
        with warnings.catch_warnings():
            # mbi warns whenever the persistent cache is on; here it is on by decision (see _configure_jax).
            warnings.filterwarnings("ignore", message="JAX persistent compilation cache is enabled",
                                    category=UserWarning)
            import mbi
            from mbi import estimation, junction_tree
    except Exception as exc:  # pragma: no cover - depends on the environment
        raise SynthesizerUnavailable(
            "MST and AIM need the mbi package (private-pgm) with JAX: pip install 'mbi==2.0.0' "
            f"'jax[cpu]==0.10.2' ({type(exc).__name__}: {exc})"
        ) from exc
    return mbi, estimation, junction_tree


def import_jax_libraries() -> None:
    """Import mbi and JAX as a fit does (float64, persistent cache), e.g. before unpickling fitted models.

    Raises :class:`SynthesizerUnavailable` when they cannot be imported.
    """
    _import_mbi()


def _mbi_sample(model, m: int, rng: np.random.Generator, cols: Sequence[str]) -> pd.DataFrame:
    """``model.synthetic_data`` draws from the global ``np.random``: seed it from ``rng`` under a lock and
    restore the previous global state afterwards."""
    seed = int(rng.integers(2**32))
    with _MBI_LOCK:
        state = np.random.get_state()
        try:
            np.random.seed(seed)
            data = model.synthetic_data(rows=int(m)).to_dict()
        finally:
            np.random.set_state(state)
    return pd.DataFrame({c: np.asarray(data[c], dtype=np.int64) for c in cols})


def _mw_update(A: np.ndarray, mask: np.ndarray, val: float, n: float) -> np.ndarray:
    """One multiplicative-weights step, A[mask] *= exp(e) with e = (val − q)/(2n), q = Σ A[mask], then A
    renormalised to total n — computed as the two normalised scale factors, never exp(e) itself, which
    overflows for small n and ε (MWEM's Lap(2T/ε) measurements can exceed 1418·n). In place; returns A.

    References: Hardt, Ligett & McSherry (2012), MWEM update; spec §3 item 3.
    """
    qa = float(A[mask].sum())
    rest = float(A.sum()) - qa
    if qa <= 0.0 or rest <= 0.0:
        return A  # all mass off (exp(e)·0 = 0) or all on the measured cell: the normalised A does not change
    e = (val - qa) / (2.0 * n)
    if e >= 0:
        damp = math.exp(-e)                       # ≤ 1
        denom = qa + rest * damp
        A[mask] *= n / denom
        A[~mask] *= n * damp / denom
    else:
        boost = math.exp(e)                       # < 1
        denom = qa * boost + rest
        A[mask] *= n * boost / denom
        A[~mask] *= n / denom
    return A


def _exp_mech(scores: np.ndarray, eps: float, sensitivity: float, rng: np.random.Generator) -> int:
    """Exponential mechanism with coefficient 0.5: P ∝ exp(0.5·ε·(s − max s)/Δ) (reference code)."""
    s = np.asarray(scores, dtype=float)
    logits = 0.5 * eps / sensitivity * (s - s.max())
    p = np.exp(logits)
    return int(rng.choice(s.size, p=p / p.sum()))


def _marginal(X: np.ndarray, idx: Sequence[int], shape: Sequence[int]) -> np.ndarray:
    sub = tuple(shape[i] for i in idx)
    flat = np.ravel_multi_index(X[:, list(idx)].T, sub)
    return np.bincount(flat, minlength=int(np.prod(sub))).astype(float)


class _IterProgress:
    """Feeds mbi's callback (every 50 iterations) into a progress function over a window [lo, hi]."""

    def __init__(self, progress, iters, lo, hi, msg):
        self.progress, self.calls, self.lo, self.hi, self.msg = progress, max(1, math.ceil(iters / 50)), lo, hi, msg
        self.i = 0

    def __call__(self, _):
        self.i += 1
        _report(self.progress, self.lo + (self.hi - self.lo) * min(self.i / self.calls, 1.0), self.msg)


@dataclass
class MST:
    """MST (McKenna, Miklau & Sheldon 2021) on mbi 2.0; (ε, δ)-DP with default δ = 1e-9 (spec §3 item 4).

    ρ = cdp_rho(ε, δ), σ = √(3/(2ρ)); three stages of ρ/3: one-way marginals with N(0, (σ√d)²); a spanning
    tree chosen by the exponential mechanism (ε_sel = √(8(ρ/3)/(d−1))) on ‖M_ab − N̂·p̂_a⊗p̂_b‖₁; the d−1
    tree pairs with N(0, (σ√(d−1))²). Estimation: ``mbi.estimation.MirrorDescent``. The reference's
    domain compression is omitted (post-processing; every attribute here has ≤ 50 levels). Erratum E14:
    the paper reports MST with ε only; the guarantee is (ε, δ)-DP.
    """

    epsilon: float
    delta: float = DEFAULT_DELTA
    iters: int = 1000
    name: str = "mst"

    def __post_init__(self):
        self.epsilon = check_epsilon(self.epsilon)
        self.delta = check_delta(self.delta, allow_zero=False)

    def fit(self, df, domain, *, rng, progress=None):
        mbi, estimation, _ = _import_mbi()
        cols, X = _check_table(df, domain)
        r = as_generator(rng)
        shape = [int(domain[c]) for c in cols]
        d = len(cols)
        rho = cdp_rho(self.epsilon, self.delta)
        sigma = math.sqrt(3.0 / (2.0 * rho))
        meas = []
        _report(progress, 0.02, "MST: measuring one-way marginals")
        noisy1 = []
        s1 = sigma * math.sqrt(d)
        for j, c in enumerate(cols):
            y = _marginal(X, [j], shape) + r.normal(0.0, s1, shape[j])
            ledger.record(f"one-way {c}", rho=0.5 / s1**2, mechanism="gaussian", scale=s1, sensitivity=1.0)
            noisy1.append(y)
            meas.append(mbi.LinearMeasurement(y, (c,), stddev=s1))
        pairs: list[tuple[int, int]] = []
        if d > 1:
            total = float(np.mean([y.sum() for y in noisy1]))
            p1 = [_normalise(y) for y in noisy1]
            cand = list(itertools.combinations(range(d), 2))
            score = {}
            for a, b in cand:
                est = total * np.outer(p1[a], p1[b]).ravel()
                score[(a, b)] = float(np.abs(_marginal(X, [a, b], shape) - est).sum())
            eps_sel = math.sqrt(8 * (rho / 3) / (d - 1))
            comp = list(range(d))

            def find(i):
                while comp[i] != i:
                    comp[i] = comp[comp[i]]
                    i = comp[i]
                return i

            for _ in range(d - 1):
                avail = [e for e in cand if find(e[0]) != find(e[1])]
                e = avail[_exp_mech(np.array([score[x] for x in avail]), eps_sel, 1.0, r)]
                ledger.record("tree edge select", rho=eps_sel**2 / 8, epsilon=eps_sel, mechanism="exponential",
                              sensitivity=1.0)
                comp[find(e[0])] = find(e[1])
                pairs.append(e)
            s2 = sigma * math.sqrt(d - 1)
            for a, b in pairs:
                y = _marginal(X, [a, b], shape) + r.normal(0.0, s2, shape[a] * shape[b])
                ledger.record(f"pair {cols[a]} × {cols[b]}", rho=0.5 / s2**2, mechanism="gaussian", scale=s2,
                              sensitivity=1.0)
                meas.append(mbi.LinearMeasurement(y, (cols[a], cols[b]), stddev=s2))
        self.tree_ = [(cols[a], cols[b]) for a, b in pairs]
        _report(progress, 0.1, "MST: fitting the graphical model (first run compiles JAX code)")
        dom = mbi.Domain(cols, shape)
        cb = _IterProgress(progress, self.iters, 0.1, 1.0, "MST: fitting the graphical model")
        with _MBI_LOCK:
            self.model_ = estimation.MirrorDescent().estimate(dom, meas, iters=int(self.iters), callback_fn=cb)
        self.columns_ = cols
        self.rho_ = rho
        return self

    def sample(self, m, *, rng):
        return _mbi_sample(self.model_, m, as_generator(rng), self.columns_)


def _dense_marginals(model, cols: Sequence[str], shape: Sequence[int]) -> np.ndarray:
    """The model's full joint (counts) from its potentials, summed densely in numpy."""
    logp = np.zeros(shape)
    for cl, f in model.potentials.tables.items():
        attrs = list(f.domain.attributes)
        vals = np.asarray(f.values, dtype=float)
        order = sorted(range(len(attrs)), key=lambda i: cols.index(attrs[i]))
        vals = np.transpose(vals, order)
        bshape = [1] * len(cols)
        for i in order:
            bshape[cols.index(attrs[i])] = shape[cols.index(attrs[i])]
        logp = logp + vals.reshape(bshape)
    logp -= logp.max()
    p = np.exp(logp)
    return p / p.sum() * float(model.total)


@dataclass
class AIM:
    """AIM (McKenna et al. 2022) on mbi 2.0; (ε, δ)-DP with default δ = 1e-9 (spec §3 item 5).

    T = ``rounds`` or 2d (the reference uses 16d); workload = all ``way``-subsets; candidates = downward
    closure weighted by Σ_w |cl ∩ w|; σ = √(T/(1.8ρ)), ε_sel = √(0.8ρ/T). One-way marginals first; each
    round selects a clique by the exponential mechanism on w·(‖x − x̂‖₁ − √(2/π)σ|Ω_cl|) among cliques
    whose junction tree stays under ``max_model_size``·used/ρ MB, measures it, re-estimates (warm start)
    and halves σ when the estimate barely moved. Erratum E14: (ε, δ)-DP, not ε only.
    """

    epsilon: float
    delta: float = DEFAULT_DELTA
    rounds: int | None = None
    max_model_size: float = 2.0
    max_iters: int = 200
    way: int = 2
    name: str = "aim"

    def __post_init__(self):
        self.epsilon = check_epsilon(self.epsilon)
        self.delta = check_delta(self.delta, allow_zero=False)

    def fit(self, df, domain, *, rng, progress=None):
        mbi, estimation, junction_tree = _import_mbi()
        cols, X = _check_table(df, domain)
        r = as_generator(rng)
        shape = [int(domain[c]) for c in cols]
        d = len(cols)
        dom = mbi.Domain(cols, shape)
        rho = cdp_rho(self.epsilon, self.delta)
        T = int(self.rounds) if self.rounds else 2 * d
        way = min(int(self.way), d)
        workload = [tuple(w) for w in itertools.combinations(cols, way)]
        cands: dict[tuple, float] = {}
        for w in workload:
            for size in range(1, len(w) + 1):
                for cl in itertools.combinations(w, size):
                    cands.setdefault(cl, 0.0)
        for cl in cands:
            cands[cl] = float(sum(len(set(cl) & set(w)) for w in workload))
        answers = {cl: _marginal(X, [cols.index(a) for a in cl], shape) for cl in cands}
        sigma = math.sqrt(T / (1.8 * rho))
        eps_sel = math.sqrt(0.8 * rho / T)
        dense = _domain_cells(domain, cols) <= 200_000
        meas = []
        used = 0.0
        for c in cols:
            y = answers[(c,)] + r.normal(0.0, sigma, shape[cols.index(c)])
            ledger.record(f"one-way {c}", rho=0.5 / sigma**2, mechanism="gaussian", scale=sigma, sensitivity=1.0)
            meas.append(mbi.LinearMeasurement(y, (c,), stddev=sigma))
            used += 0.5 / sigma**2
        est = estimation.MirrorDescent()
        _report(progress, 0.02, "AIM: fitting one-way marginals (first run compiles JAX code)")
        with _MBI_LOCK:
            model = est.estimate(dom, meas, iters=int(self.max_iters))

        def project(mdl, cl, joint):
            if joint is not None:
                axes = tuple(i for i, c in enumerate(cols) if c not in cl)
                marg = joint.sum(axis=axes)
                # The joint's axes follow ``cols``; reorder to the clique's attribute order.
                present = [c for c in cols if c in cl]
                marg = np.transpose(marg, [present.index(a) for a in cl])
                return marg.ravel()
            return np.asarray(mdl.project(cl).datavector(), dtype=float)

        joint = _dense_marginals(model, cols, shape) if dense else None
        t = 0
        terminate = False
        chosen = []
        while not terminate:
            t += 1
            if rho - used < 2 * (0.5 / sigma**2 + eps_sel**2 / 8):
                rem = rho - used
                sigma = math.sqrt(1 / (1.8 * rem))
                eps_sel = math.sqrt(0.8 * rem)
                terminate = True
            used += eps_sel**2 / 8 + 0.5 / sigma**2
            limit = self.max_model_size * used / rho
            model_cliques = [tuple(c) for c in model.cliques]
            free = set()
            for mc in model_cliques:
                for size in range(1, len(mc) + 1):
                    free.update(itertools.combinations(mc, size))
            eligible = [cl for cl in cands
                        if cl in free or junction_tree.hypothetical_model_size(dom, model_cliques + [cl]) <= limit]
            scores, wmax = [], max(cands[cl] for cl in eligible)
            for cl in eligible:
                bias = math.sqrt(2 / math.pi) * sigma * dom.size(cl)
                xh = project(model, cl, joint)
                scores.append(cands[cl] * (np.abs(answers[cl] - xh).sum() - bias))
            cl = eligible[_exp_mech(np.array(scores), eps_sel, wmax, r)]
            ledger.record(f"round {t} select", rho=eps_sel**2 / 8, epsilon=eps_sel, mechanism="exponential",
                          sensitivity=wmax)
            chosen.append(cl)
            n_cl = dom.size(cl)
            y = answers[cl] + r.normal(0.0, sigma, n_cl)
            ledger.record(f"round {t} measure {' × '.join(cl)}", rho=0.5 / sigma**2, mechanism="gaussian",
                          scale=sigma, sensitivity=1.0)
            meas.append(mbi.LinearMeasurement(y, cl, stddev=sigma))
            z = project(model, cl, joint)
            with _MBI_LOCK:
                model = est.estimate(dom, meas, iters=int(self.max_iters), warm_start=model)
            joint = _dense_marginals(model, cols, shape) if dense else None
            w = project(model, cl, joint)
            if np.abs(w - z).sum() <= math.sqrt(2 / math.pi) * sigma * n_cl:
                sigma /= 2
                eps_sel *= 2
            _report(progress, min(0.05 + 0.95 * used / rho, 0.99), f"AIM round {t}: measured {' × '.join(cl)}")
        _report(progress, 1.0, f"AIM finished after {t} rounds")
        self.model_, self.columns_, self.rho_, self.cliques_ = model, cols, rho, chosen
        return self

    def sample(self, m, *, rng):
        return _mbi_sample(self.model_, m, as_generator(rng), self.columns_)


def make_synthesizer(name: str, *, epsilon: float, delta: float = DEFAULT_DELTA, **options) -> Synthesizer:
    """Build a synthesizer by name: "independent" | "full_histogram" | "mwem" | "mst" | "aim".

    The built-ins are pure ε-DP (δ ignored, reported as 0); MST and AIM are (ε, δ)-DP.
    """
    if name == "independent":
        return IndependentLaplace(epsilon, **options)
    if name == "full_histogram":
        return FullHistogramLaplace(epsilon, **options)
    if name == "mwem":
        return MWEM(epsilon, **options)
    if name == "mst":
        return MST(epsilon, delta, **options)
    if name == "aim":
        return AIM(epsilon, delta, **options)
    raise ValueError(f"unknown synthesizer {name!r}; expected one of {SYNTHESIZERS}")


# ---------------------------------------------------------------------------------------------------------
# Parallel fits (joblib)
# ---------------------------------------------------------------------------------------------------------

@dataclass
class FitJob:
    """One synthesizer fit: an unfitted model, its rows and domain, and the generator it owns.

    The generator is the job's own (a ``spawn`` child or a per-variant seed), never shared with another job, so
    the fitted model and the generator's final state do not depend on where or in which order the job runs.
    """

    label: str
    model: object
    df: pd.DataFrame
    domain: dict
    rng: np.random.Generator


def _fit_job(i: int, model, df: pd.DataFrame, domain: dict, rng: np.random.Generator):
    """Worker body: fit and hand back the model with its advanced generator (a process gets copies of both)."""
    model.fit(df, domain, rng=rng)
    return i, model, rng


def run_fit_jobs(jobs: Sequence[FitJob], *, n_jobs: int = 1, progress: ProgressFn | None = None,
                 backend: str | None = None) -> list[tuple[object, np.random.Generator]]:
    """Fit every job, sequentially (``n_jobs=1``) or through ``dpdash.common.parallel`` (``n_jobs`` processes).

    Returns ``(fitted model, generator after the fit)`` in job order, identical for any ``n_jobs`` because
    each job owns its generator. ``progress(fraction, message)`` is nondecreasing and ends at 1.0: with one job
    at a time it follows each fit's own progress inside the job's share; with workers it advances as each job
    finishes. ``backend=None`` uses the active ``joblib.parallel_config`` (a Dask cluster, say), else worker
    processes; a name forces that joblib backend. Not threads by default: with threads, mbi's estimation runs under
    ``_MBI_LOCK`` one fit at a time, and removing the lock gave no consistent speed-up in our measurements
    (2 shared cores). Each process compiles its own JAX programs; for MST on Adult compilation dominates
    (a new ε recompiles even in a warm process), which caps the gain from a second process.
    """
    jobs = list(jobs)
    total = len(jobs)
    if total == 0:
        _report(progress, 1.0, "Nothing to fit")
        return []
    n_jobs = max(1, min(int(n_jobs), total))
    out: list = [None] * total
    if n_jobs == 1:
        for i, job in enumerate(jobs):
            sub = None
            if progress is not None:
                def sub(f, msg, i=i, label=job.label):
                    progress(min((i + min(max(f, 0.0), 1.0)) / total, 1.0), f"{label}: {msg}")
            with ledger.partition(job.label):  # strata are disjoint rows: parallel composition in the ledger
                job.model.fit(job.df, job.domain, rng=job.rng, progress=sub)
            out[i] = (job.model, job.rng)
        _report(progress, 1.0, f"All {total} fits done")
        return out
    if any(getattr(job.model, "name", "") in ("mst", "aim") for job in jobs):
        # Fitted mbi models come back pickled: JAX must already be in float64 mode in this process when they
        # are unpickled, or their arrays are silently cast to float32 and sampling changes.
        _import_mbi()
    _report(progress, 0.0, f"Fitting {total} models on {n_jobs} workers (the first run compiles code)")
    tasks = [(i, job.model, job.df, job.domain, job.rng) for i, job in enumerate(jobs)]
    with parallel_config(backend=backend) if backend is not None else contextlib.nullcontext():
        for done, (_, (i, model, r)) in enumerate(imap_unordered(_fit_job, tasks, n_jobs=n_jobs), start=1):
            out[i] = (model, r)
            _report(progress, done / total, f"{jobs[i].label} fitted ({done} of {total})")
    return out


# ---------------------------------------------------------------------------------------------------------
# Stratified wrapper (S4 L216–238)
# ---------------------------------------------------------------------------------------------------------

def _key_label(key: tuple) -> str:
    return " × ".join(str(k) for k in key)


class StratifiedSynthesizer:
    """Fit one synthesizer per stratum at the same (ε, δ) and recombine by public stratum sizes (S4 L216–238).

    Strata are the sorted ``groupby(group_cols)`` keys; strata with n_s ≤ min_frac·n are dropped (the
    reference code's ``smallest_strata``) or, with ``small_strata="pool"``, pooled and modelled over all
    columns. Each kept stratum's model is fit on the value columns only (group columns re-attached when
    sampling), with child RNGs from ``rng.spawn``; models are stored keyed by stratum, so the pairing never
    depends on completion order. The release is (ε, δ)-DP by parallel composition.
    """

    def __init__(self, factory: Callable[[], Synthesizer], group_cols: Sequence[str], *, min_frac: float = 0.001,
                 small_strata: str = "drop", sample_mode: str = "largest_remainder"):
        if not (0 <= float(min_frac) < 1):
            raise ValueError(f"min_frac must lie in [0, 1), got {min_frac!r}")
        if small_strata not in ("drop", "pool"):
            raise ValueError(f"small_strata must be 'drop' or 'pool', got {small_strata!r}")
        if sample_mode not in SAMPLE_MODES:
            raise ValueError(f"sample_mode must be one of {SAMPLE_MODES}, got {sample_mode!r}")
        group_cols = tuple(group_cols)
        if not group_cols:
            raise ValueError("give at least one group column")
        self.factory = factory
        self.group_cols = group_cols
        self.min_frac = float(min_frac)
        self.small_strata = small_strata
        self.sample_mode = sample_mode
        probe = factory()
        self.epsilon = float(probe.epsilon)
        self.delta = float(probe.delta)
        self.name = f"stratified_{probe.name}"
        self.models: dict[tuple, Synthesizer] = {}

    def fit(self, df, domain, *, rng, progress=None, n_jobs: int = 1):
        """Fit one model per kept stratum (and the pooled one); ``n_jobs`` > 1 fits them in worker processes.

        The result is identical for any ``n_jobs``: every stratum's model gets its own child generator from
        ``rng.spawn`` (a SeedSequence spawned per job), and models are stored by stratum key.
        """
        jobs = self.plan(df, domain, rng=rng)
        self.finish(run_fit_jobs(jobs, n_jobs=n_jobs, progress=progress))
        return self

    def plan(self, df, domain, *, rng) -> list[FitJob]:
        """Validate, find the strata and build one unfitted :class:`FitJob` per kept stratum (pooled last).

        ``rng.spawn`` is called exactly once here; sampling later uses ``rng`` itself, whose state spawning
        does not change. Pair with :meth:`finish` to fit the jobs elsewhere (e.g. together with other jobs).
        """
        for c in self.group_cols:
            if c not in df.columns:
                raise ValueError(f"group column {c!r} is not in the table; columns are {list(df.columns)}")
        cols, _ = _check_table(df, domain)
        self.columns_ = cols
        self.value_cols_ = [c for c in cols if c not in self.group_cols]
        if not self.value_cols_:
            raise ValueError("no value columns left after removing the group columns")
        n = len(df)
        sizes = df.groupby(list(self.group_cols), sort=True).size()
        keys = [k if isinstance(k, tuple) else (k,) for k in sizes.index]
        kept = sizes.to_numpy() > self.min_frac * n
        if not kept.any():
            raise ValueError(f"every stratum is at most min_frac·n = {self.min_frac * n:g} rows: lower min_frac")
        r = as_generator(rng)
        pooled_rows = None
        if self.small_strata == "pool" and (~kept).any():
            small_keys = {k for k, kk in zip(keys, kept) if not kk}
            key_series = list(zip(*[df[c].to_numpy() for c in self.group_cols]))
            pooled_rows = np.array([k in small_keys for k in key_series])
        todo = [k for k, kk in zip(keys, kept) if kk]
        children = r.spawn(len(todo) + (1 if pooled_rows is not None else 0))
        value_domain = {c: domain[c] for c in self.value_cols_}
        jobs = [FitJob(f"Stratum {_key_label(key)}", self.factory(),
                       _rows_of(df, self.group_cols, key)[self.value_cols_].reset_index(drop=True),
                       value_domain, children[i]) for i, key in enumerate(todo)]
        if pooled_rows is not None:
            jobs.append(FitJob("Pooled small strata", self.factory(),
                               df.loc[pooled_rows, cols].reset_index(drop=True), {c: domain[c] for c in cols},
                               children[-1]))
        self._pending = (todo, pooled_rows is not None, sizes, keys, kept, dict(domain))
        return jobs

    def finish(self, fitted: Sequence[tuple]) -> "StratifiedSynthesizer":
        """Store the fitted models of :meth:`plan`'s jobs (same order) and the strata table."""
        todo, has_pool, sizes, keys, kept, domain = self._pending
        if len(fitted) != len(todo) + int(has_pool):
            raise ValueError(f"expected {len(todo) + int(has_pool)} fitted models, got {len(fitted)}")
        self.models = {key: fitted[i][0] for i, key in enumerate(todo)}
        self.pooled_model_ = fitted[-1][0] if has_pool else None
        w = np.where(kept, sizes.to_numpy(), 0).astype(float)
        pooled_size = float(sizes.to_numpy()[~kept].sum()) if has_pool else 0.0
        denom = w.sum() + pooled_size
        table = pd.DataFrame(keys, columns=list(self.group_cols))
        table["size"] = sizes.to_numpy()
        table["kept"] = kept
        table["pooled"] = (~kept) & has_pool
        # Each group's share of the mixture; a pooled group's rows come from the pooled model.
        table["weight"] = np.where(table["pooled"], sizes.to_numpy(), w) / denom
        self.strata = table
        self.pooled_weight_ = pooled_size / denom
        self.domain_ = domain
        del self._pending
        return self

    def stratum_counts(self, m: int, *, rng=None) -> np.ndarray:
        """Records per kept stratum (and the pooled stratum last, if any) for a sample of m rows."""
        w = list(self.strata.loc[self.strata["kept"], "weight"])
        if self.pooled_model_ is not None:
            w.append(self.pooled_weight_)
        return sample_counts(w, m, mode=self.sample_mode, rng=rng)

    def sample(self, m, *, rng):
        r = as_generator(rng)
        counts = self.stratum_counts(m, rng=r)
        keys = [tuple(row) for row in self.strata.loc[self.strata["kept"], list(self.group_cols)].to_numpy()]
        parts = []
        for key, c in zip(keys, counts):
            if c <= 0:
                continue
            part = self.models[key].sample(int(c), rng=r)
            for g, v in zip(self.group_cols, key):
                part[g] = int(v)
            parts.append(part)
        if self.pooled_model_ is not None and counts[-1] > 0:
            parts.append(self.pooled_model_.sample(int(counts[-1]), rng=r))
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=self.columns_)
        return out[self.columns_].astype(np.int64)


# ---------------------------------------------------------------------------------------------------------
# Simulated categorical population (spec §5.2)
# ---------------------------------------------------------------------------------------------------------

def make_categorical_population(n: int, k: int, alpha: float, *, d: int = 4, card: int = 4,
                                heterogeneity: float = 1.0, rng) -> DiscreteTable:
    """Simulated categorical table with Dirichlet(α) group sizes and group-specific column distributions.

    Draw order (spec §5.2): Dir(α) shares → sizes; base N(0,1)^(d×card); dev N(0,1)^(k×d×card), column
    probabilities softmax(base + heterogeneity·dev); coef N(0,1)^d, intercept N(0, heterogeneity²)^k; each
    group then each column ``rng.choice``; y = U < sigmoid(intercept_g + Σ coef_j(2x_j/(card−1) − 1)).
    Columns: group, x1..xd, y.
    """
    n, k, d, card = int(n), int(k), int(d), int(card)
    if d < 1 or card < 2:
        raise ValueError(f"need d ≥ 1 and card ≥ 2, got d = {d}, card = {card}")
    r = as_generator(rng)
    w = draw_group_proportions(k, alpha, rng=r)
    sizes = proportions_to_sizes(w, n)
    base = r.normal(size=(d, card))
    dev = r.normal(size=(k, d, card))
    z = base[None] + heterogeneity * dev
    P = np.exp(z - z.max(axis=2, keepdims=True))
    P /= P.sum(axis=2, keepdims=True)
    coef = r.normal(size=d)
    intercept = r.normal(0.0, abs(heterogeneity), size=k)
    Xs, G = [], []
    for g in range(k):
        cols = [r.choice(card, size=int(sizes[g]), p=P[g, j]) for j in range(d)]
        Xs.append(np.column_stack(cols) if cols else np.empty((0, d), int))
        G.append(np.full(int(sizes[g]), g))
    X = np.vstack(Xs).astype(np.int64)
    grp = np.concatenate(G)
    logit = intercept[grp] + (coef[None, :] * (2 * X / (card - 1) - 1)).sum(axis=1)
    y = (r.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    df = pd.DataFrame({"group": grp, **{f"x{j + 1}": X[:, j] for j in range(d)}, "y": y})
    domain = {"group": k, **{f"x{j + 1}": card for j in range(d)}, "y": 2}
    labels = {"group": tuple(f"G{g + 1}" for g in range(k)), **{f"x{j + 1}": tuple(map(str, range(card)))
                                                               for j in range(d)}, "y": ("0", "1")}
    return DiscreteTable(df, domain, labels, None, ("group",), "y",
                         f"simulated categorical population (n = {n}, k = {k}, α = {alpha:g}); not real people")


# ---------------------------------------------------------------------------------------------------------
# Metrics (spec §4; S4 Def. 11, Defs. 13–14)
# ---------------------------------------------------------------------------------------------------------

def workload_error(real: pd.DataFrame, synth: pd.DataFrame, cols: Sequence[str], *, way: int = 2,
                   weights=None) -> float:
    """(1/|W|)·Σ_S c_S ‖M_S(D)/|D| − M_S(D̂)/|D̂|‖₁ over all ``way``-subsets S of ``cols`` (S4 Defs. 13–14).

    Cells are the union of both tables' cells; equals Def. 14 when |D̂| = |D|; not halved.
    """
    cols = list(cols)
    if len(real) == 0 or len(synth) == 0:
        raise ValueError("both tables must be non-empty")
    way = int(way)
    if not (1 <= way <= len(cols)):
        raise ValueError(f"way must lie in [1, {len(cols)}], got {way}")
    W = list(itertools.combinations(cols, way))
    c = np.ones(len(W)) if weights is None else np.asarray(weights, dtype=float)
    if c.size != len(W):
        raise ValueError(f"weights has {c.size} entries for {len(W)} marginals")
    R = real[cols].to_numpy(np.int64)
    S = synth[cols].to_numpy(np.int64)
    dims = np.maximum(R.max(axis=0), S.max(axis=0)) + 1
    total = 0.0
    for wgt, sub in zip(c, W):
        idx = [cols.index(a) for a in sub]
        shp = tuple(int(dims[i]) for i in idx)
        size = int(np.prod(shp))
        mr = np.bincount(np.ravel_multi_index(R[:, idx].T, shp), minlength=size) / len(R)
        ms = np.bincount(np.ravel_multi_index(S[:, idx].T, shp), minlength=size) / len(S)
        total += wgt * np.abs(mr - ms).sum()
    return float(total / len(W))


def _evaluated_strata(real: pd.DataFrame, group_cols: Sequence[str], min_frac: float):
    sizes = real.groupby(list(group_cols), sort=True).size()
    keys = [k if isinstance(k, tuple) else (k,) for k in sizes.index]
    n = len(real)
    return [(k, int(s)) for k, s in zip(keys, sizes.to_numpy()) if s > min_frac * n]


def _rows_of(df: pd.DataFrame, group_cols: Sequence[str], key: tuple) -> pd.DataFrame:
    mask = np.ones(len(df), bool)
    for c, v in zip(group_cols, key):
        mask &= df[c].to_numpy() == v
    return df[mask]


def group_workload_errors(real: pd.DataFrame, synth: pd.DataFrame, *, group_cols: Sequence[str],
                          value_cols: Sequence[str], way: int = 2, min_frac: float = 0.0) -> pd.DataFrame:
    """Workload error (Def. 14) per evaluated stratum (real size > min_frac·n) on the value columns.

    A stratum missing from the synthetic data is compared with the whole synthetic table (``fallback``).
    """
    group_cols = list(group_cols)
    for c in group_cols:
        if c not in real.columns or c not in synth.columns:
            raise ValueError(f"group column {c!r} is missing from a table")
    way = min(int(way), len(value_cols))
    rows = []
    for key, size in _evaluated_strata(real, group_cols, min_frac):
        r_ = _rows_of(real, group_cols, key)
        s_ = _rows_of(synth, group_cols, key)
        fb = len(s_) == 0
        err = workload_error(r_, synth if fb else s_, value_cols, way=way)
        rows.append({**dict(zip(group_cols, key)), "group": _key_label(key), "size": size,
                     "synth_size": len(s_), "error": err, "fallback": fb})
    return pd.DataFrame(rows)


@dataclass(frozen=True, eq=False)
class ParityReport:
    """Mean-parity error (S4 Def. 11) of a synthetic table: ``total`` = ``population_term`` + Σ per_group;
    ``per_cell`` holds |(f_g − f̂_g)/f_g| (or |f_g − f̂_g|) per group and column."""

    total: float
    population_term: float
    per_group: pd.Series
    max_disparity: float
    fallback_groups: tuple
    per_cell: pd.DataFrame = field(default_factory=pd.DataFrame)


def mean_parity(real: pd.DataFrame, synth: pd.DataFrame, *, group_cols: Sequence[str], value_cols: Sequence[str],
                omega: float | None = None, normalized: bool = True, min_frac: float = 0.0) -> ParityReport:
    """Def. 11 with f = column means of the value columns on 1-based codes (spec §2.9, §4).

    k = number of evaluated strata (real size > min_frac·n); ω defaults to 1/k (erratum E7: a sum, not an
    average). Terms whose true mean is 0 are skipped; a stratum missing from the synthetic data uses the whole
    synthetic table's means (listed in ``fallback_groups``). ``max_disparity`` = max over groups and columns.
    """
    group_cols, value_cols = list(group_cols), list(value_cols)
    strata = _evaluated_strata(real, group_cols, min_frac)
    if not strata:
        raise ValueError("no stratum is larger than min_frac·n")
    k = len(strata)
    om = 1.0 / k if omega is None else float(omega)
    if not (math.isfinite(om) and om >= 0):
        raise ValueError(f"omega must be ≥ 0, got {omega!r}")

    def f(df):
        return df[value_cols].to_numpy(float).mean(axis=0) + 1.0

    def rel(t, e):
        if normalized:
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.abs((t - e) / t)
            return np.where(t != 0, v, np.nan)
        return np.abs(t - e)

    pop = rel(f(real), f(synth))
    cells, fallback = {}, []
    for key, _ in strata:
        s_ = _rows_of(synth, group_cols, key)
        lab = _key_label(key)
        if len(s_) == 0:
            fallback.append(lab)
            s_ = synth
        cells[lab] = rel(f(_rows_of(real, group_cols, key)), f(s_))
    per_cell = pd.DataFrame(cells, index=value_cols).T
    per_group = per_cell.sum(axis=1, skipna=True)
    pop_term = om * float(np.nansum(pop))
    return ParityReport(float(pop_term + per_group.sum()), pop_term, per_group,
                        float(np.nanmax(per_cell.to_numpy())) if per_cell.size else float("nan"),
                        tuple(fallback), per_cell)


def _one_hot(df: pd.DataFrame, cols: Sequence[str], domain: Mapping[str, int]):
    from sklearn.preprocessing import OneHotEncoder

    enc = OneHotEncoder(categories=[np.arange(int(domain[c])) for c in cols], handle_unknown="ignore")
    enc.fit(np.zeros((1, len(cols)), dtype=np.int64))
    return enc


def _int_seed(rng) -> int:
    """An integer seed from ``rng``: an integer ≥ 0 is itself; anything else ``as_generator`` takes gives its next
    draw below 2³² (a Generator's stream advances), so one call site fixes every seed derived below it."""
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        as_generator(rng)  # the shared domain check and message (≥ 0)
        return int(rng)
    return int(as_generator(rng).integers(2**32))


def predict_label(train: pd.DataFrame, test: pd.DataFrame, *, feature_cols: Sequence[str], label_col: str,
                  domain: Mapping[str, int], classifier: str = "logreg", rng=0) -> np.ndarray:
    """Fit a classifier on ``train`` (one-hot features from ``domain``) and predict ``test``'s label.

    ``"logreg"``: ``LogisticRegression(max_iter=1000)``; ``"forest"``: ``RandomForestClassifier(n_estimators=100,
    random_state=s)`` with s the integer seed of ``rng`` (see ``_int_seed``). A single-class training label
    predicts that class.
    """
    feature_cols = list(feature_cols)
    y = train[label_col].to_numpy(np.int64)
    if set(np.unique(test[label_col])) - {0, 1} or set(np.unique(y)) - {0, 1}:
        raise ValueError(f"the label {label_col!r} must be binary (codes 0/1) for classifier metrics")
    classes = np.unique(y)
    if classes.size < 2:
        return np.full(len(test), int(classes[0]) if classes.size else 0, dtype=np.int64)
    enc = _one_hot(train, feature_cols, domain)
    Xtr = enc.transform(train[feature_cols].to_numpy(np.int64))
    Xte = enc.transform(test[feature_cols].to_numpy(np.int64))
    if classifier == "logreg":
        from sklearn.linear_model import LogisticRegression

        clf = LogisticRegression(max_iter=1000)
    elif classifier == "forest":
        from sklearn.ensemble import RandomForestClassifier

        clf = RandomForestClassifier(n_estimators=100, random_state=_int_seed(rng), n_jobs=2)
    else:
        raise ValueError(f"classifier must be 'logreg' or 'forest', got {classifier!r}")
    clf.fit(Xtr, y)
    return clf.predict(Xte).astype(np.int64)


def downstream_accuracy(train: pd.DataFrame, test: pd.DataFrame, *, feature_cols: Sequence[str], label_col: str,
                        domain: Mapping[str, int], classifier: str = "logreg", rng=0) -> float:
    """Accuracy on the real holdout ``test`` of a classifier trained on ``train`` (usually synthetic) (spec §4)."""
    pred = predict_label(train, test, feature_cols=feature_cols, label_col=label_col, domain=domain,
                         classifier=classifier, rng=rng)
    return float(np.mean(pred == test[label_col].to_numpy(np.int64)))


def demographic_parity_ratio(y_pred, groups) -> float:
    """min_g P(ŷ=1 | g) / max_g P(ŷ=1 | g); NaN if the maximum is 0 (spec §4)."""
    yp = np.asarray(y_pred).ravel()
    g = np.asarray(groups).ravel()
    if yp.size != g.size or yp.size == 0:
        raise ValueError("y_pred and groups must be non-empty and of equal length")
    rates = pd.Series(yp == 1).groupby(g).mean()
    mx = rates.max()
    return float("nan") if mx == 0 else float(rates.min() / mx)


def fnr_difference(y_true, y_pred, groups) -> float:
    """max_g FNR_g − min_g FNR_g over groups with at least one positive (spec §4)."""
    yt = np.asarray(y_true).ravel()
    yp = np.asarray(y_pred).ravel()
    g = np.asarray(groups).ravel()
    if not (yt.size == yp.size == g.size) or yt.size == 0:
        raise ValueError("y_true, y_pred and groups must be non-empty and of equal length")
    pos = yt == 1
    if not pos.any():
        return float("nan")
    fnr = pd.Series(yp[pos] == 0).groupby(g[pos]).mean()
    return float(fnr.max() - fnr.min())


@dataclass(frozen=True, eq=False)
class SynthMetrics:
    accuracy: float
    majority_baseline: float
    real_baseline: float
    dpr: float
    fnr_difference: float
    parity: ParityReport
    workload_global: float
    workload_per_group: pd.DataFrame


def _group_labels(df: pd.DataFrame, group_cols: Sequence[str]) -> np.ndarray:
    return np.array([_key_label(tuple(r)) for r in df[list(group_cols)].to_numpy()], dtype=object)


def synth_metrics(real_train: pd.DataFrame, real_test: pd.DataFrame, synth: pd.DataFrame, *,
                  domain: Mapping[str, int], group_cols: Sequence[str], value_cols: Sequence[str],
                  label_col: str | None, omega: float | None = None, way: int = 2, classifier: str = "logreg",
                  rng=0, min_frac: float = 0.001, real_baseline: float | None = None) -> SynthMetrics:
    """Utility and fairness of a synthetic table (spec §4): workload and parity against ``real_train``; a
    classifier trained on ``synth`` and tested on ``real_test`` (accuracy, DPR, FNR difference), with the
    majority and real-trained baselines. ``real_baseline`` may be passed in to avoid refitting."""
    seed = _int_seed(rng)
    cols = [c for c in domain if c in real_train.columns]
    wl = workload_error(real_train, synth, cols, way=min(way, len(cols)))
    per_group = group_workload_errors(real_train, synth, group_cols=group_cols, value_cols=value_cols,
                                      way=way, min_frac=min_frac)
    parity = mean_parity(real_train, synth, group_cols=group_cols, value_cols=value_cols, omega=omega,
                         min_frac=min_frac)
    acc = maj = base = dpr = fnr = float("nan")
    if label_col is not None and real_test is not None and len(real_test):
        feats = [c for c in cols if c != label_col]
        yt = real_test[label_col].to_numpy(np.int64)
        majority = int(real_train[label_col].mode().iloc[0])
        maj = float(np.mean(yt == majority))
        pred = predict_label(synth, real_test, feature_cols=feats, label_col=label_col, domain=domain,
                             classifier=classifier, rng=seed)
        acc = float(np.mean(pred == yt))
        if real_baseline is None:
            real_baseline = downstream_accuracy(real_train, real_test, feature_cols=feats, label_col=label_col,
                                                domain=domain, classifier=classifier, rng=seed)
        base = float(real_baseline)
        groups = _group_labels(real_test, group_cols)
        dpr = demographic_parity_ratio(pred, groups)
        fnr = fnr_difference(yt, pred, groups)
    return SynthMetrics(acc, maj, base, dpr, fnr, parity, wl, per_group)


def train_test_split_table(table: DiscreteTable, *, rng=0, test_frac: float = 0.3,
                           columns: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train/test frames: the table's own split (Adult's test file) or a ``test_frac`` split drawn from ``rng``."""
    df = table.df if columns is None else table.df[list(columns)]
    if table.split is not None and set(np.unique(table.split)) >= {"train", "test"}:
        tr = np.asarray(table.split) == "train"
        return df[tr].reset_index(drop=True), df[~tr].reset_index(drop=True)
    perm = as_generator(rng).permutation(len(df))
    n_test = int(round(test_frac * len(df)))
    return df.iloc[perm[n_test:]].reset_index(drop=True), df.iloc[perm[:n_test]].reset_index(drop=True)


def metrics_long(m: SynthMetrics) -> pd.DataFrame:
    """One SynthMetrics as long rows (metric, group, value); group "all" for global metrics."""
    rows = [("accuracy", "all", m.accuracy), ("majority_baseline", "all", m.majority_baseline),
            ("real_baseline", "all", m.real_baseline), ("dpr", "all", m.dpr),
            ("fnr_difference", "all", m.fnr_difference), ("parity_total", "all", m.parity.total),
            ("parity_population", "all", m.parity.population_term),
            ("max_disparity", "all", m.parity.max_disparity), ("workload_global", "all", m.workload_global)]
    for _, r in m.workload_per_group.iterrows():
        rows.append(("workload_group", r["group"], float(r["error"])))
    for g, v in m.parity.per_group.items():
        rows.append(("parity_group", g, float(v)))
    return pd.DataFrame(rows, columns=["metric", "group", "value"])


def run_synth_experiment(table: DiscreteTable, *, synthesizer: str, epsilons, group_cols: Sequence[str],
                         columns: Sequence[str] | None = None, reps: int = 1, rng=0, min_frac: float = 0.001,
                         sample_mode: str = "largest_remainder", synth_options: dict | None = None,
                         progress: ProgressFn | None = None) -> pd.DataFrame:
    """Vanilla vs stratified synthesis over ε and reps; long format (rep, epsilon, variant, metric, group, value).

    Synthesizers are fit on the train split, sampled to the train size, and evaluated with
    :func:`synth_metrics` against the train split (workload, parity) and the real holdout (classifier).
    """
    if synthesizer not in SYNTHESIZERS:
        raise ValueError(f"unknown synthesizer {synthesizer!r}; expected one of {SYNTHESIZERS}")
    eps_list = [float(e) for e in np.atleast_1d(epsilons)]
    for e in eps_list:
        check_epsilon(e)
    cols = list(columns) if columns is not None else list(table.df.columns)
    for c in group_cols:
        if c not in cols:
            raise ValueError(f"group column {c!r} is not among the columns {cols}")
    domain = {c: table.domain[c] for c in cols}
    seed = _int_seed(rng)
    train, test = train_test_split_table(table, rng=seed, columns=cols)
    value_cols = [c for c in cols if c not in group_cols]
    label = table.label_col if table.label_col in cols else None
    opts = dict(synth_options or {})
    base = None
    if label is not None:
        feats = [c for c in cols if c != label]
        base = downstream_accuracy(train, test, feature_cols=feats, label_col=label, domain=domain, rng=seed)
    root = np.random.SeedSequence(seed)
    jobs = [(rep, e) for rep in range(int(reps)) for e in eps_list]
    child = root.spawn(len(jobs))
    frames = []
    for j, ((rep, e), sq) in enumerate(zip(jobs, child)):
        r = np.random.default_rng(sq)
        for variant in ("vanilla", "stratified"):
            def prog(f, msg, j=j, variant=variant):
                if progress is not None:
                    step = 2 * j + (variant == "stratified")
                    progress((step + f) / (2 * len(jobs)), f"ε = {e:g}, rep {rep + 1}, {variant}: {msg}")
            if variant == "vanilla":
                model = make_synthesizer(synthesizer, epsilon=e, **opts)
            else:
                model = StratifiedSynthesizer(lambda: make_synthesizer(synthesizer, epsilon=e, **opts), group_cols,
                                              min_frac=min_frac, sample_mode=sample_mode)
            model.fit(train, domain, rng=r, progress=prog)
            synth = model.sample(len(train), rng=r)
            m = synth_metrics(train, test, synth, domain=domain, group_cols=group_cols, value_cols=value_cols,
                              label_col=label, rng=seed, min_frac=min_frac, real_baseline=base)
            long = metrics_long(m)
            long.insert(0, "variant", variant)
            long.insert(0, "epsilon", e)
            long.insert(0, "rep", rep)
            frames.append(long)
    _report(progress, 1.0, "Done")
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True, eq=False)
class SynthRun:
    """One fitted variant: the synthetic sample (codes), its metrics, and the strata table (stratified only)."""

    variant: str
    synthetic: pd.DataFrame
    metrics: SynthMetrics
    strata: pd.DataFrame | None
    epsilon: float
    delta: float


def fit_and_evaluate(train: pd.DataFrame, test: pd.DataFrame, *, domain: Mapping[str, int], synthesizer: str,
                     epsilon: float, variant: str, group_cols: Sequence[str], label_col: str | None, rng=0,
                     min_frac: float = 0.001, small_strata: str = "drop", sample_mode: str = "largest_remainder",
                     synth_options: dict | None = None, real_baseline: float | None = None,
                     classifier: str = "logreg", progress: ProgressFn | None = None, n_jobs: int = 1) -> SynthRun:
    """Fit a vanilla or stratified synthesizer on ``train``, sample |train| rows, and compute :func:`synth_metrics`.

    Randomness: ``np.random.default_rng([s, variant code])`` with s the integer seed of ``rng`` (``rng`` itself
    when it is an integer), so the vanilla and stratified runs of one seed
    are reproducible independently of each other (and of ``n_jobs``; see :func:`fit_and_evaluate_variants`).
    """
    return fit_and_evaluate_variants(
        train, test, domain=domain, synthesizer=synthesizer, epsilon=epsilon, variants=(variant,),
        group_cols=group_cols, label_col=label_col, rng=rng, min_frac=min_frac, small_strata=small_strata,
        sample_mode=sample_mode, synth_options=synth_options, real_baseline=real_baseline, classifier=classifier,
        progress=progress, n_jobs=n_jobs)[variant]


def fit_and_evaluate_variants(train: pd.DataFrame, test: pd.DataFrame, *, domain: Mapping[str, int],
                              synthesizer: str, epsilon: float, variants: Sequence[str] = ("vanilla", "stratified"),
                              group_cols: Sequence[str], label_col: str | None, rng=0,
                              min_frac: float = 0.001, small_strata: str = "drop",
                              sample_mode: str = "largest_remainder", synth_options: dict | None = None,
                              real_baseline: float | None = None, classifier: str = "logreg",
                              progress: ProgressFn | None = None, n_jobs: int = 1) -> dict[str, SynthRun]:
    """:func:`fit_and_evaluate` for several variants at once, all fits in one pool of ``n_jobs`` processes.

    The jobs are the vanilla model and every stratum's model (so the stratified variant is spread over the
    cores too, not just run beside the vanilla one). Each variant keeps its own generator
    ``default_rng([s, 0 | 1])`` (s: the integer seed of ``rng``) and each stratum its ``spawn`` child, so the
    result is identical to calling :func:`fit_and_evaluate` per variant, for any ``n_jobs``. ``progress`` runs
    from 0 to 1 over the fits (the metrics that follow take about a second).

    References
    ----------
    Seed ``004_c5ca305e20a1adba.txt``, *Stratified Data Synthesis* (L216–238); spec §4.
    """
    variants = tuple(variants)
    for v in variants:
        if v not in ("vanilla", "stratified"):
            raise ValueError(f"variant must be 'vanilla' or 'stratified', got {v!r}")
    opts = dict(synth_options or {})
    seed = _int_seed(rng)
    models, rngs, jobs, slots = {}, {}, [], {}
    for v in variants:
        r = np.random.default_rng([int(seed), 0 if v == "vanilla" else 1])
        if v == "vanilla":
            model = make_synthesizer(synthesizer, epsilon=epsilon, **opts)
            slots[v] = (len(jobs), len(jobs) + 1)
            jobs.append(FitJob(f"Vanilla {SYNTH_LABELS.get(synthesizer, synthesizer)}", model, train, dict(domain),
                               r))
        else:
            model = StratifiedSynthesizer(partial(make_synthesizer, synthesizer, epsilon=epsilon, **opts),
                                          group_cols, min_frac=min_frac, small_strata=small_strata,
                                          sample_mode=sample_mode)
            planned = model.plan(train, domain, rng=r)
            slots[v] = (len(jobs), len(jobs) + len(planned))
            jobs.extend(planned)
        models[v], rngs[v] = model, r
    fitted = run_fit_jobs(jobs, n_jobs=n_jobs, progress=progress)
    value_cols = [c for c in domain if c not in group_cols]
    out = {}
    for v in variants:
        lo, hi = slots[v]
        if v == "vanilla":
            model, r = fitted[lo]
        else:
            model, r = models[v].finish(fitted[lo:hi]), rngs[v]
        synth = model.sample(len(train), rng=r)
        m = synth_metrics(train, test, synth, domain=domain, group_cols=group_cols, value_cols=value_cols,
                          label_col=label_col, rng=seed, min_frac=min_frac, real_baseline=real_baseline,
                          classifier=classifier)
        out[v] = SynthRun(v, synth, m, getattr(model, "strata", None), float(model.epsilon), float(model.delta))
    return out


def decode_table(df: pd.DataFrame, labels: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Replace integer codes by their labels (columns without labels are kept as codes)."""
    out = df.copy()
    for c in out.columns:
        if c in labels:
            lab = np.asarray(labels[c], dtype=object)
            out[c] = lab[out[c].to_numpy(np.int64)]
    return out
