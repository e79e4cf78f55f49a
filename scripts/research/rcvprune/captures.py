"""Kernel against simulator at a bounded-buffer row, from either backend's captures
(`--pcap` / `pcap=`; docs/kernel.md, "PSH on every GSO packet", 2026-11-29):

  captures.py held SLOWPATH DIR...   per 100 s before any deadlock: the slow path's new
                                     segments, short ones, and those sent when their DSN was
                                     already the connection's left edge (held), <= 16 B or not
                                     and the held heads' commonest sizes
  captures.py tiny DIR...            new segments of at most 16 B after 2 s, by the path
                                     that sent them
  captures.py steps DIR...           the MPTCP window edge's advances by size (after 2 s)
  captures.py acks DIR...            per fast path: single-segment ACKs of full segments, by
                                     whether the segment had neighbours within 3 ms
  captures.py psh DIR...             per fast path: gaps between PSH flags, in new segments
  captures.py deadlock DIR...        where DATA_ACK stops for the rest of the run: when, the
                                     head's sends, the window, what lies above it
  captures.py fills SLOWPATH DIR...  for each held (<= 16 B) slow-path head: the bytes the
                                     other paths had sent above it within the edge (a union
                                     of byte ranges: retransmissions with shifted boundaries
                                     count once), the segments that added bytes, when the
                                     fill passed the whole window (FILL=N in the environment;
                                     default 99 000 B, the 100 KB rows'), and whether the
                                     run stalled there
  captures.py quarters T DIR...      the windows (edge - DATA_ACK) the server's ACKs offer in
                                     each quarter second of the first T s, median / smallest
                                     in kB, every path (docs/kernel.md, "The MPTCP socket's
                                     scaling ratio")

`runs.py` makes the kernel's runs (with or without captures) and the simulator's."""
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import slowpath  # noqa: E402
import windows  # noqa: E402

PAYLOAD = slowpath.PAYLOAD
WRAP = 1 << 32


def name(d):
    d = Path(d)
    return d.parent.name if d.name == "pcap" else d.name


def last_advance(ev):
    """(time of the last DATA_ACK advance, run end), both from the first event."""
    t0, ack, adv = ev[0][0], 0, 0.0
    for e in ev:
        if e[1] == "A" and e[3] > ack:
            ack, adv = e[3], e[0] - t0
    return adv, ev[-1][0] - t0


def held(slow, dirs):
    agg, sizes, secs = Counter(), Counter(), 0.0
    for d in dirs:
        ev = windows.load(d)
        t0, ack, seen, c = ev[0][0], 0, set(), Counter()
        for e in ev:
            t = e[0] - t0
            if e[1] == "A":
                ack = max(ack, e[3])
            elif e[2] == slow and t >= 2 and e[3] not in seen:
                seen.add(e[3])
                c["segs"] += 1
                c["short"] += e[4] < PAYLOAD
                if e[3] == ack:
                    c["held <= 16 B" if e[4] <= 16 else "held > 16 B"] += 1
                    sizes[e[4]] += 1
        adv, end = last_advance(ev)
        secs += (adv if end - adv >= 5 else end) - 2
        agg.update(c)
    print(f"{len(dirs)} runs, {secs:.0f} s before any deadlock; per 100 s:",
          {k: round(v * 100 / secs, 1) for k, v in sorted(agg.items())})
    print(f"held heads by size (all {sum(sizes.values())}, B: count):", sizes.most_common(10))


def tiny(dirs):
    by_path = Counter()
    for d in dirs:
        ev = windows.load(d)
        t0, seen = ev[0][0], set()
        for e in ev:
            if e[1] == "D" and e[3] not in seen:
                seen.add(e[3])
                if e[0] - t0 >= 2 and e[4] <= 16:
                    by_path[e[2]] += 1
    print(f"{sum(by_path.values())} new segments of at most 16 B after 2 s, by path:", sorted(by_path.items()))


def steps(dirs):
    for d in dirs:
        ev = windows.load(d)
        t0, emax, c = ev[0][0], None, Counter()
        for t, k, _, _, e in ev:
            if k != "A" or t - t0 < 2:
                continue
            if emax is not None and e > emax:
                s = e - emax
                c[s if s < 64 or PAYLOAD - 2 <= s <= PAYLOAD + 2 or 2 * PAYLOAD - 4 <= s <= 2 * PAYLOAD + 2
                  else "<1 segment" if s < PAYLOAD else "<2 segments" if s < 2 * PAYLOAD else "larger"] += 1
            emax = e if emax is None else max(emax, e)
        print(name(d), sum(c.values()), "advances:", c.most_common(12))


def _paths(d):
    return [f.stem for f in sorted(Path(d).glob("*.pcap"))]


