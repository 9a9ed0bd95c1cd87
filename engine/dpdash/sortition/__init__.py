"""dpdash.sortition: the leximax cohort picker's wing (seed 003, Henzinger et al.; Flanigan et al.).

Imports ``accounting`` and ``common``, no other wing.

Contents
--------
core        leximax over utilities (``leximax_marginals``, ``maxmin_marginals``, ``leximax_set``) and the quota
            leximin over panels (``Quota``, ``check_quotas``, ``leximin_size``, ``leximin_panels``, ``draw_panel``,
            ``selection_metrics``, ``uniform_baseline``, ``missing_answers``)
files       Strat App / sortition-algorithms files (``read_quotas``, ``match_pool``, ``lottery_table``)
objectives  every fair-selection objective on one pool and quotas, side by side (``compare_objectives``:
            leximin, maximin, Nash welfare, Goldilocks, the legacy greedy draw; ``ObjectiveResult``) — issue 32
lottery     a lottery rounded to m equally likely numbered panels and drawn in public from a typed seed
            (``round_lottery``, ``panels_csv``, ``draw_panel_number``, ``draw_script``)
alternates  dropout rates and alternates that keep the quotas after dropouts (``rates_from_values``,
            ``choose_alternates``, ``simulate_dropouts``)
views       one view per tab (``cohort_view``, ``simulation_view``, ``finite_view``, ``quota_view``,
            ``noise_view``)
verdicts, figures, script   sentences, Plotly builders, "Copy as code"
"""

from dpdash.sortition.core import (Quota, check_quotas, draw_panel, leximax_marginals, leximax_set, leximin_panels,
                                   maxmin_marginals, selection_metrics)
from dpdash.sortition.files import lottery_table, match_pool, read_quotas

__all__ = ["Quota", "check_quotas", "draw_panel", "leximax_marginals", "leximax_set", "leximin_panels",
           "maxmin_marginals", "selection_metrics", "lottery_table", "match_pool", "read_quotas"]
