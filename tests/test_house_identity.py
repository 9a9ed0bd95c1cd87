"""What every page shows, its link, its settings file and its report, compared byte for byte with stored dumps.

A guard for refactors (moving engine modules into subpackages, renaming, splitting): for each page and the home
page, in two or three states (the default, and links with other privacy parameters or another tab), AppTest runs
the page and this module writes a canonical text dump of what it shows — every title, header, Markdown, caption,
metric, alert, toast, expander and tab label, every widget (label, help, options, value, disabled), tables and
data frames as CSV, JSON elements, "Copy as code" scripts, each chart's Plotly spec (digest and outline), the
final link (``at.query_params``), and the bytes of every download the page offers: the settings file
(``ui.dossier.settings_json``) and the report (``ui.dossier.report_html``) exactly as the page builds them, and the
CSV, JSON and script downloads. The dump is compared with ``data/house_golden/<case>.txt``; a mismatch shows a
unified diff of the first differences.

Made deterministic (the only things left out or fixed, because they vary per run or per checkout, not per page):

- the product version (``git describe`` of the checkout, "-dirty" while editing) is fixed to ``VERSION``, and the
  report's "Made:" time to ``WHEN``;
- the report's figures are not rendered to SVG (kaleido drives Chromium: seconds per figure, and the SVG depends
  on the renderer's version); each figure is replaced by the SHA-256 of its Plotly JSON, so a changed figure still
  changes the report;
- figure downloads (standalone HTML with fresh random ``<div>`` ids; PNG/SVG through kaleido) are listed by name,
  not content; the figure itself is covered by the chart's spec digest;
- wall-clock durations the pages report ("4 linear programs solved in 0.02 s", "computed in 0.41 s": the
  leximax LP and coherence preview timings) read "<t> s" (see ``_DURATION``);
- element and widget ids (``$$ID-<hash>-key``: Streamlit internals, not shown) and
  deferred download ids (random per run) are dropped; a widget's key is kept.

Regenerate (``python tests/test_house_identity.py [case ...]``, from the repository root) ONLY for an intended
change to what a page shows (a new feature, a fixed bug, new wording), and review the diff of the golden files in
the same commit. NEVER regenerate to make a move, rename or refactor pass: a difference there is the regression
this test exists to catch.

Imports only ``ui``, ``streamlit``, the standard library and pytest (not ``dpdash``), so it survives an engine
move unchanged.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import hashlib
import json
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "data" / "house_golden"
TIMEOUT = 120
VERSION = "GOLDEN-VERSION"
WHEN = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)

# name -> (page, link parameters). States are analytic or quick (no Monte Carlo button runs): each case takes
# 0.3-5 s (the first in a process pays the imports), so none is marked slow.
GAUSS = "(ε, δ)-DP histogram → synthetic records (Gaussian)"
CASES: dict[str, tuple[str, dict[str, str]]] = {
    "home_default": ("app.py", {}),
    "home_adult": ("app.py", {"dataset": "adult"}),
    "home_acs12": ("app.py", {"dataset": "acs12"}),
    "epsilon_default": ("pages/epsilon_calculator.py", {}),
    "epsilon_noise_gaussian": ("pages/epsilon_calculator.py",
                               {"eps_epsilon": "0.5", "eps_n1_mech": "gaussian", "eps_n1_conf": "90"}),
    "epsilon_composition": ("pages/epsilon_calculator.py", {"eps_tab": "Composition", "eps_comp_eps": "0.2"}),
    "epsilon_risk": ("pages/epsilon_calculator.py", {"eps_tab": "ε as risk", "eps_r_eps": "2", "eps_r_prior": "50"}),
    "coherence_default": ("pages/coherence_explorer.py", {}),
    "coherence_subsample": ("pages/coherence_explorer.py",
                            {"coh_alpha": "0.55", "coh_release": "subsample", "coh_k": "300", "coh_seed": "7",
                             "coh_n": "2000", "coh_beta": "1e-3"}),
    "coherence_theory": ("pages/coherence_explorer.py",
                         {"coh_n": "2000", "coh_learner": "Decision tree", "coh_eps": "0.3", "coh_release": GAUSS,
                          "coh_tab": "Theory"}),
    "sampling_default": ("pages/sampling_designer.py", {}),
    "sampling_simple_delta": ("pages/sampling_designer.py",
                              {"sd_tab": "Simple random samples", "sd_eps": "0.5", "sd_delta_on": "true",
                               "sd_n": "5000"}),
    "sampling_cluster": ("pages/sampling_designer.py",
                         {"sd_tab": "Cluster sampling", "sd_c": "7", "sd_k": "40", "sd_ell": "4"}),
    "leximax_default": ("pages/leximax_cohort_picker.py", {}),
    "leximax_k2_exact": ("pages/leximax_cohort_picker.py", {"lx_k": "2", "lx_mode": "exact", "lx_seed": "9"}),
    "leximax_finite": ("pages/leximax_cohort_picker.py", {"lx_tab": "Finite-set explorer"}),
    "stratified_default": ("pages/stratified_synthesis_viewer.py", {}),
    "stratified_acs_eps": ("pages/stratified_synthesis_viewer.py",
                           {"sv_eps": "0.2", "sv_alpha": "1", "sv_k": "12", "sv_source": "ACS preset"}),
    "stratified_group_sizes": ("pages/stratified_synthesis_viewer.py",
                               {"sv_mean_tab": "Group sizes", "sv_min_frac": "0.02"}),
}

#: Proto fields that vary per run or per checkout (see the module docstring), dropped wherever they appear.
_DROP = {"id", "deferred_file_id"}
#: Wall-clock durations a page reports (they vary per run and per machine), in the text and in the report.
_DURATION = re.compile(r"\b(solved in|computed in) \d+(?:\.\d+)? s\b")
#: Long text fields, printed as indented lines after the element's line so a diff points at the changed line.
_TEXT = ("body", "code_text")


# --------------------------------------------------------------------------- recording the downloads
def _digest(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def _fig_digest(fig) -> str:
    return _digest(fig.to_json())


@contextlib.contextmanager
def _recording():
    """Fix the product version and the report's time and figures; record every download the page offers.

    Yields a list of (key, file name, mime, content) in the order the page draws its buttons; content is the
    bytes the user would download, or a note where it is left out (figure files, see the module docstring).
    """
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    import ui.dossier as dossier

    seen: list[tuple[str, str, str, object]] = []

    def report(summary, *, link):
        svgs = [f'<svg data-plotly-sha256="{_fig_digest(fig)}"></svg>' for _, fig in summary.figures]
        return dossier.report_html(summary, link=link, when=WHEN, svgs=svgs, version=VERSION)

    def record(label, data, args, kwargs):
        name = str(kwargs.get("file_name", args[0] if args else ""))
        mime = str(kwargs.get("mime", args[1] if len(args) > 1 else ""))
        if name.endswith((".png", ".svg")) or (mime == "text/html" and not name.endswith("_report.html")):
            content: object = "(figure file: content not compared; see the chart's spec digest)"
        else:
            content = data() if callable(data) else data
        seen.append((str(kwargs.get("key")), name, mime, content))

    orig_module, orig_method = st.download_button, DeltaGenerator.download_button

    def module_level(label, data, *args, **kwargs):
        record(label, data, args, kwargs)
        return orig_module(label, data, *args, **kwargs)

    def method(self, label, data, *args, **kwargs):
        record(label, data, args, kwargs)
        return orig_method(self, label, data, *args, **kwargs)

    saved = (dossier.product_version, dossier.build_report)
    st.download_button, DeltaGenerator.download_button = module_level, method
    dossier.product_version, dossier.build_report = (lambda: VERSION), report
    try:
        yield seen
    finally:
        st.download_button, DeltaGenerator.download_button = orig_module, orig_method
        dossier.product_version, dossier.build_report = saved


# --------------------------------------------------------------------------- the dump
def _clean(obj):
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items() if k not in _DROP}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def _text_block(text: str, indent: str) -> list[str]:
    # an empty line is "|", with no trailing space an editor or a hook might strip
    return [f"{indent}| {line}" if line else f"{indent}|" for line in str(text).split("\n")]


def _plotly(spec: str) -> dict:
    fig = json.loads(spec)
    layout = fig.get("layout", {})

    def title(x):
        t = x.get("title") if isinstance(x, dict) else None
        return t.get("text") if isinstance(t, dict) else t

    traces = [{k: t.get(k) for k in ("type", "name", "mode") if t.get(k) is not None} for t in fig.get("data", [])]
    axes = {k: title(v) for k, v in sorted(layout.items()) if k.startswith(("xaxis", "yaxis")) and title(v)}
    return {"spec_sha256": _digest(spec), "title": title(layout), "axes": axes, "traces": traces}


def _element(node, indent: str, out: list[str]) -> None:
    from google.protobuf.json_format import MessageToDict
    from streamlit.testing.v1.element_tree import Widget

    kind = node.type
    proto = getattr(node, "proto", None)
    d = _clean(MessageToDict(proto, preserving_proto_field_name=True)) if proto is not None else {}
    texts = {k: d.pop(k) for k in _TEXT if isinstance(d.get(k), str)}
    extra: list[str] = []
    if kind in ("dataframe", "arrow_data_frame", "table", "arrow_table"):
        d.pop("arrow_data", None)
        d.pop("data", None)
        extra = _text_block(node.value.to_csv(), indent + "  ")
    elif kind == "plotly_chart" and "spec" in d:
        d["spec"] = _plotly(d["spec"])
    if isinstance(node, Widget):
        try:
            value = node.value
        except Exception as exc:  # noqa: BLE001 - a widget whose value AppTest cannot read: say so
            value = f"<{type(exc).__name__}>"
        if hasattr(value, "to_csv"):  # an editable table's current rows
            extra = _text_block(value.to_csv(), indent + "  ")
            value = "<frame, below>"
        d["<value>"] = value
    out.append(f"{indent}{kind} {json.dumps(d, ensure_ascii=False, sort_keys=True, default=repr)}")
    for k, v in texts.items():
        out.append(f"{indent}  {k}:")
        out += _text_block(v, indent + "  ")
    out += extra


def _walk(node, depth: int, out: list[str]) -> None:
    from google.protobuf.json_format import MessageToDict

    indent = "  " * depth
    children = getattr(node, "children", None)
    if children is None:
        _element(node, indent, out)
        return
    proto = getattr(node, "proto", None)
    d = _clean(MessageToDict(proto, preserving_proto_field_name=True)) if proto is not None else {}
    out.append(f"{indent}[{node.type}] {json.dumps(d, ensure_ascii=False, sort_keys=True)}")
    for k in sorted(children):
        _walk(children[k], depth + 1, out)


def _content(content: object) -> list[str]:
    if isinstance(content, bytes):
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            return [f"  (binary, {len(content)} bytes, sha256 {_digest(content)})"]
        return _text_block(text, "  ")
    return [f"  {content}"]


def dump(name: str) -> str:
    """The canonical text of case ``name`` (see the module docstring)."""
    from streamlit.testing.v1 import AppTest

    page, params = CASES[name]
    os.environ["DPDASH_WARMUP"] = "0"  # no background warm-up runs while the page is tested
    with _recording() as downloads:
        at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
    assert not at.exception, [e.message for e in at.exception]
    out = [f"# {name}: {page} {json.dumps(params, ensure_ascii=False, sort_keys=True)}", "== page"]
    _walk(at._tree, 0, out)
    out.append("== link (final query parameters)")
    out += [f"{k} = {json.dumps(at.query_params[k], ensure_ascii=False)}" for k in sorted(at.query_params)]
    out.append("== downloads (file name, mime, bytes as the page builds them)")
    for key, file_name, mime, content in downloads:
        out.append(f"- key={key} file={file_name} mime={mime}")
        out += _content(content)
    return _DURATION.sub(r"\1 <t> s", "\n".join(out) + "\n")


def _golden(name: str) -> Path:
    return GOLDEN / f"{name}.txt"


# --------------------------------------------------------------------------- the test
@pytest.mark.parametrize("name", sorted(CASES))
def test_page_matches_its_golden_dump(name):
    expected = _golden(name).read_text(encoding="utf-8")
    actual = dump(name)
    if actual != expected:
        diff = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), f"golden/{name}.txt",
                                         f"now/{name}", n=2, lineterm=""))
        shown = "\n".join(line[:300] for line in diff[:80])
        pytest.fail(f"{name}: what the page shows, links or saves changed ({len(diff)} diff lines; first ones):\n"
                    f"{shown}", pytrace=False)


def regenerate(names=None) -> None:
    """Write the golden dumps (all cases, or ``names``); see the module docstring for when this is legitimate."""
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in names or sorted(CASES):
        _golden(name).write_text(dump(name), encoding="utf-8")
        print(f"wrote {_golden(name)}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    regenerate(sys.argv[1:])
