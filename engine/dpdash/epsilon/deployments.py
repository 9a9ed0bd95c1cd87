"""ε in context: published real-world deployments of differential privacy (issue 15 item 5).

Pure Python (no streamlit). ``data/deployments.csv`` holds one row per deployment with the value as the source
states it and where it was read (column ``read_where``); ``data/DATA.md`` gives the provenance. Sources: the OpenDP
Deployments Registry (http://registry.opendp.org/deployments-registry, inspired by Dwork, Kohli & Mulligan 2019,
"Differential Privacy in Practice: Expose your Epsilons!"), Desfontaines, "A list of real-world uses of
differential privacy" (https://desfontain.es/blog/real-world-differential-privacy.html), two Google report abstracts
(arXiv:2009.01265, arXiv:2107.01179), the Wikimedia Foundation's pageview README, and the registry's data repository
(github.com/opendp/deployments-registry-data at commit 3e9c812). No value is invented: a row the sources do not date
has an empty year.

Caveat the figure carries: the ε values are not comparable one to one. Privacy units differ (event, user-day,
user, person), local ε protects one report while central ε protects a whole data set, and some values are per
day or per month while others cover a whole release.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpdash.common.formatting import log_axis
from dpdash.common.formatting import power_of_ten
from dpdash.common.palette import palette_color
from dpdash.common.paths import DATA_DIR
from dpdash.common.validation import ValidationError, check_delta, check_epsilon

DEPLOYMENTS_CSV = DATA_DIR / "deployments.csv"
COLUMNS = ("organisation", "product", "year", "epsilon", "delta", "rho", "privacy_unit", "model", "period",
           "source_url", "read_where", "note")
MODELS = {"central": "central (a trusted curator adds noise)", "local": "local (each device adds noise)"}
#: Column names for people (tables and downloads)
PLAIN_COLUMNS = {"organisation": "Organisation", "product": "Product", "year": "Year", "epsilon": "ε", "delta": "δ",
                 "rho": "ρ (zCDP)", "privacy_unit": "Protects one", "model": "Noise added", "period": "Budget covers",
                 "source_url": "Source", "read_where": "Where the value was read", "note": "Note"}
CAVEATS = ("Units differ: an ε per event, per user-day or per person protects different things.",
           "Local ε (noise on each device) and central ε (noise on the whole data set) are not comparable one to one.",
           "Some budgets are per day or per month and add up over time; others cover one release.")


def load_deployments(path: str | Path | None = None) -> pd.DataFrame:
    """Read and check the deployments table: every row has an organisation, a product, an ε in (0, ∞), an http(s)
    source and the place it was read; a year, when given, is an integer in [2006, 2100]; δ in [0, 1).

    Raises ValidationError naming the row (1-based, after the header) and the column at fault.
    """
    df = pd.read_csv(path or DEPLOYMENTS_CSV, dtype={"organisation": str, "product": str, "privacy_unit": str,
                                                     "model": str, "period": str, "source_url": str,
                                                     "read_where": str, "note": str}, keep_default_na=True)
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValidationError(f"deployments table is missing the columns {missing}")
    df = df[list(COLUMNS)].copy()
    for i, r in df.iterrows():
        row = f"deployments row {int(i) + 1}"
        for col in ("organisation", "product", "privacy_unit", "period", "read_where"):
            if not isinstance(r[col], str) or not r[col].strip():
                raise ValidationError(f"{row}: {col} is empty")
        if not isinstance(r["source_url"], str) or not r["source_url"].startswith(("http://", "https://")):
            raise ValidationError(f"{row}: source_url must be an http(s) link; got {r['source_url']!r}")
        if r["model"] not in MODELS:
            raise ValidationError(f"{row}: model must be one of {tuple(MODELS)}; got {r['model']!r}")
        check_epsilon(r["epsilon"], name=f"{row} epsilon")
        if not pd.isna(r["delta"]):
            check_delta(r["delta"], name=f"{row} delta")
        if not pd.isna(r["year"]):
            y = float(r["year"])
            if not (y.is_integer() and 2006 <= y <= 2100):
                raise ValidationError(f"{row}: year must be a whole year between 2006 and 2100; got {r['year']!r}")
    df["year"] = df["year"].astype("Int64")
    df["note"] = df["note"].fillna("")
    return df.reset_index(drop=True)


@dataclass(frozen=True)
class Placement:
    """Where a user's ε falls among the deployments: how many are below, equal and above it."""

    epsilon: float
    below: int
    equal: int
    above: int
    smallest: float
    largest: float

    @property
    def total(self) -> int:
        return self.below + self.equal + self.above


