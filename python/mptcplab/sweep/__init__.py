"""Parameter sweeps (docs/sweeps.md): a TOML plan expands into points (parameters x
repetitions), each point runs once and is stored atomically under its key (scenario
hash, seed, mptcplab version); a killed sweep resumes. Runs on local cores or on a
Dask cluster. Nothing here imports dask unless a scheduler address is given.

    from mptcplab.sweep import load_plan, run_sweep
    frame = run_sweep("scenarios/sweeps/cc-x-buffer.toml", out="sweeps/cc-x-buffer")
"""
from __future__ import annotations

from .compare import compare, load_results
from .plan import Plan, Point, load_plan, parse_plan
from .run import VersionMismatch, gather, run_point, run_sweep
from .store import Store, VersionMixError

__all__ = ["Plan", "Point", "Store", "VersionMismatch", "VersionMixError", "compare", "gather",
           "load_plan", "load_results", "parse_plan", "run_point", "run_sweep"]
