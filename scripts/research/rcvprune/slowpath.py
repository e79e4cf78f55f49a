"""How a path's data waits, from either backend's captures (`--pcap DIR`: the kernel
backend's Ethernet files or the simulator's raw-IP ones, docs/pcap.md). Written for the
pacing-rate finding (docs/kernel.md, "The pacing rate the scheduler reads"):

  slowpath.py rtt DIR PATH        per-segment RTT (first transmissions) by packets out when sent
  slowpath.py bursts DIR PATH     the path's send bursts (gaps > 30 ms): sizes and packets out before
  slowpath.py releases DIR        the connection's DATA_ACK jumps (> 100 kB): how often and how big
  slowpath.py perjump DIR         the new data each path sends in the 60 ms after each such jump

Both backends capture at the client's end of each path, so the same reading holds."""
import statistics as st
import struct
import sys
from collections import OrderedDict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import pcapmp  # noqa: E402

PAYLOAD = 1424  # the upstream data segment's payload (docs/upstream-profile.md)
WRAP = 1 << 32


def records(f):
    """pcapmp records of one file; a raw-IP capture (the simulator's) is given an
    Ethernet header first so the one parser reads both."""
    data = Path(f).read_bytes()
    if struct.unpack("<I", data[20:24])[0] == 1:
        return pcapmp.read(f)
    out, off = bytearray(data[:20]) + struct.pack("<I", 1), 24
    while off + 16 <= len(data):
        sec, nsec, cap, ln = struct.unpack("<IIII", data[off:off + 16])
        frame = data[off + 16:off + 16 + cap]
        off += 16 + cap
        out += struct.pack("<IIII", sec, nsec, cap + 14, ln + 14) + b"\0" * 12 + b"\x08\x00" + frame
    tmp = Path(f).with_suffix(".eth.tmp")
    tmp.write_bytes(bytes(out))
    try:
        return pcapmp.read(tmp)
    finally:
        tmp.unlink()


def subflow(d, path):
    """(records, client port, time of the SYN) of the path's subflow."""
    recs = records(Path(d) / f"{path}.pcap")
    syn = next(r for r in recs if r["flags"] & 2 and not r["flags"] & 16)
    return recs, syn["sport"], syn["t"]


def ahead(a, b):
    return 0 < ((a - b) % WRAP) < WRAP // 2


def rtt_by_flight(d, path):
    """(send time, RTT, bytes out before it, length) of every first transmission that a
    cumulative ACK covers."""
    recs, port, t0 = subflow(d, path)
    q, high, una, out = OrderedDict(), None, None, []
    for r in recs:
        if r["sport"] == port and r["len"] > 0:
            end = (r["seq"] + r["len"]) % WRAP
            if r["seq"] in q or (una is not None and not ahead(end, una)):
                if r["seq"] in q:
                    q[r["seq"]][3] = True  # retransmitted: no sample (Karn)
                continue
            q[r["seq"]] = [r["t"], end, (high - una) % WRAP if high is not None and una is not None else 0, False, r["len"]]
            if high is None or ahead(end, high):
                high = end
        elif r["dport"] == port and r["flags"] & 16 and (una is None or ahead(r["ack"], una)):
            una = r["ack"]
            while q:
                seq, (ts, end, before, rtx, ln) = next(iter(q.items()))
                if ahead(end, una):
                    break
                q.popitem(last=False)
                if not rtx:
                    out.append((ts - t0, r["t"] - ts, before, ln))
    return out


def bursts(d, path, gap=0.03):
    """(start, segments, packets out before) of each run of sends closer than `gap`."""
    recs, port, t0 = subflow(d, path)
    high = una = last = None
    out = []
    for r in recs:
        if r["dport"] == port and (una is None or ahead(r["ack"], una)):
            una = r["ack"]
        if r["sport"] != port or r["len"] == 0:
            continue
        end = (r["seq"] + r["len"]) % WRAP
        if high is None or ahead(end, high):
            high = end
        if last is None or r["t"] - last > gap:
            out.append([r["t"] - t0, 0, (end - una - r["len"]) % WRAP / PAYLOAD if una is not None else 0.0])
        out[-1][1] += 1
        last = r["t"]
    return out


