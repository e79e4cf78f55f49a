"""`Scenario`: a scenario as plain data (the structure of the TOML file, see docs/scenario.md).

The Rust core owns the schema. This class only reads TOML, builds and edits the data
and hands it to the core as JSON; `validate()` asks the core. Nothing here keeps a
second copy of the schema: the only checks made in Python are those JSON cannot carry
(NaN and infinities, TOML dates) and the Python types of the API's own arguments.
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

from . import _core
from .errors import ScenarioError, core_errors

__all__ = ["Scenario", "PathLike"]

PathLike = Union[str, os.PathLike]

_DATA = Path(__file__).resolve().parent / "data"
_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)$")
_INDEX = re.compile(r"\[(\d+)\]")


def _type_name(value: object) -> str:
    return type(value).__name__


def _check_json_safe(value: Any, field: str) -> None:
    """Reject what JSON cannot carry, naming the field (NaN would otherwise surface as a
    JSON syntax error at a column of text the user never wrote)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        if value is None:
            raise ScenarioError(field, "has no value (None); leave the field out to get the default")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ScenarioError(field, f"must be a finite number, got {value!r}")
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ScenarioError(field or "<scenario>", f"keys must be strings, got {k!r}")
            _check_json_safe(v, f"{field}.{k}" if field else k)
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_json_safe(v, f"{field}[{i}]")
        return
    if hasattr(value, "isoformat"):  # TOML dates and times
        raise ScenarioError(
            field,
            f"got a TOML date/time ({value.isoformat()}); write durations as strings with a unit, e.g. \"10 s\"",
        )
    raise ScenarioError(field or "<scenario>", f"unsupported value of type {_type_name(value)}: {value!r}")


WORKLOADS = ("websearch", "datamining")


def read_size_cdf(path: PathLike, field: str = "size_cdf") -> list[list[float]]:
    """A flow-size CDF file as [[size in bytes, cumulative probability], ...]: one point
    per line, two numbers separated by blanks or a comma, `#` starts a comment. A file
    whose last probability is 100 is in percent (the HPCC traffic_gen files) and is
    scaled to [0, 1]. The core checks the points (none, not monotone, not ending at 1);
    this reads them and names the line of anything that is not two numbers."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(field, f"cannot read the CDF '{p}': no such file (or a built-in: {', '.join(WORKLOADS)})") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ScenarioError(field, f"cannot read the CDF '{p}': {err}") from None
    points: list[list[float]] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].replace(",", " ").strip()
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            size, prob = float(parts[0]), float(parts[1])
        except ValueError:
            raise ScenarioError(field, f"{p}:{n}: expected two numbers (size in bytes, cumulative probability), got {line!r}") from None
        if not (math.isfinite(size) and math.isfinite(prob)):
            raise ScenarioError(field, f"{p}:{n}: expected finite numbers, got {line!r}")
        points.append([size, prob])
    if points and points[-1][1] == 100.0:
        points = [[s, q / 100.0] for s, q in points]
    return points


def _read_size_cdfs(data: dict[str, Any], base: Path) -> None:
    """Replace each `traffic[j].size_cdf` that names a file or a built-in workload by its
    points, so the core and a saved result's scenario carry the distribution itself."""
    traffic = data.get("traffic")
    if not isinstance(traffic, list):
        return
    for j, t in enumerate(traffic):
        if not isinstance(t, dict) or not isinstance(t.get("size_cdf"), str):
            continue
        name = t["size_cdf"]
        field = f"traffic[{j}].size_cdf"
        path = _DATA / "workloads" / f"{name}.cdf" if name in WORKLOADS else base / name
        t["size_cdf"] = read_size_cdf(path, field)


def _looks_like_toml_text(text: str) -> bool:
    """TOML text rather than a file name: several lines, or a key/table on one line that
    is not the name of an existing file."""
    if "\n" in text:
        return True
    if ("=" in text or text.lstrip().startswith("[")) and not Path(text).exists():
        return True
    return False


