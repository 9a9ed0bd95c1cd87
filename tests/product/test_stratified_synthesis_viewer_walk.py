"""Random walks over the stratified synthesis viewer (issue 12, product test layer).

Two views are walked: **Mean estimation** (the fast path; several data sources) and **Partially private
release**. After every move an oracle recomputes the headline numbers from the visible control values and the
data the page displays, with formulas written here from the specs (never with the page's engine functions):

Mean view (spec stratified_synthesis_viewer.md §2.2–2.7; only the open tab is drawn, so each walk opens one):
- the verdict's "lowered the error of X of Y groups", with X recounted from the repetitions CSV (mean |error| per
  group, per-group release below the global one);
- the group-size chart's kept / pooled / dropped colours follow §2.3 (|G_i| ≤ min_frac·n is small), and the
  group-sizes CSV matches the chart;
- the sizes sum to the n slider and number k (simulated sources);
- Σ log n_i, worst k·log(n/k), best (k−1) + log(n−k), α̂ (MLE by scipy's brentq on ψ(α) − ψ(kα) = mean log v),
  Theorem 10 E = k(ψ(α) − ψ(kα) + log n) at the slider α (mixture) or α̂, and the gap share;
- Laplace estimator: the privacy RMSE ratio √(ΣC_s²)/(n_rel) ÷ C(n)/n over the released strata with
  C(m) = R + √log(m/γ) (paper) or R + √(2 log(2m/γ)) (rigorous); the expected-error curve
  E|N(0, 1/m) + Lap(2C(m)/(mε))| by quadrature (σ_i = 1 sources);
- Coinpress: ρ = ε²/2 and its (ε, δ = 1e-6) conversion ρ + 2√(ρ log(1/δ)).

Partially private view (spec partially_private.md §2.7, §6, §4 Algorithm 1):
- guarantees: PP 4ε/Δ_PP (Δ_PP = κΔ when calibrated), WEM-naive 2ε/(κΔ), WEM-congenial/prior 4ε/(κΔ), rows for
  the active methods only;
- the PP release CSV: cases sum to the public state total when it is on, cases ≥ deaths ≥ 0 when those are on,
  the ⌊qJ⌋ most populous counties exact, |error| and the ℓ₂ loss over all 2J cells recomputed, and the loss
  table equal to the CSV's mean;
- Algorithm 1 toy, exact row: the posterior mean and acceptance by enumerating every table with total s.
"""

from __future__ import annotations

import base64
import io
import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, optimize, special, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from walk import capture_downloads, metric_number, metrics, walk, widget_values  # noqa: E402

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "stratified_synthesis_viewer.py")
REL = 5.1e-4  # cards show 4 significant digits
LONG_RUNS = ("sv_run_mbi", "sv_run_sweep", "pp_run", "pp_run_eps", "pp_run_alpha")
NOT_WALKED = ("sv_upload", "pp_upload", "dataset", "sv_mode") + LONG_RUNS


