"""The kernel backend's reader against the arrivals, from trace10.bt runs (docs/kernel.md,
"The reader's lag, ..."):

  readerlag.py BT_TXT...

For each run: arrivals, the delay from the last arrival to each ACK the reader sends
(`mptcp_recvmsg` in its stack; p10/50/90 in us), and the share of arrivals less than 50 and
300 us after the one before (with the p10/50/90 of those under 50 us)."""
import sys

import trace10


def q(a, x):
    return round(a[int(x * (len(a) - 1))], 1) if a else None


for p in sys.argv[1:]:
    last, lags, gaps = None, [], []
    for kind, t, _, _, stack in trace10.records(p):
        if kind == "R":
            if last is not None:
                gaps.append((t - last) / 1e3)
            last = t
        elif last is not None and trace10.sender(stack) == "reader":
            lags.append((t - last) / 1e3)
    lags.sort()
    gaps.sort()
    small = [g for g in gaps if g < 50]
    print(p, "arrivals", len(gaps) + 1, "reader ACK lag us p10/50/90", q(lags, .1), q(lags, .5), q(lags, .9),
          "gaps < 50 us %.3f" % (len(small) / len(gaps)), "< 300 us %.3f" % (sum(g < 300 for g in gaps) / len(gaps)),
          "those < 50 us p10/50/90", q(small, .1), q(small, .5), q(small, .9))
