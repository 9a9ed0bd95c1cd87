"""Tab views of the sampling designer: everything each results tab shows, built once from the engine's results.

One pure function per results tab (issue 22 item 1): :func:`simple_view` (simple random samples),
:func:`random_view` (random sample size, Theorem 3), :func:`rounding_view` (rounding and data-dependent sizes,
Theorem 6), :func:`cluster_view` (cluster sampling, Theorems 7–9) and :func:`strata_view` (stratified sampling
and allocation, Theorem 11, §6). The page's cards, verdict boxes, red banners, calibration box, charts' inputs
with their alt texts and captions, CSV tables, report and "Copy as code" parameters all read the returned
:class:`dpdash.common.view.TabView`, so no sentence can restate a number differently from the card beside it.

Layout conventions inside a view (the page renders them, ``ui/views/sampling_*.py``):

- ``figures["groups"]``: the cards' groups, each ``{"title", "status", "caption", "cards": (headline labels),
  "notes": (warning texts), "shortcut": grey shortcut text or None}``; headlines not in a group are report-only;
- ``figures["errors"]``: red-banner texts (no amplification guaranteed, privacy made worse);
- ``figures[<name>]``: a chart's inputs ``{"table", …builder kwargs…, "alt", "caption"}``;
- ``sections[0]`` titled :data:`CALIBRATION` is the calibration box (sentence, design, grey shortcut line).

References
----------
003_4b386133f61617e9.txt, paper 1 (Bun, Drechsler, Gaboardi, McMillan, Sarathy, FORC 2022); spec
``shared/specs/sampling_designer.md`` §4, §7. Issue 22: the two-stage cluster banner and the census (r = 1) are
fixed in :func:`dpdash.sampling.verdicts.cluster_verdict` / ``stratified_verdict`` and
:func:`dpdash.sampling.core.amplify_randomized_rounding`.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from dpdash.sampling import core as sp
from dpdash.sampling import census as cs
from dpdash.sampling import figures as sf
from dpdash.sampling import verdicts as sv
from dpdash.sampling.frames import parse_numbers
from dpdash.accounting import tones
from dpdash.common.view import Headline, ReportSection, Sentence, TabView, frozen_map, with_stakes

__all__ = ["simple_view", "random_view", "rounding_view", "cluster_view", "strata_view", "g4", "CALIBRATION"]

SEED = "003_4b386133f61617e9.txt, paper 1"
PAPER = (f"{SEED}: Bun, Drechsler, Gaboardi, McMillan, Sarathy, Controlling Privacy Loss in Sampling Schemes "
         "(FORC 2022)")
CALIBRATION = "Calibration: per-record ε to use on the sample"
CALIB_SENTENCE = ("To guarantee ε′ = {target} for everyone in the population of {n}, run your mechanism on the "
                  "sample with per-record ε = {lam} (Laplace scale = {scale} × sensitivity).")
NO_AMP_BANNER = ("No amplification guaranteed: at this sampling rate the Theorem 6 bound ({val}) is larger than "
                 "the ε you spend on the sample ({eps}). Lower the rate below r* = {rstar}.")
CLUSTER_CAPTION = ("Large clusters let an analysis guess which clusters were drawn, which removes the benefit of "
                   "sampling (Theorems 7–9).")
DEGRADATION_BANNER = ("This design can make privacy worse: one person can change the sample sizes by {delta}, "
                      "which a released count reveals at {loss}.")
SCHEME_TITLES = {"srswor": "SRS without replacement", "poisson": "Poisson sampling", "srswr": "SRS with replacement"}
SCHEME_CURVES = {"srswor": "SRSWOR", "poisson": "Poisson", "srswr": "SRSWR"}   # sampling_figures' curve names


def g4(v) -> str:
    """4 significant digits (spec §7; the full value goes in the tooltip); whole numbers with separators.

    Large values keep separators, not exponents (a weighted mean size of 15,000 read "1.5e+04").

    >>> g4(0.0138503030), g4(12), g4(None), g4(float("inf")), g4(9998.46), g4(15000.000001), g4(4.2e-7)
    ('0.01385', '12', '—', '∞', '9,998', '15,000', '4.2e-07')
    """
    if v is None:
        return "—"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    v = float(v)
    if not math.isfinite(v):
        return "∞" if v > 0 else str(v)
    if 1e3 <= abs(v) < 1e15:
        return f"{float(f'{v:.4g}'):,.0f}"
    return f"{v:.4g}"


def tone_of(epsilon: float, epsilon_population: float) -> str:
    """The news of sampling: good when it cuts ε by more than 10%, a warning when it keeps (almost) all of it. The
    stake of the guarantee itself (:func:`stake`) raises it further in every view."""
    return "warning" if sv.gain_words(epsilon, epsilon_population) else "good"


def stake(epsilon_population: float | None, delta_population: float | None = 0.0):
    """The tone of the population guarantee ε′ (and δ′) by ``dpdash.accounting.tones`` (issue 34 item 3: a green box
    beside ε′ = 5.4). Always the bound that is the guarantee: the upper ε′ of a random-size design, the design's
    bound of a cluster design, Theorem 11's ε′ only when it covers every stratum."""
    d = delta_population if delta_population is not None and math.isfinite(delta_population) else 0.0
    return tones.privacy_tone(epsilon=epsilon_population, delta=d, name="the population ε′")


def _calibration(cal: sp.Calibration, *, n: int, design: str = "", shortcut_label: str = "",
                 shortcut_gives: float | None = None) -> ReportSection:
    """The calibration box as a report section: the sentence, the design it is for, the grey shortcut line."""
    lines = [CALIB_SENTENCE.format(target=g4(cal.epsilon_target), n=f"{n:,}", lam=g4(cal.epsilon_sample),
                                   scale=g4(cal.noise_scale_per_sensitivity))]
    if design:
        lines.append(design)
    if cal.epsilon_sample_paper_approx is not None and shortcut_label:
        tail = f" — that would actually give ε′ = {g4(shortcut_gives)}." if shortcut_gives is not None else "."
        lines.append(f"Paper shortcut ({shortcut_label}): ε = {g4(cal.epsilon_sample_paper_approx)}{tail}")
    return ReportSection(CALIBRATION, tuple(lines))


