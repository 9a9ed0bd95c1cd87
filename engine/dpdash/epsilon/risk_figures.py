"""Figure for risk → ε (issue 15 item 6): the named risk as ε grows, the target, and the largest ε that meets it.

Pure Python (no streamlit). The curve is ``dpdash.epsilon.risk.risk_at_epsilon`` evaluated on a log grid of ε, so the
chart
draws the same forward function the inverse solves; the marked ε is the :class:`dpdash.epsilon.risk.EpsilonForRisk`
result.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from dpdash.epsilon import risk
from dpdash.common.formatting import log_axis, number_down
from dpdash.common.palette import palette_color

Y_TITLES = {"posterior": "attacker's belief after the release", "advantage": "membership advantage",
            "power": "members found (true-positive rate)"}
#: The y-axis titles, short enough to stay whole beside a 400 px chart at presenter size (issue 25: cut).
Y_AXIS = {"posterior": "belief after the release", "advantage": "membership advantage", "power": "true-positive rate"}


def risk_grid(res: risk.EpsilonForRisk, *, prior=None, fpr=None, points: int = 121) -> tuple[np.ndarray, np.ndarray]:
    """(ε grid, risk at each ε): log-spaced from 0.01 to 3× the answer (at least 10, at most EPSILON_MAX)."""
    top = 10.0 if not (res.reachable and math.isfinite(res.epsilon)) else max(10.0, 3.0 * res.epsilon)
    eps = np.geomspace(1e-2, min(top, risk.EPSILON_MAX), points)
    vals = np.array([risk.risk_at_epsilon(res.measure, epsilon=e, delta=res.delta, prior=prior, fpr=fpr)
                     for e in eps])
    return eps, vals


def make_risk_inverse_figure(res: risk.EpsilonForRisk, *, prior=None, fpr=None) -> go.Figure:
    """The risk as a function of ε (log x), a dashed line at the target and a marker at the largest safe ε."""
    eps, vals = risk_grid(res, prior=prior, fpr=fpr)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=eps, y=vals, mode="lines", name=Y_TITLES[res.measure],
                             line=dict(color=palette_color(0)),
                             hovertemplate="ε = %{x:.3g}<br>%{y:.3g}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[eps[0], eps[-1]], y=[res.target, res.target], mode="lines", name="your target",
                             line=dict(color=palette_color(3), dash="dash"), hoverinfo="name"))
    if res.reachable and math.isfinite(res.epsilon) and res.epsilon >= eps[0]:
        fig.add_trace(go.Scatter(x=[res.epsilon], y=[res.target], mode="markers",
                                 name=f"largest ε = {number_down(res.epsilon)}",
                                 marker=dict(color="#000000", size=11, symbol="diamond"),
                                 hovertemplate="ε = %{x:.4g}<extra></extra>"))
    fig.update_layout(xaxis=log_axis(float(eps[0]), float(eps[-1]), title="ε (log scale)"),
                      yaxis=dict(title=Y_AXIS[res.measure], range=[0, 1.02], tickformat=".0%", automargin=True),
                      title="The risk grows with ε: the largest ε below your target", height=440,
                      # the legend under the plot: above it, it ran into the title at 1280 px (issue 25)
                      legend=dict(orientation="h", yanchor="top", y=-0.22, x=0), margin=dict(t=60, b=110))
    return fig


def risk_inverse_alt(res: risk.EpsilonForRisk) -> str:
    """Alt text: what the chart shows, with the target and the answer."""
    what = Y_TITLES[res.measure]
    if res.reachable and math.isfinite(res.epsilon):
        return (f"Line chart of the {what} against ε on a log axis, with a dashed line at the target "
                f"{res.target:.3g}; the curve crosses it at ε = {number_down(res.epsilon)}.")
    return f"Line chart of the {what} against ε on a log axis, with a dashed line at the target {res.target:.3g}."
