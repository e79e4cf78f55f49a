"""One plain kernel run of a validate point, as `mptcplab validate` makes it (no tracer),
saved as a result directory (docs/kernel.md, "The reader's lag, the ACK rules' cost at the
core row, and the delayed-ACK timer on the jiffy clock"):

  krun.py FAMILY LABEL CC SEED DURATION_S OUTDIR      (PCAP=1: with the backend's captures)
"""
import os
import sys

from mptcplab import Scenario
from mptcplab.kernel import validate as val
from mptcplab.kernel.backend import run_kernel

fam, label, cc, seed, dur, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
p = {x.label: x for x in val.FAMILIES[fam]}[label]
scn = val.point_scenario(Scenario.from_toml(val.SCENARIO_DIR / f"{p.scenario}.toml"), p, cc, dur)
r = run_kernel(scn, seed=seed, drain_s=val.DRAIN_S, pcap=(out + "/pcap") if os.environ.get("PCAP") else None)
r.save(out)
print(seed, list(r.summary["goodput_mbps"]))
