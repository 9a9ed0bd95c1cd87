"""AppTest for pages/leximax_cohort_picker.py: defaults, controls, uploads, infeasible quotas."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "leximax_cohort_picker.py")
TAB_B = "Finite-set explorer"
TAB_C = "Citizens' assembly (quotas)"


def app(**params) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def metric(at, label):
    """A card's value by its label (labels reach Markdown escaped, ui.show.cards)."""
    return next(m.value for m in at.metric if m.label.replace("\\", "") == label)


def plain(msgs) -> str:
    """Messages' text with Markdown escapes removed (user text reaches Markdown escaped, ui.text.md_escape)."""
    return " ".join(m.value for m in msgs).replace("\\", "")


def boxes(at) -> str:
    """Every verdict box's text (good news green, information blue, warnings orange)."""
    return " ".join(plain(x) for x in (at.success, at.info, at.warning))


def texts(at):
    return " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)


def test_defaults_render_lx1():
    at = app()
    assert not at.exception and not at.error
    assert metric(at, "Worst-off group can expect") == "1.033"           # 31/30, spec LX1 k = 3
    assert metric(at, "Check (paper's Algorithm 2)") == "✓ verified"
    assert "chances add up to 3 (k = 3)" in texts(at)
    assert len(at.get("plotly_chart")) == 3                                 # drawn per k move: 3 charts
    assert "seed 0" in boxes(at)
    # the verdict comes first: worst-off groups and uniform selection (0.65 = G2's column sum 1.3 × 3/6)
    verdict = plain(at.success[:1])
    assert "G2 and G3, can each expect 1.033 in total value" in verdict  # the card's number, 31/30
    assert "the worst-off group (G2) 0.65" in verdict
    assert "(c3 and c4) can never be selected" in plain(at.warning)


def test_k_and_mode_change_output():
    at = app()
    at.slider(key="lx_k").set_value(1).run()
    assert not at.exception
    assert metric(at, "Worst-off group can expect") == "0.3636"           # 4/11, LX1 k = 1
    at.slider(key="lx_k").set_value(3).run()
    at.radio(key="lx_mode").set_value("slack").run()
    assert not at.exception
    # ε = 0.05: γ*_1 = 31/30 still, but the profile changes (C_1 lowered by ε): the worst group is below 31/30
    assert metric(at, "Worst-off group can expect") != "1.033"
    at.radio(key="lx_mode").set_value("custom").run()
    at.text_input(key="lx_alpha").set_value("0.1,0.1,0.1,0.1").run()
    assert not at.exception and not at.error
    at.text_input(key="lx_alpha").set_value("0.1,x").run()
    assert "Custom slack needs 4" in plain(at.warning) and not at.exception


def test_sampler_draws_seed_delta_solver_change_output():
    at = app()
    before = texts(at)
    at.selectbox(key="lx_sampler").set_value("independent").run()
    assert "k members on average" in boxes(at)
    assert not at.exception and texts(at) != before
    before = texts(at)
    at.select_slider(key="lx_draws").set_value(2_000).run()
    assert not at.exception and texts(at) != before
    before = texts(at)
    at.number_input(key="lx_seed").set_value(5).run()
    assert not at.exception and "seed 5" in boxes(at) and texts(at) != before
    before = texts(at)
    at.select_slider(key="lx_delta").set_value(0.5).run()
    assert not at.exception and texts(at) != before
    at.selectbox(key="lx_solver").set_value("cvxpy").run()
    assert not at.exception and metric(at, "Worst-off group can expect") == "1.033"
    before = [m.value for m in at.metric]
    at.radio(key="lx_mode").set_value("slack").run()
    at.select_slider(key="lx_eps").set_value(0.2).run()
    assert not at.exception and [m.value for m in at.metric] != before


def test_presets_and_random_pool():
    at = app()
    at.selectbox(key="lx_preset").set_value("arbitration").run()
    assert not at.exception
    assert at.slider(key="lx_k").value == 1
    assert metric(at, "Worst-off group can expect") == "0.5"
    at.selectbox(key="lx_source").set_value("random").run()
    assert not at.exception and not at.error
    v1 = metric(at, "Worst-off group can expect")
    at.number_input(key="lx_pool_seed").set_value(3).run()
    assert metric(at, "Worst-off group can expect") != v1
    at.slider(key="lx_m").set_value(6).run()
    at.slider(key="lx_n").set_value(40).run()
    assert not at.exception
    at.selectbox(key="lx_grid").set_value("0.01").run()
    assert not at.exception


