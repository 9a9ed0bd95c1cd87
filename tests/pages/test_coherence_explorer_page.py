"""AppTest of pages/coherence_explorer.py: defaults render with a verdict first, every control changes the output,
the Run buttons produce results and exports, uploads are validated, and query parameters restore the view.

Only the open tab draws its results (tabs bound to the URL as ``coh_tab``, drawn through ``ui.tabs.lazy_tabs``), so
each check opens its tab through the URL, as a shared link would."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.common.data import census_population
from tests.product.walk import capture_downloads
from ui.common import CORES

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "coherence_explorer.py")


PREVIEW, RUNS, SWEEP, THEORY, SEC7 = ("Single split (preview)", "Repeated runs", "W1 vs ε", "Theory",
                                       "Section 7: a provably safe release")
DP = "ε-DP histogram → synthetic records (Laplace)"
GAUSS = "(ε, δ)-DP histogram → synthetic records (Gaussian)"


def open_tab(at: AppTest, tab: str) -> AppTest:
    """Switch tabs through the URL (AppTest re-sends the tab widget's last value, which outranks Session State)."""
    at.query_params["coh_tab"] = tab
    return at.run()


def _shown(x) -> str:
    """A Markdown text as rendered (escapes removed)."""
    return re.sub(r"\\(.)", r"\1", x.value)


def _first(block):
    """The first element drawn in a tab (descending into containers: a verdict is drawn into a reserved slot)."""
    el = next(iter(block.children.values()))
    while el.type in ("flex_container", "vertical", "container") and getattr(el, "children", None):
        el = next(iter(el.children.values()))
    return el


def _app(**params) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    return at


def _charts(at):
    return at.get("plotly_chart")


def _signature(at) -> tuple:
    """Everything a user sees that a control could change (charts, tables, metrics, texts)."""
    charts = tuple(c.proto.spec for c in _charts(at))
    frames = tuple(d.value.to_csv() for d in at.dataframe)
    metrics = tuple((m.label, m.value) for m in at.metric)
    texts = tuple(x.value for x in list(at.markdown) + list(at.caption) + list(at.warning) + list(at.info))
    return charts, frames, metrics, texts


def _ok(at):
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def test_defaults_render():
    at = _app().run()
    _ok(at)
    assert at.title[0].value == "Coherence explorer"
    assert len(_charts(at)) == 2  # the open preview tab only (lazy tabs)
    # the verdict comes first in the open tab, and names the group the bar chart shows above the α line
    first = _first(at.tabs[0])
    assert first.type in ("info", "warning") and "exposes them" in _shown(first)
    bars = __import__("json").loads(_charts(at)[1].proto.spec)["data"][0]
    w_drem = float(bars["text"][1])
    assert "DREM = 1 members" in _shown(first) and f"W1 {w_drem:.2f}, above the 0.20 line" in _shown(first)
    assert at.radio(key="coh_release").value == "clear"
    assert at.selectbox(key="coh_label").value == "DREM"
    assert at.slider(key="coh_alpha").value == pytest.approx(0.2)
    table = at.dataframe[0].value
    assert list(table["group"]) == ["Everyone", "DREM = 1"]
    assert any("seed 0" in c.value for c in at.caption)  # stochastic results show their seed


def test_every_control_changes_the_output():
    at = _app(coh_n="2000", coh_trees="10").run()
    _ok(at)
    steps = [
        ("coh_alpha", lambda a: a.slider(key="coh_alpha").set_value(0.9)),
        ("coh_seed", lambda a: a.number_input(key="coh_seed").set_value(5)),
        ("coh_n", lambda a: a.slider(key="coh_n").set_value(3000)),
        ("coh_lens", lambda a: a.multiselect(key="coh_lens").set_value(["AGEP", "EDU", "SEX"])),
        ("coh_groups", lambda a: a.multiselect(key="coh_groups").set_value(["everyone", "sensitive", "age65"])),
        ("coh_gamma", lambda a: a.number_input(key="coh_gamma").set_value(400.0)),
        # a unit switch converts γ (same groups kept); the new value in the new unit changes the output
        ("coh_gamma_mode", lambda a: a.radio(key="coh_gamma_mode").set_value("percent").run()
         .number_input(key="coh_gamma").set_value(30.0)),
        ("coh_learner", lambda a: a.selectbox(key="coh_learner").set_value("decision_tree")),
        ("coh_output", lambda a: a.radio(key="coh_output").set_value("soft")),
        ("coh_trees", lambda a: a.selectbox(key="coh_learner").set_value("random_forest")),
        ("coh_trees_value", lambda a: a.slider(key="coh_trees").set_value(30)),
        ("coh_view", lambda a: a.selectbox(key="coh_view").set_value("Everyone")),
        ("coh_ecdf", lambda a: a.toggle(key="coh_ecdf").set_value(True)),
        ("coh_coarsen", lambda a: a.toggle(key="coh_coarsen").set_value(True)),
        ("coh_bins", lambda a: a.slider(key="coh_bins").set_value(4)),
        ("coh_features", lambda a: a.multiselect(key="coh_features").set_value(["AGEP", "SEX"])),
        ("coh_release_cols", lambda a: a.radio(key="coh_release").set_value("column_subset")),
        ("coh_release", lambda a: a.radio(key="coh_release").set_value("dp_histogram")),
        ("coh_eps", lambda a: a.select_slider(key="coh_eps").set_value(0.1)),
        ("coh_exact", lambda a: a.toggle(key="coh_exact").set_value(True)),
        ("coh_exact_off", lambda a: a.toggle(key="coh_exact").set_value(False)),
        ("coh_release_gauss", lambda a: a.radio(key="coh_release").set_value("gaussian_histogram")),
        ("coh_delta_exp", lambda a: a.slider(key="coh_delta_exp").set_value(-9)),
        ("coh_release_sub", lambda a: a.radio(key="coh_release").set_value("subsample")),
        ("coh_k", lambda a: a.number_input(key="coh_k").set_value(200)),
        ("tab: runs", lambda a: open_tab(a, RUNS)),
        ("coh_reps", lambda a: a.slider(key="coh_reps").set_value(7)),
        ("tab: theory", lambda a: open_tab(a, THEORY)),
        ("coh_beta", lambda a: a.select_slider(key="coh_beta").set_value("1e-6")),
        ("coh_hyp_eps", lambda a: a.select_slider(key="coh_hyp_eps").set_value(0.1)),
        ("coh_table1", lambda a: a.toggle(key="coh_table1").set_value(True)),
        ("coh_gamma_mode_back", lambda a: a.radio(key="coh_gamma_mode").set_value("members").run()
         .number_input(key="coh_gamma").set_value(50.0)),
        ("tab: section 7", lambda a: open_tab(a, SEC7)),
        ("coh_sec7", lambda a: a.toggle(key="coh_sec7").set_value(True)),
        ("coh_s7_curator", lambda a: a.radio(key="coh_s7_curator").set_value("count")),
        ("coh_sensitive", lambda a: a.selectbox(key="coh_sensitive").set_value("2")),
        ("coh_label", lambda a: a.selectbox(key="coh_label").set_value("SEX")),
    ]
    for name, act in steps:
        before = _signature(at)
        act(at).run()
        _ok(at)
        assert _signature(at) != before, f"changing {name} did not change the output"


def test_table1_matches_paper_claims():
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_table1="true", coh_tab=THEORY).run()
    _ok(at)
    t1 = next(d.value for d in at.dataframe if "ε printed in the paper" in d.value.columns)
    assert len(t1) == 8
    # seed §6.3: at α = 0.2, ε = 0.01 suffices for γ = 0.05n = 250,000
    row = t1[t1["α"] == 0.2].iloc[0]
    assert row["γ required at that ε"] <= 250_000 and row["largest ε (Thm 7)"] >= 0.01


