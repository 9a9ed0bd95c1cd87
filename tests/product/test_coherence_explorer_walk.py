"""Random walks over the coherence explorer (issue 12, product test layer).

The oracle reads what a user sees (controls, the group table, the captions, the charts' data, the theory cards)
and recomputes the headline numbers independently:

* group sizes and n: counted with pandas on the data the walk itself loads (never the page's group masks);
* the preview's W1 for the inspected group: ``scipy.stats.wasserstein_distance`` of the two prediction lines the
  chart draws (when the chart is not downsampled), or of the two samples its distribution functions encode, equal
  to the W1 in the chart's title and the group's bar;
  for hard (±1) predictions also ``2·|p_a − p_b|`` (spec §3.2);
* Theorem 7 / 8 / 9 cards: γ from the spec's formulas (§3.5, erratum E1; Eq. 13 with E5; Theorem 9) written here,
  and "groups that meet it" counted from the group table;
* state integrity: the lens is never empty after a data switch, the label is never in the lens, and an exact
  histogram (ε = ∞) is never called DP.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance
from streamlit.runtime.state.common import TESTING_KEY

from dpdash.common.data import census_population, load_dataset
from tests.product import walk as walk_module
from tests.product.walk import metric_number, walk, widget_values

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "coherence_explorer.py")

BETAS = {"0.05": 0.05, "0.01": 0.01, "1e-3": 1e-3, "1e-6": 1e-6, "e^-30": math.exp(-30)}
HIST = {"dp_histogram", "gaussian_histogram"}
FAST = {"coh_n": "2000", "coh_trees": "10", "coh_learner": "Decision tree"}
# Never moved: population size and forest size (kept small for time), long-run buttons' confirmation,
# the shared-dataset picker outside its walk (Adult's 48,842 rows are walked once, below).
SKIP = ("coh_n", "coh_trees", "coh_confirm_long", "dataset")

UPLOAD_COLS = ["height", "weight", "smoker", "region", "flag"]


def _upload_bytes() -> bytes:
    rng = np.random.default_rng(11)
    rows = [",".join(UPLOAD_COLS)]
    for i in range(400):
        rows.append(f"{150 + int(rng.integers(40))},{50 + int(rng.integers(45))},"
                    f"{'yes' if rng.random() < 0.25 else 'no'},r{int(rng.integers(4))},{int(rng.random() < 0.1)}")
    return ("\n".join(rows) + "\n").encode()


UPLOAD = _upload_bytes()


# ------------------------------------------------------------------ independent formulas (spec §3.5)
def _terms(zeta: float, L: float, a: float) -> float:
    return max(33.2 * (zeta + L) / a**2, 144 * math.log(6 / a) / a**2, 16.6 * (zeta + L), 10.6 / a, 80.0)


def gamma_thm7(eps, n, a, b, G):
    zeta = eps**2 * n / 4 + (eps / 2) * math.sqrt(n * math.log(4 * G / b))
    return _terms(zeta, math.log(16 * G / b), a)


def gamma_thm8(eps, n, a, b, G):
    zeta = 133 * eps**2 * n + 12 * eps * math.sqrt(n * math.log(4 * G / b))
    return _terms(zeta, math.log(32 * G / b), a)


def gamma_thm9(n, a, b, G):
    return 4 * math.sqrt(n * math.log(G / b)) / a


# ------------------------------------------------------------------ reading the page
def _fmt(v) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _data(at, vals) -> pd.DataFrame:
    src = vals.get("coh_source")
    if src == "synthetic":
        return census_population(int(vals["coh_n"]), rng=int(vals["coh_seed"]))
    if src == "shared":
        return load_dataset(vals.get("dataset", "census")).frame
    return pd.read_csv(__import__("io").BytesIO(UPLOAD))


def _expected_sizes(df: pd.DataFrame, label: str, sensitive: str) -> dict[str, int]:
    d = df[df[label].notna()]
    out = {"Everyone": len(d), f"{label} = {sensitive}": int((d[label].map(_fmt) == sensitive).sum())}
    if "SEX" in d and "AGEP" in d:
        out.update({
            "Women (SEX = 2)": int((d["SEX"] == 2).sum()), "Age 65+": int((d["AGEP"] >= 65).sum()),
            "Men 18–24": int(((d["SEX"] == 1) & (d["AGEP"] >= 18) & (d["AGEP"] < 25)).sum()),
            "Black (RAC1P = 2)": int((d["RAC1P"] == 2).sum()), "Hispanic (HISP ≥ 1)": int((d["HISP"] >= 1).sum()),
        })
    return out


def _figures(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _array(v) -> np.ndarray:
    """A trace array from Plotly JSON: a list, or ``{"dtype", "bdata"}`` (base64 typed array)."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).astype(float)
    return np.asarray(v, dtype=float)


def _title(fig) -> str:
    t = fig.get("layout", {}).get("title", {})
    return t.get("text", "") if isinstance(t, dict) else str(t)


