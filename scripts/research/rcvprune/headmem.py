"""trace.bt runs (run.py): at each tiny (<= 16 B of payload; skb->len less 56 B of TCP
header and options) data arrival on the slow path's server subflow, the MPTCP socket's rmem
against its sk_rcvbuf when it is within 10 % of it, the subflow's own rmem, and whether a
drop on that subflow follows within 50 ms. usage: headmem.py SLOW_PATH_INDEX RUN_DIR...
(docs/kernel.md, "PSH on every GSO packet", the race)."""
import json
import sys
from pathlib import Path
SLOW = int(sys.argv[1])
for d in sys.argv[2:]:
    d = Path(d)
    R, D = [], []
    for line in (d / "bt.txt").read_text(errors="replace").splitlines():
        p = line.split()
        if not p:
            continue
        if p[0] == "R" and len(p) >= 20:
            path = int(p[2], 16).to_bytes(4, "little")[2]
            R.append((int(p[1]) * 1e-9, path, int(p[3]), int(p[4]), int(p[11]), int(p[12]), int(p[13]), int(p[14])))
        elif p[0] == "D" and len(p) >= 16:
            path = int(p[2], 16).to_bytes(4, "little")[2]
            D.append((int(p[1]) * 1e-9, path))
    if not R:
        print(d, "no R")
        continue
    t0 = R[0][0]
    info = json.loads((d / "info.json").read_text())
    print("==", d.name, info.get("goodput"))
    big = 0
    for (t, path, srm, srb, ln, ts, mrm, mrb) in R:
        if path == SLOW and ln - 56 <= 16 and t - t0 > 2:
            drop = any(dp == path and t <= dt <= t + 0.05 for dt, dp in D)
            if mrm > 0.9 * mrb or drop:
                print(f"  {t - t0:7.3f} len {ln - 56} msk rmem {mrm} of {mrb} ({mrm - mrb:+d}) subflow rmem {srm}{'  DROP' if drop else ''}")
