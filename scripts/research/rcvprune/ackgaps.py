"""A path's ACKs by how many new segments they cover (1, 2, 3 or more; "-short" when the
last one is under the MSS) and their delay since that segment left, from either backend's
captures (docs/kernel.md, "The deadlock rows' gap is in the emulator").

  ackgaps.py PATH DIR...      (DIR: a --pcap directory with PATH.pcap)
"""
import statistics as st
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import slowpath  # noqa: E402

path = sys.argv[1]
res = defaultdict(list)
for d in sys.argv[2:]:
    recs = slowpath.records(Path(d) / f'{path}.pcap')
    syn = next(r for r in recs if r['flags'] & 2 and not r['flags'] & 16); cli = syn['src']
    out = []; hi = None
    for r in recs:
        if r['src'] == cli and r['len'] > 0:
            end = (r['seq'] + r['len']) & 0xffffffff
            if hi is not None and ((end - hi) & 0xffffffff) >= 0x80000000: continue
            hi = end; out.append((r['t'], end, r['len']))
        elif r['src'] != cli and r['flags'] & 16:
            cov = [o for o in out if ((r['ack'] - o[1]) & 0xffffffff) < 0x80000000]
            if cov:
                out = out[len(cov):]
                last = cov[-1]
                k = f"{min(len(cov),3)}seg{'-short' if last[2] < 1424 else ''}"
                res[k].append((r['t'] - last[0]) * 1000)
for k in sorted(res):
    v = res[k]
    if len(v) > 10: print(f"{k:12s} {len(v):5d}  ms since the last covered send: deciles", [round(x) for x in st.quantiles(v, n=10)])
