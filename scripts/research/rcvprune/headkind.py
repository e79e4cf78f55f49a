"""For the window releases whose left edge was on path4 (either backend's captures): was the
head held past the window's arrival or sent before, short or full, and did path4 have a
short segment out (Minshall's Nagle condition) when the window reached it. docs/kernel.md,
"What moves the kernel's window edge", item 9. usage: headkind.py PCAP_DIR...
"""
import sys, collections, bisect
sys.path.insert(0, "/work/main/scripts/research/rcvprune")
import windows, slowpath
for d in sys.argv[1:]:
    ev = windows.load(d)
    first_send = {}; first_ack_at = {}
    for t, k, p, a, b in ev:
        if k == "D" and a not in first_send: first_send[a] = (t, p, b)
        if k == "A" and a not in first_ack_at: first_ack_at[a] = t
    # path4 subflow-level records
    recs = slowpath.records(d + "/path4.pcap")
    syn = next(r for r in recs if r["flags"] & 2 and not r["flags"] & 16); cport = syn["sport"]
    data = [(r["t"], r["seq"], r["len"]) for r in recs if r["sport"] == cport and r["len"] > 0]
    acks = [(r["t"], r["ack"]) for r in recs if r["sport"] != cport and r["flags"] & 16]
    at = [a[0] for a in acks]
    def outstanding(t):
        i = bisect.bisect_right(at, t) - 1
        una = acks[i][1] if i >= 0 else 0
        return [(ts, s, l) for ts, s, l in data if ts < t and ((s + l - una) % 2**32) < 2**31 and ((s + l - una) % 2**32) > 0]
    last = None; res = collections.Counter()
    for t, k, p, a, b in ev:
        if k != "A": continue
        if last is not None and a - last > 50000 and last in first_send and first_send[last][1] == "path4":
            ts, ps, ln = first_send[last]
            to = first_ack_at.get(last, ts)
            held = ts - to > 0.001
            out = outstanding(to)
            short_out = any(l < 1424 for _, _, l in out)
            res[("held" if held else "sent", "head short" if ln < 1424 else "head full", "short out" if short_out else ("full out" if out else "nothing out"))] += 1
        last = a if last is None else max(last, a)
    print(d, dict(res))
