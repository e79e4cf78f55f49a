"""Per-path DSN chunks (contiguous same-path DSN ranges) from pcaps of either backend."""
import sys, statistics as st
from pathlib import Path
from collections import defaultdict
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
import pcapmp
def load(d):
    maps = []  # (dsn, dll, path, t)
    pk = defaultdict(list)
    for f in sorted(Path(d).glob("*.pcap")):
        k = f.stem
        for r in pcapmp.read(f):
            if r["len"] > 0 and r["sport"] != 0:
                pk[k].append((r["t"], r["len"], r["seq"]))
            if r.get("dsn") is not None and r.get("dll"):
                maps.append((r["dsn"], r["dll"], k, r["t"]))
    return maps, pk
def chunks(maps):
    seen = {}
    for dsn, dll, k, t in maps:
        if dsn not in seen or seen[dsn][1] < dll:
            seen[dsn] = (k, dll, t)
    items = sorted((dsn, v[1], v[0], v[2]) for dsn, v in seen.items())
    out = []
    for dsn, dll, k, t in items:
        if out and out[-1][2] == k and out[-1][0] + out[-1][1] >= dsn:
            end = max(out[-1][0] + out[-1][1], dsn + dll)
            out[-1] = (out[-1][0], end - out[-1][0], k, out[-1][3])
        else:
            out.append((dsn, dll, k, t))
    return out
if __name__ == "__main__":
  for d in sys.argv[1:]:
      maps, pk = load(d)
      ch = chunks(maps)
      t0 = min(c[3] for c in ch)
      print("==", d, "chunks", len(ch))
      by = defaultdict(list)
      for c in ch: by[c[2]].append(c[1])
      for k in sorted(by):
          v = by[k]
          print(f"  {k}: chunks {len(v)} bytes {sum(v)} median {st.median(v):.0f} mean {sum(v)/len(v):.0f} max {max(v)}")
      # sequence of paths after t0+5
      seq = [c[2][-1] for c in ch if c[3] > t0 + 5][:120]
      print("  order:", "".join(seq))
