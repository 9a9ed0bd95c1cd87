"""dpdash.epsilon: the epsilon calculator's wing. Imports ``accounting`` and ``common``, no other wing.

Contents
--------
risk                  what ε means for one person (``posterior_bound``, ``advantage_bound``,
                      ``epsilon_for_risk``) — Rogers (seed 002) Def. 2.1.1, Kairouz et al.
private_tests         differentially private hypothesis tests (``independence_test``, ``gof_critical_values``)
                      — seed 002 ch. 6
deployments           published deployments' ε for context (``load_deployments``, ``place_epsilon``)
budget_compare        the budget planner's mechanism comparison (``budget_table``)
views                 one view per tab (``noise_view``, ``composition_view``, ``budget_view``, ``risk_view``,
                      ``tests_view``, ``maxinfo_view``, ``widths_view``, ``adaptive_view``)
public_info_views     the public-information tab's views (``tab_view``)
verdicts, figures, risk_figures, public_info_figures   sentences and Plotly builders
script                "Copy as code" builders (``noise_script``, ``composition_script``, …)
"""

from dpdash.epsilon.deployments import load_deployments, place_epsilon
from dpdash.epsilon.private_tests import gof_critical_values, independence_test
from dpdash.epsilon.risk import advantage_bound, epsilon_for_risk, posterior_bound
from dpdash.epsilon.views import composition_view, noise_view, risk_view

__all__ = ["load_deployments", "place_epsilon", "gof_critical_values", "independence_test", "advantage_bound",
           "epsilon_for_risk", "posterior_bound", "composition_view", "noise_view", "risk_view"]