def test_volunteer_preset_needs_solve_button():
    at = app(lx_preset="volunteers")
    assert not at.exception
    assert not at.metric                                   # 500 × 21 > 5,000: behind the Solve button
    at.button(key="lx_solve_btn").click().run()
    assert not at.exception
    assert "chances add up to 40 (k = 40)" in texts(at) and metric(at, "Worst-off group can expect")


def test_crosscheck_and_draw_buttons():
    at = app()
    at.button(key="lx_crosscheck").click().run()
    assert any("agrees" in s.value for s in at.success)
    at.button(key="lx_draw").click().run()
    assert any("seed **0**" in s.value for s in at.success)
    at.button(key="lx_draw").click().run()
    assert any("seed **1**" in s.value for s in at.success)
    assert not at.exception


def test_deep_link_restores_state():
    at = app(lx_k="2", lx_mode="exact", lx_seed="9")
    assert at.slider(key="lx_k").value == 2
    assert metric(at, "Worst-off group can expect") == "0.7222"           # 13/18, LX1 k = 2
    assert "seed 9" in boxes(at)


def frame_with(at, column):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _upload(at, key, data: bytes, name="x.csv"):
    up = next(u for u in at.get("file_uploader") if u.key == key) if hasattr(at, "get") else None
    up.set_value((name, data, "text/csv"))
    return at.run()


def test_values_csv_upload_good_and_bad():
    at = app(lx_source="values")
    assert not at.exception and any("Upload a CSV" in i.value for i in at.info)
    good = b"name,North,South\nann,0.5,0.1\nbob,0.2,0.9\ncid,0.7,0.4\n"
    _upload(at, "lx_values_csv", good)
    assert not at.exception and not at.error
    assert at.metric
    bad = b"name,North,South\nann,0.5,1.7\nbob,0.2,0.9\n"
    _upload(at, "lx_values_csv", bad)
    assert not at.exception
    assert any("rescale by the maximum" in e.value for e in at.error)
    text = b"name,North\nann,high\nbob,low\n"
    _upload(at, "lx_values_csv", text)
    assert any("not numeric" in e.value for e in at.error)
    binary = b"PK\x03\x04\x00\x00binary"
    _upload(at, "lx_values_csv", binary)
    assert any("binary file" in e.value for e in at.error) and not at.exception


def test_attributes_csv_upload():
    at = app(lx_source="attributes")
    data = b"id,gender,age\nc1,F,young\nc2,F,old\nc3,M,young\nc4,M,old\nc5,M,old\nc6,F,old\n"
    _upload(at, "lx_attr_csv", data)
    assert not at.exception and not at.error
    at.slider(key="lx_k").set_value(2).run()
    assert metric(at, "Worst-off group can expect") == "1"                 # LX8 membership: y = (1,1,1,1)
    at.selectbox(key="lx_rule").set_value("share").run()
    assert not at.exception
    at.text_input(key="lx_intersections").set_value("gender=F & age").run()
    assert "column=value" in plain(at.error)


def test_finite_set_tab():
    at = app(lx_tab=TAB_B)
    assert not at.exception and not at.error
    tab = frame_with(at, "ε-significant")
    assert list(tab["ε-significant"]) == [False, False, False, False, True]   # LX6
    at.selectbox(key="lx_fs_preset").set_value("ex13").run()
    assert not at.exception
    assert at.select_slider(key="lx_fs_eps").value == pytest.approx(0.01)
    assert "S1 is leximax" in boxes(at) and "leaves out the exact leximax" in boxes(at)
    tab = frame_with(at, "ε-significant")
    assert list(tab["ε-significant"]) == [False, True]
    at.select_slider(key="lx_fs_eps").set_value(0.001).run()    # ε below S1's lead 0.01: S1 only
    assert list(frame_with(at, "ε-significant")["ε-significant"]) == [True, False]
    at.selectbox(key="lx_fs_preset").set_value("ex17").run()
    assert not at.exception and not at.error
    assert frame_with(at, "(ε−2δ, ε+2δ)-significant (true)")["(ε−2δ, ε+2δ)-significant (true)"].all()


