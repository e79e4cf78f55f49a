"""Issue 12, item 2: goodput under `run.profile = "upstream"` against the value of a locked
send buffer, in seed 001's two topologies with each initial path (in-kernel PM at limits
8/8, reno, a 251 KB receive buffer = SO_RCVBUF 204 800 on the kernel). Simulator only.

    .venv/bin/python scripts/diagnostics/upstream_send_buffer.py [--duration "60 s"] [--seed 1]

`auto` leaves `send_buffer` out (auto-tuned); the others set it, i.e. SO_SNDBUF(FORCE) on
the kernel, which doubles it (docs/upstream-profile.md, "Send buffers").
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

import mptcplab  # noqa: E402
from mptcplab import Scenario  # noqa: E402

CASES = (("rbpm-4path-a", "path1", "5 Mbit/s"), ("rbpm-4path-a", "path4", "1 Mbit/s"),
         ("rbpm-4path-b", "path1", "1 Mbit/s"), ("rbpm-4path-b", "path2", "8 Mbit/s"))
SIZES = (None, "100 KB", "200 KB", "204800 B", "251 KB", "4 MiB")


def upstream_variant(name: str, initial: str, send_buffer: str | None) -> Scenario:
    base = Scenario.from_toml(REPO / "scenarios" / f"{name}.toml")
    d = base.to_dict()
    d["run"]["profile"] = "upstream"
    c = d["connections"][0]
    for k in ("scheduler", "opportunistic_retransmission", "penalisation"):
        c.pop(k, None)
    c["path_manager"] = "in_kernel"
    c["path_manager_options"] = {"subflows_limit": 8, "add_addr_accepted": 8}
    c["receive_buffer"] = "251 KB"
    c["initial_path"] = initial
    if send_buffer is not None:
        c["send_buffer"] = send_buffer
    return Scenario(d, base.source)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default="60 s")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"goodput in Mbit/s, {args.duration}, seed {args.seed}")
    print("| topology, first subflow | " + " | ".join(s or "auto" for s in SIZES) + " |")
    print("|---" * (len(SIZES) + 1) + "|")
    for name, initial, rate in CASES:
        row = [mptcplab.simulate(upstream_variant(name, initial, s), seed=args.seed, duration=args.duration)
               .summary["goodput_mbps"].iloc[0] for s in SIZES]
        print(f"| {name[-1].upper()}, {rate} path | " + " | ".join(f"{g:.2f}" for g in row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
