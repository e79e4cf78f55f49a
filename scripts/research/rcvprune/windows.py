"""The receiver's advertised windows and the slow path's window-tail segments, from
either backend's captures (`--pcap DIR`; the simulator's since its SYN-ACK carries the
server's own window scale). Written for docs/kernel.md, "The window the receiver
offers, and who takes its tail" (2026-11-27, issue 12):

  windows.py view DIR T1 T2        every path's data (DSN, length) and server ACKs (DATA_ACK, edge)
  windows.py offers DIR T          the windows (edge - DATA_ACK) the fast paths' ACKs offer, by count
  windows.py tails DIR PATH T      PATH's segments from 2 s to T: how many, how many short, how many
                                   sent when their DSN was already the connection's left edge

`trace4.bt` (run.py with TRACE=trace4.bt) gives the same windows at the server with the
MPTCP socket's memory beside each ACK."""
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import slowpath  # noqa: E402

PAYLOAD = slowpath.PAYLOAD


def load(d):
    """Time-ordered (t, "D", path, dsn, len) and (t, "A", path, data_ack, edge)."""
    ev = []
    for f in sorted(Path(d).glob("*.pcap")):
        recs = slowpath.records(f)
        syn = next(r for r in recs if r["flags"] & 2 and not r["flags"] & 16)
        cport, isn, ws = syn["sport"], {}, {}
        for r in recs:
            up = r["sport"] == cport
            if r["flags"] & 2:
                isn[up] = r["seq"]
                ws[up] = r.get("wscale", 0)
                continue
            if up and r["len"] > 0 and "dsn" in r:
                rel = (r["seq"] - isn[True]) % (1 << 32)
                ev.append((r["t"], "D", f.stem, r["dsn"] + (rel - r["ssn"]) % (1 << 32), r["len"]))
            elif not up and "data_ack" in r:
                ev.append((r["t"], "A", f.stem, r["data_ack"], r["data_ack"] + (r["win"] << ws.get(False, 0))))
    ev.sort()
    return ev


def first_sends(ev):
    """The first send of each DSN: dsn -> (t, path, len)."""
    out = {}
    for t, k, p, a, b in ev:
        if k == "D":
            out.setdefault(a, (t, p, b))
    return out


def first_acks(ev):
    """When each DATA_ACK value first reached the client: data_ack -> t."""
    out = {}
    for t, k, _, a, _ in ev:
        if k == "A":
            out.setdefault(a, t)
    return out


def releases(ev, min_jump=50_000):
    """Each DATA_ACK jump of more than `min_jump` bytes: (t, left-edge DSN, jump)."""
    last, out = None, []
    for t, k, _, a, _ in ev:
        if k != "A":
            continue
        if last is not None and a - last > min_jump:
            out.append((t, last, a - last))
        last = a if last is None else max(last, a)
    return out


def main(argv):
    cmd, d = argv[1], argv[2]
    ev = load(d)
    t0 = ev[0][0]
    if cmd == "view":
        t1, t2 = float(argv[3]), float(argv[4])
        for e in ev:
            if t1 <= e[0] - t0 <= t2:
                kind = f"dsn {e[3]} len {e[4]}" if e[1] == "D" else f"data_ack {e[3]} window {e[4] - e[3]}"
                print(f"{e[0] - t0:9.4f} {e[2]} {e[1]} {kind}")
    elif cmd == "offers":
        slow = max({e[2] for e in ev})  # the paths' files sort by name; seed 001's slow path is last
        c = Counter(e[4] - e[3] for e in ev if e[1] == "A" and e[2] != slow and e[0] - t0 <= float(argv[3]))
        print(" ".join(f"{w}:{n}" for w, n in c.most_common(10)))
    elif cmd == "tails":
        path, tmax = argv[3], float(argv[4])
        ack = n = short = at_edge = 0
        for e in ev:
            t = e[0] - t0
            if t > tmax:
                break
            if e[1] == "A":
                ack = max(ack, e[3])
            elif e[2] == path and t >= 2:
                n, short, at_edge = n + 1, short + (e[4] < PAYLOAD), at_edge + (e[3] == ack)
        print(f"{path}: {n} segments, {short} short, {at_edge} sent at the left edge ({tmax - 2:.0f} s)")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
