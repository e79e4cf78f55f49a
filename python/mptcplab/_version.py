"""The package version: the core's, so the two never disagree; and the model's
fingerprint (a hash of the core's sources, `mptcplab_core::MODEL`), which tells two
builds of the same version apart."""
from __future__ import annotations

from . import _core

__version__: str = _core.version()
__model__: str = _core.model()


def model_version() -> str:
    """`<version>+<model>`: what a sweep store keys its points by, so a resumed sweep
    never mixes results of two models (unless told to, `--allow-version-mix`)."""
    return f"{__version__}+{__model__}"