STATS = {"w1_scipy": 0, "theory": 0, "sizes": 0}


def oracle(at) -> None:
    vals = widget_values(at)
    texts = [x.value for x in list(at.markdown) + list(at.caption) + list(at.info) + list(at.warning)]
    joined = "\n".join(texts)
    release = vals.get("coh_release")
    exact = release in HIST and bool(vals.get("coh_exact"))
    if exact:
        assert "Theorem 7 applies" not in joined and "DP release (ε = ∞" not in joined
    if "coh_lens" not in vals or not at.dataframe:
        return  # upload not yet made, or a message stopped the page (checked by the harness: no error box)
    if exact:
        assert "not DP" in joined
    label, lens = vals["coh_label"], list(vals["coh_lens"])
    assert label not in lens
    if not lens:
        assert any("Choose at least one lens feature" in w.value for w in at.warning)
        return
    table = at.dataframe[0].value
    if "members" not in table.columns:
        return
    df = _data(at, vals)
    expected = _expected_sizes(df, label, vals["coh_sensitive"])
    shown = dict(zip(table["group"], table["members"].astype(int)))
    for g, m in shown.items():
        if g in expected:
            assert m == expected[g], (g, m, expected[g])
            STATS["sizes"] += 1
    n = int(df[label].notna().sum())
    cap = next(c.value for c in at.caption if "labelled rows" in c.value)
    assert metric_number(cap.split("n = ", 1)[1]) == n

    # ---- preview: W1 of the inspected group, chart title vs bar vs scipy
    figs = _figures(at)
    pred = next((f for f in figs if ": W1 = " in _title(f)), None)
    bars = next((f for f in figs if _title(f).startswith("W1 per group")), None)
    if pred is not None and bars is not None:
        view = vals["coh_view"]
        title_text = re.search(r": W1 = ([0-9.]+)", _title(pred)).group(1)
        title_w1 = float(title_text)
        # the title reads W1 as the verdict does (2 decimals, more near α): within half its last decimal
        tol = 0.5 * 10.0 ** -len(title_text.split(".")[1]) + 1e-12
        m_a, m_b = (int(x.replace(",", "")) for x in re.search(r"released ([\d,]+), held out ([\d,]+)",
                                                                 _title(pred)).groups())
        bar = bars["data"][0]
        # labels carry names as HTML entities (Plotly shows "&lt;=50K" as "<=50K")
        i = next(k for k, lab in enumerate(bar["x"]) if html.unescape(lab).rsplit(" (", 1)[0] == view)
        assert bar["text"][i] == title_text, "card (bar) and chart (title) disagree"
        assert m_a + m_b <= shown[view]
        if vals.get("coh_ecdf"):
            # The two step ECDFs on a common grid give each half's sample back (value × count) when the grid is
            # not thinned: scipy's W1 of those samples must equal the title.
            x = _array(pred["data"][0]["x"])
            fa, fb = (_array(t["y"]) for t in pred["data"][:2])
            counts = [np.rint(np.diff(np.concatenate([[0.0], f])) * m).astype(int) for f, m in ((fa, m_a), (fb, m_b))]
            if counts[0].sum() == m_a and counts[1].sum() == m_b and np.all(np.concatenate(counts) >= 0):
                w = wasserstein_distance(np.repeat(x, counts[0]), np.repeat(x, counts[1]))
                assert abs(w - title_w1) <= tol, (w, title_w1)
                STATS["w1_scipy"] += 1
        else:
            ya, yb = (_array(t["y"]) for t in pred["data"][:2])
            if ya.size == m_a and yb.size == m_b:  # not downsampled: the lines are the predictions
                w = wasserstein_distance(ya, yb)
                assert abs(w - title_w1) <= tol, (w, title_w1)
                if vals.get("coh_output") == "hard":
                    assert set(np.unique(np.concatenate([ya, yb]))) <= {-1.0, 1.0}
                    assert abs(2 * abs(np.mean(ya < 0) - np.mean(yb < 0)) - w) <= 1e-9
                STATS["w1_scipy"] += 1

    # ---- theory cards
    cards = {re.sub(r"\\(.)", r"\1", m.label): m.value for m in at.metric}  # labels are Markdown-escaped
    if "Theorem 7: γ required" in cards:
        G = max(1, int((table["kept (at least γ members)"] == "yes").sum()))
        a = max(float(vals["coh_alpha"]), 0.01)
        b = BETAS[vals["coh_beta"]]
        dp = release in HIST and not exact
        eps = float(vals["coh_eps"]) if dp else float(vals["coh_hyp_eps"])
        g7 = gamma_thm7(eps, n, a, b, G)
        shown7 = metric_number(cards["Theorem 7: γ required"])  # rounded up: the members a group needs
        assert 0 <= shown7 - g7 < 1 + 1e-9 * g7, (cards, g7)
        g9 = gamma_thm9(n, a, b, G)
        # sizes to reach are rounded up on every card (issue 22: card, chart and sentence say the same γ)
        assert 0 <= metric_number(cards["Theorem 9: γ (one yes/no column)"]) - g9 < 1 + 1e-9 * g9
        if eps <= 0.5:
            g8 = gamma_thm8(eps, n, a, b, G)
            assert 0 <= metric_number(cards["Theorem 8: γ for (ε, δ)-DP"]) - g8 < 1 + 1e-9 * g8
        else:
            assert cards["Theorem 8: γ for (ε, δ)-DP"] == "—"
        kept = table[table["kept (at least γ members)"] == "yes"]
        meets = int((kept["members"].astype(int) >= g7).sum())
        assert cards["Groups that meet it"] == f"{meets} of {len(kept)}"
        STATS["theory"] += 1


