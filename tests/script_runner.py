"""Run generated "Copy as code" scripts (issue 15 item 2): many scripts in ONE fresh Python subprocess.

Each script is written to its own clean temporary directory and executed there as ``__main__`` (``runpy``), with
the parent's ``PYTHONPATH`` removed, so it must find this project's engine by itself exactly as a user's copy would.
Sharing one interpreter saves the 2–3 s that importing numpy, scipy and dp-accounting costs each script; the
scripts share nothing else (each gets its own directory, ``sys.argv``, ``sys.path`` and namespace).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

_DRIVER = r"""
import contextlib, io, json, os, runpy, sys, traceback
jobs = json.loads(sys.stdin.read())
results = {}
for name, path in jobs:
    here = os.path.dirname(path)
    os.chdir(here)
    saved_path, saved_argv = list(sys.path), list(sys.argv)
    sys.path[0:0] = [here]
    sys.argv = [path]
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            try:
                runpy.run_path(path, run_name="__main__")
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    raise
        results[name] = {"ok": True, "stdout": buf.getvalue()}
    except BaseException:
        results[name] = {"ok": False, "stdout": buf.getvalue(), "error": traceback.format_exc()}
    finally:
        sys.path[:], sys.argv = saved_path, saved_argv
sys.__stdout__.write("\n@@RESULTS@@" + json.dumps(results))
"""


def run_scripts(scripts: Mapping[str, str], workdir: Path, *, timeout: float = 600) -> dict[str, str]:
    """Run every script (name → source) in one subprocess, each from ``workdir/<n>/``; return name → stdout.

    Raises AssertionError naming the script and showing its traceback when one fails.
    """
    jobs = []
    for i, (name, src) in enumerate(scripts.items()):
        d = Path(workdir) / f"s{i}"
        d.mkdir(parents=True, exist_ok=True)
        path = d / "recompute.py"
        path.write_text(src, encoding="utf-8")
        jobs.append((name, str(path)))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the script finds the engine by itself
    out = subprocess.run([sys.executable, "-c", _DRIVER], input=json.dumps(jobs), cwd=workdir, capture_output=True,
                         text=True, timeout=timeout, env=env)
    assert out.returncode == 0 and "@@RESULTS@@" in out.stdout, out.stderr[-4000:]
    results = json.loads(out.stdout.rsplit("@@RESULTS@@", 1)[1])
    failed = {n: r["error"] for n, r in results.items() if not r["ok"]}
    assert not failed, "\n\n".join(f"script {n} failed:\n{e}" for n, e in failed.items())
    return {n: r["stdout"] for n, r in results.items()}
