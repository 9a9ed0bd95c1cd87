"""The "Copy as code" scripts read an uploaded file as the page did (issue 31): the page's "Read NA, N and None as
missing" choice travels into the script's read_uploaded_csv call, and the script's lines then read the same cells as
missing that the test counts in the file itself."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from dpdash.coherence import core as co
from dpdash.coherence import script as coherence_script
from dpdash.stratify import script as stratify_script

CSV = ("region,answer,age\n" + "".join(f"{r},{a},{20 + i}\n" for i, (r, a) in
                                        enumerate([("N", "yes"), ("S", "NA"), ("N", "None"), ("E", "no"),
                                                   ("", "yes"), ("W", "N")] * 5))).encode()
NA_CODES = ("", "NA", "N", "None")

_CONFIG = co.ExperimentConfig(label="answer", sensitive_value="yes", lens=("age",),
                              groups=(co.GroupSpec("Everyone"),), release=co.ReleaseSpec(),
                              learner=co.LearnerSpec(kind="decision_tree"), repetitions=1, rng=3)


def _read_lines(script: str) -> str:
    """The script's file-reading lines: its import of read_uploaded_csv and the call inside ``with open``."""
    imp = re.search(r"^from dpdash\.common\.data import .*read_uploaded_csv.*$", script, re.M).group(0)
    call = re.search(r"read_uploaded_csv\(fh\.read\(\)[^\n]*?\)\.frame", script).group(0)
    return f"{imp}\ndf = {call}\n"


def _missing_in_test(codes) -> dict[str, int]:
    """Per column, how many cells of the file are one of ``codes`` (counted here, from the text)."""
    rows = [line.split(",") for line in CSV.decode().strip().splitlines()[1:]]
    return {"region": sum(r[0] in codes for r in rows), "answer": sum(r[1] in codes for r in rows)}


def _run(lines: str) -> pd.DataFrame:
    scope = {}
    exec(lines.replace("fh.read()", "DATA"), {"DATA": CSV}, scope)  # noqa: S102 - the script's own two lines
    return scope["df"]


@pytest.mark.parametrize("na_missing", [False, True])
def test_coherence_script_reads_missing_codes_as_the_page(na_missing):
    data = {"source": "upload", "missing_codes": NA_CODES if na_missing else ("",)}
    df = _run(_read_lines(coherence_script.runs_script(data=data, config=_CONFIG, alpha=0.2, gamma=50.0,
                                                       repetitions=1)))
    want = _missing_in_test(NA_CODES if na_missing else ("",))
    assert {c: int(df[c].isna().sum()) for c in want} == want


@pytest.mark.parametrize("na_missing", [False, True])
def test_stratified_synth_script_reads_missing_codes_as_the_page(na_missing):
    src = stratify_script.synth_script(source="upload", synthesizer="independent", synthesizer_label="Independent",
                                       epsilon=1.0, seed=0, min_frac=0.0, small_strata="drop", classifier="logreg",
                                       csv_path="x.csv", group_cols=["region"], label_col="answer",
                                       missing_codes=NA_CODES if na_missing else ("",))
    df = _run(_read_lines(src.replace("CSV, \"rb\"", "x")))
    want = _missing_in_test(NA_CODES if na_missing else ("",))
    assert {c: int(df[c].isna().sum()) for c in want} == want
