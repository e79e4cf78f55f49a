"""The package version: the core's, so the two never disagree."""
from __future__ import annotations

from . import _core

__version__: str = _core.version()
