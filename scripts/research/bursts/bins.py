"""Data packets leaving the client per time bin, one line a path, from a run's `--pcap`
directory (either backend): a digit is the count, `#` ten or more, blank none.
usage: bins.py DIR FROM_S TO_S STEP_S   (times from the first data packet)"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bursts_lib import data_packets  # noqa: E402

d, a, b, step = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rows = {f.stem: [t for t, src in data_packets(f) if src.startswith("10.100.") and src.endswith(".1")]
        for f in sorted(d.glob("*.pcap"))}
t0 = min(p[0] for p in rows.values() if p)
for name, pk in rows.items():
    h = [0] * int((b - a) / step)
    for t in pk:
        if a <= t - t0 < b:
            h[int((t - t0 - a) / step)] += 1
    print(f"{name}: " + "".join(" " if v == 0 else (str(v) if v < 10 else "#") for v in h))
