"""dpdash.coherence: the coherence explorer's wing (seed 000). Imports ``accounting`` and ``common``, no other wing.

Contents
--------
core        experiments on demographic coherence (``ExperimentConfig``, ``run_experiment``, ``w1``,
            ``histogram_release``, ``run_epsilon_sweep``) — seed 000 §5
tabs        the theory tab's numbers (``theory_numbers``, ``section7_result``) — seed 000 Thms 3–4, §7
inputs      defaults and estimates for uploaded tables (``default_label``, ``default_lens``, ``run_estimate``)
links       link codec of the group builder (``groups_to_json``, ``parse_built_groups``)
views       one view per tab (``preview_view``, ``runs_view``, ``sweep_view``, ``theory_view``, ``section7_view``)
verdicts, figures, script   sentences, Plotly builders, "Copy as code"
"""

from dpdash.coherence.core import ExperimentConfig, run_epsilon_sweep, run_experiment, w1
from dpdash.coherence.tabs import section7_result, theory_numbers

__all__ = ["ExperimentConfig", "run_epsilon_sweep", "run_experiment", "w1", "section7_result", "theory_numbers"]
