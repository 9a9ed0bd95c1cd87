"""Rendering shared by the sampling designer's tabs: badges, card groups, the calibration box, charts with CSV.

Nothing here computes a number or writes a sentence: each tab's :class:`dpdash.common.view.TabView` comes from
``dpdash.sampling.views`` and is only drawn here (issue 22). Keys keep the ``sd_`` prefix of the page's links.
"""

from __future__ import annotations

import dataclasses
import functools

import streamlit as st

from dpdash.sampling import figures as sf
from dpdash.sampling import views as vw
from dpdash.common.view import TabView
from ui import show
from ui import exports
from ui.text import md_escape

PAGE, TITLE = "sampling_designer", "Sampling designer"
#: Short badges (issue 25: "paper shortcut — do not use" was cut at 1280 px in presenter mode); the method note
#: says what each means.
BADGE = {"paper": ":blue-badge[paper]", "external": ":orange-badge[external]", "derived": ":green-badge[derived]",
         "shortcut": ":gray-badge[shortcut: do not use]"}
BADGE_WORDS = ("paper = the seed paper's theorem; external = [BBG18]; derived = worked out for this product; "
               "shortcut: do not use = the paper's approximation, shown only to say how far off it is.")


def guarded(tab):
    """Run a tab; an engine ``ValueError`` (a domain edge of these settings) becomes a message, not a traceback.

    Engine messages can quote user text (a stratum name, a list entry), so they are escaped (issue 17)."""
    @functools.wraps(tab)
    def run(*args, **kwargs):
        try:
            return tab(*args, **kwargs)
        except ValueError as exc:
            st.error(f"These settings cannot be computed: {md_escape(exc, max_len=400)}. Change the setting "
                     "named here.")
    return run


def groups(view: TabView, *, columns: bool = False, which: tuple[int, ...] | None = None,
           per_row: int | None = None) -> None:
    """The view's card groups (``figures["groups"]``, or those numbered ``which``), side by side in boxes."""
    gs = view.figures.get("groups", ())
    if which is not None:
        gs = [gs[i] for i in which]
    if not gs:
        return
    cols = st.columns(len(gs)) if columns and len(gs) > 1 else [st.container() for _ in gs]
    for col, g in zip(cols, gs):
        with col.container(border=True):
            st.markdown(f"**{md_escape(g['title'], max_len=200)}** {BADGE[g['status']]}")
            if g.get("caption"):
                st.caption(md_escape(g["caption"], max_len=400))
            heads = [view.headlines[i] for i in g["cards"]]
            show.cards(heads, columns=per_row or (2 if len(heads) > 2 else len(heads)))
            if g.get("shortcut"):
                st.markdown(f":gray[{md_escape(g['shortcut'], max_len=200)}] {BADGE['shortcut']}")
            if g.get("condition"):
                st.caption(md_escape(g["condition"], max_len=300))
            for note in g.get("notes", ()):
                st.warning(md_escape(note, max_len=600))


def errors(view: TabView) -> None:
    """Red banners: no amplification guaranteed, privacy made worse."""
    for text in view.figures.get("errors", ()):
        st.error(md_escape(text, max_len=600), icon=":material/block:")


def calibration(view: TabView, *, status: str = "derived") -> None:
    """The calibration box: the view's calibration section (sentence, design, grey shortcut line)."""
    sec = next((s for s in view.sections if s.title == vw.CALIBRATION), None)
    if sec is None:
        return
    with st.container(border=True):
        st.markdown(f"**{vw.CALIBRATION}** {BADGE[status]}")
        head = view.headline("ε to spend on the sample for the target")
        st.markdown(md_escape(sec.lines[0], max_len=600), help=f"Full value: ε = {head.raw!r}. {head.note}")
        for line in sec.lines[1:]:
            if line.startswith("Paper shortcut"):
                st.markdown(f":gray[{md_escape(line, max_len=400)}] {BADGE['shortcut']}")
            else:
                st.caption(md_escape(line, max_len=400))


def chart(fig, spec: dict, *, key: str, filename: str, shown: list, **names: str) -> None:
    """A chart with its alt text and reading (both from the view), its figure files and its table's CSV."""
    show.figure(fig, key=key, filename=f"{filename}.html", caption=spec["caption"], alt=spec["alt"])
    exports.download_csv(sf.for_people(spec["table"], **names), filename=f"{filename}.csv", key=f"{key}_csv")
    shown.append((spec["alt"], fig))


def take_away(view: TabView, *, tab: str, script: str, shown: list) -> None:
    """Report, Settings and Copy as code of the open tab, from its view."""
    sources = [vw.PAPER] + [line for s in view.sections if s.title == "Sources" for line in s.lines]
    # the sources go in the report's sources list, not among its sentences
    view = dataclasses.replace(view, sections=tuple(s for s in view.sections if s.title != "Sources"))
    show.take_away(view, key=f"sd_art_{tab}", page=PAGE, title=TITLE, sources=sources, figures=shown, script=script)
