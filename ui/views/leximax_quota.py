"""Leximax cohort picker, tab "Citizens' assembly (quotas)": quota-constrained leximin panels (beyond the paper).

Renders :func:`dpdash.sortition.views.quota_view` (cards, verdict, tables, chart inputs, report, script parameters)
or :func:`dpdash.sortition.views.quota_infeasible_view`, plus the seeded, logged panel draw.

A pool larger than :data:`AUTO_POOL` is solved on a button press in a worker process of its own
(:func:`dpdash.common.parallel.run_in_worker`; issue 35 item 2), never in the server process that draws every
session's pages: its progress is relayed to the bar, its computation limit is the worker's own CPU time (the
engine's ``time_limit_s``, in a process that does nothing else), a backstop of :func:`backstop_s` CPU seconds ends
the worker if a solver call overruns it, and Streamlit's Stop (or a changed setting) ends the worker at once and
is said on the next run. Source: Flanigan, Gölz,
Gupta, Hennig, Procaccia, *Fair algorithms for selecting citizens' assemblies*, Nature 596 (2021) ([b] ref. 13).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

import pandas as pd
import streamlit as st

from dpdash.common.parallel import run_in_worker
from dpdash.common.search import Deadline, SearchLimitError
from dpdash.sortition import core as lx
from dpdash.sortition import figures as lf
from dpdash.sortition import views as lxv
from dpdash.sortition import script as sl
from dpdash.sortition import files as sf
from ui import common as uc
from ui.exports import download_csv, download_json
from ui.show import cards, figure, table, verdict_box
from ui.text import md_escape, md_quote
from ui.views.leximax_common import (BLANK_ONLY, NA_CODES, artefacts, changed, digest, show_problem,
                                     upload_frame, volunteer_cached)
from ui.widgets import choice, seed_input

MAX_RESPONDENTS = 20_000

@st.cache_data(max_entries=8, show_spinner=False)
def check_cached(pool: pd.DataFrame, quotas: tuple, k: int):
    return lx.check_quotas(pool, list(quotas), k=k)


@st.cache_data(max_entries=8, show_spinner=False)
def leximin_cached(pool: pd.DataFrame, quotas: tuple, k: int, id_col: str, seed: int, time_limit: float):
    # No progress callback here: a cached function must not touch a UI element (Streamlit replays them).
    return lx.leximin_panels(pool, list(quotas), k=k, id_col=id_col, rng=seed, time_limit_s=time_limit)


@st.cache_resource(show_spinner=False)
def _leximin_store() -> dict:
    """Finished button-run lotteries shared by all sessions for the built-in pools (a plain dict: no UI)."""
    return {}


def remember_leximin(key: tuple, dist, *, shared: bool) -> None:
    """Keep a finished lottery: in this session, and for built-in pools also for other sessions (8 at most)."""
    stores = [st.session_state.setdefault("lx_q_results", {})] + ([_leximin_store()] if shared else [])
    for store in stores:
        store[key] = dist
        while len(store) > 8:              # oldest first: dicts keep insertion order
            store.pop(next(iter(store)))


def recall_leximin(key: tuple):
    return st.session_state.get("lx_q_results", {}).get(key) or _leximin_store().get(key)


@st.cache_data(max_entries=8, show_spinner=False)
def baseline_cached(pool: pd.DataFrame, quotas: tuple, k: int, seed: int):
    return lx.uniform_baseline(pool, list(quotas), k=k, rng=seed)


#: Session key of a button run under way (left behind when the run is stopped or interrupted).
RUNNING = "_lx_q_running"


def backstop_s(limit_s: float) -> float:
    """CPU seconds after which a leximin worker is ended whatever it is doing: the engine checks its own limit
    between solver calls (each bounded by iterations and nodes), so this only catches a call that overruns it.

    >>> backstop_s(120)
    210.0
    """
    return 1.5 * float(limit_s) + 30.0


def leximin_in_worker(pool: pd.DataFrame, quotas: list, *, k: int, id_col: str, seed: int, time_limit: float,
                      progress=None):
    """:func:`dpdash.sortition.core.leximin_panels` computed in a worker process, progress relayed to
    ``progress(frac, msg)``; raises ``SearchLimitError`` past :func:`backstop_s`. Same arguments, same lottery."""
    return run_in_worker(lx.leximin_panels, pool, list(quotas), k=k, id_col=id_col, rng=seed,
                         time_limit_s=float(time_limit), progress=progress,
                         budget=Deadline(backstop_s(time_limit), what="the leximin's worker"))


#: token → (label, default panel size)
Q_SOURCES = {"tiny": ("Tiny example (12 people, panel of 4)", 4),
             "volunteers": ("Volunteer pool (500 people, 6 features, panel of 40)", 40),
             "upload": ("Upload respondents and quotas", 10)}
#: Pools up to this size are solved at once; larger ones on a button press, under the time limit.
AUTO_POOL = 50


def _uploaded_assembly():
    """Respondents and quotas from two uploads → (pool as read, quota file, id column) or None after a message.

    Reads the Sortition Foundation's files as they are (``dpdash.sortition.files``): quotas with the new or old
    header and their flex columns, respondents with any extra columns (kept for the exports).
    """
    na = st.checkbox("Read NA, N and None as missing answers", key="lx_q_na", bind="query-params",
                     help="Off: only an empty cell is a missing answer, and NA, N, None are answers like any other "
                          "(North, Namibia, no), as the Strat App reads them. On: they count as missing too.")
    codes = NA_CODES if na else BLANK_ONLY
    u1, u2 = st.columns(2)
    with u1:
        pool = upload_frame("Respondents CSV", key="lx_q_pool_csv", max_rows=MAX_RESPONDENTS, max_cols=60,
                            as_text=True, missing_codes=codes,
                            help="One row per volunteer: an id column, the quota features (≤ 12) and "
                                 "any other columns (kept in the exports), as the Strat App reads it.")
    with u2:
        qdf = upload_frame("Quotas CSV", key="lx_q_quota_csv", max_rows=500, max_cols=10, min_rows=1,
                           as_text=True, missing_codes=codes,
                           help="Columns feature,value,min,max or the Strat App's category,name,min,max, "
                                "optionally with min_flex,max_flex (kept and shown).")
    if pool is None or qdf is None:
        missing = " and ".join(w for w, f in (("respondents", pool), ("quotas", qdf)) if f is None)
        if st.session_state.get("_lx_q_from_link"):
            # issue 25: a link restores the settings, never the files; say so instead of two silent empty boxes
            st.warning(f"This link opens an uploaded assembly, but files do not travel in links: upload the "
                       f"{missing} file{'s' if ' and ' in missing else ''} again (the link restored the panel size "
                       f"k = {int(st.session_state.get('lx_q_k', 0))} and the other settings). Nothing you upload "
                       "leaves this session.")
        else:
            st.info("Upload both files: respondents (id + categorical columns) and quotas (feature, value, min, "
                    "max). Files stay in this session: a link to this view restores the settings, not the files.")
        return None
    try:
        qf = sf.read_quotas(qdf)
    except ValueError as exc:
        show_problem("The quotas file cannot be used:", exc)
        return None
    for note in qf.notes:
        st.info(md_escape(note, max_len=600))
    cols = list(pool.columns)
    feats = {q.lower() for q in qf.table["feature"]}

    def ok_id(c) -> bool:
        s = pool[c]
        return not s.isna().any() and not s.astype(str).str.strip().duplicated().any()

    unique = [c for c in cols if str(c).lower() not in feats and ok_id(c)]
    # data-dependent default: the first column with one distinct value per person (re-derived per file)
    id_col = st.selectbox("Id column", cols, index=cols.index(unique[0]) if unique else 0, key="lx_q_id",
                          bind="query-params")
    if str(id_col).lower() in feats:
        st.warning(f"The id column {md_quote(id_col)} is also a quota feature. Choose as id a column with one "
                   "unique value per person (e.g. person_id), not a feature the quotas count.")
        return None
    problem = sf.id_problems(pool, id_col)
    if problem:
        show_problem("The id column cannot be used:", problem)
        return None
    skipped = [c for c in cols[:cols.index(id_col)] if "id" in str(c).lower() and str(c).lower() not in feats]
    if skipped and unique and id_col == unique[0]:
        # the page chose another id column than the file's own: say why, never switch silently
        st.info(md_escape(f"Id column: {id_col} (chosen by the page). {sf.id_problems(pool, skipped[0])} "
                          "Choose another id column above if this is not the one.", max_len=800))
    return pool, qf, id_col


def _match(pool_file: pd.DataFrame, quotas, id_col: str):
    """The engine's pool (id and quota features, values stripped): matched ignoring case only when asked.

    Values that differ from the quotas only by case are reported in one message, with the switch that merges
    them (``sortition-algorithms`` merges them by design); None when the pool cannot be used as it is.
    """
    ignore = st.checkbox("Match values ignoring upper/lower case (as the Strat App and sortition-algorithms do)",
                         key="lx_q_case", bind="query-params",
                         help="'female' in the respondents file counts for the quota 'Female'; every merge is listed.")
    try:
        m = sf.match_pool(pool_file, quotas, ignore_case=True)
    except ValueError as exc:
        show_problem("The quotas cannot be matched:", exc)
        return None
    if m.message() and not ignore:
        st.warning(md_escape(m.message().replace("Matched ignoring upper/lower case, as sortition-algorithms does: ",
                                                 "These pool values and columns differ from the quotas only by upper/"
                                                 "lower case: "), max_len=1200)
                   + " Tick **Match values ignoring upper/lower case** to count them, or correct the files.")
        return None
    if m.message():
        st.info(md_escape(m.message(), max_len=1200))
    feats = list(dict.fromkeys(q.feature for q in quotas))
    missing = [f for f in feats if f not in m.pool.columns]
    if missing:
        show_problem("The respondents file cannot be used:", f"it has no column for the quota feature(s) "
                     f"{', '.join(missing)}; its columns are {', '.join(map(str, pool_file.columns[:20]))}.")
        return None
    return m.pool


def _blanks(matched: pd.DataFrame, pool_file: pd.DataFrame, qf: sf.QuotaFile, id_col: str, k: int):
    """Blank quota answers: named (count, rows, ids), then dropped or kept as their own value, as the user chooses.

    Returns (matched pool, respondents file rows kept, quota file with any added "(blank)" rows).
    """
    quotas = qf.quotas()
    feats = list(dict.fromkeys(q.feature for q in quotas))
    gaps = lx.missing_answers(matched, feats, id_col=id_col)
    if not gaps:
        return matched, pool_file, qf
    st.warning(md_escape(" ".join(g.sentence() for g in gaps), max_len=1500))
    how = choice("Respondents with a blank quota answer",
                 {"drop": "Leave them out of the pool",
                  "value": f"Keep them: a blank answer is its own value, {lx.BLANK} (quota 0 to k unless set)"},
                 key="lx_q_blank")
    fixed, qs, changed_n = lx.resolve_blanks(matched, quotas, k=k, how=how)
    if how == "drop":
        keep = ~lx.blank_rows(matched, feats)
        st.caption(f"{changed_n:,} of {len(matched):,} respondents left out; {len(fixed):,} remain.")
        return fixed, pool_file[keep].reset_index(drop=True), qf
    return fixed, pool_file, sf.add_quota_rows(qf, qs)


def _preset_quota_file(quotas) -> sf.QuotaFile:
    return sf.read_quotas(pd.DataFrame([{"feature": q.feature, "value": q.value, "min": q.min, "max": q.max}
                                        for q in quotas]))


def quota_tab():
    if "_lx_q_from_link" not in st.session_state:      # the session's first look at this tab: from a link?
        st.session_state["_lx_q_from_link"] = st.query_params.get("lx_q_source") == "upload"
    c1, c2 = st.columns([2, 1])
    src = choice("Pool and quotas", {t: v[0] for t, v in Q_SOURCES.items()}, key="lx_q_source", container=c1)
    if changed("lx_q_source"):
        st.session_state["lx_q_k"] = Q_SOURCES[src][1]
        st.session_state["_lx_q_from_link"] = False
    elif "lx_q_k" not in st.session_state:
        st.session_state["lx_q_k"] = Q_SOURCES[src][1]
    k = int(c2.number_input("Panel size k", 1, 1_000, step=1, key="lx_q_k", bind="query-params"))
    verdict_area = st.container()       # the verdict goes first; drawn into this fragment's own container
    id_col, pool_code = "person_id", None
    if src == "tiny":
        pool, qf, pool_code = lx.tiny_pool(), _preset_quota_file(lx.tiny_quotas()), "lx.tiny_pool()"
    elif src == "volunteers":
        (pool, quotas), pool_code = volunteer_cached(), "lx.volunteer_pool()"
        qf = _preset_quota_file(quotas)
    else:
        got = _uploaded_assembly()
        if got is None:
            return
        pool_file, qf, id_col = got
        matched = _match(pool_file, qf.quotas(), id_col)
        if matched is None:
            return
        matched, pool_file, qf = _blanks(matched, pool_file, qf, id_col, k)
        feats = list(dict.fromkeys(qf.table["feature"]))
        pool = matched[[id_col] + feats].copy()
        pool[id_col] = pool[id_col].astype(str).str.strip()
    pool_file = pool if src != "upload" else pool_file
    if k > len(pool):
        st.warning(f"The panel size k = {k} is larger than the pool ({len(pool)} people): choose k ≤ {len(pool)}.")
        return
    size = lx.leximin_size(pool, qf.quotas())
    if not size.fits:
        # refused before any solver runs: the quota check alone would hold the whole types × quotas matrix
        show_problem("The leximin cannot be computed for this pool:", size.message())
        return
    qframe = qf.table
    with st.expander("Quotas (editable)", expanded=src == "tiny"):
        # keyed by the quota table itself: edits made for one file never land on another file's rows
        qed = st.data_editor(qframe, key=f"lx_q_editor_{digest(qframe.to_csv(index=False))}", width="stretch",
                             disabled=["feature", "value", "min_flex", "max_flex"], hide_index=True, placeholder="")
        if qf.has_flex:
            st.caption("min_flex and max_flex: how far the Strat App may relax each quota. Kept, shown and written "
                       "back unchanged; the smallest change suggested here, if the quotas cannot be met, is computed "
                       "from min and max alone.")
        if src == "upload":
            download_csv(pd.DataFrame(qed[list(qf.table.columns)].to_numpy(), columns=list(qf.header)),
                         filename="quotas.csv", key="lx_dl_q_quotas", label="Quotas as edited (CSV, same header)")
    try:
        quotas = lx.quotas_from_frame(qed[["feature", "value", "min", "max"]])
        report = check_cached(pool, tuple(quotas), k)
    except ValueError as exc:
        show_problem("These quotas cannot be checked:", exc)
        return
    if not report.feasible:
        bad = lxv.quota_infeasible_view(report)
        verdict_box(bad.verdicts, verdict_area)
        for sec in bad.sections:
            st.markdown(f"**{md_escape(sec.title)}:** " + "; ".join(md_escape(t, max_len=400) for t in sec.lines)
                        + ".")
            table(bad.tables["relaxation"], hide_index=True)
            download_csv(bad.tables["relaxation"], filename="quota_relaxation.csv", key="lx_dl_relax",
                         label="Relaxation (CSV)")
        return
    seed, tlim, dist, run_key = _solve(pool, quotas, k, id_col, shared=src != "upload", verdict_area=verdict_area)
    if dist is None:
        return
    feats = list(dict.fromkeys(q.feature for q in quotas))
    colour = st.session_state.get("lx_q_colour") if st.session_state.get("lx_q_colour") in feats else feats[0]
    view = lxv.quota_view(pool, quotas, dist, k=k, seed=seed, baseline=baseline_cached(pool, tuple(quotas), k, seed),
                          id_col=id_col, source=Q_SOURCES[src][0], colour=colour, pool_code=pool_code,
                          pool_file=pool_file)
    verdict_box(view.verdicts, verdict_area)
    cards(view.headlines, columns=5)
    st.caption(view.sections[0].lines[0])               # numbers only
    st.selectbox("Colour people by", feats, key="lx_q_colour", bind="query-params")
    fg = view.figures
    fig_p = lf.make_panel_prob_figure(fg["probabilities"], fg["colour_values"], k=k, feature=fg["colour"])
    figure(fig_p, key="lx_fig_panel_probs", filename="leximin_people.html", alt=fg["people_alt"],
           caption=fg["people_caption"])
    figs = [(fg["people_alt"], fig_p)]
    if fg["baseline"] is None:
        st.info(fg["baseline_note"])
    else:
        fig_c = lf.make_panel_compare_figure({"leximin": fg["probabilities"], "uniform over quota-meeting panels":
                                              fg["baseline"]}, k=k)
        figure(fig_c, key="lx_fig_panel_compare", filename="leximin_vs_uniform.html", alt=fg["compare_alt"],
               caption=fg["compare_caption"])
        figs.append((fg["compare_alt"], fig_c))
    with uc.methodology():
        st.markdown(
            "**Beyond the paper.** A citizens' assembly is drawn from volunteers so that the panel meets quotas "
            "(e.g. 20–22 women). Among all lotteries over quota-meeting panels, the *leximin* lottery makes "
            "**everyone's chance as equal as the quotas allow: the smallest chance is as large as possible, then "
            "the next smallest, and so on** (Flanigan et al., *Nature* 596, 2021, cited as [b] ref. 13). Unlike "
            "the cohort tab, this equalises individuals' chances under hard quotas. People with the same "
            "features share one chance (a *type*). Open-source HiGHS finds the lottery: first the leximin of a "
            "relaxed problem where panels may hold fractions of people, which no real lottery can beat; when a "
            "lottery over real panels reaches it, that lottery is the answer, otherwise column generation "
            "(Flanigan et al.) searches on from the panels found.")
        table(view.tables["types"], hide_index=True)
    d1, d2, d3, d4 = st.columns(4)
    with d1:
        download_csv(view.tables["chances"], filename="leximin_chances.csv", key="lx_dl_q_probs",
                     label="Chances: the respondents file + a chance column (CSV)")
    with d2:
        download_csv(view.tables["types"], filename="leximin_types.csv", key="lx_dl_q_types", label="Types (CSV)")
    with d3:
        download_csv(view.tables["lottery"], filename="leximin_lottery.csv", key="lx_dl_q_lottery",
                     label="Lottery by type, exact probabilities (CSV)")
    if "lottery_file" in view.tables:
        with d4:
            download_csv(view.tables["lottery_file"], filename="leximin_lottery_assemblies.csv",
                         key="lx_dl_q_lottery_sf", label="Lottery as 1,000 panels, Strat App format (CSV)")
    st.caption("The 1,000-panel lottery has one column per panel (Assembly 0, Assembly 1, …), as sortition-algorithms "
               "writes multiple selections: draw one column uniformly. Its panel frequencies round the exact "
               "probabilities to multiples of 1/1,000.")
    draws = panel_draw_section(pool, quotas, dist, k, id_col, seed, run_key, pool_file)
    view = lxv.combine(view, draws)            # the report includes what was drawn (panel, draw log, seed)
    download_json({"source": src, "k": k, "time_limit_s": tlim, "seed": seed,
                   "quotas": [q.__dict__ for q in quotas]}, filename="leximin_parameters.json", key="lx_dl_q_params")
    artefacts(view, key="lx_art_quota", figures=figs, script=sl.panel_script(**view.script))


def _solve(pool, quotas, k, id_col, *, shared: bool, verdict_area):
    """Seed and time-limit controls, then the lottery: at once for small pools, on a button for larger ones.

    Returns (seed, time limit, lottery or None, run key).
    """
    auto = len(pool) <= AUTO_POOL
    s1, s2 = st.columns(2)
    seed = int(seed_input(key="lx_q_seed", label="Seed (initial panels, draws)", container=s1))
    tlim = s2.slider("Computation limit (CPU seconds)", 10, 600, 120, step=10, key="lx_q_time", bind="query-params",
                     disabled=auto,
                     help=(f"Pools of up to {AUTO_POOL} people are solved at once without a limit; this applies to "
                           "larger pools.") if auto else "Seconds of computation (CPU time), not of waiting: a busy "
                                                          "server takes longer but gives the same result. A run "
                                                          "stopped at the limit says what it has proved so far.")
    if auto:
        tlim = 120          # a small pool finishes in well under a second: the limit is not what the user set
    run_key = (hashlib.sha256(pd.util.hash_pandas_object(pool, index=False).values.tobytes()).hexdigest(),
               tuple(quotas), k, id_col, seed, float(tlim))
    if auto:
        try:
            return seed, tlim, leximin_cached(pool, tuple(quotas), k, id_col, seed, float(tlim)), run_key
        except (ValueError, RuntimeError) as exc:
            show_problem("The leximin lottery could not be computed:", exc)
            return seed, tlim, None, run_key
    stopped = st.session_state.pop(RUNNING, None)
    pressed = st.button("Compute leximin", key="lx_q_run", type="primary")
    if stopped is not None and not pressed:  # said once, unless the user is already starting it again
        st.info(f"Stopped: the last leximin run was stopped (by **Stop** or a changed setting) after "
                f"{stopped['done']:.0%} of its work (last step: {md_escape(stopped['msg'] or 'starting', max_len=200)})"
                ", so it has no result; its worker process was ended. Press **Compute leximin** to start again.")
    if pressed and recall_leximin(run_key) is None:
        # In a worker process of its own (never in the server's): the bar moves with the relayed progress, and
        # the run is noted until it ends, so a run stopped mid-way is said on the next run.
        note = st.session_state[RUNNING] = {"done": 0.0, "msg": ""}
        with st.status("Computing the leximin lottery…", expanded=True) as status:
            bar = st.progress(0.0, text="Starting a worker process…")

            def progress(frac, msg):
                note.update(done=min(1.0, max(0.0, float(frac))), msg=str(msg))
                bar.progress(min(1.0, max(0.0, frac)), text=msg)

            try:
                dist = leximin_in_worker(pool, list(quotas), k=k, id_col=id_col, seed=seed, time_limit=float(tlim),
                                         progress=progress)
            except SearchLimitError:
                st.session_state.pop(RUNNING, None)
                status.update(label="Stopped at the computation limit", state="error")
                show_problem("The leximin lottery could not be computed:",
                             f"its worker used more than {backstop_s(tlim):g} s of computation (CPU time), past the "
                             f"limit of {tlim:g} s that the solver checks between its steps, so it was ended and "
                             "has no lottery to show. Make the pool or the panel smaller, or lower the limit so "
                             "the solver stops itself with what it has proved.")
                return seed, tlim, None, run_key
            except (ValueError, RuntimeError) as exc:
                st.session_state.pop(RUNNING, None)
                status.update(label="Failed", state="error")
                show_problem("The leximin lottery could not be computed:", exc)
                return seed, tlim, None, run_key
            st.session_state.pop(RUNNING, None)
            status.update(label=f"Done: {dist.seconds:.1f} s of computation", state="complete")
        remember_leximin(run_key, dist, shared=shared)
    dist = recall_leximin(run_key)
    if dist is None:
        verdict_area.success(f"✓ The quotas can be met: panels of {k} out of {len(pool):,} people exist.")
        st.info("Press **Compute leximin** (large pools take up to a minute; progress is shown).")
    return seed, tlim, dist, run_key


def panel_draw_section(pool, quotas, dist, k, id_col, seed, run_key, pool_file):
    """Draw one panel from the lottery (seeded, logged); its members with their features, one row per member.

    Returns the draws' view (:func:`dpdash.sortition.views.draw_view`) for the report."""
    qlog = st.session_state.setdefault("lx_q_log", [])
    lottery_id = hashlib.sha256(repr(run_key).encode()).hexdigest()[:10]
    if not len(dist.panels):
        st.info("No panel can be drawn yet: the run stopped before it found a lottery. Raise the computation limit.")
        return lxv.draw_view(qlog, lottery_id=lottery_id)
    if st.button("Draw a panel", key="lx_q_draw", type="primary"):
        ds = seed + len(qlog)
        members = lx.draw_panel(dist, rng=ds)
        qlog.append({"time (UTC)": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S"), "seed": ds, "k": k,
                     "lottery": lottery_id, "members": " ".join(members)})
    if qlog and qlog[-1].get("lottery") != lottery_id:
        # a panel from another pool, quotas or k must not be checked against the current quotas
        st.caption("The last panel was drawn from another lottery (other pool, quotas, k or seed); it is in the "
                   "draw log below. Press **Draw a panel** to draw from this one.")
        download_csv(pd.DataFrame(qlog), filename="panel_draw_log.csv", key="lx_dl_q_log", label="Draw log (CSV)")
        return lxv.draw_view(qlog, lottery_id=lottery_id)
    if qlog:
        last = qlog[-1]
        st.success(f"Panel drawn with seed **{last['seed']}** at {last['time (UTC)']} UTC.")
        qt = lx.panel_quota_table(pool, quotas, last["members"].split(), id_col=id_col)
        qt["met"] = qt["met"].map({True: "✓", False: "✗"})
        table(qt, hide_index=True)
        # the respondents file's own rows and columns, as the Strat App writes "selected" and "remaining"
        selected, remaining = sf.panel_tables(pool_file, id_col, last["members"].split())
        table(selected, hide_index=True)
        m1, m2, m3 = st.columns(3)
        with m1:
            download_csv(selected, filename="leximin_drawn_panel.csv", key="lx_dl_q_panel",
                         label="Drawn panel: selected (CSV)")
        with m2:
            download_csv(remaining, filename="leximin_remaining.csv", key="lx_dl_q_remaining",
                         label="Drawn panel: remaining (CSV)")
        with m3:
            download_csv(pd.DataFrame(qlog), filename="panel_draw_log.csv", key="lx_dl_q_log",
                         label="Draw log (CSV)")
        return lxv.draw_view(qlog, lottery_id=lottery_id, selected=selected, check=qt)
    return lxv.draw_view(qlog, lottery_id=lottery_id)
