"""dpdash.sampling: the sampling designer's wing (seed 003, Bun et al.). Imports ``accounting`` and ``common`` only.

Contents
--------
core        amplification by sampling for each design (``amplify_srswor``, ``calibrate_srswor``,
            ``amplify_poisson``, ``amplify_random_size``, ``amplify_randomized_rounding``, ``cluster_bounds``) and
            allocations (``neyman_allocation``, ``privacy_aware_allocation``)
census      Theorem 3 for census-size populations (``census_size_law``)
frames      the bounded number-list parser
views       one view per tab (``simple_view``, ``random_view``, ``rounding_view``, ``cluster_view``,
            ``strata_view``)
verdicts, figures, script   sentences, Plotly builders, "Copy as code"
"""

from dpdash.sampling.core import (amplify_poisson, amplify_random_size, amplify_randomized_rounding, amplify_srswor,
                                  calibrate_srswor, cluster_bounds, neyman_allocation, privacy_aware_allocation)

__all__ = ["amplify_poisson", "amplify_random_size", "amplify_randomized_rounding", "amplify_srswor",
           "calibrate_srswor", "cluster_bounds", "neyman_allocation", "privacy_aware_allocation"]