def place_epsilon(epsilon, table: pd.DataFrame) -> Placement:
    """Count the deployments with a smaller, equal (to 1e-9 relative) and larger ε than ``epsilon``."""
    e = check_epsilon(epsilon)
    vals = table["epsilon"].to_numpy(dtype=float)
    eq = np.isclose(vals, e, rtol=1e-9, atol=0.0)
    return Placement(e, int(np.sum((vals < e) & ~eq)), int(np.sum(eq)), int(np.sum((vals > e) & ~eq)),
                     float(vals.min()), float(vals.max()))


def _fmt(x: float) -> str:
    return f"{x:g}"


def _count(n: int) -> str:
    return f"{n} deployment" + ("" if n == 1 else "s")


def context_verdict(p: Placement) -> str:
    """One plain sentence placing the user's ε among the published deployments."""
    n, span = p.total, f"(they range from {_fmt(p.smallest)} to {_fmt(p.largest)})"
    if p.below == 0 and p.equal == 0:
        return f"ε = {_fmt(p.epsilon)} is smaller than all {n} published deployments listed here {span}."
    if p.above == 0 and p.equal == 0:
        return f"ε = {_fmt(p.epsilon)} is larger than all {n} published deployments listed here {span}."
    if p.below == 0 or p.above == 0:  # the user's ε equals the smallest or the largest value listed
        end, others = ("smallest", f"{p.above} use a larger ε") if p.below == 0 else \
            ("largest", f"{p.below} use a smaller ε")
        uses = "uses" if p.equal == 1 else "use"
        return (f"ε = {_fmt(p.epsilon)} is the {end} value among {n} published deployments listed here: {p.equal} "
                f"{uses} it and {others} {span}.")
    same = f", {p.equal} the same" if p.equal else ""
    has = "has" if p.below == 1 else "have"
    return (f"Of {n} published deployments listed here, {p.below} {has} a smaller ε than {_fmt(p.epsilon)}{same} "
            f"and {p.above} a larger one {span}.")


def _label(r: pd.Series) -> str:
    year = "" if pd.isna(r["year"]) else f" ({int(r['year'])})"
    return f"{r['organisation']}: {r['product']}{year}"


#: Widest line of a row label on the chart, and at most two lines: long labels wrap (the rest is in the hover and
#: the table), so the label margin leaves the dots room at 1280 px in presenter mode (issue 25: the plot area
#: shrank to ~60 px behind one-line labels of up to ~100 characters).
LABEL_WIDTH = 40


def _wrapped(label: str) -> str:
    """A row label wrapped at spaces into at most two lines of about ``LABEL_WIDTH`` characters, joined by
    ``<br>``; a longer label ends in "…" (its full text is in the hover and the table)."""
    import textwrap

    lines = textwrap.wrap(label, LABEL_WIDTH, break_long_words=False, break_on_hyphens=False) or [label]
    if len(lines) > 2:
        lines = [lines[0], lines[1][:LABEL_WIDTH - 1].rstrip() + "…"]
    return "<br>".join(lines)