def releases(d, least=100e3):
    """(time, DATA_ACK advance) of every jump of the connection's DATA_ACK over `least`."""
    ev = []
    for f in sorted(Path(d).glob("*.pcap")):
        ev += [(r["t"], r) for r in records(f)]
    ev.sort(key=lambda e: e[0])
    t0, idsn, acked, out = ev[0][0], None, 0, []
    for t, r in ev:
        if idsn is None and r.get("dsn") is not None:
            idsn = r["dsn"]
        if idsn is not None and r.get("data_ack") is not None and r["len"] == 0:
            a = (r["data_ack"] - idsn) % (1 << 64)
            if acked < a < 1 << 40:
                if a - acked > least:
                    out.append((t - t0, a - acked))
                acked = a
    return out


def per_jump(d, window=0.06):
    """{path: [new-data bytes sent in `window` after each DATA_ACK jump over 100 kB, after 5 s]}."""
    t00 = min(records(f)[0]["t"] for f in Path(d).glob("*.pcap"))
    jumps = [t + t00 for t, _ in releases(d) if t > 5]
    out = {}
    for f in sorted(Path(d).glob("path*.pcap")):
        recs, port, _ = subflow(d, f.stem)
        high, sends = None, []
        for r in recs:
            if r["sport"] != port or r["len"] == 0:
                continue
            end = (r["seq"] + r["len"]) % WRAP
            if high is None or ahead(end, high):  # first transmissions only
                high = end
                sends.append((r["t"], r["len"]))
        out[f.stem] = [sum(n for t, n in sends if j <= t < j + window) for j in jumps]
    return out


def main(argv):
    what, d = argv[1], argv[2]
    if what == "rtt":
        s = [x for x in rtt_by_flight(d, argv[3]) if 5 < x[0] < 55]
        print(f"{d} {argv[3]}: RTT of first transmissions (5-55 s) by packets out when sent")
        for lo in range(0, 90, 5):
            r = sorted(x[1] for x in s if lo <= x[2] / PAYLOAD < lo + 5)
            if len(r) > 20:
                print(f"  {lo:2d}-{lo + 5:2d} out: n={len(r):4d}  RTT p10/50/90 {r[len(r) // 10] * 1e3:5.0f} {r[len(r) // 2] * 1e3:5.0f} {r[9 * len(r) // 10] * 1e3:5.0f} ms")
    elif what == "bursts":
        b = [x for x in bursts(d, argv[3]) if 5 < x[0] < 60]
        for name, lo, hi in (("1-30", 1, 30), ("31-60", 31, 60), ("61+", 61, 1 << 30)):
            s = [x for x in b if lo <= x[1] <= hi]
            if s:
                print(f"{d} {argv[3]}: bursts of {name} segments: {len(s)}, packets out before them (median) {st.median(x[2] for x in s):.0f}")
    elif what == "releases":
        j = [x for x in releases(d) if x[0] > 5]
        iv = [b[0] - a[0] for a, b in zip(j, j[1:])]
        print(f"{d}: {len(j)} DATA_ACK jumps over 100 kB after 5 s, median interval {st.median(iv):.3f} s, median jump {st.median(x[1] for x in j) / 1e3:.0f} kB")
    elif what == "perjump":
        for path, v in per_jump(d).items():
            print(f"{d} {path}: {len(v)} jumps, median {st.median(v) / 1e3:.1f} kB in the 60 ms after each, "
                  f"none in {sum(1 for x in v if x == 0)}, 60 kB or more in {sum(1 for x in v if x >= 60e3)}")
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
