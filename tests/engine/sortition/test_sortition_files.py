"""dpdash/sortition/files.py: the Sortition Foundation's own files load unchanged, round-trip, and give the chances
``sortition-algorithms`` gives.

Fixtures: the Strat App's public end-to-end test pool (150 people, 4 categories, panel of 22; provenance in
data/DATA.md). Oracle: ``sortition-algorithms`` 0.12.15 (the Sortition Foundation's library), which reads the same
files itself and, without Gurobi, solves **maximin** (its leximin needs Gurobi): the largest possible smallest
chance, which is the first level of the leximin lottery computed by ``dpdash.sortition.core``.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash.sortition import core as lx
from dpdash.sortition import files as sf

D = Path(__file__).resolve().parents[2] / "data" / "sortition_foundation"
QUOTAS_TEXT = (D / "categories.csv").read_text(encoding="utf-8")
POOL_TEXT = (D / "candidates.csv").read_text(encoding="utf-8")
ID = "nationbuilder_id"
K = 22


def _frame(text: str) -> pd.DataFrame:
    """As the page's bounded reader gives it: every cell a string (ui.upload as_text)."""
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def quota_file() -> sf.QuotaFile:
    return sf.read_quotas(_frame(QUOTAS_TEXT))


@pytest.fixture(scope="module")
def pool() -> pd.DataFrame:
    return _frame(POOL_TEXT)


@pytest.fixture(scope="module")
def dist(quota_file, pool) -> lx.PanelDistribution:
    feats = list(dict.fromkeys(q.feature for q in quota_file.quotas()))
    return lx.leximin_panels(pool[[ID] + feats], quota_file.quotas(), k=K, id_col=ID, rng=0)


def test_fixture_is_the_public_test_pool(pool, quota_file):
    assert len(pool) == 150 and pool[ID].is_unique
    assert len(quota_file.table) == 20
    assert list(dict.fromkeys(quota_file.table["feature"])) == ["gender", "age_bracket", "edu_level", "geo_bucket"]


def test_old_header_with_flex_loads_unchanged_and_round_trips(quota_file):
    # the engine's own reader refused this header (issue 24): the new reader takes it as it is
    with pytest.raises(ValueError, match="needs the columns feature, value, min, max"):
        lx.quotas_from_frame(_frame(QUOTAS_TEXT))
    assert quota_file.style == "old" and quota_file.has_flex
    assert quota_file.header == ("category", "name", "min", "max", "min_flex", "max_flex")
    rows = _rows(QUOTAS_TEXT)
    for r, t in zip(rows, quota_file.table.itertuples(index=False)):
        assert (r["category"], r["name"]) == (t.feature, t.value)
        assert [int(r[c]) for c in ("min", "max", "min_flex", "max_flex")] == [t.min, t.max, t.min_flex, t.max_flex]
    assert sf.write_quotas(quota_file) == QUOTAS_TEXT                   # byte for byte


def test_new_header_and_no_flex_load_and_round_trip(quota_file):
    new = QUOTAS_TEXT.replace("category,name,", "feature,value,", 1)
    qf = sf.read_quotas(_frame(new))
    assert qf.style == "new" and qf.header[:2] == ("feature", "value")
    pd.testing.assert_frame_equal(qf.table, quota_file.table)
    assert sf.write_quotas(qf) == new
    plain = "\n".join(",".join(line.split(",")[:4]) for line in new.strip().split("\n")) + "\n"
    qp = sf.read_quotas(_frame(plain))
    assert not qp.has_flex and sf.write_quotas(qp) == plain
    # this product's replication header still reads (category → feature, feature → value)
    rep = sf.read_quotas(pd.DataFrame({"category": ["g"], "feature": ["F"], "min": ["1"], "max": ["2"]}))
    assert rep.style == "replication" and rep.quotas() == [lx.Quota("g", "F", 1, 2)]


