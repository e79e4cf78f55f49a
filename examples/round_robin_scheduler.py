"""A round-robin packet scheduler in pure Python, written against the documented
plug-in API only (docs/plugins.md).

It is the out-of-tree Linux MPTCP round-robin, `net/mptcp/mptcp_rr.c` (reference
`schedulers.md` §4.2): each subflow has a quota of `num_segments` segments per round;
new data goes to the subflow whose burst is under way, or else to the last subflow (in
the kernel's list order) that has not had its turn; when every available subflow has
used its quota, a new round starts. Reinjections go to the first available subflow that
has not carried the data yet. Backup subflows are not treated differently.

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

from mptcplab.plugins import New, Reinject, SchedView, Send, SubflowView


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
        """`mptcp_rr_is_available` (zero_wnd_test = false)."""
        if not s.established:  # not ESTABLISHED, or MP_JOIN not complete
            return False
        if s.ca_state == "loss":  # after an RTO
            return False
        if cwnd_test:
            if s.in_flight >= s.cwnd:  # not a single spot in the cwnd
                return False
            if s.queued_bytes > (s.cwnd - s.in_flight) * s.mss:  # the subflow's queue fills it (strict >)
                return False
        # The segment must fit the subflow's own window, and the pacer must let it leave.
        return s.wnd_ok and s.pacing_ok

    def schedule(self, view: SchedView) -> list[Send]:
        subs, order, meta = view.subflows, view.order, view.meta
        if meta.reinject is not None:
            # rr_get_available_subflow: the first available subflow that has not carried
            # this data, else the last available one that has.
            best = fallback = None
            for i in order:
                if not self.is_available(subs[i], True):
                    continue
                if meta.reinject.sent_on(i):
                    fallback = i
                    continue
                best = i
                break
            chosen = best if best is not None else fallback
            return [] if chosen is None else [Send(chosen, Reinject())]
        if not meta.new_data:
            return []  # no opportunistic retransmission in mptcp_rr.c
        # The kernel hands `split` segments to the subflow at once; here one Send is one
        # segment and a burst continues at the next call (0 < quota < num_segments).
        chosen, _split = self._next_subflow(view)
        if chosen is None or not self.is_available(subs[chosen], True):
            return []
        s = subs[chosen]
        self.quota[chosen] = self.quota.get(chosen, 0) + (-(-meta.next_len // s.mss) if meta.next_len > s.mss else 1)
        return [Send(chosen, New())]

    def _next_subflow(self, view: SchedView) -> tuple[int | None, int]:
        """The subflow scan of `mptcp_rr_next_segment` (with its `retry`)."""
        subs, order, n = view.subflows, view.order, self.num_segments
        split = n
        while True:
            chosen = None
            considered = full = 0
            for i in order:
                if not self.is_available(subs[i], self.cwnd_limited):
                    continue
                considered += 1
                quota = self.quota.get(i, 0)
                if 0 < quota < n:  # a burst under way on this subflow
                    return i, n - quota
                if quota == 0:  # not used in this round: the last such one wins
                    chosen, split = i, n
                if quota >= n:
                    full += 1
            if considered and considered == full:
                # Every available subflow used its quota: start a new round.
                for i in order:
                    if self.is_available(subs[i], self.cwnd_limited):
                        self.quota[i] = 0
                continue
            return chosen, split
