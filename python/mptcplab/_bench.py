"""`mptcplab bench`: the simulator's speed, in two suites.

- "model" (the default): the fixed scenarios of data/bench/*.toml, plus the import and
  start-up costs, against the targets of issue 2.
- "htsim": side by side with htsim (bench/htsim in the shared kit; docs/performance.md):
  S1 (one Reno flow), S2 (one LIA MPTCP connection over two paths) and S3 (N Reno flows
  or N two-path LIA connections, N = 1, 10, 100, 1000), each with its `htsim_bench`
  command. With `--htsim PATH` the two simulators run paired, A B A B ...

Each run is a fresh child process, timed whole by the parent; its peak RSS comes from
`os.wait4` for that child alone. The mptcplab child is `python -m mptcplab._bench
SCENARIO [DURATION] [PCAP_DIR]`: it reads the TOML with tomllib and hands the core the
same JSON text `mptcplab.simulate` would, and imports nothing else of the package (no
Scenario, no pandas), since its whole-process time is what is compared. For the same
reason this module's top level imports only what the child uses; the parent's modules
(subprocess, statistics, tempfile, pathlib, the package's own) load inside its functions.
Figures are medians over runs.
"""
from __future__ import annotations

import functools
import json
import os
import sys
import tomllib
from collections.abc import Callable
from typing import Any

from . import _core

# Targets of issue 2, acceptance 8.
TARGET_SEGMENTS_PER_S = 2e6
TARGET_IMPORT_PLUS_1S_RUN_S = 1.0
QUICK_DURATION = "10 s"

SUITES = ("model", "htsim")
S3_FLOWS = (1, 10, 100, 1000)
S3_DURATION = "20"  # gen_scale.py's third argument (seconds) in the kit's S3 command
_HERE = os.path.dirname(os.path.abspath(__file__))
_HTSIM_DATA = os.path.join(_HERE, "data", "bench", "htsim")
# S1 and S2: the kit's files (copied, with a header) and the htsim_bench arguments before
# the duration: tcp|mptcp N rate_mbps rtt1_ms rtt2_ms queue_pkts.
_HTSIM_FILES = {
    "s1": ("s1-reno-100M.toml", ["tcp", "1", "100", "40", "40", "100"]),
    "s2": ("s2-lia-2x200M.toml", ["mptcp", "1", "200", "20", "40", "250"]),
}
_MODEL_KEYS = ("wall_s", "duration_s", "data_segments_sent", "acks_sent", "events", "goodput_mbps")


# -- the child -------------------------------------------------------------------------------
def core_input(scenario_path: str, duration: str | None) -> str:
    """The JSON text the core gets for a scenario file, as `Scenario.from_toml(path)
    .with_duration(duration).to_json()` makes it. `duration` is the text
    `Scenario.with_duration` writes (the parent normalises it with `_duration_text`):
    set as `run.duration`, the `run` table created at the end when missing, as `with_` does."""
    with open(scenario_path, "rb") as f:
        data = tomllib.load(f)
    if duration:
        data.setdefault("run", {})["duration"] = duration
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _child(scenario_path: str, duration: str | None, pcap_dir: str | None = None) -> int:
    """Run one scenario; print one JSON line with the core's figures. `pcap_dir`: also
    write the packet captures there (the cost of `--pcap`)."""
    text = core_input(scenario_path, duration)
    extra: dict[str, Any] = {}
    if pcap_dir:
        from .pcap import prepare_sim_captures

        extra["pcap_files"] = list(prepare_sim_captures(pcap_dir, text).values())
    raw = _core.simulate(text, None, None, None, None, **extra)
    meta = {k: (v[0] if isinstance(v, list) and len(v) == 1 else v) for k, v in dict(raw["meta"]).items()}
    summary = raw["summary"]
    print(json.dumps({
        "wall_s": float(meta["wall_s"]),
        "duration_s": float(meta["duration_s"]),
        "data_segments_sent": int(meta["data_segments_sent"]),
        "acks_sent": int(meta["acks_sent"]),
        "events": int(meta.get("events", 0)),
        "goodput_mbps": sum(float(x) for x in summary.get("goodput_mbps", [])),
        # payload delivered to the applications, every flow and connection (data level)
        "bytes_delivered": sum(int(x) for x in summary.get("bytes_delivered", [])),
    }))
    return 0


