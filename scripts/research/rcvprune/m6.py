"""M6 analysis of a run2.py trace: per-subflow linger-time inputs and the scheduler's picks."""
import sys, statistics as st, json
from pathlib import Path
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
import pcapmp
d = Path(sys.argv[1])
info = json.loads((d / "info.json").read_text())
off = info["real0"] - info["mono0"]
G, F, A = [], [], []
for line in (d / "bt.txt").read_text(errors="replace").splitlines():
    p = line.split()
    if not p: continue
    if p[0] == "G" and len(p) == 8: G.append((int(p[1]) * 1e-9 + off, int(p[2]), int(p[3]), int(p[4]), int(p[5]), int(p[6])))
    elif p[0] == "F" and len(p) == 6: F.append((int(p[1]) * 1e-9 + off, int(p[2]), int(p[3]), int(p[4]), int(p[5])))
    elif p[0] == "A" and len(p) == 11:
        v = int(p[2], 16).to_bytes(4, "little")
        A.append(dict(t=int(p[1]) * 1e-9 + off, path=v[2] + 1, una=int(p[3]), nxt=int(p[4]), cwnd=int(p[5]), pout=int(p[6]), wmem=int(p[7]), srtt_us=int(p[8]), pace=int(p[9]), avg=int(p[10])))
print("events G", len(G), "F", len(F), "A", len(A))
# DSN -> path from the pcaps (client -> server data)
dsn_path = {}
for f in sorted((d / "pcap").glob("*.pcap")):
    k = int(f.stem.removeprefix("path"))
    for r in pcapmp.read(f):
        if r.get("dsn") is not None and r.get("dll"):
            dsn_path[r["dsn"]] = k
print("mappings", len(dsn_path))
for k in range(1, 5):
    a = [x for x in A if x["path"] == k]
    if not a: continue
    q = lambda key: st.median([x[key] for x in a])
    print(f"path{k}: acks {len(a)} cwnd {q('cwnd')} pout {q('pout')} wmem {q('wmem')} srtt {q('srtt_us')/1000:.1f} ms pace {q('pace')/1e6:.2f} MB/s avg {q('avg')/1e6:.2f} MB/s")
# decisions: group G by (cpu, time gap < 20 us)
dec = []
cur = []
for g in G:
    if cur and (g[1] != cur[-1][1] or g[0] - cur[-1][0] > 20e-6):
        dec.append(cur); cur = []
    cur.append(g)
if cur: dec.append(cur)
from collections import Counter
print("decisions", len(dec), "sizes", Counter(len(x) for x in dec).most_common(5))
# the frag after each decision -> path
Fi = 0
picks = Counter()
for x in dec:
    t = x[-1][0]
    while Fi < len(F) and F[Fi][0] < t: Fi += 1
    if Fi < len(F) and F[Fi][0] - t < 1e-3:
        ds = F[Fi][2]
        # mapping start containing ds
        picks[dsn_path.get(ds, None)] += 1
print("picks by path (first frag after a decision):", picks.most_common())
a4 = [x for x in A if x["path"] == 4]
print("path4 ACKs with wmem 0 after the ACK? (wmem is before tcp_ack):", sum(1 for x in a4 if x["wmem"] == 0), "of", len(a4))
# decisions with a zero-ratio subflow and the pace order
z = [x for x in dec if len(x) == 4 and any(g[5] == 0 for g in x)]
print("4-subflow decisions", sum(1 for x in dec if len(x) == 4), "with some ratio 0:", len(z))
from collections import Counter
print("position of zero-ratio subflows:", Counter(i for x in z for i, g in enumerate(x) if g[5] == 0).most_common())
# pace of each position (identify path4 = lowest pace)
for i in range(4):
    print("pos", i, "median pace", st.median(x[i][4] for x in dec if len(x) == 4)/1e6)
# F events sizes per path
sz = {}
for f in F:
    k = None
    for ds in (f[2],):
        k = dsn_path.get(ds)
    sz.setdefault(k, []).append(f[3])
for k, v in sz.items(): print("F path", k, "n", len(v), "mean len", round(sum(v)/len(v)), "max", max(v))