def test_quota_tab_tiny_and_draw():
    at = app(lx_tab=TAB_C)
    assert not at.exception and not at.error
    assert metric(at, "Smallest chance") == "25%"
    assert metric(at, "Inequality (Gini)") == "0.1875"
    assert "at least a 25% chance of a seat (equal chances would be k/n = 33%)" in plain(at.success)
    assert at.slider(key="lx_q_time").disabled                     # 12 people: solved at once, no limit
    at.button(key="lx_q_draw").click().run()
    assert not at.exception
    assert any("seed **0**" in s.value for s in at.success)
    assert all(v == "✓" for v in frame_with(at, "met")["met"])
    at.selectbox(key="lx_q_colour").set_value("age").run()
    assert not at.exception


def test_quota_tab_infeasible_message():
    at = app(lx_tab=TAB_C, lx_q_k="6")
    assert not at.exception
    err = plain(at.warning)
    assert "cannot all be met" in err and not at.error
    assert "The minimums for gender add up to 4" not in err
    assert any("Smallest change" in m.value for m in at.markdown)


def test_quota_uploads_bad_quota_file():
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    assert not at.exception
    pool = b"person_id,gender\nP1,F\nP2,M\nP3,F\nP4,M\n"
    _upload(at, "lx_q_pool_csv", pool)
    _upload(at, "lx_q_quota_csv", b"a,b\n1,2\n3,4\n")
    assert "feature, value, min, max" in plain(at.error)
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\ngender,F,1,2\ngender,M,1,2\n")
    at.number_input(key="lx_q_k").set_value(2).run()
    assert not at.exception and not at.error
    assert metric(at, "Smallest chance") == "50%"
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\ngender,F,1,2\n")
    assert "'gender' has pool value 'M' with no quota row" in plain(at.error)
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\ngender,F,3,4\ngender,M,0,2\n")
    assert "Quota needs at least 3 'F' (gender) but the pool has only 2." in plain(at.warning)
    assert not at.exception


def test_quota_tab_volunteer_needs_button():
    at = app(lx_tab=TAB_C, lx_q_source="volunteers")
    assert not at.exception and not at.error
    assert at.number_input(key="lx_q_k").value == 40
    assert any("Compute leximin" in i.value for i in at.info)


@pytest.mark.slow
def test_quota_tab_volunteer_compute_with_time_limit():
    at = app(lx_tab=TAB_C, lx_q_source="volunteers", lx_q_time="10")
    at.button(key="lx_q_run").click()
    at.run(timeout=120)
    assert not at.exception
    assert any(m.label.replace("\\", "") == "Smallest chance" for m in at.metric)
    assert metric(at, "Equal share k/n") == "8.0%"


def test_finite_set_noise_delta_too_small():
    at = app(lx_tab=TAB_B, lx_fs_preset="ex17")
    at.checkbox(key="lx_fs_noisy").check().run()
    at.checkbox(key="lx_fs_delta_auto").uncheck().run()
    at.select_slider(key="lx_fs_delta").set_value(0.0001).run()
    assert not at.exception
    assert "differ from the true ones by up to 0.0002, more than δ = 0.0001" in plain(at.warning)
    assert not at.error


def _pool_60() -> bytes:
    """60 volunteers (over the 50-person auto-run bound), two features, so the Compute button is needed."""
    rows = ["person_id,gender,age"]
    for i in range(60):
        rows.append(f"P{i:02d},{'FM'[i % 2]},{('young', 'old')[(i // 2) % 3 == 0]}")
    return ("\n".join(rows) + "\n").encode()


QUOTAS_60 = b"feature,value,min,max\ngender,F,3,3\ngender,M,3,3\nage,young,2,4\nage,old,2,4\n"


def _quota_upload_app():
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", _pool_60())
    _upload(at, "lx_q_quota_csv", QUOTAS_60)
    at.number_input(key="lx_q_k").set_value(6).run()
    assert not at.exception and not at.error
    return at


