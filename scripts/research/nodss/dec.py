import sys, json
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from chunks import load, chunks
d = sys.argv[1]
info = json.loads(open(d + "/info.json").read()); off = info["real0"] - info["mono0"]
G, F = [], []
for line in open(d + "/bt.txt", errors="replace"):
    p = line.split()
    if p and p[0] == "G" and len(p) == 8: G.append((int(p[1]) * 1e-9 + off, int(p[2]), int(p[3]), int(p[4]), int(p[5]), int(p[6]), int(p[7])))
    elif p and p[0] == "F" and len(p) == 6: F.append((int(p[1]) * 1e-9 + off, int(p[2]), int(p[3]), int(p[4]), int(p[5])))
maps, pk = load(d + "/pcap")
ch = chunks(maps)
# dsn -> path by chunk
import bisect
starts = [c[0] for c in ch]
def path_of(dsn):
    i = bisect.bisect_right(starts, dsn) - 1
    return ch[i][2] if i >= 0 and dsn < ch[i][0] + ch[i][1] else None
dec = []; cur = []
for g in G:
    if cur and (g[1] != cur[-1][1] or g[0] - cur[-1][0] > 20e-6):
        dec.append(cur); cur = []
    cur.append(g)
if cur: dec.append(cur)
t0 = min(c[3] for c in ch)
Fi = 0
from collections import Counter
cnt = Counter()
for x in dec:
    t = x[-1][0]
    while Fi < len(F) and F[Fi][0] < t: Fi += 1
    if Fi < len(F) and F[Fi][0] - t < 2e-3:
        p = path_of(F[Fi][2] & ((1 << 64) - 1))
        cnt[p] += 1
        if p == sys.argv[2] and t - t0 > 10:
            print(f"{t - t0:8.3f} -> {p}: " + " | ".join(f"act{g[2]} free{g[3]} pace{g[4]/1e6:.2f} ratio{g[5]}" for g in x))
print(cnt)
