"""Sampling designer: what guarantee does the population get when a DP statistic is computed on a sample?

Thin page: widgets → cached engine calls (``dpdash.sampling``) → figures (``dpdash.sampling_figures``).
Source: 003_4b386133f61617e9.txt, paper 1 (Bun, Drechsler, Gaboardi, McMillan, Sarathy, FORC 2022);
spec shared/specs/sampling_designer.md.
"""

from __future__ import annotations

import functools
import hashlib
import math
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import sampling as sp
from dpdash import sampling_figures as sf
from dpdash import sampling_verdicts as sv
from dpdash import script_sampling as ss
from dpdash.sampling_frames import parse_numbers
from ui import page_end, page_setup
from ui.charts import show_figure
from ui.common import methodology
from ui.dossier import Headline, PageSummary, artefacts
from ui.exports import download_csv
from ui.tabs import lazy_tabs
from ui.text import md_escape, md_quote
from ui.upload import csv_uploader
from ui.widgets import choice, log_slider, multi_choice, seed_input

page_setup("Sampling designer", icon=":material/filter_alt:", uses_dataset=False)

SEED = "003_4b386133f61617e9.txt, paper 1"
REPO_ROOT = str(Path(__file__).resolve().parents[1])
PAPER = f"{SEED}: Bun, Drechsler, Gaboardi, McMillan, Sarathy, Controlling Privacy Loss in Sampling Schemes (FORC 2022)"
SIZE_MODES = {"m": "sample size m", "rate": "sampling rate q"}
#: The Simple tab's schemes: link token → label; older links' "SRSWOR", "Poisson", "SRSWR" are these tokens.
SCHEMES = {"srswor": "without replacement", "poisson": "Poisson", "srswr": "with replacement"}
SCHEME_TITLES = {"srswor": "SRS without replacement", "poisson": "Poisson sampling", "srswr": "SRS with replacement"}
SCHEME_CURVES = {"srswor": "SRSWOR", "poisson": "Poisson", "srswr": "SRSWR"}   # dpdash.sampling_figures' names
MAX_FRAME_ROWS = 2_000_000
MAX_STRATA = 200
MAX_CLUSTERS = 100_000
LABEL = sp.STRATA_COLUMN_LABELS   # the strata editor's headers
CALIB_SENTENCE = ("To guarantee ε′ = {target} for everyone in the population of {n}, run your mechanism on the "
                  "sample with per-record ε = {lam} (Laplace scale = {scale} × sensitivity).")
NO_AMP_BANNER = ("No amplification guaranteed: at this sampling rate the Theorem 6 bound ({val}) is larger than "
                 "the ε you spend on the sample ({eps}). Lower the rate below r* = {rstar}.")
CLUSTER_CAPTION = ("Large clusters let an analysis guess which clusters were drawn, which removes the benefit of "
                   "sampling (Theorems 7–9).")
H_EQUALS_P = ("Design values computed from this file make the design data-dependent (the paper assumes H = P): "
              "see the sensitivity panel.")
DEGRADATION_BANNER = ("This design can make privacy worse: one person can change the sample sizes by {delta}, "
                      "which a released count reveals at {loss}.")
BADGE = {"paper": ":blue-badge[paper]", "external": ":orange-badge[external]", "derived": ":green-badge[derived]",
         "shortcut": ":gray-badge[paper shortcut — do not use]"}


def fmt(v: float | None) -> str:
    """4 significant digits (the full value goes in the tooltip)."""
    if v is None:
        return "—"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if not math.isfinite(v):
        return "∞" if v > 0 else str(v)
    return f"{v:.4g}"


def metric(label: str, value: float | None, *, help: str = "", container=None) -> None:
    target = container if container is not None else st
    full = "unavailable" if value is None else repr(float(value))
    target.metric(label, fmt(value), help=f"Full value: {full}. {help}".strip())


def show(fig, *, key: str, filename: str, caption: str, alt: str, table: pd.DataFrame | None = None,
         **names: str) -> None:
    """Chart with its alt text + plain-language reading + exports (figure files and the table's CSV, with
    headers in words, are built only when clicked); ``names`` override CSV headers for this table."""
    show_figure(fig, key=key, filename=f"{filename}.html", caption=caption, alt=alt)
    if table is not None:
        download_csv(sf.for_people(table, **names), filename=f"{filename}.csv", key=f"{key}_csv")
    SHOWN.append((alt, fig))


#: The figures the running tab has shown, (alt text, figure), for its report; each tab clears it first.
SHOWN: list = []


def take_away(tab: str, *, question: str, params: dict, headlines: list, verdicts: list, sources: list,
              epsilon: float | None, script: str, delta: float | None = None, seed: int | None = None) -> None:
    """The tab's report, settings and "Copy as code" script (``ui.dossier.artefacts``), after its results."""
    artefacts(PageSummary(page="sampling_designer", title="Sampling designer", question=question, params=params,
                          headlines=headlines, verdicts=[v for v in verdicts if v], figures=list(SHOWN),
                          sources=[PAPER, *sources], epsilon=epsilon, delta=delta, seed=seed, script=script),
              key=f"sd_art_{tab}")


def verdict(slot, text: str, level: str = "info") -> None:
    """The tab's answer first: an engine verdict sentence in a coloured box (``level`` info / warn / bad)."""
    box = {"info": slot.info, "warn": slot.warning, "bad": slot.error}[level]
    box(md_escape(text, max_len=2000), icon={"info": ":material/task_alt:", "warn": ":material/warning:",
                                               "bad": ":material/block:"}[level])


def level_of(epsilon: float, epsilon_population: float) -> str:
    """Box colour for a design: red without amplification, orange with almost none, blue otherwise."""
    gain = sv.gain_words(epsilon, epsilon_population)
    return "bad" if gain == "no amplification" else "warn" if gain else "info"


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


def calibration_box(cal: sp.Calibration, *, n: int, shortcut_gives: float | None, shortcut_label: str,
                    design: str = "") -> None:
    with st.container(border=True):
        st.markdown("**Calibration: per-record ε to use on the sample** " + BADGE[cal.status])
        if design:
            st.caption(design)
        scale = cal.noise_scale_per_sensitivity
        st.markdown(CALIB_SENTENCE.format(target=fmt(cal.epsilon_target), n=f"{n:,}", lam=fmt(cal.epsilon_sample),
                                          scale=fmt(scale)), help=f"Full value: ε = {cal.epsilon_sample!r}. "
                                                                  f"Source: {cal.source}.")
        if cal.epsilon_sample_paper_approx is not None:
            tail = f" — that would actually give ε′ = {fmt(shortcut_gives)}." if shortcut_gives is not None else "."
            st.markdown(f":gray[Paper shortcut ({shortcut_label}): ε = {fmt(cal.epsilon_sample_paper_approx)}"
                        f"{tail}] {BADGE['shortcut']}")


# ----------------------------------------------------------------------------------------------------------
# Cached engine calls (the engine never imports streamlit)
# ----------------------------------------------------------------------------------------------------------

@st.cache_data(max_entries=256, show_spinner=False)
def c_rate_table(eps: float, n: int) -> pd.DataFrame:
    return sf.rate_curve_table(epsilon=eps, n=n)


@st.cache_data(max_entries=64, show_spinner=False)
def c_random_view(family: str, n: int, mean: float, sd: float, low: int, high: int, base: str, p_full: float,
                  eps: float, target: float) -> sf.RandomSizeView:
    """Cards, calibration, σ-curve and size-law tables of the Random sample size tab: one engine result."""
    law = sp.size_law_from_controls(n, family=family, mean=mean, sd=sd, low=low, high=high, base=base,
                                    p_full=p_full)
    return sf.random_size_view(law, epsilon=eps, epsilon_target=target, mean=mean,
                               current_sd=sd if family == "gaussian" and sd > 0 else None)


@st.cache_data(max_entries=256, show_spinner=False)
def c_sawtooth(eps: float, r: float, lo: int, hi: int) -> pd.DataFrame:
    return sf.sawtooth_table(epsilon=eps, rate=r, n_min=lo, n_max=hi)


@st.cache_data(max_entries=256, show_spinner=False)
def c_heatmap(k: int, ell: int) -> pd.DataFrame:
    return sf.cluster_heatmap_table(n_clusters=k, n_drawn=ell)


@st.cache_data(max_entries=256, show_spinner=False)
def c_cluster(sizes: tuple, eps: float, ell: int, rw: float, target: float):
    s = np.asarray(sizes, dtype=float)
    b = sp.cluster_bounds(s, epsilon=eps, n_drawn=ell)
    two = sp.two_stage_cluster_upper(s, epsilon=eps, n_drawn=ell, within_rate=rw)
    cal = sp.calibrate_cluster(s, epsilon_target=target, n_drawn=ell, within_rate=rw)
    return b, two, cal


