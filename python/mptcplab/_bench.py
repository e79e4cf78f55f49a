"""`mptcplab bench`: speed of the simulator on two fixed scenarios.

Each run is a fresh subprocess (`python -m mptcplab._bench SCENARIO`), so its peak RSS
comes from `os.wait4` for that child alone. The child calls `_core.simulate` directly and
never imports pandas: the figures are the core's. Figures are medians over runs.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _core
from .scenario import _DATA, Scenario, bench_names

# Targets of issue 2, acceptance 8.
TARGET_SEGMENTS_PER_S = 2e6
TARGET_IMPORT_PLUS_1S_RUN_S = 1.0
QUICK_DURATION = "10 s"


def _child(scenario_path: str, duration: str | None, pcap_dir: str | None = None) -> int:
    """Run one scenario; print one JSON line with the figures. `pcap_dir`: also write
    the packet captures there (the cost of `--pcap`)."""
    scenario = Scenario.from_toml(scenario_path)
    if duration:
        scenario = scenario.with_duration(duration)
    text = scenario.to_json()
    extra: dict[str, Any] = {}
    if pcap_dir:
        from .pcap import prepare_sim_captures

        extra["pcap_files"] = list(prepare_sim_captures(pcap_dir, text).values())
    raw = _core.simulate(text, None, None, None, None, **extra)
    meta = {k: (v[0] if isinstance(v, list) and len(v) == 1 else v) for k, v in dict(raw["meta"]).items()}
    goodput = sum(float(x) for x in raw["summary"].get("goodput_mbps", []))
    print(json.dumps({
        "wall_s": float(meta["wall_s"]),
        "duration_s": float(meta["duration_s"]),
        "data_segments_sent": int(meta["data_segments_sent"]),
        "acks_sent": int(meta["acks_sent"]),
        "events": int(meta.get("events", 0)),
        "goodput_mbps": goodput,
    }))
    return 0


def _spawn(argv: list[str]) -> tuple[str, float, float]:
    """Run a child; return (stdout, wall seconds, peak RSS MiB of that child alone)."""
    with tempfile.TemporaryFile(mode="w+") as errfile:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errfile, text=True)
        out = proc.stdout.read()  # type: ignore[union-attr]
        # wait4, not proc.wait(): it returns the rusage of this child alone
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()  # type: ignore[union-attr]
        errfile.seek(0)
        err = errfile.read()
    if proc.returncode != 0:
        last = err.strip().splitlines()[-1] if err.strip() else f"exit code {proc.returncode}"
        raise RuntimeError(f"bench child failed: {' '.join(argv[1:])}: {last}")
    return out, wall, usage.ru_maxrss / 1024.0  # Linux: ru_maxrss in KiB


def measure(runs: int, quick: bool, pcap: bool = False,
            progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The figures of `runs` fresh processes per scenario. `progress(done, total)` after
    each run, when given (the CLI's bar); otherwise a line a run on stderr."""
    duration = QUICK_DURATION if quick else None
    report: dict[str, Any] = {
        "version": _core.version(),
        "model": _core.model(),
        "runs": runs,
        "quick": quick,
        "pcap": pcap,
        "cpus": os.cpu_count(),
        "scenarios": {},
    }
    names = bench_names()
    total, done = len(names) * runs + 3 * runs, 0
    for name in names:
        path = str(_DATA / "bench" / f"{name}.toml")
        samples = []
        for i in range(runs):
            argv = [sys.executable, "-m", "mptcplab._bench", path, duration or ""]
            with tempfile.TemporaryDirectory(prefix="mptcplab-bench-pcap-") as tmp:
                out, _, rss = _spawn(argv + ([tmp] if pcap else []))
            fig = json.loads(out.strip().splitlines()[-1])
            fig["peak_rss_mib"] = rss
            samples.append(fig)
            done += 1
            if progress is not None:
                progress(done, total)
            else:
                print(f"  {name}: run {i + 1}/{runs}: {fig['wall_s']:.2f} s wall", file=sys.stderr)
        med = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
        med["segments_per_wall_s"] = statistics.median(s["data_segments_sent"] / s["wall_s"] for s in samples)
        med["sim_s_per_wall_s"] = statistics.median(s["duration_s"] / s["wall_s"] for s in samples)
        report["scenarios"][name] = med
    timed: dict[str, list[float]] = {}
    for key, argv in (
        ("import", [sys.executable, "-c", "import mptcplab"]),
        ("one_s", [sys.executable, "-c", "import mptcplab; mptcplab.simulate(mptcplab.Scenario.default(), duration=1)"]),
        ("cli", [sys.executable, "-m", "mptcplab", "run", "--duration", "1", "--no-progress"]),
    ):
        timed[key] = []
        for _ in range(runs):
            timed[key].append(_spawn(argv)[1])
            done += 1
            if progress is not None:
                progress(done, total)
    imports, one_s, cli = timed["import"], timed["one_s"], timed["cli"]
    report["import_s"] = statistics.median(imports)
    report["import_plus_1s_default_run_s"] = statistics.median(one_s)
    report["cli_run_1s_default_s"] = statistics.median(cli)
    return report


