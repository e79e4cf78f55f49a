"""Plug-ins for tests/python/test_plugins.py, in a module of their own so that scenarios
can name them (``python:plugin_fixtures:MinRttPy``) and worker processes can import them."""
from __future__ import annotations

from mptcplab.plugins import Copy, Enqueue, New, OpenSubflow, Penalise, Reinject, Send, Wait


class MinRttPy:
    """The core's `MinRtt` (crates/mptcplab-core/src/mptcp/scheduler/mod.rs) line for line,
    through the plug-in API: must give the built-in minrtt's results exactly."""

    def __init__(self, opportunistic_retransmission: bool = True, penalisation: bool = True) -> None:
        self.ortx = opportunistic_retransmission
        self.penal = penalisation
        self.last_rbuf_opti: dict[int, int] = {}
        self.calls = 0

    @staticmethod
    def _selectors(subs, order, mask, backup):
        best = None
        best_unused = False
        unused_temp_unavail = False
        for i in order:
            s = subs[i]
            if s.backup != backup or not s.established:
                continue
            unused = not (mask >> i) & 1
            if not s.has_space:
                unused_temp_unavail |= unused
                continue
            if best_unused and not unused:
                continue
            if best is None or (unused and not best_unused) or s.srtt_ns < subs[best].srtt_ns:
                best, best_unused = i, unused
        return best, best_unused or (best is None and unused_temp_unavail)

    def pick(self, subs, order, mask):
        best, force = self._selectors(subs, order, mask, False)
        if force:
            return best
        best_backup, force = self._selectors(subs, order, mask, True)
        if force:
            return best_backup
        if mask:
            b, _ = self._selectors(subs, order, 0, False)
            if b is not None:
                return b
        return best if best is not None else best_backup

    def _rcv_buf_optimization(self, v, sk, penal, out):
        una = v.meta.una
        if una is None:
            return
        subs = v.subflows
        me = subs[sk]
        may_penalise = self.penal and (penal or v.meta.sndbuf_full)
        if may_penalise and v.now_ns - self.last_rbuf_opti.get(sk, 0) >= me.srtt_ns:
            for i in v.order:
                if i != sk and una.sent_on(i):
                    s = subs[i]
                    if me.srtt_ns < s.srtt_ns and s.ca_state == "open":
                        out.append(Penalise(i))
                        self.last_rbuf_opti[sk] = v.now_ns
                    break
        if not self.ortx or una.sent_on(sk):
            return
        do_retrans = False
        for i in v.order:
            s = subs[i]
            if i == sk or not una.sent_on(i):
                continue
            if s.cwnd <= 4:
                do_retrans = True
                break
            if 4 * me.srtt_ns >= s.srtt_ns:
                do_retrans = False
                break
            do_retrans = True
        if do_retrans and me.available:
            out.append(Send(sk, Copy(una.dsn, una.len)))

    def schedule(self, v):
        self.calls += 1
        subs, order, meta = v.subflows, v.order, v.meta
        out: list = []
        if meta.reinject is not None:
            sub = self.pick(subs, order, meta.reinject.mask)
            if sub is not None:
                return [Send(sub, Reinject())]
        if meta.new_data:
            sub = self.pick(subs, order, 0)
            return [] if sub is None else [Send(sub, New())]
        if meta.window_limited:
            sub = self.pick(subs, order, 0)
            if sub is not None:
                self._rcv_buf_optimization(v, sub, True, out)
            return out
        if meta.sndbuf_full:
            sub = self.pick(subs, order, 0)
            if sub is not None:
                self._rcv_buf_optimization(v, sub, False, out)
        return out


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
