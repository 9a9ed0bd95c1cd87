"""Issue 36 item 4: the Epsilon calculator's editable tables survive a link and a settings file unchanged.

Hypothesis draws random valid states (composition rows of every kind with δ > 0 and non-unit sensitivities, budget
rows with every column set), encodes each table as the page does (``ui.eps_codecs.encode_table``), carries it
through a link (``ui.dossier.view_link`` → URL parsing → ``ui.links.sanitise_params``) and through a settings
file (``ui.dossier.settings_json`` → ``read_settings`` → ``sanitise_params``), decodes it (``decode_table`` and the
row readers) and requires the identical engine state (the ``Mechanism`` / ``StatisticSpec`` dataclasses compare
field by field). A second test per key changes one value and requires the link to change and to decode to the
changed state, so a codec that drops a column (a row's δ read back as 0, a sensitivity read as 1) is caught.
"""

from __future__ import annotations

import math
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpdash.accounting import budget as bud
from dpdash.accounting import composition as acc
from ui import dossier
from ui import eps_codecs as ec
from ui import links

COMP_COLS = ["kind", "epsilon", "delta", "multiplier", "sigma", "scale", "sensitivity", "rho", "count"]
BUDGET_COLS = ["name", "query", "target ±", "confidence", "mechanism", "L", "U", "n", "cells", "hold ±",
               "hold share", "weight"]
PAGE = "epsilon_calculator"

pos = st.floats(min_value=1e-6, max_value=1e4, allow_nan=False, allow_infinity=False)
small = st.floats(min_value=1e-12, max_value=0.5, allow_nan=False, allow_infinity=False)
sens = st.integers(min_value=2, max_value=ec.MAX_SENSITIVITY)
count = st.integers(min_value=1, max_value=ec.MAX_COUNT)


@st.composite
def comp_row(draw):
    kind = draw(st.sampled_from(acc.KINDS))
    row = dict.fromkeys(COMP_COLS)
    row["kind"], row["count"], row["delta"], row["sensitivity"] = kind, draw(count), 0.0, 1
    if kind in ("laplace", "pure_dp"):
        row["epsilon"] = draw(pos)
    elif kind == "approx_dp":
        row["epsilon"], row["delta"] = draw(pos), draw(small)
    elif kind == "gaussian":
        row["multiplier"] = draw(pos)
    elif kind == "discrete_laplace":
        row["scale"], row["sensitivity"] = draw(pos), draw(sens)
    elif kind == "discrete_gaussian":
        row["sigma"], row["sensitivity"] = draw(pos), draw(sens)
    else:
        row["rho"] = draw(pos)
    return row


@st.composite
def budget_row(draw, i):
    query = draw(st.sampled_from(["count", "sum", "mean", "histogram"]))
    lo = draw(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
    hold = draw(st.sampled_from(["none", "hw", "share"]))
    return {"name": f"stat {i}", "query": query, "target ±": draw(pos), "confidence": draw(small) + 0.4,
            "mechanism": draw(st.sampled_from(["laplace", "gaussian", "discrete_laplace", "discrete_gaussian"])),
            "L": lo, "U": lo + draw(pos), "n": draw(st.integers(1, 10**9)) if query == "mean" else None,
            "cells": draw(st.integers(1, ec.MAX_CELLS)), "hold ±": draw(pos) if hold == "hw" else None,
            "hold share": draw(small) if hold == "share" else None, "weight": draw(pos)}


def through_link(key: str, value: str) -> str:
    url = dossier.view_link("http://localhost:8501", PAGE, {key: value})
    params = parse_qs(urlsplit(url).query, keep_blank_values=True)
    kept, ignored = links.sanitise_params(params)
    assert not ignored, ignored
    (back,) = kept[key]
    return back


def through_settings_file(key: str, value: str) -> str:
    page, got, dropped = dossier.read_settings(dossier.settings_json(PAGE, {key: value}))
    assert page == PAGE and not dropped
    kept, ignored = links.sanitise_params(got)
    assert not ignored
    (back,) = kept[key]
    return back


def comp_state(frame):
    return ec.mechanisms_from_frame(frame)


def comp_expected(rows):
    """The engine state a list of drawn rows means, built here without the codec's reader."""
    out = []
    for r in rows:
        k, c = r["kind"], r["count"]
        out.append({"laplace": lambda: acc.laplace(r["epsilon"], count=c),
                    "pure_dp": lambda: acc.pure_dp(r["epsilon"], count=c),
                    "approx_dp": lambda: acc.approx_dp(r["epsilon"], r["delta"], count=c),
                    "gaussian": lambda: acc.gaussian(r["multiplier"], count=c),
                    "discrete_laplace": lambda: acc.discrete_laplace(r["scale"], r["sensitivity"], count=c),
                    "discrete_gaussian": lambda: acc.discrete_gaussian(r["sigma"], r["sensitivity"], count=c),
                    "zcdp": lambda: acc.zcdp(r["rho"], count=c)}[k]())
    return out


def budget_expected(rows):
    return [bud.StatisticSpec(name=r["name"], query=r["query"], target_half_width=r["target ±"],
                              confidence=r["confidence"], mechanism=r["mechanism"], lower=r["L"], upper=r["U"],
                              n=r["n"], cells=r["cells"], hold_half_width=r["hold ±"], hold_share=r["hold share"],
                              weight=r["weight"]) for r in rows]


def budget_state(frame):
    return ec.stats_from_frame(frame)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(comp_row(), min_size=1, max_size=8))
