"""Running a paper's experiments: a committed scenario file under named variants and
seeds, on all local cores, one row of measurements per run.

Measurements are callables taking a `Result` and returning a plain dict; they must be
picklable (module-level functions or instances of module-level classes) because runs go
to worker processes.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError

Measure = Callable[[Any], dict[str, Any]]

# The reproduction scenarios are committed under scenarios/reproduce/ of the source tree
# (the package is installed editable from it by ./dev).
REPO = Path(__file__).resolve().parents[3]
SCENARIOS = REPO / "scenarios"


def scenario_path(relative: str) -> Path:
    """A committed scenario file, e.g. "reproduce/seed003-exp1-lia-reno-cubic.toml"."""
    path = SCENARIOS / relative
    if not path.is_file():
        raise ScenarioError("scenario", f"{path} not found; `mptcplab reproduce` runs from a source checkout")
    return path


@dataclass
class Variant:
    """A named change of the base scenario: field path -> value (`Scenario.with_`)."""

    label: str
    changes: dict[str, Any] = field(default_factory=dict)


@dataclass
class Ledger:
    """What ran: the reproduction's metadata records it."""

    runs: int = 0
    sim_seconds: float = 0.0
    wall_s: float = 0.0
    scenarios: dict[str, str] = field(default_factory=dict)   # name -> TOML of the base file
    experiments: list[dict[str, Any]] = field(default_factory=list)
    # `reproduce --profile`: the profile every run is put under (None: each scenario's own,
    # i.e. the default out_of_tree unless the file says otherwise).
    profile: str | None = None
    # Told (experiment, runs done, runs in it) after every run, when set (the CLI's bars).
    progress: Callable[[str, int, int], None] | None = None


class Window:
    """Goodput of every flow (connection-level bytes delivered, Mbit/s) and every subflow
    (bytes acknowledged, Mbit/s) over [start, end] seconds."""

    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = float(start), float(end)

    def __call__(self, result: Any) -> dict[str, Any]:
        return {"goodput": window_goodput(result, self.start, self.end),
                "subflows": window_subflow_goodput(result, self.start, self.end)}


def _delta(frame: Any, keys: list[str], col: str, start: float, end: float) -> dict[Any, float]:
    out: dict[Any, float] = {}
    for key, g in frame.groupby(keys, sort=False):
        g = g.sort_values("time_s")
        before = g[g.time_s <= start + 1e-9]
        upto = g[g.time_s <= end + 1e-9]
        b0 = int(before[col].iloc[-1]) if len(before) else 0
        b1 = int(upto[col].iloc[-1]) if len(upto) else 0
        out[key] = (b1 - b0) * 8 / (end - start) / 1e6
    return out


def window_goodput(result: Any, start: float, end: float) -> dict[str, float]:
    d = _delta(result.timeseries.connections, ["flow"], "bytes_delivered", start, end)
    return {str(k[0] if isinstance(k, tuple) else k): v for k, v in d.items()}


def window_subflow_goodput(result: Any, start: float, end: float) -> dict[str, float]:
    """Keys "flow#subflow"."""
    d = _delta(result.timeseries.subflows, ["flow", "subflow"], "bytes_acked", start, end)
    return {f"{k[0]}#{int(k[1])}": v for k, v in d.items()}


def goodput_over(result: Any, flow: str) -> tuple[Any, Callable[[float, float], float]]:
    """The flow's sample times, and its goodput over [a, z] in Mbit/s (connection-level
    bytes delivered by the last sample at or before each end)."""
    ts = result.timeseries.connections
    ts = ts[ts.flow == flow].sort_values("time_s")
    t, b = ts.time_s.to_numpy(), ts.bytes_delivered.to_numpy()

    def at(x: float) -> int:
        i = (t <= x + 1e-9).nonzero()[0]
        return int(b[i[-1]]) if len(i) else 0

    def gp(a: float, z: float) -> float:
        return (at(z) - at(a)) * 8 / (z - a) / 1e6

    return t, gp


def recovery_s(t: Any, gp: Callable[[float, float], float], event: float, end: float, target: float) -> float | None:
    """Seconds from `event` to the first sample whose goodput over the next second reaches
    `target` (seed 004 Fig. 10a), or None before `end`."""
    for x in t:
        if x >= event - 1e-9 and x + 1.0 <= end + 1e-9 and gp(x, x + 1.0) >= target:
            return float(x - event)
    return None


def _one(job: tuple[str, str, int, Measure]) -> dict[str, Any]:
    from ..api import simulate
    from ..scenario import Scenario

    label, scenario_json, seed, measure = job
    result = simulate(Scenario.from_dict(json.loads(scenario_json)), seed=seed)
    return {"variant": label, "seed": seed, "duration_s": float(result.meta.get("duration_s", 0.0)),
            **measure(result)}


def apply(base: Any, variant: Variant) -> Any:
    sc = base
    for path, value in variant.changes.items():
        sc = sc.with_(path, value)
    return sc


def run_variants(scenario: str | Path, variants: Sequence[Variant], seeds: Iterable[int], measure: Measure,
                 workers: int | None = None, ledger: Ledger | None = None, experiment: str = "") -> list[dict[str, Any]]:
    """Run every (variant, seed) of a scenario file; one row per run, in job order."""
    from ..scenario import Scenario

    path = Path(scenario)
    base = Scenario.from_toml(path)
    if ledger is not None and ledger.profile is not None:
        base = base.with_("run.profile", ledger.profile)
    seeds = list(seeds)
    built = [(v.label, apply(base, v)) for v in variants]
    jobs = [(label, sc.to_json(), s, measure) for label, sc in built for s in seeds]
    workers = max(1, min(len(jobs), workers or os.cpu_count() or 1))
    t0 = time.monotonic()
    tell = ledger.progress if ledger is not None else None
    label = experiment or path.stem
    rows: list[dict[str, Any]] = []
    if workers == 1:
        for j in jobs:
            rows.append(_one(j))
            if tell is not None:
                tell(label, len(rows), len(jobs))
    else:
        with ProcessPoolExecutor(max_workers=workers) as ex:
            for row in ex.map(_one, jobs):  # in job order, as each is ready
                rows.append(row)
                if tell is not None:
                    tell(label, len(rows), len(jobs))
    if ledger is not None:
        wall = time.monotonic() - t0
        durations = sorted({r["duration_s"] for r in rows})
        ledger.runs += len(jobs)
        ledger.sim_seconds += sum(r["duration_s"] for r in rows)
        ledger.wall_s += wall
        ledger.scenarios.setdefault(path.stem, path.read_text(encoding="utf-8"))
        ledger.experiments.append({"experiment": experiment or path.stem, "scenario": path.stem,
                                   "variants": [v.label for v in variants], "seeds": seeds,
                                   "runs": len(jobs), "duration_s": durations, "wall_s": round(wall, 2)})
    return rows


def values(rows: list[dict[str, Any]], variant: str, key: Callable[[dict[str, Any]], float]) -> list[float]:
    """key(row) for every run of one variant, in seed order."""
    return [float(key(r)) for r in rows if r["variant"] == variant]