def format_report(r: dict[str, Any]) -> str:
    from .tables import render_table

    rows = []
    for name, m in r["scenarios"].items():
        rows.append([
            name,
            f"{m['duration_s']:.0f}",
            f"{m['wall_s']:.2f}",
            f"{m['segments_per_wall_s'] / 1e6:.2f}",
            f"{m['sim_s_per_wall_s']:.1f}",
            f"{m['goodput_mbps']:.1f}",
            f"{m['data_segments_sent']:.0f}",
            f"{m['acks_sent']:.0f}",
            f"{m['peak_rss_mib']:.1f}",
        ])
    table = render_table(
        ["scenario", "sim s", "wall s", "M data seg/wall s", "sim s/wall s", "goodput Mbit/s",
         "data segments", "ACKs sent", "peak RSS MiB"],
        rows, right=set(range(1, 9)),
    )
    seg_ok = all(m["segments_per_wall_s"] >= TARGET_SEGMENTS_PER_S for m in r["scenarios"].values())
    t_ok = max(r["import_plus_1s_default_run_s"], r["cli_run_1s_default_s"]) < TARGET_IMPORT_PLUS_1S_RUN_S
    return "\n".join([
        f"mptcplab {r['version']} bench · median of {r['runs']} runs, each a fresh process · "
        f"{r['cpus']} CPUs{' · quick (10 s simulated)' if r['quick'] else ''}"
        f"{' · with --pcap (captures written)' if r.get('pcap') else ''}",
        "",
        table,
        "",
        f"python -c 'import mptcplab':                    {r['import_s']:.3f} s",
        f"import + 1 s of the default scenario (1 process): {r['import_plus_1s_default_run_s']:.3f} s",
        f"mptcplab run --duration 1 (CLI, whole process):   {r['cli_run_1s_default_s']:.3f} s",
        "",
        f"target >= {TARGET_SEGMENTS_PER_S / 1e6:.0f} M data segments per wall second on every scenario: "
        f"{'met' if seg_ok else 'NOT met'}",
        f"target import + 1 s run < {TARGET_IMPORT_PLUS_1S_RUN_S:.0f} s: {'met' if t_ok else 'NOT met'}",
    ])


def run_bench(runs: int | None, quick: bool, json_out: str | None, pcap: bool = False,
              progress: Callable[[int, int], None] | None = None) -> int:
    n = runs if runs is not None else (3 if quick else 5)
    if n < 1:
        from .errors import ScenarioError

        raise ScenarioError("--runs", f"must be at least 1, got {n}")
    report = measure(n, quick, pcap, progress)
    print(format_report(report))
    if json_out:
        Path(json_out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    # python -m mptcplab._bench SCENARIO [DURATION|""] [PCAP_DIR]
    raise SystemExit(_child(sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "") or None,
                            sys.argv[3] if len(sys.argv) > 3 else None))
