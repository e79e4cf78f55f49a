"""Schedulers and path managers written in Python, for prototyping (docs/plugins.md).

A scheduler is any object with a ``schedule(view)`` method; a path manager any object
with an ``on_established(view)`` method. A scenario names one with
``scheduler = "python:package.module:ClassName"`` (or ``"python:path/to/file.py:ClassName"``)
and passes ``scheduler_options`` to its constructor; the API takes a class, an
instance or a reference string: ``mptcplab.simulate(scenario, scheduler=MyScheduler())``,
or a dict by connection name.

At each decision a scheduler gets a read-only `SchedView` and returns a list of actions
(`Send`, `Enqueue`, `Penalise`, `Wait`; segments `New`, `Reinject`, `Copy`), the
Python mirror of the core's ``Action`` and ``Segment``. These classes are implemented in
the compiled core; this module re-exports them and resolves plug-in references.
"""
from __future__ import annotations

import copy
import functools
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Protocol, Union, runtime_checkable

from . import _core
from .errors import ScenarioError

__all__ = [
    "Copy",
    "DataRef",
    "Enqueue",
    "MetaView",
    "New",
    "OpenSubflow",
    "PathManager",
    "Penalise",
    "PluginError",
    "PmView",
    "PREFIX",
    "Reinject",
    "SchedView",
    "Scheduler",
    "Send",
    "SubflowView",
    "Wait",
    "is_reference",
    "load",
    "reference_of",
]

# -- the API classes (implemented in Rust, crates/mptcplab-py/src/plugins.rs) ------------
New = _core.New
Reinject = _core.Reinject
Copy = _core.Copy
Send = _core.Send
Enqueue = _core.Enqueue
Penalise = _core.Penalise
Wait = _core.Wait
OpenSubflow = _core.OpenSubflow
SchedView = _core.SchedView
SubflowView = _core.SubflowView
MetaView = _core.MetaView
DataRef = _core.DataRef
PmView = _core.PmView
PluginError = _core.PluginError

PREFIX = "python:"
KINDS = ("scheduler", "path_manager")
_LABEL = {"scheduler": "scheduler", "path_manager": "path manager"}
_METHOD = {"scheduler": "schedule", "path_manager": "on_established"}
# Built-in stand-ins the core validates and builds; the plug-in replaces them before the run.
_PLACEHOLDER = {"scheduler": "minrtt", "path_manager": "fullmesh"}

Action = Union["_core.Send", "_core.Enqueue", "_core.Penalise", "_core.Wait"]


@runtime_checkable
class Scheduler(Protocol):
    """What a scheduler plug-in provides. Subclassing is not needed."""

    def schedule(self, view: SchedView) -> Optional[Iterable[Action]]:
        """Called whenever the connection may send: return the actions to carry out now
        (an empty list or None: nothing to do)."""
        ...


@runtime_checkable
class PathManager(Protocol):
    """What a path-manager plug-in provides. Subclassing is not needed."""

    def on_established(self, view: PmView) -> Optional[Iterable[OpenSubflow]]:
        """Called once, when the initial subflow is established: return the subflows to open."""
        ...


# -- references --------------------------------------------------------------------------
def is_reference(name: object) -> bool:
    """Whether a scenario's ``scheduler`` / ``path_manager`` names a Python plug-in."""
    return isinstance(name, str) and name.startswith(PREFIX)


def reference_of(obj: Any) -> str:
    """The ``python:module:QualName`` label of a plug-in object, class or factory."""
    target = obj
    while isinstance(target, functools.partial):
        target = target.func
    if not isinstance(target, type) and not hasattr(target, "__qualname__"):
        target = type(target)  # an instance
    module = getattr(target, "__module__", None) or "?"
    qualname = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or type(target).__name__
    return f"{PREFIX}{module}:{qualname}"


def _parse(reference: str, where: str) -> tuple[str, str]:
    body = reference[len(PREFIX):]
    target, sep, attr = body.rpartition(":")
    if not sep or not target or not attr or any(not part.isidentifier() for part in attr.split(".")):
        raise ScenarioError(
            where,
            f"{reference!r} is not a plug-in reference; expected \"python:package.module:ClassName\" "
            "or \"python:path/to/file.py:ClassName\"",
        )
    return target, attr


def _is_file(target: str) -> bool:
    return target.endswith(".py") or "/" in target or os.sep in target


_FILE_MODULES: dict[Path, Any] = {}  # resolved file path -> module loaded from it


