"""ε in context and risk → ε, for the epsilon calculator (issue 15 items 5 and 6).

Two views the page calls inside its tabs: :func:`render_in_context` places the page's ε among published
deployments (``dpdash.epsilon.deployments``, data in ``data/deployments.csv``); :func:`render_risk_inverse` answers
"what is
the largest ε that keeps this risk below my target?" (``dpdash.epsilon.risk``). Widgets, layout and calls only: every
number
and sentence comes from the engine.
"""

from __future__ import annotations


import streamlit as st

from dpdash.epsilon import deployments as dep
from dpdash.epsilon import views as evw
from dpdash.epsilon import risk
from dpdash.epsilon import risk_figures as rfig
from ui.show import cards
from ui.show import table as results_table
from ui.charts import show_figure
from ui.common import methodology
from ui.exports import download_csv
from ui.text import md_escape
from ui.widgets import choice, delta_exponent

@st.cache_data(show_spinner=False)
def _deployments():
    return dep.load_deployments()


def render_in_context(epsilon: float, delta: float | None) -> None:
    """The page's ε among published real-world deployments: verdict, dot chart, cited table, caveats."""
    table = _deployments()
    place = dep.place_epsilon(epsilon, table)
    st.markdown(f"**{md_escape(dep.context_verdict(place), max_len=400)}**")
    fig = dep.make_context_figure(table, epsilon=epsilon, delta=delta)
    show_figure(fig, key="eps_ctx_fig", filename="epsilon_in_context.html", alt=dep.figure_alt(table, place))
    st.markdown("\n".join(f"- {md_escape(c, max_len=300)}" for c in dep.CAVEATS))
    people = dep.context_table_for_people(table)
    results_table(people, hide_index=True, width="stretch",
                 column_config={"Source": st.column_config.LinkColumn("Source")})
    download_csv(dep.context_table_for_people(table, for_csv=True), filename="published_deployments.csv",
                 key="eps_ctx_csv", label="Download deployments (CSV)")
    with methodology():
        st.markdown(
            "Each value is copied as its source states it, with the place it was read (column *Where the value was "
            "read*): the OpenDP Deployments Registry and Desfontaines' list of real-world uses of differential "
            "privacy. Rows without a year are undated in that source. The list is short and not a recommendation: "
            "a value used by a company is not evidence that it is safe for your data.")


#: Percentages offered for priors and targets, and for false-positive rates (the link stores the percentage)
SHARES = (1, 2, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 75, 80, 90, 95, 99)
RATES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 50)


def _share(container, label: str, options, value: float, key: str) -> float:
    """A probability picked as a percentage on a slider (URL-bound: ``?key=20`` is 20%); returns the probability."""
    pct = container.select_slider(f"{label} (%)", options=list(options), value=value, key=key,
                                  format_func=lambda v: f"{v:g}", bind="query-params")
    return float(pct) / 100.0


def render_risk_inverse(key_prefix: str = "eps_inv_") -> None:
    """Risk → ε: pick a risk and a target, read the largest ε that keeps the risk at or below it."""
    k = key_prefix
    measure = choice("Risk to keep below a target", {m: text.capitalize() for m, text in risk.MEASURES.items()},
                     key=f"{k}measure", default="posterior")
    c1, c2 = st.columns(2)
    d1, d2 = st.columns(2)
    use_delta = d1.toggle("Allow a small δ", value=False, key=f"{k}use_delta", bind="query-params",
                          help="(ε, δ)-DP: with probability up to δ the ε promise may fail.")
    delta = delta_exponent(key=f"{k}delta", value=-6, min_exp=-12, max_exp=-2, container=d2) if use_delta else 0.0
    prior = fpr = None
    if measure == "posterior":
        prior = _share(c1, "Attacker's belief before the release (prior)", SHARES[:-2], 5, f"{k}prior")
        target = _share(c2, "Highest belief you accept after it", SHARES[1:], 20, f"{k}target_post")
        if delta > 0:
            fpr = _share(d1, "The attacker wrongly accuses this share of outsiders", RATES, 1, f"{k}fpr_post")
    elif measure == "advantage":
        target = _share(c1, "Highest advantage you accept (true- minus false-positive rate)", SHARES, 10,
                        f"{k}target_adv")
    else:
        fpr = _share(c1, "False-positive rate of the test (outsiders wrongly accused)", RATES, 1, f"{k}fpr")
        target = _share(c2, "Highest true-positive rate you accept (members found)", SHARES, 10, f"{k}target_pow")
    try:
        view = evw.risk_inverse_view(measure, target=target, delta=delta, prior=prior, fpr=fpr)
    except ValueError as exc:
        st.warning(md_escape(str(exc), max_len=300))
        return
    res = view.figures["result"]
    st.markdown(f"**{md_escape(view.verdicts[0].text, max_len=400)}**")
    cards(view.headlines, columns=2)
    if view.figures["check"]:
        st.caption(view.figures["check"])
    fig = rfig.make_risk_inverse_figure(res, prior=prior, fpr=fpr)
    show_figure(fig, key=f"{k}fig", filename="risk_to_epsilon.html", alt=rfig.risk_inverse_alt(res))
    with methodology():
        st.markdown(
            "Posterior: Bayes' rule with the ε-DP likelihood-ratio bound (pure ε: log-odds move by at most ε); "
            "with δ > 0 the bound depends on how often the attacker accuses, so that rate is an input. Advantage "
            "and true-positive rate: the hypothesis-testing region of (ε, δ)-DP (Kairouz, Oh & Viswanath 2015; "
            "Dong, Roth & Su 2022), false negatives ≥ max(0, 1 − δ − e^ε·α, e^−ε·(1 − δ − α)). Closed forms "
            "are solved exactly; the posterior with δ > 0 by Brent's method on the forward formula.")
