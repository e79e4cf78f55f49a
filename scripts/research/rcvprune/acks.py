"""Who sends the receiver's ACKs (docs/kernel.md, "Who sends the receiver's ACKs",
2026-11-29):

  acks.py kernel BT_TXT   from a trace10.bt run: the server's ACKs by the
                          context that sent them (softirq at arrival, the reader's
                          mptcp_cleanup_rbuf, the delayed-ACK timer), by how many segments
                          each acknowledged on its subflow, the quick-ACK count at the
                          arrival before it (trace10.bt), and for two-segment ACKs whether
                          the MPTCP socket's DATA_ACK moved with that arrival
  acks.py sim STDERR      the same split for a simulated run, from the ACKDBG lines a build
                          with experiments/ack-origin-debug.diff writes to stderr when
                          ACKDBG=1 (the simulator has no stacks: "softirq" is an ACK decided
                          at a segment's arrival)"""
import sys
from collections import Counter

import trace10


def segs(delta):
    return "1" if delta <= 1448 else "2" if delta <= 2896 else "3+"


def kernel(path):
    recs = []
    for kind, t, daddr, f, stack in trace10.records(path):
        if kind == "R":
            quick = int(f[11]) if len(f) > 11 else -1  # a trace9.bt record has no quick count
            recs.append(["R", t, daddr, int(f[8]), quick])
        else:
            recs.append(["K", t, daddr, int(f[6]), int(f[7]), stack])
    kinds, by_segs, quick, moved, last_r, prev = Counter(), Counter(), Counter(), Counter(), {}, {}
    for r in recs:
        if r[0] == "R":
            last_r[r[2]] = r
            continue
        kd = trace10.sender(r[5])
        kinds[kd] += 1
        d, R, P = r[2], last_r.get(r[2]), prev.get(r[2])
        if P is not None:
            n = segs((r[3] - P[3]) % (1 << 32))
            by_segs[(kd, n)] += 1
            if R is not None:
                if R[4] >= 0:
                    quick[(kd, n, "quick" if R[4] > 0 else "not quick")] += 1
                if n == "2":
                    moved[(kd, "DATA_ACK moved" if r[4] > R[3] else "DATA_ACK did not move")] += 1
        prev[d] = r
    print(f"{sum(kinds.values())} ACKs:", sorted(kinds.items()))
    print("by segments acknowledged:", sorted(by_segs.items()))
    if quick:
        print("by the quick-ACK count at the arrival before:", sorted(quick.items()))
    print("two-segment ACKs by the MPTCP socket's DATA_ACK:", sorted(moved.items()))


def sim(path):
    kinds, by_segs, prev = Counter(), Counter(), {}
    for line in open(path):
        f = line.split()
        if not f or f[0] != "ACKDBG":
            continue
        sub, kd, nxt = f[2], f[3], int(f[7])  # ACKDBG t subflow context rmem R nxt N acked A ooo O
        kinds[kd] += 1
        if sub in prev:
            by_segs[(kd, segs((nxt - prev[sub]) % (1 << 32)))] += 1
        prev[sub] = nxt
    print(f"{sum(kinds.values())} ACKs:", sorted(kinds.items()))
    print("by segments acknowledged:", sorted(by_segs.items()))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("kernel", "sim"):
        globals()[sys.argv[1]](sys.argv[2])
    else:
        sys.exit(__doc__)
