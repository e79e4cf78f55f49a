"""The default minRTT scheduler in pure Python, written against the documented plug-in
API only (docs/plugins.md): a starting point for variants.

It is the core's `MinRtt` (crates/mptcplab-core/src/mptcp/scheduler/mod.rs; reference
`schedulers.md` §4.1, Linux `mptcp_sched.c`) decision for decision, and gives the
built-in "minrtt" scheduler's results exactly (tests/python/test_plugins.py):
reinjections first, then new data on the unused subflow with the lowest SRTT that has
room (active subflows before backups); when the peer's window or the send buffer blocks
new data, opportunistic retransmission of the oldest unacknowledged segment on the fast
subflow and penalisation (cwnd halved) of the slow subflow that holds it.

    scheduler = "python:../examples/minrtt_scheduler.py:MinRttScheduler"
    scheduler_options = { opportunistic_retransmission = true, penalisation = true }
"""
from __future__ import annotations

from mptcplab.plugins import Copy, New, Penalise, Reinject, SchedView, Send


class MinRttScheduler:
    """minRTT with opportunistic retransmission and penalisation. The two switches are
    the connection's `opportunistic_retransmission` and `penalisation` in a scenario; pass
    the same values here (`scheduler_options`) to get the built-in's results."""

    def __init__(self, opportunistic_retransmission: bool = True, penalisation: bool = True) -> None:
        self.ortx = opportunistic_retransmission
        self.penal = penalisation
        self.last_rbuf_opti: dict[int, int] = {}

    @staticmethod
    def _selectors(subs, order, mask, backup):
        """`get_subflow_from_selectors` over the active (or backup) subflows: the choice,
        and `force` (an unused subflow was chosen, or none was but an unused one is only
        temporarily unavailable)."""
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
        """`get_available_subflow` for data already sent on the subflows in `mask`: active
        subflows first, then backups; None means wait."""
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
        """`mptcp_rcv_buf_optimization`: penalise the slow subflow that holds the oldest
        unacknowledged data, and resend that data on the fast subflow `sk`."""
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

    def schedule(self, v: SchedView) -> list:
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