def test_the_oracle_reads_the_same_quota_file(quota_file):
    """sortition-algorithms reads the file into the same bounds (and our written file again into the same)."""
    from sortition_algorithms import read_in_features

    for text in (QUOTAS_TEXT, sf.write_quotas(quota_file)):
        rows = _rows(text)
        features, _f, _v = read_in_features(list(rows[0]), rows, K)
        got = {(f, v): (mm.min, mm.max, mm.min_flex, mm.max_flex) for f, vals in features.items()
               for v, mm in vals.items()}
        assert got == {(t.feature, t.value): (t.min, t.max, t.min_flex, t.max_flex)
                       for t in quota_file.table.itertuples(index=False)}


@pytest.mark.parametrize("text, message", [
    ("category,name,min,max,min_flex\ng,F,1,2,0\n", "but not max_flex"),
    ("category,name,min,max,min_flex,max_flex\ng,F,1,2,2,3\n", "min_flex (2) must be between 0 and min (1)"),
    ("category,name,min,max,min_flex,max_flex\ng,F,1,2,0,1\n", "max_flex (1) must be at least max (2)"),
    ("category,name,min,max\ng,,1,2\n", "the value is empty"),
    ("category,name,min,max\ng,F,one,2\n", "not a whole number"),
    ("a,b,min,max\ng,F,1,2\n", "needs the columns feature, value, min, max"),
    ("category,name,min,max\ng,F,3,2\n", "0 ≤ min ≤ max"),
])
def test_bad_quota_files_are_refused_in_words(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sf.read_quotas(_frame(text))


def test_case_insensitive_match_is_opt_in_and_reported_once(quota_file, pool):
    quotas = quota_file.quotas()
    lowered = pool.copy()
    lowered["gender"] = lowered["gender"].str.lower()                  # 'female', 'male'
    lowered = lowered.rename(columns={"edu_level": "EDU_LEVEL"})
    # without the opt-in nothing changes and the engine refuses the unmatched values, naming them
    plain = sf.match_pool(lowered, quotas, ignore_case=False)
    assert plain.message() is None and (plain.pool["gender"] == lowered["gender"]).all()
    with pytest.raises(ValueError, match="'gender' has pool value 'female' with no quota row"):
        lx.check_quotas(plain.pool[[ID, "gender"]], [q for q in quotas if q.feature == "gender"], k=K)
    m = sf.match_pool(lowered, quotas, ignore_case=True)
    counts = pool["gender"].value_counts()
    assert m.merged == (("gender", "female", "Female", int(counts["Female"])),
                        ("gender", "male", "Male", int(counts["Male"])))
    assert m.renamed == (("EDU_LEVEL", "edu_level"),)
    msg = m.message()
    assert msg.count("Matched ignoring upper/lower case") == 1
    assert f"'female' → 'Female' (gender, {counts['Female']} people)" in msg and "'EDU_LEVEL' read as" in msg
    pd.testing.assert_frame_equal(m.pool, pool)                        # exactly the original pool again
    # the oracle matches the lowered pool by design, to the same counts
    from sortition_algorithms import Settings, count_people_per_feature_value, read_in_features, read_in_people

    rows = _rows(QUOTAS_TEXT)
    features, _f, _v = read_in_features(list(rows[0]), rows, K)
    people, _r = read_in_people(list(lowered.columns), lowered.to_dict("records"), features,
                                Settings(id_column=ID, columns_to_keep=[]))
    oracle = count_people_per_feature_value(features, people)
    assert oracle["gender"]["Female"] == counts["Female"]


def test_quota_values_differing_only_by_case_are_refused_when_matching():
    quotas = [lx.Quota("g", "F", 0, 1), lx.Quota("g", "f", 0, 1)]
    with pytest.raises(ValueError, match="differ only by case"):
        sf.match_pool(pd.DataFrame({"id": ["a"], "g": ["F"]}), quotas, ignore_case=True)


def test_every_chance_at_least_one_eleventh(dist):
    """The Strat App's pool: leximin gives everyone at least 1/11 (the maximin value below), chances sum to 22."""
    assert dist.complete
    assert dist.probabilities.min() >= 1 / 11 - 1e-7
    assert dist.probabilities.sum() == pytest.approx(K, abs=1e-6)


@pytest.mark.slow
def test_smallest_chance_matches_sortition_algorithms_maximin(dist):
    """sortition-algorithms' maximin (HiGHS; its leximin needs Gurobi) reaches the same smallest chance.

    Maximin fixes only the smallest chance (the rest of its lottery is not unique), so the two lotteries are
    compared there: leximin's first level is the maximin value.
    """
    from sortition_algorithms import Settings, read_in_features, read_in_people
    from sortition_algorithms.committee_generation.maximin import find_distribution_maximin

    rows = _rows(QUOTAS_TEXT)
    features, _f, _v = read_in_features(list(rows[0]), rows, K)
    prow = _rows(POOL_TEXT)
    people, _r = read_in_people(list(prow[0]), prow, features, Settings(id_column=ID, columns_to_keep=[]))
    committees, probs, _rep = find_distribution_maximin(features, people, K, [])
    chance = dict.fromkeys(people, 0.0)
    for c, q in zip(committees, probs):
        for p in c:
            chance[p] += q
    assert sum(probs) == pytest.approx(1.0, abs=1e-6)
    assert min(chance.values()) == pytest.approx(float(dist.probabilities.min()), abs=5e-4)
    assert min(chance.values()) == pytest.approx(1 / 11, abs=5e-4)


def _meets(panel_rows: pd.DataFrame, quotas) -> bool:
    return len(panel_rows) == K and all(q.min <= int((panel_rows[q.feature] == q.value).sum()) <= q.max
                                        for q in quotas)


def test_chances_and_drawn_panel_are_written_as_pool_files(quota_file, pool, dist):
    quotas = quota_file.quotas()
    ch = sf.chances_table(pool, ID, dist.person_ids, dist.probabilities)
    assert list(ch.columns) == list(pool.columns) + [sf.CHANCE_COLUMN]
    back = _frame(ch.to_csv(index=False))
    pd.testing.assert_frame_equal(back[list(pool.columns)], pool)      # the pool, unchanged, reads back
    np.testing.assert_allclose(back[sf.CHANCE_COLUMN].astype(float),
                               pd.Series(dist.probabilities, index=dist.person_ids)[pool[ID]].to_numpy(), atol=1e-12)
    members = lx.draw_panel(dist, rng=3)
    selected, remaining = sf.panel_tables(pool, ID, members)
    assert list(selected.columns) == list(pool.columns) and len(selected) + len(remaining) == len(pool)
    assert set(selected[ID]) == set(members) and _meets(selected, quotas)
    # the library reads the selected file back as a pool (the format it reads)
    from sortition_algorithms import Settings, read_in_features, read_in_people

    rows = _rows(QUOTAS_TEXT)
    features, _f, _v = read_in_features(list(rows[0]), rows, K)
    sel = _frame(selected.to_csv(index=False))
    people, _r = read_in_people(list(sel.columns), sel.to_dict("records"), features,
                                Settings(id_column=ID, columns_to_keep=["first_name", "email"]))
    assert people.count == K
    with pytest.raises(ValueError, match="not in this pool"):
        sf.panel_tables(pool, ID, ["nobody"])


def test_lottery_is_written_as_a_multiple_selection_table_and_round_trips(quota_file, pool, dist):
    quotas = quota_file.quotas()
    panels = sf.lottery_panels(dist, n_selections=1_000)
    table = sf.lottery_table(panels)
    assert list(table.columns[:2]) == ["Assembly 0", "Assembly 1"] and table.shape == (K, 1_000)
    back = sf.read_lottery(_frame(table.to_csv(index=False)))
    assert back == [tuple(p) for p in panels]
    by_id = pool.set_index(ID)
    for p in back[::50]:
        assert len(set(p)) == K and _meets(by_id.loc[list(p)].reset_index(), quotas)
    # a person's share of the listed panels is their chance, up to the rounding to 1/1000 (bound in the docstring)
    freq = sf.lottery_chances(back, dist.person_ids)
    assert np.abs(freq - dist.probabilities).max() <= 0.01
    assert freq.min() >= 1 / 11 - 0.01
    with pytest.raises(ValueError, match="Assembly 0"):
        sf.read_lottery(pd.DataFrame({"x": ["a"]}))


# ---------------------------------------------------------------------------------------------------------------
# Issue 31: respondents files as volunteers fill them in (blanks, N codes, duplicate ids, "no limit" maxima).
# The corpus is built here from the Strat App fixture, so each file's difference from the original is one change.
# ---------------------------------------------------------------------------------------------------------------

BLANK_ROWS = (3, 7, 12, 20, 33, 47, 48, 90, 151)          # file rows (header = row 1): 9 blank gender answers


def _read_as_page(text: str, codes=("",)) -> pd.DataFrame:
    """Through the product's one reader, as the assembly tab calls it (text columns, blank-only missing codes)."""
    from dpdash.common.data import read_uploaded_csv

    return read_uploaded_csv(text.encode("utf-8"), as_text=True, max_rows=20_000, max_cols=60,
                             missing_codes=codes).frame


def _with_cells(text: str, column: str, rows: dict[int, str]) -> str:
    """The CSV ``text`` with ``column`` set to ``rows[r]`` on file row r (header = row 1)."""
    recs = _rows(text)
    for r, v in rows.items():
        recs[r - 2][column] = v
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(recs[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(recs)
    return out.getvalue()


def test_blank_answers_are_named_by_row_and_id_as_sortition_algorithms_does(quota_file):
    """9 blank gender answers: the engine names count, feature, rows and ids (never a TypeError), and the rows and
    ids are the ones sortition-algorithms reports for the same file."""
    text = _with_cells(POOL_TEXT, "gender", {r: "" for r in BLANK_ROWS})
    pool = _read_as_page(text)
    quotas = quota_file.quotas()
    feats = list(dict.fromkeys(q.feature for q in quotas))
    gaps = lx.missing_answers(pool, feats, id_col=ID)
    assert [g.feature for g in gaps] == ["gender"] and gaps[0].rows == BLANK_ROWS
    sentence = gaps[0].sentence()
    assert sentence.startswith("9 respondents have no value for gender: rows 3, 7, 12, 20, 33, 47, 48, 90, …")
    with pytest.raises(ValueError, match="9 respondents have no value for gender: rows 3, 7"):
        lx.check_quotas(pool[[ID] + feats], quotas, k=K)
    # oracle: sortition-algorithms reads the same file and reports each empty value with its row and person
    from sortition_algorithms import Settings, read_in_features, read_in_people

    rows = _rows(QUOTAS_TEXT)
    features, _f, _v = read_in_features(list(rows[0]), rows, K)
    prow = _rows(text)
    try:
        read_in_people(list(prow[0]), prow, features, Settings(id_column=ID, columns_to_keep=[]))
        raise AssertionError("sortition-algorithms accepted blank answers")
    except Exception as exc:                           # its error collects one entry per bad cell
        errs = getattr(exc, "all_errors", None) or getattr(exc, "errors", None) or []
        got = sorted((int(e.row), str(e.row_name)) for e in errs)
    assert got == sorted(zip(gaps[0].rows, gaps[0].ids))


def test_blank_answers_dropped_or_kept_as_their_own_value(quota_file):
    text = _with_cells(POOL_TEXT, "gender", {r: "" for r in BLANK_ROWS})
    pool = _read_as_page(text)
    quotas = quota_file.quotas()
    feats = list(dict.fromkeys(q.feature for q in quotas))
    dropped, qs, n = lx.resolve_blanks(pool[[ID] + feats], quotas, k=K, how="drop")
    assert n == 9 and len(dropped) == 141 and qs == quotas
    assert set(dropped[ID]) == set(pool[ID]) - {pool[ID][r - 2] for r in BLANK_ROWS}
    kept, qs2, n2 = lx.resolve_blanks(pool[[ID] + feats], quotas, k=K, how="value")
    assert n2 == 9 and len(kept) == 150
    assert (kept["gender"] == lx.BLANK).sum() == 9
    assert lx.Quota("gender", lx.BLANK, 0, K) in qs2 and len(qs2) == len(quotas) + 1
    # the added row sits with its feature and is written back in the file's own header
    qf2 = sf.add_quota_rows(quota_file, qs2)
    assert list(qf2.table["feature"][:4]) == ["gender"] * 4 and qf2.table["value"][3] == lx.BLANK
    assert sf.write_quotas(qf2).splitlines()[0] == QUOTAS_TEXT.splitlines()[0]
    for p, q in ((dropped, qs), (kept, qs2)):
        d = lx.leximin_panels(p, q, k=K, id_col=ID, rng=0)
        assert d.complete and d.probabilities.sum() == pytest.approx(K, abs=1e-6)


N_CODES = {"Glasgow": "N", "Lothian": "NA", "South Scotland": "None"}


def test_N_NA_None_are_ordinary_codes_in_quotas_and_pool(quota_file):
    """Region codes N (North), NA, None: a quotas file with `geo_bucket,N,…` is accepted and a pool coded that way
    gives exactly the chances of the same pool with the long names (relabelling changes nothing)."""
    qtext = QUOTAS_TEXT
    ptext = POOL_TEXT
    for long, code in N_CODES.items():
        qtext = qtext.replace(f"geo_bucket,{long},", f"geo_bucket,{code},")
        ptext = ptext.replace(f",{long},", f",{code},")
    assert "geo_bucket,N," in qtext
    qf = sf.read_quotas(_read_as_page(qtext))
    assert {"N", "NA", "None"} <= set(qf.table["value"])
    pool = _read_as_page(ptext)
    feats = list(dict.fromkeys(qf.table["feature"]))
    assert not lx.missing_answers(pool, feats, id_col=ID)
    coded = lx.leximin_panels(pool[[ID] + feats], qf.quotas(), k=K, id_col=ID, rng=0)
    base = lx.leximin_panels(_frame(POOL_TEXT)[[ID] + feats], quota_file.quotas(), k=K, id_col=ID, rng=0)
    assert coded.complete and np.allclose(coded.probabilities, base.probabilities, atol=1e-7)
    # with the codes read as missing (the user's choice), the same file names them as blanks instead
    as_missing = _read_as_page(ptext, codes=("", "NA", "N", "None"))
    gaps = lx.missing_answers(as_missing, feats, id_col=ID)
    n_coded = int(_frame(ptext)["geo_bucket"].isin(["N", "NA", "None"]).sum())
    assert [g.feature for g in gaps] == ["geo_bucket"] and len(gaps[0].rows) == n_coded


def test_duplicate_ids_are_named_with_their_rows():
    text = _with_cells(POOL_TEXT, ID, {9: "p3", 40: "p3"})        # p3 is on row 5 already
    pool = _read_as_page(text)
    msg = sf.id_problems(pool, ID)
    assert msg == f"{ID} repeats ids: 'p3' is on rows 5, 9, 40 (2 repeated ids in all). Each respondent needs a " \
                  "unique id."
    assert sf.id_problems(_frame(POOL_TEXT), ID) is None
    blank = _read_as_page(_with_cells(POOL_TEXT, ID, {6: ""}))
    assert sf.id_problems(blank, ID) == f"1 respondent(s) have no id in {ID}: rows 6."


@pytest.mark.parametrize("big", ["1e20", "1e300", "99999999999999999999"])
def test_no_limit_maxima_are_clamped_and_fit_the_editor(quota_file, big):
    """A max / max_flex of 1e20 or 1e300 means "no limit": read as MAX_BOUND (named in a note), so the quota
    editor's Arrow table holds it (it overflowed int64); a minimum that large is refused with its row."""
    import pyarrow as pa

    text = QUOTAS_TEXT.replace("gender,Male,10,11,0,12", f"gender,Male,10,{big},0,{big}")
    qf = sf.read_quotas(_frame(text))
    row = qf.table[qf.table["value"] == "Male"].iloc[0]
    assert row["max"] == sf.MAX_BOUND and row["max_flex"] == sf.MAX_BOUND
    assert qf.notes and "row 3" in qf.notes[0] and f"{sf.MAX_BOUND:,}" in qf.notes[0]
    pa.Table.from_pandas(qf.table)                     # what st.data_editor does with it
    pool = _frame(POOL_TEXT)
    feats = list(dict.fromkeys(qf.table["feature"]))
    assert lx.check_quotas(pool[[ID] + feats], qf.quotas(), k=K).feasible
    with pytest.raises(ValueError, match=r"Row 3 \(gender=Male\): min is 1e\+(20|300|19); no panel has more"):
        sf.read_quotas(_frame(QUOTAS_TEXT.replace("gender,Male,10,11,0,12", f"gender,Male,{big},{big},0,{big}")))
