"""The kernel backend's reader against the arrivals, from trace10.bt runs (docs/kernel.md,
"The reader's lag, ..."):

  readerlag.py BT_TXT...

For each run: arrivals, the delay from the last arrival to each ACK the reader sends
(`mptcp_recvmsg` in its stack; p10/50/90 in us), and the share of arrivals less than 50 and
300 us after the one before (with the p10/50/90 of those under 50 us)."""
import sys


def load(path):
    recs, cur = [], None
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "R":
            recs.append(("R", int(f[1])))
            cur = None
        elif f[0] == "K":
            cur = ["K", int(f[1]), []]
            recs.append(cur)
        elif cur is not None and line.startswith("        "):
            cur[2].append(f[0].split("+")[0])
    recs.sort(key=lambda r: r[1])
    return recs


def q(a, x):
    return round(a[int(x * (len(a) - 1))], 1) if a else None


for p in sys.argv[1:]:
    last, lags, gaps = None, [], []
    for r in load(p):
        if r[0] == "R":
            if last is not None:
                gaps.append((r[1] - last) / 1e3)
            last = r[1]
        elif last is not None and "recvmsg" in " ".join(r[2]):
            lags.append((r[1] - last) / 1e3)
    lags.sort()
    gaps.sort()
    small = [g for g in gaps if g < 50]
    print(p, "arrivals", len(gaps) + 1, "reader ACK lag us p10/50/90", q(lags, .1), q(lags, .5), q(lags, .9),
          "gaps < 50 us %.3f" % (len(small) / len(gaps)), "< 300 us %.3f" % (sum(g < 300 for g in gaps) / len(gaps)),
          "those < 50 us p10/50/90", q(small, .1), q(small, .5), q(small, .9))
