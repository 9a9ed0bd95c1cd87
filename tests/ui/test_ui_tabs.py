"""ui.tabs: which tabs a page draws (the rule written out by hand from the pages' contract, ui/tabs.py)."""

from __future__ import annotations

from ui.tabs import link_names_tab, tabs_to_draw

PREFIXES = [("eps_n1_", "eps_epsilon"), ("eps_comp_",), ("eps_b_",)]
KEYS = [{"sd_m", "sd_rate"}, {"sd_mean"}, set()]


def test_a_fresh_session_without_link_draws_only_the_open_tab():
    assert tabs_to_draw([False, True, False], [], PREFIXES) == {1}
    assert tabs_to_draw([False, False, False], ["dataset"], PREFIXES) == set()


def test_a_link_naming_a_control_draws_its_tab():
    assert tabs_to_draw([True, False, False], ["eps_b_rows"], PREFIXES) == {0, 2}
    assert tabs_to_draw([False, False, True], ["eps_epsilon"], PREFIXES) == {0, 2}


def test_tabs_drawn_earlier_stay_drawn_and_always_tabs_are_drawn():
    assert tabs_to_draw([False, True, False], [], PREFIXES, drawn={0}) == {0, 1}
    assert tabs_to_draw([True, False, False], [], KEYS, always={2}, by_prefix=False) == {0, 2}


def test_exact_keys_do_not_match_as_prefixes():
    # sd_m is tab 0's key; sd_mean (tab 1) must not open tab 0
    assert tabs_to_draw([False, False, True], ["sd_mean"], KEYS, by_prefix=False) == {1, 2}
    assert not link_names_tab(["sd_mean"], {"sd_m"}, by_prefix=False)
    assert link_names_tab(["sd_mean"], ("sd_m",), by_prefix=True)


def test_without_link_keys_only_open_tabs_draw_whatever_happened_before():
    assert tabs_to_draw([False, True, False], ["eps_b_rows"], None, drawn={0, 2}) == {1}
    assert tabs_to_draw([False, False, False], [], None, always={0}) == {0}
