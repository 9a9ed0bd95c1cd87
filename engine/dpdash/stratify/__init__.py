"""dpdash.stratify: the stratified synthesis viewer's wing (seeds 004 and 001). Imports ``accounting``, ``common``.

Contents
--------
core             stratified means (``naive_mean_release``, ``stratified_mean_release``, ``analytic_mean_errors``,
                 ``theorem10_expectation``) — seed 004
synth            synthesizers and their metrics (``make_synthesizer``, ``StratifiedSynthesizer``,
                 ``synth_metrics``); synth_sweep: the ε sweep (``synth_epsilon_sweep``)
partial_release  the partially private county release (``run_partially_private_release``,
                 ``guarantee_table``) — seed 001
views            one view per tab (``mean_error_view``, ``population_view``, ``sizes_view``, ``synth_view``,
                 ``partial_release_view``; the rows an upload's Mean view uses and why others are left out:
                 ``rows_used_view``)
verdicts, figures, partial_release_figures, script, script_opendp   sentences, Plotly builders, "Copy as code"
"""

from dpdash.stratify.core import (analytic_mean_errors, naive_mean_release, stratified_mean_release,
                                  theorem10_expectation)
from dpdash.stratify.partial_release import guarantee_table, run_partially_private_release
from dpdash.stratify.synth import StratifiedSynthesizer, make_synthesizer, synth_metrics
from dpdash.stratify.synth_sweep import synth_epsilon_sweep

__all__ = ["analytic_mean_errors", "naive_mean_release", "stratified_mean_release", "theorem10_expectation",
           "guarantee_table", "run_partially_private_release", "StratifiedSynthesizer", "make_synthesizer",
           "synth_metrics", "synth_epsilon_sweep"]
