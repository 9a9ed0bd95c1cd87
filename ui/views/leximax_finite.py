"""Leximax cohort picker, tab "Finite-set explorer": the paper's approximate notions on small finite examples.

Renders :func:`dpdash.sortition.views.finite_view` (membership table, chain, verdict, scatter inputs, headlines,
script parameters) and the Lemma 18/19 noise checks. Source: [b] = Henzinger, Peale, Reingold, Shen, FORC 2022
(seed 003, second paper), §3 (Defs 2–12, Thms 11, 14) and App. B (Example 17, Lemmas 18–19; erratum L1).
"""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import streamlit as st

from dpdash.sortition import core as lx
from dpdash.sortition import figures as lf
from dpdash.sortition import views as lxv
from dpdash.sortition import script as sl
from ui import common as uc
from ui.exports import download_csv, download_json
from ui.show import figure, table, verdict_box
from ui.views.leximax_common import artefacts, changed, show_problem
from ui.widgets import choice, log_slider

#: token → (label, clean utilities, noisy utilities or None, ε of the paper's example)
FS_PRESETS = {
    # [b] Example 5: U = [[0, 1], [0.01, 0.01]]
    "ex5": ("Example 5 (sensitivity)", [["0", "1"], ["1/100", "1/100"]], None, 0.01),
    # [b] Example 8 at ε = 0.01: U = [[0, .5+6ε], [ε/2, .5+4ε], [ε, .5+2ε], [3ε/2, .5]]
    "ex8": ("Example 8 (no significant-tradeoff solution)",
            [["0", "0.56"], ["0.005", "0.54"], ["0.01", "0.52"], ["0.015", "0.5"]], None, 0.01),
    # [b] Example 13 at ε = 0.01: u(S1) = (ε, 0.5), u(S2) = (0, 1)
    "ex13": ("Example 13 (significant recursive)", [["0.01", "0.5"], ["0", "1"]], None, 0.01),
    # [b] Example 17 at ε = 0.01 (clean and noisy: S2's G1 value 0.1 + ε/100 → 0.1 − ε/100)
    "ex17": ("Example 17 (noise)", [["0.1", "0.2"], ["0.1001", "0.8"], ["0.11", "0.2"]],
             [["0.1", "0.2"], ["0.0999", "0.8"], ["0.11", "0.2"]], 0.01),
    "lx6": ("Five committees (LX6)", [["0.30", "0.10", "0.08"], ["0.80", "0.90", "0.00"], ["0.04", "0.10", "0.08"],
                                      ["0.30", "0.04", "0.50"], ["0.04", "0.70", "0.40"]], None, 0.05),
}


def _parse_matrix(df: pd.DataFrame, what: str):
    return lx.parse_utility_matrix(df.itertuples(index=False), what=what)


def _parse_matrix(df: pd.DataFrame, what: str):
    return lx.parse_utility_matrix(df.itertuples(index=False), what=what)