def test_run_experiment_and_exports():
    at = _app(coh_n="2000", coh_reps="5", coh_learner="Decision tree", coh_tab=RUNS).run()
    _ok(at)
    assert "Press **Run experiment**" in at.tabs[1].info[0].value  # before a run, the tab says what to do first
    at.button(key="coh_run").click().run()
    _ok(at)
    assert len(_charts(at)) == 3  # sorted W1, failure rate, size vs W1
    at.button(key="coh_run").click().run()  # a second click is served from the session cache
    _ok(at)
    labels = [m.label for m in at.metric]
    assert "Runs failing at α" in labels
    first = _first(at.tabs[1])
    k = next(m.value for m in at.metric if m.label == "Runs failing at α").split("/")[0]
    assert first.type in ("info", "warning")
    assert f"In {k} of 5 runs" in _shown(first) or _shown(first).startswith("No run")
    dls = {d.proto.label for d in at.get("download_button")}
    assert {"Download table (CSV)", "Download parameters (JSON)", "Download figure (HTML)"} <= dls
    assert any("run_experiment" in c.value and "wasserstein_distance" in c.value for c in at.code)  # Copy as code
    # α is applied to the stored result without re-running
    before = next(m.value for m in at.metric if m.label == "Runs failing at α")
    at.slider(key="coh_alpha").set_value(2.0).run()
    _ok(at)
    assert next(m.value for m in at.metric if m.label == "Runs failing at α") == "0/5"
    assert before != "0/5"
    # a settings change keeps the old result with a notice
    at.toggle(key="coh_coarsen").set_value(True).run()
    at.slider(key="coh_bins").set_value(5).run()
    assert any("Settings changed" in w.value for w in at.warning)


def test_a_second_session_gets_the_same_run_without_recomputing():
    """Issue 23 item 5: identical coherence runs are computed once per server (generated data, same settings)."""
    from ui.shared_runs import RUNS as SHARED

    params = dict(coh_n="2000", coh_reps="4", coh_learner="Decision tree", coh_tab=RUNS)
    first = _app(**params).run()
    first.button(key="coh_run").click().run()
    _ok(first)
    computed = SHARED.computed
    mine = next(m.value for m in first.metric if m.label == "Runs failing at α")
    second = _app(**params).run()  # another browser session: no click
    _ok(second)
    assert SHARED.computed == computed
    assert next(m.value for m in second.metric if m.label == "Runs failing at α") == mine
    assert any("already ran on this server" in c.value for c in second.caption)
    assert len(_charts(second)) == 3


def test_epsilon_sweep_button():
    at = _app(coh_n="2000", coh_reps="5", coh_learner="Decision tree", coh_release=DP, coh_tab=SWEEP).run()
    _ok(at)
    assert len(_charts(at)) == 0
    at.button(key="coh_sweep_run").click().run()
    _ok(at)
    assert len(_charts(at)) == 1
    first = _first(at.tabs[2])
    assert first.type in ("info", "warning") and "the α = 0.20 line" in _shown(first)
    at.button(key="coh_sweep_run").click().run()
    _ok(at)


def test_bad_upload_shows_message():
    at = _app(coh_source="Upload a CSV").run()
    assert not at.exception
    assert at.info  # explains the expected format before any upload
    at.file_uploader(key="coh_upload").set_value(("bad.csv", b"just one column\n1\n2\n", "text/csv")).run()
    assert not at.exception
    assert at.error and "cannot be used" in at.error[0].value
    assert "column" in at.error[0].value.lower()


def test_upload_without_label_candidate():
    rows = "\n".join(f"{i},{i * 2}" for i in range(30))
    at = _app(coh_source="Upload a CSV").run()
    at.file_uploader(key="coh_upload").set_value(("x.csv", f"a,b\n{rows}\n".encode(), "text/csv")).run()
    assert not at.exception
    assert at.error and "label" in at.error[0].value


def test_upload_with_nist_columns_offers_paper_preset():
    df = census_population(600, rng=4)[["AGEP", "DENSITY", "INDP_CAT", "INDP", "SEX", "EDU", "HISP", "RAC1P", "DREM"]]
    data = df.to_csv(index=False, na_rep="N").encode()
    at = _app(coh_source="Upload a CSV", coh_learner="Decision tree").run()
    at.file_uploader(key="coh_upload").set_value(("acs.csv", data, "text/csv")).run()
    _ok(at)
    at.button(key="coh_paper_preset").click().run()
    _ok(at)
    assert at.slider(key="coh_reps").value == 100
    assert at.selectbox(key="coh_learner").value == "random_forest"
    assert at.selectbox(key="coh_label").value == "DREM"
    assert list(at.multiselect(key="coh_lens").value) == ["AGEP", "DENSITY", "INDP_CAT", "INDP", "SEX", "EDU",
                                                          "HISP", "RAC1P"]


def test_shared_dataset_source():
    at = _app(coh_source="Shared dataset (sidebar picker)", dataset="ACS 2012 sample",
              coh_learner="Decision tree").run()
    _ok(at)
    assert at.selectbox(key="coh_label").value == "disability"
    assert len(_charts(at)) == 2


def test_deep_link_restores_state():
    at = _app(coh_alpha="0.55", coh_release="Random subsample in the clear", coh_k="300", coh_seed="7",
              coh_n="2000", coh_beta="1e-3").run()
    _ok(at)
    assert at.slider(key="coh_alpha").value == pytest.approx(0.55)
    assert at.radio(key="coh_release").value == "subsample"
    assert at.number_input(key="coh_k").value == 300
    assert at.number_input(key="coh_seed").value == 7
    assert at.select_slider(key="coh_beta").value == "1e-3"


