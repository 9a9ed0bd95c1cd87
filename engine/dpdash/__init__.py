"""dpdash: the privacy/utility explorer's engine, as a house with wings.

Pure Python: it never imports streamlit, so ``pip install ./engine`` gives a package that the "Copy as code"
scripts, notebooks and other programs import as ``dpdash``. The Streamlit app (``app.py``, ``pages/``, ``ui/``)
runs from a checkout. Each page of the app has a wing; shared mathematics sits one layer down, in ``accounting``,
and helpers every wing uses in ``common``. Imports point down only (a test reads the graph):

    common  <-  accounting  <-  epsilon, coherence, sampling, sortition, stratify  <-  ui/, pages/

Contents (``help(dpdash.<wing>)`` lists each wing's own table)
---------------------------------------------------------------
common        formatting, validation, the tab-view types (``TabView``), the parallel helper, the privacy
              ledger, data loading and the bounded CSV reader, root searches, the palette
accounting    mechanisms and noise calibration (``calibrate``), conversions (``zcdp_to_dp``), composition rules,
              filters and odometers (``compose``, ``composition_table``), budget planning (``plan_budget_first``),
              max-information (``max_info_pure``), public information (``effective_epsilon_dpz``)
epsilon       the epsilon calculator: risk (``posterior_bound``, ``epsilon_for_risk``), deployments, private
              tests (``independence_test``), the tabs' views, verdicts, figures and scripts
coherence     the coherence explorer: experiments (``run_experiment``), theory (``theory_numbers``), views
sampling      the sampling designer: amplification by sampling (``amplify_srswor``, ``amplify_random_size``,
              ``cluster_bounds``), allocations (``neyman_allocation``), views
sortition     the leximax cohort picker: leximax and quota leximin (``leximax_marginals``, ``leximin_panels``),
              Strat App / sortition-algorithms files, views
stratify      the stratified synthesis viewer: stratified means (``stratified_mean_release``), synthesizers
              (``make_synthesizer``), the partially private release (``run_partially_private_release``), views

Rooms: inside a wing the same names recur: ``core`` (the wing's mathematics, where it is one module), ``views``
(one function per results tab), ``verdicts`` (sentences and tones), ``figures`` (Plotly builders), ``script``
("Copy as code"), ``links`` (link codecs). A formula changes in its wing's ``core`` (or the named module); the
page shows it through the tab's view.

Wings are imported on first use: ``import dpdash`` is cheap, and ``dpdash.sortition.leximin_panels`` works.
"""

from __future__ import annotations

import importlib

from dpdash.common.version import __version__

WINGS = ("common", "accounting", "epsilon", "coherence", "sampling", "sortition", "stratify")
__all__ = ["__version__", *WINGS]


def __getattr__(name: str):
    if name in WINGS:
        return importlib.import_module(f"dpdash.{name}")
    raise AttributeError(f"module 'dpdash' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(WINGS))
