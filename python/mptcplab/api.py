"""`simulate()`: run a scenario on the simulator backend."""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Union

from . import _core
from .errors import ScenarioError, core_errors
from .result import Result
from .scenario import PathLike, Scenario, check_seed

__all__ = ["simulate", "as_scenario"]

ScenarioLike = Union[Scenario, Mapping[str, Any], str, os.PathLike]


def as_scenario(scenario: ScenarioLike) -> Scenario:
    """Accept a Scenario, a dict with the TOML structure, a path or TOML text."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Mapping):
        return Scenario.from_dict(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario.from_toml(scenario)
    raise ScenarioError(
        "<scenario>",
        f"expected a Scenario, a dict or a path to a TOML file, got {type(scenario).__name__}",
    )


def simulate(
    scenario: ScenarioLike,
    seed: int | None = None,
    duration: float | str | None = None,
    progress: Callable[[float, float], None] | None = None,
    trace: PathLike | None = None,
    trace_flows: Sequence[str] | None = None,
    *,
    scheduler: Any = None,
    path_manager: Any = None,
    pcap: PathLike | None = None,
) -> Result:
    """Run `scenario` and return a `Result`.

    `scheduler` / `path_manager` replace the scenario's for every MPTCP connection, or
    for those named in a dict ``{connection name: value}``. A value is a built-in name,
    a ``"python:module:Class"`` reference, a class, a factory, or a plug-in object
    (docs/plugins.md). An object is a template: each connection of each run works on its
    own `copy.deepcopy`, so runs repeat; the copies that ran are in `result.plugins`.
    A plug-in that raises stops the run with `mptcplab.PluginError`.

    `seed` and `duration` (seconds, or a string such as ``"10 s"``) override ``[run]``;
    the overrides are written into `result.scenario`, so a saved result reruns as is.
    `progress(sim_time_s, end_s)` is called about every 0.25 wall seconds from the
    calling thread. `trace` names a file (CSV) for the per-packet and per-ACK event
    trace, of every flow or of the flows named in `trace_flows`.
    `pcap` names a directory for packet captures: one classic pcap file per path,
    `<path>.pcap`, with IPv4/TCP headers and the MPTCP options (docs/pcap.md); the files
    are in ``result.meta["pcap"]`` ({path: file}). A run stopped midway (an error, Ctrl-C)
    leaves whole records of what it simulated.
    The GIL is released while the core runs (kept in runs with Python plug-ins, which
    call into Python at each decision); Ctrl-C raises `SimulationInterrupted`.
    """
    from .plugins import prepare

    scn = as_scenario(scenario)
    if seed is not None:
        scn = scn.with_seed(check_seed(seed))
    if duration is not None:
        scn = scn.with_duration(duration)
    if progress is not None and not callable(progress):
        raise ScenarioError("<progress>", f"expected a callable, got {type(progress).__name__}")
    trace_path: str | None = None
    if trace is not None:
        if not isinstance(trace, (str, os.PathLike)):
            raise ScenarioError("<trace>", f"expected a file path, got {type(trace).__name__}")
        trace_path = os.fspath(trace)
        _check_writable(trace_path)
    extra: dict[str, Any] = {}
    if trace_flows is not None:
        if isinstance(trace_flows, str) or not all(isinstance(f, str) for f in trace_flows):
            raise ScenarioError("<trace_flows>", "expected a list of flow names")
        if trace_path is None:
            raise ScenarioError("<trace_flows>", "needs a trace file (`trace=`)")
        extra["trace_flows"] = list(trace_flows)  # binding extension, not in _core.pyi yet
    prepared = prepare(scn, scheduler, path_manager)
    if prepared.plugins:
        extra["plugins"] = prepared.plugins  # binding extension, see _core.pyi
    text = prepared.core.to_json()
    pcap_files: dict[str, str] | None = None
    if pcap is not None:
        from .pcap import prepare_sim_captures

        pcap_files = prepare_sim_captures(pcap, text)
        extra["pcap_files"] = list(pcap_files.values())  # binding extension, see _core.pyi
    with core_errors():
        raw = _core.simulate(text, None, None, progress, trace_path, **extra)
    if pcap_files is not None:
        raw["meta"]["pcap"] = pcap_files
    labels = prepared.labels()
    if labels:
        summary = raw.get("summary") or {}
        for col, kind in (("scheduler", "scheduler"), ("path_manager", "path_manager")):
            if col in summary:
                summary[col] = [labels.get(f, {}).get(kind, v) for f, v in zip(summary["flow"], summary[col])]
    result = Result.from_core(raw, prepared.recorded)
    result.plugins = prepared.objects()
    return result


def _check_writable(path: str) -> None:
    """The core writes the trace after the run: fail now, not after a long simulation."""
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ScenarioError("<trace>", f"cannot write '{path}': it is a directory")
    if not os.path.isdir(parent):
        raise ScenarioError("<trace>", f"cannot write '{path}': no directory '{parent}'")
    target = path if os.path.exists(path) else parent
    if not os.access(target, os.W_OK):
        raise ScenarioError("<trace>", f"cannot write '{path}': permission denied")
