"""Burst structure of a run's captures (issue 12): per path, the client's data packets
grouped into bursts (back-to-back: less than GAP_US apart at the client end, before the
emulated bottleneck), with the largest bursts and how many exceed the path's queue.
Works on the simulator's and the kernel backend's `--pcap` directories alike.
usage: bursts.py DIR [GAP_US] [QUEUE_PKTS]"""
import sys
from collections import Counter
from pathlib import Path



def data_packets(path):
    """(time, source address) of every TCP segment with payload in a classic pcap, with
    Ethernet (the kernel backend's captures) or raw IPv4 (the simulator's) framing."""
    b = Path(path).read_bytes()
    little = b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")
    nano = b[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    order = "little" if little else "big"
    link = int.from_bytes(b[20:24], order)
    l2 = 14 if link == 1 else 0
    off, out = 24, []
    while off + 16 <= len(b):
        sec, frac, cap = (int.from_bytes(b[off + k:off + k + 4], order) for k in (0, 4, 8))
        fr = b[off + 16:off + 16 + cap]
        off += 16 + cap
        ip = fr[l2:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        tot = int.from_bytes(ip[2:4], "big")
        doff = (ip[ihl + 12] >> 4) * 4
        if tot - ihl - doff > 0:
            out.append((sec + frac * (1e-9 if nano else 1e-6), ".".join(map(str, ip[12:16]))))
    return out


d = Path(sys.argv[1])
gap = float(sys.argv[2]) * 1e-6 if len(sys.argv) > 2 else 200e-6
queue = int(sys.argv[3]) if len(sys.argv) > 3 else 100
for f in sorted(d.glob("*.pcap")):
    recs = [t for t, src in data_packets(f) if src.startswith("10.100.") and src.endswith(".1")]
    bursts, cur, last = [], 0, None
    for t in recs:
        if last is not None and t - last > gap:
            bursts.append(cur)
            cur = 0
        cur += 1
        last = t
    if cur:
        bursts.append(cur)
    big = sorted(bursts, reverse=True)[:8]
    hist = Counter(min(b // 10 * 10, 200) for b in bursts)
    print(f"{f.stem}: {len(recs)} data packets in {len(bursts)} bursts; largest {big}; over the {queue}-packet queue: "
          f"{sum(1 for b in bursts if b > queue)}; by tens: {sorted(hist.items())[-6:]}")