def _cal_headline(cal: sp.Calibration, target: float) -> Headline:
    return Headline("ε to spend on the sample for the target", g4(cal.epsilon_sample), raw=cal.epsilon_sample,
                    note=f"target ε′ = {g4(target)}; {cal.source}")


def _view(**kw) -> TabView:
    for name in ("tables", "figures", "params", "script"):
        kw[name] = frozen_map(kw.get(name))
    return TabView(**kw)


# ---------------------------------------------------------------------------------------------------------------
# Tab 1: simple random samples (Theorem 2; [BBG18])
# ---------------------------------------------------------------------------------------------------------------

def simple_design(*, n: int, mode: str, m: int, rate: float) -> tuple[int, float, tuple[Sentence, ...]]:
    """(m, q, notes) the Simple tab uses: m is capped at n; a rate gives m = floor(q·n + ½) ≥ 1 for SRS."""
    notes: list[Sentence] = []
    if mode == "m":
        if m > n:
            notes.append(Sentence(sv.sample_exceeds_population(m=m, n=n), "warning"))
            m = n
        return int(m), m / n, tuple(notes)
    q = float(rate)
    m = max(1, min(n, math.floor(q * n + 0.5)))
    if m != q * n:
        notes.append(Sentence(f"SRS draws a whole number of records: m = {m:,} (rate m/n = {g4(m / n)}); Poisson "
                              f"sampling uses q = {g4(q)} itself.", "neutral"))
    return int(m), q, tuple(notes)


def simple_view(*, epsilon: float, delta: float, n: int, m: int, rate: float, schemes: Sequence[str],
                target: float, show_rounding: bool = True,
                cluster_band: tuple[float, float, float] | None = None) -> TabView:
    """Tab 1: population ε′ (and δ′) per scheme, verdict, calibration, Lemma 16 note, the ε′-vs-rate chart.

    ``m``, ``rate``: the design as :func:`simple_design` settled it; ``cluster_band``: the Cluster tab's design
    (ℓ/k, Theorem 7 lower, Theorem 8 upper) to overlay, or None.
    """
    eps, q = float(epsilon), float(rate)
    results = []
    if "srswor" in schemes:
        results.append(("srswor", sp.amplify_srswor(epsilon=eps, m=m, n=n, delta=delta), f"m = {m:,} of n = {n:,}"))
    if "poisson" in schemes:
        results.append(("poisson", sp.amplify_poisson(epsilon=eps, rate=q, delta=delta), f"rate q = {g4(q)}"))
    if "srswr" in schemes:
        results.append(("srswr", sp.amplify_srswr(epsilon=eps, m=m, n=n), f"{m:,} draws from {n:,}"))
    headlines, groups = [], []
    for scheme, a, what in results:
        title = SCHEME_TITLES[scheme]
        headlines += [Headline("population ε′", g4(a.epsilon_population), raw=a.epsilon_population,
                               note=f"{title}. Source: {a.source}."),
                      Headline("population δ′", g4(a.delta_population), raw=a.delta_population,
                               note=f"{title}. Shown as — where not computed (with replacement).")]
        groups.append({"title": title, "status": a.status, "caption": f"{what}; relation: {a.neighbour} neighbours",
                       "cards": (len(headlines) - 2, len(headlines) - 1), "notes": tuple(a.warnings),
                       "shortcut": None if a.epsilon_paper_approx is None else
                       f"shortcut q·ε = {g4(a.epsilon_paper_approx)}"})
    verdicts: list[Sentence] = []
    if not results:
        verdicts.append(Sentence("Pick at least one sampling scheme to see its guarantee.", "neutral"))
    else:
        scheme, a, _ = results[0]
        text = sv.simple_verdict(epsilon=eps, epsilon_population=a.epsilon_population,
                                 rate=q if scheme == "poisson" else m / n, scheme=scheme, m=m, n=n, delta=delta,
                                 delta_population=a.delta_population, shortcut=a.epsilon_paper_approx)
        verdicts.append(Sentence(text, tone_of(eps, a.epsilon_population)))
        verdicts = list(with_stakes(verdicts, stake(a.epsilon_population, a.delta_population)))
        if sv.gain_words(eps, a.epsilon_population):
            verdicts.append(Sentence("To gain from sampling, sample a smaller share of the population: lower m "
                                     "(or q).", "warning"))
    # the rate the calibrated design really samples at: m/n for SRS, q for Poisson (they differ when q·n is not
    # whole); SRS wins when both are shown, and the box says which it used
    srs = "poisson" not in schemes or "srswor" in schemes or "srswr" in schemes
    q_cal = m / n if srs else q
    cal = sp.calibrate_srswor(epsilon_target=target, rate=q_cal)
    gives = sp.amplify_poisson(epsilon=cal.epsilon_sample_paper_approx, rate=q_cal).epsilon_population
    design = (f"SRS without replacement of m = {m:,} from n = {n:,} (rate {g4(q_cal)})" if srs
              else f"Poisson sampling at rate q = {g4(q_cal)}") + "; Theorem 2 inverted."
    lemma16 = sp.lemma16_bound(epsilon=eps, m=m, m_prime=min(m + 1, n + 1), n=n)
    df = sf.rate_curve_table(epsilon=eps, n=n)
    cur = float(sp.amplification_map(q, eps))
    rate_fig = {
        "table": df, "epsilon": eps, "schemes": [c for s, c in SCHEME_CURVES.items() if s in schemes],
        "current_rate": q, "show_rounding": bool(show_rounding), "cluster_band": cluster_band,
        "alt": f"Line chart of the population ε′ against the sampling rate from 0.01% to 100% for ε = {g4(eps)}: "
               f"ε′ rises from near 0 to ε; your design (rate {g4(q)}) sits at ε′ = {g4(cur)}.",
        "caption": "Reading: each curve is the population ε′ you get for a given sampling rate when your mechanism "
                   "spends ε per record on the sample (Theorem 2; Poisson and with-replacement from [BBG18]). Below "
                   "the dotted line sampling helps; the shaded zone is worse than not sampling at all. The grey "
                   "dashed line is the paper's q·ε shortcut, which is far too optimistic at large ε (Erratum E1)."
                   + (" The orange curve is proportional sampling with randomised rounding (Theorem 6): it helps "
                      "only at small rates." if show_rounding else "")
                   + (" The green mark is the cluster design of the Cluster tab at its cluster rate ℓ/k "
                      "(Theorems 7–8)." if cluster_band is not None else "")}
    return _view(
        headlines=tuple(headlines) + (_cal_headline(cal, target),), verdicts=tuple(verdicts),
        tables={"rate_curve": df}, figures={"groups": tuple(groups), "errors": (), "rate": rate_fig},
        question="What guarantee ε′ does the population get when the ε-DP statistic is computed on a simple random "
                 "sample, and what ε may be spent for a target ε′?",
        params={"ε on the sample": g4(eps), "δ on the sample": g4(delta) if delta else "0 (pure ε)",
                "population n": f"{n:,}", "sample size m": f"{m:,}", "sampling rate q": g4(q),
                "schemes": ", ".join(SCHEME_TITLES[s] for s, _, _ in results) or "none",
                "target population ε′": g4(target)},
        sections=(_calibration(cal, n=n, design=design, shortcut_label="ε′/q, [a] §2.4, Erratum E1",
                               shortcut_gives=gives),
                  ReportSection("Why the sample size matters (Lemma 16)", (
                      "If one person joins a population of n and the sample size also changes from m to m′, the "
                      "two outputs are log(1 + m/(n+1)·(e^(2ε) − 1)) + |m − m′|·ε apart (Lemma 16, Appendix B; "
                      f"note the 2ε). Here, with m′ = m + 1: {g4(lemma16)}. That is why designs whose sample size "
                      "depends on the data need care (Rounding tab).",))),
        script={"epsilon": eps, "n": n, "m": m, "rate": q, "delta": delta, "epsilon_target": target},
        epsilon=results[0][1].epsilon_population if results else None,
        delta=(results[0][1].delta_population or None) if results else None)


