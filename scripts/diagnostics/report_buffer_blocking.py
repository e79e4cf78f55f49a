"""Acceptance 4 of issue 2 and its reported Linux-accounting variant, with 95 % CIs.

    .venv/bin/python scripts/diagnostics/report_buffer_blocking.py [--seeds 10]

Runs scenarios/rbpm-4path-a.toml under the default profile (Linux receive-buffer
accounting) and again with payload accounting, each with the initial subflow on path1
(5 Mbit/s) and path4 (1 Mbit/s), and receive buffers 200 KB and 8 MB.
"""
from __future__ import annotations

import argparse

from mptcplab import Scenario, simulate
from mptcplab.stats import mean_ci






def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    files = {"linux": "scenarios/rbpm-4path-a.toml", "payload": "scenarios/rbpm-4path-a.toml"}
    print(f"accounting  initial  buffer   goodput Mbit/s (mean ± 95 % CI over {args.seeds} seeds)")
    for acc, path in files.items():
        base = Scenario.from_toml(path).with_("tcp.receive_buffer_accounting", acc)
        for initial in ["path1", "path4"]:
            res = {}
            for buf in ["200 KB", "8 MB"]:
                sc = base.with_("connections[0].initial_path", initial).with_("connections[0].receive_buffer", buf)
                g = [float(simulate(sc, seed=s).summary["goodput_mbps"][0]) for s in range(1, args.seeds + 1)]
                res[buf] = g
                m, ci = mean_ci(g)
                print(f"{acc:10}  {initial:7}  {buf:7}  {m:6.3f} ± {ci:.3f}")
            ratios = [a / b for a, b in zip(res["200 KB"], res["8 MB"])]
            m, ci = mean_ci(ratios)
            verdict = "holds" if max(ratios) <= 0.5 and min(res["8 MB"]) >= 12.8 else "does not hold"
            print(f"{acc:10}  {initial:7}  ratio 200 KB / 8 MB = {m:.3f} ± {ci:.3f}  -> acceptance 4 {verdict}")


if __name__ == "__main__":
    main()
