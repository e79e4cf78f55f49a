"""Seed 001's two topologies under the out_of_tree profile: the old behaviour, the new
base-kernel rules, and each rule switched off in turn (docs/out-of-tree-profile.md).

Usage: .venv/bin/python scripts/diagnostics/oot_rules_ablation.py [--duration 60] [--markdown]
Simulator only; rules come from source, never from the seed's figures (printed beside).
"""
from __future__ import annotations

import argparse
import sys

import mptcplab
from mptcplab import Scenario

BASELINE = {"rbpm-4path-a": 275_563, "rbpm-4path-b": 264_422}  # seed 001, plain MPTCP, B/s
# Initial path: the fast path and the slow path of each topology.
FIRST = {"rbpm-4path-a": [("fast", "path1"), ("slow", "path4")], "rbpm-4path-b": [("fast", "path2"), ("slow", "path1")]}
VARIANTS = [
    ("old (5.18 cwnd validation)", {"tcp.base_kernel": "4.x", "tcp.cwnd_validation": "linux_5_18"}),
    ("new 4.x", {"tcp.base_kernel": "4.x"}),
    ("new 3.14", {"tcp.base_kernel": "3.14"}),
    ("3.14 without GSO", {"tcp.base_kernel": "3.14", "tcp.gso": False}),
    ("3.14 with the 3.11 GSO bound", {"tcp.base_kernel": "3.14", "tcp.cwnd_validation": "linux_3_11"}),
    ("3.14 with 4.x cwnd validation", {"tcp.base_kernel": "3.14", "tcp.cwnd_validation": "linux_4"}),
    ("3.14 with per-packet Reno", {"tcp.base_kernel": "3.14", "connections[0].cc_options": {"growth": "per_packet"}}),
]
BUFFERS = [("200 KB (sk_rcvbuf 200 000)", "200 KB"), ("SO_RCVBUF 200 KB doubled (sk_rcvbuf 400 000)", "400 KB")]


def run(name: str, edits: dict, first: str, rcvbuf: str, duration: float) -> tuple[float, list[float]]:
    s = Scenario.from_toml(f"scenarios/{name}.toml").with_("connections[0].initial_path", first)
    s = s.with_("connections[0].receive_buffer", rcvbuf).with_("tcp.receive_buffer_accounting", "linux")
    for k, v in edits.items():
        s = s.with_(k, v)
    r = mptcplab.simulate(s, seed=1, duration=duration)
    summ = r.summary
    gp = float(summ["goodput_mbps"].iloc[0]) * 1e6 / 8
    sub = r.subflow_summary
    # Shares of the bytes each subflow got acked (path1..path4 in scenario order).
    tot = float(sub["bytes_acked"].sum()) or 1.0
    return gp, [float(x) / tot for x in sub.sort_values("path")["bytes_acked"]]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--buffers", default="0,1")
    a = ap.parse_args()
    bufs = [BUFFERS[int(i)] for i in a.buffers.split(",")]
    print("| buffer | topology | initial path | variant | goodput B/s | Mbit/s | x seed | shares % |")
    print("|---|---|---|---|---:|---:|---:|---|")
    for blabel, buf in bufs:
        for name in ("rbpm-4path-a", "rbpm-4path-b"):
            for which, first in FIRST[name]:
                for label, edits in VARIANTS:
                    gp, shares = run(name, edits, first, buf, a.duration)
                    sh = "/".join(f"{100 * x:.0f}" for x in shares)
                    print(f"| {blabel} | {name} | {which} ({first}) | {label} | {gp:,.0f} | {gp * 8 / 1e6:.2f} | {gp / BASELINE[name]:.2f} | {sh} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