# -- running children ------------------------------------------------------------------------
def _spawn(argv: list[str], rss: bool = True) -> tuple[str, float, float | None]:
    """Run a child; return (stdout, wall seconds, peak RSS MiB of that child alone, or None
    without `rss`). The wall is the parent's, from spawn to reaping."""
    import subprocess
    import tempfile
    import time

    timer = _gnu_time() if rss else None
    with tempfile.TemporaryDirectory(prefix="mptcplab-bench-run-") as tmp:
        rss_file = os.path.join(tmp, "maxrss")
        full = [timer, "-f", "%M", "-o", rss_file, *argv] if timer else argv
        with open(os.path.join(tmp, "stderr"), "w+", encoding="utf-8") as errfile:
            start = time.perf_counter()
            proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=errfile, text=True)
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
            what = " ".join(argv[1:]) if argv[0] == sys.executable else " ".join(argv)
            raise RuntimeError(f"bench child failed: {what}: {last}")
        if not rss:
            return out, wall, None
        if timer:
            with open(rss_file, encoding="utf-8") as f:
                kib = float(f.read().split()[-1])
        else:
            kib = float(usage.ru_maxrss)  # Linux: KiB
    return out, wall, kib / 1024.0


@functools.cache
def _gnu_time() -> str | None:
    """GNU time's path, when it is installed and works; else None.

    Why: on Linux a child's ru_maxrss (what wait4 gives) is at least the peak RSS of the
    memory it ran in before exec, and a spawned child runs in a copy of the parent (or in
    the parent's own memory, vfork): a 4 MiB htsim run read as the 35 MiB of the Python
    process that started it. GNU time forks the child from its own ~1 MiB, so its %M is
    the child's peak. It costs ~1.5 ms of wall per run, the same on both sides."""
    import shutil
    import subprocess
    import tempfile

    timer, true = shutil.which("time"), shutil.which("true")
    if not timer or not true:
        return None
    with tempfile.TemporaryDirectory(prefix="mptcplab-bench-") as tmp:
        probe = os.path.join(tmp, "maxrss")
        done = subprocess.run([timer, "-f", "%M", "-o", probe, true], capture_output=True)
        if done.returncode != 0 or not os.path.exists(probe):
            return None  # not GNU time (BSD time has no -f)
        with open(probe, encoding="utf-8") as f:
            return timer if f.read().strip().isdigit() else None


def rss_method() -> str:
    if _gnu_time():
        return "GNU time %M: the child's own peak RSS"
    return ("wait4 ru_maxrss: at least the bench process's own peak RSS (Linux counts the memory a "
            "child had before exec); install GNU time for the child's own")


def _median(values: list[Any]) -> Any:
    """The median of the numbers among `values` (None: not defined for that run), or None."""
    import statistics

    nums = [v for v in values if v is not None]
    return statistics.median(nums) if nums else None


