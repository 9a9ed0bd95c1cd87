"""Tables and Plotly figures for the sampling designer (pure functions; never imports streamlit).

Each plot has a ``*_table`` function (the numbers behind it, exported as CSV) and a ``make_*_figure``
function that draws that table. All numbers come from ``dpdash.sampling.core``.

References
----------
003_4b386133f61617e9.txt, paper 1 (Bun, Drechsler, Gaboardi, McMillan, Sarathy, FORC 2022); spec
``shared/specs/sampling_designer.md`` §7 (plots P1–P9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpdash.common import figure_marks as fm
from dpdash.sampling import core as sp
from dpdash.common.formatting import log_axis
from dpdash.common.palette import PALETTE as OKABE_ITO

GREY = "#8c8c8c"
RED_ZONE = "rgba(213, 94, 0, 0.12)"

MAX_POINTS = 2000

# Figures are built in one go (traces + one layout dict; marker lines as plain layout shapes). Each add_trace,
# update_layout and above all add_vline/add_hline call runs Plotly's update machinery again (~10 ms per line,
# profiled), which had made figure building the largest server-side share of a slider redraw.


def _vline(x: float, *, color: str, dash: str, label: str | None = None) -> tuple[dict, list[dict]]:
    """A full-height vertical line at data x, labelled above the plot (``figure_marks.vline_spec``)."""
    shape, note = fm.vline_spec(x, line=dict(color=color, dash=dash), annotation_text=label,
                                annotation_position="top")
    return shape, [] if note is None else [note]


def _hline(y: float, *, color: str, dash: str, label: str | None = None) -> tuple[dict, list[dict]]:
    """A full-width horizontal line at data y, labelled top right (``figure_marks.hline_spec``)."""
    shape, note = fm.hline_spec(y, line=dict(color=color, dash=dash), annotation_text=label)
    return shape, [] if note is None else [note]


# ----------------------------------------------------------------------------------------------------------
# P1 ε′ vs sampling rate
# ----------------------------------------------------------------------------------------------------------

def rate_curve_table(*, epsilon: float, n: int, points: int = 200, rate_min: float = 1e-4) -> pd.DataFrame:
    """ε′ against the sampling rate q for every simple scheme, the rounding design and the paper shortcut."""
    q = np.logspace(math.log10(rate_min), 0, points)
    eps = float(epsilon)
    exact = sp.amplification_map(q, eps)
    # SRSWR at m = q·n draws
    eta = sp.srswr_inclusion(q * n, n)
    # Theorem 6: log1p(2q·z) + log1p(q·z) with z = expm1(2ε), as in amplify_randomized_rounding
    rounding = sp.amplification_map(2 * q, 2 * eps) + sp.amplification_map(q, 2 * eps)
    return pd.DataFrame({"rate": q, "srswor": exact, "poisson": exact, "srswr_external": sp.amplification_map(eta, eps),
                         "randomized_rounding_thm6": rounding, "paper_shortcut": q * eps})


def make_rate_figure(df: pd.DataFrame, *, epsilon: float, schemes: Sequence[str], current_rate: float,
                     show_rounding: bool = True, cluster_band: tuple[float, float, float] | None = None
                     ) -> go.Figure:
    """P1: ε′ vs rate (log x) with y = ε and the degradation zone above it shaded."""
    rate = df["rate"].to_numpy()
    ymax = float(max(epsilon * 1.6, np.nanmax(df["srswor"].to_numpy()) * 1.05))
    if show_rounding:
        ymax = max(ymax, min(float(df["randomized_rounding_thm6"].max()), epsilon * 3))
    x0, x1 = float(rate[0]), float(rate[-1])
    traces = [go.Scatter(x=[x0, x1, x1, x0], y=[epsilon, epsilon, ymax, ymax], fill="toself", fillcolor=RED_ZONE,
                         line=dict(width=0), hoverinfo="skip", mode="lines",
                         name="worse than no sampling (ε′ > ε)"),
              go.Scatter(x=[x0, x1], y=[epsilon, epsilon], mode="lines", name="ε on the sample (no gain)",
                         line=dict(color="black", dash="dot", width=2))]
    labels = {"SRSWOR": ("srswor", "SRS without replacement (Thm 2)", OKABE_ITO[0], "solid"),
              "Poisson": ("poisson", "Poisson [BBG18, external]", OKABE_ITO[5], "dash"),
              "SRSWR": ("srswr_external", "SRS with replacement, ε-part [external]", OKABE_ITO[4], "dashdot")}
    drawn = [s for s in schemes if s in labels]
    if "SRSWOR" in drawn and "Poisson" in drawn:
        # Theorem 2 and [BBG18] give the same curve log1p(q·expm1(ε)): one line, both names
        drawn.remove("Poisson")
        labels["SRSWOR"] = ("srswor", "SRS without replacement (Thm 2) = Poisson [BBG18, external]", OKABE_ITO[0],
                            "solid")
    for s in drawn:
        col, name, colour, dash = labels[s]
        traces.append(go.Scatter(x=rate, y=df[col].to_numpy(), mode="lines", name=name,
                                 line=dict(color=colour, dash=dash)))
    traces.append(go.Scatter(x=rate, y=df["paper_shortcut"].to_numpy(), mode="lines",
                             name="paper shortcut q·ε (do not use)", line=dict(color=GREY, dash="dash", width=2)))
    if show_rounding:
        # not capped at ymax: a capped curve would draw a flat line that is not there; the axis clips it
        traces.append(go.Scatter(x=rate, y=df["randomized_rounding_thm6"].to_numpy(),
                                 mode="lines", name="randomised rounding (Thm 6)", line=dict(color=OKABE_ITO[1])))
    if cluster_band is not None:
        qc, lo, hi = cluster_band
        traces.append(go.Scatter(x=[qc, qc], y=[lo, hi], mode="lines+markers",
                                 name="cluster design of the Cluster tab (Thm 7–8, at ℓ/k)",
                                 line=dict(color=OKABE_ITO[2], width=6),
                                 marker=dict(size=14, symbol="x", color=OKABE_ITO[2])))
    cur = float(sp.amplification_map(current_rate, epsilon))
    traces.append(go.Scatter(x=[current_rate], y=[cur], mode="markers", name="your design",
                             marker=dict(color="black", size=12, symbol="diamond")))
    return go.Figure(data=traces, layout=dict(
        title="Population ε′ against sampling rate", xaxis=log_axis(x0, x1, title="sampling rate q = m/n"),
        yaxis=dict(title="population ε′", range=[0, ymax]), legend=dict(orientation="h", y=-0.35)))


# ----------------------------------------------------------------------------------------------------------
# P2 / P3 random sample size
# ----------------------------------------------------------------------------------------------------------

def sigma_curve_table(*, n: int, mean: float, epsilon: float, points: int = 40, current_sd: float | None = None,
                      current: sp.RandomSizeBounds | None = None) -> pd.DataFrame:
    """Theorem 3 bounds for the discretised Gaussian size law as σ runs over a log grid 1 … n/10.

    ``current`` (the card's :class:`~dpdash.sampling.core.RandomSizeBounds` at σ = ``current_sd``) is inserted as
    its own row, flagged in the ``current`` column, so the card, the chart's marker and the CSV show one result.
    """
    sds = np.logspace(0, math.log10(max(n / 10, 1.0 + 1e-9)), points)
    if n <= sp.MAX_RANDOM_SIZE_N:
        tm = sp.truncnorm_tilted_means(n, mean=mean, sds=sds, epsilon=epsilon, untilted=False, with_rest=True)
        tilted = tm[:, 1]
        with np.errstate(divide="ignore"):
            lf, lr = np.log(tm[:, 1] / n), np.log(tm[:, 2] / n)
    else:   # census sizes: windowed / Euler–Maclaurin sums, cost independent of n (dpdash.sampling.census)
        from dpdash.sampling import census as cs

        fr = cs.sigma_fractions(n, mean=mean, sds=sds, epsilon=epsilon)
        tilted, lf, lr = fr[:, 0], fr[:, 1], fr[:, 2]
    lower, upper = sp.theorem3_bounds_from_fraction(lf, lr, epsilon=epsilon)
    df = pd.DataFrame({"sd": sds, "tilted_mean": tilted, "lower": lower, "upper": upper,
                       "paper_shortcut": tilted / n * epsilon, "current": False})
    if current is not None and current_sd is not None:
        row = pd.DataFrame({"sd": [float(current_sd)], "tilted_mean": [current.tilted_mean],
                            "lower": [current.epsilon_lower], "upper": [current.epsilon_upper],
                            "paper_shortcut": [current.epsilon_paper_approx], "current": [True]})
        df = pd.concat([df[df["sd"] != float(current_sd)], row]).sort_values("sd", kind="stable")
    return df.reset_index(drop=True)


def make_sigma_figure(df: pd.DataFrame, *, epsilon: float, current_sd: float | None = None) -> go.Figure:
    """P2: Theorem 3 lower and upper bounds against σ (Figure 2 of the paper), with y = ε and y = ε/2.

    The row flagged ``current`` (the cards' values) is marked; σ = 0 cannot sit on the log axis and is left out.
    """
    df = df[df["sd"] > 0]
    sd = df["sd"].to_numpy()
    x0, x1 = float(sd.min()), float(sd.max())
    traces = [go.Scatter(x=sd, y=df["upper"].to_numpy(), mode="lines", name="upper bound (Thm 3)",
                         line=dict(color=OKABE_ITO[0])),
              go.Scatter(x=sd, y=df["lower"].to_numpy(), mode="lines", name="lower bound (Thm 3)",
                         line=dict(color=OKABE_ITO[1], dash="dash")),
              go.Scatter(x=[x0, x1], y=[epsilon] * 2, mode="lines", name="ε (no amplification)",
                         line=dict(color="black", dash="dot", width=2)),
              go.Scatter(x=[x0, x1], y=[epsilon / 2] * 2, mode="lines", name="ε/2",
                         line=dict(color=GREY, dash="dot", width=2))]
    if "current" in df and df["current"].any():
        cur = df[df["current"]]
        traces.append(go.Scatter(x=cur["sd"].to_numpy().repeat(2), y=[cur["upper"].iloc[0], cur["lower"].iloc[0]],
                                 mode="markers", name="your design (the cards)",
                                 marker=dict(color=OKABE_ITO[3], size=10, symbol="x")))
    shapes = []
    if current_sd is not None and x0 <= current_sd <= x1:
        shapes.append(_vline(current_sd, color=OKABE_ITO[3], dash="dash")[0])   # shapes take data x on log axes
    return go.Figure(data=traces, layout=dict(
        title="Random sample size: bounds against its spread σ", shapes=shapes,
        xaxis=log_axis(x0, x1, title="standard deviation σ of the sample size"),
        yaxis=dict(title="population ε′", range=[0, 1.08 * epsilon], rangemode="tozero"),
        legend=dict(orientation="h", y=-0.35)))


def size_pmf_table(law: sp.SizeLaw | np.ndarray, *, epsilon: float, max_points: int = MAX_POINTS) -> pd.DataFrame:
    """t and the tilted t̃ on the sizes that carry mass, binned to at most ``max_points`` rows.

    Both come from the law's log-probabilities (logsumexp), so the tilted curve is right where t underflows.
    """
    if not isinstance(law, sp.SizeLaw):
        with np.errstate(divide="ignore"):
            law = sp.SizeLaw(np.log(np.asarray(law, dtype=float)))
    p = law.pmf
    tilt = sp.tilted_law(law, epsilon=epsilon).pmf
    peak = max(p.max(), tilt.max())
    keep = np.flatnonzero(np.maximum(p, tilt) >= 1e-12 * peak)
    a, b = int(keep.min()), int(keep.max())
    a, b = max(0, a - 1), min(p.size - 1, b + 1)
    width = max(1, math.ceil((b - a + 1) / max_points))
    starts = np.arange(a, b + 1, width)
    t_bin = np.add.reduceat(p[a:b + 1], starts - a)
    tt_bin = np.add.reduceat(tilt[a:b + 1], starts - a)
    ends = np.minimum(starts + width - 1, b)
    return pd.DataFrame({"size_from": starts, "size_to": ends, "t": t_bin, "t_tilted": tt_bin})


@dataclass(frozen=True)
class RandomSizeView:
    """Everything the Random sample size tab shows, from one computation: cards, calibration, P2 and P3 tables."""

    bounds: sp.RandomSizeBounds
    calibration: sp.Calibration
    pmf_table: pd.DataFrame
    sigma_table: pd.DataFrame


def random_size_view(law: sp.SizeLaw, *, epsilon: float, epsilon_target: float, mean: float,
                     current_sd: float | None, points: int = 40) -> RandomSizeView:
    """Theorem 3 for ``law`` plus the σ-curve at ``mean`` whose row at ``current_sd`` (the Gaussian family's σ;
    None for other families) is the same :class:`~dpdash.sampling.core.RandomSizeBounds` the cards show."""
    b = sp.amplify_random_size(law, epsilon=epsilon)
    cal = sp.calibrate_random_size(law, epsilon_target=epsilon_target)
    sig = sigma_curve_table(n=law.n, mean=mean, epsilon=epsilon, points=points, current_sd=current_sd,
                            current=b if current_sd is not None else None)
    return RandomSizeView(b, cal, size_pmf_table(law, epsilon=epsilon), sig)


def make_pmf_figure(df: pd.DataFrame, *, tilted_mean: float) -> go.Figure:
    """P3: the size law t and its tilted version t̃ ∝ e^{εm}t(m), whose mean drives Theorem 3.

    Each curve is drawn relative to its own most likely size (peak = 1): the tilted law is often a spike at n
    while t is spread out, and on one probability axis one of them would be a flat line at 0. The x range stops
    where both curves fall below 0.1% of their peaks (the CSV keeps the probabilities).
    """
    lo, hi = df["size_from"].to_numpy(), df["size_to"].to_numpy()
    x = (lo + hi) / 2
    t, tt = df["t"].to_numpy(), df["t_tilted"].to_numpy()
    rt, rtt = t / max(t.max(), 1e-300), tt / max(tt.max(), 1e-300)
    keep = np.flatnonzero(np.maximum(rt, rtt) >= 1e-3)
    x0, x1 = (float(x[keep.min()]), float(x[keep.max()])) if keep.size else (float(x[0]), float(x[-1]))
    if x1 - x0 < 2:
        x0, x1 = x0 - 1, x1 + 1
    pad = 0.02 * (x1 - x0)
    hover = "size %{x:,.0f}<br>%{y:.3g} of its peak<extra></extra>"
    traces = [go.Scatter(x=x, y=rt, mode="lines", name="t: how likely each sample size is",
                         line=dict(color=OKABE_ITO[0], shape="hv"), hovertemplate=hover),
              go.Scatter(x=x, y=rtt, mode="lines", name="t̃: the same, weighted by e^(ε·m) (drives the bound)",
                         line=dict(color=OKABE_ITO[1], shape="hv", dash="dash"), hovertemplate=hover)]
    # the label goes on the side with room (a weighted mean at n would push it off the right edge)
    shape, note = fm.vline_spec(tilted_mean, line=dict(color=OKABE_ITO[3], dash="dot"),
                                annotation_text=f"weighted mean {tilted_mean:,.0f}",
                                annotation_position="top left" if tilted_mean > (x0 + x1) / 2 else "top right")
    notes = [note]
    return go.Figure(data=traces, layout=dict(
        title="Sample-size distribution and its tilt", shapes=[shape], annotations=notes,
        xaxis=dict(title="sample size m", range=[x0 - pad, x1 + pad]),
        yaxis=dict(title="chance ÷ peak", range=[0, 1.12], tickvals=[0, 0.25, 0.5, 0.75, 1]),
        legend=dict(orientation="h", y=-0.35)))


# ----------------------------------------------------------------------------------------------------------
# P4 rounding sawtooth
# ----------------------------------------------------------------------------------------------------------

def sawtooth_table(*, epsilon: float, rate: float, n_min: int, n_max: int) -> pd.DataFrame:
    """Size-channel loss for each neighbouring pair (N, N+1) under both rounding rules."""
    N, det = sp.size_channel_curve(epsilon=epsilon, rate=rate, method="deterministic", n_min=n_min, n_max=n_max)
    _, rnd = sp.size_channel_curve(epsilon=epsilon, rate=rate, method="randomized", n_min=n_min, n_max=n_max)
    return pd.DataFrame({"population_size": N, "deterministic": det, "randomized": rnd})


def make_sawtooth_figure(df: pd.DataFrame, *, epsilon: float, theorem6: float, worst_channel: float) -> go.Figure:
    """P4: what a released sample size reveals, per population size, for both rounding rules."""
    x = df["population_size"].to_numpy()
    x0, x1 = float(x.min()), float(x.max())
    traces = [go.Scatter(x=x, y=df["deterministic"].to_numpy(), mode="lines", name="deterministic rounding",
                         line=dict(color=OKABE_ITO[3], shape="hv")),
              go.Scatter(x=x, y=df["randomized"].to_numpy(), mode="lines", name="randomised rounding",
                         line=dict(color=OKABE_ITO[0])),
              go.Scatter(x=[x0, x1], y=[theorem6] * 2, mode="lines", name="Theorem 6 bound (all mechanisms)",
                         line=dict(color=OKABE_ITO[1], dash="dash")),
              go.Scatter(x=[x0, x1], y=[worst_channel] * 2, mode="lines",
                         name="most a size can reveal with randomised rounding",
                         line=dict(color=OKABE_ITO[2], dash="dot")),
              go.Scatter(x=[x0, x1], y=[epsilon] * 2, mode="lines", name="ε",
                         line=dict(color="black", dash="dot", width=2))]
    return go.Figure(data=traces, layout=dict(
        title="What a released sample size reveals (size channel)", xaxis=dict(title="population size N (pair N, N+1)"),
        yaxis=dict(title="loss from the size", rangemode="tozero"), legend=dict(orientation="h", y=-0.35)))


# ----------------------------------------------------------------------------------------------------------
# P5 / P6 cluster sampling
# ----------------------------------------------------------------------------------------------------------

def cluster_heatmap_table(*, n_clusters: int, n_drawn: int, size_points: int = 60, eps_points: int = 60,
                          size_max: float = 1000.0) -> pd.DataFrame:
    """ε′/ε of Theorems 7–8 for equal cluster sizes c (N = 2c) over a grid of c and ε (long format)."""
    sizes = np.concatenate([[0.0], np.logspace(0, math.log10(size_max), size_points - 1)])
    eps = np.logspace(-3, 1, eps_points)
    q = n_drawn / n_clusters
    C, E = np.meshgrid(sizes, eps, indexing="ij")
    val = sp.cluster_amplification(E, q, 2 * C)
    return pd.DataFrame({"cluster_size": C.ravel(), "epsilon": E.ravel(), "ratio": (val / E).ravel()})


def make_cluster_heatmap(df: pd.DataFrame, *, current_size: float | None, current_epsilon: float) -> go.Figure:
    """P5: share of ε that survives cluster sampling, over cluster size and ε (equal sizes).

    Both axes are log axes with ticks at 1, 2, 5 per decade; size 0 cannot sit on a log axis, so it is drawn at
    0.5 and its tick reads "0".
    """
    sizes = np.unique(df["cluster_size"])
    eps = np.unique(df["epsilon"])
    z = df.pivot(index="epsilon", columns="cluster_size", values="ratio").loc[eps, sizes].to_numpy()
    xs = np.where(sizes == 0, 0.5, sizes)
    xaxis = log_axis(float(xs.min()), float(xs.max()), title="records per cluster", pad=0)
    # the size-0 column always gets its own tick (log_axis thins to one tick per decade over wide ranges)
    ticks = [(v, t) for v, t in zip(xaxis["tickvals"], xaxis["ticktext"]) if v > 0.5]
    xaxis["tickvals"] = [0.5] + [v for v, _ in ticks]
    xaxis["ticktext"] = ["0"] + [t for _, t in ticks]
    traces = [go.Heatmap(x=xs, y=eps, z=z, zmin=0, zmax=1, colorscale="Cividis",
                         colorbar=dict(title="share of ε<br>kept", tickvals=[0, 0.25, 0.5, 0.75, 1],
                                       ticktext=["0", "25%", "50%", "75%", "100%"]),
                         hovertemplate="cluster size %{x:,.0f}<br>ε %{y:.3g}<br>share of ε kept %{z:.1%}"
                                       "<extra></extra>")]
    if current_size is not None:
        traces.append(go.Scatter(x=[max(current_size, 0.5)], y=[current_epsilon], mode="markers",
                                 name="your design", marker=dict(color=OKABE_ITO[3], size=14, symbol="x")))
    return go.Figure(data=traces, layout=dict(
        title="How much of ε survives cluster sampling (equal cluster sizes)", xaxis=xaxis,
        yaxis=log_axis(float(eps.min()), float(eps.max()), title="ε per record on the sample", pad=0),
        showlegend=False))


#: Beyond this many clusters the guarantee figure shows the size histogram (spec P6).
MAX_BAR_CLUSTERS = 200
#: Up to this many distinct cluster sizes the guarantee figure draws grouped bars (one pair per size); beyond,
#: markers on a numeric axis (no long row of category labels).
MAX_BAR_SIZES = 12


def cluster_bars_table(sizes: Sequence[float], bounds: sp.ClusterBounds) -> pd.DataFrame:
    """One row per distinct cluster size: how many clusters have it and the Theorem 7 lower / Theorem 8 upper bound
    for a record joining one of them (clusters of equal size share their bounds: the other clusters' extremes are
    the same multiset either way)."""
    s = np.asarray(sizes, dtype=float)
    df = pd.DataFrame({"size": s, "lower_thm7": np.asarray(bounds.lower, float),
                       "upper_thm8": np.asarray(bounds.upper, float)})
    g = df.groupby("size", sort=True).agg(clusters=("size", "size"), lower_thm7=("lower_thm7", "max"),
                                          upper_thm8=("upper_thm8", "max")).reset_index()
    return g[["size", "clusters", "lower_thm7", "upper_thm8"]]


def make_cluster_bars_figure(df: pd.DataFrame, *, epsilon: float, naive: float) -> go.Figure:
    """P6: per cluster size, the guarantee for a record joining a cluster of that size (Theorems 7–8).

    Few distinct sizes: grouped bars labelled by size; many: markers over the size (log axis when the sizes span
    more than a decade), at most ``MAX_POINTS`` sizes (evenly spaced ranks).
    """
    legend = dict(orientation="h", y=-0.35)
    lines = [_hline(epsilon, color="black", dash="dot", label="ε (no gain)"),
             _hline(naive, color=GREY, dash="dash", label="simple-random-sample reasoning (wrong here)")]
    n_clusters = int(df["clusters"].sum())
    title = f"Guarantee for a record joining a cluster ({n_clusters:,} clusters, {len(df):,} distinct sizes)"
    hover = "size %{x}<br>%{customdata:,} clusters<br>ε′ %{y:.4g}<extra></extra>"
    if n_clusters > MAX_BAR_CLUSTERS:
        # spec P6: beyond 200 clusters a size histogram with the extremes marked (the bounds use them); one bar
        # per bin, summed from the distinct sizes and their counts (no 100,000-value array in the chart)
        sizes = df["size"].to_numpy()
        marks = [_vline(float(v), color=OKABE_ITO[3], dash="dash", label=lab)
                 for v, lab in ((sizes.min(), "smallest"), (sizes.max(), "largest"))]
        return go.Figure(
            data=[go.Histogram(x=sizes, y=df["clusters"].to_numpy(), histfunc="sum", nbinsx=60,
                               marker_color=OKABE_ITO[0], name="clusters")],
            layout=dict(title=f"Cluster sizes ({n_clusters:,} clusters; the bounds use the smallest and largest)",
                        xaxis=dict(title="records per cluster"), yaxis=dict(title="number of clusters"),
                        legend=legend, shapes=[sh for sh, _ in marks],
                        annotations=[a for _, notes in marks for a in notes]))
    if len(df) <= MAX_BAR_SIZES:
        x = np.array([f"{int(v):,}" for v in df["size"]], dtype=object)
        cd = df["clusters"].to_numpy()
        data = [go.Bar(x=x, y=df["lower_thm7"].to_numpy(), name="lower bound (Thm 7): some mechanism leaks this",
                       marker_color=OKABE_ITO[1], customdata=cd, hovertemplate=hover),
                go.Bar(x=x, y=df["upper_thm8"].to_numpy(), name="upper bound (Thm 8): no mechanism leaks more",
                       marker_color=OKABE_ITO[0], customdata=cd, hovertemplate=hover)]
        xaxis = dict(title="records per cluster", type="category")
        bargap = 0.6 if len(df) <= 2 else 0.3       # one or two sizes: slim bars, not two walls
    else:
        if len(df) > MAX_POINTS:
            df = df.iloc[np.unique(np.linspace(0, len(df) - 1, MAX_POINTS).round().astype(int))]
        x = df["size"].to_numpy()
        cd = df["clusters"].to_numpy()
        data = [go.Scatter(x=x, y=df["lower_thm7"].to_numpy(), mode="markers", marker_color=OKABE_ITO[1],
                           name="lower bound (Thm 7): some mechanism leaks this", customdata=cd,
                           hovertemplate=hover),
                go.Scatter(x=x, y=df["upper_thm8"].to_numpy(), mode="markers", marker_color=OKABE_ITO[0],
                           name="upper bound (Thm 8): no mechanism leaks more", customdata=cd,
                           hovertemplate=hover, marker_symbol="diamond")]
        bargap = None
        pos = x[x > 0]
        if pos.size and pos.max() / pos.min() > 10:
            xaxis = log_axis(float(pos.min()), float(pos.max()), title="records per cluster")
        else:
            xaxis = dict(title="records per cluster")
    return go.Figure(data=data, layout=dict(
        barmode="group", bargap=bargap, title=title, xaxis=xaxis,
        yaxis=dict(title="population ε′", rangemode="tozero"),
        legend=legend, shapes=[sh for sh, _ in lines], annotations=[a for _, notes in lines for a in notes]))


# ----------------------------------------------------------------------------------------------------------
# P7 / P8 / P9 allocation
# ----------------------------------------------------------------------------------------------------------

METHOD_LABELS = {"neyman": "Neyman (take-all)", "proportional": "proportional", "privacy_aware": "privacy-aware"}


def _positive_range(*arrays) -> tuple[float, float]:
    """Smallest and largest positive finite value over the arrays (a log axis's range); (1, 10) when none."""
    v = np.concatenate([np.asarray(a, float).ravel() for a in arrays])
    v = v[np.isfinite(v) & (v > 0)]
    return (float(v.min()), float(v.max())) if v.size else (1.0, 10.0)


def allocation_table(N_h, S_h, *, m: int, value_max: float, epsilon, names: Sequence[str],
                     methods: Sequence[str] = ("neyman", "proportional", "privacy_aware"), m_min: int = 1
                     ) -> pd.DataFrame:
    """Long table (method × stratum): m_h, sampling and noise variance contributions, λ_h."""
    N = np.asarray(N_h, dtype=float)
    S = np.asarray(S_h, dtype=float)
    allocs = {}
    if "neyman" in methods:
        allocs["neyman"] = sp.neyman_allocation(N, S, m=m).rounded
    if "proportional" in methods:
        allocs["proportional"] = sp.proportional_rounded(N, m=m)
    if "privacy_aware" in methods:
        allocs["privacy_aware"] = sp.privacy_aware_allocation(N, S, m=m, value_max=value_max, epsilon=epsilon,
                                                              m_min=m_min)[0]
    H = N.size
    parts = []
    for meth, a in allocs.items():
        v = sp.allocation_variance(a, N, S, value_max=value_max, epsilon=epsilon)
        parts.append(pd.DataFrame({"method": meth, "stratum": [str(x) for x in names[:H]], "N_h": N.astype(int),
                                   "m_h": np.asarray(a).astype(int),
                                   "epsilon_sample": np.broadcast_to(np.asarray(v.epsilon_sample, float), H),
                                   "sampling_variance": np.asarray(v.sampling, float),
                                   "noise_variance": np.asarray(v.noise, float)}))
    cols = ["method", "stratum", "N_h", "m_h", "epsilon_sample", "sampling_variance", "noise_variance"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


def _plain_labels(values) -> np.ndarray:
    """Category labels shown as typed: Plotly renders <a href>, <b>, <span> tags in labels, and stratum names
    come from uploaded files (issue 17), so the angle brackets and ampersands are entity-escaped."""
    return np.array([str(v).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for v in values],
                    dtype=object)


def make_allocation_figure(df: pd.DataFrame) -> go.Figure:
    """P7: sample size per stratum for each allocation method."""
    traces = [go.Bar(x=_plain_labels(g["stratum"]), y=g["m_h"].to_numpy(), name=METHOD_LABELS.get(meth, meth),
                     marker_color=OKABE_ITO[i % len(OKABE_ITO)])
              for i, (meth, g) in enumerate(df.groupby("method", sort=False))]
    return go.Figure(data=traces, layout=dict(
        barmode="group", title="Sample size per stratum", xaxis=dict(title="stratum", type="category"),
        yaxis=dict(title="records sampled from the stratum"), legend=dict(orientation="h", y=-0.35)))


def allocation_totals(df: pd.DataFrame) -> pd.DataFrame:
    """Per method: sampling, noise and total variance of the private stratified mean (sums over strata of the
    long table); the page's table, its CSV and P8 all use this one result."""
    tot = df.groupby("method", sort=False)[["sampling_variance", "noise_variance"]].sum()
    tot["total"] = tot["sampling_variance"] + tot["noise_variance"]
    return tot


def make_variance_figure(df: pd.DataFrame, *, log_y: bool = False) -> go.Figure:
    """P8: variance of the private stratified mean, split into sampling and privacy noise, per method."""
    tot = allocation_totals(df)
    x = [METHOD_LABELS.get(m, m) for m in tot.index]
    return go.Figure(
        data=[go.Bar(x=x, y=tot["sampling_variance"].to_numpy(), name="sampling variance", marker_color=OKABE_ITO[0]),
              go.Bar(x=x, y=tot["noise_variance"].to_numpy(), name="privacy-noise variance",
                     marker_color=OKABE_ITO[1])],
        layout=dict(barmode="stack", title="Error of the private mean: sampling vs noise",
                    yaxis=(log_axis(*_positive_range(tot["total"].to_numpy(), tot["sampling_variance"].to_numpy(),
                                                     tot["noise_variance"].to_numpy()), title="variance of the mean")
                           if log_y else dict(title="variance of the mean")),
                    legend=dict(orientation="h", y=-0.35)))


def shift_table(shift: sp.NeymanShift, names: Sequence[str]) -> pd.DataFrame:
    """Neyman allocation before/after the worst single-record addition, continuous and rounded."""
    return pd.DataFrame({"stratum": [str(s) for s in names], "before": shift.before, "after": shift.after,
                         "delta": shift.delta, "before_rounded": shift.before_rounded,
                         "after_rounded": shift.after_rounded, "delta_rounded": shift.delta_rounded})


def make_shift_figure(df: pd.DataFrame) -> go.Figure:
    """P9: change of the Neyman allocation caused by one added record."""
    x = _plain_labels(df["stratum"])
    return go.Figure(
        data=[go.Bar(x=x, y=df["delta"].to_numpy(), name="change before rounding", marker_color=OKABE_ITO[5]),
              go.Bar(x=x, y=df["delta_rounded"].to_numpy(), name="change in the whole-number sample sizes",
                     marker_color=OKABE_ITO[3])],
        layout=dict(barmode="group", title="One added record moves the Neyman sample sizes",
                    xaxis=dict(title="stratum", type="category"), yaxis=dict(title="change in records sampled"),
                    legend=dict(orientation="h", y=-0.35)))


def cbp_table(cbp: sp.CbpExample) -> pd.DataFrame:
    """The paper's printed CBP allocations and their difference (verbatim; Erratum E4)."""
    return pd.DataFrame({"stratum": np.arange(1, cbp.allocation_p.size + 1), "allocation_P": cbp.allocation_p,
                         "allocation_P_prime": cbp.allocation_p_prime,
                         "delta": cbp.allocation_p_prime - cbp.allocation_p})


def make_cbp_figure(df: pd.DataFrame) -> go.Figure:
    """Δ between the paper's two printed CBP Neyman allocations."""
    return go.Figure(
        data=[go.Bar(x=df["stratum"].astype(str).to_numpy(), y=df["delta"].to_numpy(), marker_color=OKABE_ITO[3],
                     name="change")],
        layout=dict(title="Paper's CBP example: change in Neyman sample sizes for a neighbouring population",
                    xaxis=dict(title="stratum (establishment size class)", type="category"),
                    yaxis=dict(title="change in records sampled")))


# ----------------------------------------------------------------------------------------------------------
# Column names for people (CSV downloads); the tables keep their short names for code and tests
# ----------------------------------------------------------------------------------------------------------

PLAIN_COLUMNS = {
    "rate": "sampling rate q", "srswor": "ε′ simple random sample without replacement (Theorem 2)",
    "poisson": "ε′ Poisson sampling", "srswr_external": "ε′ with replacement (ε part only)",
    "randomized_rounding_thm6": "ε′ randomised rounding (Theorem 6)",
    "paper_shortcut": "paper shortcut (do not use)",
    "sd": "spread σ of the sample size", "tilted_mean": "weighted mean size", "lower": "lower bound ε′",
    "upper": "upper bound ε′", "current": "your design",
    "size_from": "sample size from", "size_to": "sample size to", "t": "chance of this size",
    "t_tilted": "chance weighted by e^(ε·m)",
    "population_size": "population size N", "deterministic": "loss from the size, deterministic rounding",
    "randomized": "loss from the size, randomised rounding",
    "cluster_size": "records per cluster", "epsilon": "ε on the sample", "ratio": "share of ε kept",
    "size": "records per cluster", "clusters": "number of clusters", "lower_thm7": "lower bound ε′ (Theorem 7)",
    "upper_thm8": "upper bound ε′ (Theorem 8)",
    "method": "allocation", "stratum": "stratum", "N_h": "stratum size", "m_h": "records sampled",
    "epsilon_sample": "ε on the sample in the stratum", "sampling_variance": "sampling variance",
    "noise_variance": "privacy-noise variance", "total": "total variance",
    "before": "Neyman size before (unrounded)", "after": "after adding one person (unrounded)",
    "delta": "change (unrounded)", "before_rounded": "Neyman size before", "after_rounded": "after adding one person",
    "delta_rounded": "change",
    "allocation_P": "printed allocation for P", "allocation_P_prime": "printed allocation for P′",
}


def for_people(df: pd.DataFrame, **names: str) -> pd.DataFrame:
    """The table with plain column headers (and method names in words) for a CSV meant for people; ``names``
    overrides a header for this table (``delta="change"``)."""
    out = df.rename(columns={**PLAIN_COLUMNS, **names})
    if "allocation" in out.columns:
        out["allocation"] = out["allocation"].map(lambda m: METHOD_LABELS.get(m, m))
    return out
