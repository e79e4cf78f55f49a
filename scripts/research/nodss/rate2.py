import sys
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from chunks import load
from collections import defaultdict
import statistics as st
for d in sys.argv[1:]:
    maps, pk = load(d)
    t0 = min(x[0] for L in pk.values() for x in L)
    B = defaultdict(lambda: defaultdict(int))
    for k, L in pk.items():
        for t, ln, seq in L:
            B[int(t - t0)][k] += ln
    tot = [sum(B[s].values())*8/1e6 for s in range(60)]
    act = [x for x in tot if x > 1.5]
    print(d, "stall s", sum(1 for x in tot if x <= 1.5), "active mean", round(st.mean(act),2), "per path active:", {k: round(st.mean([B[s][k]*8/1e6 for s in range(60) if tot[s] > 1.5]),2) for k in sorted(pk)})