@st.cache_data(max_entries=64, show_spinner=False)
def c_lognormal_sizes(k: int, median: float, sigma: float, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    return tuple(int(v) for v in np.floor(rng.lognormal(math.log(max(median, 1e-9)), sigma, k) + 0.5))


@st.cache_data(max_entries=256, show_spinner=False)
def c_allocation(N: tuple, S: tuple, m: int, U: float, eps: tuple, names: tuple, methods: tuple, m_min: int):
    return sf.allocation_table(np.array(N), np.array(S), m=m, value_max=U, epsilon=np.array(eps), names=names,
                               methods=methods, m_min=m_min)


@st.cache_data(max_entries=256, show_spinner=False)
def c_shift(N: tuple, mean: tuple, S: tuple, m: int, bounds: tuple, within: bool):
    return sp.neyman_worst_shift(np.array(N), np.array(mean), np.array(S), m=m, bounds=bounds, within_bounds=within)


@st.cache_data(max_entries=16, show_spinner=False, scope="session")
def c_summary(digest: str, _df: pd.DataFrame, stratum: str | None, cluster: str | None, value: str | None, ddof: int):
    try:
        return sp.summarize_frame(_df, stratum_col=stratum, cluster_col=cluster, value_col=value, ddof=ddof), None
    except ValueError as exc:
        return None, str(exc)


# ----------------------------------------------------------------------------------------------------------
# Header and global strip
# ----------------------------------------------------------------------------------------------------------

st.title("Sampling designer")
st.markdown(
    "Your differentially private statistic is computed on a **sample** of the population. What guarantee ε′ "
    "does the **population** get, and what ε may you spend on the sample? Each tab answers for one sampling "
    "design: a small random sample strengthens the guarantee; large clusters, and sample sizes that depend on "
    "the data, give no gain or make it worse.")


def page_method() -> None:
    """The page's method note, drawn below the tabs so each tab's answer comes first on screen."""
    with methodology("Where these numbers come from"):
        st.markdown(
            "Numbers follow Bun, Drechsler, Gaboardi, McMillan & Sarathy, *Controlling Privacy Loss in Sampling "
            f"Schemes* (FORC 2022; seed file {SEED}). ε is what your mechanism spends per record on the sample; ε′ "
            "is the guarantee for a person in the population once the sample is drawn secretly at random. Badges "
            "say where each number comes from: " + " ".join(BADGE.values()))

# The strip is drawn after the tabs (into this placeholder, above them) so that it knows which tab is open and
# can disable the controls that tab does not use.
STRIP = st.container()


# ----------------------------------------------------------------------------------------------------------
# Frame upload, above the tabs: the Cluster and Stratified tabs both use it, and an uploader inside a tab that
# is not drawn would drop its file
# ----------------------------------------------------------------------------------------------------------

def frame_upload() -> tuple[sp.FrameSummary | None, str | None]:
    with st.expander("Upload a sampling frame (CSV, one row per population unit)", expanded=False):
        st.markdown("Columns: a **stratum** column and/or a **cluster** column, and optionally a numeric **value** "
                    "column (used for Neyman's S_h). The strata fill the Stratified tab, the cluster sizes the "
                    "Cluster tab. The file stays in memory and is never written to disk.")
        # one column is enough (a cluster id); codes stay text (stratum "01" is not the number 1), and the value
        # column is converted and checked by summarize_frame
        # "N" and "NA" are real stratum codes here (North, North America): only an empty cell is missing.
        # Frames are long and narrow (a code, maybe a value): room for the spec's 2M rows of two columns.
        ds = csv_uploader("Sampling frame CSV", key="sd_frame", max_bytes=50_000_000, max_rows=MAX_FRAME_ROWS,
                          min_rows=1, min_cols=1, as_text=True, missing_codes=("",), max_cells=2 * MAX_FRAME_ROWS)
        if ds is None:
            return None, None
        df = ds.frame
        up = st.session_state.get("sd_frame")
        digest = f"{getattr(up, 'file_id', '')}-{getattr(up, 'size', '')}-{df.shape}"
        cols = ["(none)"] + list(df.columns)
        c1, c2, c3, c4 = st.columns(4)
        s_col = c1.selectbox("Stratum column", cols, key="sd_col_stratum", bind="query-params")
        k_col = c2.selectbox("Cluster column", cols, key="sd_col_cluster", bind="query-params")
        v_col = c3.selectbox("Value column (numeric)", cols, key="sd_col_value", bind="query-params")
        ddof1 = c4.toggle("S_h with n − 1 (ddof 1)", value=False, key="sd_ddof1", bind="query-params",
                          help="The paper does not say which variance it uses (Erratum E10); default ddof 0.")
        pick = [None if c == "(none)" else c for c in (s_col, k_col, v_col)]
        if pick[0] is None and pick[1] is None:
            st.info("Choose a stratum column and/or a cluster column to use this file.")
            return None, None
        chosen = [(role, c) for role, c in zip(("stratum", "cluster", "value"), pick) if c is not None]
        for c in {c for _, c in chosen}:
            roles = [role for role, x in chosen if x == c]
            if len(roles) > 1:
                st.warning(f"The same column {md_quote(c)} is chosen as the {' and the '.join(roles)} column. "
                           "Each role needs its own column: choose another one, or (none).")
                return None, None
        summ, err = c_summary(digest, df, pick[0], pick[1], pick[2], 1 if ddof1 else 0)
        # the file was read; what follows depends on the column choice, so it is a warning, not an error
        if err:
            st.warning(f"These columns cannot be used: {md_escape(err, max_len=400)}")
            return None, None
        if summ.strata is not None and len(summ.strata) > MAX_STRATA:
            st.warning(f"This file has {len(summ.strata):,} strata; the designer handles at most {MAX_STRATA}. "
                     "Choose a coarser stratum column.")
            return None, None
        if summ.cluster_sizes is not None and len(summ.cluster_sizes) > MAX_CLUSTERS:
            st.warning(f"This file has {len(summ.cluster_sizes):,} clusters; the designer handles at most "
                     f"{MAX_CLUSTERS:,}. Choose a coarser cluster column.")
            return None, None
        if summ.cluster_sizes is not None and len(summ.cluster_sizes) < 2:
            st.warning("The cluster column has fewer than 2 distinct clusters; cluster sampling needs at least 2.")
            return None, None
        for note in summ.notes:
            st.info(md_escape(note, max_len=400))
        st.warning(H_EQUALS_P)
        st.success(f"Frame read: {summ.n:,} units"
                   + (f", {len(summ.strata)} strata" if summ.strata is not None and pick[0] else "")
                   + (f", {len(summ.cluster_sizes):,} clusters" if summ.cluster_sizes is not None else "") + ".")
        return summ, f"{digest}-{pick}-{int(ddof1)}"


FRAME, FRAME_ID = frame_upload()

TAB_LABELS = ["Simple random samples", "Random sample size", "Rounding & data-dependent size", "Cluster sampling",
              "Stratified sampling & allocation"]
# Bound tabs track which one is open (a switch reruns the page), so only the open tab computes and draws its
# numbers and charts: a global slider then redraws one tab, not five. Every tab still draws its heading and its
# controls column, laid out as when open, so the URL keeps the design and the Simple tab can overlay the Cluster
# tab's design. (Drawing a control at another place when its tab opens left the URL stale after the next move in
# 1–3 of 10 tab switches, Streamlit 1.67; the few controls placed among the outputs are therefore drawn only when
# their tab is open, and keep their value for the session, not in a link copied on another tab.)
# Tabs never opened in this session and not named in the link draw nothing (ui/tabs.py): their controls are at
# their defaults, so the link loses nothing. The Cluster tab always runs: the Simple tab overlays its design.
# A link parameter with one of these keys belongs to that tab.
TAB_KEYS = [
    {"sd_size_mode", "sd_m", "sd_rate", "sd_schemes", "sd_show_rounding", "sd_show_cluster"},
    {"sd_family", "sd_base", "sd_mean", "sd_sigma", "sd_low", "sd_high", "sd_p_full"},
    {"sd_r", "sd_pair_n", "sd_saw_from", "sd_saw_len", "sd_delta_sizes"},
    set(),
    {"sd_preset", "sd_alloc_m", "sd_U", "sd_mmin", "sd_methods", "sd_logy", "sd_outside", "sd_draw_seed"},
]
TABS = lazy_tabs(TAB_LABELS, key="sd_tab", link_keys=TAB_KEYS, by_prefix=False, always={3},
                 state_key="sd__drawn_tabs")
OPEN = [t.open for t in TABS]
# Which global controls each tab uses: the others are disabled while it is open (they keep their value and link).
USES_DELTA = OPEN[0]
USES_N = OPEN[0] or OPEN[1] or OPEN[2]

with STRIP:
    g1, g2, g3, g4 = st.columns([3, 2, 2, 3])
    with g1:
        EPS = log_slider("ε on the sample", key="sd_eps", min_value=1e-3, max_value=10.0, value=1.0,
                         help="The privacy budget your mechanism spends on the sample (per person in the sample).")
    with g2:
        delta_on = st.toggle("δ > 0", value=False, key="sd_delta_on", bind="query-params",
                             disabled=not USES_DELTA,
                             help="Approximate DP (ε, δ). Only the simple random sampling results carry a δ "
                                  "(Simple tab); the others are pure ε.")
        DELTA = log_slider("δ on the sample", key="sd_delta", min_value=1e-12, max_value=1e-3, value=1e-6,
                               steps_per_decade=4, disabled=not USES_DELTA) if delta_on else 0.0
    with g3:
        N_POP = int(st.number_input("Population size n", min_value=2, max_value=10**9, value=10_000, step=1,
                                    key="sd_n", bind="query-params", disabled=not USES_N,
                                    help="Used by the Simple, Random size and Rounding tabs; the Cluster and "
                                         "Stratified tabs take the population from their cluster or stratum "
                                         "sizes."))
    with g4:
        TARGET = log_slider("Target ε′", key="sd_target", min_value=1e-3, max_value=5.0,
                            value=1.0, help="Used by the calibration boxes: what ε may I spend on the sample?")


# ----------------------------------------------------------------------------------------------------------
# Tab 1: simple random samples
# ----------------------------------------------------------------------------------------------------------

def current_cluster_band(eps: float):
    """The Cluster tab's design (stored by its controls, which run first) as (ℓ/k, Thm 7 lower, Thm 8 upper)."""
    design = st.session_state.get(CLUSTER_STATE)
    if design is None:
        return None
    sizes, ell = design
    b = sp.cluster_bounds(np.asarray(sizes, dtype=float), epsilon=eps, n_drawn=ell)
    return (b.rate_clusters, b.worst_lower, b.worst_upper)


@st.fragment
@guarded
def tab_simple(eps: float, delta: float, n: int, target: float, outputs: bool = True) -> None:
    """Tab 1 (controls always; numbers and the rate plot only when ``outputs``, i.e. the tab is open)."""
    SHOWN.clear()
    st.subheader("Simple random samples: SRS without replacement, Poisson, with replacement")
    slot = st.container()
    # the full width, so all three scheme chips fit (in the narrow column the third was cut at 1280 px)
    schemes = multi_choice("Schemes", SCHEMES, key="sd_schemes", default=["srswor", "poisson"],
                           help="Simple random sampling without replacement (m of n), Poisson sampling (each "
                                "record independently at rate q), or with replacement (m draws; external "
                                "and incomplete: δ′ is not computed).")
    c1, c2 = st.columns([2, 3])
    with c1:
        mode = choice("Set the sample by", SIZE_MODES, key="sd_size_mode", widget="radio", horizontal=True)
        if mode == "m":
            m = int(st.number_input("Sample size m", min_value=1, max_value=10**9, value=100, step=1, key="sd_m",
                                    bind="query-params"))
            if m > n:
                st.warning(sv.sample_exceeds_population(m=m, n=n))
                m = n
            q = m / n
        else:
            q = log_slider("Sampling rate q", key="sd_rate", min_value=1e-5, max_value=1.0, value=0.01)
            m = max(1, min(n, math.floor(q * n + 0.5)))
            if m != q * n:
                st.caption(f"SRS draws a whole number of records: m = {m:,} (rate m/n = {fmt(m / n)}); Poisson "
                           f"sampling uses q = {fmt(q)} itself.")
        show_rounding = st.toggle("Overlay randomised rounding (Thm 6)", value=True, key="sd_show_rounding",
                                  bind="query-params")
        has_cluster = st.session_state.get(CLUSTER_STATE) is not None
        show_cluster = st.toggle("Overlay the cluster design of the Cluster tab", value=True, key="sd_show_cluster",
                                 bind="query-params", disabled=not has_cluster,
                                 help=None if has_cluster else "The Cluster tab has no valid design to overlay.")
    if not outputs:
        return
    with c2:
        cards = []
        # cards in a fixed order, whatever the order of the choice
        if "srswor" in schemes:
            cards.append(("srswor", sp.amplify_srswor(epsilon=eps, m=m, n=n, delta=delta), f"m = {m:,} of n = {n:,}"))
        if "poisson" in schemes:
            cards.append(("poisson", sp.amplify_poisson(epsilon=eps, rate=q, delta=delta), f"rate q = {fmt(q)}"))
        if "srswr" in schemes:
            cards.append(("srswr", sp.amplify_srswr(epsilon=eps, m=m, n=n), f"{m:,} draws from {n:,}"))
        cols = st.columns(max(len(cards), 1))
        for col, (scheme, a, what) in zip(cols, cards):
            with col.container(border=True):
                st.markdown(f"**{SCHEME_TITLES[scheme]}** {BADGE[a.status]}")
                st.caption(f"{what}; relation: {a.neighbour} neighbours")
                metric("population ε′", a.epsilon_population, help=f"Source: {a.source}.")
                metric("population δ′", a.delta_population, help="Shown as — where not computed (with replacement).")
                if a.epsilon_paper_approx is not None:
                    st.markdown(f":gray[shortcut q·ε = {fmt(a.epsilon_paper_approx)}] {BADGE['shortcut']}")
                for w in a.warnings:
                    st.warning(w)
        if not cards:
            st.info("Pick at least one scheme.")
            verdict(slot, "Pick at least one sampling scheme to see its guarantee.")
        else:
            scheme, a, _ = cards[0]
            text = sv.simple_verdict(epsilon=eps, epsilon_population=a.epsilon_population,
                                     rate=q if scheme == "poisson" else m / n, scheme=scheme, m=m, n=n, delta=delta,
                                     delta_population=a.delta_population, shortcut=a.epsilon_paper_approx)
            verdict(slot, text, level_of(eps, a.epsilon_population))
            if sv.gain_words(eps, a.epsilon_population):
                slot.warning("To gain from sampling, sample a smaller share of the population: lower m (or q).")
        # the rate the calibrated design really samples at: m/n for SRS, q for Poisson (they differ when q·n is
        # not whole); SRS wins when both are shown, and the box says which it used
        srs = "poisson" not in schemes or "srswor" in schemes or "srswr" in schemes
        q_cal = m / n if srs else q
        cal = sp.calibrate_srswor(epsilon_target=target, rate=q_cal)
        gives = sp.amplify_poisson(epsilon=cal.epsilon_sample_paper_approx, rate=q_cal).epsilon_population
        calibration_box(cal, n=n, shortcut_gives=gives, shortcut_label="ε′/q, [a] §2.4, Erratum E1",
                        design=(f"SRS without replacement of m = {m:,} from n = {n:,} (rate {fmt(q_cal)})" if srs
                                else f"Poisson sampling at rate q = {fmt(q_cal)}") + "; Theorem 2 inverted.")
    with methodology("Why the sample size matters (Lemma 16)"):
        st.markdown(
            "If one person joins a population of n and the sample size also changes from m to m′, the two "
            "outputs are log(1 + m/(n+1)·(e^{2ε} − 1)) + |m − m′|·ε apart (Lemma 16, Appendix B; note the 2ε). "
            f"Here, with m′ = m + 1: **{fmt(sp.lemma16_bound(epsilon=eps, m=m, m_prime=min(m + 1, n + 1), n=n))}**. "
            "That is why designs whose sample size depends on the data need care (Rounding tab).")
    df = c_rate_table(eps, n)
    band = current_cluster_band(eps) if show_cluster else None
    fig = sf.make_rate_figure(df, epsilon=eps, schemes=[c for s, c in SCHEME_CURVES.items() if s in schemes],
                              current_rate=q, show_rounding=show_rounding, cluster_band=band)
    cur = float(sp.amplification_map(q, eps))
    show(fig, key="sd_fig_rate", filename="sampling_rate_curve", table=df,
         alt=f"Line chart of the population ε′ against the sampling rate from 0.01% to 100% for ε = {fmt(eps)}: "
             f"ε′ rises from near 0 to ε; your design (rate {fmt(q)}) sits at ε′ = {fmt(cur)}.",
         caption="Reading: each curve is the population ε′ you get for a given sampling rate when your mechanism "
                 "spends ε per record on the sample (Theorem 2; Poisson and with-replacement from [BBG18]). Below "
                 "the dotted line sampling helps; the shaded zone is worse than not sampling at all. The grey "
                 "dashed line is the paper's q·ε shortcut, which is far too optimistic at large ε (Erratum E1). "
                 "The orange curve is proportional sampling with randomised rounding (Theorem 6): it helps only "
                 "at small rates; the green mark is the cluster design of the Cluster tab at its cluster rate ℓ/k "
                 "(Theorems 7–8).")
    if cards:
        take_away("simple", question="What guarantee ε′ does the population get when the ε-DP statistic is computed "
                                     "on a simple random sample, and what ε may be spent for a target ε′?",
                  params={"ε on the sample": fmt(eps), "δ on the sample": fmt(delta) if delta else "0 (pure ε)",
                          "population n": f"{n:,}", "sample size m": f"{m:,}", "sampling rate q": fmt(q),
                          "schemes": ", ".join(SCHEME_TITLES[s] for s in schemes), "target population ε′": fmt(target)},
                  headlines=[Headline(f"{SCHEME_TITLES[t]}: population ε′", fmt(a.epsilon_population),
                                      f"δ′ = {fmt(a.delta_population)}" if a.delta_population is not None
                                      else "δ′ not computed") for t, a, _ in cards]
                  + [Headline("ε to spend on the sample for the target", fmt(cal.epsilon_sample),
                              f"target ε′ = {fmt(target)}")],
                  verdicts=[text], sources=[a.source for _, a, _ in cards], epsilon=cards[0][1].epsilon_population,
                  delta=cards[0][1].delta_population or None,
                  script=ss.simple_script(repo_root=REPO_ROOT, epsilon=eps, n=n, m=m, rate=q, delta=delta,
                                          epsilon_target=target))


# ----------------------------------------------------------------------------------------------------------
# Tab 2: random data-independent sample size (Theorem 3)
# ----------------------------------------------------------------------------------------------------------

FAMILIES = {"gaussian": "Gaussian (discretised)", "point": "point mass", "uniform": "uniform",
            "mixture": "mixture with a tiny chance of taking everyone"}
BASES = {k: v for k, v in FAMILIES.items() if k != "mixture"}


def figure2_setting() -> None:
    st.session_state["sd_eps"] = 0.01
    st.session_state["sd_n"] = 10_000
    st.session_state["sd_family"] = "gaussian"
    st.session_state["sd_mean"] = 5000.0
    st.session_state["sd_sigma"] = 100.0


@st.fragment
@guarded
def tab_random(eps: float, n: int, target: float, outputs: bool = True) -> None:
    """Tab 2 (controls always; numbers and plots only when ``outputs``)."""
    SHOWN.clear()
    st.subheader("Random sample size, independent of the data (Theorem 3)")
    slot = st.container()
    with methodology():
        st.markdown("The sample size m is drawn from a distribution t, then m records are drawn without "
                    "replacement. What matters is the mean of t *weighted* towards large sizes, E_t̃[m] with "
                    "t̃(m) ∝ e^{εm}·t(m): at large ε, or with a tiny chance of sampling everyone, this weighted "
                    "mean "
                    "sits near the whole population and the gain is gone (§3).")
    too_big = n > sp.MAX_RANDOM_SIZE_N
    if too_big:
        st.warning(f"Random sample sizes are computed for populations up to {sp.MAX_RANDOM_SIZE_N:,} (n = {n:,}). "
                   "Lower the population size to see this tab's numbers.")
    c1, c2 = st.columns([1, 2])
    with c1:
        if st.button("Figure 2 setting (n = 10,000, ε = 0.01, mean n/2)", key="sd_fig2", on_click=figure2_setting):
            st.rerun()
        family = choice("Size distribution", FAMILIES, key="sd_family")
        base = choice("Mixture: base distribution", BASES, key="sd_base", disabled=family != "mixture")
        # the law actually used: the family, or the mixture's base; controls it does not read are disabled
        shape = base if family == "mixture" else family
        mean = float(st.number_input("Mean (or point) sample size", min_value=0.0, max_value=1e6, value=5000.0,
                                     step=1.0, key="sd_mean", bind="query-params", disabled=shape == "uniform"))
        sd = float(st.number_input("Standard deviation σ", min_value=0.0, max_value=5e5, value=100.0, step=1.0,
                                   key="sd_sigma", bind="query-params", disabled=shape != "gaussian"))
        low = int(st.number_input("Uniform: smallest size", min_value=0, max_value=10**6, value=4000, step=1,
                                  key="sd_low", bind="query-params", disabled=shape != "uniform"))
        high = int(st.number_input("Uniform: largest size", min_value=0, max_value=10**6, value=6000, step=1,
                                   key="sd_high", bind="query-params", disabled=shape != "uniform"))
        p_full = log_slider("Mixture: chance of sampling everyone", key="sd_p_full", min_value=1e-30,
                                max_value=0.1, value=1e-10, steps_per_decade=2, disabled=family != "mixture")
        notes = []
        if mean > n and shape != "uniform":
            notes.append(f"mean {mean:,.6g} is above n = {n:,}; using n")
            mean = float(n)
        if shape == "uniform":
            if max(high, low) > n:
                notes.append(f"uniform bounds above n = {n:,} are cut to n")
            high, low = min(high, n), min(low, n)
            if low > high:
                notes.append("uniform bounds swapped")
                low, high = high, low
        if notes:
            st.warning("Adjusted: " + "; ".join(notes) + ".")
    if not outputs or too_big:
        return
    try:
        view = c_random_view(family, n, mean, sd, low, high, base, p_full, eps, target)
    except ValueError as exc:
        st.error(f"These settings cannot be computed: {md_escape(exc, max_len=300)}")
        return
    b, cal = view.bounds, view.calibration
    with c2:
        cc = st.columns(4)
        metric("lower ε′ (Thm 3)", b.epsilon_lower, help="Some ε-DP mechanism does at least this badly.",
               container=cc[0])
        metric("upper ε′ (Thm 3)", b.epsilon_upper, help="Every ε-DP mechanism does at least this well.",
               container=cc[1])
        metric("average sample size", b.mean_size, container=cc[2], help="E_t[m], the mean of the size law t.")
        metric("weighted average size", b.tilted_mean, container=cc[3],
               help="E_t̃[m], the mean with each size weighted by e^(ε·m); the bounds depend on it (Theorem 3).")
        st.markdown(f"{BADGE['paper']} relation: M unbounded → sampled mechanism bounded, n fixed and known. "
                    f":gray[shortcut (E_t̃[m]/n)·ε = {fmt(b.epsilon_paper_approx)}] {BADGE['shortcut']}")
        text = sv.random_size_verdict(epsilon=eps, n=n, mean_size=b.mean_size, tilted_mean=b.tilted_mean,
                                      lower=b.epsilon_lower, upper=b.epsilon_upper)
        verdict(slot, text, level_of(eps, b.epsilon_upper))
        if sv.gain_words(eps, b.epsilon_upper):
            fix = ("remove the chance of sampling everyone (mixture) or lower ε" if family == "mixture" else
                   "use a smaller ε or a narrower spread σ" if shape == "gaussian" else
                   "use a smaller ε or a smaller largest size")
            slot.warning(f"To gain from sampling here, {fix}: the weight e^(ε·m) puts the bound at the largest "
                         "sample sizes.")
        calibration_box(cal, n=n, shortcut_gives=None, shortcut_label="ε′·n/E_t[m]")
    sig = view.sigma_table
    show(sf.make_sigma_figure(sig, epsilon=eps, current_sd=sd if family == "gaussian" else None),
         key="sd_fig_sigma", filename="random_size_bounds_vs_sigma", table=sig,
         alt=f"Line chart of the lower and upper population ε′ for a Gaussian sample size centred at {mean:,.0f} of "
             f"{n:,}, against its spread σ from {fmt(sig['sd'].min())} to {fmt(sig['sd'].max())}: the bounds go "
             f"from {fmt(sig['upper'].iloc[0])} to {fmt(sig['upper'].iloc[-1])} (ε = {fmt(eps)}).",
         caption="Reading: for a Gaussian sample size centred at your mean, the guarantee degrades from about "
                 "(mean/n)·ε towards the full ε as the spread σ grows, because the tilt rewards large sizes "
                 "(Theorem 3, Figure 2 of the paper; the discretisation is ours, Erratum E9). The cross marks the "
                 "cards' values (Gaussian family; the CSV's row with current = True).")
    show(sf.make_pmf_figure(view.pmf_table, tilted_mean=b.tilted_mean), key="sd_fig_pmf",
         filename="random_size_pmf", table=view.pmf_table,
         alt=f"Two curves over the sample size: how likely each size is (average {b.mean_size:,.0f}) and the same "
             f"weighted by e^(ε·m) (average {b.tilted_mean:,.0f}), each scaled to its own peak.",
         caption="Reading: blue is how likely each sample size is; orange is the same distribution re-weighted by "
                 "e^(ε·m), each drawn relative to its own peak. The guarantee depends on the orange mean (dotted "
                 "line), not the blue one (Theorem 3).")
    law_words = {"gaussian": f"Gaussian, mean {mean:,.0f}, σ = {fmt(sd)}", "point": f"always {mean:,.0f}",
                 "uniform": f"uniform from {low:,} to {high:,}"}
    take_away("random", question="What guarantee ε′ does the population get when the sample size is itself random "
                                 "(drawn independently of the data)?",
              params={"ε on the sample": fmt(eps), "population n": f"{n:,}",
                      "sample size law": law_words[shape] + (f", plus a chance {fmt(p_full)} of everyone"
                                                             if family == "mixture" else ""),
                      "target population ε′": fmt(target)},
              headlines=[Headline("population ε′", f"{fmt(b.epsilon_lower)} to {fmt(b.epsilon_upper)}",
                                  "lower and upper bound (Theorem 3)"),
                         Headline("weighted average size", f"{b.tilted_mean:,.1f}", f"of {n:,}"),
                         Headline("ε to spend on the sample for the target", fmt(cal.epsilon_sample),
                                  f"target ε′ = {fmt(target)}")],
              verdicts=[text], sources=[b.source, "Discretised Gaussian size law: this product's convention "
                                                  "(Erratum E9)"], epsilon=b.epsilon_upper,
              script=ss.random_size_script(repo_root=REPO_ROOT, epsilon=eps, n=n, family=family, mean=mean, sd=sd,
                                           low=low, high=high, base=base, p_full=p_full, epsilon_target=target))


# ----------------------------------------------------------------------------------------------------------
# Tab 3: rounding and data-dependent sizes (Theorem 6)
# ----------------------------------------------------------------------------------------------------------

def paper_43_setting() -> None:
    st.session_state["sd_r"] = 0.1
    st.session_state["sd_pair_n"] = 14


@st.fragment
@guarded
def tab_rounding(eps: float, n: int, target: float, outputs: bool = True) -> None:
    """Tab 3 (controls always; numbers and the sawtooth only when ``outputs``)."""
    SHOWN.clear()
    st.subheader("Sample sizes that depend on the data: rounding (§4, Theorem 6)")
    slot = st.container()
    with methodology():
            st.markdown("Proportional sampling takes r·N records; r·N must be rounded. Deterministic rounding lets "
                        "one "
                    "person change the sample size, and a released count then reveals it at the full ε (§4.1). "
                    "**Randomised rounding** (round up with probability equal to the fractional part) restores "
                    "amplification (Theorem 6), valid for populations of at least 1/r records.")
    c1, c2 = st.columns([1, 2])
    with c1:
        # the callback sets r and N before the widgets below are drawn, so no extra rerun is needed
        st.button("Paper §4.3 example (N = 14, r = 1/10)", key="sd_paper43", on_click=paper_43_setting)
        r = log_slider("Sampling rate r", key="sd_r", min_value=1e-3, max_value=0.5, value=0.05)
        pair_n = int(st.number_input("Population size N of the pair (N, N + 1)", min_value=0, max_value=10**9,
                                     value=14, step=1, key="sd_pair_n", bind="query-params",
                                     help="The paper's §4.3 example is N = 14 at r = 0.1."))
        saw_from = int(st.number_input("Sawtooth: first N (0 = ⌈1/r⌉)", min_value=0, max_value=10**9, value=0,
                                       step=1, key="sd_saw_from", bind="query-params"))
        saw_len = int(st.slider("Sawtooth: number of pairs", min_value=10, max_value=2000, value=200, step=10,
                                key="sd_saw_len", bind="query-params"))
        delta_text = st.text_input("Degradation calculator: change in each sample size Δ (comma-separated)",
                                   value="2, -3, 5", key="sd_delta_sizes", bind="query-params")
    if not outputs:
        return
    amp = sp.amplify_randomized_rounding(epsilon=eps, rate=r)
    rstar = sp.randomized_rounding_crossover(epsilon=eps)
    with c2:
        cc = st.columns(3)
        metric("Theorem 6 bound ε′", amp.epsilon_population, help=f"Source: {amp.source}.", container=cc[0])
        metric("crossover rate r*(ε)", rstar, help="Above this rate the bound exceeds ε (derived, Erratum E3).",
               container=cc[1])
        metric("1/r (smallest population covered)", 1 / r, container=cc[2])
        st.markdown(f"{BADGE['paper']} relation: unbounded. :gray[shortcut 6rε = {fmt(amp.epsilon_paper_approx)}] "
                    f"{BADGE['shortcut']}")
        verdict(slot, sv.rounding_verdict(epsilon=eps, rate=r, epsilon_population=amp.epsilon_population,
                                          crossover=rstar),
                "bad" if r > rstar else level_of(eps, amp.epsilon_population))
        if r > rstar:
            st.error(NO_AMP_BANNER.format(val=fmt(amp.epsilon_population), eps=fmt(eps), rstar=fmt(rstar)))
        cal = sp.calibrate_randomized_rounding(epsilon_target=target, rate=r)
        gives = sp.amplify_randomized_rounding(epsilon=cal.epsilon_sample_paper_approx, rate=r).epsilon_population
        calibration_box(cal, n=n, shortcut_gives=gives, shortcut_label="ε′/(6r), [a] §6.3, Erratum E2",
                        design=f"Proportional sample of r·n with randomised rounding, r = {fmt(r)}; Theorem 6 "
                               "inverted exactly.")
        if n < 1 / r:
            st.warning(f"Theorem 6 covers populations of at least 1/r = {fmt(1 / r)} records; the population "
                       f"size n = {n:,} is smaller, so this calibration does not apply to it.")
        with st.container(border=True):
            st.markdown(f"**Size channel for the pair ({pair_n:,}, {pair_n + 1:,})** {BADGE['derived']}")
            dcols = st.columns(2)
            for col, meth in zip(dcols, ("deterministic", "randomized")):
                a = sp.rounding_size_pmf(pair_n, rate=r, method=meth)
                b = sp.rounding_size_pmf(pair_n + 1, rate=r, method=meth)
                loss = sp.size_channel_loss(a, b, epsilon=eps)
                metric(f"{meth} rounding: loss from the size", loss, container=col,
                       help=f"Sizes {a} vs {b}. A lower bound on ε′ for any ε-DP mechanism (§4.2, Prop. 4).")
            if pair_n < 1 / r:
                st.caption(f"N = {pair_n:,} is below 1/r = {fmt(1 / r)}: Theorem 6 does not cover this pair.")
        try:
            deltas = parse_numbers(delta_text, max_entries=MAX_STRATA)
            if not deltas:
                raise ValueError("enter at least one number")
            d = sp.degradation_loss(deltas, epsilon=eps)
            st.markdown(f"**Degradation** {BADGE['paper']} (§4.1): releasing all counts loses ε·‖Δ‖₁ = "
                        f"**{fmt(d.loss_all_counts)}**; releasing one count loses ε·‖Δ‖∞ = "
                        f"**{fmt(d.loss_one_count)}**.")
        except ValueError as exc:
            st.warning(f"Δ list not understood ({md_escape(exc)}). Expected numbers separated by commas, "
                       "e.g. 2, -3, 5.")
    lo = saw_from if saw_from > 0 else math.ceil(1 / r - 1e-9)
    saw = c_sawtooth(eps, r, lo, lo + saw_len - 1)
    # The randomised-rounding size channel is at most the Poisson-rate-r amplification of ε (derived, §4.3).
    worst_channel = sp.amplify_poisson(epsilon=eps, rate=r).epsilon_population
    show(sf.make_sawtooth_figure(saw, epsilon=eps, theorem6=amp.epsilon_population, worst_channel=worst_channel),
         key="sd_fig_saw", filename="rounding_size_channel", table=saw,
         alt=f"Line chart over population sizes {lo:,} to {lo + saw_len - 1:,}: with deterministic rounding the "
             f"loss from the sample size jumps to ε = {fmt(eps)} at {int((saw['deterministic'] > 0).sum()):,} sizes; "
             f"with randomised rounding it stays at or below {fmt(worst_channel)}, under the Theorem 6 bound "
             f"{fmt(amp.epsilon_population)}.",
         caption="Reading: how much a released sample size alone reveals when one person joins a population of N. "
                 "Deterministic rounding (red) jumps to the full ε whenever the rounded size changes; randomised "
                 "rounding (blue) stays below the green line (the most a size can reveal with randomised rounding, "
                 "which equals Poisson sampling at rate r), itself below the Theorem 6 bound for all mechanisms "
                 "(orange). §4.1–§4.3; the size-channel computation is derived.")
    take_away("rounding", question="What guarantee ε′ does the population get when the sample is a fixed share r of "
                                   "the population, rounded to a whole number?",
              params={"ε on the sample": fmt(eps), "sampling rate r": fmt(r), "pair of populations":
                      f"{pair_n:,} and {pair_n + 1:,}", "target population ε′": fmt(target)},
              headlines=[Headline("population ε′ with randomised rounding", fmt(amp.epsilon_population),
                                  "upper bound, Theorem 6"),
                         Headline("largest rate with a gain r*", fmt(rstar), "derived"),
                         Headline("ε to spend on the sample for the target", fmt(cal.epsilon_sample),
                                  f"target ε′ = {fmt(target)}")],
              verdicts=[sv.rounding_verdict(epsilon=eps, rate=r, epsilon_population=amp.epsilon_population,
                                            crossover=rstar)],
              sources=[amp.source, "Crossover rate and size channel: derived (spec §4.6, Erratum E3)"],
              epsilon=amp.epsilon_population,
              script=ss.rounding_script(repo_root=REPO_ROOT, epsilon=eps, rate=r, pair_n=pair_n,
                                        epsilon_target=target))


# ----------------------------------------------------------------------------------------------------------
# Tab 4: cluster sampling (Theorems 7–9)
# ----------------------------------------------------------------------------------------------------------

SIZE_SOURCES = {"equal": "equal sizes", "list": "list", "lognormal": "lognormal generator", "frame": "uploaded frame"}
MAX_CLUSTER_SIZE = 10**9   # one cluster cannot exceed the largest population the page takes
CLUSTER_STATE = "sd__cluster_design"   # not a widget key: (sizes, ℓ) of the Cluster tab, for the Simple tab


@st.fragment
@guarded
def tab_cluster(eps: float, target: float, frame: sp.FrameSummary | None, outputs: bool = True) -> None:
    """Tab 4 (design controls always, so the Simple tab can overlay the design; the rest only when ``outputs``)."""
    SHOWN.clear()
    st.subheader("Cluster sampling: draw ℓ of k clusters, keep everyone in them (Theorems 7–9)")
    slot = st.container()
    c1, c2 = st.columns([1, 2])
    with c1:
        src = choice("Cluster sizes", SIZE_SOURCES, key="sd_size_src", widget="radio", horizontal=True)
        # k is a control only where the sizes do not fix it (a list or a frame has its own number of clusters)
        k = int(st.number_input("Number of clusters k", min_value=2, max_value=MAX_CLUSTERS, value=100, step=1,
                                key="sd_k", bind="query-params")) if src in ("equal", "lognormal") else None
        sizes = None
        if src == "equal":
            c = int(st.slider("Records per cluster c", min_value=0, max_value=10_000, value=20, step=1, key="sd_c",
                              bind="query-params"))
            sizes = (c,) * k
        elif src == "list":
            text = st.text_area("Cluster sizes (comma-separated; k is the number of entries)", value="3, 8, 15, 40",
                                key="sd_size_list", bind="query-params")
            try:
                vals = parse_numbers(text, integer=True, max_entries=MAX_CLUSTERS)
                if len(vals) < 2 or min(vals) < 0 or max(vals) > MAX_CLUSTER_SIZE:
                    raise ValueError(f"need 2 to {MAX_CLUSTERS:,} sizes, each from 0 to {MAX_CLUSTER_SIZE:,}")
                sizes = tuple(int(v) for v in vals)
                k = len(sizes)
                st.caption(f"k = {k:,} clusters (the number of entries).")
            except ValueError as exc:
                st.warning(f"Cluster sizes not understood ({md_escape(exc)}). Expected whole numbers separated by "
                           "commas, e.g. 3, 8, 15, 40.")
                st.session_state.pop(CLUSTER_STATE, None)   # no design: no overlay on the Simple tab
                return
        elif src == "lognormal":
            median = float(st.number_input("Median cluster size", min_value=0.0, max_value=1e5, value=20.0,
                                           key="sd_gen_median", bind="query-params"))
            sigma = float(st.slider("Spread σ (log scale)", min_value=0.0, max_value=3.0, value=0.5, step=0.05,
                                    key="sd_gen_sigma", bind="query-params"))
            seed = seed_input(key="sd_gen_seed", value=0)
            sizes = c_lognormal_sizes(k, median, sigma, seed)
            st.caption(f"Sizes drawn with seed {seed}.")
        else:
            if frame is None or frame.cluster_sizes is None:
                st.info("Upload a frame with a cluster column (above the tabs) to use its cluster sizes.")
                st.session_state.pop(CLUSTER_STATE, None)
                return
            sizes = tuple(int(v) for v in frame.cluster_sizes.to_numpy())
            k = len(sizes)
            st.caption(f"k = {k:,} clusters from the uploaded frame.")
        ell = int(st.number_input("Clusters drawn ℓ", min_value=1, max_value=MAX_CLUSTERS - 1, value=10, step=1,
                                  key="sd_ell", bind="query-params"))
        if ell >= k:
            st.warning(f"ℓ must be below k = {k:,}; using ℓ = {k - 1:,}.")
            ell = k - 1
        rw = log_slider("Within-cluster sampling rate r_w (1 = single stage)", key="sd_rw", min_value=1e-3,
                        max_value=1.0, value=1.0)
    st.session_state[CLUSTER_STATE] = (sizes, ell)
    if not outputs:
        return
    b, two, cal = c_cluster(sizes, eps, ell, rw, target)
    s = np.asarray(sizes, dtype=float)
    with c2:
        cc = st.columns(3)
        metric("upper ε′ (Thm 8)", b.worst_upper, container=cc[0],
               help="Every ε-DP mechanism: uses the two largest clusters.")
        metric("lower ε′ (Thm 7)", b.worst_lower, container=cc[1],
               help="Some ε-DP mechanism reaches this: largest cluster + smallest other.")
        metric("two-stage upper ε′", two, container=cc[2],
               help="Theorem 8 with ε replaced by log(1 + r_w·(e^ε − 1)) (derived, §5.2).")
        st.markdown(f"{BADGE['paper']} relation: one record added to a cluster; M unbounded. "
                    f"{BADGE['derived']} two-stage bound and whole-design summary. "
                    f":gray[SRS reasoning at cluster rate ℓ/k = {fmt(b.rate_clusters)} would claim "
                    f"{fmt(b.naive_srs)}] {BADGE['shortcut']}")
        equal = int(s[0]) if s.size and np.all(s == s[0]) else None
        text = sv.cluster_verdict(epsilon=eps, n_drawn=ell, n_clusters=k, worst_lower=b.worst_lower,
                                  worst_upper=b.worst_upper, naive_srs=b.naive_srs, equal_size=equal,
                                  within_rate=rw, two_stage=two)
        verdict(slot, text, level_of(eps, two))
        if sv.gain_words(eps, two):
            r_try = 0.1 if rw > 0.1 else rw
            two_try = two if r_try == rw else sp.two_stage_cluster_upper(s, epsilon=eps, n_drawn=ell,
                                                                          within_rate=r_try)
            slot.warning("To gain from sampling, use smaller clusters (split them) or sample within the drawn "
                         f"clusters: keeping {sv.pct(r_try)} of each drawn cluster gives ε′ ≤ {fmt(two_try)} "
                         "(two-stage bound; set the within-cluster rate below).")
        calibration_box(cal, n=int(sum(sizes)), shortcut_gives=None, shortcut_label="")
        with st.expander("Theorem 9: a test that spots whether a cluster was drawn"):
            share = st.slider("ε_c as a share of ε (loss given the cluster is drawn)", min_value=0.0, max_value=1.0,
                              value=1.0, step=0.05, key="sd_ec_share", bind="query-params")
            e_t = st.slider("ε_T: how well a test tells 'drawn' from 'not drawn' (log likelihood ratio)",
                            min_value=0.0, max_value=20.0, value=2.0, step=0.1, key="sd_et", bind="query-params")
            val = sp.cluster_test_bound(epsilon_conditional=share * eps, epsilon_test=e_t, n_clusters=k, n_drawn=ell)
            metric("Theorem 9 lower bound ε̃", val, help="ε̃ ≥ log(1 + (e^ε_c − 1)·q/(q + e^(−ε_T)·(1 − q))).")
            st.caption("As ε_T grows the bound approaches ε_c: once drawn clusters can be recognised, the "
                       "secrecy of the sample is gone (§5.2).")
    equal_c = float(np.sort(s)[-2:].sum() / 2)
    heat = c_heatmap(k, ell)
    show(sf.make_cluster_heatmap(heat, current_size=equal_c, current_epsilon=eps), key="sd_fig_heat",
         filename="cluster_heatmap", table=heat,
         alt=f"Heat map of the share of ε kept by cluster sampling ({ell:,} of {k:,} clusters), over cluster sizes 0 "
             "to 1,000 and ε from 0.001 to 10: dark (most of the gain kept) only for small clusters and small ε; "
             f"your design (size {fmt(equal_c)}, ε = {fmt(eps)}) is marked.",
         caption=CLUSTER_CAPTION + " Each cell is the share of ε kept (ε′/ε) for equal clusters of that size with "
                 f"ℓ/k = {fmt(ell / k)}: "
                 "light means little survives of the sampling gain. The cross marks your design (for unequal sizes, "
                 "the mean of the two largest).")
    bars = sf.cluster_bars_table(s, b)
    show(sf.make_cluster_bars_figure(bars, epsilon=eps, naive=b.naive_srs), key="sd_fig_bars",
         filename="cluster_bounds", table=bars,
         alt=f"Chart of the guarantee for a person joining a cluster, for each of {len(bars):,} distinct cluster "
             f"sizes ({fmt(s.min())} to {fmt(s.max())} records): lower bounds up to {fmt(b.worst_lower)}, upper "
             f"bounds up to {fmt(b.worst_upper)}, against ε = {fmt(eps)} and the wrong simple-random-sample value "
             f"{fmt(b.naive_srs)}.",
         caption="Reading: for a person joining a cluster of each size, the orange mark is what some mechanism can "
                 "be forced to leak (Theorem 7) and the blue one what no mechanism exceeds (Theorem 8). The grey "
                 "line is what treating the clusters as a simple random sample would wrongly claim.")
    take_away("cluster", question="What guarantee ε′ does the population get when whole clusters are sampled?",
              params={"ε on the sample": fmt(eps), "clusters drawn": f"{ell:,} of {k:,}",
                      "cluster sizes": (f"{int(s[0]):,} each" if equal is not None else
                                        f"{fmt(s.min())} to {fmt(s.max())} ({SIZE_SOURCES[src]})"),
                      "within-cluster rate": fmt(rw), "target population ε′": fmt(target)},
              headlines=[Headline("population ε′", f"{fmt(b.worst_lower)} to {fmt(b.worst_upper)}",
                                  "lower (Theorem 7) and upper (Theorem 8) bound"),
                         Headline("simple-random-sample reading (wrong here)", fmt(b.naive_srs)),
                         Headline("two-stage upper bound", fmt(two), f"within-cluster rate {fmt(rw)}"),
                         Headline("ε to spend on the sample for the target", fmt(cal.epsilon_sample),
                                  f"target ε′ = {fmt(target)}")],
              verdicts=[text], sources=["Theorems 7–8, §5.1; two-stage bound derived from §5.2 and [BBG18]"],
              epsilon=b.worst_upper,
              script=ss.cluster_script(repo_root=REPO_ROOT, epsilon=eps, sizes=sizes, n_drawn=ell, within_rate=rw,
                                       epsilon_target=target))


# ----------------------------------------------------------------------------------------------------------
# Tab 5: stratified sampling and allocation
# ----------------------------------------------------------------------------------------------------------

PRESET_NAMES = {"business": "Synthetic business frame", "allocation": "Allocation example"}
PRESETS = {
    "business": pd.DataFrame({
        "stratum": ["small", "medium", "large"], "N_h": [3000, 1000, 250], "S_h": [2.0, 12.0, 150.0],
        "mean_h": [4.0, 25.0, 400.0], "lo_h": [0.0, 10.0, 100.0], "hi_h": [10.0, 100.0, 2000.0],
        "eps_h": [""] * 3}),
    "allocation": pd.DataFrame({
        "stratum": ["A", "B", "C", "D"], "N_h": [4000, 1500, 400, 100], "S_h": [8.0, 30.0, 150.0, 800.0],
        "mean_h": [20.0, 100.0, 600.0, 2500.0], "lo_h": [0.0] * 4, "hi_h": [5000.0] * 4,
        "eps_h": [""] * 4}),
}
PRESET_M = {"business": 120, "allocation": 300}
#: Allocation methods: link token (the engine's name) → label (older links wrote the label).
METHODS = {"neyman": "Neyman (take-all)", "proportional": "proportional", "privacy_aware": "privacy-aware (derived)"}


def frame_to_editor(frame: sp.FrameSummary) -> pd.DataFrame:
    t = frame.strata
    has_v = t["mean_h"].notna().all()
    return pd.DataFrame({"stratum": t["stratum"].astype(str), "N_h": t["N_h"].astype(int),
                         "S_h": t["sd_h"].fillna(0.0) if has_v else 1.0,
                         "mean_h": t["mean_h"] if has_v else 0.0, "lo_h": t["min_h"] if has_v else 0.0,
                         "hi_h": t["max_h"] if has_v else 1.0, "eps_h": [""] * len(t)})


STRATA_SOURCE = "sd__strata_source"   # not a widget key: the strata table's source in the last run
DRAW_STATE = "sd__draw_result"   # not a widget key: the last randomised draw (seed, m, N_h, sizes)


@st.fragment
@guarded
def tab_strata(eps: float, n: int, target: float, frame: sp.FrameSummary | None, frame_id: str | None,
               outputs: bool = True) -> None:
    """Tab 5 (table and top controls always; cards, allocations and plots only when ``outputs``)."""
    SHOWN.clear()
    st.subheader("Stratified sampling: how many to sample per stratum (§6)")
    slot = st.container()
    slot_design, slot_alloc = slot.container(), slot.container()
    use_frame = frame is not None and frame.strata is not None
    if use_frame:
        base_name, base = f"frame-{frame_id}", frame_to_editor(frame)
        st.caption("The strata table was filled from your uploaded frame.")
        default_m = min(120, int(base["N_h"].sum()))
    else:
        preset = choice("Preset", PRESET_NAMES, key="sd_preset")
        base_name, base = PRESET_NAMES[preset], PRESETS[preset]
        default_m = PRESET_M[preset]
    # m and U default from the strata: when the source changes (preset, frame), they follow it; a link's values
    # are kept on the first run (no previous source yet)
    prev = st.session_state.get(STRATA_SOURCE)
    if prev is not None and prev != base_name:
        st.session_state["sd_alloc_m"] = default_m
        st.session_state["sd_U"] = 0.0
    st.session_state[STRATA_SOURCE] = base_name
    edited = st.data_editor(
        base, key=f"sd_strata_{hashlib.sha1(base_name.encode()).hexdigest()[:8]}", num_rows="dynamic",
        width="stretch", hide_index=True,
        # an empty cell (a row just added, a value not given) reads blank, never "None" (issue 14 item 2)
        placeholder="", alt="Strata table: one row per stratum with its size, spread, mean, value range and ε",
        # headers from the engine, so strata_from_table's messages name the columns the user sees
        column_config={
            "stratum": st.column_config.TextColumn(LABEL["stratum"]),
            "N_h": st.column_config.NumberColumn(LABEL["N_h"], min_value=1, step=1, help="Stratum size (public)."),
            "S_h": st.column_config.NumberColumn(LABEL["S_h"], min_value=0.0,
                                                 help="Design standard deviation of the value in the stratum."),
            "mean_h": st.column_config.NumberColumn(LABEL["mean_h"], help="Stratum mean (sensitivity panel)."),
            "lo_h": st.column_config.NumberColumn(LABEL["lo_h"], help="Smallest possible value in the stratum."),
            "hi_h": st.column_config.NumberColumn(LABEL["hi_h"], help="Largest possible value in the stratum."),
            # text, so a blank cell is the global ε and a typed one is checked by strata_from_table
            "eps_h": st.column_config.TextColumn(LABEL["eps_h"], default="",
                                                 help="Blank = the global ε; or a number ≥ 0 for this stratum."),
        })
    if outputs:
        try:
            strata = sp.strata_from_table(pd.DataFrame(edited), epsilon=eps, max_strata=MAX_STRATA)
        except ValueError as exc:
            st.warning(f"The strata table cannot be used: {md_escape(exc, max_len=300)}")
            return
        N, S = strata["N_h"], strata["S_h"]
        total_N = int(N.sum())
    c1, c2, c3, c4 = st.columns(4)
    # a default only where the state holds none (passing both makes Streamlit warn)
    m = int(c1.number_input("Total sample size m", min_value=1, max_value=10**7, step=1, key="sd_alloc_m",
                            bind="query-params",
                            **({} if "sd_alloc_m" in st.session_state else {"value": default_m})))
    if outputs and m > total_N:
        c1.warning(f"m exceeds the population ({total_N:,}); using m = {total_N:,}.")
        m = total_N
    U_in = float(c2.number_input("Value bound U (0 = largest value in the table)", min_value=0.0, max_value=1e12,
                                 key="sd_U",
                                 bind="query-params", **({} if "sd_U" in st.session_state else {"value": 0.0}),
                                 help="Values are clipped to [0, U] before the private mean."))
    m_min = int(c3.slider("Minimum per stratum", min_value=1, max_value=10, value=1, key="sd_mmin",
                          bind="query-params"))
    methods = tuple(multi_choice("Methods", METHODS, key="sd_methods", container=c4))
    if not outputs:
        return
    U = U_in if U_in > 0 else float(max(strata["hi_h"].max(), 1e-9))
    if U_in <= 0:   # the value in use, beside the control that reads 0
        c2.caption(f"Using U = {fmt(U)}, the largest value in the table.")
    if len(N) * m_min > m or np.any(N < m_min):
        st.warning(f"The minimum per stratum ({m_min}) cannot be met: it needs {len(N) * m_min} units and every "
                 "stratum at least that large. Lower the minimum or raise m.")
        return
    r = m / total_N

    # Theorem 11 card
    pa = sp.proportional_allocation(N, rate=r, epsilon=eps)
    a = pa.amplification
    cc = st.columns([1, 2])
    with cc[0].container(border=True):
        st.markdown(f"**Proportional allocation, randomised rounding (Thm 11)** {BADGE[a.status]}")
        st.caption(f"rate r = m/N = {fmt(r)}; relation: {a.neighbour} (Erratum E12)")
        # a bound Theorem 11 does not give is no guarantee: the card says so instead of showing it as one
        metric("population ε′", a.epsilon_population if pa.theorem11_applies else None,
               help=f"Source: {a.source}." if pa.theorem11_applies else
               "Not covered: Theorem 11 needs r·N_h ≥ 1 in every stratum (see the warning below).")
        if a.epsilon_paper_approx is not None:
            st.markdown(f":gray[shortcut 6rε = {fmt(a.epsilon_paper_approx)}] {BADGE['shortcut']}")
        for w in a.warnings:
            # restated below: the stratum names, and Theorem 11's per-stratum size condition
            if not w.startswith(("Theorem 11 does not cover", "Theorem 6 applies only")):
                (st.error if "No amplification" in w else st.warning)(w)
        uncovered = [strata["names"][h] for h in range(len(N)) if r * N[h] < 1 - 1e-9]
        st.caption(f"Theorem 11 needs r·N_h ≥ 1 in every stratum, i.e. N_h ≥ {fmt(1 / r)}.")
        if uncovered:
            st.warning("Theorem 11 does not cover stratum " + ", ".join(md_quote(x) for x in uncovered)
                       + f" (r·N_h < 1 at r = {fmt(r)}).")
        if np.any(strata["eps_h"] != eps):
            st.caption("This card uses the global ε; per-stratum ε_h only enter the allocation comparison below.")
        seed = seed_input(key="sd_draw_seed", value=0, label="Seed for a random draw")
        if st.button("Draw one randomised allocation", key="sd_draw"):
            st.session_state[DRAW_STATE] = (seed, m, tuple(N), tuple(int(x) for x in
                                                  sp.proportional_allocation(N, rate=r, epsilon=eps, rng=seed).draw))
        got = st.session_state.get(DRAW_STATE)
        if got and got[1] == m and got[2] == tuple(N):
            st.markdown(f"Draw (seed {got[0]}): **{', '.join(map(str, got[3]))}** (total {sum(got[3]):,})")
    with cc[1]:
        cal = sp.calibrate_randomized_rounding(epsilon_target=target, rate=r)
        gives = (None if cal.epsilon_sample_paper_approx is None else
                 sp.amplify_randomized_rounding(epsilon=cal.epsilon_sample_paper_approx, rate=r).epsilon_population)
        calibration_box(cal, n=total_N, shortcut_gives=gives, shortcut_label="ε′/(6r), [a] §6.3, Erratum E2",
                        design=f"Proportional allocation at r = m/N = {fmt(r)}; Theorem 11 inverted exactly."
                        + ("" if pa.theorem11_applies else " Not a guarantee here: Theorem 11 does not cover "
                                                           "every stratum (see the warning)."))

    # allocations
    st.markdown("#### Allocations and the error of the private stratified mean " + BADGE["derived"])
    with methodology("Assumptions of the allocation comparison"):
        st.markdown(
            "The privacy-aware allocation is **our formulation** of the paper's open question (§6.1, Eqs. (3)–(5); "
        "Erratum E13). Assumptions: stratum sizes N_h are public; the design SDs S_h come from historic data, not "
        "from the population sampled (otherwise the design is data-dependent — see the sensitivity panel); the "
        "allocation is fixed in advance; values are clipped to [0, U]. Each stratum releases its mean plus "
        "Laplace noise of scale U/(m_h·λ_h), where λ_h = log(1 + (N_h/m_h)·(e^ε_h − 1)) is the per-record ε that "
        "Theorem 2 allows inside the stratum. This protects a record's value within its stratum; it is weaker "
            "than the paper's stratified DP (Definition 10), which also hides which stratum a person is in.")
    if not methods:
        st.info("Pick at least one method.")
    else:
        alloc = c_allocation(tuple(N), tuple(S), m, U, tuple(strata["eps_h"]), strata["names"], methods, m_min)
        wide = alloc.pivot(index="stratum", columns="method", values="m_h")
        wide = wide.reindex(list(strata["names"]))[list(methods)]
        tot = sf.allocation_totals(alloc)
        av = sv.allocation_verdict({k: float(v) for k, v in tot["total"].items()})
        if av:
            verdict(slot_alloc, av)
        t1, t2 = st.columns(2)
        t1.dataframe(wide.rename(columns=sf.METHOD_LABELS), width="stretch")
        t2.dataframe(sf.for_people(tot.rename(index=sf.METHOD_LABELS).rename_axis("allocation")).style.format("{:.4g}"),
                     width="stretch")
        show(sf.make_allocation_figure(alloc), key="sd_fig_alloc", filename="allocation_sizes", table=alloc,
             alt=f"Grouped bar chart: records sampled from each of {len(N)} strata under "
                 + ", ".join(sf.METHOD_LABELS[x] for x in methods) + f" allocation of m = {m:,}.",
             caption="Reading: how many records each method takes from each stratum. Neyman favours strata "
                     "with large spread (§6.2); proportional follows the stratum sizes; the privacy-aware "
                     "allocation also counts the noise each stratum's private mean needs.")
        log_y = st.toggle("Log scale", value=False, key="sd_logy", bind="query-params")
        show(sf.make_variance_figure(alloc, log_y=log_y), key="sd_fig_var", filename="allocation_variance",
             table=tot.reset_index(),
             alt="Stacked bar chart of the variance of the private mean per allocation method, split into sampling "
                 "and privacy noise: " + "; ".join(f"{sf.METHOD_LABELS[k]} {fmt(v)}" for k, v in tot["total"].items())
                 + ".",
             caption="Reading: total error (variance) of the private population mean for each method, split into "
                     "sampling error and privacy noise. The method with the shortest bar is the most accurate "
                     "under our formulation (derived).")

    # Neyman sensitivity
    st.markdown("#### How sensitive is Neyman allocation to one person? " + BADGE["derived"])
    outside = st.toggle("Allow the added value outside its stratum's bounds", value=False, key="sd_outside",
                        bind="query-params")
    bounds = tuple((float(lo), float(hi)) for lo, hi in zip(strata["lo_h"], strata["hi_h"]))
    shift = c_shift(tuple(N), tuple(strata["mean_h"]), tuple(S), m, bounds, not outside)
    deg = sp.degradation_loss(shift.delta_rounded, epsilon=eps)
    sc = st.columns(4)
    metric("shift before rounding", shift.l1, container=sc[0],
           help="Largest total change of the unrounded Neyman sizes one added person causes (L1).")
    metric("sample sizes moved in total", shift.l1_rounded, container=sc[1],
           help="‖Δ‖₁ of the whole-number sample sizes.")
    metric("loss if all counts are released", deg.loss_all_counts, container=sc[2], help="ε·‖Δ‖₁ (§4.1).")
    metric("loss if one count is released", deg.loss_one_count, container=sc[3], help="ε·‖Δ‖∞ (§4.1).")
    design_text = sv.stratified_verdict(epsilon=eps, m=m, population=total_N, epsilon_population=a.epsilon_population,
                                        covered=pa.theorem11_applies, shift_total=int(shift.l1_rounded),
                                        shift_loss=deg.loss_all_counts)
    verdict(slot_design, design_text,
            "warn" if shift.l1_rounded > 0 or not pa.theorem11_applies or r >= 1
            else level_of(eps, a.epsilon_population))
    st.caption(f"Worst addition: value {fmt(shift.value)} in stratum {md_quote(strata['names'][shift.stratum])} "
               f"(S_h becomes {fmt(shift.sd_after)}); searched on a 201-point grid per stratum, ddof 0.")
    if shift.l1_rounded > 0:
        st.error(DEGRADATION_BANNER.format(delta=f"{shift.l1_rounded} in total (up to {shift.linf_rounded} in one "
                                                 "stratum)", loss=f"ε·‖Δ‖₁ = {fmt(deg.loss_all_counts)}"))
    shift_df = sf.shift_table(shift, strata["names"])
    show(sf.make_shift_figure(shift_df), key="sd_fig_shift", filename="neyman_sensitivity", table=shift_df,
         alt="Bar chart of the change in each stratum's Neyman sample size when the most influential person is "
             "added: " + ", ".join(f"{str(nm)[:30]} {int(d):+d}" for nm, d in zip(strata["names"], shift.delta_rounded))
             + ".",
         caption="Reading: the change in each stratum's sample size when the single most influential person is "
                 "added (§6.2). Any non-zero integer change can be read off released stratum counts, costing "
                 "ε per unit of change (§4.1).")

    with st.expander("The paper's County Business Patterns example (§6.2)"):
        cbp = sp.cbp_example()
        cdf = sf.cbp_table(cbp)
        st.markdown(f"Printed Neyman allocations for m = {cbp.m:,}: they sum to "
                    f"**{int(cbp.allocation_p.sum()):,}** and **{int(cbp.allocation_p_prime.sum()):,}**, not "
                    f"{cbp.m:,} (Erratum E4; shown verbatim). The largest change is "
                    f"{int(np.abs(cdf['delta']).max())} samples in one stratum.")
        st.dataframe(cdf, width="stretch", hide_index=True)
        show(sf.make_cbp_figure(cdf), key="sd_fig_cbp", filename="cbp_example", table=cdf, delta="change",
             alt=f"Bar chart of the change in the paper's 12 printed Neyman sample sizes between two neighbouring "
                 f"populations; the largest change is {int(np.abs(cdf['delta']).max())}.",
             caption="Reading: a neighbouring population (one establishment different) shifts the Neyman sample "
                     "sizes, by 19 in the top stratum; released stratum sizes would reveal this.")
    take_away("strata", question="How many to sample per stratum, and what guarantee ε′ does the population get?",
              params={"ε on the sample": fmt(eps), "strata": ("uploaded frame" if use_frame else base_name)
                      + f" ({len(N)} strata, {total_N:,} units)", "total sample size m": f"{m:,}",
                      "value bound U": fmt(U), "minimum per stratum": str(m_min),
                      "methods": ", ".join(sf.METHOD_LABELS[x] for x in methods) or "none",
                      "target population ε′": fmt(target)},
              headlines=[Headline("population ε′, proportional allocation",
                                  fmt(a.epsilon_population) if pa.theorem11_applies else "not covered",
                                  "Theorem 11"),
                         Headline("sample sizes one person can move", f"{int(shift.l1_rounded):,}",
                                  f"loss {fmt(deg.loss_all_counts)} if all counts are released"),
                         Headline("ε to spend on the sample for the target", fmt(cal.epsilon_sample),
                                  f"target ε′ = {fmt(target)}")]
              + ([Headline(f"variance of the private mean, {sf.METHOD_LABELS[k_]}", fmt(v_))
                  for k_, v_ in tot["total"].items()] if methods else []),
              verdicts=[design_text, av if methods else None],
              sources=["Theorem 11 (§6.3); Neyman sensitivity and privacy-aware allocation derived (spec §4.9, "
                       "Errata E4, E12, E13)"],
              epsilon=a.epsilon_population if pa.theorem11_applies else None,
              script=ss.stratified_script(repo_root=REPO_ROOT, epsilon=eps, N_h=N, S_h=S, epsilon_h=strata["eps_h"],
                                          m=m, value_max=U, methods=methods, m_min=m_min, epsilon_target=target))


# The Cluster tab is filled before the first tab so the rate plot can overlay the current cluster design.
with TABS[3].container:
    tab_cluster(EPS, TARGET, FRAME, OPEN[3])
if TABS[0].drawn:
    with TABS[0].container:
        tab_simple(EPS, DELTA, N_POP, TARGET, OPEN[0])
if TABS[1].drawn:
    with TABS[1].container:
        tab_random(EPS, N_POP, TARGET, OPEN[1])
if TABS[2].drawn:
    with TABS[2].container:
        tab_rounding(EPS, N_POP, TARGET, OPEN[2])
if TABS[4].drawn:
    with TABS[4].container:
        tab_strata(EPS, N_POP, TARGET, FRAME, FRAME_ID, OPEN[4])

page_method()
page_end()