def make_context_figure(table: pd.DataFrame, *, epsilon: float, delta: float | None = None) -> go.Figure:
    """Deployments as dots on a log ε axis, one row each (sorted by ε), coloured local/central; the user's ε a line.

    Hover gives δ, the privacy unit, the period and the source. The x-range covers the data and the user's ε.
    """
    e = check_epsilon(epsilon)
    t = table.sort_values(["epsilon", "organisation", "product"], ascending=[True, True, True]).reset_index(drop=True)
    full = [_label(r) for _, r in t.iterrows()]
    labels = [_wrapped(x) for x in full]
    if len(set(labels)) < len(labels):  # two labels cut alike: rows would merge, so keep the full text
        labels = full
    fig = go.Figure()
    for i, (model, text) in enumerate(MODELS.items()):
        g = t[t["model"] == model]
        if g.empty:
            continue
        hover = [f"{_label(r)}<br>ε = {_fmt(r['epsilon'])}"
                 + ("" if pd.isna(r["delta"]) else f", δ = {power_of_ten(r['delta'])}")
                 + f"<br>protects one {r['privacy_unit']}; budget {r['period']}<br>{r['source_url']}"
                 for _, r in g.iterrows()]
        fig.add_trace(go.Scatter(x=g["epsilon"], y=[labels[j] for j in g.index], mode="markers", name=text,
                                 marker=dict(color=palette_color(i), size=11,
                                             symbol="circle" if model == "central" else "diamond"),
                                 hovertext=hover, hoverinfo="text"))
    you = f"your ε = {_fmt(e)}" + ("" if not delta else f", δ = {power_of_ten(delta)}")
    fig.add_trace(go.Scatter(x=[e, e], y=[labels[0], labels[-1]], mode="lines", name=you,
                             line=dict(color="#000000", width=2, dash="dash"), hoverinfo="name"))
    lo = min(e, float(t["epsilon"].min()))
    hi = max(e, float(t["epsilon"].max()))
    fig.update_layout(xaxis=log_axis(lo / 1.5, hi * 1.5, title="ε (log scale; units and periods differ by row)"),
                      yaxis=dict(title=None, categoryorder="array", categoryarray=labels, automargin=True),
                      title="Your ε among published deployments",
                      # rows are evenly spaced: each as tall as the tallest label (two lines at presenter size)
                      height=max(360, len(labels) * (20 + 24 * (1 + max(lab.count("<br>") for lab in labels)))
                                 + 190),
                      legend=dict(orientation="h", yanchor="top", y=-0.16, x=0))
    return fig


def context_table_for_people(table: pd.DataFrame, *, for_csv: bool = False) -> pd.DataFrame:
    """The deployments with plain column names, sorted by ε (for the page and its CSV); on screen a value the
    source does not give is a dash, never "None" or "nan". ``for_csv``: numbers stay numbers and a missing one is an
    empty cell, so the file reads back as numeric columns (in pandas and in this app's own CSV reader)."""
    t = table.sort_values("epsilon").reset_index(drop=True).copy()
    if for_csv:
        t["note"] = [n if n else "—" for n in t["note"]]
        return t.rename(columns=PLAIN_COLUMNS)
    t["year"] = [("—" if pd.isna(y) else str(int(y))) for y in t["year"]]
    t["delta"] = [("—" if pd.isna(d) else power_of_ten(float(d))) for d in t["delta"]]
    t["rho"] = [("—" if pd.isna(r) else f"{float(r):g}") for r in t["rho"]]
    t["note"] = [n if n else "—" for n in t["note"]]
    return t.rename(columns=PLAIN_COLUMNS)


def figure_alt(table: pd.DataFrame, p: Placement) -> str:
    """Alt text for the context chart: what it shows, with the numbers."""
    n_local = int(np.sum(table["model"] == "local"))
    return (f"Dot chart of {p.total} published deployments of differential privacy on a log ε axis from "
            f"{_fmt(p.smallest)} to {_fmt(p.largest)} ({n_local} local, {p.total - n_local} central), with a dashed "
            f"line at your ε = {_fmt(p.epsilon)}: {_count(p.below)} below it and {_count(p.above)} above it.")