def test_compute_leximin_twice_and_in_a_new_session_same_result():
    """Issue 12 ex. 4: the second press (cache hit) replayed a progress bar made outside the cached solver."""
    at = _quota_upload_app()
    at.button(key="lx_q_run").click().run()
    assert not at.exception and not at.error
    first = metric(at, "Smallest chance")
    at.button(key="lx_q_run").click().run()
    assert not at.exception and not at.error
    assert metric(at, "Smallest chance") == first
    other = _quota_upload_app()                      # a new browser: new session, same process-wide cache
    other.button(key="lx_q_run").click().run()
    assert not other.exception and not other.error
    assert metric(other, "Smallest chance") == first
    # independent check: 36 young (18 F, 18 M) and 24 old (12 F, 12 M) people; k = 6 with 3 F, 3 M and 2–4
    # of each age. Each gender's 3 seats can be split so every person of a gender gets the same chance: 3/30.
    assert first == "10%"                                            # 3/30


UPLOADS = [({"lx_source": "values"}, "lx_values_csv"), ({"lx_source": "attributes"}, "lx_attr_csv"),
           ({"lx_tab": TAB_C, "lx_q_source": "upload"}, "lx_q_pool_csv"),
           ({"lx_tab": TAB_C, "lx_q_source": "upload"}, "lx_q_quota_csv")]


@pytest.mark.parametrize("params,key", UPLOADS, ids=[k for _p, k in UPLOADS])
@pytest.mark.parametrize("data,expect", [
    (b"id,a,b\nc1,0.1,0.2\nc2,0.3\nc3,0.5,0.6\n", "line 3 has 2 values but the header has 3 columns"),
    (b"id,a,b\nc1,0.1,0.2\nc2,0.3,0.4,0.9\nc3,0.5,0.6\n", "line 3 has 4 values but the header has 3 columns"),
])
def test_every_upload_refuses_a_ragged_csv(params, key, data, expect):
    """Issue 12 deliver 4: every upload widget refuses a ragged CSV with a message saying what is wrong."""
    at = app(**params)
    _upload(at, key, data)
    assert not at.exception
    assert expect in plain(at.error) and "Expected every row to have one value per column" in plain(at.error)


