"""How soon the receiver ACKs a data segment, on either backend, and how the sender marks
PSH. Written for docs/kernel.md, "What moves the kernel's window edge, and when it ACKs"
(2026-11-27, issue 12).

  ackdelay.py kernel BT_TXT     a trace6.bt run (run.py with TRACE=trace6.bt): per subflow,
                                short (< 1 424 B) and full segments, the share ACKed within
                                1 ms of arriving and the median delay to the next ACK
  ackdelay.py sim TRACE_CSV     the same from a simulator run's `--trace` CSV (recv, ack_sent)
  ackdelay.py psh PCAP_DIR      per path, data segments, the share carrying PSH, and the
                                bytes between PSH marks (either backend's `--pcap`)

The kernel's records are written per CPU, so they are sorted by time first.
"""
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def kernel_events(path):
    """(t_ns, subflow, kind, len) from trace6.bt's R and K records, in time order."""
    ev = []
    for line in open(path):
        f = line.split()
        if f and f[0] in ("R", "K"):
            ev.append((int(f[1]), f[2], "recv" if f[0] == "R" else "ack", int(f[3]) if f[0] == "R" else 0))
    return sorted(ev)


def sim_events(path):
    import csv
    ev = []
    for r in csv.DictReader(open(path)):
        if r["event"] in ("recv", "ack_sent"):
            ev.append((round(float(r["time_s"]) * 1e9), r["subflow"], "recv" if r["event"] == "recv" else "ack", int(r["len"])))
    return ev


def delays(ev, full=1424):
    """Per (subflow, short|full): delays (ms) from the first unacknowledged arrival to the ACK."""
    pending, out = {}, defaultdict(list)
    for t, sub, kind, ln in ev:
        if kind == "recv":
            pending.setdefault(sub, (t, ln))
        elif sub in pending:
            ta, ln0 = pending.pop(sub)
            out[(sub, "short" if ln0 < full else "full")].append((t - ta) / 1e6)
    return out


def report(out):
    for (sub, size), v in sorted(out.items()):
        v.sort()
        fast = sum(1 for x in v if x < 1.0)
        print(f"  {sub:>10} {size:5} {len(v):5} segments: ACKed within 1 ms {fast} ({100 * fast / len(v):.0f} %), "
              f"median {v[len(v) // 2]:.2f} ms, p90 {v[9 * len(v) // 10]:.1f} ms")


def psh(d):
    for f in sorted(Path(d).glob("*.pcap")):
        out = subprocess.run(["tshark", "-r", str(f), "-Y", "tcp.len > 0 && tcp.srcport != 5001", "-T", "fields",
                              "-e", "tcp.len", "-e", "tcp.flags.push"], capture_output=True, text=True, check=True).stdout
        segs, marked, runs, cur = 0, 0, [], 0
        for line in out.splitlines():
            ln, p = line.split("\t")
            segs += 1
            cur += int(ln)
            if p in ("1", "True"):
                marked += 1
                runs.append(cur)
                cur = 0
        runs.sort()
        mid = runs[len(runs) // 2] if runs else 0
        print(f"  {f.stem}: {segs} data segments, PSH on {marked} ({100 * marked / max(segs, 1):.0f} %), "
              f"median bytes between PSH marks {mid}")


def main(argv):
    mode, arg = argv[1], argv[2]
    if mode == "kernel":
        report(delays(kernel_events(arg)))
    elif mode == "sim":
        report(delays(sim_events(arg)))
    elif mode == "psh":
        psh(arg)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
