"""The kernel scheduler's decisions after 5 s of a trace2.bt run, grouped into window jumps
as `after_a_window_jump_the_slow_subflow_takes_one_burst_...` (upstream_profile.rs) groups
the simulator's pushes: decisions less than 1 ms apart answer one jump. Counts the jumps
that fed PATH (path4 unless given) and those that fed it more than once.
`episodes.py OUTDIR [PATH]` (docs/kernel.md, "The two receive-window rules land")."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import pcapmp  # noqa: E402


def decisions(d):
    """(seconds from the SYN, path) of every scheduler decision: a run of `G` records
    (`mptcp_subflow_get_send`) then the frags `mptcp_sendmsg_frag` put on the chosen
    subflow; the path is the first frag's, from the captures' DSS mappings."""
    info = json.loads((d / "info.json").read_text())
    off = info["real0"] - info["mono0"]
    ev = []
    for line in (d / "bt.txt").read_text(errors="replace").splitlines():
        p = line.split()
        if p and p[0] == "G" and len(p) == 8:
            ev.append((int(p[1]) * 1e-9 + off, "G", 0))
        elif p and p[0] == "F" and len(p) == 6:  # time cpu data_seq data_len subflow_seq
            ev.append((int(p[1]) * 1e-9 + off, "F", int(p[3])))
    dsn_path, t0 = pcapmp.dsn_paths(d)
    ev.sort()  # bpftrace writes per CPU
    out, pending = [], False
    for t, kind, dsn in ev:
        if kind == "G":
            pending = True
        elif pending:
            out.append((t - t0, dsn_path.get(dsn, "?")))
            pending = False
    return out


def main(d, slow="path4"):
    d = Path(d)
    dec = [x for x in decisions(d) if x[0] > 5]
    jumps, last = [], None
    for t, path in dec:
        if last is None or t - last >= 1e-3:
            jumps.append([])
        last = t
        jumps[-1].append(path)
    fed = [j for j in jumps if slow in j]
    twice = [j for j in fed if j.count(slow) > 1]
    unmatched = sum(1 for _, p in dec if p == "?")
    print(f"{d}: {len(dec)} decisions after 5 s ({unmatched} without a path), {len(jumps)} window jumps, "
          f"{len(fed)} fed {slow}, {len(twice)} of them more than once")


if __name__ == "__main__":
    main(*sys.argv[1:3])