# -- suite "model" ---------------------------------------------------------------------------
def measure(runs: int, quick: bool, pcap: bool = False,
            progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The figures of `runs` fresh processes per scenario. `progress(done, total)` after
    each run, when given (the CLI's bar); otherwise a line a run on stderr."""
    import tempfile

    from .scenario import _DATA, bench_names

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
            line = json.loads(out.strip().splitlines()[-1])
            fig = {k: line[k] for k in _MODEL_KEYS}
            fig["peak_rss_mib"] = rss
            samples.append(fig)
            done += 1
            if progress is not None:
                progress(done, total)
            else:
                print(f"  {name}: run {i + 1}/{runs}: {fig['wall_s']:.2f} s wall", file=sys.stderr)
        med = {k: _median([s[k] for s in samples]) for k in samples[0]}
        med["segments_per_wall_s"] = _median([s["data_segments_sent"] / s["wall_s"] for s in samples])
        med["sim_s_per_wall_s"] = _median([s["duration_s"] / s["wall_s"] for s in samples])
        report["scenarios"][name] = med
    timed: dict[str, list[float]] = {}
    for key, argv in (
        ("import", [sys.executable, "-c", "import mptcplab"]),
        ("one_s", [sys.executable, "-c", "import mptcplab; mptcplab.simulate(mptcplab.Scenario.default(), duration=1)"]),
        ("cli", [sys.executable, "-m", "mptcplab", "run", "--duration", "1", "--no-progress"]),
    ):
        timed[key] = []
        for _ in range(runs):
            timed[key].append(_spawn(argv, rss=False)[1])
            done += 1
            if progress is not None:
                progress(done, total)
    imports, one_s, cli = timed["import"], timed["one_s"], timed["cli"]
    report["import_s"] = _median(imports)
    report["import_plus_1s_default_run_s"] = _median(one_s)
    report["cli_run_1s_default_s"] = _median(cli)
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


# -- suite "htsim" ---------------------------------------------------------------------------
def htsim_suite_names() -> list[str]:
    return ["s1", "s2", *(f"s3-{mode}-{n}" for mode in ("tcp", "mptcp") for n in S3_FLOWS)]


def scale_toml(mode: str, n: int, duration: str = S3_DURATION) -> str:
    """S3's scenario: exactly what the kit's `gen_scale.py MODE N DURATION` prints (the
    reference; tests compare the two). N Reno flows ("tcp") or N two-path LIA connections
    ("mptcp") on two bottlenecks of 10 N Mbit/s, 20 ms each way, queues of max(100, 10 N)
    packets; flow i starts at i us. Its htsim twin: `htsim_bench MODE N 10 40 40
    max(100,10N) DURATION`."""
    rate = 10 * n
    q = max(100, 10 * n)
    out = [f'name = "scale-{mode}-{n}"', "[run]", f'duration = "{duration} s"', 'sample_interval = "1 s"']
    out += ["[[links]]", 'name = "a"', f'rate = "{rate} Mbit/s"', 'delay = "20 ms"', f'queue = "{q} pkt"']
    out += ["[[links]]", 'name = "b"', f'rate = "{rate} Mbit/s"', 'delay = "20 ms"', f'queue = "{q} pkt"']
    out += ["[[paths]]", 'name = "pa"', 'links = ["a"]', "[[paths]]", 'name = "pb"', 'links = ["b"]']
    for i in range(n):
        if mode == "tcp":
            out += ["[[flows]]", f'name = "f{i}"', 'path = "pa"', 'cc = "reno"', f'start = "{i} us"',
                    'app = { kind = "bulk" }']
        else:
            out += ["[[connections]]", f'name = "m{i}"', 'paths = ["pa", "pb"]', 'cc = "lia"', f'start = "{i} us"',
                    'receive_buffer = "16 MiB"', 'send_buffer = "16 MiB"', 'app = { kind = "bulk" }']
    return "\n".join(out) + "\n"  # print()'s newline


def _htsim_entry(name: str) -> tuple[str | None, str, str, list[str]]:
    """(package file or None, TOML text, where it comes from, htsim_bench's arguments
    before the duration) of a scenario of the htsim suite."""
    if name in _HTSIM_FILES:
        file, args = _HTSIM_FILES[name]
        path = os.path.join(_HTSIM_DATA, file)
        with open(path, encoding="utf-8") as f:
            return path, f.read(), f"mptcplab/data/bench/htsim/{file}", list(args)
    _, mode, n_text = name.split("-")
    n = int(n_text)
    return (None, scale_toml(mode, n), f"gen_scale.py {mode} {n} {S3_DURATION} (mptcplab._bench.scale_toml)",
            [mode, str(n), "10", "40", "40", str(max(100, 10 * n))])


def _checked(toml_text: str, duration: str | None) -> tuple[float, int]:
    """(simulated seconds, MSS in bytes) of a scenario after the core's validation: the
    defaults and the profile's settings filled in, so the MSS is the one the run uses."""
    from .errors import ScenarioError
    from .kernel.plan import seconds, size_bytes
    from .scenario import Scenario

    scn = Scenario.from_toml(toml_text)
    try:
        if duration:
            scn = scn.with_duration(duration)
        checked = scn.validate().to_dict()
    except ScenarioError as err:
        if err.field == "run.duration":
            raise ScenarioError("--duration", err.message) from None
        raise
    return seconds(checked["run"]["duration"]), size_bytes(checked["tcp"]["mss"])


def _htsim_path(htsim: str) -> str:
    import shutil

    from .errors import ScenarioError

    path = htsim if os.sep in htsim or os.path.exists(htsim) else (shutil.which(htsim) or htsim)
    if not os.path.exists(path):
        raise ScenarioError("--htsim", f"no such file '{htsim}'; give the path of a built htsim_bench "
                            "(bench/htsim/README.md says how to build it)")
    if not os.path.isfile(path):
        raise ScenarioError("--htsim", f"'{htsim}' is not a file; give the path of the htsim_bench program")
    if not os.access(path, os.X_OK):
        raise ScenarioError("--htsim", f"'{htsim}' is not executable (chmod +x it)")
    return os.path.abspath(path)


def _ours(out: str, mss: int) -> dict[str, Any]:
    """The mptcplab child's figures (its JSON line)."""
    line = json.loads(out.strip().splitlines()[-1])
    return {"core_wall_s": line["wall_s"], "duration_s": line["duration_s"], "events": line["events"],
            "bytes_delivered": line["bytes_delivered"],
            # delivered payload in MSS-sized packets, as htsim counts its (1500 B) packets
            "data_pkts": line["bytes_delivered"] // mss,
            "data_segments_sent": line["data_segments_sent"], "acks_sent": line["acks_sent"],
            "goodput_mbps": line["goodput_mbps"]}


def _theirs(out: str, argv: list[str], sim_s: float) -> dict[str, Any]:
    """htsim_bench's last `events E data_pkts P goodput_mbps G` line (it prints others too)."""
    for line in reversed(out.splitlines()):
        words = line.split()
        if len(words) == 6 and words[0::2] == ["events", "data_pkts", "goodput_mbps"]:
            return {"duration_s": sim_s, "events": int(words[1]), "data_pkts": int(words[3]),
                    "goodput_mbps": float(words[5])}
    raise RuntimeError(f"{' '.join(argv)} printed no 'events E data_pkts P goodput_mbps G' line")


def _per_packet(fig: dict[str, Any]) -> None:
    """Add the per-packet figures: packets per wall second, events and wall ns per packet."""
    pkts = fig["data_pkts"]
    fig["pkts_per_wall_s"] = pkts / fig["wall_s"]
    fig["events_per_pkt"] = fig["events"] / pkts if pkts else None
    fig["ns_per_pkt"] = fig["wall_s"] * 1e9 / pkts if pkts else None


def _spread(values: list[float | None]) -> dict[str, Any]:
    nums = [v for v in values if v is not None]
    return {"samples": values, "median": _median(nums),
            "min": min(nums) if nums else None, "max": max(nums) if nums else None}


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def measure_htsim(names: list[str], runs: int, duration: str | None, htsim: str | None,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The htsim suite: `runs` fresh mptcplab processes per scenario and, with `htsim`
    (the path of htsim_bench), as many htsim ones, paired: mptcplab, htsim, mptcplab, ...
    `duration`: the text `Scenario.with_duration` writes, for both simulators."""
    import tempfile

    report: dict[str, Any] = {
        "suite": "htsim",
        "version": _core.version(),
        "model": _core.model(),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "runs": runs,
        "duration": duration,
        "htsim": htsim,
        "paired": htsim is not None,
        "rss_method": rss_method(),
        "scenarios": {},
    }
    total, done, seq = len(names) * runs * (2 if htsim else 1), 0, 0
    with tempfile.TemporaryDirectory(prefix="mptcplab-bench-") as tmp:
        plans = []
        for name in names:  # every scenario checked before the first run
            path, text, source, args = _htsim_entry(name)
            if path is None:
                path = os.path.join(tmp, f"{name}.toml")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            sim_s, mss = _checked(text, duration)
            plans.append((name, path, source, args, sim_s, mss))
        for name, path, source, args, sim_s, mss in plans:
            sides = {"mptcplab": [sys.executable, "-m", "mptcplab._bench", path, duration or ""]}
            if htsim:
                sides["htsim"] = [htsim, *args, format(sim_s, ".15g")]
            entry: dict[str, Any] = {"source": source, "duration_s": sim_s, "mss_bytes": mss,
                                     **{side: {"command": argv, "samples": []} for side, argv in sides.items()}}
            for i in range(runs):
                walls = []
                for side, argv in sides.items():  # paired: mptcplab, then htsim, run after run
                    out, wall, rss = _spawn(argv)
                    fig = {"seq": seq, "wall_s": wall}
                    fig.update(_ours(out, mss) if side == "mptcplab" else _theirs(out, argv, sim_s))
                    fig["peak_rss_mib"] = rss
                    _per_packet(fig)
                    entry[side]["samples"].append(fig)
                    walls.append(f"{side} {wall:.2f} s")
                    seq += 1
                    done += 1
                    if progress is not None:
                        progress(done, total)
                if progress is None:
                    print(f"  {name}: run {i + 1}/{runs}: {', '.join(walls)} wall", file=sys.stderr)
            for side in sides:
                samples = entry[side]["samples"]
                entry[side]["median"] = {k: _median([s[k] for s in samples]) for k in samples[0] if k != "seq"}
            if htsim:
                pairs = list(zip(entry["mptcplab"]["samples"], entry["htsim"]["samples"]))
                # mptcplab / htsim, pair by pair (pair i: the i-th run of each, back to back)
                entry["ratio"] = {
                    "pkts_per_wall_s": _spread([_ratio(m["pkts_per_wall_s"], h["pkts_per_wall_s"]) for m, h in pairs]),
                    "peak_rss": _spread([_ratio(m["peak_rss_mib"], h["peak_rss_mib"]) for m, h in pairs]),
                }
            report["scenarios"][name] = entry
    return report


def _fmt(value: Any, spec: str, scale: float = 1.0) -> str:
    return "-" if value is None else format(value / scale, spec)


def format_htsim_report(r: dict[str, Any]) -> str:
    from .tables import render_table

    paired = bool(r.get("paired"))
    headers = ["scenario", "side", "sim s", "wall s", "core s", "data pkts", "M pkts/wall s", "events",
               "events/pkt", "ns/pkt", "peak RSS MiB", "goodput Mbit/s"]
    if paired:
        headers += ["pkts/wall s ÷ htsim (min–max)", "RSS ÷ htsim"]
    rows = []
    for name, e in r["scenarios"].items():
        for side in ("mptcplab", "htsim"):
            if side not in e:
                continue
            m = e[side]["median"]
            row = [name, side, f"{e['duration_s']:g}", _fmt(m["wall_s"], ".3f"), _fmt(m.get("core_wall_s"), ".3f"),
                   _fmt(m["data_pkts"], ".0f"), _fmt(m["pkts_per_wall_s"], ".2f", 1e6), _fmt(m["events"], ".0f"),
                   _fmt(m["events_per_pkt"], ".2f"), _fmt(m["ns_per_pkt"], ".0f"), _fmt(m["peak_rss_mib"], ".1f"),
                   _fmt(m["goodput_mbps"], ".1f")]
            if paired:
                speed, rss = e["ratio"]["pkts_per_wall_s"], e["ratio"]["peak_rss"]
                row += ([f"{_fmt(speed['median'], '.2f')} ({_fmt(speed['min'], '.2f')}–{_fmt(speed['max'], '.2f')})",
                         _fmt(rss["median"], ".2f")] if side == "mptcplab" else ["", ""])
            rows.append(row)
    table = render_table(headers, rows, right=set(range(2, len(headers))))
    lines = [
        f"mptcplab {r['version']} bench --suite htsim · median of {r['runs']} runs, each a fresh process"
        f"{', paired with htsim (A B A B ...)' if paired else ''} · {r['cpus']} CPUs"
        + (f" · duration {r['duration']} (override)" if r.get("duration") else ""),
        "",
        table,
        "",
        "wall s: the whole process, timed by the parent; core s: the core's own run (the rest is Python's "
        "start, imports and TOML).",
        "data pkts: mptcplab = payload bytes delivered / MSS; htsim = bytes acknowledged / 1500 B. "
        "ns/pkt = wall / data pkts.",
    ]
    if paired:
        lines += ["pkts/wall s ÷ htsim: mptcplab's over htsim's, pair by pair; RSS ÷ htsim likewise (medians).",
                  "", "htsim commands:"]
        lines += [f"  {name}: {' '.join(e['htsim']['command'])}" for name, e in r["scenarios"].items()]
    return "\n".join(lines)


def plot_scaling(report: dict[str, Any] | str, path: str) -> str:
    """Draw S3's wall ns per data packet against N (log x), tcp and mptcp, for mptcplab and,
    when the report has its figures, htsim; write it to `path` (.svg, .png or .pdf;
    byte-stable like every plot of the package). `report`: `measure_htsim`'s dict or its
    JSON file."""
    from . import plot
    from .errors import ScenarioError

    if isinstance(report, str):
        try:
            with open(report, encoding="utf-8") as f:
                report = dict(json.load(f))
        except (OSError, ValueError, TypeError) as err:
            raise ScenarioError("--plot", f"cannot read the bench figures '{report}': {err}") from None
    series = []  # (simulator, mode, [(N, ns per packet)])
    for side in ("mptcplab", "htsim"):
        for mode in ("tcp", "mptcp"):
            points = []
            for n in S3_FLOWS:
                entry = report.get("scenarios", {}).get(f"s3-{mode}-{n}", {})
                ns = entry.get(side, {}).get("median", {}).get("ns_per_pkt")
                if ns is not None:
                    points.append((n, ns))
            if points:
                series.append((side, mode, points))
    if not series:
        raise ScenarioError("--plot", "no S3 figures to plot; run s3-* scenarios (the whole suite, or --scenario s3-...)")
    # plot.py's own figure, style and freezing, so this figure looks and saves like the others.
    # Colour: tcp or mptcp; line and marker: the simulator.
    with plot._style():
        fig, (ax,) = plot._new_figure()
        for side, mode, points in series:
            ax.plot([p[0] for p in points], [p[1] for p in points], label=f"{side} {mode}",
                    color=plot.COLORS[0 if mode == "tcp" else 1], marker="o" if side == "mptcplab" else "^",
                    linestyle="-" if side == "mptcplab" else "--")
        ax.set_xscale("log")
        ax.set_xticks(list(S3_FLOWS), [str(n) for n in S3_FLOWS])
        ax.set_ylim(bottom=0)
        ax.set_title("S3 scaling: wall time per data packet (whole process, median)", loc="left")
        ax.set_xlabel("flows or connections N (10 Mbit/s each)")
        ax.set_ylabel("ns per data packet")
        ax.legend(ncols=2, loc="best")
    fig = plot._freeze(fig)
    try:
        return str(plot.save(fig, path))
    except ScenarioError as err:
        raise ScenarioError("--plot", err.message) from None


# -- the command -----------------------------------------------------------------------------
def run_bench(runs: int | None, quick: bool, json_out: str | None, pcap: bool = False,
              progress: Callable[[int, int], None] | None = None, *, suite: str = "model",
              scenarios: list[str] | None = None, duration: float | str | None = None,
              htsim: str | None = None, plot: str | None = None) -> int:
    """`mptcplab bench`. Bad options raise `ScenarioError` naming the option, before any run."""
    from .errors import ScenarioError

    if suite not in SUITES:
        raise ScenarioError("--suite", f"unknown suite '{suite}'; known: {', '.join(SUITES)}")
    n = runs if runs is not None else (3 if quick else 5)
    if n < 1:
        raise ScenarioError("--runs", f"must be at least 1, got {n}")
    if json_out and not os.path.isdir(os.path.dirname(os.path.abspath(json_out))):
        raise ScenarioError("--json", f"cannot write '{json_out}': no such directory")
    if suite == "model":
        for option, given in (("--scenario", scenarios), ("--duration", duration), ("--htsim", htsim),
                              ("--plot", plot)):
            if given:
                raise ScenarioError(option, "applies to --suite htsim only")
        report = measure(n, quick, pcap, progress)
        text = format_report(report)
    else:
        if quick:
            raise ScenarioError("--quick", "applies to the model suite; give --duration with --suite htsim")
        if pcap:
            raise ScenarioError("--pcap", "applies to the model suite (htsim writes no captures)")
        known = htsim_suite_names()
        for name in scenarios or []:
            if name not in known:
                raise ScenarioError("--scenario", f"unknown scenario '{name}' in suite htsim; known: {', '.join(known)}")
        names = [s for s in known if not scenarios or s in scenarios]
        if plot:
            from .plot import check_format

            try:
                check_format(plot)
            except ScenarioError as err:
                raise ScenarioError("--plot", err.message) from None
            if not any(s.startswith("s3-") for s in names):
                raise ScenarioError("--plot", "draws S3; pick s3-* scenarios with --scenario (or run them all)")
        text_duration = None
        if duration is not None:
            from .scenario import _duration_text

            try:
                text_duration = _duration_text(duration)
            except ScenarioError as err:
                raise ScenarioError("--duration", err.message) from None
        report = measure_htsim(names, n, text_duration, _htsim_path(htsim) if htsim else None, progress)
        text = format_htsim_report(report)
    print(text)
    if json_out:
        try:
            with open(json_out, "w", encoding="utf-8") as f:
                f.write(json.dumps(report, indent=2) + "\n")
        except OSError as err:
            raise ScenarioError("--json", f"cannot write '{json_out}': {err.strerror or err}") from None
    if plot:
        print(f"plot: {plot_scaling(report, plot)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    # python -m mptcplab._bench SCENARIO [DURATION|""] [PCAP_DIR]
    raise SystemExit(_child(sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "") or None,
                            sys.argv[3] if len(sys.argv) > 3 else None))