def acks(dirs):
    for d in dirs:
        out = {}
        for path in _paths(d)[:-1]:  # the slowest path's file sorts last in seed 001's scenarios
            recs, port, t0 = slowpath.subflow(d, path)
            sends = [(r["t"], (r["seq"] + r["len"]) % WRAP, r["len"]) for r in recs if r["sport"] == port and r["len"] > 0]
            by_end = {}
            for i, s in enumerate(sends):
                by_end.setdefault(s[1], i)
            last, c = None, Counter()
            for r in recs:
                if r["dport"] != port or not r["flags"] & 16 or r["flags"] & 2:
                    continue
                if last is not None:
                    dl = (r["ack"] - last) % WRAP
                    if 0 < dl <= PAYLOAD and r["ack"] in by_end and r["t"] - t0 > 2:
                        i = by_end[r["ack"]]
                        if sends[i][2] == PAYLOAD:
                            nxt = i + 1 < len(sends) and sends[i + 1][0] - sends[i][0] < 0.003
                            prv = i > 0 and sends[i][0] - sends[i - 1][0] < 0.003
                            c["mid-burst" if nxt and prv else "burst edge"] += 1
                    if 0 < dl < WRAP // 2:
                        last = r["ack"]
                else:
                    last = r["ack"]
            out[path] = dict(c)
        print(name(d), "single-segment ACKs of full segments:", out)


def psh(dirs):
    for d in dirs:
        out = {}
        for path in _paths(d)[:-1]:
            recs, port, t0 = slowpath.subflow(d, path)
            c, n, seen = Counter(), 0, set()
            for r in recs:
                if r["sport"] == port and r["len"] > 0 and r["t"] - t0 > 2 and r["seq"] not in seen:
                    seen.add(r["seq"])
                    n += 1
                    if r["flags"] & 8:
                        c[min(n, 12)] += 1
                        n = 0
            out[path] = sorted(c.items())
        print(name(d), "gaps between PSH flags (12 = 12 or more):", out)


def deadlock(dirs):
    for d in dirs:
        ev = windows.load(d)
        adv, end = last_advance(ev)
        if end - adv < 5:
            print(f"{name(d)}: no deadlock (last advance {adv:.1f} s of {end:.1f})")
            continue
        t0, ack, edge, sends = ev[0][0], 0, 0, {}
        for e in ev:
            if e[1] == "A":
                ack, edge = max(ack, e[3]), max(edge, e[4])
            else:
                sends.setdefault(e[3], []).append((round(e[0] - t0, 3), e[2], e[4]))
        head = sends.get(ack, [])
        above = [v[0] for k, v in sends.items() if k > ack and v[0][0] <= adv + 2]
        print(f"{name(d)}: deadlock at {adv:.2f} s; the head's sends {head[:4]}; window {edge - ack}; "
              f"above it {len(above)} segments, {sum(v[2] for v in above)} B, {sum(v[2] < PAYLOAD for v in above)} short")


def fills(slow, dirs):
    need = int(os.environ.get("FILL", "99000"))
    rows = []
    for d in dirs:
        ev = windows.load(d)
        t0 = ev[0][0]
        adv, end = last_advance(ev)
        sends = [(e[0] - t0, e[2], e[3], e[4]) for e in ev if e[1] == "D"]
        seen, ack, edge = set(), 0, 0
        for e in ev:
            t = e[0] - t0
            if e[1] == "A":
                ack, edge = max(ack, e[3]), max(edge, e[4])
                continue
            new = e[3] not in seen
            seen.add(e[3])
            if not (new and e[2] == slow and t >= 2 and e[3] == ack and e[4] <= 16):
                continue
            head, hi, cov, total, t_full = e[3], edge, [], 0, None
            for ts, p, dsn, ln in sends:
                if ts > t + 0.3:
                    break
                if p == slow or dsn + ln <= head or dsn >= hi:
                    continue
                a, b = max(dsn, head + e[4]), min(dsn + ln, hi)
                added = b - a - sum(max(0, min(b, y) - max(a, x)) for x, y in cov)
                if added > 0:
                    cov.append((a, b))
                    total += added
                    if total >= need and t_full is None:
                        t_full = ts - t
            rows.append((total, len(cov), t_full, end - adv >= 5 and abs(t - adv) < 1))
    full = [r for r in rows if r[0] >= need]
    print(f"{len(rows)} held heads; {len(full)} with >= {need} B above, {sum(r[3] for r in full)} of them stalled for good")
    for r in sorted(full):
        print(f"   {r[1]} segments, {r[0]} B, full {1000 * r[2]:+.0f} ms from the head's send{', deadlock' if r[3] else ''}")


def quarters(limit, dirs):
    for d in dirs:
        ev = windows.load(d)
        t0, bins = ev[0][0], {}
        for e in ev:
            if e[0] - t0 > limit:
                break
            if e[1] == "A":
                bins.setdefault(int((e[0] - t0) / 0.25), []).append(e[4] - e[3])
        cells = []
        for b in sorted(bins):
            v = sorted(bins[b])
            cells.append(f"{b * 0.25:.2f}:{v[len(v) // 2] // 1000}/{v[0] // 1000}")
        print(name(d), " ".join(cells))


if __name__ == "__main__":
    cmd, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 2 else (None, [])
    if cmd in ("held", "fills"):
        globals()[cmd](args[0], args[1:])
    elif cmd == "quarters":
        quarters(float(args[0]), args[1:])
    elif cmd in ("steps", "acks", "psh", "deadlock", "tiny"):
        globals()[cmd](args)
    else:
        sys.exit(__doc__)