def test_group_builder_adds_an_and_group():
    at = _app(coh_n="2000", coh_learner="Decision tree").run()
    _ok(at)
    at.text_input(key="coh_b_name").set_value("Older women").run()
    at.selectbox(key="coh_b_col").set_value("SEX").run()
    at.multiselect(key="coh_b_vals").set_value(["2"]).run()
    at.button(key="coh_b_and").click().run()
    at.selectbox(key="coh_b_col").set_value("AGEP").run()
    at.radio(key="coh_b_mode").set_value("in range [low, high)").run()
    at.text_input(key="coh_b_low").set_value("65").run()
    at.button(key="coh_b_add").click().run()
    _ok(at)
    table = at.dataframe[0].value
    assert "Older women" in list(table["group"])
    df = census_population(2000, rng=0)
    df = df[df["DREM"].notna()]
    expected = int(((df["SEX"] == 2) & (df["AGEP"] >= 65)).sum())
    assert int(table.set_index("group").loc["Older women", "members"]) == expected
    # the built group is in the link; a fresh session opened with that link shows it with the same size
    link = at.query_params["coh_built"]
    link = link[0] if isinstance(link, list) else link
    assert "Older women" in link
    fresh = _app(coh_n="2000", coh_learner="Decision tree", coh_built=link).run()
    _ok(fresh)
    restored = fresh.dataframe[0].value.set_index("group")
    assert int(restored.loc["Older women", "members"]) == expected
    # clearing the built groups drops them from the link
    at.button(key="coh_b_clear").click().run()
    assert "coh_built" not in at.query_params
    assert "Older women" not in list(at.dataframe[0].value["group"])


def test_bad_built_groups_link_warns_and_keeps_the_rest():
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_alpha="0.55",
              coh_built='[{"name": "x", "conditions": [{"column": "AGEP", "low": 70, "high": 20}]}]').run()
    _ok(at)
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]  # as rendered (Markdown escapes removed)
    assert any("built groups could not be read" in w and "low < high" in w for w in shown)
    assert at.slider(key="coh_alpha").value == pytest.approx(0.55)
    assert list(at.dataframe[0].value["group"]) == ["Everyone", "DREM = 1"]


# ------------------------------------------------------------------ issue 12: state integrity, DP claims, uploads
def _upload(at, data: bytes, name: str = "x.csv"):
    at.file_uploader(key="coh_upload").set_value((name, data, "text/csv")).run()
    return at


def _small_upload() -> bytes:
    rng = __import__("numpy").random.default_rng(3)
    rows = ["height,weight,smoker,region"]
    for i in range(120):
        rows.append(f"{150 + i % 40},{50 + (i * 7) % 45},{'yes' if rng.random() < 0.3 else 'no'},r{i % 3}")
    return ("\n".join(rows) + "\n").encode()


def test_switching_the_data_source_rederives_lens_and_label():
    """Issue 12 example 5: synthetic → shared Adult → upload → synthetic, the page never stops at an empty lens."""
    at = _app(coh_n="2000", coh_learner="Decision tree").run()
    _ok(at)
    at.multiselect(key="coh_groups").set_value(["sensitive", "age65"]).run()
    at.radio(key="coh_source").set_value("shared").run()
    _ok(at)
    # new data (the shared census sample), default groups again
    assert list(at.multiselect(key="coh_groups").value) == ["everyone", "sensitive"]
    assert "coh_groups" not in dict(at.query_params)
    at.selectbox(key="dataset").set_value("adult").run()
    _ok(at)
    lens = list(at.multiselect(key="coh_lens").value)
    label = at.selectbox(key="coh_label").value
    assert lens and label not in lens and set(lens) <= set(at.multiselect(key="coh_lens").options)
    assert at.multiselect(key="coh_features").value  # released-feature default re-derived as well
    at.radio(key="coh_source").set_value("upload").run()
    _upload(at, _small_upload())
    _ok(at)
    assert at.number_input(key="coh_k").value == 60  # k re-derived: min(500, n // 2) for 120 rows
    lens = list(at.multiselect(key="coh_lens").value)
    assert lens and at.selectbox(key="coh_label").value not in lens
    assert set(lens) <= {"height", "weight", "smoker", "region"}
    at.multiselect(key="coh_groups").set_value(["sensitive"]).run()
    at.radio(key="coh_source").set_value("synthetic").run()
    _ok(at)
    assert at.selectbox(key="coh_label").value == "DREM"
    assert list(at.multiselect(key="coh_lens").value) == ["AGEP", "DENSITY", "INDP_CAT", "INDP", "SEX", "EDU",
                                                          "HISP", "RAC1P"]
    # issue 31: back on the synthetic data, its own groups return (they were reset to the defaults)
    assert list(at.multiselect(key="coh_groups").value) == ["sensitive", "age65"]


def test_link_lens_still_wins_on_first_load():
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_lens=["AGEP", "SEX"]).run()
    _ok(at)
    assert list(at.multiselect(key="coh_lens").value) == ["AGEP", "SEX"]
    at.slider(key="coh_alpha").set_value(0.5).run()  # a later rerun on the same data keeps the choice
    assert list(at.multiselect(key="coh_lens").value) == ["AGEP", "SEX"]


def test_exact_histogram_is_not_called_dp():
    """Issue 12 example 6: at ε = ∞ the histogram release is exact, not DP, and no theorem applies."""
    for release in (DP, GAUSS):
        # "coh_eps=∞" is how links before the exact-histogram switch said it: it still opens the exact histogram
        at = _app(coh_n="2000", coh_learner="Decision tree", coh_release=release, coh_eps="∞", coh_tab=THEORY).run()
        _ok(at)
        assert at.toggle(key="coh_exact").value and at.select_slider(key="coh_eps").disabled
        texts = [x.value for x in list(at.markdown) + list(at.caption) + list(at.info) + list(at.warning)]
        joined = "\n".join(texts)
        assert "Theorem 7 applies" not in joined and "Theorem 8 applies" not in joined
        assert "DP release (ε = ∞" not in joined
        assert any("not DP" in t for t in texts), texts
        # the theory tab treats it as a non-DP release (hypothetical ε)
        assert any("This release is not DP" in t for t in texts)


def test_hostile_built_groups_link_never_raises():
    """Issue 17: 1,500 nested brackets in coh_built raised RecursionError on load."""
    for hostile in ("[" * 1500, "[" * 1500 + "]" * 1500, '[{"name":"a","conditions":[{"column":"AGEP","low":1e309}]}]'):
        at = _app(coh_n="2000", coh_learner="Decision tree", coh_built=hostile).run()
        _ok(at)
        # refused by the page's codec (a warning), or earlier by the app-wide link sanitiser (dropped from the URL)
        assert (any("built groups could not be read" in w.value for w in at.warning)
                or "coh_built" not in at.query_params)
        assert list(at.dataframe[0].value["group"]) == ["Everyone", "DREM = 1"]


