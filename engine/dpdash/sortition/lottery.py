"""A lottery that can be drawn in public: m equally likely numbered panels and a draw from a published seed.

Source: Flanigan, Kehne, Procaccia, "Fair sortition made transparent", NeurIPS 2021 [FKP21]: round a lottery over
panels to a *uniform* lottery over m panels (m = 100, 1,000, 10,000) so a room can draw one number, keeping each
person's chance close to the lottery's. Their rounding works on panels of people (pipage rounding, or an ILP
minimising the largest change); ours is a documented two-step variant that uses the lottery's types
(:mod:`dpdash.sortition.objectives`):

1. *Compositions.* Each composition P of the lottery (a count vector over types, weight q_P) gets a_P copies with
   a_P ∈ {⌊m q_P⌋, ⌈m q_P⌉} and Σ a_P = m; among those roundings a HiGHS MIP (CPU-bounded; largest-remainder
   rounding if it stops) minimises D = max_t |S_t − m N_t π_t| / (m N_t), S_t = Σ_P a_P c_{P,t} the seats type t
   gets over the m panels. D is the largest change of a *type's* mean chance.
2. *People.* The m panels are filled type by type from a shuffled cyclic list of the type's members (c_{P,t}
   consecutive members for each copy), so every member of type t sits on ⌊S_t/N_t⌋ or ⌈S_t/N_t⌉ of the m panels.

Bound [derived]: each person's chance over the m panels (appearances / m) differs from the lottery's by at most
D + 1/m, and by at most the value ``max_change`` this module computes and reports (≤ D + 1/m). D itself is at most
(1/m)·max_t Σ_{P fractional} c_{P,t}/N_t, since each |a_P − m q_P| < 1 (a weak a-priori bound; the MIP does much
better and the reported ``max_change`` is what holds).

The draw: the seed is text typed in after the panels file is published (for example a future national lottery
result); the panel number is SHA-256(seed, whitespace collapsed, UTF-8) mod m, plus 1. The bias of mod m is at most
m / 2^256 per number. :func:`draw_script` gives a standalone Python script (standard library only) that anyone can
run on the published file to reproduce the draw.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import numpy as np

from dpdash.common.validation import as_generator

__all__ = ["M_CHOICES", "UniformLottery", "round_lottery", "panels_csv", "file_sha256", "seed_number",
           "draw_panel_number", "draw_script", "a_priori_type_bound"]

#: The sizes a user chooses from (issue 32).
M_CHOICES = (100, 1_000, 10_000)
#: CPU seconds for the composition-rounding MIP before it falls back to largest remainders.
ROUND_SECONDS = 20.0


@dataclass(frozen=True)
class UniformLottery:
    """m numbered, equally likely panels (panel i is ``panels[i - 1]``) and how far they move anyone's chance."""

    m: int
    person_ids: tuple[str, ...]
    panels: tuple[tuple[str, ...], ...]
    copies: np.ndarray                   # a_P: copies of each composition of the lottery
    lottery_probabilities: np.ndarray    # each person's chance under the lottery rounded
    probabilities: np.ndarray            # each person's chance over the m panels
    max_change: float                    # largest |probabilities − lottery_probabilities|
    type_change: float                   # D: largest change of a type's mean chance
    bound: float                         # D + 1/m, the stated guarantee (max_change ≤ bound)
    distinct_panels: int
    method: str
    notes: tuple[str, ...]


def _check_m(m) -> int:
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= int(m) <= 100_000:
        raise ValueError(f"The number of panels m must be a whole number from 1 to 100,000 (for example "
                         f"{', '.join(f'{c:,}' for c in M_CHOICES)}); got {m!r}.")
    return int(m)


