import sys
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from chunks import load
from collections import defaultdict
for d in sys.argv[1:]:
    maps, pk = load(d)
    t0 = min(x[0] for L in pk.values() for x in L)
    B = defaultdict(lambda: defaultdict(int))
    for k, L in pk.items():
        for t, ln, seq in L:
            B[int(t - t0)][k] += ln
    print(d)
    print(" ".join(f"{sum(B[s].values())*8/1e6:4.1f}" for s in range(60)))
