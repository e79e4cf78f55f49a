"""Seed 000's SRL -> HU site pair, scaled so the kernel backend's forwarder can carry it
(Kvantel 200 Mbit/s instead of 1 Gbit/s, CERNET 40 Mbit/s instead of 100), on either backend.
usage: srl_variant.py kernel|sim BUFFER SEEDS   e.g. srl_variant.py kernel "10 MiB" 1,2
The kernel side runs the kernel's default scheduler and in-kernel PM (fullmesh endpoints),
the simulator the upstream profile as `mptcplab validate` runs it (sim_side)."""
import json, sys
import mptcplab
from mptcplab import Scenario
from mptcplab.kernel.validate import sim_side

backend, bs, seeds = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")]
raw = Scenario.from_toml("scenarios/sites/srl-hu.toml").to_dict()
raw["hosts"][0]["isps"][1].update(up="200 Mbit/s", down="200 Mbit/s", queue="2500 KB")
raw["hosts"][1]["isps"][0].update(up="40 Mbit/s", down="40 Mbit/s", queue="500 KB")
c = raw["connections"][0]
c.pop("scheduler", None)
c.update(send_buffer=bs, receive_buffer=bs, opportunistic_retransmission=False, penalisation=False)
scn = Scenario.from_dict(raw)
for seed in seeds:
    if backend == "kernel":
        from mptcplab.kernel.backend import run_kernel
        r = run_kernel(scn, seed=seed, duration=35, drain_s=3)
        drops = (r.meta.get("netstat") or {}).get("server", {}).get("MPTcpExt.NoDSSInWindow", 0)
    else:
        s2, _ = sim_side(scn)
        r = mptcplab.simulate(s2, seed=seed)
        drops = ((r.meta.get("receive_memory") or {}).get("mptcp") or {}).get("nodss_window")
    print(f"{backend} {bs} seed {seed}: goodput {float(r.summary['goodput_mbps'].iloc[0]):.2f} Mbit/s, NoDSSInWindow {drops}", flush=True)
