"""How the MPTCP window's right edge advances, seen at the client (either backend's
captures): per run, the advances under 1 424 B, from 1 424 B to 20 kB and larger, and which
path first carried the bytes of each small advance. docs/kernel.md, "What moves the
kernel's window edge", item 9. usage: increments.py PCAP_DIR...
"""
import sys, collections
sys.path.insert(0, "/work/main/scripts/research/rcvprune")
import windows
for d in sys.argv[1:]:
    ev = windows.load(d)
    first_send = {}
    for t, k, p, a, b in ev:
        if k == "D" and a not in first_send: first_send[a] = (t, p, b)
    emax = None; c = collections.Counter(); n = collections.Counter()
    for t, k, p, a, b in ev:
        if k != "A": continue
        e = b
        if emax is not None and e > emax:
            inc = e - emax
            kind = "small" if inc < 1424 else ("mid" if inc < 20000 else "big")
            n[kind] += 1
            fs = first_send.get(emax)
            if fs and 0 <= fs[0] - t < 0.5:
                c[(kind, fs[1])] += 1
        emax = e if emax is None else max(emax, e)
    print(d, "edge increments", dict(n), "| taken by:", {k: v for k, v in sorted(c.items()) if k[0] == "small"})
