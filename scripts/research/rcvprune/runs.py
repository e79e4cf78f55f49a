"""Runs of one bounded-buffer row for `captures.py` (docs/kernel.md, "PSH on every GSO
packet", 2026-11-29):

  runs.py kernel ROW CC SEED0 N DURATION_S OUT [--pcap]   as validate makes them
                                                          (run_kernel, DRAIN_S), root;
                                                          one line of figures per run in
                                                          OUT/runs.jsonl, captures in
                                                          OUT/k<seed>/pcap with --pcap
  runs.py sim ROW CC N DURATION_S OUT                     validate's simulator side (its
                                                          jitter), captures in OUT/s<seed>

ROW is a bounded-buffer label (topology1/fast/rcv100KB). PYTHONPATH=altpy for a variant."""
import json
import sys
import time
from pathlib import Path

from mptcplab import Scenario, simulate
from mptcplab.kernel import validate as val


def row(label, cc, dur):
    p = {x.label: x for x in val.FAMILIES["bounded-buffer"]}[label]
    return p, val.point_scenario(Scenario.from_toml(val.SCENARIO_DIR / f"{p.scenario}.toml"), p, cc, dur)


def kernel(label, cc, s0, n, dur, out, pcap):
    from mptcplab.kernel.backend import run_kernel

    p, scn = row(label, cc, dur)
    out.mkdir(parents=True, exist_ok=True)
    for seed in range(s0, s0 + n):
        cap = out / f"k{seed}" / "pcap" if pcap else None
        fig = val.run_figures(run_kernel(scn, seed=seed, drain_s=val.DRAIN_S, pcap=cap), p.bin_s, dur)
        with open(out / "runs.jsonl", "a") as fh:
            fh.write(json.dumps({"seed": seed, "finished": time.strftime("%H:%M:%S"), "pcap": pcap,
                                 "goodput_mbps": fig["goodput_mbps"], "netstat": fig.get("netstat")}) + "\n")


def sim(label, cc, n, dur, out):
    p, scn = row(label, cc, dur)
    scn, _ = val.sim_side(scn, "upstream")
    for seed in range(1, n + 1):
        d = out / f"s{seed}"
        d.mkdir(parents=True, exist_ok=True)
        simulate(scn, seed=seed, pcap=str(d))


if __name__ == "__main__":
    a = sys.argv
    if len(a) >= 9 and a[1] == "kernel":
        kernel(a[2], a[3], int(a[4]), int(a[5]), float(a[6]), Path(a[7]), "--pcap" in a[8:])
    elif len(a) >= 8 and a[1] == "kernel":
        kernel(a[2], a[3], int(a[4]), int(a[5]), float(a[6]), Path(a[7]), False)
    elif len(a) == 7 and a[1] == "sim":
        sim(a[2], a[3], int(a[4]), float(a[5]), Path(a[6]))
    else:
        sys.exit(__doc__)