def test_composition_rows_survive_link_and_settings_file(rows):
    frame = pd.DataFrame(rows, columns=COMP_COLS)
    want = comp_expected(rows)
    value = ec.encode_table(frame)
    for carried in (through_link("eps_comp_rows", value), through_settings_file("eps_comp_rows", value)):
        dec = ec.decode_table(carried, COMP_COLS)
        assert dec.problem is None, dec.problem
        assert comp_state(dec.frame) == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 6).flatmap(lambda k: st.tuples(*[budget_row(i) for i in range(k)])))
def test_budget_rows_survive_link_and_settings_file(rows):
    frame = pd.DataFrame(list(rows), columns=BUDGET_COLS)
    want = budget_expected(rows)
    value = ec.encode_table(frame)
    for carried in (through_link("eps_b_rows", value), through_settings_file("eps_b_rows", value)):
        dec = ec.decode_table(carried, BUDGET_COLS)
        assert dec.problem is None, dec.problem
        assert budget_state(dec.frame) == want


BASE_COMP = {"laplace": dict(epsilon=0.3), "pure_dp": dict(epsilon=0.3), "approx_dp": dict(epsilon=0.3, delta=1e-7),
             "gaussian": dict(multiplier=2.5), "discrete_laplace": dict(scale=4.0, sensitivity=3),
             "discrete_gaussian": dict(sigma=4.0, sensitivity=7), "zcdp": dict(rho=0.05)}
#: for each kind, every column it reads and a different valid value
CHANGES = [(kind, key, new) for kind, d in BASE_COMP.items() for key, new in
           [(k, (v * 2 if isinstance(v, float) else v + 5)) for k, v in d.items()] + [("count", 17)]]


@pytest.mark.parametrize("kind,key,new", CHANGES)
def test_each_composition_key_changes_the_link_and_the_state(kind, key, new):
    def frame(over):
        row = dict.fromkeys(COMP_COLS)
        row.update({"kind": kind, "count": 3, "delta": 0.0, "sensitivity": 1, **BASE_COMP[kind]})
        row.update(over)
        return pd.DataFrame([row], columns=COMP_COLS)

    a, b = frame({}), frame({key: new})
    va, vb = ec.encode_table(a), ec.encode_table(b)
    assert va != vb
    sa = comp_state(ec.decode_table(through_link("eps_comp_rows", va), COMP_COLS).frame)
    sb = comp_state(ec.decode_table(through_link("eps_comp_rows", vb), COMP_COLS).frame)
    assert sa != sb
    assert sb == comp_expected(b.to_dict("records"))
    field = {"multiplier": "noise_multiplier"}.get(key, key)
    assert getattr(sb[0], field) == new


BASE_BUDGET = {"name": "s", "query": "mean", "target ±": 2.0, "confidence": 0.9, "mechanism": "gaussian", "L": -1.0,
               "U": 9.0, "n": 40, "cells": 3, "hold ±": None, "hold share": 0.25, "weight": 2.0}
BUDGET_CHANGES = [("name", "t"), ("query", "sum"), ("target ±", 3.0), ("confidence", 0.99),
                  ("mechanism", "laplace"), ("L", -2.0), ("U", 11.0), ("n", 41), ("cells", 4),
                  ("hold share", 0.5), ("weight", 3.0)]


@pytest.mark.parametrize("key,new", BUDGET_CHANGES + [("hold ±", 1.5)])
def test_each_budget_key_changes_the_link_and_the_state(key, new):
    a = pd.DataFrame([BASE_BUDGET], columns=BUDGET_COLS)
    over = {key: new, **({"hold share": None} if key == "hold ±" else {})}
    b = pd.DataFrame([{**BASE_BUDGET, **over}], columns=BUDGET_COLS)
    va, vb = ec.encode_table(a), ec.encode_table(b)
    assert va != vb
    sa = budget_state(ec.decode_table(through_settings_file("eps_b_rows", va), BUDGET_COLS).frame)
    sb = budget_state(ec.decode_table(through_settings_file("eps_b_rows", vb), BUDGET_COLS).frame)
    assert sa != sb and sb == budget_expected([{**BASE_BUDGET, **over}])


def test_a_dropped_delta_or_sensitivity_is_noticed():
    """Proof the properties can fail: a reader that drops a row's δ or a discrete sensitivity breaks them."""
    rows = [dict(dict.fromkeys(COMP_COLS), kind="approx_dp", epsilon=0.5, delta=1e-6, count=2, sensitivity=1),
            dict(dict.fromkeys(COMP_COLS), kind="discrete_gaussian", sigma=3.0, sensitivity=9, count=1, delta=0.0)]
    frame = pd.DataFrame(rows, columns=COMP_COLS)
    dec = ec.decode_table(through_link("eps_comp_rows", ec.encode_table(frame)), COMP_COLS).frame
    broken = dec.assign(delta=0.0, sensitivity=1)
    assert comp_state(broken) != comp_expected(rows)
    assert comp_state(dec) == comp_expected(rows)
    assert math.isclose(comp_state(dec)[0].delta, 1e-6) and comp_state(dec)[1].sensitivity == 9
