"""Run sortition-algorithms' maximin on one instance (JSON on stdin) and print its minimum selection probability.

Runs in its own environment (bench/_scratch/venv-oracle, made by `make bench-targets` from
bench/requirements-oracle.txt): sortition-algorithms needs attrs ≥ 25, dp-accounting (our runtime) pins attrs < 24,
so the two cannot share one venv. Input: {"people": [{"person_id": ..., feature: value, ...}], "quotas":
[[feature, value, min, max], ...], "k": k}. Output: {"min_probability": p, "seconds": s}.
"""

import json
import sys
import time

from sortition_algorithms import Settings
from sortition_algorithms.committee_generation.maximin import find_distribution_maximin
from sortition_algorithms.features import read_in_features
from sortition_algorithms.people import read_in_people


def main() -> None:
    data = json.load(sys.stdin)
    k = int(data["k"])
    feats = sorted({q[0] for q in data["quotas"]})
    body = [{"feature": f, "value": v, "min": str(lo), "max": str(hi)} for f, v, lo, hi in data["quotas"]]
    features, _, _ = read_in_features(["feature", "value", "min", "max"], body, k)
    settings = Settings(id_column="person_id", columns_to_keep=[])
    people_rows = [{key: str(val) for key, val in p.items()} for p in data["people"]]
    people, _ = read_in_people(["person_id", *feats], people_rows, features, settings)
    t0 = time.perf_counter()
    committees, probs, _ = find_distribution_maximin(features, people, k, [])
    seconds = time.perf_counter() - t0
    sel = {p["person_id"]: 0.0 for p in data["people"]}
    for c, q in zip(committees, probs):
        for pid in c:
            sel[pid] += q
    print(json.dumps({"min_probability": min(sel.values()), "seconds": seconds}))


if __name__ == "__main__":
    main()
