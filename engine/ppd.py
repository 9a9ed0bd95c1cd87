"""Deprecated import path: ``engine.ppd`` was split into :mod:`engine.public_info` and :mod:`engine.partial_release`.

Kept only while ``ui/views`` (being moved by another change) still imports ``engine.ppd``; new code imports the
two modules directly. Delete this file once nothing imports it.
"""

from engine.partial_release import *  # noqa: F401,F403
from engine.partial_release import __all__ as _release_all
from engine.public_info import *  # noqa: F401,F403
from engine.public_info import __all__ as _public_all

__all__ = [*_public_all, *_release_all]
