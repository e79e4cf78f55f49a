#!/usr/bin/env python3
"""Run htsim's SIGCOMM 2011 datacenter main on the permutation experiment.

Raiciu et al., "Improving Datacenter Performance and Robustness with Multipath
TCP", SIGCOMM 2011: a permutation traffic matrix on a k=8 FatTree (128 hosts,
1 Gbit/s links), single-path TCP on a random path and MPTCP LIA with 1, 2, 4
and 8 subflows. See README.md beside this file for the htsim parameters.

    scripts/htsim-dc/build.sh /work/htsim/sim /work/htsim/dc
    scripts/htsim-dc/run.py --binary /work/htsim/dc/datacenter/htsim_tcp

Without htsim's per-queue sampling logger (build.sh's optional fourth edit;
same simulation, far less log, results in docs/performance/htsim-dc-nolog.*):

    scripts/htsim-dc/build.sh --no-queue-log /work/htsim/sim   # -> /work/htsim/dc-nolog
    scripts/htsim-dc/run.py --no-queue-log --seeds 1 --configs lia8

Each run is `nice -n 10 /usr/bin/time -f '%e %M' htsim_tcp ...`, one at a time.
The result of every run is written to the JSON as soon as it ends, so an
interrupted sweep keeps what it has; `--report-only` rewrites the Markdown
table from the JSON.

Metric: fraction of optimal = mean over the 128 connections of
    goodput_c / 1 Gbit/s,  goodput_c = sum over subflows s of
    (CAck_s(end) - CAck_s(skip)) * 8 / (end - skip)
where CAck is the subflow sink's cumulative ack in bytes, as written every
second by main_tcp's TcpSinkLoggerSampling. With 128 connections on 128 hosts
this equals total goodput / (128 x 1 Gbit/s). htsim counts the whole 1500-byte
packet as payload (no header bytes), so 1.0 is reachable.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOSTS = 128
LINK_BPS = 1e9
PKT_BYTES = 1500

# (label, algorithm words for htsim_tcp, subflows)
CONFIGS = [
    ("TCP (random path)", ["UNCOUPLED"], 1),
    ("MPTCP LIA", ["COUPLED_EPSILON", "1"], 1),
    ("MPTCP LIA", ["COUPLED_EPSILON", "1"], 2),
    ("MPTCP LIA", ["COUPLED_EPSILON", "1"], 4),
    ("MPTCP LIA", ["COUPLED_EPSILON", "1"], 8),
]
CONFIG_KEYS = ["tcp", "lia1", "lia2", "lia4", "lia8"]  # for --configs

# htsim Logfile record (logfile.cpp Logfile::writeRecord / transposeLog):
# double time_s, u32 type, u32 id, u32 ev, double val1, val2, val3.
RECORD = struct.Struct("<dIIIddd")
TCP_SINK = 11  # loggertypes.h Logger::EventType
SINK_NAME = re.compile(r"^: mtcp_sink_(\d+)_(\d+)_(\d+)\(\d+\)=(\d+)$")

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_JSON = ROOT / "docs/performance/htsim-dc.json"
DEFAULT_BINARY = Path("/work/htsim/dc/datacenter/htsim_tcp")
# build.sh --no-queue-log: no per-queue sampling logger
NOLOG_JSON = ROOT / "docs/performance/htsim-dc-nolog.json"
NOLOG_BINARY = Path("/work/htsim/dc-nolog/datacenter/htsim_tcp")
NOLOG_EDIT = ("datacenter/main_tcp.cpp: FatTreeTopology(..., &qlf, ...) -> (..., NULL, ...): "
              "no QueueLoggerSampling on any queue (no queue records); TcpSinkLoggerSampling unchanged")

PARAMETERS = {
    "topology": "FatTreeTopology k=8 (128 hosts, 3 tiers), datacenter/main_tcp.cpp:181",
    "link_rate_bps": 1e9,
    "hop_latency_us": 1,
    "switch_latency_us": 0,
    "switch_queue": (
        "RandomQueue, 8 packets (12000 B) on every switch port; above 5 packets "
        "(7500 B incl. the arriving packet) an arrival is dropped with p=0.1; "
        "above 12000 B it is dropped"
    ),
    "host_nic_queue": (
        "FairPriorityQueue, nominal 1000 packets but never drops (prints a "
        "warning only); ACKs and data share it by priority"
    ),
    "ack_path": "none: the reverse route is just the TcpSrc, so ACKs arrive instantly and are never queued or lost",
    "packet_bytes": 1500,
    "mss_bytes": 1500,
    "ack_bytes": 40,
    "initial_cwnd_pkts": 10,
    "initial_ssthresh_pkts": 100,
    "min_rto_ms": 250,
    "initial_rto_ms": 3000,
    "rto_timer_granularity_ms": 10,
    "delayed_acks": False,
    "sack": False,
    "loss_recovery": "NewReno-style fast retransmit on 3 dupacks, cumulative ACKs only",
    "mptcp_cc": "COUPLED_EPSILON with epsilon fixed at 1 by MultipathTcpSrc (= LIA); the command-line epsilon is parsed but not passed",
    "subflow_paths": (
        "each subflow picks rand() % npaths independently (with replacement, so two "
        "subflows may share a path); npaths is 16 between pods, 4 within a pod, 1 "
        "under one ToR; a connection gets min(sub, npaths) subflows"
    ),
    "single_path_tcp": "UNCOUPLED with -sub 1: one subflow on one uniformly random path",
    "traffic": "ConnectionMatrix::setPermutation(128): a random derangement, long-lived flows all starting at t=0",
    "rng": "glibc rand()/srand(seed), one stream for permutation, paths, RED-like drops and LIA rounding",
}


def parse_log(path: Path, skip_s: float, end_s: float) -> dict:
    """Per-connection goodput from an htsim logfile written by main_tcp."""
    with open(path, "rb") as f:
        data = f.read()
    marker = b"# TRACE\n"
    at = data.find(marker)
    if at < 0:
        raise RuntimeError(f"{path}: no '# TRACE' line; did htsim_tcp exit cleanly?")
    sinks = {}  # sink id -> (src, dst)
    for line in data[:at].decode().splitlines():
        m = SINK_NAME.match(line)
        if m:
            sinks[int(m.group(4))] = (int(m.group(1)), int(m.group(3)))
    cack = {}  # (sink id, sample time rounded to ms) -> bytes
    start = at + len(marker)
    body = memoryview(data)[start:]
    if len(body) % RECORD.size:
        raise RuntimeError(f"{path}: trace is not a whole number of records")
    for t, typ, rid, _ev, v1, _v2, _v3 in RECORD.iter_unpack(body):
        if typ == TCP_SINK:
            cack[(rid, round(t * 1000))] = v1
    t0, t1 = round(skip_s * 1000), round(end_s * 1000)
    conn_bytes: dict[tuple[int, int], float] = {}
    total_bytes = 0.0
    for sid, pair in sinks.items():
        try:
            a, b = cack[(sid, t0)], cack[(sid, t1)]
        except KeyError as e:
            raise RuntimeError(f"{path}: no sink sample for id {sid} at {e.args[0][1]} ms") from None
        conn_bytes[pair] = conn_bytes.get(pair, 0.0) + (b - a)
        total_bytes += cack.get((sid, t1), 0.0) - cack.get((sid, 0), 0.0)
    if len(conn_bytes) != HOSTS:
        raise RuntimeError(f"{path}: {len(conn_bytes)} connections, expected {HOSTS}")
    gput = [8 * v / (end_s - skip_s) for v in conn_bytes.values()]
    return {
        "fraction_of_optimal": statistics.fmean(gput) / LINK_BPS,
        "min_conn_fraction": min(gput) / LINK_BPS,
        "subflows_total": len(sinks),
        "delivered_packets": round(total_bytes / PKT_BYTES),
    }


def run_one(binary: Path, words: list[str], sub: int, seed: int, end_s: float,
            skip_s: float, workdir: Path) -> dict:
    log = workdir / f"log_{seed}_{sub}_{words[0]}.dat"
    timing = workdir / "time.txt"
    stdout = workdir / "stdout.txt"
    # End a hair after end_s: htsim drops events scheduled at or after the end
    # time (eventlist.cpp sourceIsPending), which would lose the sample at end_s.
    env = dict(os.environ, HTSIM_SEED=str(seed), HTSIM_END_S=f"{end_s + 0.001:.3f}")
    cmd = ["/usr/bin/time", "-o", str(timing), "-f", "%e %M",
           "nice", "-n", "10", str(binary), "-o", str(log),
           "-sub", str(sub), "-conns", str(HOSTS), "-nodes", str(HOSTS), *words]
    with open(stdout, "w") as out:
        proc = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}; see {stdout}")
    wall_s, rss_kib = timing.read_text().split()[-2:]
    text = stdout.read_text(errors="replace")
    result = {
        "seed": seed,
        **parse_log(log, skip_s, end_s),
        "wall_s": float(wall_s),
        "peak_rss_mib": round(int(rss_kib) / 1024, 1),
        "logfile_mib": round(log.stat().st_size / 2**20, 1),
        "rto_events": len(re.findall(r"^\.?At \d", text, re.M)),
    }
    log.unlink()
    return result


def summarize(values: list[float], fmt: str) -> str:
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


def write_markdown(doc: dict, path: Path) -> None:
    rows = []
    for c in doc["configs"]:
        runs = c["runs"]
        if not runs:
            continue
        rows.append(
            f"| {c['label']} | {c['subflows']} | {len(runs)} | "
            f"{summarize([r['fraction_of_optimal'] for r in runs], '.3f')} | "
            f"{summarize([r['wall_s'] for r in runs], '.0f')} | "
            f"{summarize([r['peak_rss_mib'] for r in runs], '.0f')} |"
        )
    m = doc["method"]
    nolog = ("" if doc["htsim"].get("queue_log", True) else
             "\n**Built with `build.sh --no-queue-log`**: no per-queue sampling logger on the\n"
             "queues (the fourth edit in the README), so the logfile holds only the sink\n"
             "samples; the simulation is otherwise the same binary as `htsim-dc.md`'s.\n")
    text = f"""# htsim: MPTCP in a k=8 FatTree (SIGCOMM 2011 permutation)

