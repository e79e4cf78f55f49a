"""Per-path sender state of a trace3.bt run (run.py with TRACE=trace3.bt): cwnd and
ssthresh every STEP seconds, when each path's ssthresh first fell and from what cwnd, and
its retransmissions. usage: cwnd.py OUTDIR [STEP_S]"""
import json, sys
from pathlib import Path


def trace3(d):
    """(A, R, t0) of a trace3.bt run directory: per path (the source address's third
    octet), its ACKs (t, snd_una, snd_nxt, cwnd, ssthresh, srtt_us, packets_out, retrans_out,
    lost_out, sacked_out) and its retransmission times, on the wall clock; t0 the first ACK."""
    d = Path(d)
    info = json.loads((d / "info.json").read_text())
    off = info["real0"] - info["mono0"]
    A, R = {}, {}
    t0 = None
    for line in (d / "bt.txt").read_text(errors="replace").splitlines():
        p = line.split()
        if not p:
            continue
        if p[0] == "A" and len(p) == 12:
            path = int(p[2], 16).to_bytes(4, "little")[2]
            t = int(p[1]) * 1e-9 + off
            t0 = t if t0 is None else min(t0, t)
            A.setdefault(path, []).append((t, *map(int, p[3:])))
        elif p[0] == "R" and len(p) == 3:
            path = int(p[2], 16).to_bytes(4, "little")[2]
            R.setdefault(path, []).append(int(p[1]) * 1e-9 + off)
    return A, R, t0


if __name__ == "__main__":
    step = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    A, R, t0 = trace3(sys.argv[1])
    for path in sorted(A):
        a = A[path]
        first_cut = next(((x[0] - t0, prev[3]) for prev, x in zip(a, a[1:]) if x[4] < prev[4]), None)
        print(f"path {path}: {len(a)} ACKs, {len(R.get(path, []))} retransmissions; first ssthresh cut at "
              f"{'-' if first_cut is None else f'{first_cut[0]:.2f} s from cwnd {first_cut[1]}'}")
        row, nxt = [], 0.0
        for x in a:
            if x[0] - t0 >= nxt:
                ss = x[4] if x[4] < 1 << 30 else "inf"
                row.append(f"{x[0] - t0:.1f}:{x[3]}/{ss}")
                nxt += step
        print("  t:cwnd/ssthresh", " ".join(row))