def _import_file(path: Path, reference: str, kind: str, where: str) -> Any:
    if not path.is_file():
        raise ScenarioError(where, f"cannot load {reference!r}: no file '{path}'")
    path = path.resolve()
    module = _FILE_MODULES.get(path)
    if module is not None and sys.modules.get(module.__name__) is module:
        return module
    same = sys.modules.get(path.stem)  # already imported the normal way
    if same is not None and getattr(same, "__file__", None) and Path(same.__file__).resolve() == path:
        _FILE_MODULES[path] = same
        return same
    name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules else f"_mptcplab_plugin_{abs(hash(str(path))):x}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ScenarioError(where, f"cannot load {reference!r}: '{path}' is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # so that instances pickle by reference in this process
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _plugin_error(kind, reference, None, "<import>", exc) from exc
    _FILE_MODULES[path] = module
    return module


def _import_module(target: str, reference: str, kind: str, where: str) -> Any:
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (target == missing or target.startswith(missing + ".")):
            raise ScenarioError(
                where,
                f"cannot import {reference!r}: no module named {missing!r} "
                "(put its directory on PYTHONPATH, or name the file: \"python:path/to/file.py:ClassName\")",
            ) from None
        raise _plugin_error(kind, reference, None, "<import>", exc) from exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the plug-in module's own code failed
        raise _plugin_error(kind, reference, None, "<import>", exc) from exc