def _upload(at) -> None:
    at.file_uploader(key="coh_upload").set_value(("data.csv", UPLOAD, "text/csv")).run()


WALKS = [
    # (seed, steps, start params, extra skip, on_start)
    (1, 66, {**FAST}, (), None),
    (2, 50, {**FAST, "coh_tab": "Theory", "coh_release": "ε-DP histogram → synthetic records (Laplace)"}, (), None),
    (3, 45, {**FAST, "coh_release": "(ε, δ)-DP histogram → synthetic records (Gaussian)", "coh_eps": "∞"}, (),
     None),
    (4, 35, {**FAST, "coh_tab": "W1 vs ε", "coh_source": "Shared dataset (sidebar picker)",
             "dataset": "ACS 2012 sample"}, ("coh_source",), None),
    (5, 45, {**FAST, "coh_tab": "Section 7: a provably safe release", "coh_source": "Upload a CSV"},
     ("coh_source",), _upload),
    (6, 45, {**FAST, "coh_tab": "Theory", "coh_release": "Random subsample in the clear",
             "coh_gamma_mode": "% of n"}, (), None),
    (7, 12, {**FAST, "coh_source": "Shared dataset (sidebar picker)", "dataset": "UCI Adult"}, ("coh_source",),
     None),
]


def _move_with_format_func(w, kind, rng):
    """``walk.random_move``, but a selectbox/radio whose options are shown through a format function (this page
    maps codes to labels) is set by its displayed label: AppTest would otherwise re-format the label → None."""
    if kind in ("selectbox", "radio") and len(w.options) >= 2:
        opts = list(w.options)
        i = int(rng.integers(len(opts)))
        fmt = _fmt_of(w)
        labels = getattr(fmt, "__self__", None)  # ui.widgets.choice: format_func is options.__getitem__
        if isinstance(labels, dict) and opts[i] not in labels:
            token = next(t for t, lab in labels.items() if lab == opts[i])
            w.set_value(token)  # choice() controls are set by their token (the label is what AppTest lists)
            return f"{w.key}=#{i}({token!r})"
        if fmt(opts[i]) != opts[i]:
            w.root.session_state[TESTING_KEY][w.id] = str  # the label is already the displayed text
        w.set_value(opts[i])
        return f"{w.key}=#{i}({opts[i]!r})"
    return _ORIGINAL_MOVE(w, kind, rng)


def _fmt_of(w):
    try:
        return w.format_func
    except Exception:  # noqa: BLE001 - no format function stored: identity
        return str


_ORIGINAL_MOVE = walk_module.random_move


@pytest.mark.slow
def test_coherence_explorer_random_walks(monkeypatch):
    monkeypatch.setattr(walk_module, "random_move", _move_with_format_func)
    t0, c0 = time.perf_counter(), time.process_time()
    total = 0
    for seed, steps, params, extra_skip, on_start in WALKS:
        res = walk(PAGE, seed=seed, steps=steps, oracle=oracle, start_params=params,
                   skip_keys=SKIP + tuple(extra_skip), on_start=on_start, timeout=60)
        total += res.states
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"coherence walk: {total} states in {elapsed:.1f} s wall, {cpu:.1f} s CPU; checks {STATS}")
    assert total >= 300
    # Only the open tab is drawn (lazy tabs): the theory cards are checked on the two Theory walks (~95 states), the
    # preview's W1 on the three preview walks (~125 states; thinned sorted lines are not checked against scipy).
    # About a third of those states have no lens feature left (the walk unticks them; the page then asks for one)
    # or a thinned preview: these seeds give 65 theory and 36 W1 checks (2026-11-28).
    assert STATS["theory"] >= 60 and STATS["sizes"] >= 300 and STATS["w1_scipy"] >= 30, STATS
    # CPU time of this process (the scripts run in its threads): the wall time depends on what else the shared
    # machine runs. ~56 s CPU alone; under `make test` coverage tracing adds about 80% (102 s measured), so the cap
    # catches a walk that became several times slower, not the tracer.
    assert cpu <= 150, cpu
