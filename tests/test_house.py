"""The house (issue 30): the engine's wings import downwards only, and nothing imports in a circle.

Layers, from the bottom: ``dpdash.common`` imports no other wing; ``dpdash.accounting`` imports only ``common``; the
page wings (epsilon, coherence, sampling, sortition, stratify) import ``accounting`` and ``common`` and never each
other; the engine never imports ``ui``, ``pages`` or streamlit; ``ui/`` and ``pages/`` may import any wing. The
graph is read from the source with ``ast`` (every ``import`` and ``from … import``, at module level or inside a
function), so a lazy import cannot hide an arrow or a circle (the ui circle charts -> common -> dossier -> exports ->
common ran through imports inside functions).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "engine" / "dpdash"
PAGE_WINGS = ("epsilon", "coherence", "sampling", "sortition", "stratify")
WINGS = ("common", "accounting", *PAGE_WINGS)
ALLOWED = {"common": {"common"}, "accounting": {"common", "accounting"},
           **{w: {"common", "accounting", w} for w in PAGE_WINGS}}


def module_name(path: Path) -> str:
    """``engine/dpdash/sortition/core.py`` -> ``dpdash.sortition.core``; ``ui/views/x.py`` -> ``ui.views.x``."""
    rel = path.relative_to(ROOT / "engine") if path.is_relative_to(ROOT / "engine") else path.relative_to(ROOT)
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    """Absolute module names ``path`` imports (``from a import b`` counts as ``a.b`` when that is a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def engine_files() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "bundled" not in p.parts)


def app_files() -> list[Path]:
    return sorted([*(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"])


def wing_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if parts[0] == "dpdash" and len(parts) > 1 and parts[1] in WINGS else None


def known_modules() -> set[str]:
    return {module_name(p) for p in [*engine_files(), *app_files()]}


def forbidden_arrows() -> list[str]:
    bad = []
    for path in engine_files():
        src = module_name(path)
        mine = wing_of(src)
        for target in sorted(imports(path)):
            top = target.split(".")[0]
            if top in ("ui", "pages", "app", "streamlit"):
                bad.append(f"{src} -> {target} (the engine never imports the app or streamlit)")
                continue
            if top != "dpdash":
                continue
            theirs = wing_of(target)
            if mine is None:  # the package root: only the version (wings load lazily, by name)
                if target not in ("dpdash.common", "dpdash.common.version", "dpdash.common.version.__version__"):
                    bad.append(f"{src} -> {target} (dpdash/__init__ imports only the version)")
            elif theirs is None:
                bad.append(f"{src} -> {target} (up to the package root)")
            elif theirs not in ALLOWED[mine]:
                bad.append(f"{src} -> {target} ({mine} may import only {sorted(ALLOWED[mine])})")
    return bad


def circles() -> list[list[str]]:
    """Every cycle's members among the imports of the engine, ui/ and pages/ (Tarjan's strongly connected sets)."""
    known = known_modules()
    graph = {module_name(p): {t for t in imports(p) if t in known}
             for p in [*engine_files(), *app_files()]}
    for node, targets in graph.items():
        # importing a.b.c runs a/__init__ and a/b/__init__ first
        graph[node] = targets | {".".join(t.split(".")[:i]) for t in targets for i in range(1, t.count(".") + 1)
                                 if ".".join(t.split(".")[:i]) in known}
        graph[node].discard(node)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):  # iterative enough for a few hundred modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    # a package importing its own submodules (wing __init__ re-exports) is not a circle of the design
    return [c for c in out if not all(x.startswith(c[0] + ".") or x == c[0] for x in c)]


def test_every_arrow_points_down():
    assert forbidden_arrows() == []


def test_no_circle_among_imports():
    assert circles() == []


def test_the_checks_can_fail(tmp_path, monkeypatch):
    # a page wing importing another page wing, and a common module importing accounting, are both reported
    fake = tmp_path / "engine" / "dpdash"
    (fake / "common").mkdir(parents=True)
    (fake / "sampling").mkdir()
    (fake / "common" / "a.py").write_text("from dpdash.accounting import mechanisms\n")
    (fake / "sampling" / "b.py").write_text("def f():\n    from dpdash.sortition import core\n")
    (fake / "sampling" / "c.py").write_text("import streamlit as st\n")
    globals_ = globals()
    monkeypatch.setitem(globals_, "ROOT", tmp_path)
    monkeypatch.setitem(globals_, "PKG", fake)
    bad = forbidden_arrows()
    assert any("dpdash.common.a -> dpdash.accounting" in b for b in bad)
    assert any("dpdash.sampling.b -> dpdash.sortition" in b for b in bad)
    assert any("dpdash.sampling.c -> streamlit" in b for b in bad)
    (tmp_path / "ui").mkdir()
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text("")
    (tmp_path / "ui" / "__init__.py").write_text("")
    (tmp_path / "ui" / "x.py").write_text("from ui import y\n")
    (tmp_path / "ui" / "y.py").write_text("def f():\n    import ui.x\n")
    assert circles() == [["ui.x", "ui.y"]]


def test_the_folder_is_named_as_it_is_imported():
    import dpdash

    assert Path(dpdash.__file__).resolve() == PKG / "__init__.py"
    assert not (ROOT / "conftest.py").exists()  # no import finder papering over a mapping
    toml = (ROOT / "engine" / "pyproject.toml").read_text(encoding="utf-8")
    assert "package-dir" not in toml and not (ROOT / "pyproject.toml").exists()


@pytest.mark.parametrize("wing", WINGS)
def test_each_wing_lists_its_public_api(wing):
    mod = importlib.import_module(f"dpdash.{wing}")
    doc = mod.__doc__ or ""
    assert "Contents" in doc
    for name in getattr(mod, "__all__", []):
        assert getattr(mod, name) is not None
        assert name in doc or name in ("PALETTE",), f"{wing}.{name} is exported but not in the table of contents"
    # every module of the wing is named in its table of contents
    rooms = {p.stem for p in (PKG / wing).glob("*.py") if p.stem != "__init__"}
    missing = sorted(r for r in rooms if r not in doc)
    assert missing == [], f"dpdash.{wing}'s table of contents does not name {missing}"


def test_the_root_lists_every_wing_and_loads_them_on_use():
    import dpdash

    doc = dpdash.__doc__
    for wing in WINGS:
        assert f"\n{wing} " in doc
    assert dpdash.sortition.leximin_panels is importlib.import_module("dpdash.sortition.core").leximin_panels
    assert dpdash.accounting.compose is importlib.import_module("dpdash.accounting.composition").compose
    with pytest.raises(AttributeError):
        dpdash.no_such_wing  # noqa: B018