Written by `scripts/htsim-dc/run.py` from `{path.with_suffix(".json").name}`; the build, the edits to
htsim and the parameters are in `scripts/htsim-dc/README.md`.

htsim's own datacenter main (`datacenter/main_tcp.cpp`, csg-htsim {doc['htsim']['commit']})
with 1 Gbit/s links, a fixed seed and {m['sim_end_s']:g} s simulated; 128 long-lived
connections in a random permutation. Throughput is the mean over connections of
goodput / 1 Gbit/s from t = {m['skip_s']:g} s to t = {m['sim_end_s']:g} s (the first
{m['skip_s']:g} s skipped). Wall time and peak RSS are `/usr/bin/time -f '%e %M'` of
the whole htsim run, including htsim writing and transposing its logfile at exit.
Entries are median (min–max) over seeds.
{nolog}
| Configuration | Subflows | Seeds | Fraction of optimal | Wall (s) | Peak RSS (MiB) |
|---|---|---|---|---|---|
{chr(10).join(rows)}

Machine: {doc['machine']['cpu']}, {doc['machine']['cores']} cores, runs one at a time under
`nice -n 10`; {doc['machine']['note']}
""" + "".join(f"\n- {n}" for n in doc.get("notes", [])) + ("\n" if doc.get("notes") else "")
    path.write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-queue-log", action="store_true",
                    help=f"the build.sh --no-queue-log binary; defaults --binary to {NOLOG_BINARY} "
                         f"and --json to {NOLOG_JSON.relative_to(ROOT)}")
    ap.add_argument("--binary", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--configs", default=",".join(CONFIG_KEYS),
                    help="comma-separated subset of " + ",".join(CONFIG_KEYS))
    ap.add_argument("--end-s", type=float, default=10.0)
    ap.add_argument("--skip-s", type=float, default=1.0)
    ap.add_argument("--machine-note", default="")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    args.binary = args.binary or (NOLOG_BINARY if args.no_queue_log else DEFAULT_BINARY)
    args.json = args.json or (NOLOG_JSON if args.no_queue_log else DEFAULT_JSON)
    md = args.json.with_suffix(".md")
    wanted = args.configs.split(",")
    if not set(wanted) <= set(CONFIG_KEYS):
        sys.exit(f"run.py: --configs takes a subset of {','.join(CONFIG_KEYS)}")

    if args.report_only:
        write_markdown(json.loads(args.json.read_text()), md)
        return 0
    if not args.binary.is_file():
        sys.exit(f"run.py: {args.binary} not found; build it with scripts/htsim-dc/build.sh")
    if not Path("/usr/bin/time").is_file():
        sys.exit("run.py: /usr/bin/time not found (apt-get install time)")

    seeds = [int(s) for s in args.seeds.split(",")]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), platform.processor())
    doc = {
        "htsim": {
            "repo": "Broadcom/csg-htsim",
            "commit": "841d9e7",
            "main": "sim/datacenter/main_tcp.cpp (binary htsim_tcp)",
            "edits": [
                "datacenter/main.h: HOST_NIC 100000 -> 1000 (Mbps)",
                "datacenter/main_tcp.cpp: srand(time(NULL)) -> srand($HTSIM_SEED)",
                "datacenter/main_tcp.cpp: setEndtime(4 s) -> setEndtime($HTSIM_END_S s)",
            ] + ([NOLOG_EDIT] if args.no_queue_log else []),
            "queue_log": not args.no_queue_log,
            "command": "HTSIM_SEED=S HTSIM_END_S=END+0.001 htsim_tcp -o LOG -sub N "
                       "-conns 128 -nodes 128 {UNCOUPLED | COUPLED_EPSILON 1}",
        },
        "method": {
            "sim_end_s": args.end_s,
            "skip_s": args.skip_s,
            "fraction_of_optimal": (
                "mean over the 128 connections of goodput / 1 Gbit/s, goodput = sum over "
                "subflows of the sink cumulative-ack bytes gained from skip_s to sim_end_s, "
                "x 8 / (sim_end_s - skip_s); equals total goodput / (128 x 1 Gbit/s)"
            ),
            "delivered_packets": "sum over subflows of cumulative-ack bytes at sim_end_s / 1500",
            "rto_events": "retransmission timeouts htsim printed ('At ... RTO ...' lines)",
            "wall_s_and_peak_rss": "/usr/bin/time -f '%e %M' of the whole run, logfile writing and transposition included",
        },
        "parameters": PARAMETERS,
        "machine": {"cpu": cpu, "cores": os.cpu_count(), "note": args.machine_note},
        "configs": [
            {"label": label, "algorithm": " ".join(words), "subflows": sub, "runs": []}
            for label, words, sub in CONFIGS
        ],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="htsim-dc-") as tmp:
        for seed in seeds:
            for key, cfg, (label, words, sub) in zip(CONFIG_KEYS, doc["configs"], CONFIGS):
                if key not in wanted:
                    continue
                t = time.time()
                r = run_one(args.binary, words, sub, seed, args.end_s, args.skip_s, Path(tmp))
                cfg["runs"].append(r)
                args.json.write_text(json.dumps(doc, indent=1) + "\n")
                write_markdown(doc, md)
                print(f"{label} sub={sub} seed={seed}: {r['fraction_of_optimal']:.3f} "
                      f"wall {r['wall_s']:.0f}s rss {r['peak_rss_mib']:.0f}MiB "
                      f"({time.time() - t:.0f}s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