def test_built_group_names_from_a_link_are_inert():
    """Issue 17: a group name from a link reaches Markdown escaped (no image fetch, no link)."""
    name = "![x](http://host.invalid/p)"
    link = '[{"name": "%s", "conditions": [{"column": "AGEP", "low": 90}]}]' % name
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_built=link, coh_gamma="0", coh_tab="Theory").run()
    _ok(at)
    assert name in list(at.dataframe[0].value["group"])  # tables show it verbatim (not Markdown)
    md = [x.value for x in list(at.markdown) + list(at.caption) + list(at.warning) + list(at.info)
          + list(at.error)]
    assert not any("](http" in t for t in md), [t for t in md if "host.invalid" in t]
    bad = '[{"name": "![y](http://host.invalid/q)", "conditions": [{"column": "NOPE", "low": 1}]}]'
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_built=bad).run()
    _ok(at)
    notes = [w.value for w in at.warning]
    assert any("NOPE" in w for w in notes) and not any("](http" in w for w in notes)


def test_ragged_upload_is_refused_with_a_clear_message():
    at = _app(coh_source="Upload a CSV").run()
    _upload(at, b"a,b,c\n1,2,3\n4,5,6,7\n" + b"1,2,3\n" * 30)
    assert not at.exception
    assert at.error and "line" in at.error[0].value and "columns" in at.error[0].value


def test_label_moved_into_the_lens_is_said():
    """A column cannot be both the label and a lens feature: choosing it as the label says so."""
    at = _app(coh_n="2000", coh_learner="Decision tree").run()
    at.selectbox(key="coh_label").set_value("SEX").run()
    _ok(at)
    assert "SEX" not in at.multiselect(key="coh_lens").value
    assert any("SEX" in x.value and "label" in x.value and "lens" in x.value for x in at.info)


# ------------------------------------------------------------------ every CSV the page writes reads back
def test_every_csv_reads_back_with_pandas_and_our_reader():
    import io

    from dpdash.common.data import read_uploaded_csv

    name = "=HYPERLINK(1)"  # a formula-looking group name must come back neutralised, not as a formula
    link = '[{"name": "%s", "conditions": [{"column": "AGEP", "low": 50}]}]' % name
    with capture_downloads() as dl:
        at = _app(coh_n="2000", coh_reps="5", coh_learner="Decision tree", coh_built=link, coh_release=DP,
                  coh_tab=RUNS).run()
        at.button(key="coh_run").click().run()
        open_tab(at, SWEEP).button(key="coh_sweep_run").click().run()
        _ok(at)
        files = dl.files(".csv")
    assert {"coherence_w1_per_run.csv", "coherence_summary.csv", "coherence_epsilon_sweep.csv"} <= set(files)
    for fname, data in files.items():
        assert not data.lstrip().startswith(b"#"), fname
        frame = pd.read_csv(io.BytesIO(data))
        assert len(frame) >= 1 and frame.shape[1] >= 2, fname
        back = read_uploaded_csv(data)
        assert list(back.frame.columns) == list(frame.columns), fname
        assert not any(str(v).startswith("=") for v in frame.astype(str).to_numpy().ravel()), fname
        assert not any(str(c).startswith("=") for c in frame.columns), fname
        assert not [c for c in frame.columns if "_" in str(c)], (fname, list(frame.columns))  # plain headers
    sweep = pd.read_csv(io.BytesIO(files["coherence_epsilon_sweep.csv"]))
    assert sorted(set(sweep["ε"].dropna())) == [0.1, 0.3, 1.0, 3.0, 10.0]
    assert (sweep["ε"].isna() == sweep["differentially private"].str.startswith("no")).all()  # ∞: exact, not DP


def test_gamma_follows_the_data_and_its_unit():
    """γ = 100 members excluded every group of a 60-row upload; a unit switch read 100 members as 100 % of n."""
    rows = "a,b,y\n" + "".join(f"{i},{i % 3},{'s' if i % 4 == 0 else 'n'}\n" for i in range(60))
    at = _app(coh_source="Upload a CSV", coh_learner="Decision tree").run()
    _upload(at, rows.encode())
    _ok(at)
    assert at.number_input(key="coh_gamma").value == 6  # a tenth of n = 60
    assert list(at.dataframe[0].value["kept (at least γ members)"]) == ["yes", "yes"]
    assert not any("larger than the dataset" in w.value for w in at.warning)
    at.radio(key="coh_gamma_mode").set_value("percent").run()
    assert at.number_input(key="coh_gamma").value == pytest.approx(10.0)  # 6 of 60 members = 10 %
    at.radio(key="coh_gamma_mode").set_value("members").run()
    assert at.number_input(key="coh_gamma").value == pytest.approx(6.0)


def test_controls_that_do_not_apply_are_disabled_or_replaced():
    at = _app(coh_n="2000", coh_learner="Decision tree").run()
    assert at.slider(key="coh_trees").disabled and at.slider(key="coh_bins").disabled
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_release=DP, coh_eps="0.1", coh_tab=THEORY).run()
    _ok(at)
    assert not at.slider(key="coh_bins").disabled
    # the release's ε replaces the hypothetical-ε control instead of sitting beside it
    assert "coh_hyp_eps" not in [w.key for w in at.select_slider]
    assert any("Using the release's ε = 0.1" in m.value for m in at.markdown)


def test_group_builder_refuses_non_finite_bounds():
    """float() accepted "nan" and "1e309": a NaN bound built an empty group, an infinite one a link that cannot
    be read back."""
    at = _app(coh_n="2000", coh_learner="Decision tree").run()
    at.selectbox(key="coh_b_col").set_value("AGEP").run()
    at.radio(key="coh_b_mode").set_value("in range [low, high)").run()
    for bad in ("nan", "1e309", "abc"):
        at.text_input(key="coh_b_low").set_value(bad).run()
        _ok(at)
        assert any("low" in w.value.lower() and "number" in w.value for w in at.warning), bad
        assert at.button(key="coh_b_add").disabled
    at.text_input(key="coh_b_low").set_value("70").run()
    at.text_input(key="coh_b_high").set_value("20").run()
    assert any("smaller than high" in w.value for w in at.warning)
    assert at.button(key="coh_b_add").disabled


def test_upload_with_huge_numbers_gets_a_message_not_a_traceback():
    rows = "a,b,y\n" + "".join(f"{1e308 if i % 2 else -1e308},{i % 3},{'s' if i % 4 == 0 else 'n'}\n"
                               for i in range(60))
    at = _app(coh_source="Upload a CSV", coh_learner="Decision tree").run()
    _upload(at, rows.encode())
    assert not at.exception
    # issue 31: numbers of 2⁵³ and more are refused by the reader, with the line named
    shown = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # as rendered (Markdown escapes removed)
    assert any("too large to hold exactly (line 2: -1e+308)" in e for e in shown), shown


