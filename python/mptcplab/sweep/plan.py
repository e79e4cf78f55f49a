"""Sweep plans: parsing, validation against the scenario schema, point expansion.

A plan is a TOML file (docs/sweeps.md):

    name = "cc-x-buffer"
    scenario = "../two-paths-wifi-lte.toml"   # relative to the plan file
    mode = "cartesian"                         # or "zip"
    repetitions = 3                            # seeds seed, seed+1, ..., seed+repetitions-1
    seed = 1                                   # default: the base scenario's run.seed (else 1)
    duration = "10 s"                          # optional override of run.duration
    metrics = ["goodput_mbps", "subflow_summary.mean_srtt_ms"]
    backend = "sim"                            # or "kernel": every point on the Linux stack

    [parameters]
    "connections[0].cc" = ["cubic", "lia"]
    "connections[0].send_buffer" = { start = 1, stop = 4, step = 1, unit = "MiB" }

Every error is a `ScenarioError` whose field names the plan entry (``parameters."x"``,
``metrics[1]``, ``repetitions`` ...), so the CLI prints it on one line.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..scenario import Scenario, _parse_path, check_seed

__all__ = ["Plan", "Point", "load_plan", "parse_plan", "SUMMARY_TABLES"]

# Tables a sweep can keep columns of: one row per flow (summary, fct) or per subflow.
SUMMARY_TABLES = ("summary", "subflow_summary", "fct")
_KEYS = {"name", "scenario", "mode", "repetitions", "seed", "duration", "metrics", "parameters", "backend"}
BACKENDS = ("sim", "kernel")
DEFAULT_METRICS = ["goodput_mbps", "bytes_sent", "bytes_retrans"]


@dataclass(frozen=True)
class Point:
    """One run of a sweep: parameter values, repetition, seed, and the scenario to run."""

    index: int
    params: dict[str, Any]
    rep: int
    seed: int
    scenario_json: str  # the point's scenario (seed set), compact JSON
    scenario_hash: str  # sha256 of the scenario without the seed: key = (hash, seed, version)
    kernel: bool = False  # a kernel-backend point: never run concurrently, run by run_kernel
    marks_s: tuple[float, ...] = ()  # times at which the record keeps delivered bytes (run_point)

    @property
    def backend(self) -> str:
        return "kernel" if self.kernel else "sim"

    def key(self, version: str) -> str:
        return f"{self.scenario_hash[:20]}-seed{self.seed}-v{version}"


@dataclass
class Plan:
    name: str
    base: Scenario
    mode: str
    repetitions: int
    seed: int
    duration: str | None
    metrics: list[tuple[str, str]]  # (table, column)
    parameters: dict[str, list[Any]]
    source: str | None = None
    text_sha256: str = ""
    # Sampled times (s) at which each point's record also keeps the bytes delivered per
    # flow and acked per subflow, and the subflows' mean SRTT between the first and the
    # last mark (`run_point`): goodput over a window, e.g. after a warm-up. Part of the
    # point's key. Python API only (mptcplab.mpcoa uses it).
    marks_s: tuple[float, ...] = ()
    # "sim" or "kernel" (plan field `backend`): kernel points run one at a time in the
    # driver, through mptcplab.kernel.run_kernel (docs/sweeps.md).
    backend: str = "sim"
    _points: list[Point] | None = field(default=None, repr=False)

    @property
    def metric_names(self) -> list[str]:
        return [c if t == "summary" else f"{t}.{c}" for t, c in self.metrics]

    def combos(self) -> list[dict[str, Any]]:
        paths = list(self.parameters)
        if not paths:
            return [{}]
        if self.mode == "zip":
            return [dict(zip(paths, vals)) for vals in zip(*self.parameters.values())]
        return [dict(zip(paths, vals)) for vals in itertools.product(*self.parameters.values())]

    def points(self) -> list[Point]:
        """Every point, in order: parameter combination major, repetition minor. Each
        point's scenario is validated by the core (errors name the parameter)."""
        if self._points is not None:
            return self._points
        out: list[Point] = []
        base = self.base if self.duration is None else self.base.with_duration(self.duration)
        for combo in self.combos():
            sc = base
            for path, value in combo.items():
                try:
                    sc = sc.with_(path, value)
                except ScenarioError as err:
                    raise ScenarioError(f'parameters."{path}"', f"{err.field}: {err.message}") from None
            try:
                sc.validate()
            except ScenarioError as err:
                shown = ", ".join(f"{p} = {v!r}" for p, v in combo.items())
                raise ScenarioError(_param_field(err.field, combo), f"{err.message} (at {shown})") from None
            keyed = _without_seed(sc.to_dict())
            if self.marks_s:  # a record with marks holds more than one without: another key
                keyed += "|marks=" + ",".join(repr(float(m)) for m in self.marks_s)
            kernel = self.backend == "kernel" or is_kernel(sc.to_dict())
            if kernel:  # a kernel run is another measurement of the same scenario: another key
                keyed += "|backend=kernel"
            scenario_hash = hashlib.sha256(keyed.encode()).hexdigest()
            for rep in range(self.repetitions):
                seed = self.seed + rep
                out.append(Point(len(out), dict(combo), rep, seed, sc.with_seed(seed).to_json(),
                                 scenario_hash, kernel, tuple(self.marks_s)))
        self._points = out
        return out


