"""Burst structure of a run's captures (issue 12): per path, the client's data packets
grouped into bursts (back-to-back: less than GAP_US apart at the client end, before the
emulated bottleneck), with the largest bursts and how many exceed the path's queue.
Works on the simulator's and the kernel backend's `--pcap` directories alike.
usage: bursts.py DIR [GAP_US] [QUEUE_PKTS]"""
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bursts_lib import data_packets  # noqa: E402

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
