"""Short segments, held tails and pushes, from either backend's captures (a kernel run's
`PCAP=1 krun.py ... OUTDIR` gives OUTDIR/pcap, the simulator's `simulate(..., pcap=DIR)`
gives DIR). Written for docs/kernel.md, "A split skb's frozen mapping" (2026-11-29):

  skbtails.py segs DIR            each path's data segments (first sends), how many short
                                  (< 1 424 B) and how many tiny (<= 148 B)
  skbtails.py caps DIR [T]        each path's five most common windows (edge - DATA_ACK)
                                  offered after T s (default 2): the subflows' window caps
  skbtails.py held DIR PATH       PATH's short segments sent more than 50 ms after the
                                  segment before them in DSN (tails Nagle held), and the
                                  Mbit/s of all paths per 5 s
  skbtails.py runs DIR PATH T1 T2 PATH's runs of segments (gaps under 20 ms) between T1 and
                                  T2: bytes, the short ones, and how far the edge was
  skbtails.py pushes DIR T1 T2    every path's runs of at least 8 000 B, with the data
                                  frag offset (32 728 B frags) where each starts and ends
  skbtails.py flight DIR          each path's kB sent and largest subflow-level flight
                                  (sequence sent past the ACKs) per 5 s
"""
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import slowpath  # noqa: E402
import windows  # noqa: E402

PAYLOAD = windows.PAYLOAD
FRAG = 32_728


def first_sends(ev):
    """Data segments in time order, each DSN once (`windows.first_sends`): (t, path, dsn, len)."""
    return sorted((t, p, dsn, n) for dsn, (t, p, n) in windows.first_sends(ev).items())


def segs(ev):
    c = Counter()
    for _, p, _, n in first_sends(ev):
        c[p, "all"] += 1
        c[p, "short"] += n < PAYLOAD
        c[p, "tiny"] += n <= 148
    for p in sorted({k[0] for k in c}):
        print(f"{p}: {c[p, 'all']} data segments, {c[p, 'short']} short, {c[p, 'tiny']} of at most 148 B")


def caps(ev, after):
    t0 = ev[0][0]
    for p in sorted({e[2] for e in ev}):
        c = Counter(b - a for t, k, pp, a, b in ev if k == "A" and pp == p and t - t0 > after)
        if c:
            print(f"{p}: " + " ".join(f"{w}:{n}" for w, n in c.most_common(5)))


def held(ev, path):
    t0 = ev[0][0]
    sends = first_sends(ev)
    sent_at_end = {a + b: t for t, _, a, b in sends}
    bins, n = Counter(), 0
    for t, p, a, b in sends:
        bins[int((t - t0) // 5)] += b
        if p == path and b < PAYLOAD and a in sent_at_end and t - sent_at_end[a] > 0.05:
            n += 1
    print("Mbit/s per 5 s:", " ".join(f"{bins[i] * 8 / 5e6:.2f}" for i in range(max(bins) + 1)))
    print(f"{path}: {n} short segments sent more than 50 ms after their DSN predecessor")


def runs(ev, path, t1, t2):
    t0 = ev[0][0]
    edge, cur, last = 0, [], None

    def flush():
        if cur:
            shorts = [(round(t, 4), n) for t, _, n, _ in cur if n < PAYLOAD]
            print(f"{cur[0][0]:8.3f}-{cur[-1][0]:8.3f} {len(cur):3d} segments {sum(x[2] for x in cur):7d} B, "
                  f"short {shorts}, edge {cur[0][3]} B past the first")
    for t, k, p, a, b in ev:
        t -= t0
        if k == "A":
            edge = max(edge, b)
        elif p == path and t1 <= t <= t2:
            if last is not None and t - last > 0.02:
                flush()
                cur = []
            cur.append((t, a, b, edge - a))
            last = t
    flush()


def pushes(ev, t1, t2):
    t0 = ev[0][0]
    cur, out = {}, []
    for t, p, a, b in first_sends(ev):
        t -= t0
        if not t1 <= t <= t2:
            continue
        c = cur.get(p)
        if c and t - c[1] < 0.004 and a == c[3]:
            c[1], c[2], c[3] = t, c[2] + b, a + b
        else:
            if c:
                out.append(c)
            cur[p] = [t, t, b, a + b, p, a]
    out += cur.values()
    for t, _, n, end, p, start in sorted(out):
        if n >= 8000:
            print(f"{t:8.3f} {p} {n:7d} B, from frag offset {start % FRAG:6d} to {end % FRAG:6d}")


def flight(d, span=5.0):
    m = 1 << 32
    for f in sorted(Path(d).glob("*.pcap")):
        recs = slowpath.records(f)
        syn = next(r for r in recs if r["flags"] & 2 and not r["flags"] & 16)
        t0, nxt, una, sent, most = recs[0]["t"], None, None, Counter(), Counter()
        for r in recs:
            if r["flags"] & 2:
                continue
            b = int((r["t"] - t0) // span)
            if r["sport"] == syn["sport"] and r["len"] > 0:
                e = (r["seq"] + r["len"]) % m
                if nxt is None or (e - nxt) % m < m // 2:
                    sent[b] += r["len"] if nxt is None else (e - nxt) % m
                    nxt = e
            elif r["sport"] != syn["sport"] and (una is None or (r["ack"] - una) % m < m // 2):
                una = r["ack"]
            if nxt is not None and una is not None and (nxt - una) % m < m // 2:
                most[b] = max(most[b], (nxt - una) % m)
        n = max(sent) + 1 if sent else 0
        print(f"{f.stem}: kB sent", [round(sent[i] / 1e3) for i in range(n)], "largest flight kB", [round(most[i] / 1e3) for i in range(n)])


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd, ev = argv[1], windows.load(argv[2])
    if cmd == "segs":
        segs(ev)
    elif cmd == "caps":
        caps(ev, float(argv[3]) if len(argv) > 3 else 2.0)
    elif cmd == "held":
        held(ev, argv[3])
    elif cmd == "runs":
        runs(ev, argv[3], float(argv[4]), float(argv[5]))
    elif cmd == "pushes":
        pushes(ev, float(argv[3]), float(argv[4]))
    elif cmd == "flight":
        flight(argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
