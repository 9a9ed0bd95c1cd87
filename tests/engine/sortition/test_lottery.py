"""Tests for dpdash/sortition/lottery.py: m equally likely panels and the public draw.

Each person's chance over the m panels is recounted here from the published CSV bytes; the draw is recomputed
with hashlib here, and the standalone script is run in a subprocess on the file.
"""

from __future__ import annotations

import csv
import hashlib
import io
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from dpdash.sortition import core
from dpdash.sortition import lottery as lt
from dpdash.sortition import objectives as ob


@pytest.fixture(scope="module")
def lotteries():
    out = {}
    for name, pool, quotas, k in [("tiny", core.tiny_pool(), core.tiny_quotas(), 4),
                                  ("vol", core.volunteer_pool(150, rng=2), core.volunteer_quotas(15), 15)]:
        cmp = ob.compare_objectives(pool, quotas, k=k, objectives=("leximin", "goldilocks"), rng=0,
                                    cpu_limit_s=60)
        out[name] = (cmp.instance, cmp.results)
    return out


def recount(data: bytes, ids) -> tuple[np.ndarray, dict]:
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
    by_panel: dict[int, list[str]] = {}
    for r in rows:
        by_panel.setdefault(int(r["panel"]), []).append(r["person_id"])
    c = Counter(r["person_id"] for r in rows)
    return np.array([c.get(i, 0) for i in ids], float), by_panel


@pytest.mark.parametrize("m", [pytest.param(m, marks=pytest.mark.slow) if m == 10_000 else m for m in lt.M_CHOICES])
def test_every_chance_within_the_stated_bound(lotteries, m):
    for inst, results in lotteries.values():
        for res in results:
            u = lt.round_lottery((inst, res), m=m, rng=5, seconds=1.0)
            data = lt.panels_csv(u)
            counts, by_panel = recount(data, inst.person_ids)
            assert sorted(by_panel) == list(range(1, m + 1))
            assert all(len(v) == inst.k and len(set(v)) == inst.k for v in by_panel.values())
            chance = counts / m
            # the lottery's own chances, recomputed from its compositions
            pt = (res.panel_probabilities @ res.panels) / inst.sizes
            lot = pt[inst.type_index]
            gap = np.abs(chance - lot).max()
            assert gap <= u.bound + 1e-12
            assert gap == pytest.approx(u.max_change, abs=1e-12)
            assert u.bound <= lt.a_priori_type_bound((inst, res), m=m) + 1.0 / m + 1e-12
            # every panel meets every quota
            members = {pid: i for i, pid in enumerate(inst.person_ids)}
            for v in by_panel.values():
                comp = np.bincount(inst.type_index[[members[p] for p in v]], minlength=len(inst.sizes))
                cnt = inst.A @ comp
                assert np.all(cnt >= inst.lo) and np.all(cnt <= inst.hi)


def test_m_above_the_distinct_panels_is_explained(lotteries):
    inst, results = lotteries["tiny"]
    u = lt.round_lottery((inst, results[0]), m=1_000, rng=0, seconds=1.0)
    assert u.distinct_panels == len(set(u.panels)) < 1_000
    assert any("appear more than once" in n and f"{u.distinct_panels:,}" in n for n in u.notes)


def test_draw_is_sha256_of_the_seed_and_the_script_reproduces_it(lotteries, tmp_path):
    inst, results = lotteries["vol"]
    u = lt.round_lottery((inst, results[0]), m=1_000, rng=0, seconds=1.0)
    data = lt.panels_csv(u)
    seed = "  07 12  33 41\t45 49 "
    number = int(hashlib.sha256(b"07 12 33 41 45 49").hexdigest(), 16) % 1_000 + 1
    assert lt.draw_panel_number(seed, 1_000) == number
    f = tmp_path / "panels.csv"
    f.write_bytes(data)
    script = tmp_path / "draw.py"
    script.write_text(lt.draw_script(m=1_000, file_sha256=hashlib.sha256(data).hexdigest()))
    out = subprocess.run([sys.executable, str(script), seed, str(f)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0] == f"panel {number} of 1000"
    _, by_panel = recount(data, inst.person_ids)
    assert [x for x in lines[1:] if x] == by_panel[number]
    # a changed file is refused
    f.write_bytes(data.replace(b"\n1,", b"\n2,", 1))
    out = subprocess.run([sys.executable, str(script), seed, str(f)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "not the one published" in out.stderr


def test_bad_input_is_refused_in_words(lotteries):
    inst, results = lotteries["tiny"]
    for bad in (0, -5, 2.5, True, 10**6):
        with pytest.raises(ValueError, match="whole number from 1 to 100,000"):
            lt.round_lottery((inst, results[0]), m=bad)
    with pytest.raises(ValueError, match="it is empty"):
        lt.draw_panel_number("   ", 100)
