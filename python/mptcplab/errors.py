"""The one error type a user sees for bad input: `ScenarioError`.

The compiled core raises `_core.ScenarioError` (a `ValueError` with `.field` and
`.message`). Python-side failures (unreadable file, TOML syntax, a wrong Python type
handed to the API) raise the same kind of error. All core calls go through
`core_errors()`, the single place where a core error becomes `mptcplab.ScenarioError`,
so callers only ever need `except mptcplab.ScenarioError`.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from . import _core

__all__ = ["PluginError", "ScenarioError", "SimulationInterrupted", "core_errors"]

SimulationInterrupted = _core.SimulationInterrupted

# A Python scheduler or path manager failed (a RuntimeError, not bad input): `.plugin`
# names it, `.kind` is "scheduler" or "path manager", `.flow` the connection, `.method`
# the hook ("schedule", "on_established", "__init__", "<import>"), `.time_s` the simulated
# time (None before the run); `__cause__` is the plug-in's own exception.
PluginError = _core.PluginError


def _subclassable(cls: type) -> bool:
    try:
        type("_Probe", (cls,), {})
    except TypeError:  # a final PyO3 class cannot be subclassed
        return False
    return True


_Base: type[ValueError] = _core.ScenarioError if _subclassable(_core.ScenarioError) else ValueError


class ScenarioError(_Base):  # type: ignore[misc, valid-type]
    """Bad scenario input.

    `.field` is the path of the offending field (``links[0].rate``, ``paths[1].links[0]``,
    ``connections[0].paths[2]``) or a pseudo-field for input that never became a scenario
    (``<file>``, ``<toml>``, ``<scenario>``). `.message` says what was expected.
    It is also an instance of `_core.ScenarioError` when the core's class allows subclassing.
    """

    field: str
    message: str

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message

    def __repr__(self) -> str:
        return f"ScenarioError(field={self.field!r}, message={self.message!r})"

    def __reduce__(self):  # keep pickling (multiprocessing sweeps) working
        return (type(self), (self.field, self.message))


def from_core(err: BaseException) -> ScenarioError:
    """Map a `_core.ScenarioError` (or anything shaped like it) to `ScenarioError`."""
    if isinstance(err, ScenarioError):
        return err
    field = getattr(err, "field", None)
    message = getattr(err, "message", None)
    args: tuple[Any, ...] = tuple(getattr(err, "args", ()))
    if field is None and len(args) >= 2 and isinstance(args[0], str):
        field, message = args[0], str(args[1])
    if message is None:
        message = str(args[0]) if args else str(err)
    return ScenarioError(str(field or ""), str(message))


@contextmanager
def core_errors() -> Iterator[None]:
    """Run a core call; re-raise its ScenarioError as `mptcplab.ScenarioError`."""
    try:
        yield
    except ScenarioError:
        raise
    except _core.ScenarioError as err:
        raise from_core(err) from None
