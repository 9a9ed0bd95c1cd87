"""dpdash.accounting: the privacy mathematics every page shares. Imports only ``dpdash.common``.

Contents
--------
mechanisms    noise calibration for Laplace, Gaussian and their discrete versions (``calibrate``,
              ``half_width``, ``query_sensitivity``) — Rogers (seed 002) ch. 2, Canonne–Kamath–Steinke
conversions   pure DP, zCDP, RDP and (ε, δ) (``zcdp_to_dp``, ``pure_to_zcdp``, ``rdp_to_dp``)
composition   composition rules, filters and odometers (``Mechanism``, ``compose``, ``composition_table``,
              ``kov_optimal_composition``, ``pld_epsilon``, ``PrivacyFilter``, ``adaptive_trace``) — seed 002
budget        budget planning for a list of statistics (``plan_budget_first``, ``plan_accuracy_first``)
maxinfo       max-information and adaptive-analysis bounds (``max_info_pure``, ``max_info_approx``) — seed 000
public_info   privacy with public information, ε-DP_Z (``effective_epsilon_dpz``, ``compose_dpz``) — seed 001
tones         one table from ε, ε′, δ and budget totals to a verdict's tone (good / neutral / warning), with reasons
"""

from dpdash.accounting.budget import plan_accuracy_first, plan_budget_first
from dpdash.accounting.composition import Mechanism, compose, composition_table, kov_optimal_composition, pld_epsilon
from dpdash.accounting.conversions import pure_to_zcdp, rdp_to_dp, zcdp_to_dp
from dpdash.accounting.maxinfo import max_info_approx, max_info_pure
from dpdash.accounting.mechanisms import calibrate, half_width, query_sensitivity
from dpdash.accounting.public_info import compose_dpz, effective_epsilon_dpz

__all__ = ["plan_accuracy_first", "plan_budget_first", "Mechanism", "compose", "composition_table",
           "kov_optimal_composition", "pld_epsilon", "pure_to_zcdp", "rdp_to_dp", "zcdp_to_dp", "max_info_approx",
           "max_info_pure", "calibrate", "half_width", "query_sensitivity", "compose_dpz", "effective_epsilon_dpz"]
