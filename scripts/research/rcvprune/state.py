"""Per-path sender state of a trace3.bt run (run.py with TRACE=trace3.bt), in four windows
(5-10, 10-20, 20-40, 40-60 s): median cwnd, SRTT and packets out, each ssthresh cut's time
and the retransmissions. The path is the third octet of the subflow's source address.
usage: state.py OUTDIR"""
import statistics as st
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cwnd import trace3

A, R, t0 = trace3(sys.argv[1])
for path in sorted(A):
    a = A[path]
    cuts = [round(x[0] - t0, 1) for prev, x in zip(a, a[1:]) if x[4] < prev[4]]
    out = []
    for lo, hi in ((5, 10), (10, 20), (20, 40), (40, 60)):
        q = [x for x in a if lo <= x[0] - t0 < hi]
        if q:
            out.append(f"{lo}-{hi}s cw {st.median(x[3] for x in q):.0f} rtt {st.median(x[5] for x in q) / 1000:.0f} "
                       f"out {st.median(x[6] for x in q):.0f}")
    print(f"path{path}: ACKs {len(a)} retrans {len(R.get(path, []))} ssthresh cuts at {cuts[:12]}")
    print("   ", " | ".join(out))
