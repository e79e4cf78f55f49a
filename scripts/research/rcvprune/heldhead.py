"""Window releases whose left edge was the slow path's (path4's) segment, from either
backend's captures (`--pcap`). docs/kernel.md, "What moves the kernel's window edge", item 9.

  heldhead.py PCAP_DIR...   per path1 and path4: releases, how many heads were held (first
                            sent after the DATA_ACK had already reached their DSN: Nagle on
                            the subflow, an earlier short segment unacknowledged), how many
                            freed the whole window (> 170 kB); then path4's heads by kind:
                            held or sent before, short or full, and whether path4 had a
                            short segment out (Minshall's condition) when the window
                            reached the head
"""
import bisect
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import slowpath  # noqa: E402
import windows  # noqa: E402

FULL = 1424


def path4_outstanding(d):
    """A function of t: path4's segments sent before t and not yet acknowledged at t."""
    recs = slowpath.records(Path(d) / "path4.pcap")
    cport = next(r for r in recs if r["flags"] & 2 and not r["flags"] & 16)["sport"]
    data = [(r["t"], r["seq"], r["len"]) for r in recs if r["sport"] == cport and r["len"] > 0]
    acks = [(r["t"], r["ack"]) for r in recs if r["sport"] != cport and r["flags"] & 16]
    times = [a[0] for a in acks]

    def out(t):
        i = bisect.bisect_right(times, t) - 1
        una = acks[i][1] if i >= 0 else 0
        return [ln for ts, seq, ln in data if ts < t and 0 < (seq + ln - una) % 2**32 < 2**31]
    return out


def main(dirs):
    for d in dirs:
        ev = windows.load(d)
        sent, acked = windows.first_sends(ev), windows.first_acks(ev)
        outstanding = path4_outstanding(d)
        rows, kinds = [], Counter()
        for _, edge, jump in windows.releases(ev):
            if edge not in sent:
                continue
            ts, path, ln = sent[edge]
            reached = acked.get(edge, ts)
            held = ts - reached > 0.001
            rows.append((path, held, jump > 170_000))
            if path == "path4":
                out = outstanding(reached)
                kinds[("held" if held else "sent", "head short" if ln < FULL else "head full",
                       "short out" if any(x < FULL for x in out) else ("full out" if out else "nothing out"))] += 1
        for path in ("path1", "path4"):
            v = [r for r in rows if r[0] == path]
            if v:
                print(d, path, len(v), "releases; head sent after the window reached it (held):", sum(r[1] for r in v),
                      "; whole-window releases:", sum(r[2] for r in v), "of them held:", sum(r[1] and r[2] for r in v))
        print(d, dict(kinds))


if __name__ == "__main__":
    main(sys.argv[1:])