def _round_compositions(q, P, N, m, seconds):
    """a (copies per composition) with a ∈ {⌊mq⌋, ⌈mq⌉}, Σa = m, minimising the largest type change."""
    import highspy

    base = np.floor(m * q + 1e-12).astype(np.int64)
    frac = m * q - base
    need = int(m - base.sum())
    fr = np.flatnonzero(frac > 1e-12)
    # largest remainder: the fallback, and a valid start
    a = base.copy()
    a[fr[np.argsort(-frac[fr], kind="stable")[:need]]] += 1
    if need == 0 or fr.size == 0:
        return a, "exact (every m·q is a whole number)"
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", float(seconds))
    nf = fr.size
    T = P.shape[1]
    # variables: x_j (binary, one per fractional composition), D
    h.addVars(nf, np.zeros(nf), np.ones(nf))
    h.changeColsIntegrality(nf, np.arange(nf, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * nf))
    h.addVar(0.0, highspy.kHighsInf)
    h.changeColCost(nf, 1.0)
    idx = np.arange(nf, dtype=np.int32)
    h.addRow(float(need), float(need), nf, idx, np.ones(nf))
    inf = highspy.kHighsInf
    for t in range(T):
        coef = P[fr, t] / (m * N[t])
        if not np.any(coef):
            continue
        const = float(frac[fr] @ coef)
        cols = np.concatenate([idx, [nf]]).astype(np.int32)
        # Σ x_j coef_j − const ≤ D  and  ≥ −D
        h.addRow(-inf, const, nf + 1, cols, np.concatenate([coef, [-1.0]]))
        h.addRow(const, inf, nf + 1, cols, np.concatenate([coef, [1.0]]))
    h.run()
    x = np.asarray(h.getSolution().col_value)[:nf]
    if x.size == nf and np.all(np.abs(x - np.round(x)) < 1e-6) and np.all((x > -0.5) & (x < 1.5)):
        cand = base.copy()
        cand[fr] += np.round(x).astype(np.int64)
        if int(cand.sum()) == m and _type_change(cand, P, N, q, m) <= _type_change(a, P, N, q, m):
            opt = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            return cand, ("MIP minimising the largest change (optimal)" if opt else
                          "MIP minimising the largest change (best found within the CPU limit)")
    return a, "largest remainders (the MIP found nothing better within its CPU limit)"


def _type_change(a, P, N, q, m) -> float:
    return float(np.max(np.abs((a @ P) / (m * N) - (q @ P) / N)))


def round_lottery(result, *, m: int, rng=None, seconds: float = ROUND_SECONDS) -> UniformLottery:
    """Round an objective's lottery (:class:`objectives.ObjectiveResult` with the :class:`QuotaInstance` it came
    from, passed as ``(instance, result)``) to m equally likely numbered panels of people. See the module
    docstring for the method and its bound; ``rng`` only shuffles who of a type comes first (before publication).
    """
    inst, res = result
    m = _check_m(m)
    g = as_generator(rng)
    t0 = time.process_time()
    P = np.asarray(res.panels, dtype=np.int64)
    q = np.asarray(res.panel_probabilities, float)
    q = q / q.sum()
    N = inst.sizes.astype(float)
    a, method = _round_compositions(q, P, N, m, seconds)
    pi_t = (q @ P) / N
    D = _type_change(a, P, N, q, m)
    # people: a shuffled cyclic list per type, c_{P,t} consecutive members per copy
    members = [g.permutation(np.flatnonzero(inst.type_index == t)) for t in range(len(N))]
    ptr = np.zeros(len(N), dtype=np.int64)
    order = np.repeat(np.arange(len(P)), a)
    order = order[g.permutation(order.size)]           # panel numbers carry no information about composition
    panels = []
    ids = inst.person_ids
    appear = np.zeros(len(ids), dtype=np.int64)
    for j in order:
        chosen = []
        for t in np.flatnonzero(P[j]):
            L = members[t]
            take = (ptr[t] + np.arange(P[j, t])) % L.size
            ptr[t] = (ptr[t] + P[j, t]) % L.size
            chosen.extend(L[take].tolist())
        appear[chosen] += 1
        panels.append(tuple(ids[i] for i in sorted(chosen)))
    probs = appear / m
    lot = pi_t[inst.type_index]
    change = float(np.max(np.abs(probs - lot)))
    distinct = len(set(panels))
    notes = []
    if distinct < m:
        notes.append(f"The {m:,} panels hold {distinct:,} different panels: some panels appear more than once "
                     f"(a panel's chance is its number of copies ÷ {m:,}). That is expected when m is larger than "
                     "the number of different panels the lottery uses, and it keeps everyone's chance.")
    if not res.complete:
        notes.append("The lottery rounded was not finished by its solver; the chances kept are its own.")
    if time.process_time() - t0 > seconds + 5:
        notes.append("Rounding took longer than its CPU limit.")
    return UniformLottery(m=m, person_ids=tuple(ids), panels=tuple(panels), copies=a, lottery_probabilities=lot,
                          probabilities=probs, max_change=change, type_change=D, bound=D + 1.0 / m,
                          distinct_panels=distinct, method=method, notes=tuple(notes))


