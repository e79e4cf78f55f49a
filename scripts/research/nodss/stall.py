import sys
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
import pcapmp
from pathlib import Path
from collections import defaultdict
d, a, b = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
recs = {}
t0 = None
for f in sorted(Path(d).glob("*.pcap")):
    R = pcapmp.read(f)
    recs[f.stem] = R
    m = min(r["t"] for r in R)
    t0 = m if t0 is None else min(t0, m)
for k, R in recs.items():
    data = [r for r in R if r["len"] > 0]
    if not data: continue
    cli = data[0]["src"]
    hi = {}
    line = []
    for r in R:
        t = r["t"] - t0
        if r["src"] == cli and r["len"] > 0:
            rt = r["seq"] in hi
            hi[r["seq"]] = 1
            if a <= t < b: line.append((t, "R" if rt else "d", r["len"], r.get("dsn")))
        elif r["src"] != cli and a <= t < b:
            line.append((t, "a", r["win"], r.get("data_ack")))
    # summarize per 0.25 s
    bins = defaultdict(lambda: [0, 0, 0, None, None])
    for t, kind, x, y in line:
        e = bins[int((t - a) * 4)]
        if kind == "d": e[0] += 1
        elif kind == "R": e[1] += 1
        else:
            e[2] += 1; e[3] = x
            if y is not None: e[4] = y
    print(k, " ".join(f"{i/4+a:.2f}:{e[0]}/{e[1]}/{e[2]}w{e[3]}" for i, e in sorted(bins.items())))