def finite_tab():
    c1, c2 = st.columns([2, 1])
    preset = choice("Example", {t: v[0] for t, v in FS_PRESETS.items()}, key="lx_fs_preset", default="lx6",
                    container=c1)
    _label, clean, noisy, eps0 = FS_PRESETS[preset]
    if changed("lx_fs_preset"):                         # a new example brings its own ε and noise
        st.session_state["lx_fs_eps"] = eps0
        st.session_state["lx_fs_noisy"] = noisy is not None
    elif "lx_fs_eps" not in st.session_state and "lx_fs_eps" not in st.query_params:
        st.session_state["lx_fs_eps"] = eps0            # a link naming an example without an ε
    eps = log_slider("Slack ε", key="lx_fs_eps", min_value=0.001, max_value=0.5, value=0.05, container=c2,
                     help="Differences in a group's utility up to ε count as insignificant.")
    verdict_area = st.container()       # the verdict goes first; drawn into this fragment's own container
    m = len(clean[0])
    ed = st.data_editor(pd.DataFrame(clean, columns=[f"G{j + 1}" for j in range(m)],
                                     index=[f"S{i + 1}" for i in range(len(clean))]),
                        key=f"lx_fs_U_{preset}", num_rows="dynamic", placeholder="")  # a new row is blank
    st.caption("Rows are candidate solutions S1, S2, …; columns are groups; each cell is the solution's utility "
               "for that group. Decimals or fractions like 1/100, compared exactly.")
    try:
        U = _parse_matrix(ed, "Utilities")
    except ValueError as exc:
        show_problem("", exc)
        return
    e = Fraction(str(eps))
    view = lxv.finite_view(U, epsilon=e, example=FS_PRESETS[preset][0])
    verdict_box(view.verdicts, verdict_area)
    table(view.tables["membership"], hide_index=True)
    download_csv(view.tables["membership"], filename="leximax_membership.csv", key="lx_dl_membership",
                 label="Membership table (CSV)")
    st.markdown(f"**{view.sections[0].title}:** {view.sections[0].lines[0]}")
    fig = lf.make_finite_scatter(view.figures["U"], view.figures["sets"])
    figure(fig, key="lx_fig_finite", filename="leximax_finite.html", alt=view.figures["alt"],
           caption=view.figures["caption"])
    with uc.methodology("What the notions mean"):
        st.markdown(
            "- **leximax**: best sorted profile (Defs 2–3). **element-wise**: every sorted entry within ε of leximax "
            "(Def 6). **ε-tradeoff**: anyone doing more than ε better for a group must do worse for a worse-off "
            "group (Def 7); equals **ε-recursive** (Thm 11). **(ε,ε)-significant tradeoff** may be empty (Ex 8). "
            "**ε-significant**: slack exactly ε at every level (Def 12) — never empty, may exclude the exact "
            "leximax.")
    noise_section(U, ed, e, eps, preset, noisy)
    download_json({"example": preset, "epsilon": eps, "U": [[str(v) for v in r] for r in U]},
                  filename="leximax_finite_parameters.json", key="lx_dl_fs_params")
    artefacts(view, key="lx_art_finite", figures=[(view.figures["alt"], fig)],
              script=sl.finite_script(**view.script))


def noise_section(U, ed, e, eps, preset, noisy) -> None:
    """Lemmas 18–19: solutions computed on noisy utilities, checked against the true ones."""
    st.markdown("**Noise (Lemmas 18–19).** Compare solutions computed on noisy utilities with the true ones.")
    if "lx_fs_noisy" not in st.session_state:    # default set once here, so a new example may change it
        st.session_state["lx_fs_noisy"] = noisy is not None
    use_noise = st.checkbox("Add a noisy version of the utilities", key="lx_fs_noisy", bind="query-params")
    if not use_noise:
        return
    base = noisy if noisy is not None else [[str(v) for v in r] for r in ed.astype(str).values.tolist()]
    ed2 = st.data_editor(pd.DataFrame(base, columns=list(ed.columns)[: len(base[0])]),
                         key=f"lx_fs_N_{preset}", num_rows="fixed", placeholder="")
    try:
        N = _parse_matrix(ed2, "Noisy utilities")
        n1, n2 = st.columns([1, 2])
        auto = n1.checkbox("δ = the largest difference between the matrices", value=True,
                           key="lx_fs_delta_auto", bind="query-params")
        dset = log_slider("Noise bound δ", key="lx_fs_delta", min_value=0.0001, max_value=0.5, value=0.001,
                          container=n2, disabled=auto,
                          help="Used when the box on the left is cleared: the noise bound the lemmas assume.")
        view = lxv.noise_view(U, N, epsilon=e, delta=None if auto else Fraction(str(dset)))
        notes = view.figures["notes"]
        st.caption(notes[0].text)
        if view.verdicts:        # a choice the user can correct: say so and offer the fix, no error
            st.warning(view.verdicts[0].text)
            return
        table(view.tables["lemma19"], hide_index=True)
        st.caption(notes[1].text)
        if "lemma18" in view.tables:
            table(view.tables["lemma18"], hide_index=True)
        st.caption(notes[2].text)
    except ValueError as exc:
        show_problem("", exc)