# ---------------------------------------------------------------------------------------------------------------
# Tab 2: random, data-independent sample size (Theorem 3)
# ---------------------------------------------------------------------------------------------------------------

def random_design(*, n: int, family: str, base: str, mean: float, low: int, high: int
                  ) -> tuple[float, int, int, tuple[Sentence, ...]]:
    """(mean, low, high, notes): controls above n are cut to n, uniform bounds put in order (said in a note)."""
    shape = base if family == "mixture" else family
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
    return mean, low, high, ((Sentence("Adjusted: " + "; ".join(notes) + ".", "warning"),) if notes else ())


def random_view(*, epsilon: float, n: int, target: float, family: str, base: str, mean: float, sd: float,
                low: int, high: int, p_full: float) -> TabView:
    """Tab 2: Theorem 3's lower and upper ε′, the size law's plain and tilted means, calibration, P2 and P3.

    Controls as :func:`random_design` settled them. Populations above the dense laws' 10⁶ (up to
    :data:`dpdash.sampling.census.MAX_N` = 10⁹) use :mod:`dpdash.sampling.census` (cost independent of n).
    """
    eps = float(epsilon)
    shape = base if family == "mixture" else family
    current_sd = sd if family == "gaussian" and sd > 0 else None
    if n <= sp.MAX_RANDOM_SIZE_N:   # the dense law of n + 1 log-probabilities
        law = sp.size_law_from_controls(n, family=family, mean=mean, sd=sd, low=low, high=high, base=base,
                                        p_full=p_full)
        rv = sf.random_size_view(law, epsilon=eps, epsilon_target=target, mean=mean, current_sd=current_sd)
    else:   # census sizes (issue 23 item 4): windowed and closed-form sums, cost independent of n
        law = cs.census_size_law(n, family=family, mean=mean, sd=sd, low=low, high=high, base=base, p_full=p_full)
        b = cs.amplify(law, epsilon=eps)
        sig = sf.sigma_curve_table(n=n, mean=mean, epsilon=eps, current_sd=current_sd,
                                   current=b if current_sd is not None else None)
        rv = sf.RandomSizeView(b, cs.calibrate(law, epsilon_target=target), cs.pmf_table(law, epsilon=eps), sig)
    b, cal = rv.bounds, rv.calibration
    text = sv.random_size_verdict(epsilon=eps, n=n, mean_size=b.mean_size, tilted_mean=b.tilted_mean,
                                  lower=b.epsilon_lower, upper=b.epsilon_upper)
    verdicts = list(with_stakes([Sentence(text, tone_of(eps, b.epsilon_upper))], stake(b.epsilon_upper)))
    if sv.gain_words(eps, b.epsilon_upper):
        fix = ("remove the chance of sampling everyone (mixture) or lower ε" if family == "mixture" else
               "use a smaller ε or a narrower spread σ" if shape == "gaussian" else
               "use a smaller ε or a smaller largest size")
        verdicts.append(Sentence(f"To gain from sampling here, {fix}: the weight e^(ε·m) puts the bound at the "
                                 "largest sample sizes.", "warning"))
    headlines = (
        Headline("lower ε′ (Thm 3)", g4(b.epsilon_lower), raw=b.epsilon_lower,
                 note="Some ε-DP mechanism does at least this badly."),
        Headline("upper ε′ (Thm 3)", g4(b.epsilon_upper), raw=b.epsilon_upper,
                 note="Every ε-DP mechanism does at least this well."),
        Headline("average sample size", g4(b.mean_size), raw=b.mean_size, note="E_t[m], the mean of the size law t."),
        Headline("weighted average size", g4(b.tilted_mean), raw=b.tilted_mean,
                 note="E_t̃[m], the mean with each size weighted by e^(ε·m); the bounds depend on it (Theorem 3)."),
        _cal_headline(cal, target))
    sig = rv.sigma_table
    law_words = {"gaussian": f"Gaussian, mean {mean:,.0f}, σ = {g4(sd)}", "point": f"always {mean:,.0f}",
                 "uniform": f"uniform from {low:,} to {high:,}"}
    figures = {
        "groups": ({"title": "Theorem 3", "status": "paper",
                    "caption": "relation: M unbounded → sampled mechanism bounded, n fixed and known",
                    "cards": (0, 1, 2, 3), "notes": (),
                    "shortcut": f"shortcut (E_t̃[m]/n)·ε = {g4(b.epsilon_paper_approx)}"},),
        "errors": (),
        "sigma": {"table": sig, "epsilon": eps, "current_sd": sd if family == "gaussian" else None,
                  "alt": f"Line chart of the lower and upper population ε′ for a Gaussian sample size centred at "
                         f"{mean:,.0f} of {n:,}, against its spread σ from {g4(sig['sd'].min())} to "
                         f"{g4(sig['sd'].max())}: the bounds go from {g4(sig['upper'].iloc[0])} to "
                         f"{g4(sig['upper'].iloc[-1])} (ε = {g4(eps)}).",
                  "caption": "Reading: for a Gaussian sample size centred at your mean, the guarantee degrades from "
                             "about (mean/n)·ε towards the full ε as the spread σ grows, because the tilt rewards "
                             "large sizes (Theorem 3, Figure 2 of the paper; the discretisation is ours, Erratum "
                             "E9)." + (" The cross marks the cards' values (the CSV's row with current = True)."
                                       if family == "gaussian" else "")},
        "pmf": {"table": rv.pmf_table, "tilted_mean": b.tilted_mean,
                "alt": f"Two curves over the sample size: how likely each size is (average {b.mean_size:,.0f}) and "
                       f"the same weighted by e^(ε·m) (average {b.tilted_mean:,.0f}), each scaled to its own peak.",
                "caption": "Reading: blue is how likely each sample size is; orange is the same distribution "
                           "re-weighted by e^(ε·m), each drawn relative to its own peak. The guarantee depends on the "
                           "orange mean (dotted line), not the blue one (Theorem 3)."}}
    return _view(
        headlines=headlines, verdicts=tuple(verdicts), tables={"sigma": sig, "pmf": rv.pmf_table}, figures=figures,
        question="What guarantee ε′ does the population get when the sample size is itself random (drawn "
                 "independently of the data)?",
        params={"ε on the sample": g4(eps), "population n": f"{n:,}",
                "sample size law": law_words[shape] + (f", plus a chance {g4(p_full)} of everyone"
                                                       if family == "mixture" else ""),
                "target population ε′": g4(target)},
        sections=(_calibration(cal, n=n, shortcut_label="ε′·n/E_t[m]"),
                  ReportSection("Sources", (b.source, "Discretised Gaussian size law: this product's convention "
                                                      "(Erratum E9)"))),
        script={"epsilon": eps, "n": n, "family": family, "mean": mean, "sd": sd, "low": low, "high": high,
                "base": base, "p_full": p_full, "epsilon_target": target},
        epsilon=b.epsilon_upper)