def is_kernel(data: dict[str, Any]) -> bool:
    """A scenario that asks for the kernel backend itself (``backend = "kernel"`` at the
    top or in [run]), should the schema ever admit it; today a plan selects the backend
    with its own `backend` field. Kernel points never run concurrently: they share the
    host's network stack and its two cores."""
    run = data.get("run") if isinstance(data.get("run"), dict) else {}
    return data.get("backend") == "kernel" or run.get("backend") == "kernel"


def _without_seed(data: dict[str, Any]) -> str:
    run = dict(data.get("run") or {})
    run.pop("seed", None)
    data = {**data, "run": run}
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _param_field(field_name: str, combo: dict[str, Any]) -> str:
    for path in combo:
        if field_name == path or field_name.startswith(path + ".") or field_name.startswith(path + "["):
            return f'parameters."{path}"'
    return f"scenario: {field_name}" if field_name else "scenario"


# -- loading -----------------------------------------------------------------------------
def load_plan(path: str | Path) -> Plan:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError("<plan>", f"cannot read '{path}': no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ScenarioError("<plan>", f"cannot read '{path}': {err}") from None
    return parse_plan(text, base_dir=path.parent, source=str(path))


def parse_plan(text: str, base_dir: str | Path = ".", source: str | None = None) -> Plan:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError("<toml>", f"{source or 'plan'}: {err}") from None
    for key in data:
        if key not in _KEYS:
            raise ScenarioError(key, f"unknown plan field; known: {', '.join(sorted(_KEYS))}")

    # base scenario: a path (relative to the plan) or an inline table
    raw = data.get("scenario")
    if raw is None:
        raise ScenarioError("scenario", "missing: name the base scenario file (or give an inline table)")
    if isinstance(raw, str):
        spath = Path(raw) if Path(raw).is_absolute() else Path(base_dir) / raw
        if not spath.is_file():
            raise ScenarioError("scenario", f"cannot read '{spath}': no such file")
        try:
            base = Scenario.from_toml(spath)
        except ScenarioError as err:
            raise ScenarioError(f"scenario: {err.field}", err.message) from None
    elif isinstance(raw, dict):
        base = Scenario.from_dict(raw)
    else:
        raise ScenarioError("scenario", f"expected a file path or a table, got {type(raw).__name__}")
    try:
        base.validate()
    except ScenarioError as err:
        raise ScenarioError(f"scenario: {err.field}", err.message) from None

    name = data.get("name", Path(source).stem if source else "sweep")
    if not isinstance(name, str) or not name:
        raise ScenarioError("name", f"expected a non-empty string, got {name!r}")
    mode = data.get("mode", "cartesian")
    if mode not in ("cartesian", "zip"):
        raise ScenarioError("mode", f"expected \"cartesian\" or \"zip\", got {mode!r}")
    reps = data.get("repetitions", 1)
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise ScenarioError("repetitions", f"expected a positive integer, got {reps!r}")
    seed = data.get("seed", (base.to_dict().get("run") or {}).get("seed", 1))
    try:
        seed = check_seed(seed)
    except ScenarioError as err:
        raise ScenarioError("seed", err.message) from None
    if seed + reps - 1 >= 2**64:
        raise ScenarioError("seed", "seed + repetitions - 1 must stay below 2^64")
    duration = data.get("duration")
    if duration is not None:
        if isinstance(duration, bool) or not isinstance(duration, (int, float, str)):
            raise ScenarioError("duration", f"expected seconds or a string like \"10 s\", got {duration!r}")
        try:
            duration = base.with_duration(duration).validate().to_dict()["run"]["duration"]
        except ScenarioError as err:
            raise ScenarioError("duration", err.message) from None
        duration = str(duration) if not isinstance(duration, (int, float)) else duration

    backend = data.get("backend", "sim")
    if backend not in BACKENDS:
        raise ScenarioError("backend", f"expected \"sim\" or \"kernel\", got {backend!r}")
    parameters = _parameters(data.get("parameters", {}), base, mode)
    metrics = _metrics(data.get("metrics", DEFAULT_METRICS), base)
    plan = Plan(name, base, mode, reps, seed, duration, metrics, parameters, source,
                hashlib.sha256(text.encode()).hexdigest(), backend=backend)
    plan.points()  # validate every point's scenario before anything runs
    return plan


def _parameters(raw: Any, base: Scenario, mode: str) -> dict[str, list[Any]]:
    if not isinstance(raw, dict):
        raise ScenarioError("parameters", f"expected a table of \"schema.path\" = values, got {type(raw).__name__}")
    schema = _schema()
    out: dict[str, list[Any]] = {}
    for path, spec in raw.items():
        fld = f'parameters."{path}"'
        if isinstance(spec, dict) and not {"start", "stop", "step", "values", "unit"} >= set(spec):
            # `a.b = [...]` without quotes parses as a nested table: say so
            raise ScenarioError(fld, "quote parameter paths: \"connections[0].cc\" = [...]; "
                                "a range is { start, stop, step[, unit] }")
        check_schema_path(path, schema, fld)
        values = _values(spec, fld)
        out[path] = values
    if mode == "zip" and out:
        lengths = {p: len(v) for p, v in out.items()}
        if len(set(lengths.values())) > 1:
            first = next(iter(lengths))
            bad = next(p for p, n in lengths.items() if n != lengths[first])
            raise ScenarioError(f'parameters."{bad}"',
                                f"has {lengths[bad]} values but \"{first}\" has {lengths[first]}; zip needs equal lengths")
    return out


def _values(spec: Any, fld: str) -> list[Any]:
    if isinstance(spec, list):
        if not spec:
            raise ScenarioError(fld, "needs at least one value")
        return list(spec)
    if isinstance(spec, dict):
        if "values" in spec:
            if set(spec) != {"values"}:
                raise ScenarioError(fld, "give either `values` or a range { start, stop, step[, unit] }")
            return _values(spec["values"], fld)
        for k in ("start", "stop", "step"):
            v = spec.get(k)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ScenarioError(f"{fld}.{k}", f"expected a number, got {v!r}")
        start, stop, step = spec["start"], spec["stop"], spec["step"]
        if step <= 0:
            raise ScenarioError(f"{fld}.step", f"must be positive, got {step!r}")
        if stop < start:
            raise ScenarioError(f"{fld}.stop", f"must be >= start ({start}), got {stop!r}")
        n = int(math.floor((stop - start) / step + 1e-9)) + 1
        if n > 100_000:
            raise ScenarioError(fld, f"range has {n} values; at most 100000")
        ints = all(isinstance(spec[k], int) for k in ("start", "stop", "step"))
        vals: list[Any] = [start + i * step if ints else round(start + i * step, 12) for i in range(n)]
        unit = spec.get("unit")
        if unit is not None:
            if not isinstance(unit, str) or not unit.strip():
                raise ScenarioError(f"{fld}.unit", f"expected a unit string like \"MiB\", got {unit!r}")
            vals = [f"{v:g} {unit.strip()}" for v in vals]
        return vals
    raise ScenarioError(fld, f"expected a list of values or a range table, got {type(spec).__name__}")


def _metrics(raw: Any, base: Scenario) -> list[tuple[str, str]]:
    if not isinstance(raw, list) or not raw:
        raise ScenarioError("metrics", "expected a non-empty list of column names, e.g. [\"goodput_mbps\"]")
    known = _columns(base)
    out: list[tuple[str, str]] = []
    for i, m in enumerate(raw):
        if not isinstance(m, str) or not m:
            raise ScenarioError(f"metrics[{i}]", f"expected a column name, got {m!r}")
        table, _, col = m.rpartition(".")
        table = table or "summary"
        if table not in SUMMARY_TABLES:
            raise ScenarioError(f"metrics[{i}]", f"unknown table '{table}'; use summary.COLUMN, subflow_summary.COLUMN or fct.COLUMN")
        if col not in known[table]:
            raise ScenarioError(f"metrics[{i}]", f"'{m}' is not a column of {table}; known: {', '.join(known[table])}")
        if (table, col) not in out:
            out.append((table, col))
    return out


def _columns(base: Scenario) -> dict[str, list[str]]:
    """Column names of the summary tables, from a 1 ms run of the base scenario."""
    from ..api import simulate

    res = simulate(base, duration="1 ms")
    return {t: list(res.columns(t)) for t in SUMMARY_TABLES}


# -- schema paths ------------------------------------------------------------------------
def _schema() -> dict[str, Any]:
    from .. import _core

    return json.loads(_core.schema_json())


def _resolve(node: Any, root: dict[str, Any]) -> list[dict[str, Any]]:
    """A schema node's alternatives, with $ref, allOf/anyOf/oneOf flattened."""
    if not isinstance(node, dict):
        return []
    if "$ref" in node:
        ref = node["$ref"]
        target: Any = root
        for part in ref.lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return _resolve(target, root)
    out = [node]
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(key, []):
            out.extend(_resolve(sub, root))
    return out


def check_schema_path(path: str, schema: dict[str, Any], fld: str) -> None:
    """Raise a ScenarioError naming `fld` unless `path` names a field of the schema."""
    try:
        steps = _parse_path(path)
    except ScenarioError as err:
        raise ScenarioError(fld, err.message) from None
    nodes = _resolve(schema, schema)
    walked = ""
    for step in steps:
        nxt: list[dict[str, Any]] = []
        if isinstance(step, int):
            walked += f"[{step}]"
            for n in nodes:
                if isinstance(n.get("items"), dict):
                    nxt.extend(_resolve(n["items"], schema))
            if not nxt:
                raise ScenarioError(fld, f"'{walked}' indexes a field that is not a list")
        else:
            walked = f"{walked}.{step}" if walked else step
            known: set[str] = set()
            for n in nodes:
                props = n.get("properties") or {}
                known.update(props)
                if step in props:
                    nxt.extend(_resolve(props[step], schema))
                elif isinstance(n.get("additionalProperties"), dict):
                    nxt.extend(_resolve(n["additionalProperties"], schema))
            if not nxt:
                hint = f"; known here: {', '.join(sorted(known))}" if known else ""
                raise ScenarioError(fld, f"'{walked}' is not a field of the scenario schema{hint}")
        nodes = nxt
