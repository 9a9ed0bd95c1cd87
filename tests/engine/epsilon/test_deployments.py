"""Tests for dpdash.epsilon.deployments and data/deployments.csv: the bundled table parses, every row is cited, bad rows
are refused by name, and the chart and verdict place the user's ε where a brute-force count over the raw file does.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pandas as pd
import pytest

from dpdash.epsilon import deployments as D

RAW = list(csv.DictReader(D.DEPLOYMENTS_CSV.open(encoding="utf-8")))  # the file read without the loader


def test_bundled_table_parses_and_every_row_is_cited():
    t = D.load_deployments()
    assert len(t) == len(RAW) >= 8
    assert list(t.columns) == list(D.COLUMNS)
    for _, r in t.iterrows():
        assert r["source_url"].startswith(("http://", "https://"))
        assert len(r["read_where"]) > 20  # says where the value was read, not just "see source"
        assert r["model"] in ("local", "central")
        assert 0 < r["epsilon"] < math.inf
    # the raw file's ε strings are the loader's numbers (no rounding or unit change on the way in)
    assert sorted(float(r["epsilon"]) for r in RAW) == sorted(t["epsilon"].tolist())
    # every value the read_where column quotes as "ε: x" or "ε = x" is the row's ε
    for r in RAW:
        for marker in ("ε: ", "ε = "):
            if marker in r["read_where"]:
                quoted = r["read_where"].split(marker, 1)[1].split()[0].rstrip(",)'")
                assert float(quoted) == pytest.approx(float(r["epsilon"])), r["product"]


@pytest.mark.parametrize("column, value, message", [
    ("source_url", "registry.opendp.org", "source_url must be an http"),
    ("model", "federated", "model must be one of"),
    ("epsilon", "-1", "epsilon must be"),
    ("year", "1999", "year must be a whole year"),
    ("read_where", "", "read_where is empty"),
    ("delta", "2", "delta must be"),
])
def test_loader_refuses_bad_rows(tmp_path, column, value, message):
    rows = [dict(r) for r in RAW]
    rows[2][column] = value
    path = tmp_path / "bad.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(RAW[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(ValueError, match=f"deployments row 3.*{message}|{message}"):
        D.load_deployments(path)


def test_loader_refuses_a_missing_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("organisation,product,epsilon\nA,B,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="missing the columns"):
        D.load_deployments(path)


@pytest.mark.parametrize("eps", [0.01, 1.0, 2.0, 3.3, 4.0, 16.0, 34.9, 1000.0])
def test_placement_matches_a_brute_force_count(eps):
    vals = [float(r["epsilon"]) for r in RAW]
    p = D.place_epsilon(eps, D.load_deployments())
    assert (p.below, p.equal, p.above) == (sum(v < eps and not math.isclose(v, eps) for v in vals),
                                           sum(math.isclose(v, eps) for v in vals),
                                           sum(v > eps and not math.isclose(v, eps) for v in vals))
    v = D.context_verdict(p)
    assert str(p.total) in v
    if p.below and p.above:
        assert f"{p.below} ha" in v and f"{p.above} a larger" in v


def test_verdict_words():
    t = D.load_deployments()
    lo, hi = min(float(r["epsilon"]) for r in RAW), max(float(r["epsilon"]) for r in RAW)
    assert D.context_verdict(D.place_epsilon(lo / 2, t)).startswith(f"ε = {lo / 2:g} is smaller than all")
    assert D.context_verdict(D.place_epsilon(hi * 3, t)).startswith(f"ε = {hi * 3:g} is larger than all")
    assert D.context_verdict(D.place_epsilon(lo, t)).startswith(f"ε = {lo:g} is the smallest value among {len(RAW)}")
    assert D.context_verdict(D.place_epsilon(hi, t)).startswith(f"ε = {hi:g} is the largest value among {len(RAW)}")


@pytest.mark.parametrize("eps", [0.05, 3.0, 200.0])
def test_chart_places_the_users_epsilon(eps):
    t = D.load_deployments()
    fig = D.make_context_figure(t, epsilon=eps, delta=1e-6)
    line = [tr for tr in fig.data if tr.mode == "lines"]
    assert len(line) == 1 and list(line[0].x) == [eps, eps]
    # each dot sits at its row's ε, on the row's label; rows sorted by ε from the bottom
    by_label = {}
    for tr in fig.data:
        if tr.mode == "markers":
            by_label.update(zip((y.replace("<br>", " ") for y in tr.y), tr.x))  # labels wrap (issue 25)
    assert len(by_label) == len(RAW)
    for r in RAW:
        # labels wrap and a long one is cut with "…" (issue 25): match the row by its label's start
        full = f"{r['organisation']}: {r['product']}"
        label = next(k for k in by_label if k.startswith(full) or full.startswith(k.removesuffix("…")))
        assert by_label[label] == pytest.approx(float(r["epsilon"]))
    order = [y.replace("<br>", " ") for y in fig.layout.yaxis.categoryarray]
    assert [by_label[k] for k in order] == sorted(by_label.values())
    # the log axis covers the data and the user's ε, with ticks inside the range
    lo, hi = fig.layout.xaxis.range
    vals = [float(r["epsilon"]) for r in RAW] + [eps]
    assert lo < math.log10(min(vals)) and hi > math.log10(max(vals))
    assert fig.layout.xaxis.type == "log"
    assert all(lo <= math.log10(v) <= hi for v in fig.layout.xaxis.tickvals)
    assert len(fig.layout.xaxis.tickvals) >= 2
    # local and central are told apart by colour and symbol, each named in the legend once
    marks = [tr for tr in fig.data if tr.mode == "markers"]
    assert len({tr.marker.color for tr in marks}) == len(marks) == 2
    assert {tr.name.split(" ")[0] for tr in marks} == {"local", "central"}


def test_alt_text_and_people_table():
    t = D.load_deployments()
    p = D.place_epsilon(3.0, t)
    alt = D.figure_alt(t, p)
    n_local = sum(r["model"] == "local" for r in RAW)
    assert f"{n_local} local" in alt and f"{len(RAW) - n_local} central" in alt and "ε = 3" in alt
    people = D.context_table_for_people(t)
    assert "Where the value was read" in people.columns and "epsilon" not in people.columns
    assert np.all(np.diff(people["ε"].to_numpy()) >= 0)
    text = people.astype(str).to_numpy().ravel().tolist()
    assert not any(v in ("None", "nan", "<NA>", "NaN") for v in text)
    undated = [r["product"] for r in RAW if not r["year"]]
    assert set(people.loc[people["Year"] == "—", "Product"]) == set(undated)
    ms = people.loc[people["Product"] == "Assistive AI", "δ"].iloc[0]
    assert ms == "10⁻⁷"


def test_csv_table_reads_back_with_numeric_columns():
    import io

    from dpdash.common.data import read_uploaded_csv
    from ui.exports import csv_bytes
    data = csv_bytes(D.context_table_for_people(D.load_deployments(), for_csv=True))
    back = pd.read_csv(io.BytesIO(data))
    assert back["ε"].dtype.kind == "f" and back["Year"].dtype.kind in "if"
    assert back["Year"].isna().sum() == sum(not r["year"] for r in RAW)
    read_uploaded_csv(data)  # our own reader accepts it
