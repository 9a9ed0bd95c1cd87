"""Lazy tabs: the one helper every page uses to draw only the tabs that need drawing.

Bound tabs (``st.tabs(..., key=..., bind="query-params")``) know which one is open, and a switch reruns the page.
Hidden content is part of every redraw in the browser (``bench/bench_browser_latency.py``: closed tabs' charts and
tables were about a third of a slider move's cost, their controls another third), so a page draws

- the open tab in full (controls, numbers, charts);
- a closed tab's controls only, and only once they matter: the tab was open earlier in this session, or the link
  names one of its controls, or the page always needs it. Controls never drawn are at their defaults, so the link
  loses nothing; once drawn they are drawn on every later run, or Streamlit would drop their URL parameters.

A page without ``link_keys`` draws the open tab only (nothing of closed tabs: their controls leave the URL).
The rule itself, :func:`tabs_to_draw`, is plain Python and tested in ``tests/ui/test_ui_tabs.py``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st


@dataclass(frozen=True)
class LazyTab:
    """One tab of :func:`lazy_tabs`: ``with tab.container:`` draws into it; ``open`` — it is showing (draw the
    numbers and charts); ``drawn`` — draw its controls at least."""

    container: Any
    open: bool
    drawn: bool


def link_names_tab(query_keys: Iterable[str], keys: Collection[str], *, by_prefix: bool) -> bool:
    """Whether a link parameter belongs to a tab whose control keys are ``keys`` (exact names, or prefixes).

    >>> link_names_tab(["eps_b_rows", "dataset"], ("eps_b_",), by_prefix=True)
    True
    >>> link_names_tab(["sd_mean"], {"sd_m"}, by_prefix=False)
    False
    """
    if by_prefix:
        prefixes = tuple(keys)
        return any(str(q).startswith(prefixes) for q in query_keys)
    return any(str(q) in keys for q in query_keys)


def tabs_to_draw(open_flags: Sequence[bool], query_keys: Iterable[str],
                 link_keys: Sequence[Collection[str]] | None, *, drawn: Collection[int] = (),
                 always: Collection[int] = (), by_prefix: bool = True) -> set[int]:
    """The tabs to draw this run: open ones, ``always`` ones, those drawn before (``drawn``), and those whose
    controls the link names (``link_keys[i]``: tab ``i``'s keys or key prefixes).

    ``link_keys=None``: only the open tabs (and ``always``); earlier runs do not count.

    >>> sorted(tabs_to_draw([False, True, False], ["x_a"], [("x_a",), (), ("x_c",)], drawn={2}))
    [0, 1, 2]
    >>> sorted(tabs_to_draw([True, False], ["x_b"], None, drawn={1}))
    [0]
    """
    query_keys = list(query_keys)
    out = {i for i, is_open in enumerate(open_flags) if is_open} | set(always)
    if link_keys is None:
        return out
    out |= set(drawn)
    out |= {i for i, keys in enumerate(link_keys) if keys and link_names_tab(query_keys, keys, by_prefix=by_prefix)}
    return out


def lazy_tabs(labels: Sequence[str], *, key: str, link_keys: Sequence[Collection[str]] | None = None,
              by_prefix: bool = True, always: Collection[int] = (), state_key: str | None = None) -> list[LazyTab]:
    """Bound tabs (``key`` in the URL) that say which of them to draw; see the module docstring.

    ``link_keys[i]``: the control keys (``by_prefix=False``) or key prefixes of tab ``i``; ``always``: tabs drawn
    on every run; ``state_key``: the session-state entry (not a widget key) remembering the tabs drawn so far,
    ``"<key>__drawn"`` by default.
    """
    tabs = st.tabs(list(labels), key=key, bind="query-params")
    open_flags = [t.open is not False for t in tabs]   # None (state not tracked) would mean every tab is open
    if link_keys is None:
        drawn = tabs_to_draw(open_flags, (), None, always=always)
    else:
        remembered = st.session_state.setdefault(state_key or f"{key}__drawn", set())
        drawn = tabs_to_draw(open_flags, st.query_params.keys(), link_keys, drawn=remembered, always=always,
                             by_prefix=by_prefix)
        remembered |= drawn
    return [LazyTab(t, o, i in drawn) for i, (t, o) in enumerate(zip(tabs, open_flags))]
