"""Plug-ins for tests/python/test_plugins.py, in a module of their own so that scenarios
can name them (``python:plugin_fixtures:MinRttPy``) and worker processes can import them."""
from __future__ import annotations

from mptcplab.plugins import Copy, Enqueue, New, OpenSubflow, Send, Wait


class AlternateEnqueue:
    """tests/plugins.rs `AlternateEnqueue`: pre-schedules new data alternately, two segments ahead."""

    def __init__(self) -> None:
        self.next = 0

    def schedule(self, v):
        if not v.meta.new_data:
            return None
        n = len(v.subflows)
        for k in range(n):
            i = (self.next + k) % n
            s = v.subflows[i]
            if s.established and s.queued_bytes < 2 * s.mss:
                self.next = i + 1
                return [Enqueue(i, s.mss)]
        return None


class RedundantPy:
    """tests/plugins.rs `Redundant`: each new segment on subflow 0 and a copy on subflow 1."""

    def schedule(self, v):
        if v.meta.new_data and all(s.established and s.has_space for s in v.subflows):
            return (Send(0, New()), Send(1, Copy(v.meta.next_dsn, v.meta.next_len)))
        return [Wait()]


class Boom:
    """Raises after `after` decisions."""

    def __init__(self, after: int = 0) -> None:
        self.after = after
        self.calls = 0

    def schedule(self, v):
        self.calls += 1
        if self.calls > self.after:
            return helper_that_fails(self.calls)
        return [Send(v.order[0])] if v.meta.new_data else []


def helper_that_fails(n: int):
    return n / 0


class BadReturn:
    """Returns `value` at the first decision."""

    def __init__(self, value: str = "int") -> None:
        self.value = value

    def schedule(self, v):
        return {
            "int": 42,
            "item": [Send(0), "send"],
            "sub": [Send(7)],
            "copy": [Send(0, Copy(v.meta.next_dsn + 10_000, 1448))],
            "open": [OpenSubflow(1)],
        }[self.value]


class NeedsOption:
    def __init__(self, required: int) -> None:
        self.required = required

    def schedule(self, v):
        return []


class InitialOnly:
    """A path manager that opens no subflow."""

    def on_established(self, view):
        return []


class OpenAs:
    """Opens every other path, marked backup when `backup`; records what it saw."""

    def __init__(self, backup: bool = False) -> None:
        self.backup = backup
        self.seen = None

    def on_established(self, view):
        self.seen = (view.paths, view.initial, tuple(view.backup), tuple(view.path_names))
        return [OpenSubflow(p, self.backup) for p in range(view.paths) if p != view.initial]


class PmBoom:
    def on_established(self, view):
        raise RuntimeError("path manager exploded")


class Sleepy:
    """Sends like a trivial scheduler but burns wall time, for the Ctrl-C test."""

    def schedule(self, v):
        import time

        time.sleep(0.002)
        return [Send(v.order[0])] if v.meta.new_data and v.subflows[v.order[0]].available else []