def _array(v) -> np.ndarray:
    """Plotly JSON arrays, plain or base64 typed arrays ({"dtype", "bdata"})."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v)


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _title(spec: dict) -> str:
    t = spec.get("layout", {}).get("title", {})
    return t.get("text", "") if isinstance(t, dict) else str(t)


def _close(shown: str, expected: float, what: str, rel: float = REL) -> None:
    """``shown`` is ``expected`` to ``rel``, or to half a unit of its last digit where the card shows fewer digits
    (a share as "41%" is 0.41 ± 0.005)."""
    got = metric_number(shown)
    assert got is not None, f"{what}: no number in {shown!r}"
    plain = shown.replace(",", "")
    decimals = re.search(r"\.(\d+)", plain)
    if decimals:
        unit = 10.0 ** -len(decimals.group(1))
    else:  # a whole number's trailing zeros are rounding ("180%" at two figures is 175–185%)
        whole = re.search(r"\d+", plain).group()
        unit = 10.0 ** (len(whole) - len(whole.rstrip("0"))) if whole.strip("0") else 1.0
    if shown.strip().endswith("%"):
        got, unit = got / 100, unit / 100
    tol = max(rel * abs(expected), unit / 2 * (1 + 1e-9)) + 1e-12
    assert abs(got - expected) <= tol, f"{what}: shows {shown!r}, expected {expected!r}"


# ------------------------------------------------------------------------------------------- mean view
def clip_halfwidth(m: float, R: float, gamma: float, mode: str) -> float:
    """Spec §2.2: C(m) = R + √log(m/γ) (paper) or R + √(2 log(2m/γ)) (rigorous)."""
    if mode == "paper":
        return R + math.sqrt(math.log(m / gamma))
    return R + math.sqrt(2 * math.log(2 * m / gamma))


def expected_abs(s: float, b: float) -> float:
    """E|N(0, s²) + Lap(b)| by quadrature over the Laplace part (folded-normal mean inside)."""
    def g(t):
        l = b * t
        return (s * math.sqrt(2 / math.pi) * math.exp(-l * l / (2 * s * s)) + l * (1 - 2 * stats.norm.cdf(-l / s))) \
            * math.exp(-t)
    return integrate.quad(g, 0, math.inf, epsabs=0, epsrel=1e-11, limit=200)[0]


def alpha_mle(shares: np.ndarray) -> float:
    """Spec §2.7: ψ(α) − ψ(kα) = mean log v; equal shares → ∞."""
    k = shares.size
    target = float(np.mean(np.log(shares)))
    f = lambda a: special.digamma(a) - special.digamma(k * a) - target  # noqa: E731
    if np.ptp(shares) == 0 or f(1e8) <= 0:
        return math.inf
    if f(1e-8) >= 0:
        return 1e-8
    return optimize.brentq(f, 1e-8, 1e8, xtol=1e-14, rtol=1e-13, maxiter=500)


def mean_oracle(at, dl: capture_downloads) -> None:
    """The mean view's numbers against the spec's formulas. Only the open tab is drawn (lazy tabs), so each walk
    opens one tab by its link and the oracle checks what that tab shows; the group sizes come from the
    repetitions CSV, which every tab offers, and the verdict above the tabs is checked on every state."""
    try:
        _mean_checks(at, dl)
    finally:
        dl.clear()  # the next state's downloads only (a closed tab or an empty result registers none)


def _mean_checks(at, dl: capture_downloads) -> None:
    v = widget_values(at)
    if v.get("sv_mode") != "mean":
        return
    if any("leave nothing to estimate" in w.value for w in at.warning):
        # Every group dropped: the page says so (spec §2.3: "every stratum dropped" is a ValueError).
        assert v["sv_small"] == "drop"
        return
    if v["sv_source"] == "upload" and any(i.value.startswith("No file yet") for i in at.info):
        # Issue 31: until the user's file is usable the upload view shows no results at all (never another
        # dataset's under the Upload heading): no verdict, no numbers, nothing to download.
        assert not at.success and not at.metric and not dl.files("mean_runs.csv")
        return
    runs = pd.read_csv(io.BytesIO(dl.files("mean_runs.csv")["mean_runs.csv"]))
    eps = float(v["sv_eps"])
    at_eps = runs[np.isclose(runs["epsilon"], eps)]
    grp = at_eps[(at_eps["level"] == "group")]
    first = grp[(grp["rep"] == grp["rep"].min()) & (grp["method"] == grp["method"].iloc[0])]
    sizes_all = first.sort_values("group")["n_i"].to_numpy(float)
    charts = _charts(at)
    sizes_fig = next((c for c in charts if _title(c) == "Group sizes"), None)
    holdout = v["sv_source"] in ("mixture", "acs") and v["sv_weights"] == "holdout"
    if holdout:
        # The CSV's sizes are the private rows left after the public share is held out; the public sizes (which
        # decide the strata) are on the sizes chart only.
        if sizes_fig is None:
            return
        sizes_all = np.concatenate([_array(tr["y"]).astype(float) for tr in sizes_fig["data"]])
    n = float(sizes_all.sum())
    sizes = sizes_all[sizes_all > 0]
    k = sizes.size
    small_rule = v["sv_small"]
    status = ["kept" if sz > v["sv_min_frac"] * n else ("pooled" if small_rule == "pool" else "dropped")
              for sz in sizes_all]
    # The verdict: groups helped = groups whose mean |error| over the repetitions is lower per group than with
    # one global release, recomputed here from the CSV rows.
    glob = "coinpress" if v["sv_estimator"] == "coinpress" else "naive"
    per = "strat_coinpress" if glob == "coinpress" else "stratified"
    mean_err = grp.groupby(["method", "group"])["abs_err"].mean()
    released = [g for g in range(int(grp["group"].max()) + 1)
                if (per, g) in mean_err.index and not math.isnan(mean_err[(per, g)]) and (glob, g) in mean_err.index]
    helped = sum(1 for g in released if mean_err[(per, g)] < mean_err[(glob, g)])
    verdict = next(e.value for e in list(at.success) + list(at.info) + list(at.warning)
                   if "lowered the error of" in e.value or "released no group" in e.value).replace("\\", "")
    if released and helped < len(released):
        assert f"lowered the error of {helped} of {len(released)} groups" in verdict, verdict
    elif released:
        assert f"lowered the error of all {len(released)} groups" in verdict, verdict
    source = v["sv_source"]
    if source in ("mixture", "acs", "categorical"):
        assert n == v["sv_n"], f"sizes sum to {n:g}, n slider {v['sv_n']}"
    if source == "mixture":
        assert sizes_all.size == v["sv_k"]
    if sizes_fig is not None:
        shown = {}
        for tr in sizes_fig["data"]:
            for x, y in zip(tr["x"], _array(tr["y"])):
                shown[str(x)] = (float(y), tr["name"].lower())
        assert sorted(sz for sz, _ in shown.values()) == sorted(sizes_all[sizes_all > 0].tolist()) or \
            sorted(sz for sz, _ in shown.values()) == sorted(sizes_all.tolist())
        for label, (size, st_) in shown.items():
            want = "kept" if size > v["sv_min_frac"] * n else ("pooled" if small_rule == "pool" else "dropped")
            assert st_ == want, f"group {label} of {size:g} / {n:g} shown {st_}, rule says {want}"
        csv = pd.read_csv(io.BytesIO(dl.files("group_sizes.csv")["group_sizes.csv"]))
        assert dict(zip(csv["group"].astype(str), zip(csv["records"].astype(float), csv["status"]))) == shown
        m = metrics(at)
        logsum = float(np.sum(np.log(sizes)))
        worst, best = k * math.log(n / k), (k - 1) + math.log(n - k)
        a_hat = alpha_mle(sizes / n)
        _close(m["Σ log(group size), these sizes"], logsum, "Σ log n_i")
        _close(m["Worst case (equal sizes)"], worst, "worst")
        _close(m["Best case (one big group)"], best, "best")
        if math.isfinite(a_hat):
            _close(m["Fitted imbalance α̂"], a_hat, "α̂")
        else:
            assert m["Fitted imbalance α̂"] == "unbounded (equal sizes)"
        a_used = v["sv_alpha"] if source == "mixture" else a_hat
        if math.isfinite(a_used):
            E = k * (special.digamma(a_used) - special.digamma(k * a_used) + math.log(n))
            _close(m["Expected Σ log (Theorem 10)"], E, "Theorem 10 E")
            _close(m["Share of the way to the best case"], (worst - E) / (worst - best), "gap share")
    m = metrics(at)
    if v["sv_estimator"] == "coinpress":
        if "Budget (each method)" in m:  # the population tab
            rho = eps**2 / 2
            _close(m["Budget (each method)"], rho, "ρ")
            _close(m["As (ε, δ = 10⁻⁶)-DP"], rho + 2 * math.sqrt(rho * math.log(1e6)), "ρ → (ε, δ)")
            assert "Typical noise, per group ÷ one global release" not in m
        return
    R, gamma, mode = float(v["sv_R"]), float(v["sv_gamma"]), v["sv_clip"]
    C = lambda s: clip_halfwidth(s, R, gamma, mode)  # noqa: E731
    kept = [sz for sz, st_ in zip(sizes_all, status) if st_ == "kept" and sz > 0]
    pooled = sum(sz for sz, st_ in zip(sizes_all, status) if st_ == "pooled")
    strata = kept + ([pooled] if pooled else [])
    n_rel = sum(strata)
    if "Typical noise, per group ÷ one global release" in m:  # the population tab
        strat = math.sqrt(8 * sum(C(sz) ** 2 for sz in strata)) / (n_rel * eps)
        naive = math.sqrt(8) * C(n) / (n * eps)
        _close(m["Typical noise, per group ÷ one global release"], strat / naive, "RMSE ratio")
        _close(m["Budget, per group"], eps, "budget")
    err_fig = next((c for c in charts if _title(c).startswith("Error of each group's mean")), None)
    if err_fig is not None and source in ("mixture", "acs") and v["sv_sigma_mode"] == "equal":
        curve = next(tr for tr in err_fig["data"] if tr.get("name") == "Per group, expected error")
        xs, ys = _array(curve["x"]), _array(curve["y"])
        for i in (0, len(xs) // 3, len(xs) - 1):
            mi = float(xs[i])
            want = expected_abs(1 / math.sqrt(mi), 2 * C(mi) / (mi * eps))
            assert ys[i] == pytest.approx(want, rel=1e-6), f"expected |error| at m = {mi:g}"


# ------------------------------------------------------------------------------- partially private view
def pp_guarantee(method: str, eps: float, sens: float, kappa: float, calibrate: bool) -> float:
    """Spec partially_private.md §2.7 / P18."""
    if method == "pp":
        return 4 * eps / (kappa * sens if calibrate else sens)
    if method == "wem_naive":
        return 2 * eps / (kappa * sens)
    return 4 * eps / (kappa * sens)


LABELS = {"pp": "PP (post-processing)", "wem_naive": "WEM-naive", "wem_congenial": "WEM-congenial",
          "wem_prior": "WEM-prior"}


def alg1_exact(y, s, a0, eps, sens):
    """Posterior mean of p and acceptance Σ_x DM(x)·r^‖y−x‖₁ by enumerating every 3-cell table with total s."""
    x0, x1 = np.meshgrid(np.arange(s + 1), np.arange(s + 1), indexing="ij")
    ok = x0 + x1 <= s
    X = np.stack([x0[ok], x1[ok], s - x0[ok] - x1[ok]], axis=1).astype(float)
    a0 = np.asarray(a0, float)
    A = a0.sum()
    g = special.gammaln
    log_dm = g(A) + g(s + 1) - g(s + A) + np.sum(g(X + a0) - g(a0) - g(X + 1), axis=1)
    log_w = log_dm - np.abs(np.asarray(y) - X).sum(axis=1) * eps / sens
    w = np.exp(log_w - log_w.max())
    mean = (w[:, None] * (X + a0) / (A + s)).sum(axis=0) / w.sum()
    return mean, float(np.exp(special.logsumexp(log_w)))


def pp_oracle(at, dl: capture_downloads) -> None:
    v = widget_values(at)
    eps, sens, kappa = float(v["pp_epsilon"]), float(v["pp_sensitivity"]), float(v["pp_kappa"])
    calib = bool(v["pp_calibrate"])
    st_on, order, nonneg = bool(v["pp_state_total"]), bool(v["pp_order"]), bool(v["pp_nonneg"])
    prior_on = bool(v["pp_prior"]) and st_on
    active = [mm for mm in v["pp_methods"] if mm != "wem_prior" or prior_on]
    frames = [d.value for d in at.dataframe]
    gt = next(f for f in frames if "guaranteed ε" in f.columns)
    want_rows = [mm for mm in LABELS if mm in active]
    assert list(gt["method"]) == [LABELS[mm] for mm in want_rows]
    for mm, got in zip(want_rows, gt["guaranteed ε"]):
        assert got == pytest.approx(pp_guarantee(mm, eps, sens, kappa, calib), rel=1e-12), mm
    if "pp" in active:
        rel = pd.read_csv(io.BytesIO(dl.files("ppd_release.csv")["ppd_release.csv"]))
        rel = rel[rel["method"] == "pp"]
        J = rel["county"].nunique()
        q = math.floor(float(v["pp_exact_share"]) * J + 1e-9)
        exact = set(rel.drop_duplicates("county").nlargest(q, "population", keep="first")["county"]) if q else set()
        losses = []
        for _, d in rel.groupby("rep"):
            c, dd = d["cases"].to_numpy(), d["deaths"].to_numpy()
            tc, td = d["true_cases"].to_numpy(), d["true_deaths"].to_numpy()
            if st_on:
                assert c.sum() == tc.sum(), "PP cases do not add up to the public state total"
            if order:
                assert np.all(c >= dd), "cases < deaths"
            if nonneg:
                assert np.all(c >= 0) and np.all(dd >= 0), "negative counts"
            assert np.all(d["abs_err_cases"].to_numpy() == np.abs(c - tc))
            if exact:
                pub = d["county"].isin(exact).to_numpy()
                assert np.all(c[pub] == tc[pub]) and np.all(dd[pub] == td[pub]), "exact counties not exact"
            loss = math.sqrt(float(np.sum((c - tc) ** 2) + np.sum((dd - td) ** 2)))
            assert d["total_l2"].to_numpy() == pytest.approx(loss, rel=1e-12)
            losses.append(loss)
        table = next(f for f in frames if "mean total ℓ₂ loss" in f.columns)
        row = table[table["method"] == LABELS["pp"]]
        assert float(row["mean total ℓ₂ loss"].iloc[0]) == pytest.approx(np.mean(losses), rel=1e-12)
    alg = next((f for f in frames if "acceptance rate" in f.columns), None)
    if alg is not None:
        y = [float(t) for t in v["pp_alg_y"].split(",")] if "pp_alg_y" in v else [6, 1, 4]
        a0 = [float(t) for t in v["pp_alg_alpha"].split(",")] if "pp_alg_alpha" in v else [3, 3, 2]
        mean, acc = alg1_exact(y, int(v["pp_alg_s"]), a0, float(v["pp_alg_eps"]), float(v["pp_alg_delta"]))
        for i in range(3):
            assert alg[f"mean p{i + 1}"].iloc[0] == pytest.approx(mean[i], rel=1e-8, abs=1e-12)
        assert alg["acceptance rate"].iloc[0] == pytest.approx(acc, rel=1e-8, abs=1e-300)


# ----------------------------------------------------------------------------------------------- walks
MEAN_WALKS = [
    # (seed, start link, extra keys not walked, steps)
    # (each opens one tab of the mean view by its link: only the open tab is drawn)
    (11, {"sv_reps": "3", "sv_mean_tab": "Group sizes"}, ("sv_reps",), 70),
    (12, {"sv_reps": "3", "sv_source": "acs", "sv_mean_tab": "Population"}, ("sv_reps",), 50),
    (13, {"sv_reps": "3", "sv_source": "adult"}, ("sv_reps",), 40),
    (14, {"sv_reps": "3", "sv_estimator": "coinpress", "sv_n": "2000", "sv_mean_tab": "Population"},
     ("sv_reps", "sv_n"), 40),
    (15, {"sv_n": "1000", "sv_mean_tab": "Group sizes"}, ("sv_n", "sv_source"), 30),
]
PP_WALKS = [(21, 40), (22, 40)]


@pytest.mark.slow
def test_random_walks_mean_and_partially_private_views():
    c0 = time.process_time()  # CPU of this process (AppTest runs the page in its threads), not wall time
    states = 0
    with capture_downloads() as dl:
        for seed, params, skip, steps in MEAN_WALKS:
            r = walk(PAGE, seed=seed, steps=steps, start_params=params, skip_keys=NOT_WALKED + skip,
                     oracle=lambda at: mean_oracle(at, dl))
            states += r.states
        for seed, steps in PP_WALKS:
            r = walk(PAGE, seed=seed, steps=steps, start_params={"sv_mode": "partial"},
                     skip_keys=NOT_WALKED, oracle=lambda at: pp_oracle(at, dl))
            states += r.states
    cpu = time.process_time() - c0
    print(f"stratified viewer walks: {states} states in {cpu:.1f} CPU-s")
    assert states >= 300
    assert cpu < 240  # ~40 s on an idle core; a guard against a slow page, not a benchmark