def _resolve(reference: str, kind: str, where: str, base_dir: Path | None) -> Callable[..., Any]:
    target, attr = _parse(reference, where)
    if _is_file(target):
        path = Path(target).expanduser()
        if not path.is_absolute():
            path = (base_dir or Path.cwd()) / path
        module = _import_file(path, reference, kind, where)
    else:
        module = _import_module(target, reference, kind, where)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ScenarioError(where, f"cannot load {reference!r}: {module.__name__!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise ScenarioError(where, f"{reference!r} is not a class or a callable that builds a {_LABEL[kind]}")
    return obj


def _plugin_error(kind: str, label: str, flow: str | None, method: str, exc: BaseException) -> Exception:
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    where = f" (connection {flow!r})" if flow else ""
    err = PluginError(f"{_LABEL[kind]} plug-in {label}{where} failed in {method}: {detail}")
    err.plugin = label
    err.kind = _LABEL[kind]
    err.flow = flow
    err.method = method
    err.time_s = None
    return err


def _check_hook(obj: Any, kind: str, label: str, where: str) -> None:
    method = _METHOD[kind]
    hook = getattr(obj, method, None)
    if kind == "scheduler" and not callable(hook):
        raise ScenarioError(where, f"{label} built {type(obj).__name__!r}, which has no {method}(view) method")
    if kind == "path_manager" and hook is not None and not callable(hook):
        raise ScenarioError(where, f"{label} built {type(obj).__name__!r}, whose {method} is not callable")


def _construct(factory: Callable[..., Any], options: Mapping[str, Any], kind: str, label: str, flow: str | None,
               where: str) -> Any:
    try:
        obj = factory(**options)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise _plugin_error(kind, label, flow, "__init__", exc) from exc
    _check_hook(obj, kind, label, where)
    return obj


def load(reference: str, options: Mapping[str, Any] | None = None, *, kind: str = "scheduler",
         base_dir: str | os.PathLike | None = None) -> Any:
    """Build the plug-in a reference names: ``load("python:pkg.mod:Class", {"x": 1})`` is
    ``pkg.mod.Class(x=1)``. A file reference is relative to `base_dir` (default: the
    current directory). Raises `ScenarioError` for a bad reference and `PluginError`
    when the plug-in's own code fails (importing its module or constructing it)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not is_reference(reference):
        raise ScenarioError(f"<{kind}>", f"expected a \"python:module:ClassName\" reference, got {reference!r}")
    base = Path(base_dir) if base_dir is not None else None
    factory = _resolve(reference, kind, f"<{kind}>", base)
    return _construct(factory, dict(options or {}), kind, reference, None, f"<{kind}>")


# -- what `simulate` and `Scenario.validate` use -------------------------------------------
@dataclass
class Prepared:
    """A scenario split into what the core runs (built-in placeholders where plug-ins go)
    and the plug-ins to install."""

    core: Any  # Scenario for the core
    recorded: Any  # Scenario as recorded in the result (plug-in references in place)
    plugins: list[tuple[str, str, Any, str]] = field(default_factory=list)  # (flow, kind, obj, label)

    def labels(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for flow, kind, _obj, label in self.plugins:
            out.setdefault(flow, {})[kind] = label
        return out

    def objects(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for flow, kind, obj, _label in self.plugins:
            out.setdefault(flow, {})[kind] = obj
        return out


def _object_spec(value: Any, kind: str, where: str) -> Any:
    """Check an object handed to the API (class, instance or factory)."""
    if isinstance(value, type) or callable(getattr(value, _METHOD[kind], None)) or callable(value):
        return value
    raise ScenarioError(
        where,
        f"expected a {_LABEL[kind]}: a built-in name, a \"python:module:Class\" reference, a class, "
        f"an object with a {_METHOD[kind]}(view) method, or a dict of those by connection name; "
        f"got {type(value).__name__}",
    )


def _instantiate(spec: Any, kind: str, label: str, flow: str, where: str) -> Any:
    if isinstance(spec, type):
        return _construct(spec, {}, kind, label, flow, where)
    if callable(getattr(spec, _METHOD[kind], None)):
        # A template: every connection of every run works on its own copy, so runs repeat.
        try:
            obj = copy.deepcopy(spec)
        except Exception as exc:
            raise ScenarioError(
                where, f"{label} cannot be copied ({type(exc).__name__}: {exc}); plug-ins must be picklable"
            ) from None
        return obj
    return _construct(spec, {}, kind, label, flow, where)  # a factory such as functools.partial


def prepare(scenario: Any, scheduler: Any = None, path_manager: Any = None, *, build: bool = True) -> Prepared:
    """Apply the API's `scheduler` / `path_manager` overrides, resolve every ``python:``
    reference (and, with `build`, construct the plug-ins), and replace them with built-in
    placeholders in the copy the core gets."""
    # The scenario's own class builds the copies (`mptcplab.scenario` imports this module).
    Scenario = type(scenario)

    data = scenario.to_dict()
    recorded = scenario.to_dict()
    conns = data.get("connections")
    rec_conns = recorded.get("connections")
    if not isinstance(conns, list):
        conns, rec_conns = [], []
    names = [c.get("name") if isinstance(c, dict) else None for c in conns]
    objects: dict[tuple[int, str], Any] = {}
    for kind, override in (("scheduler", scheduler), ("path_manager", path_manager)):
        if override is None:
            continue
        if isinstance(override, Mapping):
            targets = {}
            for name, value in override.items():
                if name not in names:
                    known = ", ".join(repr(n) for n in names if isinstance(n, str)) or "none"
                    raise ScenarioError(f"<{kind}>", f"no connection named {name!r} (connections: {known})")
                targets[names.index(name)] = value
        else:
            targets = {i: override for i, c in enumerate(conns) if isinstance(c, dict)}
        for i, value in targets.items():
            where = f"<{kind}>"
            for d in (conns[i], rec_conns[i]):
                d.pop(f"{kind}_options", None)
            if isinstance(value, str):
                conns[i][kind] = rec_conns[i][kind] = value
            else:
                objects[(i, kind)] = _object_spec(value, kind, where)
                conns[i][kind] = rec_conns[i][kind] = reference_of(value)
    base_dir = Path(scenario.source).resolve().parent if getattr(scenario, "source", None) else None
    prepared = Prepared(core=None, recorded=Scenario(recorded, scenario.source))
    for i, c in enumerate(conns):
        if not isinstance(c, dict):
            continue
        flow = c.get("name") if isinstance(c.get("name"), str) else f"connections[{i}]"
        for kind in KINDS:
            name = c.get(kind)
            where = f"connections[{i}].{kind}"
            if (i, kind) in objects:
                label = name
                obj = _instantiate(objects[(i, kind)], kind, label, flow, where) if build else None
            elif is_reference(name):
                label = name
                options = c.get(f"{kind}_options", {})
                if not isinstance(options, Mapping):
                    raise ScenarioError(f"connections[{i}].{kind}_options", "expected a table of constructor arguments")
                factory = _resolve(name, kind, where, base_dir)
                obj = _construct(factory, options, kind, label, flow, where) if build else None
            else:
                continue
            c[kind] = _PLACEHOLDER[kind]
            c.pop(f"{kind}_options", None)
            prepared.plugins.append((flow, kind, obj, label))
    prepared.core = Scenario(data, scenario.source)
    return prepared


def restore(normalised: dict[str, Any], prepared: Prepared) -> dict[str, Any]:
    """Put the plug-in references (and their options) back into a scenario the core
    normalised."""
    by_name = {c.get("name"): c for c in prepared.recorded.to_dict().get("connections", []) if isinstance(c, dict)}
    for c in normalised.get("connections", []):
        original = by_name.get(c.get("name"))
        if original is None:
            continue
        for kind in KINDS:
            name = original.get(kind)
            if is_reference(name):
                c[kind] = name
                c.pop(f"{kind}_options", None)
                if f"{kind}_options" in original:
                    c[f"{kind}_options"] = original[f"{kind}_options"]
    return normalised
