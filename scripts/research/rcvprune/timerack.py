"""When the receiver's delayed-ACK timer fires, after the arrival that armed it
(docs/kernel.md, "the delayed-ACK timer on the jiffy clock"):

  timerack.py kernel BT_TXT    a trace10.bt run: ACKs whose kernel stack is the timer's
  timerack.py sim TRACE_CSV    a simulated run's event trace: ACKs sent at no arrival

The arming arrival is taken to be the subflow's first arrival after its last ACK (a
heuristic: an ACK from the reader in between is not told apart in the simulator's trace).
Prints the quantiles of the delay in ms and a histogram by whole ms under 60 ms."""
import collections
import sys

import trace10


def kernel(path):
    first, last_ack, ds = {}, {}, []
    for kind, t, daddr, _, stack in trace10.records(path):
        if kind == "R":
            if daddr not in first or last_ack.get(daddr, 0) >= first[daddr]:
                first[daddr] = t
            continue
        if trace10.sender(stack) == "timer" and daddr in first and first[daddr] > last_ack.get(daddr, 0):
            ds.append((t - first[daddr]) / 1e6)
        last_ack[daddr] = t
    return ds


def sim(path):
    first, last_recv, ds = {}, {}, []
    for line in open(path):
        f = line.split(",")
        if f[0] == "time_s":
            continue
        t, sub, ev = float(f[0]), f[2], f[3]
        if ev == "recv":
            first.setdefault(sub, t)
            last_recv[sub] = t
        elif ev == "ack_sent":
            if sub in first and last_recv.get(sub) != t:
                ds.append((t - first[sub]) * 1000)
            first.pop(sub, None)
    return ds


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("kernel", "sim"):
        sys.exit(__doc__)
    ds = sorted(globals()[sys.argv[1]](sys.argv[2]))
    if not ds:
        sys.exit("no timer ACKs")
    print(len(ds), "ACKs; p0/10/50/90/100 ms", [round(ds[int(q * (len(ds) - 1))], 2) for q in (0, .1, .5, .9, 1)])
    print(sorted(collections.Counter(int(x) for x in ds if x < 60).items()))