# ---------------------------------------------------------------------------------------------------------------
# Tab 3: rounding and data-dependent sizes (Theorem 6, §4)
# ---------------------------------------------------------------------------------------------------------------

def rounding_view(*, epsilon: float, n: int, target: float, rate: float, pair_n: int, saw_from: int, saw_len: int,
                  delta_text: str, max_entries: int = 200) -> TabView:
    """Tab 3: Theorem 6 bound, crossover r*, size channel of the pair (N, N + 1), degradation, sawtooth P4."""
    eps, r = float(epsilon), float(rate)
    amp = sp.amplify_randomized_rounding(epsilon=eps, rate=r)
    rstar = sp.randomized_rounding_crossover(epsilon=eps)
    text = sv.rounding_verdict(epsilon=eps, rate=r, epsilon_population=amp.epsilon_population, crossover=rstar)
    verdicts = list(with_stakes([Sentence(text, "warning" if r > rstar else tone_of(eps, amp.epsilon_population))],
                                stake(amp.epsilon_population)))
    errors = ((NO_AMP_BANNER.format(val=g4(amp.epsilon_population), eps=g4(eps), rstar=g4(rstar)),)
              if r > rstar else ())
    cal = sp.calibrate_randomized_rounding(epsilon_target=target, rate=r)
    gives = sp.amplify_randomized_rounding(epsilon=cal.epsilon_sample_paper_approx, rate=r).epsilon_population
    if n < 1 / r:
        verdicts.append(Sentence(f"Theorem 6 covers populations of at least 1/r = {g4(1 / r)} records; the "
                                 f"population size n = {n:,} is smaller, so this calibration does not apply to it.",
                                 "warning"))
    channel = []
    for meth in ("deterministic", "randomized"):
        a = sp.rounding_size_pmf(pair_n, rate=r, method=meth)
        b = sp.rounding_size_pmf(pair_n + 1, rate=r, method=meth)
        loss = sp.size_channel_loss(a, b, epsilon=eps)
        channel.append(Headline(f"{meth} rounding: loss from the size", g4(loss), raw=loss,
                                note=f"Sizes {a} vs {b}. A lower bound on ε′ for any ε-DP mechanism (§4.2, Prop. 4)."))
    pair_notes = ((f"N = {pair_n:,} is below 1/r = {g4(1 / r)}: Theorem 6 does not cover this pair.",)
                  if pair_n < 1 / r else ())
    try:
        deltas = parse_numbers(delta_text, max_entries=max_entries)
        if not deltas:
            raise ValueError("enter at least one number")
        d = sp.degradation_loss(deltas, epsilon=eps)
        degradation = Sentence(f"Degradation (§4.1): releasing all counts loses ε·‖Δ‖₁ = {g4(d.loss_all_counts)}; "
                               f"releasing one count loses ε·‖Δ‖∞ = {g4(d.loss_one_count)}.", "neutral")
    except ValueError as exc:
        degradation = Sentence(f"Δ list not understood ({exc}). Expected numbers separated by commas, e.g. 2, -3, 5.",
                               "warning")
    lo = saw_from if saw_from > 0 else math.ceil(1 / r - 1e-9)
    saw = sf.sawtooth_table(epsilon=eps, rate=r, n_min=lo, n_max=lo + saw_len - 1)
    # the randomised-rounding size channel is at most the Poisson-rate-r amplification of ε (derived, §4.3)
    worst = sp.amplify_poisson(epsilon=eps, rate=r).epsilon_population
    headlines = (Headline("Theorem 6 bound ε′", g4(amp.epsilon_population), raw=amp.epsilon_population,
                          note=f"upper bound, randomised rounding. Source: {amp.source}."),
                 Headline("crossover rate r*(ε)", g4(rstar), raw=rstar,
                          note="Above this rate the bound exceeds ε (derived, Erratum E3)."),
                 Headline("1/r (smallest population covered)", g4(1 / r), raw=1 / r),
                 *channel, _cal_headline(cal, target))
    figures = {
        "groups": ({"title": "Theorem 6", "status": "paper", "caption": "relation: unbounded", "cards": (0, 1, 2),
                    "notes": (), "shortcut": f"shortcut 6rε = {g4(amp.epsilon_paper_approx)}"},
                   {"title": f"Size channel for the pair ({pair_n:,}, {pair_n + 1:,})", "status": "derived",
                    "caption": "", "cards": (3, 4), "notes": pair_notes, "shortcut": None}),
        "errors": errors, "degradation": degradation,
        "sawtooth": {"table": saw, "epsilon": eps, "theorem6": amp.epsilon_population, "worst_channel": worst,
                     "alt": f"Line chart over population sizes {lo:,} to {lo + saw_len - 1:,}: with deterministic "
                            f"rounding the loss from the sample size jumps to ε = {g4(eps)} at "
                            f"{int((saw['deterministic'] > 0).sum()):,} sizes; with randomised rounding it stays at "
                            f"or below {g4(worst)}, under the Theorem 6 bound {g4(amp.epsilon_population)}.",
                     "caption": "Reading: how much a released sample size alone reveals when one person joins a "
                                "population of N. Deterministic rounding (red) jumps to the full ε whenever the "
                                "rounded size changes; randomised rounding (blue) stays below the green line (the "
                                "most a size can reveal with randomised rounding, which equals Poisson sampling at "
                                "rate r), itself below the Theorem 6 bound for all mechanisms (orange). §4.1–§4.3; "
                                "the size-channel computation is derived."}}
    return _view(
        headlines=headlines, verdicts=tuple(verdicts), tables={"sawtooth": saw}, figures=figures,
        question="What guarantee ε′ does the population get when the sample is a fixed share r of the population, "
                 "rounded to a whole number?",
        params={"ε on the sample": g4(eps), "sampling rate r": g4(r),
                "pair of populations": f"{pair_n:,} and {pair_n + 1:,}", "target population ε′": g4(target)},
        sections=(_calibration(cal, n=n, shortcut_label="ε′/(6r), [a] §6.3, Erratum E2", shortcut_gives=gives,
                               design=f"Proportional sample of r·n with randomised rounding, r = {g4(r)}; Theorem 6 "
                                      "inverted exactly."),
                  ReportSection("Degradation", (degradation.text,)),
                  ReportSection("Sources", (amp.source, "Crossover rate and size channel: derived (spec §4.6, "
                                                        "Erratum E3)"))),
        script={"epsilon": eps, "rate": r, "pair_n": pair_n, "epsilon_target": target},
        epsilon=amp.epsilon_population)