def test_uploaded_names_reach_messages_escaped():
    """Issue 17: an uploaded column name is text, never Markdown (no image fetched, no link)."""
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", b"person_id,gender\nP1,F\nP2,M\nP3,F\nP4,M\n")
    at.number_input(key="lx_q_k").set_value(2).run()
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\n![x](http://evil.example/p),F,1,2\n")
    assert not at.exception
    msgs = " ".join(e.value for e in at.error)
    assert "evil.example" in plain(at.error) and "![x](http" not in msgs and "\\!\\[x\\]\\(http" in msgs


def test_id_column_that_is_also_a_quota_feature_gets_a_clear_message():
    """Issue 12: one column chosen for two roles (id and quota feature) is named, not a traceback."""
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", b"gender,person_id\nF,P1\nM,P2\nF,P3\nM,P4\n")
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\ngender,F,1,2\ngender,M,1,2\n")
    assert at.selectbox(key="lx_q_id").value == "person_id"       # default: the first column with unique values
    at.selectbox(key="lx_q_id").set_value("gender").run()
    assert "is also a quota feature" in plain(at.warning) and not at.exception
    at.selectbox(key="lx_q_id").set_value("person_id").run()
    at.number_input(key="lx_q_k").set_value(2).run()
    assert not at.exception and not at.error
    assert metric(at, "Smallest chance") == "50%"


def test_numeric_codes_in_respondents_and_quotas_match():
    """Categories written as numbers (age band 1, 2) are read as text in both files (as_text), so they match."""
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", b"person_id,band\nP1,1\nP2,2\nP3,1\nP4,2\n")
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\nband,1,1,1\nband,2,1,1\n")
    at.number_input(key="lx_q_k").set_value(2).run()
    assert not at.exception and not at.error
    assert metric(at, "Smallest chance") == "50%"              # one of two people per band: 1/2 each


def _roundtrip(files: dict[str, bytes]) -> None:
    """Each CSV reads back with pandas defaults and through the product's own reader, with the same shape."""
    import io

    from dpdash.common.data import read_uploaded_csv

    assert files
    for name, data in files.items():
        df = pd.read_csv(io.BytesIO(data))
        assert len(df) >= 1, name
        # the Strat App's multiple-selection lottery has one column per panel (1,000): no uploader of ours takes
        # it, so the product's reader reads it with its column limit raised to the file's width
        wide = {"max_cols": 1_001} if name == "leximin_lottery_assemblies.csv" else {}
        ours = read_uploaded_csv(data, min_rows=1, min_cols=1, **wide).frame
        assert ours.shape == df.shape, name
        assert [str(c) for c in ours.columns] == [str(c) for c in df.columns], name
        assert not data.lstrip().startswith(b"#"), name                     # no comment lines


def test_every_csv_the_page_writes_reads_back():
    """Issue 12 deliver 4: cohort, levels, simulation, draw logs, membership, panel lottery, relaxation CSVs."""
    from tests.product.walk import capture_downloads

    seen = set()
    with capture_downloads() as dl:
        at = app()
        at.button(key="lx_draw").click().run()
        files = dl.files(".csv")
        assert {"leximax_chances.csv", "leximax_group_utilities.csv", "leximax_levels.csv",
                "leximax_simulation.csv", "leximax_draw_log.csv", "leximax_drawn_cohort.csv"} <= files.keys()
        _roundtrip(files)
        seen |= files.keys()
        dl.clear()
        at = app(lx_source="attributes")
        _upload(at, "lx_attr_csv", b'id,=HYPERLINK("http://x"),age\n=1+1,F,young\nc2,F,old\nc3,M,young\n'
                                   b"c4,M,old\nc5,M,old\nc6,F,old\n")
        assert not at.exception and not at.error
        files = dl.files(".csv")
        _roundtrip(files)
        assert not any(b"\n=" in d or d.startswith(b"=") or b",=" in d for d in files.values())
        dl.clear()
        at = app(lx_tab=TAB_B)
        files = dl.files(".csv")
        _roundtrip(files)
        seen |= files.keys()
        dl.clear()
        at = app(lx_tab=TAB_C)
        at.button(key="lx_q_draw").click().run()
        files = dl.files(".csv")
        _roundtrip(files)
        seen |= files.keys()
        dl.clear()
        at = app(lx_tab=TAB_C, lx_q_k="6")
        files = dl.files(".csv")
        _roundtrip(files)
        seen |= files.keys()
    assert {"leximax_membership.csv", "leximin_chances.csv", "leximin_drawn_panel.csv", "leximin_types.csv",
            "leximin_lottery.csv", "panel_draw_log.csv", "quota_relaxation.csv", "leximin_remaining.csv",
            "leximin_lottery_assemblies.csv"} <= seen


def test_k_and_eps_survive_a_change_of_their_range():
    """Issue 12 (found by the walk): the pool size n bounds k. Changing n made the k slider a new widget: it still
    showed 5 but the page computed with k = 1."""
    at = app(lx_source="random", lx_n="6", lx_m="2", lx_draws="1000")
    assert at.slider(key="lx_k").value == 5 and "chances add up to 5 (k = 5)" in texts(at)
    at.slider(key="lx_n").set_value(96).run()
    assert not at.exception
    assert at.slider(key="lx_k").value == 5 and "chances add up to 5 (k = 5)" in texts(at)
    at.radio(key="lx_mode").set_value("slack").run()
    at.select_slider(key="lx_eps").set_value(0.02).run()
    at.slider(key="lx_k").set_value(40).run()
    assert not at.exception
    assert "chances add up to 40 (k = 40)" in texts(at)
    assert at.select_slider(key="lx_eps").value == pytest.approx(0.02)


def test_eps_link_value_is_kept_and_disabled_outside_its_mode():
    at = app(lx_mode="slack", lx_eps="0.1")
    assert at.select_slider(key="lx_eps").value == pytest.approx(0.1) and not at.exception
    assert not at.select_slider(key="lx_eps").disabled and at.text_input(key="lx_alpha").disabled
    at = app(lx_eps="0.3")                                      # exact mode: ε kept but greyed out
    assert at.select_slider(key="lx_eps").value == pytest.approx(0.3) and at.select_slider(key="lx_eps").disabled


def test_slack_larger_than_the_worst_off_utility_is_flagged():
    at = app(lx_mode="slack", lx_eps="2")                      # LX1 k = 3: exact worst-off utility 31/30 < 2
    assert not at.exception and "guarantee for the worst-off group is empty" in plain(at.warning)


def test_volunteer_cohort_flags_groups_far_above_their_pool_share():
    at = app(lx_preset="volunteers")
    at.button(key="lx_solve_btn").click().run()
    assert not at.exception
    assert "of the pool but holds" in plain(at.warning) and "× its share" in plain(at.warning)


def test_drawn_cohort_lists_members_with_attributes():
    at = app(lx_preset="volunteers")
    at.button(key="lx_solve_btn").click().run()
    at.button(key="lx_draw").click().run()
    members = frame_with(at, "chance of selection")
    assert len(members) == 40 and {"candidate", "gender", "age"} <= set(members.columns)
    assert members["candidate"].is_unique


def test_copy_as_code_script_is_offered():
    at = app()
    code = [c.value for c in at.code]
    assert any("lx.leximax_marginals(V, k=k, alpha=alpha)" in c and "def saturation(V, k)" in c for c in code)
    assert not any("cvxpy_leximin" in c for c in code)          # issue 34: a test-only library; scipy only now
    at = app(lx_tab=TAB_C)
    assert any("lx.leximin_panels" in c.value for c in at.code)


def test_attribute_column_chosen_as_id_gets_a_clear_message():
    """Same-column choice: a category (repeated values) chosen as the id column."""
    at = app(lx_source="attributes")
    _upload(at, "lx_attr_csv", b"id,g\nc1,A\nc2,B\nc3,B\n")
    assert not at.exception and not at.error and metric(at, "Worst-off group can expect")
    at.selectbox(key="lx_attr_id").set_value("g").run()
    assert not at.exception and not at.error
    assert "repeats values, so it cannot identify candidates" in plain(at.warning)


def test_group_nobody_serves_is_named_and_k_corners():
    """A group with value 0 for everyone gets utility 0 whatever the choice: said in words; k = 1 and k = n."""
    at = app(lx_source="values")
    _upload(at, "lx_values_csv", b"id,a,b,z\nc1,0.5,0.1,0\nc2,0.2,0.9,0\nc3,0.7,0.4,0\n")
    assert "no cohort can serve them: z" in plain(at.info)
    for k in (1, 3):
        at.slider(key="lx_k").set_value(k).run()
        assert not at.exception and not at.error
        assert metric(at, "Worst-off group can expect") == "0" and f"chances add up to {k} (k = {k})" in texts(at)


def test_last_draw_is_not_presented_under_other_settings():
    """State integrity: a cohort or panel drawn under other settings stays in the log but is not shown (or
    quota-checked) as the current one."""
    at = app()
    at.button(key="lx_draw").click().run()
    assert any("seed **0**" in s.value for s in at.success)
    at.slider(key="lx_k").set_value(2).run()
    assert not any("Drawn with seed" in s.value for s in at.success)
    assert any("drawn with other settings" in c.value for c in at.caption)
    at = app(lx_tab=TAB_C)
    at.button(key="lx_q_draw").click().run()
    assert all(v == "✓" for v in frame_with(at, "met")["met"])
    at.number_input(key="lx_q_seed").set_value(1).run()
    assert not at.exception and not any("Panel drawn" in s.value for s in at.success)
    assert not any("met" in d.value.columns for d in at.dataframe)


def _editor_ids(at, prefix: str) -> list[str]:
    """Element ids of the data editors whose key starts with ``prefix`` (the id ends with the key)."""
    return [d.proto.id for d in at.dataframe if d.proto.editing_mode and prefix in d.proto.id]


def test_quota_editor_edits_do_not_carry_over_to_another_file():
    """Data-dependent state is re-derived when the data source changes: the quota editor of one file is not the
    editor of the next (its edits, stored per editor key, would land on the new file's rows)."""
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", b"person_id,gender\nP1,F\nP2,M\nP3,F\nP4,M\n")
    at.number_input(key="lx_q_k").set_value(2).run()
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\ngender,F,1,2\ngender,M,1,2\n")
    first = _editor_ids(at, "lx_q_editor")
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\ngender,F,0,2\ngender,M,0,2\n")
    second = _editor_ids(at, "lx_q_editor")
    assert not at.exception and not at.error
    assert len(first) == len(second) == 1 and first != second
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\ngender,F,1,2\ngender,M,1,2\n")
    assert _editor_ids(at, "lx_q_editor") == first             # same file, same editor (edits kept)


def test_attributes_id_default_is_a_unique_column():
    at = app(lx_source="attributes")
    _upload(at, "lx_attr_csv", b"gender,name,age\nF,c1,young\nF,c2,old\nM,c3,young\nM,c4,old\n")
    assert at.selectbox(key="lx_attr_id").value == "name"
    _upload(at, "lx_attr_csv", b"gender,age\nF,young\nF,old\nM,young\nM,old\n")
    assert at.selectbox(key="lx_attr_id").value == "(none)" and not at.exception and not at.error
    assert metric(at, "Worst-off group can expect")


def editors_show_no_none(at) -> int:
    """Every editable table sets the text of an empty cell (blank), so none shows "None" (issue 14 item 2:
    Streamlit prints "None" unless ``placeholder`` is given); returns how many editors it checked."""
    editors = [d for d in at.dataframe if d.proto.editing_mode != 0]  # 0: a read-only st.dataframe
    for d in editors:
        assert d.proto.HasField("placeholder") and d.proto.placeholder == "", list(d.value.columns)
    return len(editors)


def test_every_editor_shows_empty_cells_blank():
    at = app(lx_source="attributes")                                       # target shares (share rule)
    _upload(at, "lx_attr_csv", b"id,gender,age\nc1,F,young\nc2,F,old\nc3,M,young\nc4,M,old\n")
    at.selectbox(key="lx_rule").set_value("share").run()
    assert not at.exception and editors_show_no_none(at) == 1
    at = app(lx_tab=TAB_B, lx_fs_preset="ex17")                            # utilities and their noisy version
    assert not at.exception and editors_show_no_none(at) == 2
    at = app(lx_tab=TAB_C)                                                 # the quota table
    assert not at.exception and editors_show_no_none(at) == 1


SF = ROOT / "tests" / "data" / "sortition_foundation"


def test_strat_app_files_load_as_they_are_and_export_in_their_format():
    """Issue 24: the Strat App's quotas (category,name,min,max,min_flex,max_flex) and pool load unchanged."""
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", (SF / "candidates.csv").read_bytes(), name="candidates.csv")
    _upload(at, "lx_q_quota_csv", (SF / "categories.csv").read_bytes(), name="categories.csv")
    assert at.selectbox(key="lx_q_id").value == "nationbuilder_id"
    at.number_input(key="lx_q_k").set_value(22).run()
    assert not at.exception and not at.error, plain(at.error)
    assert "min_flex and max_flex" in texts(at)                        # the flex columns are kept and shown
    at.button(key="lx_q_run").click().run(timeout=240)
    assert not at.exception and not at.error, plain(at.error)
    smallest = metric(at, "Smallest chance")
    assert smallest == "9.1%"                                          # 1/11, the maximin value of this pool


def test_case_only_differences_are_reported_once_and_merged_on_request():
    pool = b"person_id,Gender\nP1,female\nP2,male\nP3,FEMALE\nP4,Male\n"
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", pool)
    _upload(at, "lx_q_quota_csv", b"category,name,min,max\ngender,Female,1,1\ngender,Male,1,1\n")
    at.number_input(key="lx_q_k").set_value(2).run()
    warn = [w.value for w in at.warning if "only by upper/lower case" in w.value]
    assert len(warn) == 1 and not at.error and not at.metric           # one message, no refusal, no result
    assert "female" in warn[0] and "FEMALE" in warn[0] and "Gender" in warn[0]
    at.checkbox(key="lx_q_case").check().run()
    infos = [i.value for i in at.info if "Matched ignoring upper/lower case" in i.value]
    assert len(infos) == 1 and not at.error
    assert metric(at, "Smallest chance") == "50%"



def test_link_to_an_uploaded_assembly_says_files_do_not_travel():
    """Issue 25: a link to the upload view opened two empty uploaders without a word."""
    at = app(lx_tab=TAB_C, lx_q_source="upload", lx_q_k="7")
    words = plain(at.warning)
    assert "files do not travel in links" in words and "k = 7" in words
    assert "respondents and quotas files again" in words
    # chosen in the session instead of arriving by link: a plain hint, not the link warning
    at2 = app(lx_tab=TAB_C)
    at2.selectbox(key="lx_q_source").set_value("upload").run()
    assert "files do not travel in links" not in plain(at2.warning)


@pytest.mark.parametrize("source, what", [("values", "values file"), ("attributes", "attributes file")])
def test_link_to_an_uploaded_pool_says_files_do_not_travel(source, what):
    at = app(lx_source=source)
    assert f"files do not travel in links: upload the {what} again" in plain(at.warning)
    at2 = app()
    at2.selectbox(key="lx_source").set_value(source).run()
    assert "files do not travel in links" not in plain(at2.warning)


def _assembly_with_blanks() -> bytes:
    """20 volunteers; gender left blank on file rows 3 and 7 (P01, P05); regions coded N, S and NA."""
    rows = ["person_id,gender,region,email"]
    for i in range(20):
        g = "" if i in (1, 5) else "FM"[i % 2]
        rows.append(f"P{i:02d},{g},{('N', 'S', 'NA')[i % 3]},p{i}@example.org")
    return ("\n".join(rows) + "\n").encode()


QUOTAS_N = (b"category,name,min,max,min_flex,max_flex\ngender,F,1,3,0,3\ngender,M,1,3,0,1e300\n"
            b"region,N,1,9,0,9\nregion,S,0,9,0,9\nregion,NA,0,1e20,0,1e20\n")


def test_blank_answers_N_codes_and_huge_maxima_upload():
    """Issue 31: a blank answer names its rows and offers drop / own value; N and NA are region codes; a max of
    1e20 / 1e300 is read as "no limit" (the editor's Arrow table overflowed on it)."""
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", _assembly_with_blanks())
    _upload(at, "lx_q_quota_csv", QUOTAS_N)
    at.number_input(key="lx_q_k").set_value(4).run()
    assert not at.exception and not at.error
    assert "2 respondents have no value for gender: rows 3, 7 (ids P01, P05)." in plain(at.warning)
    assert "mean no limit on any panel" in plain(at.info)
    assert "2 of 20 respondents left out; 18 remain." in texts(at)
    assert metric(at, "Equal share k/n") == "22%"                 # 4 of 18
    at.selectbox(key="lx_q_blank").set_value("value").run()
    assert not at.exception and not at.error
    assert metric(at, "Equal share k/n") == "20%"                 # 4 of 20, blanks kept as "(blank)"
    # with NA read as missing (the user's choice, in the link), the quota row for region NA is blank too: refused
    at.checkbox(key="lx_q_na").check().run()
    assert not at.exception
    assert "Row 4 (region): the value is empty." in plain(at.error)      # region,N


def test_duplicate_ids_are_refused_with_rows():
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", b"person_id,gender\nP1,F\nP2,M\nP1,F\nP4,M\n")
    _upload(at, "lx_q_quota_csv", b"feature,value,min,max\ngender,F,1,2\ngender,M,1,2\n")
    at.selectbox(key="lx_q_id").set_value("person_id").run()
    assert not at.exception
    assert "person_id repeats ids: 'P1' is on rows 2, 4" in plain(at.error)


def test_strat_app_sized_pool_is_refused_with_its_size_before_any_solver():
    """Issue 35 item 3: 20,000 respondents × 12 features × 40 values (480 quota rows) was accepted, ran 535 s, grew
    the server by 2.7 GB and crashed. The page now refuses it at once, naming the size it would need and the largest
    it accepts."""
    import time

    import numpy as np

    g = np.random.default_rng(0)
    cols = [f"f{j}" for j in range(12)]
    codes = g.integers(0, 40, size=(20_000, 12))
    lines = ["id," + ",".join(cols)] + [f"p{i}," + ",".join(map(str, r)) for i, r in enumerate(codes)]
    quotas = ["feature,value,min,max"] + [f"{c},{v},0,100" for c in cols for v in range(40)]
    types = len({tuple(r) for r in codes.tolist()})
    at = app(lx_tab=TAB_C, lx_q_source="upload")
    _upload(at, "lx_q_pool_csv", ("\n".join(lines) + "\n").encode())
    t0 = time.process_time()
    _upload(at, "lx_q_quota_csv", ("\n".join(quotas) + "\n").encode())
    assert not at.exception
    msg = plain(at.error)
    assert "The leximin cannot be computed for this pool: This pool is too large" in msg
    assert f"form {types:,} distinct combinations" in msg and "the limit is 512.0 MB" in msg
    assert not any(b.key == "lx_q_run" for b in at.button)
    assert time.process_time() - t0 < 60
