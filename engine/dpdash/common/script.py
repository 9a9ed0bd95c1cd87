"""What every "Copy as code" script starts with: the installed engine, by name and version, and no server path.

A generated script must run on a colleague's machine: it imports the installed package ``dpdash`` (``pip install
dpdash==<version>``, or ``pip install ./engine`` from a clone of this repository) and says which version made it, so a
different engine is reported instead of silently giving other numbers (issue 24 item 1).
"""

from __future__ import annotations

from dpdash.common.version import __version__


def made_with() -> str:
    """The docstring line naming the engine version a script was made with.

    >>> made_with().startswith("Made with dpdash ")
    True
    """
    return f"Made with dpdash {__version__}: pip install dpdash=={__version__} (or `pip install ./engine` in a clone)."


def version_check() -> str:
    """Python lines that import the installed engine and warn when its version differs from the one that made this.

    >>> "sys.path" in version_check()
    False
    """
    return (f"import dpdash\n"
            f"if dpdash.__version__ != {__version__!r}:\n"
            f"    import warnings\n"
            f"    warnings.warn(f\"made with dpdash {__version__}, running with {{dpdash.__version__}}\")\n")