# ---------------------------------------------------------------------------------------------------------------
# Tab 4: cluster sampling (Theorems 7–9; two-stage bound derived)
# ---------------------------------------------------------------------------------------------------------------

def cluster_view(*, epsilon: float, target: float, sizes: Sequence[int], n_drawn: int, within_rate: float,
                 sizes_words: str, ec_share: float = 1.0, epsilon_test: float = 2.0) -> TabView:
    """Tab 4: Theorems 7–8 worst bounds, the two-stage bound (the design's guarantee when r_w < 1), Theorem 9,
    calibration, heat map P5 and per-size bars P6."""
    eps, rw, ell = float(epsilon), float(within_rate), int(n_drawn)
    s = np.asarray(sizes, dtype=float)
    k = int(s.size)
    b = sp.cluster_bounds(s, epsilon=eps, n_drawn=ell)
    two = sp.two_stage_cluster_upper(s, epsilon=eps, n_drawn=ell, within_rate=rw)
    cal = sp.calibrate_cluster(s, epsilon_target=target, n_drawn=ell, within_rate=rw)
    design = two if rw < 1 else b.worst_upper   # the guarantee of the design the controls describe
    equal = int(s[0]) if s.size and np.all(s == s[0]) else None
    text = sv.cluster_verdict(epsilon=eps, n_drawn=ell, n_clusters=k, worst_lower=b.worst_lower,
                              worst_upper=b.worst_upper, naive_srs=b.naive_srs, equal_size=equal, within_rate=rw,
                              two_stage=two)
    verdicts = list(with_stakes([Sentence(text, tone_of(eps, design))], stake(design)))
    if sv.gain_words(eps, design):
        r_try = 0.1 if rw > 0.1 else rw / 10
        two_try = sp.two_stage_cluster_upper(s, epsilon=eps, n_drawn=ell, within_rate=r_try)
        verdicts.append(Sentence("To gain from sampling, use smaller clusters (split them) or sample within the "
                                 f"drawn clusters: keeping {sv.pct(r_try)} of each drawn cluster gives ε′ ≤ "
                                 f"{g4(two_try)} (two-stage bound; set the within-cluster rate).", "warning"))
    thm9 = sp.cluster_test_bound(epsilon_conditional=ec_share * eps, epsilon_test=epsilon_test, n_clusters=k,
                                 n_drawn=ell)
    headlines = (
        Headline("upper ε′ (Thm 8)", g4(b.worst_upper), raw=b.worst_upper,
                 note="Single stage (everyone in a drawn cluster kept), every ε-DP mechanism: the two largest "
                      "clusters."),
        Headline("lower ε′ (Thm 7)", g4(b.worst_lower), raw=b.worst_lower,
                 note="Single stage, some ε-DP mechanism reaches this: largest cluster + smallest other."),
        Headline("two-stage upper ε′", g4(two), raw=two,
                 note=f"Within-cluster rate r_w = {g4(rw)}: Theorem 8 with ε replaced by log(1 + r_w·(e^ε − 1)) "
                      "(derived, §5.2); equals the Theorem 8 bound at r_w = 1."),
        Headline("Theorem 9 lower bound ε̃", g4(thm9), raw=thm9,
                 note="ε̃ ≥ log(1 + (e^ε_c − 1)·q/(q + e^(−ε_T)·(1 − q)))."),
        Headline("simple-random-sample reading (wrong here)", g4(b.naive_srs), raw=b.naive_srs,
                 note=f"log(1 + q·(e^ε − 1)) at the cluster rate q = ℓ/k = {g4(b.rate_clusters)}"),
        _cal_headline(cal, target))
    equal_c = float(np.sort(s)[-2:].sum() / 2)
    heat = sf.cluster_heatmap_table(n_clusters=k, n_drawn=ell)
    bars = sf.cluster_bars_table(s, b)
    figures = {
        "groups": ({"title": "Theorems 7–8", "status": "paper",
                    "caption": "relation: one record added to a cluster; M unbounded. Two-stage bound and "
                               "whole-design summary derived.", "cards": (0, 1, 2), "notes": (),
                    "shortcut": f"SRS reasoning at cluster rate ℓ/k = {g4(b.rate_clusters)} would claim "
                                f"{g4(b.naive_srs)}"},),
        "thm9": (3,), "errors": (),
        "heatmap": {"table": heat, "current_size": equal_c, "current_epsilon": eps,
                    "alt": f"Heat map of the share of ε kept by single-stage cluster sampling ({ell:,} of {k:,} "
                           "clusters), over cluster sizes 0 to 1,000 and ε from 0.001 to 10: dark (most of the gain "
                           f"kept) only for small clusters and small ε; your design (size {g4(equal_c)}, "
                           f"ε = {g4(eps)}) is marked.",
                    "caption": CLUSTER_CAPTION + " Each cell is the share of ε kept (ε′/ε) for equal clusters of that "
                               f"size with ℓ/k = {g4(ell / k)}, everyone in a drawn cluster kept: light means little "
                               "survives of the sampling gain. The cross marks your design (for unequal sizes, the "
                               "mean of the two largest)" + (f"; sampling within clusters (r_w = {g4(rw)}) lowers it "
                                                             f"to the two-stage bound {g4(two)}." if rw < 1 else ".")},
        "bars": {"table": bars, "epsilon": eps, "naive": b.naive_srs,
                 "alt": f"Chart of the guarantee for a person joining a cluster, for each of {len(bars):,} distinct "
                        f"cluster sizes ({g4(s.min())} to {g4(s.max())} records): lower bounds up to "
                        f"{g4(b.worst_lower)}, upper bounds up to {g4(b.worst_upper)}, against ε = {g4(eps)} and the "
                        f"wrong simple-random-sample value {g4(b.naive_srs)}.",
                 "caption": "Reading: for a person joining a cluster of each size (single stage), the orange mark is "
                            "what some mechanism can be forced to leak (Theorem 7) and the blue one what no "
                            "mechanism exceeds (Theorem 8). The grey line is what treating the clusters as a simple "
                            "random sample would wrongly claim."}}
    return _view(
        headlines=headlines, verdicts=tuple(verdicts), tables={"heatmap": heat, "bars": bars}, figures=figures,
        question="What guarantee ε′ does the population get when whole clusters are sampled?",
        params={"ε on the sample": g4(eps), "clusters drawn": f"{ell:,} of {k:,}",
                "cluster sizes": f"{equal:,} each" if equal is not None else sizes_words,
                "within-cluster rate": g4(rw), "target population ε′": g4(target)},
        sections=(_calibration(cal, n=int(s.sum()),
                               design=(f"Two-stage design: ℓ = {ell:,} of k = {k:,} clusters, then {sv.pct(rw)} of "
                                       "each drawn cluster; the two-stage bound inverted." if rw < 1 else
                                       f"ℓ = {ell:,} of k = {k:,} clusters, everyone in a drawn cluster kept; "
                                       "Theorem 8 inverted.")),
                  ReportSection("Sources", ("Theorems 7–8, §5.1; Theorem 9, §5.2; two-stage bound derived from §5.2 "
                                            "and [BBG18]",))),
        script={"epsilon": eps, "sizes": tuple(int(x) for x in s), "n_drawn": ell, "within_rate": rw,
                "epsilon_target": target},
        epsilon=design)


