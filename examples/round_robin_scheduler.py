"""A round-robin packet scheduler in pure Python, written against the documented
plug-in API only (docs/plugins.md).

It is the out-of-tree Linux MPTCP round-robin, `net/mptcp/mptcp_rr.c` (reference
`schedulers.md` §4.2): each subflow has a quota of `num_segments` segments per round;
new data goes to the subflow whose burst is under way, or else to the last subflow (in
the kernel's list order) that has not had its turn; when every available subflow has
used its quota, a new round starts. Reinjections go to the last available subflow (list
order) that has not carried the data yet. Backup subflows are not treated differently.
It mirrors the built-in "roundrobin" decision by decision (the test suite checks that
both give the same results).

Use it from a scenario (a file path is relative to the scenario file's directory):

    [[connections]]
    scheduler = "python:../examples/round_robin_scheduler.py:RoundRobinScheduler"
    scheduler_options = { num_segments = 1, cwnd_limited = true }

or from Python:

    import mptcplab
    from round_robin_scheduler import RoundRobinScheduler
    result = mptcplab.simulate("scenarios/two-paths-wifi-lte.toml", scheduler=RoundRobinScheduler())
"""
from __future__ import annotations

from mptcplab.plugins import Enqueue, New, Reinject, SchedView, Send, SubflowView


class RoundRobinScheduler:
    """`mptcp_rr.c` with its two module parameters: `num_segments` (burst per subflow,
    default 1) and `cwnd_limited` (default True: consider only subflows with cwnd room
    when looking for the next one)."""

    def __init__(self, num_segments: int = 1, cwnd_limited: bool = True) -> None:
        if isinstance(num_segments, bool) or not isinstance(num_segments, int) or not 1 <= num_segments <= 255:
            raise ValueError(f"num_segments must be an integer in [1, 255], got {num_segments!r}")
        self.num_segments = num_segments
        self.cwnd_limited = bool(cwnd_limited)
        self.quota: dict[int, int] = {}  # per subflow index: segments sent in this round

    @staticmethod
    def is_available(s: SubflowView, cwnd_test: bool) -> bool:
        """`mptcp_rr_is_available` (zero_wnd_test = false): established, not in Loss,
        and with `cwnd_test` a free cwnd slot and the subflow's queue within it."""
        if not s.established:  # not ESTABLISHED, or MP_JOIN not complete
            return False
        if s.ca_state == "loss":  # after an RTO
            return False
        if not cwnd_test:
            return True
        if s.in_flight >= s.cwnd:  # not a single spot in the cwnd
            return False
        return s.queued_bytes <= (s.cwnd - s.in_flight) * s.mss  # strict > makes it unavailable

    def schedule(self, view: SchedView) -> list:
        subs, order, meta = view.subflows, view.order, view.meta
        if meta.reinject is not None:
            # rr_get_available_subflow: the last available subflow (list order) that has
            # not carried this data, else the last available one that has. Nothing else
            # is sent while a reinjection waits.
            best = used = None
            for i in order:
                if not self.is_available(subs[i], True):
                    continue
                if meta.reinject.sent_on(i):
                    used = i
                else:
                    best = i
            chosen = best if best is not None else used
            if chosen is not None and subs[chosen].pacing_ok and subs[chosen].wnd_ok:
                return [Send(chosen, Reinject())]
            return []
        if not meta.new_data and meta.unsent == 0:
            return []  # nothing in the meta send queue (no opportunistic retransmission)
        chosen = self._next_subflow(view)
        if chosen is None or not self.is_available(subs[chosen], True):
            return []
        actions = []
        if meta.new_data:
            s = subs[chosen]
            # Linux hands the segment to the subflow; if its pacer or its own window holds
            # it back, it waits in the subflow's queue.
            actions.append(Send(chosen, New()) if s.pacing_ok and s.wnd_ok else Enqueue(chosen, meta.next_len))
        # The turn is used even when the peer's window then holds the segment back (the
        # kernel counts it before mptcp_write_xmit tests the connection-level window).
        self.quota[chosen] = self.quota.get(chosen, 0) + 1
        return actions

    def _next_subflow(self, view: SchedView) -> int | None:
        """The subflow scan of `mptcp_rr_next_segment`, with its `retry`: the quotas are
        reset at most once per call."""
        subs, order, n = view.subflows, view.order, self.num_segments
        reset_done = False
        while True:
            chosen = None
            considered = full = 0
            for i in order:
                if not self.is_available(subs[i], self.cwnd_limited):
                    continue
                considered += 1
                quota = self.quota.get(i, 0)
                if 0 < quota < n:  # a burst under way on this subflow
                    return i
                if quota == 0:  # not used in this round: the last such one wins
                    chosen = i
                if quota >= n:
                    full += 1
            if considered and considered == full and not reset_done:
                # Every available subflow used its quota: start a new round.
                for i in order:
                    if self.is_available(subs[i], self.cwnd_limited):
                        self.quota[i] = 0
                reset_done = True
                continue
            return chosen