def test_failure_rate_card_matches_the_downloaded_runs():
    """Card, chart title and CSVs come from one result: β̂(α) and its Clopper–Pearson interval recomputed from the
    per-run W1 CSV (spec §3.3, scipy's beta quantiles), W1 = 2|p_a − p_b| for hard predictions (§3.2), and the
    summary's mean W1 equal to the per-run mean."""
    import io

    from scipy.stats import beta as beta_dist

    with capture_downloads() as dl:
        at = _app(coh_n="2000", coh_reps="12", coh_learner="Decision tree", coh_alpha="0.15", coh_gamma="50",
                  coh_groups="everyone,sensitive,men18_24", coh_tab=RUNS).run()
        at.button(key="coh_run").click().run()
        _ok(at)
        files = dl.files(".csv")
    runs = pd.read_csv(io.BytesIO(files["coherence_w1_per_run.csv"]))
    summary = pd.read_csv(io.BytesIO(files["coherence_summary.csv"]))
    defined = runs["W1"].notna()
    assert (abs(runs.loc[defined, "W1"] - 2 * (runs.loc[defined, "share flagged, released half"]
                                              - runs.loc[defined, "share flagged, held-out half"]).abs())
            < 1e-12).all()
    kept = runs[runs["members"] >= 50]
    m = kept.groupby("run")["W1"].max()
    alpha = round(float(m.median()), 2)  # α applies to the stored result: choose one that splits the runs
    at.slider(key="coh_alpha").set_value(alpha).run()
    _ok(at)
    R, k = int(m.notna().sum()), int((m > alpha).sum())
    lo = 0.0 if k == 0 else beta_dist.ppf(0.025, k, R - k + 1)
    hi = 1.0 if k == R else beta_dist.ppf(0.975, k + 1, R - k)
    cards = {x.label: x.value for x in at.metric}
    assert 0 < k < R, (k, R)  # a non-trivial case (the seed and α are chosen for it)
    assert cards["Runs failing at α"] == f"{k}/{R}"
    pct = lambda p: f"{100 * p:.{max(0, 1 - math.floor(math.log10(100 * p)))}f}%" if p > 0 else "0%"  # noqa: E731
    # the card and the verdict say the interval the same way (issue 22: one reading of each number)
    assert cards["95% interval"] == f"{pct(lo)}–{pct(hi)}"
    assert any(f"between {pct(lo)} and {pct(hi)}" in _shown(w) for w in at.warning)
    means = runs.groupby("group")["W1"].mean()
    for _, row in summary.iterrows():
        assert abs(row["mean W1 over runs"] - means[row["group"]]) < 1e-9


def test_gaussian_release_is_not_given_the_pure_dp_theorem():
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_eps="0.3", coh_release=GAUSS, coh_tab=THEORY).run()
    _ok(at)
    texts = [m.value for m in at.markdown]
    assert any("not ε-DP" in t and "Theorem 8" in t and "comparison only" in t for t in texts)


def test_alpha_zero_is_said_to_be_shown_at_001_in_the_theory():
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_alpha="0.0", coh_tab=THEORY).run()
    _ok(at)
    assert any("at α = 0.00 they are shown at α = 0.01" in _shown(c) for c in at.caption)


@pytest.mark.parametrize("tab", [PREVIEW, RUNS, THEORY, SEC7])
def test_a_link_alpha_below_float_square_range_is_handled_on_every_tab(tab):
    """Issue 26: ?coh_alpha=1e-160 (off the slider's grid, accepted by it) crashed with an OverflowError; every tab
    now draws, and says the α it uses as it is (10⁻¹⁶⁰, not a rounded 0.00)."""
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_reps="5", coh_alpha="1e-160", coh_sec7="true",
              coh_tab=tab).run()
    _ok(at)
    if tab == RUNS:
        at.button(key="coh_run").click().run()
        _ok(at)
    shown = [_shown(x) for x in list(at.warning) + list(at.info) + list(at.caption) + list(at.markdown)]
    assert any("10⁻¹⁶⁰" in t for t in shown), shown
    assert not any("0.00 line" in t or "above 0.00" in t for t in shown)


def test_alpha_min_table_says_when_no_alpha_is_certified():
    """alpha_min is NaN when even α = 2 needs more members than the group has: the table says so (no blank).

    At n = 1,862, ε = 0.01, β = 0.05, |𝒞*| = 3, Theorem 7's γ at α = 2 is T3 = 16.6(ζ + ln(16·3/0.05)) ≈ 123
    members (spec §3.5): "Everyone" is certified for some α ≤ 2, the group of women aged 90+ is not.
    """
    link = '[{"name": "90+", "conditions": [{"column": "AGEP", "low": 90}, {"column": "SEX", "values": ["2"]}]}]'
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_gamma="2", coh_built=link, coh_tab=THEORY).run()
    _ok(at)
    t = next(d.value for d in at.dataframe if "smallest α certified (Thm 7)" in d.value.columns)
    shown = dict(zip(t["group"], t["smallest α certified (Thm 7)"]))
    sizes = dict(zip(t["group"], t["members"]))
    assert 2 <= sizes["90+"] < 100
    assert shown["90+"].startswith("none")
    assert 0 < float(shown["Everyone"]) <= 2


# ------------------------------------------------------------------ issue 14: plain words, guidance
CODE_NAME = re.compile(r"\b[a-z]+_[a-z0-9_]+\b|\bNone\b|\bnan\b")


def _screen_texts(at) -> list[str]:
    """Every text a user reads: Markdown, captions, boxes, metric labels and values, table headers and cells."""
    texts = [_shown(x) for x in list(at.markdown) + list(at.caption) + list(at.info) + list(at.warning)
             + list(at.success)]
    texts += [f"{m.label} {m.value}" for m in at.metric]
    for d in at.dataframe:
        frame = d.value.data if hasattr(d.value, "data") else d.value
        texts += [str(c) for c in frame.columns] + [str(v) for v in frame.astype(str).to_numpy().ravel()]
    return texts


def test_no_code_names_on_any_tab():
    at = _app(coh_n="2000", coh_reps="5", coh_learner="Decision tree", coh_sec7="true").run()
    seen = _screen_texts(at)
    for tab in (RUNS, THEORY, SEC7):
        open_tab(at, tab)
        if tab == RUNS:
            at.button(key="coh_run").click().run()
        _ok(at)
        seen += _screen_texts(at)
    bad = sorted({m.group(0) for t in seen for m in CODE_NAME.finditer(t)})
    assert not bad, bad