# ---------------------------------------------------------------------------------------------------------------
# Tab 5: stratified sampling and allocation (Theorem 11, §6)
# ---------------------------------------------------------------------------------------------------------------

def strata_view(*, epsilon: float, target: float, strata: dict, m: int, value_max: float, m_min: int,
                methods: Sequence[str], within_bounds: bool = True, strata_words: str = "",
                draw: tuple | None = None) -> TabView:
    """Tab 5: Theorem 11 for proportional allocation (a census when m = N), calibration, the allocation
    comparison (P7, P8), Neyman's sensitivity to one added person (P9) and the paper's CBP example.

    ``strata``: :func:`dpdash.sampling.core.strata_from_table`'s arrays; ``m`` ≤ ΣN_h and the minimum per stratum
    feasible (the page says so otherwise); ``draw``: the last randomised allocation (seed, sizes) or None.
    """
    eps = float(epsilon)
    N, S, names = strata["N_h"], strata["S_h"], list(strata["names"])
    total = int(N.sum())
    r = m / total
    census = m >= total
    pa = sp.proportional_allocation(N, rate=r, epsilon=eps)
    a = pa.amplification
    covered = pa.theorem11_applies
    uncovered = [names[h] for h in range(len(N)) if r * N[h] < 1 - 1e-9]
    bounds = tuple((float(lo), float(hi)) for lo, hi in zip(strata["lo_h"], strata["hi_h"]))
    shift = sp.neyman_worst_shift(N, strata["mean_h"], S, m=m, bounds=bounds, within_bounds=within_bounds)
    deg = sp.degradation_loss(shift.delta_rounded, epsilon=eps)
    design_text = sv.stratified_verdict(epsilon=eps, m=m, population=total, epsilon_population=a.epsilon_population,
                                        covered=covered, shift_total=int(shift.l1_rounded),
                                        shift_loss=deg.loss_all_counts)
    verdicts = [Sentence(design_text, "warning" if shift.l1_rounded > 0 or not covered or census
                         else tone_of(eps, a.epsilon_population))]
    if covered:  # uncovered: the lead is a warning already and there is no ε′ to judge
        verdicts = list(with_stakes(verdicts, stake(a.epsilon_population)))
    card_notes = [w for w in a.warnings if not w.startswith(("Theorem 11 does not cover", "Theorem 6 applies only"))]
    if uncovered:
        card_notes.append("Theorem 11 does not cover stratum " + ", ".join(f"“{x}”" for x in uncovered)
                          + f" (r·N_h < 1 at r = {g4(r)}).")
    if np.any(strata["eps_h"] != eps):
        card_notes.append("This card uses the global ε; per-stratum ε_h only enter the allocation comparison below.")
    cal = sp.calibrate_randomized_rounding(epsilon_target=target, rate=r)
    gives = (None if cal.epsilon_sample_paper_approx is None else
             sp.amplify_randomized_rounding(epsilon=cal.epsilon_sample_paper_approx, rate=r).epsilon_population)
    headlines = [
        Headline("population ε′", g4(a.epsilon_population) if covered else "—",
                 raw=a.epsilon_population if covered else None,
                 note=(f"Source: {a.source}." if covered else
                       "Not covered: Theorem 11 needs r·N_h ≥ 1 in every stratum (see the warning below).")),
        Headline("shift before rounding", g4(shift.l1), raw=shift.l1,
                 note="Largest total change of the unrounded Neyman sizes one added person causes (L1)."),
        Headline("sample sizes moved in total", f"{int(shift.l1_rounded):,}", raw=float(shift.l1_rounded),
                 note="‖Δ‖₁ of the whole-number sample sizes."),
        Headline("loss if all counts are released", g4(deg.loss_all_counts), raw=deg.loss_all_counts,
                 note="ε·‖Δ‖₁ (§4.1)."),
        Headline("loss if one count is released", g4(deg.loss_one_count), raw=deg.loss_one_count,
                 note="ε·‖Δ‖∞ (§4.1)."),
        _cal_headline(cal, target)]
    errors = ((DEGRADATION_BANNER.format(delta=f"{int(shift.l1_rounded)} in total (up to {int(shift.linf_rounded)} "
                                               "in one stratum)", loss=f"ε·‖Δ‖₁ = {g4(deg.loss_all_counts)}"),)
              if shift.l1_rounded > 0 else ())
    tables: dict = {}
    figures: dict = {}
    if methods:
        alloc = sf.allocation_table(N, S, m=m, value_max=value_max, epsilon=strata["eps_h"], names=names,
                                    methods=methods, m_min=m_min)
        wide = alloc.pivot(index="stratum", columns="method", values="m_h").reindex(names)[list(methods)]
        tot = sf.allocation_totals(alloc)
        av = sv.allocation_verdict({k: float(v) for k, v in tot["total"].items()})
        if av:
            verdicts.append(Sentence(av, "neutral"))
        headlines += [Headline(f"variance of the private mean, {sf.METHOD_LABELS[k]}", g4(v), raw=float(v))
                      for k, v in tot["total"].items()]
        tables.update(allocation=alloc, allocation_wide=wide.rename(columns=sf.METHOD_LABELS),
                      totals=sf.for_people(tot.rename(index=sf.METHOD_LABELS).rename_axis("allocation")),
                      totals_raw=tot.reset_index())
        figures["allocation"] = {
            "table": alloc,
            "alt": f"Grouped bar chart: records sampled from each of {len(N)} strata under "
                   + ", ".join(sf.METHOD_LABELS[x] for x in methods) + f" allocation of m = {m:,}.",
            "caption": "Reading: how many records each method takes from each stratum. Neyman favours strata with "
                       "large spread (§6.2); proportional follows the stratum sizes; the privacy-aware allocation "
                       "also counts the noise each stratum's private mean needs."}
        figures["variance"] = {
            "table": tot.reset_index(),
            "alt": "Stacked bar chart of the variance of the private mean per allocation method, split into sampling "
                   "and privacy noise: " + "; ".join(f"{sf.METHOD_LABELS[k]} {g4(v)}" for k, v in tot["total"].items())
                   + ".",
            "caption": "Reading: total error (variance) of the private population mean for each method, split into "
                       "sampling error and privacy noise. The method with the shortest bar is the most accurate "
                       "under our formulation (derived)."}
    else:
        verdicts.append(Sentence("Pick at least one allocation method to compare.", "neutral"))
    shift_df = sf.shift_table(shift, names)
    cbp = sp.cbp_example()
    cdf = sf.cbp_table(cbp)
    big = int(np.abs(cdf["delta"]).max())
    tables.update(shift=shift_df, cbp=cdf)
    figures.update(
        groups=({"title": "Proportional allocation, randomised rounding (Thm 11)" if not census else
                 "A census: everyone sampled", "status": a.status,
                 "caption": f"rate r = m/N = {g4(r)}; relation: {a.neighbour} (Erratum E12)", "cards": (0,),
                 "notes": tuple(card_notes),
                 "shortcut": None if a.epsilon_paper_approx is None else f"shortcut 6rε = {g4(a.epsilon_paper_approx)}",
                 "condition": f"Theorem 11 needs r·N_h ≥ 1 in every stratum, i.e. N_h ≥ {g4(1 / r)}."},
                {"title": "Neyman sensitivity", "status": "derived", "caption": "", "cards": (1, 2, 3, 4),
                 "notes": (), "shortcut": None}),
        errors=errors,
        shift={"table": shift_df,
               "alt": "Bar chart of the change in each stratum's Neyman sample size when the most influential person "
                      "is added: " + ", ".join(f"{str(nm)[:30]} {int(d):+d}"
                                               for nm, d in zip(names, shift.delta_rounded)) + ".",
               "caption": "Reading: the change in each stratum's sample size when the single most influential person "
                          "is added (§6.2). Any non-zero integer change can be read off released stratum counts, "
                          "costing ε per unit of change (§4.1).",
               "worst": f"Worst addition: value {g4(shift.value)} in stratum “{names[shift.stratum]}” (S_h becomes "
                        f"{g4(shift.sd_after)}); searched on a 201-point grid per stratum, ddof 0."},
        cbp={"table": cdf,
             "text": f"Printed Neyman allocations for m = {cbp.m:,}: they sum to {int(cbp.allocation_p.sum()):,} and "
                     f"{int(cbp.allocation_p_prime.sum()):,}, not {cbp.m:,} (Erratum E4; shown verbatim). The largest "
                     f"change is {big} samples in one stratum.",
             "alt": "Bar chart of the change in the paper's 12 printed Neyman sample sizes between two neighbouring "
                    f"populations; the largest change is {big}.",
             "caption": "Reading: a neighbouring population (one establishment different) shifts the Neyman sample "
                        f"sizes, by {big} in one stratum; released stratum sizes would reveal this."},
        draw=None if draw is None else
        f"Draw (seed {draw[0]}): {', '.join(map(str, draw[1]))} (total {sum(draw[1]):,})")
    return _view(
        headlines=tuple(headlines), verdicts=tuple(verdicts), tables=tables, figures=figures,
        question="How many to sample per stratum, and what guarantee ε′ does the population get?",
        params={"ε on the sample": g4(eps), "strata": f"{strata_words} ({len(N)} strata, {total:,} units)",
                "total sample size m": f"{m:,}", "value bound U": g4(value_max), "minimum per stratum": str(m_min),
                "methods": ", ".join(sf.METHOD_LABELS[x] for x in methods) or "none",
                "target population ε′": g4(target)},
        sections=(_calibration(cal, n=total, shortcut_label="ε′/(6r), [a] §6.3, Erratum E2", shortcut_gives=gives,
                               design=(f"A census (m = N = {total:,}): no sampling, so ε = ε′." if census else
                                       f"Proportional allocation at r = m/N = {g4(r)}; Theorem 11 inverted exactly."
                                       + ("" if covered else " Not a guarantee here: Theorem 11 does not cover "
                                                             "every stratum (see the warning)."))),
                  ReportSection("Sources", ("Theorem 11 (§6.3); Neyman sensitivity and privacy-aware allocation "
                                            "derived (spec §4.9, Errata E4, E12, E13)",))),
        script={"epsilon": eps, "N_h": N, "S_h": S, "epsilon_h": strata["eps_h"], "m": m, "value_max": value_max,
                "methods": tuple(methods), "m_min": m_min, "epsilon_target": target},
        epsilon=a.epsilon_population if covered else None)


def strata_feasible(N: np.ndarray, *, m: int, m_min: int) -> str | None:
    """Why the minimum per stratum cannot be met (a sentence), or None."""
    if len(N) * m_min > m or np.any(N < m_min):
        return (f"The minimum per stratum ({m_min}) cannot be met: it needs {len(N) * m_min} units and every "
                "stratum at least that large. Lower the minimum or raise m.")
    return None


def frame_to_editor(frame: sp.FrameSummary) -> pd.DataFrame:
    """An uploaded frame's strata as the strata editor's rows (S_h = 1, bounds [0, 1] without a value column)."""
    t = frame.strata
    has_v = t["mean_h"].notna().all()
    return pd.DataFrame({"stratum": t["stratum"].astype(str), "N_h": t["N_h"].astype(int),
                         "S_h": t["sd_h"].fillna(0.0) if has_v else 1.0,
                         "mean_h": t["mean_h"] if has_v else 0.0, "lo_h": t["min_h"] if has_v else 0.0,
                         "hi_h": t["max_h"] if has_v else 1.0, "eps_h": [""] * len(t)})
