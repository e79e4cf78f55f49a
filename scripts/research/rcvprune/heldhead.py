"""Window releases whose left edge was the slow path's segment, from either backend's
captures (`--pcap`): how many were held, i.e. first sent after the DATA_ACK had already
reached their DSN (Nagle on the slow subflow: an earlier short segment unacknowledged),
and how many freed the whole window (> 170 kB). docs/kernel.md, "What moves the kernel's
window edge", item 9. usage: heldhead.py PCAP_DIR...
"""
import sys, collections
sys.path.insert(0, "/work/main/scripts/research/rcvprune")
import windows
for d in sys.argv[1:]:
    ev = windows.load(d)
    first_send = {}
    first_ack_at = {}
    for t, k, p, a, b in ev:
        if k == "D" and a not in first_send: first_send[a] = (t, p, b)
        if k == "A" and a not in first_ack_at: first_ack_at[a] = t
    last = None; rows = []
    for t, k, p, a, b in ev:
        if k != "A": continue
        if last is not None and a - last > 50000 and last in first_send:
            ts, ps, ln = first_send[last]
            rows.append((ps, (ts - first_ack_at.get(last, ts)) * 1e3, (a - last) / 1000))
        last = a if last is None else max(last, a)
    for path in ("path1", "path4"):
        v = [r for r in rows if r[0] == path]
        if not v: continue
        held = [r for r in v if r[1] > 1]
        big = [r for r in v if r[2] > 170]
        print(d, path, len(v), "releases; head sent after the window reached it (held):", len(held),
              "; whole-window releases:", len(big), "of them held:", sum(1 for r in big if r[1] > 1))
