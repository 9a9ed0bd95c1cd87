"""The stratified viewer's "Synthetic data" view: one synthesizer against one per group, from one engine view.

Every number, sentence and table comes from ``dpdash.stratify.views.synth_view`` (issue 22); this module holds the
runs (live or behind a button), the layout, the figures and the downloads. Source: seed 004_c5ca305e20a1adba.txt,
*Stratified Data Synthesis* (L216–238), Definitions 11 and 13.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pandas as pd
import streamlit as st

from dpdash.stratify import script as SC
from dpdash.stratify import figures as F
from dpdash.stratify import synth_sweep as SW
from dpdash.stratify import views as SV
from dpdash.stratify import synth as Y
from dpdash.common.data import DATASETS, MISSING_LEVEL
from ui import cluster, progress
from ui.progress import RunProgress
from ui.show import table as results_table
from ui.shared_runs import RUNS, shared_or_session
from ui.common import CORES, methodology
from ui.exports import csv_bytes, download_csv, download_json
from ui.show import cards, fmt, verdict_box
from ui.text import md_escape
from ui.upload import missing_codes
from ui.widgets import choice
from ui.views.stratified_common import (ADULT_ATTRIBUTION, PAPER, SYNTH_OPTIONS, TABLE_SOURCES, c_adult,
                                        c_categorical, c_real_baseline, c_synth_run, report, show)


def synth_table(cfg, upload_table, upload_digest: str):
    """The table the synthetic view runs on: (cache key, table, note)."""
    if cfg.source == "Categorical":
        return f"cat-{cfg.n}-{cfg.k}-{cfg.alpha}-{cfg.seed}", c_categorical(cfg.n, cfg.k, cfg.alpha, cfg.seed), \
            f"Simulated categorical table (n = {cfg.n:,}, k = {cfg.k}, α = {cfg.alpha:g}, seed {cfg.seed}); " \
            "not real people."
    if cfg.source in TABLE_SOURCES and upload_table is not None:
        key = f"up-{upload_digest}-{upload_table.group_cols}-{upload_table.label_col}"
        return key, upload_table, f"{table_name(key, cfg)} (seeded 70/30 train/test split)."
    note = "UCI Adult, 7 columns (sex, race, age, education, marital status, hours, income); strata sex × race."
    if cfg.source in ("Mixture", "ACS preset"):
        note = "Synthetic data needs a table: the simulated mixture has none, so UCI Adult is used. " + note
    elif cfg.source in TABLE_SOURCES:
        note = "No usable table yet, so UCI Adult is used. " + note
    return "adult", c_adult(), note + " " + ADULT_ATTRIBUTION


def table_name(table_key: str, cfg) -> str:
    """The data a synthetic table was made from, in words (its provenance; never the sidebar's unused source)."""
    if table_key == "adult":
        return "UCI Adult (Becker & Kohavi 1996, doi:10.24432/C5XW20), 7 columns, train split"
    if table_key.startswith("cat-"):
        return f"Simulated categorical table (n = {cfg.n:,}, k = {cfg.k}, α = {cfg.alpha:g}, seed {cfg.seed})"
    if table_key.startswith("up-shared-"):
        name = table_key.removeprefix("up-shared-").split("-")[0]
        return f"Shared dataset: {DATASETS.get(name, name)}"
    up = st.session_state.get("sv_upload")
    return f"Your upload {Path(getattr(up, 'name', None) or 'your_data.csv').name}"


def privacy_line(cfg, n_strata: int, small_s: str) -> None:
    if cfg.synth in ("mst", "aim"):
        st.markdown(f"**Privacy:** (ε = {cfg.eps:g}, δ = 1e-9)-DP; the paper reports ε only.")
    else:
        st.markdown(f"**Privacy:** Pure ε-DP with ε = {cfg.eps:g}.")
    small_text = ("small groups are modelled together as one pooled group" if small_s == "pool"
                  else "groups dropped as too small are not synthesized")
    st.caption(f"One model per group: each of the {n_strata} models receives the full ε; the total is still ε "
               f"because the groups do not overlap (parallel composition); {small_text}.")


def stopped_words(what: str, note: dict, button: str) -> str:
    """"Stopped: the MST run was stopped at 40% (ε = 0.5: fitting), so it has no result. …" from a note of
    ``ui.progress.stopped`` (how far the run had got, as its bar last said)."""
    where = f" at {note['fraction']:.0%}" if note.get("fraction") else ""
    said = f" ({md_escape(note['text'], max_len=120)})" if note.get("text") else ""
    return (f"Stopped: the last {what} was stopped{where}{said}, so it has no result. Press **{button}** to start "
            "it again.")


def _ended(bar) -> None:
    """A run behind a button came to its end (a result or a message): its bar and Stop button go."""
    bar.empty()
    progress.run_ended()


def _uploaded(table_key: str) -> bool:
    """Whether the table came from this session's upload (its runs are then never shared with other sessions)."""
    return not (table_key == "adult" or table_key.startswith(("cat-", "up-shared-")))


def run_pair(cfg, table_key, table, small_s, clf):
    """Vanilla and stratified runs for the current settings (live for built-ins, on a button for MST/AIM)."""
    store = st.session_state.setdefault("_sv_runs", {})
    key = (table_key, cfg.synth, cfg.eps, cfg.seed, cfg.min_frac, small_s, clf)
    name = SYNTH_OPTIONS[cfg.synth].split(" ")[0]
    # MST/AIM, and any synthesizer scored with a random forest (three forests of 100 trees on Adult: minutes on a
    # busy server), run behind a button with progress; the rest redraw live
    if cfg.synth in ("mst", "aim") or clf == "forest":
        if key in store:
            return store[key]
        # another session may have run these settings on the same bundled data: take its result at once
        shared = shared_or_session("synth_pair", key, table_key, uploaded=_uploaded(table_key))
        found, out = RUNS.peek(shared)
        if found:
            store[key] = out
            st.caption(f"{name} with these settings already ran on this server; its result is shown (same seed, "
                       "same numbers).")
            return out
        if note := progress.stopped("synth"):  # Stop pressed during the run (issue 31): said at once, once
            st.info(stopped_words(f"{name} run", note, f"Run {name}"))
        st.info(f"{name} takes tens of seconds (the first run compiles code); press Run." if cfg.synth in ("mst", "aim")
                else "Scoring with a random forest takes tens of seconds (three forests of 100 trees); press Run.")
        cluster.show_where(CORES)
        if not st.button(f"Run {name}", key="sv_run_mbi", type="primary"):
            return None
        with st.status(f"Running {name}: vanilla and stratified…", expanded=True) as status:
            bar = RunProgress("Starting", kind="synth", key="sv_stop_synth")
            train, test = Y.train_test_split_table(table, rng=cfg.seed)
            base = c_real_baseline(table_key, table, cfg.seed, clf)

            def prog(f, msg):
                bar.progress(min(f, 1.0), text=msg[:120])
            try:
                out = RUNS.get(shared, lambda: cluster.run(
                    Y.fit_and_evaluate_variants, train, test, domain=table.domain, synthesizer=cfg.synth,
                    epsilon=cfg.eps, variants=("vanilla", "stratified"), group_cols=list(table.group_cols),
                    label_col=table.label_col, rng=cfg.seed, min_frac=cfg.min_frac, small_strata=small_s,
                    real_baseline=base, classifier=clf, progress=prog, n_jobs=CORES))
            except Y.SynthesizerUnavailable as exc:
                _ended(bar)
                status.update(label="Unavailable", state="error")
                st.error(md_escape(exc, max_len=400))
                return None
            except ValueError as exc:
                _ended(bar)
                status.update(label="Could not run", state="error")
                st.error(md_escape(exc, max_len=400))
                return None
            except Exception:
                progress.run_ended()  # a crash is not a Stop: no "Stopped" note, no rerun hiding the error
                raise
            _ended(bar)
            status.update(label="Done", state="complete", expanded=False)
        if len(store) >= 8:
            store.pop(next(iter(store)))
        store[key] = out
        return out
    try:
        with st.spinner("Fitting the synthesizers…"):
            return {v: c_synth_run(table_key, table, cfg.synth, cfg.eps, v, cfg.seed, cfg.min_frac, small_s, clf)
                    for v in ("vanilla", "stratified")}
    except ValueError as exc:
        st.warning(f"{SYNTH_OPTIONS[cfg.synth]} cannot run with these settings: {md_escape(exc, max_len=400)}. If "
                   "every group is below the minimum stratum fraction, lower it; if the table is too large for this "
                   "synthesizer, pick another one.")
        return None


def decode_group(label: str, table) -> str:
    """A stratum's code label ("0 × 3") in the table's words ("Female × White")."""
    parts = str(label).split(" × ")
    out = []
    for gc, p in zip(table.group_cols, parts):
        labs = table.labels.get(gc)
        try:
            out.append(str(labs[int(p)]) if labs is not None else p)
        except (ValueError, IndexError):
            out.append(p)
    return " × ".join(out)


def synth_csv(df: pd.DataFrame, labels) -> bytes:
    # "No value" is a level while synthesizing; in the file it is an empty cell again, as in the upload.
    out = Y.decode_table(df, labels)
    return csv_bytes(out.mask(out.eq(MISSING_LEVEL)))


def synth_script(cfg, table_key: str, table, small_s: str, clf: str) -> str:
    """The synthetic-data view's "Copy as code" for the table, synthesizer and settings the view just ran."""
    if table_key == "adult":
        data = dict(source="adult")
    elif table_key.startswith("cat-"):
        data = dict(source="categorical", n=cfg.n, k=cfg.k, alpha=cfg.alpha)
    else:
        up = st.session_state.get("sv_upload")
        name = Path(getattr(up, "name", None) or "your_data.csv").name
        if table_key.startswith("up-shared-"):
            name = table_key.removeprefix("up-shared-").split("-")[0] + ".csv"
        data = dict(source="upload", csv_path=name, group_cols=list(table.group_cols), label_col=table.label_col)
        if not table_key.startswith("up-shared-"):
            data["missing_codes"] = missing_codes(st.session_state.get("sv_na_missing"))
    return SC.synth_script(**data, synthesizer=cfg.synth, synthesizer_label=SYNTH_OPTIONS[cfg.synth].split(" (")[0],
                           epsilon=cfg.eps, seed=cfg.seed, min_frac=cfg.min_frac, small_strata=small_s,
                           classifier=clf)


def render_synth(cfg, upload_table, upload_digest: str) -> None:
    slot = st.container()  # the verdict, above this view's controls
    table_key, table, note = synth_table(cfg, upload_table, upload_digest)
    st.caption(note)
    small_s = choice_small()
    st.markdown("**One model**: the synthesizer learns one model of the whole table at ε. **One model per group**: "
                "it learns one model for each group, each at the same ε, and mixes their samples by the public group "
                "sizes. Both are trained on the training split; the classifier is tested on real held-out rows.")
    clf = choice_classifier()
    runs = run_pair(cfg, table_key, table, small_s, clf)
    synth_figs: list = []
    short_name = SYNTH_OPTIONS[cfg.synth].split(" (")[0]
    mbi = cfg.synth in ("mst", "aim")
    view = None
    if runs:
        view = SV.synth_view(
            runs["vanilla"], runs["stratified"], epsilon=cfg.eps, synthesizer=short_name,
            decode=partial(decode_group, table=table), seed=cfg.seed, delta=1e-9 if mbi else None,
            params={"Data": table_name(table_key, cfg), "Synthesizer": SYNTH_OPTIONS[cfg.synth],
                    "ε": f"{cfg.eps:g}", "δ": "10⁻⁹" if mbi else "0", "Small groups": small_s, "Classifier": clf,
                    "Seed": f"{cfg.seed}"})
        _render_runs(view, runs, cfg, table, table_key, small_s, synth_figs, slot)
    if cfg.paper_grid:
        _sweep(cfg, table, table_key, small_s, clf, synth_figs)
    params = dict(mode="synthesis", source=table_name(table_key, cfg), table=table_key, synthesizer=cfg.synth,
                  epsilon=cfg.eps, delta=1e-9 if mbi else 0.0, seed=cfg.seed, min_frac=cfg.min_frac,
                  small_strata=small_s, classifier=clf, group_cols=list(table.group_cols), label=table.label_col,
                  paper=PAPER)
    download_json(params, filename="stratified_viewer_params.json", key="sv_dl_params_synth")
    if view is not None:
        report(view, key="sv_art_synth", figures=synth_figs, script=synth_script(cfg, table_key, table, small_s, clf))


def choice_small() -> str:
    return choice("Small groups in synthesis", {"drop": "Drop", "pool": "Pool"}, key="sv_syn_small",
                  widget="radio", horizontal=True,
                  help="Drop: as the paper's code (groups under 0.1% of the records); pool: one model for all "
                  "small groups together.")


def choice_classifier() -> str:
    return choice("Classifier for the accuracy measures", {"logreg": "Logistic regression",
                                                            "forest": "Random forest"}, key="sv_classifier",
                  widget="radio", horizontal=True,
                  help="Trained on the synthetic data, tested on real held-out rows. The random forest "
                  "(100 trees) takes tens of seconds on Adult.")


def _render_runs(view, runs, cfg, table, table_key, small_s, synth_figs, slot) -> None:
    verdict_box(view.verdicts, container=slot)
    privacy_line(cfg, view.figures["n_models"], small_s)
    summary = view.tables["summary"]
    # Shown as text so an undefined value reads "n/a" (the CSV keeps the numbers, empty where undefined).
    results_table(summary.assign(**{c: summary[c].map(fmt) for c in ("one model", "one model per group")}),
                 hide_index=True)
    cards(view.headlines[4:], columns=3)
    download_csv(summary, filename="synth_metrics.csv", key="sv_dl_synth_metrics", label="Download metrics (CSV)")
    with methodology():
        st.markdown("Workload error: average L1 distance between real and synthetic 2-way tables (0 = "
                    "identical). Parity error: Definition 11 on column means, ω = 1/k, summed over groups. "
                    "Positive-prediction ratio (demographic parity): lowest over highest positive-prediction "
                    "rate across groups (0: the classifier never predicts the positive class for at least one "
                    "group; “n/a” when it never predicts it for any group). Missed positives: largest minus "
                    "smallest false-negative rate across groups.")
    mv, ms = view.figures["vanilla"], view.figures["stratified"]
    dec = partial(decode_group, table=table)
    wv = mv.workload_per_group.assign(group=lambda d: [dec(g) for g in d["group"]])
    ws = ms.workload_per_group.assign(group=lambda d: [dec(g) for g in d["group"]])
    short_name = SYNTH_OPTIONS[cfg.synth].split(" (")[0]
    fig = F.make_synth_group_error_figure(wv, ws, title=f"Workload error per group, {short_name}, ε = {cfg.eps:g}")
    alt = ("Grouped bars of each group's workload error, one model against one model per group: "
           f"{view.verdicts[0].text}")
    synth_figs.append((alt, fig))
    show(fig, key="sv_fig_synth_groups", filename="synth_group_error", table=view.tables["per_group"], alt=alt,
         caption="Lower is better. A model per group gives each group its own model at the full ε: it helps "
                 "groups that a single model neglects, and hurts groups too small for their own noisy model "
                 f"(the same crossover as in mean estimation). Seed {cfg.seed}.")
    hm = F.make_parity_heatmap(mv.parity.per_cell.rename(index=dec), ms.parity.per_cell.rename(index=dec))
    alt = ("Two heat maps, one model and one model per group: rows are groups, columns are table columns, "
           "colour is how far the synthetic group's column mean is from the real one.")
    synth_figs.append((alt, hm))
    show(hm, key="sv_fig_parity", filename="parity_heatmap", alt=alt,
         caption="Each cell: how far the synthetic group's column mean is from the real one, relative to it. "
                 f"Seed {cfg.seed}.")
    if view.figures["missing"]:
        st.caption("Groups missing from a synthetic table were compared with the whole synthetic table: "
                   f"{', '.join(md_escape(g) for g in view.figures['missing'])}.")
    strata = view.tables["strata"]
    if strata is not None:
        st.markdown("**Groups and their models**")
        stab = strata.copy()
        for gc in table.group_cols:
            labs = table.labels.get(gc, ())
            stab[gc] = [labs[v] if v < len(labs) else v for v in stab[gc]]
        stab = stab.rename(columns={"size": "records", "kept": "own model", "pooled": "in the pooled model",
                                    "weight": "share of the synthetic sample"})
        results_table(stab, hide_index=True)
        download_csv(stab, filename="strata.csv", key="sv_dl_strata", label="Download the groups table (CSV)")
    # Synthetic sample download (decoded labels). A plain CSV that reads back with any CSV reader (and into
    # this page's upload); how it was made goes in a JSON sidecar, not in comment lines.
    which = choice("Synthetic sample to download", {"stratified": "One model per group", "vanilla": "One model"},
                   key="sv_dl_which", widget="radio", horizontal=True)
    run = runs[which]
    stem = f"synthetic_{cfg.synth}_{which}_eps{cfg.eps:g}_seed{cfg.seed}"
    d1, d2 = st.columns(2)
    d1.download_button("Download synthetic data (CSV)", data=partial(synth_csv, run.synthetic, table.labels),
                       file_name=f"{stem}.csv", mime="text/csv", key="sv_dl_synth", on_click="ignore")
    with d2:
        download_json(dict(file=f"{stem}.csv", synthesizer=cfg.synth, variant=which, epsilon=cfg.eps,
                           delta=run.delta, seed=cfg.seed, source=table_name(table_key, cfg),
                           rows=int(len(run.synthetic)), paper=PAPER),
                      filename=f"{stem}.json", key="sv_dl_synth_meta", label="Download how it was made (JSON)")


def _sweep(cfg, table, table_key, small_s, clf, synth_figs) -> None:
    """Paper grid sweep (behind a button)."""
    st.subheader("Quality against ε (paper grid)")
    skey = ("sweep", table_key, cfg.synth, cfg.seed, cfg.min_frac, small_s, clf)
    store = st.session_state.setdefault("_sv_runs", {})
    shared = shared_or_session("synth_sweep", skey, table_key, uploaded=_uploaded(table_key))
    if skey not in store:
        found, long = RUNS.peek(shared)
        if found:
            store[skey] = long
    if skey not in store:
        if cfg.synth in ("mst", "aim"):
            st.caption("A sweep of MST/AIM over six ε values takes several minutes.")
        if note := progress.stopped("synth_sweep"):  # Stop pressed during the sweep (issue 31)
            st.info(stopped_words("ε sweep", note, "Run ε sweep"))
        cluster.show_where(CORES)
        if st.button("Run ε sweep", key="sv_run_sweep"):
            with st.status("Running the ε sweep…", expanded=True) as status:
                bar = RunProgress("Starting", kind="synth_sweep", key="sv_stop_synth_sweep")

                def prog(f: float, msg: str) -> None:
                    bar.progress(min(f, 1.0), text=msg[:120])
                try:
                    # Same seeds whatever runs the fits (local cores or a Dask cluster): same numbers.
                    store[skey] = RUNS.get(shared, lambda: cluster.run(
                        SW.synth_epsilon_sweep, table, synthesizer=cfg.synth, rng=cfg.seed, min_frac=cfg.min_frac,
                        small_strata=small_s, classifier=clf, n_jobs=CORES, progress=prog))
                except (ValueError, Y.SynthesizerUnavailable) as exc:
                    _ended(bar)
                    status.update(label="Could not run", state="error")
                    st.error(md_escape(exc, max_len=400))
                    return
                except Exception:
                    progress.run_ended()  # a crash is not a Stop: no "Stopped" note, no rerun hiding the error
                    raise
                _ended(bar)
                status.update(label="Done", state="complete", expanded=False)
    if skey in store:
        long = store[skey]
        fig = F.make_synth_sweep_figure(long)
        alt = ("Three panels against ε on the paper's grid: workload error, parity error and classifier "
               "accuracy, one line for one model and one for one model per group.")
        synth_figs.append((alt, fig))
        show(fig, key="sv_fig_synth_sweep", filename="synth_sweep", table=long, alt=alt,
             caption=f"One model vs one model per group at each ε of the paper's grid (one run per point, "
                     f"seed {cfg.seed}).")