def test_guidance_for_tiny_groups_many_levels_and_a_control_that_does_nothing():
    link = ('[{"name": "Women 90+", "conditions": [{"column": "AGEP", "low": 90}, '
            '{"column": "SEX", "values": ["2"]}]}]')
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_gamma="2", coh_built=link).run()
    _ok(at)
    df = census_population(2000, rng=0)
    df = df[df["DREM"].notna()]
    size = int(((df["AGEP"] >= 90) & (df["SEX"] == 2)).sum())
    warns = [_shown(w) for w in at.warning]
    assert 2 <= size < 64
    # chance alone for a group of m members (spec §3.3, q = 1/2): 4·sqrt(1/(4m))·sqrt(2/π)
    chance = 4 * (0.25 / size) ** 0.5 * (2 / 3.141592653589793) ** 0.5
    assert any(w.startswith(f"Women 90+ has only {size} members") and f"W1 of about {chance:.2f}" in w
               and "raise γ to 64" in w for w in warns), warns
    # the group builder warns when "is one of" is offered on a column with dozens of values
    at.selectbox(key="coh_b_col").set_value("AGEP").run()
    levels = int(census_population(2000, rng=0)["AGEP"].nunique())
    assert any(f"AGEP has {levels} different values" in _shown(w) for w in at.warning)
    # soft output does nothing for 1-nearest neighbour: said, with the fix
    at.selectbox(key="coh_learner").set_value("nearest_neighbor").run()
    at.radio(key="coh_output").set_value("soft").run()
    assert any("same predictions" in i.value for i in at.info)


def test_upload_run_estimate_says_where_the_run_goes():
    at = _app(coh_source="upload", coh_learner="Decision tree", coh_tab=RUNS).run()
    _upload(at, _small_upload())
    _ok(at)
    assert any(c.value.startswith("Estimated time for 20 runs: ") and f"on this server's {CORES} cores (" in c.value
               for c in at.caption)
    # after a run the estimate of the same settings is the measured one (calibrated on this server, issue 25)
    at.button(key="coh_run").click().run()
    _ok(at)
    at.run()
    assert any("measured on the last run of these settings" in c.value for c in at.caption)
    # other settings: the cost model, corrected by what the finished run took against it (no "first run" caveat)
    at.number_input(key="coh_seed").set_value(5).run()
    _ok(at)
    est = next(c.value for c in at.caption if c.value.startswith("Estimated time for 20 runs"))
    assert "from the preview's time" in est and "a first run also starts" not in est


def test_sweep_shows_a_run_time_estimate_for_all_its_runs():
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_reps="5", coh_release=DP, coh_tab=SWEEP).run()
    _ok(at)
    assert any(c.value.startswith("Estimated time for 30 runs (6 ε × 5): ") for c in at.caption)


def _label_upload(label_values) -> bytes:
    rows = ["height,smoker,label,region"]
    for i in range(90):
        rows.append(f"{150 + i % 40},{'yes' if i % 4 == 0 else 'no'},{label_values[i % len(label_values)]},r{i % 3}")
    return ("\n".join(rows) + "\n").encode()


def test_a_column_named_label_is_the_default_label():
    at = _app(coh_source="upload", coh_learner="Decision tree").run()
    _upload(at, _label_upload(["yes", "no", "maybe"]))
    _ok(at)
    assert at.selectbox(key="coh_label").value == "label"
    assert "label" not in at.multiselect(key="coh_lens").value


def test_a_constant_label_column_is_refused_with_what_is_expected():
    at = _app(coh_source="upload", coh_learner="Decision tree").run()
    _upload(at, _label_upload(["yes"]))
    _ok(at)
    warned = [_shown(w) for w in at.warning if "cannot be the label" in _shown(w)]
    assert warned and "'label'" in warned[0] and "2 to 20 different values" in warned[0]
    assert at.selectbox(key="coh_label").value != "label"


def test_the_uploaded_file_survives_a_trip_to_another_data_source():
    at = _app(coh_source="upload", coh_learner="Decision tree").run()
    _upload(at, _label_upload(["yes", "no", "maybe"]))
    _ok(at)
    at.radio(key="coh_source").set_value("synthetic").run()
    _ok(at)
    assert at.selectbox(key="coh_label").value == "DREM"
    at.radio(key="coh_source").set_value("upload").run()
    _ok(at)
    assert at.selectbox(key="coh_label").value == "label"
    assert any("uploaded earlier in this session (90 rows" in c.value for c in at.caption)
    at.slider(key="coh_alpha").set_value(0.5).run()  # a rerun with the uploader empty keeps the file
    _ok(at)
    assert at.selectbox(key="coh_label").value == "label"


def test_adult_default_lens_leaves_out_fnlwgt_and_split():
    at = _app(coh_source="shared", dataset="adult", coh_learner="Decision tree").run()
    _ok(at)
    lens = list(at.multiselect(key="coh_lens").value)
    assert at.selectbox(key="coh_label").value == "income"
    assert "fnlwgt" not in lens and "split" not in lens and "age" in lens
    assert any("Left out of the default lens" in c.value and "fnlwgt" in c.value and "split" in c.value
               for c in at.sidebar.caption)


def test_shared_dataset_picker_only_when_the_page_reads_it():
    at = _app(coh_n="2000", coh_learner="Decision tree").run()
    _ok(at)
    assert "dataset" not in [s.key for s in at.sidebar.selectbox]
    assert any("works on its own data" in c.value for c in at.sidebar.caption)
    at.radio(key="coh_source").set_value("shared").run()
    _ok(at)
    assert "dataset" in [s.key for s in at.sidebar.selectbox]


def test_report_and_script_from_the_runs_tab(monkeypatch):
    """Issue 15: the runs tab ends in a report whose summary holds the verdict and the headline card as shown, and
    the script. (Rendering the report itself is ui.dossier's test; here its input is captured.)"""
    from ui import dossier

    summaries = []
    monkeypatch.setattr(dossier, "build_report", lambda summary, link: summaries.append(summary) or b"report")
    with capture_downloads() as dl:
        at = _app(coh_n="2000", coh_reps="5", coh_learner="Decision tree", coh_tab=RUNS).run()
        at.button(key="coh_run").click().run()
        _ok(at)
        # only these two are built (dl.files() would also render every figure to PNG and SVG)
        files = {name: dl.entries[name]() for name in ("coherence_explorer_report.html",
                                                      "coherence_explorer_coh_art_runs.py")}
    assert files["coherence_explorer_report.html"] == b"report"
    summary = summaries[-1]
    assert summary.verdicts[0] == _shown(_first(at.tabs[1]))
    # the report's other lines are the view's sections: per-group means as the table shows them
    assert any(v.startswith("Mean W1, Everyone: ") for v in summary.verdicts[1:])
    card = next(m.value for m in at.metric if m.label == "Runs failing at α")
    assert (summary.headlines[0].label, summary.headlines[0].value) == ("Runs failing at α", card)
    assert summary.seed == 0 and summary.epsilon is None  # a clear release makes no privacy promise
    assert len(summary.figures) == 2 and all(alt for alt, _ in summary.figures)
    script = files["coherence_explorer_coh_art_runs.py"]
    script = script.decode() if isinstance(script, bytes) else script
    assert script == summary.script
    assert "co.run_experiment(df, config, n_jobs=1)" in script and "census_population(2000, rng=0)" in script


