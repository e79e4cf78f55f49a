"""Issue 6, must-pass 1: both 4-path scenarios of seed 001 on the kernel, with a 200 KB
receive buffer and unbounded, N runs x D seconds each, the initial subflow stated, beside
the simulator's figures for the same scenarios.

    .venv/bin/python scripts/diagnostics/kernel_buffer_blocking.py [--runs 3] [--duration 60]

"Unbounded" on the kernel is receive autotuning up to the per-namespace tcp_rmem max
(6 MiB, docs/kernel.md); on the simulator, the default 6 MiB receive buffer. Kernel runs
differ by timing only (the scenario's seed fixes the emulator's loss draws, and these
scenarios have no loss); simulator runs use seeds 1..N.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

import mptcplab  # noqa: E402
from mptcplab import Scenario  # noqa: E402
from mptcplab.kernel import run_kernel  # noqa: E402


def unbounded(s: Scenario) -> Scenario:
    d = s.to_dict()
    for c in d["connections"]:
        c.pop("receive_buffer", None)
    return Scenario(d, s.source)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--duration", default="60 s")
    args = ap.parse_args()
    rows = []
    for name in ("rbpm-4path-a", "rbpm-4path-b"):
        base = Scenario.from_toml(REPO / "scenarios" / f"{name}.toml")
        for label, scn in (("200 KB", base), ("unbounded", unbounded(base))):
            kern, sim = [], []
            for i in range(args.runs):
                r = run_kernel(scn, duration=args.duration)
                kern.append(float(r.summary["goodput_mbps"].iloc[0]))
                init = r.meta["initial_paths"]["mptcp"]
                print(f"{name} {label} kernel run {i + 1}: {kern[-1]:.2f} Mbit/s "
                      f"(initial subflow on {init}; {r.meta['buffers']['mptcp']['mode']})", file=sys.stderr)
                s = mptcplab.simulate(scn, seed=i + 1, duration=args.duration)
                sim.append(float(s.summary["goodput_mbps"].iloc[0]))
            rows.append((name, label, init, kern, sim))
    print(f"\n{args.runs} runs x {args.duration} each; goodput in Mbit/s (mean ± stdev)")
    print(f"{'scenario':14s} {'buffer':10s} {'initial':8s} {'kernel':>16s} {'sim':>16s}  kernel runs")
    means = {}
    for name, label, init, kern, sim in rows:
        sd = lambda v: statistics.stdev(v) if len(v) > 1 else 0.0  # noqa: E731
        means[(name, label)] = statistics.fmean(kern)
        print(f"{name:14s} {label:10s} {init:8s} {statistics.fmean(kern):8.2f} ± {sd(kern):5.2f} "
              f"{statistics.fmean(sim):8.2f} ± {sd(sim):5.2f}  {', '.join(f'{x:.2f}' for x in kern)}")
    ok = True
    for name in ("rbpm-4path-a", "rbpm-4path-b"):
        ratio = means[(name, "200 KB")] / means[(name, "unbounded")]
        ok &= ratio <= 0.5
        print(f"{name}: kernel bounded/unbounded = {ratio:.2f} (must be <= 0.5: {'yes' if ratio <= 0.5 else 'NO'})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
