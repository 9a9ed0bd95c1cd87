"""The engine's folder is engine/, its import name dpdash (pyproject package-dir; issue 24 asks a distinctive name).

pytest imports engine/x.py for its doctests under the folder's name, ``engine.x``: a second copy of the module,
whose exceptions and classes would print as ``engine.x.Error`` and differ from the app's. This finder makes
``engine.<name>`` the one module ``dpdash.<name>``, so the doctests run against the code the app imports.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys


class _EngineIsDpdash(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "engine" or name.startswith("engine."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("dpdash" + spec.name[len("engine"):])

    def exec_module(self, module):
        pass  # already executed, as dpdash.<name>


sys.meta_path.insert(0, _EngineIsDpdash())