def _parse_path(path: str) -> list[str | int]:
    """'connections[0].app.kind' -> ['connections', 0, 'app', 'kind']"""
    steps: list[str | int] = []
    for segment in path.split("."):
        m = _SEGMENT.match(segment)
        if not m:
            raise ScenarioError(path, "is not a field path like 'connections[0].cc' or 'run.duration'")
        steps.append(m.group(1))
        steps.extend(int(i) for i in _INDEX.findall(m.group(2)))
    return steps


class Scenario:
    """A scenario as plain data. Build it with `from_toml`, `from_dict` or `default`.

    Instances are treated as values: `with_`, `with_duration` and `with_seed` return
    edited copies.
    """

    __slots__ = ("_data", "source")

    def __init__(self, data: Mapping[str, Any], source: str | None = None) -> None:
        if not isinstance(data, Mapping):
            raise ScenarioError("<scenario>", f"expected a table (dict), got {_type_name(data)}")
        self._data: dict[str, Any] = copy.deepcopy(dict(data))
        self.source = source  # file path the scenario came from, if any
        _read_size_cdfs(self._data, Path(source).parent if source else Path.cwd())

    # -- constructors --------------------------------------------------------------------
    @classmethod
    def from_toml(cls, path_or_text: PathLike) -> Scenario:
        """Read a scenario from a TOML file path or from TOML text."""
        if isinstance(path_or_text, os.PathLike) or (
            isinstance(path_or_text, str) and not _looks_like_toml_text(path_or_text)
        ):
            path = Path(path_or_text)
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise ScenarioError("<file>", f"cannot read '{path}': no such file") from None
            except IsADirectoryError:
                raise ScenarioError("<file>", f"cannot read '{path}': it is a directory") from None
            except (OSError, UnicodeDecodeError) as err:
                reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
                raise ScenarioError("<file>", f"cannot read '{path}': {reason}") from None
            return cls._from_text(text, str(path))
        if isinstance(path_or_text, str):
            return cls._from_text(path_or_text, None)
        raise ScenarioError(
            "<scenario>", f"expected a path or TOML text, got {_type_name(path_or_text)}"
        )

    @classmethod
    def _from_text(cls, text: str, source: str | None) -> Scenario:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            where = source or "TOML text"
            raise ScenarioError("<toml>", f"{where}: {err}") from None
        return cls(data, source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """Build a scenario from a dict with the structure of the TOML file."""
        return cls(data)

    @classmethod
    def default(cls) -> Scenario:
        """The embedded default scenario: MPTCP over a WiFi-like and an LTE-like path."""
        return cls.from_toml(_DATA / "default.toml")

    @classmethod
    def bench(cls, name: str) -> Scenario:
        """One of the fixed benchmark scenarios shipped in the package (`bench_names()`)."""
        path = _DATA / "bench" / f"{name}.toml"
        if not path.is_file():
            raise ScenarioError("<scenario>", f"no bench scenario '{name}'; known: {', '.join(bench_names())}")
        return cls.from_toml(path)

    # -- views ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        name = self._data.get("name")
        if isinstance(name, str) and name:
            return name
        return Path(self.source).stem if self.source else "scenario"

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the scenario data."""
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        """The scenario as compact JSON text (keys in file order); `sha256()` hashes it."""
        _check_json_safe(self._data, "")
        return json.dumps(self._data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


    def to_toml(self) -> str:
        """The scenario as TOML text (written by tomli-w); `Scenario.from_toml(s.to_toml())`
        gives back `s`. Not a hash input: `sha256()` and stored kernel runs hash the data."""
        import tomli_w  # first use only: `import mptcplab` stays light

        _check_json_safe(self._data, "")
        return tomli_w.dumps(self._data, indent=2)

    def sha256(self) -> str:
        """SHA-256 of `to_json()`: identifies the exact input of a run."""
        return hashlib.sha256(self.to_json().encode("utf-8")).hexdigest()

    def validate(self) -> Scenario:
        """Ask the core to validate; return the normalised scenario (defaults filled,
        multi-homed hosts expanded). Raises `ScenarioError` naming the field.
        Python plug-in references (``scheduler = "python:module:Class"``) are checked by
        importing them, not by constructing them."""
        from .plugins import prepare, restore

        prepared = prepare(self, build=False)
        text = prepared.core.to_json()
        with core_errors():
            normalised = _core.validate(text)
        return Scenario(restore(json.loads(normalised), prepared), self.source)

    def routes(self, seed: int | None = None) -> Any:
        """The paths each connection runs on, as a DataFrame: connection, src and dst
        (hosts of a `[topology]`, empty otherwise), path, and hops (the links in the data
        direction, each "<link>/forward" or "/reverse", joined by " > "). For generated
        traffic this is what the seed picked (the scenario's seed, or `seed`)."""
        import pandas as pd

        from .plugins import prepare

        text = prepare(self, build=False).core.to_json()
        with core_errors():
            rows = _core.routes(text, None if seed is None else check_seed(seed))
        return pd.DataFrame(
            [(c, a, b, p, " > ".join(h)) for c, a, b, p, h in rows],
            columns=["connection", "src", "dst", "path", "hops"],
        )

    # -- edits (return copies) -----------------------------------------------------------
    def with_(self, path: str, value: Any) -> Scenario:
        """Copy with one field set: ``s.with_("connections[0].cc", "reno")``.

        Missing tables on the way are created; list indices must exist.
        """
        if not isinstance(path, str) or not path:
            raise ScenarioError("<path>", f"expected a field path string, got {path!r}")
        steps = _parse_path(path)
        data = copy.deepcopy(self._data)
        node: Any = data
        walked = ""
        for step, nxt in zip(steps, steps[1:]):
            walked = f"{walked}[{step}]" if isinstance(step, int) else (f"{walked}.{step}" if walked else step)
            if isinstance(step, int):
                if not isinstance(node, list) or step >= len(node):
                    size = len(node) if isinstance(node, list) else 0
                    raise ScenarioError(walked, f"index {step} is out of range (the list has {size} entries)")
                node = node[step]
            else:
                if not isinstance(node, dict):
                    raise ScenarioError(walked, "cannot set a field inside a value that is not a table")
                if step not in node:
                    node[step] = [] if isinstance(nxt, int) else {}
                node = node[step]
        last = steps[-1]
        if isinstance(last, int):
            if not isinstance(node, list) or last >= len(node):
                raise ScenarioError(path, "index is out of range")
            node[last] = copy.deepcopy(value)
        else:
            if not isinstance(node, dict):
                raise ScenarioError(path, "cannot set a field inside a value that is not a table")
            node[last] = copy.deepcopy(value)
        return Scenario(data, self.source)

    def with_duration(self, duration: float | str) -> Scenario:
        """Copy with ``run.duration`` set: seconds as a number, or a string with a unit."""
        return self.with_("run.duration", _duration_text(duration))

    def with_seed(self, seed: int) -> Scenario:
        """Copy with ``run.seed`` set."""
        return self.with_("run.seed", check_seed(seed))

    # -- dunder --------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self._data == other._data

    __hash__ = None  # type: ignore[assignment]  # mutable data

    def __repr__(self) -> str:
        counts = ", ".join(
            f"{len(self._data[k])} {k}" for k in ("links", "paths", "connections", "flows", "hosts")
            if isinstance(self._data.get(k), list) and self._data[k]
        )
        return f"Scenario({self.name!r}{', ' + counts if counts else ''})"

    def _repr_html_(self) -> str:
        """Jupyter's display: name, description, run settings, links, paths, connections
        and background flows as written (fields left out show as a dash: the core's
        defaults apply). Text is escaped; no scripts."""
        from . import _html as h

        d = self._data

        def rows(key: str) -> list[Mapping[str, Any]]:
            items = d.get(key)
            return [x for x in items if isinstance(x, Mapping)] if isinstance(items, list) else []

        run = d.get("run") if isinstance(d.get("run"), Mapping) else {}
        parts = [h.fields([
            ("duration", run.get("duration")), ("seed", run.get("seed")),
            ("sample interval", run.get("sample_interval")),
            ("profile", run.get("profile", "out_of_tree (default)")),
            *([("source", self.source)] if self.source else []),
        ])]
        links = rows("links")
        if links:
            parts += [h.heading(f"links ({len(links)})"), h.table(
                ["name", "rate", "delay", "queue", "loss", "schedule"],
                [[x.get("name"), x.get("rate"), x.get("delay"), x.get("queue"),
                  x.get("loss_model", x.get("loss")),
                  f"{len(x['schedule'])} steps" if isinstance(x.get("schedule"), list) else None]
                 for x in links])]
        paths = rows("paths")
        if paths:
            parts += [h.heading(f"paths ({len(paths)})"), h.table(
                ["name", "links", "backup"],
                [[x.get("name"), ", ".join(map(str, x.get("links") or [])), x.get("backup")] for x in paths])]
        conns = rows("connections")
        if conns:
            parts += [h.heading(f"connections ({len(conns)})"), h.table(
                ["name", "paths", "cc", "scheduler", "path manager", "send buffer", "receive buffer", "app"],
                [[x.get("name"), x.get("paths"), x.get("cc"), x.get("scheduler"), x.get("path_manager"),
                  x.get("send_buffer"), x.get("receive_buffer"), x.get("app")] for x in conns])]
        flows = rows("flows")
        if flows:
            parts += [h.heading(f"TCP flows ({len(flows)})"), h.table(
                ["name", "path", "cc", "start", "app"],
                [[x.get("name"), x.get("path"), x.get("cc"), x.get("start"), x.get("app")] for x in flows])]
        hosts = rows("hosts")
        if hosts:
            parts += [h.heading(f"hosts ({len(hosts)})"), h.table(
                ["name", "ISPs"],
                [[x.get("name"), ", ".join(str(i.get("name")) for i in x.get("isps") or [] if isinstance(i, Mapping))]
                 for x in hosts])]
        desc = d.get("description")
        return h.wrap(f"Scenario {self.name}", desc if isinstance(desc, str) else None, parts)


def bench_names() -> list[str]:
    return sorted(p.stem for p in (_DATA / "bench").glob("*.toml"))


def check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScenarioError("run.seed", f"expected a non-negative integer, got {seed!r}")
    if seed < 0 or seed >= 2**64:
        raise ScenarioError("run.seed", f"must be in [0, 2^64), got {seed}")
    return seed


def _duration_text(duration: object) -> str:
    """Seconds (number or numeric string) -> "N s"; strings with a unit pass through for
    the core to check."""
    if isinstance(duration, bool):
        raise ScenarioError("run.duration", f"expected seconds or a string like \"10 s\", got {duration!r}")
    if isinstance(duration, (int, float)):
        seconds = float(duration)
    elif isinstance(duration, str):
        try:
            seconds = float(duration.strip())
        except ValueError:
            return duration.strip()
    else:
        raise ScenarioError(
            "run.duration", f"expected seconds or a string like \"10 s\", got {_type_name(duration)}"
        )
    if not math.isfinite(seconds) or seconds <= 0:
        raise ScenarioError("run.duration", f"must be a positive number of seconds, got {duration!r}")
    return _seconds_text(seconds)


def _seconds_text(seconds: float) -> str:
    """Exact, unit-suffixed text for a number of seconds: 30 -> "30 s", 0.25 -> "250 ms"."""
    for unit, scale in (("s", 1), ("ms", 1_000), ("us", 1_000_000)):
        value = seconds * scale
        if value == round(value) and abs(value) < 2**53:
            return f"{int(round(value))} {unit}"
    return f"{int(round(seconds * 1e9))} ns"
