"""The kernel scheduler's decisions in a time window of a trace2.bt run: each
`mptcp_subflow_get_send` call's per-subflow average pacing rate and linger time (in the
walk order), then the data frags `mptcp_sendmsg_frag` put on the chosen subflow (the path
from the captures' DSS mappings). `decisions.py OUTDIR T1 T2` (seconds from the SYN).
Shows, for instance, that after a window release the kernel's restarted fast subflows keep
their pre-restart pacing rate until an ACK comes (docs/kernel.md, "The pacing rate the
scheduler reads")."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import pcapmp  # noqa: E402


def main(d, t1, t2):
    d = Path(d)
    info = json.loads((d / "info.json").read_text())
    off = info["real0"] - info["mono0"]
    ev = []
    for line in (d / "bt.txt").read_text(errors="replace").splitlines():
        p = line.split()
        if p and p[0] == "G" and len(p) == 8:  # time cpu active free pace ratio backup
            ev.append((int(p[1]) * 1e-9 + off, "G", int(p[5]), int(p[6])))
        elif p and p[0] == "F" and len(p) == 6:  # time cpu data_seq data_len subflow_seq
            ev.append((int(p[1]) * 1e-9 + off, "F", int(p[3]), int(p[4])))
    dsn_path, t0 = pcapmp.dsn_paths(d)
    ev.sort()
    pending = []
    for t, kind, a, b in ev:
        t -= t0
        if not t1 <= t < t2:
            continue
        if kind == "G":
            pending.append(f"[pace {a / 1e6:.2f} MB/s, linger {b / 2**32 * 1e3:.0f} ms]")
            continue
        if pending:
            print(f"{t:8.4f} decision: " + " ".join(pending))
            pending = []
        print(f"{t:8.4f}   frag of {b} B on {dsn_path.get(a, '?')}")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]))