def test_copy_as_code_on_the_sweep_theory_and_section7_tabs():
    """Issue 15 item 2: each results tab ends in "Copy as code" once it shows results, with the script of that tab
    (what the scripts print is tests/engine/coherence/test_script_coherence.py's business)."""
    def copy_as_code(at):
        return [c.value for e in at.expander if e.label == "Copy as code" for c in e.code]

    at = _app(coh_n="2000", coh_reps="5", coh_learner="Decision tree", coh_release=DP, coh_tab=SWEEP).run()
    _ok(at)
    assert copy_as_code(at) == []  # no result yet, no script
    at.button(key="coh_sweep_run").click().run()
    _ok(at)
    [code] = copy_as_code(at)
    assert "co.run_epsilon_sweep(df, config, EPSILONS, n_jobs=1)" in code and "R = 2  #" in code and "set R = 5" in code
    assert "wasserstein_distance" in code and "census_population(2000, rng=0)" in code
    assert any("recomputes the first 2 of the 5 runs at each ε" in c.value for c in at.tabs[2].caption)
    at.slider(key="coh_n").set_value(3000).run()  # other data: the stored chart stays, a script would not match it
    _ok(at)
    assert any("Settings changed" in w.value for w in at.warning) and copy_as_code(at) == []

    open_tab(at, THEORY)
    _ok(at)
    [code] = copy_as_code(at)
    assert "theory_numbers(" in code and "EPSILON = 1.0" in code and "brentq" in code

    at.query_params["coh_sec7"] = "true"
    open_tab(at, SEC7)
    _ok(at)
    [code] = copy_as_code(at)
    assert "section7_result(" in code and "REPS = 1000" in code and "CURATOR = 'column'" in code


# ------------------------------------------------------------------ the Groups control's link (issue 14 item 4)
def _notice(at: AppTest) -> str:
    return " ".join(t.value for t in at.toast)


def _one(value):
    return value[-1] if isinstance(value, list) else value


def _group_sizes(at: AppTest) -> dict[str, int]:
    table = at.dataframe[0].value
    return dict(zip(table["group"], table["members"].astype(int)))


def test_group_link_uses_short_tokens_and_restores_the_groups():
    at = _app(coh_n="2000", coh_seed="3", coh_learner="Decision tree", coh_groups="age65,everyone,women").run()
    _ok(at)
    assert not _notice(at)
    assert at.multiselect(key="coh_groups").value == ["age65", "everyone", "women"]   # the link's order
    # sizes counted here with pandas on the same generated population (not the page's masks)
    d = census_population(2000, rng=3)
    d = d[d["DREM"].notna()]
    assert _group_sizes(at) == {"Age 65+": int((d["AGEP"] >= 65).sum()), "Everyone": len(d),
                                "Women (SEX = 2)": int((d["SEX"] == 2).sum())}
    assert _one(at.query_params["coh_groups"]) == "age65,everyone,women"
    # choosing writes tokens, not display labels
    at.multiselect(key="coh_groups").set_value(["black", "hispanic"]).run()
    _ok(at)
    assert _one(at.query_params["coh_groups"]) == "black,hispanic"
    assert list(_group_sizes(at)) == ["Black (RAC1P = 2)", "Hispanic (HISP ≥ 1)"]


def test_older_group_links_with_display_labels_still_work():
    # Streamlit's own binding wrote one parameter per chosen group, with its display label
    at = _app(coh_n="2000", coh_learner="Decision tree",
              coh_groups=["Everyone", "Has the sensitive attribute", "Men 18–24"]).run()
    _ok(at)
    assert not _notice(at)
    assert at.multiselect(key="coh_groups").value == ["everyone", "sensitive", "men18_24"]
    assert list(_group_sizes(at)) == ["Everyone", "DREM = 1", "Men 18–24"]
    assert _one(at.query_params["coh_groups"]) == "everyone,sensitive,men18_24"   # rewritten as tokens


def test_unknown_groups_in_a_link_are_named_and_the_rest_kept():
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_groups="women,martians,sensitive",
              coh_alpha="0.45").run()
    _ok(at)
    assert "**coh\\_groups** (“martians” is not an option; the other items were used)" in _notice(at), _notice(at)
    assert at.multiselect(key="coh_groups").value == ["women", "sensitive"]
    assert at.slider(key="coh_alpha").value == pytest.approx(0.45)   # the rest of the link applies
    # nothing known: the default groups, and the notice says so
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_groups="martians").run()
    _ok(at)
    assert "(“martians” is not an option; the default is used)" in _notice(at), _notice(at)
    assert at.multiselect(key="coh_groups").value == ["everyone", "sensitive"]


def test_census_presets_in_a_link_are_named_when_the_data_lacks_them():
    # an upload without the census columns offers only Everyone and the sensitive group
    at = _app(coh_source="upload", coh_learner="Decision tree", coh_groups="everyone,women,age65").run()
    _upload(at, _small_upload())
    _ok(at)
    assert list(at.multiselect(key="coh_groups").options) == ["Everyone", "Has the sensitive attribute"]
    assert "**coh\\_groups** (“women”, “age65” are not options; the other items were used)" in _notice(at), \
        _notice(at)
    assert at.multiselect(key="coh_groups").value == ["everyone"]
    assert list(_group_sizes(at)) == ["Everyone"]


def test_default_groups_write_nothing_to_the_link():
    at = _app(coh_n="2000", coh_learner="Decision tree").run()
    _ok(at)
    assert at.multiselect(key="coh_groups").value == ["everyone", "sensitive"]
    assert "coh_groups" not in dict(at.query_params)
    at.multiselect(key="coh_groups").set_value(["everyone"]).run()
    assert _one(at.query_params["coh_groups"]) == "everyone"
    at.multiselect(key="coh_groups").set_value([]).run()   # an empty choice is kept as an empty value
    assert _one(at.query_params["coh_groups"]) == ""
    at.multiselect(key="coh_groups").set_value(["everyone", "sensitive"]).run()
    _ok(at)
    assert "coh_groups" not in dict(at.query_params)
    # a link that spells out the default is read, and the control then leaves the link short
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_groups="everyone,sensitive").run()
    _ok(at)
    assert not _notice(at) and "coh_groups" not in dict(at.query_params)


def _many_valued_upload(n=3000) -> bytes:
    rng = __import__("numpy").random.default_rng(8)
    rows = ["zone,age,income,label"]
    for i in range(n):
        rows.append(f"z{rng.integers(0, 2000)},{rng.integers(18, 90)},{rng.normal(3e4, 1e4):.2f},"
                    f"{'yes' if rng.random() < 0.15 else 'no'}")
    return ("\n".join(rows) + "\n").encode()


