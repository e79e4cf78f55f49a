import sys
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
import pcapmp
from pathlib import Path
d, a, b = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
paths = sys.argv[4].split(",") if len(sys.argv) > 4 else None
allr = []
t0 = None
for f in sorted(Path(d).glob("*.pcap")):
    R = pcapmp.read(f)
    cli = next((r["src"] for r in R if r["len"] > 0), None)
    for r in R:
        r["path"] = f.stem; r["dir"] = "C>" if r["src"] == cli else "<S"
    allr += R
t0 = min(r["t"] for r in allr)
base = min(r["dsn"] for r in allr if r.get("dsn") is not None and r["dsn"] > 0)
for r in sorted(allr, key=lambda r: r["t"]):
    t = r["t"] - t0
    if a <= t < b and (paths is None or r["path"] in paths):
        dsn = r.get("dsn"); da = r.get("data_ack")
        print(f"{t:9.4f} {r['path']} {r['dir']} len {r['len']:5d} seq {r['seq']%10**7:8d} ack {r['ack']%10**7:8d} win {r['win']:6d} dsn {'' if dsn is None else (dsn-base)%2**32:>10} dack {'' if da is None else (da-base)%2**32:>10}")
