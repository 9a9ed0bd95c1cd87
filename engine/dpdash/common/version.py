"""The engine's version, in one place: the wheel's metadata (engine/pyproject.toml) and generated scripts read it."""

__version__ = "0.27.0"
