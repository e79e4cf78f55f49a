"""The training run of the profile-guided build (`./dev install`, docs/performance.md).

`./dev` builds the extension instrumented (`-Cprofile-generate`), runs this module, and
builds it again with the profile (`-Cprofile-use`). The profile tells the compiler which
branches are hot; code the training never runs is laid out as cold, so the training runs
every committed scenario (every controller, scheduler, path manager and stack profile the
project uses) besides the benchmark's, not only the benchmark's.

    python -m mptcplab._pgo            # about 10 s instrumented on two cores

Results do not depend on the profile: it changes code layout and inlining, never
arithmetic (the identity corpus checks the built extension bit for bit).
"""
from __future__ import annotations

import json
import sys
import time
import tomllib
from pathlib import Path

from . import _core
from ._bench import S3_FLOWS, core_input, scale_toml

_PKG = Path(__file__).resolve().parent
_REPO = _PKG.parents[1]


def _scenarios() -> list[tuple[str, str]]:
    """(label, core JSON text) of every training run, in a fixed order: the identity
    corpus's files (every committed scenario and the benchmark's) and the default one,
    then S3 at every N."""
    from .identity import scenario_files

    runs: list[tuple[str, str]] = []
    for p in [*scenario_files(_REPO), _PKG / "data" / "default.toml"]:
        runs.append((p.name, core_input(str(p), "20 s")))
    for mode in ("tcp", "mptcp"):
        for n in S3_FLOWS:
            # Up to ~2 M packets each: the per-flow cost at every scale.
            seconds = {1: "30", 10: "10", 100: "3", 1000: "1"}[n]
            data = tomllib.loads(scale_toml(mode, n, seconds))
            runs.append((f"s3-{mode}-{n}", json.dumps(data, separators=(",", ":"))))
    return runs


def main() -> int:
    start = time.perf_counter()
    ran = failed = 0
    for label, text in _scenarios():
        try:
            _core.simulate(text, None, None, None, None)
            ran += 1
        except Exception as e:  # noqa: BLE001 - a scenario that needs plug-ins or the kernel
            failed += 1
            print(f"pgo training: skipped {label}: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
    print(f"pgo training: {ran} runs ({failed} skipped) in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0 if ran else 1


if __name__ == "__main__":
    raise SystemExit(main())