def test_a_run_whose_models_would_not_fit_in_memory_is_refused_before_anything_is_fitted(monkeypatch):
    """Issue 26: the learner's trees are measured on one probe tree first; over the budget, the page says what it
    would take and what to change, and fits nothing (no preview, Run disabled)."""
    from dpdash.coherence import inputs as ci

    monkeypatch.setattr(ci, "MODEL_BUDGET_BYTES", 2**20)  # 1 MB: a 50-tree forest on 1,500 rows is more
    at = _app(coh_source="upload", coh_tab=RUNS).run()
    _upload(at, _many_valued_upload())
    _ok(at)
    warned = [_shown(w) for w in at.warning if "memory" in _shown(w)]
    assert warned and "more than the 1 MB this server allows per run" in warned[0]
    assert re.search(r"zone \(1,[0-9]{3} values\)", warned[0]) and "trees (Advanced)" in warned[0]
    assert not _charts(at)  # nothing was fitted or drawn
    at.slider(key="coh_trees").set_value(10).run()  # the advice works: fewer trees...
    at.selectbox(key="coh_learner").set_value("logistic").run()  # ...or a learner without trees
    _ok(at)
    assert not [w for w in at.warning if "memory" in _shown(w)]
    assert not at.button(key="coh_run").disabled


def test_an_upload_is_read_once_and_reruns_reuse_it():
    """Issue 26: reruns do not parse the file again nor copy the prepared data (kept per session)."""
    at = _app(coh_source="upload", coh_learner="Decision tree").run()
    _upload(at, _many_valued_upload(400))
    _ok(at)
    kept = at.session_state["_coh_upload_kept"]
    at.slider(key="coh_alpha").set_value(0.5).run()
    at.number_input(key="coh_gamma").set_value(30.0).run()
    _ok(at)
    assert at.session_state["_coh_upload_kept"] is kept and kept[1].frame.shape == (400, 4)


def test_gamma_in_percent_is_said_as_the_members_a_group_needs():
    """A fractional γ (from "% of n") is a size to reach: the summary says the rounded-up size the table keeps."""
    at = _app(coh_n="2000", coh_learner="Decision tree", coh_gamma_mode="percent", coh_gamma="5.11").run()
    _ok(at)
    label = next(e.label for e in at.expander if e.label.startswith("Data and groups"))
    n = int(re.search(r"Data and groups: ([\d,]+) labelled rows", label).group(1).replace(",", ""))
    g = 5.11 / 100 * n
    assert g != round(g) and f"at least γ = {math.ceil(g):,} members" in label


# ------------------------------------------------------------------ issue 31: files as users write them
@pytest.mark.parametrize("name", ["r-write-csv", "pandas-to-csv-index", "excel-bom-semicolon-crlf", "latin1"])
def test_user_files_get_a_lens_without_row_labels(name):
    """R's write.csv rownames stayed in the default lens (Arrests: W1 1.92 "this release exposes them", 0.78 without
    them); pandas' unnamed index was refused ("Column 1 has no name")."""
    from tests.attack.corpus import user_files

    data, want = user_files()[name]
    at = _app(coh_source="upload", coh_learner="Decision tree").run()
    _upload(at, data, f"{name}.csv")
    _ok(at)
    lens = list(at.multiselect(key="coh_lens").value)
    label = at.selectbox(key="coh_label").value
    assert label in want["columns"] and lens and set(lens) <= set(want["columns"]) - {label}
    assert "rownames" not in lens and not any("no name" in c for c in lens)
    said = any("row label" in c.value and "left out" in c.value for c in at.caption)
    assert said is bool(want["row_labels"])


def test_missing_word_control_reads_region_codes_as_values_or_missing_and_is_in_the_link():
    from tests.attack.corpus import user_files

    data, _ = user_files()["notepad-utf8-bom"]
    at = _app(coh_source="upload", coh_learner="Decision tree").run()
    _upload(at, data, "regions.csv")
    _ok(at)
    kept = at.session_state["_coh_upload_kept"][1].frame
    assert sorted(kept["region"].unique()) == ["N", "NA", "None", "S"]  # North, Namibia, "no" are values
    at.checkbox(key="coh_na_missing").check().run()
    _ok(at)
    kept = at.session_state["_coh_upload_kept"][1].frame
    assert int(kept["region"].isna().sum()) == 30  # N, NA, None now missing; blank was missing already
    linked = _app(coh_source="upload", coh_learner="Decision tree", coh_na_missing="true").run()
    assert linked.checkbox(key="coh_na_missing").value is True  # the link carries the choice
    _upload(linked, data, "regions.csv")
    assert int(linked.session_state["_coh_upload_kept"][1].frame["region"].isna().sum()) == 30


def test_detour_through_an_empty_upload_keeps_each_sources_choices():
    """Issue 31: Data → Upload (no file) → Synthetic emptied Groups (coh_groups=) and every tab said "Choose at least
    one group"; returning to an upload restored the file but reset label and lens."""
    at = _app(coh_n="2000", coh_learner="Decision tree").run()
    at.multiselect(key="coh_groups").set_value(["everyone", "age65"]).run()
    at.multiselect(key="coh_lens").set_value(["AGEP", "SEX", "EDU"]).run()
    at.radio(key="coh_source").set_value("upload").run()
    _ok(at)
    at.radio(key="coh_source").set_value("synthetic").run()
    _ok(at)
    assert list(at.multiselect(key="coh_groups").value) == ["everyone", "age65"]
    assert list(at.multiselect(key="coh_lens").value) == ["AGEP", "SEX", "EDU"]
    at.radio(key="coh_source").set_value("upload").run()
    _upload(at, _small_upload())
    at.selectbox(key="coh_label").set_value("region").run()
    at.multiselect(key="coh_lens").set_value(["height"]).run()
    at.radio(key="coh_source").set_value("synthetic").run()
    assert list(at.multiselect(key="coh_groups").value) == ["everyone", "age65"]
    at.radio(key="coh_source").set_value("upload").run()
    _ok(at)
    assert at.selectbox(key="coh_label").value == "region" and list(at.multiselect(key="coh_lens").value) == ["height"]


@pytest.mark.parametrize("tab, button", [(RUNS, "coh_run"), (SWEEP, "coh_sweep_run")])
def test_an_error_that_blocks_a_run_is_shown_where_the_run_button_is(tab, button, monkeypatch):
    """Issue 31: a run refused by the learner left a disabled (or failing) button with the reason only in the preview
    tab. The preview is made to refuse here (the page's own preview function, replaced for this test)."""
    from ui.views import coherence_common as cc

    monkeypatch.setattr(cc, "preview", lambda *a, **k: (None, "the learner refuses these columns", 0.0, 0.0))
    at = _app(coh_n="2000", coh_reps="5", coh_learner="Decision tree", coh_release=DP, coh_tab=tab).run()
    assert not at.exception
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]
    assert any("cannot be run" in w and "the learner refuses these columns" in w for w in shown), shown
    assert at.button(key=button).disabled