def panels_csv(lot: UniformLottery) -> bytes:
    """The numbered panels file: header ``panel,person_id``, one row per seat, panels 1…m in order (UTF-8, LF).
    Publish it (and its SHA-256) before the seed is known."""
    lines = ["panel,person_id"]
    for i, p in enumerate(lot.panels, start=1):
        lines.extend(f"{i},{pid}" for pid in p)
    return ("\n".join(lines) + "\n").encode("utf-8")


def seed_number(seed_text: str) -> int:
    """The integer a typed seed stands for: SHA-256 of the text with whitespace runs collapsed to one space."""
    if not isinstance(seed_text, str) or not seed_text.strip():
        raise ValueError("Type the published seed (for example the lottery numbers drawn on a stated date); "
                         "it is empty.")
    norm = " ".join(seed_text.split())
    return int.from_bytes(hashlib.sha256(norm.encode("utf-8")).digest(), "big")


def draw_panel_number(seed_text: str, m: int) -> int:
    """The panel number (1…m) a published seed draws: seed_number mod m, plus 1."""
    return seed_number(seed_text) % _check_m(m) + 1


def draw_script(*, m: int, file_name: str = "panels.csv", file_sha256: str | None = None) -> str:
    """A standalone Python script (standard library only) that reproduces the draw from the published file:
    ``python draw.py "07 12 33 41 45 49"`` prints the panel number and its members."""
    m = _check_m(m)
    check = (f"EXPECTED_SHA256 = {file_sha256!r}\n" if file_sha256 else "EXPECTED_SHA256 = None\n")
    return f'''"""Reproduce a public panel draw: the panel number is SHA-256(seed) mod M, plus 1.

Usage: python draw.py "<seed as published>" [{file_name}]
"""
import csv
import hashlib
import sys

M = {m}
{check}

def main():
    seed = " ".join(sys.argv[1].split())
    path = sys.argv[2] if len(sys.argv) > 2 else {file_name!r}
    data = open(path, "rb").read()
    digest = hashlib.sha256(data).hexdigest()
    if EXPECTED_SHA256 and digest != EXPECTED_SHA256:
        sys.exit("The panels file is not the one published (SHA-256 " + digest + ").")
    number = int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest(), "big") % M + 1
    members = [row["person_id"] for row in csv.DictReader(data.decode("utf-8").splitlines())
               if int(row["panel"]) == number]
    print("panel", number, "of", M)
    for person in members:
        print(person)


if __name__ == "__main__":
    main()
'''


def file_sha256(data: bytes) -> str:
    """SHA-256 of the panels file's bytes, to publish with it."""
    return hashlib.sha256(data).hexdigest()


def a_priori_type_bound(result, *, m: int) -> float:
    """(1/m)·max_t Σ_{P: m q_P not whole} c_{P,t}/N_t: what any floor/ceiling rounding of step 1 can change a type's
    mean chance by (each |a_P − m q_P| < 1)."""
    inst, res = result
    m = _check_m(m)
    q = np.asarray(res.panel_probabilities, float)
    q = q / q.sum()
    frac = m * q - np.floor(m * q + 1e-12)
    P = np.asarray(res.panels, float)
    fr = frac > 1e-12
    if not fr.any():
        return 0.0
    return float(np.max(P[fr].sum(axis=0) / inst.sizes)) / m


