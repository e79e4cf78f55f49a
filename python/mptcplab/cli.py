"""The `mptcplab` command.

Exit codes: 0 ok, 1 unexpected error, 2 bad input (`ScenarioError`, or bad arguments),
3 a Python plug-in failed (`PluginError`), 130 interrupted. Errors are one line on stderr
(`error: <field>: <message>`); a traceback only with --debug (for a plug-in: its own
traceback, chained).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from . import _core
from .errors import PluginError, ScenarioError, SimulationInterrupted, from_core
from .tables import fmt_bytes, fmt_count, fmt_float, fmt_pct, num, render_table

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_PLUGIN, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _rows(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    if not columns:
        return []
    n = max(len(v) for v in columns.values())
    return [{k: (v[i] if i < len(v) else None) for k, v in columns.items()} for i in range(n)]


def format_summary(result: Any) -> str:
    """The table `mptcplab run` prints: one line per flow, then one per subflow."""
    meta = result.meta
    wall = num(meta.get("wall_s"))
    sim = num(meta.get("duration_s"))
    speed = f" ({sim / wall:.0f}x real time)" if wall and sim else ""
    if meta.get("backend") == "kernel":
        initial = ", ".join(f"{f} on {p}" for f, p in (meta.get("initial_paths") or {}).items())
        head = (
            f"mptcplab {meta.get('version', '?')} · {meta.get('scenario_name', '?')} · kernel backend, Linux "
            f"{meta.get('kernel', '?')} · {fmt_float(sim, 1)} s run in {fmt_float(wall, 1)} s wall · "
            f"initial subflow: {initial or '-'}"
        )
    else:
        head = (
        f"mptcplab {meta.get('version', '?')} · {meta.get('scenario_name', '?')} · seed {meta.get('seed', '?')} · "
        f"{fmt_float(sim, 1)} s simulated in {fmt_float(wall, 2)} s wall{speed} · "
        f"{fmt_count(meta.get('events'))} events"
        )
    flows = _rows(result.columns("summary"))
    flow_rows = []
    for f in flows:
        done = num(f.get("completion_s"))
        flow_rows.append([
            str(f.get("flow", "?")),
            str(f.get("kind", "?")),
            str(f.get("cc", "-") or "-"),
            str(f.get("scheduler", "-") or "-"),
            str(f.get("path_manager", "-") or "-"),
            str(f.get("subflows", "-")),
            fmt_float(f.get("goodput_mbps")),
            fmt_bytes(f.get("bytes_delivered")),
            fmt_bytes(f.get("bytes_sent")),
            fmt_pct(f.get("bytes_retrans"), f.get("bytes_sent")),
            "-" if done is None else f"{done:.2f} s",
        ])
    flow_table = render_table(
        ["flow", "kind", "cc", "scheduler", "path manager", "subflows", "goodput Mbit/s",
         "delivered", "sent", "retrans", "completed"],
        flow_rows,
        right={5, 6, 7, 8, 9, 10},
    )
    subs = _rows(result.columns("subflow_summary"))
    sub_rows = [
        [
            f"{s.get('flow', '?')}/{s.get('subflow', '?')}",
            str(s.get("path", "?")),
            fmt_float(s.get("throughput_mbps")),
            fmt_bytes(s.get("bytes_sent")),
            fmt_bytes(s.get("bytes_acked")),
            fmt_pct(s.get("bytes_retrans"), s.get("bytes_sent")),
            fmt_float(s.get("mean_srtt_ms"), 1),
        ]
        for s in subs
    ]
    sub_table = render_table(
        ["subflow", "path", "Mbit/s", "sent", "acked", "retrans", "mean srtt ms"],
        sub_rows,
        right={2, 3, 4, 5, 6},
    )
    out = f"{head}\n\n{flow_table}\n\n{sub_table}" if sub_rows else f"{head}\n\n{flow_table}"
    delay = _delay_table(result)
    return f"{out}\n\n{delay}" if delay else out


def _delay_table(result: Any) -> str:
    """Per flow with delay samples (streams, `run.delay_samples`): seed 002's protocol
    delay and HoL degree, model (Eq. 2, 7) and measured, and the frames DATA_ACKed."""
    cols = result.columns("delay_samples") or {}
    if not cols.get("flow"):
        return ""
    frames = result.columns("frames") or {}
    rows = []
    for flow in dict.fromkeys(cols["flow"]):
        idx = [i for i, f in enumerate(cols["flow"]) if f == flow]

        def av_max(name: str) -> str:
            v = [cols[name][i] for i in idx]
            return f"{sum(v) / len(v):.1f} / {max(v):.1f}"

        fr = [i for i, f in enumerate(frames.get("flow", [])) if f == flow]
        acked = sum(1 for i in fr if num(frames["acked_s"][i]) is not None)
        rows.append([str(flow), fmt_count(len(idx)), av_max("t_over_ms"), av_max("zeta_ms"), av_max("delay_ms"),
                     av_max("zeta_measured_ms"), f"{acked}/{len(fr)}" if fr else "-"])
    return render_table(
        ["flow", "samples", "υ av/max ms (Eq. 2)", "ζ av/max ms", "measured av/max ms", "ζ measured av/max ms",
         "frames acked"],
        rows,
        right={1, 2, 3, 4, 5, 6},
    )


# -- progress -------------------------------------------------------------------------------
class Progress:
    """Progress line on stderr for runs longer than `after_s` wall seconds.

    On a terminal the line is redrawn in place (\\r). Elsewhere (CI logs, pipes) a plain
    line is written at most every `every_s` seconds, so logs stay short.
    """

    def __init__(self, stream: TextIO = sys.stderr, after_s: float = 1.0, every_s: float = 10.0) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.after_s = after_s
        self.every_s = every_s
        self.start = time.monotonic()
        self.last_plain = self.start
        self.drawn = False
        self.label = "simulating"

    def __call__(self, sim_s: float, end_s: float) -> None:
        now = time.monotonic()
        wall = now - self.start
        if wall < self.after_s:
            return
        pct = 100.0 * sim_s / end_s if end_s > 0 else 0.0
        text = f"{self.label}: {sim_s:7.1f} / {end_s:.1f} s ({pct:3.0f} %), {wall:.1f} s wall"
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
            self.drawn = True
        elif now - self.last_plain >= self.every_s:
            self.stream.write(text + "\n")
            self.last_plain = now
        self.stream.flush()

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


# -- commands -------------------------------------------------------------------------------
def _load_scenario(arg: str | None) -> Any:
    from .scenario import Scenario

    return Scenario.default() if arg is None else Scenario.from_toml(Path(arg))


def _duration_arg(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def cmd_run(args: argparse.Namespace) -> int:
    from .api import simulate

    scenario = _load_scenario(args.scenario)
    progress = None if args.no_progress else Progress()
    try:
        if args.backend == "kernel":
            if args.trace or args.trace_flow:
                raise ScenarioError("--trace", "the kernel backend writes no packet trace; the sim backend does")
            from .kernel import run_kernel

            if progress is not None:
                progress.label = "running on the kernel"
            result = run_kernel(scenario, seed=args.seed, duration=args.duration, progress=progress, pcap=args.pcap)
        else:
            result = simulate(scenario, seed=args.seed, duration=args.duration, progress=progress,
                              trace=args.trace, trace_flows=args.trace_flow, pcap=args.pcap)
    finally:
        if progress is not None:
            progress.close()
    print(format_summary(result))
    if args.out:
        out = result.save(args.out)
        print(f"\nwrote {out}/ (Parquet tables, scenario.toml, meta.json)")
    if args.trace:
        print(f"wrote trace {args.trace}")
    if args.pcap:
        print(f"wrote captures {args.pcap}/ (one pcap a path; `mptcplab pcap-summary {args.pcap}`)")
    return EXIT_OK


def cmd_pcap_summary(args: argparse.Namespace) -> int:
    from .pcap import TsharkMissing, format_summary, summarize

    try:
        rows = summarize(args.captures[0] if len(args.captures) == 1 else args.captures)
    except TsharkMissing as err:
        raise ScenarioError("tshark", str(err)) from None
    if args.json:
        from dataclasses import asdict

        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        print(format_summary(rows))
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    comps = [tuple(str(x) for x in c) for c in _core.components()]
    if args.markdown:
        print("### Congestion controls\n")
        print(_core.congestion_controls_markdown())
        print("### Schedulers, path managers, applications and profiles\n")
        print(_core.components_markdown())
        print("### Profiles (`run.profile`)\n")
        print(_core.profiles_markdown())
    else:
        print(render_table(["kind", "name", "description"], [list(c) for c in comps], right=set()))
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    text = _core.schema_json()
    pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    if args.out:
        Path(args.out).write_text(pretty, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(pretty)
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    if args.scenario is None:
        return _validate_matrix(args)
    for flag, given in (("--quick", args.quick), ("--reps", args.reps is not None), ("--out", args.out is not None),
                        ("--family", bool(args.family)), ("--only", args.only is not None),
                        ("--profile", args.profile is not None), ("--kernel-data", args.kernel_data is not None),
                        ("--stored-only", args.stored_only)):
        if given:
            raise ScenarioError(flag, "belongs to the sim-vs-kernel matrix (`mptcplab validate` without SCENARIO)")
    scenario = _load_scenario(args.scenario).validate()
    data = scenario.to_dict()
    if args.print:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return EXIT_OK
    counts = ", ".join(
        f"{len(data[k])} {k}" for k in ("links", "paths", "connections", "flows", "hosts")
        if isinstance(data.get(k), list) and data[k]
    )
    print(f"ok: {args.scenario}: {counts}")
    return EXIT_OK


def _validate_matrix(args: argparse.Namespace) -> int:
    from .kernel.validate import run_validate

    if args.print:
        raise ScenarioError("--print", "shows a scenario file normalised: give SCENARIO")
    out = args.out or ("validate-quick" if args.quick else "validate")
    report = run_validate(quick=args.quick, reps=args.reps, out=out, families=args.family or None, only=args.only,
                          profile=args.profile or "upstream", kernel_data=args.kernel_data,
                          stored_only=args.stored_only)
    print(report.text())
    print(f"\nwrote {out}/validate.txt, validate.json, validate.csv and reproduction.json "
          f"(`mptcplab report {out}`)", file=sys.stderr)
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from ._bench import run_bench

    return run_bench(runs=args.runs, quick=args.quick, json_out=args.json, pcap=args.pcap)


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import load_plan, run_sweep

    plan = load_plan(args.plan)
    frame = run_sweep(plan, out=args.out, workers=args.workers, scheduler=args.scheduler,
                      allow_version_mix=args.allow_version_mix, progress=not args.no_progress)
    out = args.out or f"sweeps/{plan.name}"
    print(f"{len(frame)} rows ({len(plan.points())} points) in {out}/results.csv")
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from .sweep import compare, load_results

    a, keys_a = load_results(args.a, "A")
    b, keys_b = load_results(args.b, "B")
    table = compare(a, b, keys=keys_a or keys_b)
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"wrote {args.out}", file=sys.stderr)
    cols = list(table.columns)
    rows = [[fmt_float(v, 3) if isinstance(v, float) else str(v) for v in r] for r in table.itertuples(index=False)]
    numeric = {i for i, c in enumerate(cols) if c.endswith((" A", " B", " Δ%"))}
    print(f"A = {args.a}\nB = {args.b}\n")
    print(render_table(cols, rows, right=numeric))
    return EXIT_OK


def cmd_optimize(args: argparse.Namespace) -> int:
    if args.from_coefficients is None:
        if args.scenario is None:
            raise ScenarioError("optimize", "give SCENARIO (sweep, fit, select) or --from-coefficients FILE "
                                "(fitted curves); docs/mpcoa.md")
        return _optimize_scenario(args)
    if args.scenario is not None:
        raise ScenarioError("optimize", "give either SCENARIO or --from-coefficients FILE, not both")
    from .mpcoa import load_coefficients, optimize

    coef = load_coefficients(args.from_coefficients)
    opt = optimize(coef, delta=args.delta, literal_eq11=args.literal_eq11)
    rule = "Eq. 11 as printed (min obs)" if args.literal_eq11 else "max fitted throughput"
    print(f"MPCOA from {args.from_coefficients} ({coef.label}): δ = {100 * opt.delta:g} %, winner by {rule}")
    cols = ["PM", "CC", "curve", "tp_max Mbit/s", "at MiB", "obs MiB", "otp Mbit/s"]
    rows = [[o.curve.pm, o.curve.cc, o.curve.formula(), f"{o.tp_max:.3f}", f"{o.bs_at_max:.2f}",
             f"{o.obs:.2f}", f"{o.otp:.3f}"] for o in opt.per_curve]
    print(render_table(cols, rows, right={3, 4, 5, 6}))
    print()
    print(f"OPM = {opt.opm}")
    print(f"OCC = {opt.occ}")
    print(f"OBS = {opt.obs:.2f} MiB")
    print(f"OTP = {opt.otp:.2f} Mbit/s")
    print(f"(tp_max = {opt.tp_max:.2f} Mbit/s at bs = {opt.bs_at_max:.2f} MiB; {opt.curve.formula()})")
    if coef.classic is not None and opt.classic_mib:
        c = coef.classic
        print(f"classic bound (3·RTT_max + RTO_max)·ΣBW = (3·{c.rtt_max_s:.3f} s + {c.rto_max_s:.3f} s)"
              f"·{c.sum_bw_mbit_s:g} Mbit/s = {opt.classic_mib:.2f} MiB; "
              f"OBS = {opt.obs_pct_of_classic:.2f} % of it")
    for note in opt.notes:
        print(f"note: {note}")
    return EXIT_OK


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import PAPERS, reproduce

    if args.list or args.paper is None:
        for name, (_, line) in PAPERS.items():
            print(f"{name:12s} {line}")
        return EXIT_OK if args.list else EXIT_BAD_INPUT
    rep, where = reproduce(args.paper, quick=args.quick, reps=args.reps, workers=args.workers,
                           out=args.out, report=not args.no_report, profile=args.profile)
    print(rep.claims_markdown())
    m = rep.meta
    print(f"{m['runs']} runs, {m['simulated_s']:.0f} s simulated, {m['wall_s']:.0f} s wall"
          f"{' (quick)' if args.quick else ''}; written to {where}", file=sys.stderr)
    return EXIT_OK


def cmd_plot(args: argparse.Namespace) -> int:
    from . import plot
    from .report import Run, Sweep, open_results

    if args.out is not None:
        plot.check_format(args.out)  # before any drawing
    src = open_results(args.results)
    base = Path(args.results)
    base = base.parent if base.is_file() else base
    if isinstance(src, Run):
        kind = args.kind or "all"
        if kind not in (*plot.RUN_KINDS, "all", "scatter"):
            raise ScenarioError("--kind", f"for a run: expected one of {', '.join(plot.RUN_KINDS)}, all or scatter, "
                                f"got {kind!r}")
        if args.figure is not None or args.metric is not None:
            raise ScenarioError("--figure" if args.figure is not None else "--metric",
                                "only for a reproduction (--figure) or a sweep (--metric)")
        if kind == "scatter":
            figs = [("scatter", plot.throughput_delay(src.result, flow=args.flow))]
        else:
            figs = [(kind, plot.timeseries(src.result, kind=kind, flow=args.flow))]
    elif isinstance(src, Sweep):
        kind = args.kind or "bar"
        if args.figure is not None:
            raise ScenarioError("--figure", "only for a reproduction; a sweep has --kind bar|cdf|scatter")
        figs = [(kind, plot.draw(src.figure(kind, metric=args.metric or "goodput_mbps", flow=args.flow)))]
    else:
        if args.kind is not None or args.metric is not None or args.flow is not None:
            raise ScenarioError("--kind" if args.kind else "--metric" if args.metric else "--flow",
                                "a reproduction's figures are fixed; choose one with --figure N")
        if not src.figures:
            raise ScenarioError("<results>", f"'{args.results}' has no figures")
        numbers = [args.figure] if args.figure is not None else list(range(1, len(src.figures) + 1))
        for n in numbers:
            if not 1 <= n <= len(src.figures):
                raise ScenarioError("--figure", f"expected 1 to {len(src.figures)}, got {n}")
        figs = [(f"figure-{n}", plot.draw(src.figures[n - 1], field=f"figures[{n - 1}]")) for n in numbers]
    for name, fig in figs:
        if args.out is None:
            out = base / f"{name}.png"
        elif len(figs) > 1:
            o = Path(args.out)
            out = o.with_name(f"{o.stem}-{name.rsplit('-', 1)[-1]}{o.suffix}")
        else:
            out = Path(args.out)
        print(f"wrote {plot.save(fig, out)}")
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report

    out = write_report(args.results, out=args.out, figure_format="png" if args.png else "svg")
    print(f"wrote {out}")
    return EXIT_OK
def _optimize_scenario(args: argparse.Namespace) -> int:
    from .mpcoa import optimize_scenario
    from .scenario import Scenario

    scenario = Scenario.from_toml(Path(args.scenario))
    report = optimize_scenario(
        scenario, out=args.out, reps=args.reps, seed=args.seed, ccs=args.cc, pms=args.pm, grid=args.grid,
        delta=args.delta, literal_eq11=args.literal_eq11, warmup=args.warmup, duration=args.duration,
        omega_T=args.omega_t, omega_warmup=args.omega_warmup, omega_strict=args.omega_strict,
        connection=args.connection, workers=args.workers, scheduler=args.scheduler,
        allow_version_mix=args.allow_version_mix, progress=not args.no_progress,
    )
    print(report.text())
    print(f"\nwrote {report.out}/report.json and points.csv")
    return EXIT_OK


def _seconds_option(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None


def cmd_kernel_selftest(args: argparse.Namespace) -> int:
    from .kernel import check_environment
    from .kernel.selftest import format_selftest, selftest

    check_environment()
    report = selftest(quick=args.quick, store=not args.no_store,
                      log=lambda m: print(m, file=sys.stderr, flush=True))
    print(format_selftest(report))
    return EXIT_OK


def cmd_kernel_cleanup(args: argparse.Namespace) -> int:
    from .kernel import check_environment
    from .kernel.netns import cleanup_stale, leftovers

    check_environment()
    removed = cleanup_stale()
    left = leftovers()
    print(f"removed {len(removed)} namespaces of dead runs; {len(left['namespaces'])} namespaces of live runs remain")
    return EXIT_OK


# -- entry point ----------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks on errors")
    parser = argparse.ArgumentParser(
        prog="mptcplab", description="Multipath TCP lab: run MPTCP scenarios on a deterministic simulator.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"mptcplab {_core.version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("run", parents=[common], help="run a scenario (the embedded default without one)")
    p.add_argument("scenario", nargs="?", metavar="SCENARIO", help="scenario TOML file")
    p.add_argument("--seed", type=int, help="override [run].seed")
    p.add_argument("--duration", type=_duration_arg, metavar="D", help='override [run].duration: seconds or "10 s"')
    p.add_argument("--out", metavar="DIR", help="save Parquet tables, scenario.toml and meta.json to DIR")
    p.add_argument("--trace", metavar="FILE", help="write the per-packet and per-ACK event trace (CSV) to FILE")
    p.add_argument("--trace-flow", action="append", metavar="NAME",
                   help="trace only this flow (repeatable; default: every flow)")
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    p.add_argument("--backend", choices=("sim", "kernel"), default="sim",
                   help="sim (default) or kernel: the Linux MPTCP stack in network namespaces (docs/kernel.md)")
    p.add_argument("--pcap", metavar="DIR", help="write one packet capture per path into DIR (<path>.pcap; docs/pcap.md)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("pcap-summary", parents=[common],
                       help="per-subflow bytes, data-sequence progress and reordering from a run's captures (tshark; docs/pcap.md)")
    p.add_argument("captures", nargs="+", metavar="DIR|FILE", help="a --pcap directory, or capture files")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.set_defaults(func=cmd_pcap_summary)

    p = sub.add_parser("kernel", parents=[common], help="the kernel backend's tools (docs/kernel.md)")
    ksub = p.add_subparsers(dest="kernel_command", metavar="KERNEL_COMMAND")
    k = ksub.add_parser("selftest", parents=[common], help="measure the link emulator: delay, rate, loss, ceiling")
    k.add_argument("--quick", action="store_true", help="fewer points and shorter probes")
    k.add_argument("--no-store", action="store_true",
                   help="do not store the ceiling (the kernel backend refuses rates above the stored one)")
    k.set_defaults(func=cmd_kernel_selftest)
    k = ksub.add_parser("cleanup", parents=[common],
                        help="remove what dead kernel runs left (every run also does this when it starts)")
    k.set_defaults(func=cmd_kernel_cleanup)
    p.set_defaults(func=lambda a, kp=p: (kp.print_help(sys.stderr), EXIT_BAD_INPUT)[1])

    p = sub.add_parser("list", parents=[common], help="list congestion controls, schedulers, path managers, apps")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("schema", parents=[common], help="print the scenario JSON Schema")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser(
        "validate", parents=[common],
        help="check a scenario file; without one, run the sim-vs-kernel matrix (docs/kernel.md)",
        description="`mptcplab validate SCENARIO` checks a scenario file. `mptcplab validate` without a "
                    "scenario runs the fixed sim-vs-kernel matrix (scenarios/validate/, root and Linux MPTCP "
                    "needed) and prints, per scenario and CC, the sim/kernel goodput ratio, each subflow's "
                    "share difference and both backends' RTT, with 95 % CIs; the last line is the worst ratio.")
    p.add_argument("scenario", nargs="?", metavar="SCENARIO",
                   help="scenario file to check; omit it to run the sim-vs-kernel matrix")
    p.add_argument("--print", action="store_true", help="with SCENARIO: print the normalised scenario as JSON")
    g = p.add_argument_group("the sim-vs-kernel matrix (no SCENARIO)")
    g.add_argument("--quick", action="store_true", help="2 scenarios, 2 runs of 4 s per backend (CI, ~1 min)")
    g.add_argument("--reps", type=int, metavar="N", help="runs per backend and scenario (default 3; quick 2)")
    g.add_argument("--out", metavar="DIR", help="where to write validate.txt/.json/.csv and reproduction.json "
                   "(default validate/ or validate-quick/)")
    g.add_argument("--family", action="append", metavar="NAME",
                   help="core (default), bounded-buffer (seed 001's regime) or lossy-start (seed 003's); repeatable")
    g.add_argument("--only", metavar="TEXT", help="only the points whose \"label/cc\" contains TEXT")
    g.add_argument("--profile", choices=("upstream", "out_of_tree"),
                   help="the simulator's profile (default upstream, the kernel's own)")
    g.add_argument("--kernel-data", metavar="DIR",
                   help="stored kernel runs (docs/validate/kernel): use them, measure and store the missing ones")
    g.add_argument("--stored-only", action="store_true",
                   help="with --kernel-data: compare with the stored runs only (no root; a missing run is an error)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("bench", parents=[common], help="benchmark the simulator on two fixed scenarios")
    p.add_argument("--runs", type=int, default=None, help="runs per scenario (default 5, 3 with --quick)")
    p.add_argument("--quick", action="store_true", help="10 s of simulated time instead of 60 s")
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    p.add_argument("--pcap", action="store_true", help="write packet captures in every run (their cost; docs/pcap.md)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("sweep", parents=[common], help="run a sweep plan (docs/sweeps.md); resumes where it stopped")
    p.add_argument("plan", metavar="PLAN", help="sweep plan TOML file")
    p.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: all cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on a Dask cluster (dask.distributed scheduler address)")
    p.add_argument("--out", metavar="DIR", help="result store (default: sweeps/<plan name>)")
    p.add_argument("--allow-version-mix", action="store_true",
                   help="reuse points stored by another mptcplab version instead of refusing")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("compare", parents=[common], help="two sweep result sets side by side")
    p.add_argument("a", metavar="A", help="sweep directory or results CSV/Parquet")
    p.add_argument("b", metavar="B", help="sweep directory or results CSV/Parquet")
    p.add_argument("--out", metavar="FILE", help="also write the comparison as CSV")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("optimize", parents=[common],
                       help="MPCOA: optimal PM, CC, buffer size and throughput (docs/mpcoa.md)")
    p.add_argument("scenario", nargs="?", metavar="SCENARIO",
                   help="measure Ω, sweep the buffer grid per (PM, CC), fit, select (e.g. scenarios/sites/unis-hin.toml)")
    p.add_argument("--from-coefficients", metavar="FILE",
                   help="only the selection, on fitted curves per (PM, CC) in TOML, e.g. data/mpcoa/srl-hu.toml")
    p.add_argument("--delta", type=float, default=0.07, metavar="δ",
                   help="throughput sacrificed for a smaller buffer (default 0.07)")
    p.add_argument("--literal-eq11", action="store_true",
                   help="the seed's Eq. 11 as printed: OBS = min over all (PM, CC) (contradicts its Table 5)")
    g = p.add_argument_group("with SCENARIO")
    g.add_argument("--out", metavar="DIR", help="result stores and report.json (default: optimize/<scenario name>); "
                   "rerun the same command to resume")
    g.add_argument("--reps", type=int, default=1, metavar="N", help="repetitions, seeds SEED..SEED+N-1 (default 1)")
    g.add_argument("--seed", type=int, metavar="S", help="seed of repetition 0 (default: the scenario's run.seed)")
    g.add_argument("--cc", metavar="LIST", help="congestion controls, comma-separated "
                   "(default: cubic,olia,hybla,reno,scalable,vegas)")
    g.add_argument("--pm", metavar="LIST", help="path managers, comma-separated (default: fullmesh,pcdc)")
    g.add_argument("--grid", metavar="MIB", help="buffer sizes in MiB: START:STOP:STEP or a comma list "
                   "(default 0.5:30:0.5)")
    g.add_argument("--warmup", type=_seconds_option, default=5.0, metavar="S",
                   help="throughput = goodput after S seconds until the end of the run (default 5)")
    g.add_argument("--duration", type=_seconds_option, metavar="S", help="override run.duration (seconds)")
    g.add_argument("--omega-t", type=_seconds_option, default=15.0, metavar="S",
                   help="Ω window T in seconds (Eq. 5; default 15)")
    g.add_argument("--omega-warmup", type=_seconds_option, default=5.0, metavar="S",
                   help="warm-up before the first Ω window (default 5; 0 = the literal Eq. 5)")
    g.add_argument("--omega-strict", action="store_true", help="SP* keeps only Ω > 0 (default: Ω ≥ 0, Eq. 6)")
    g.add_argument("--connection", metavar="NAME", help="the MPTCP connection to optimize (default: the first)")
    g.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: all cores)")
    g.add_argument("--scheduler", metavar="ADDRESS", help="run the points on a Dask cluster")
    g.add_argument("--allow-version-mix", action="store_true",
                   help="reuse points stored by another mptcplab version")
    g.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_optimize)

    p = sub.add_parser("reproduce", parents=[common],
                       help="run a paper's experiments and write its claims and report (docs/reproduce.md)")
    p.add_argument("paper", nargs="?", metavar="PAPER", help="mpcoa, rbpm, streaming, lia-vs-tcp or coupled-bbr")
    p.add_argument("--list", action="store_true", help="list the papers")
    p.add_argument("--quick", action="store_true", help="shorter runs, fewer repetitions (CI)")
    p.add_argument("--reps", type=int, metavar="N", help="repetitions per variant (seeds 1..N)")
    p.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: all cores)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: repro/PAPER[-quick][-PROFILE])")
    p.add_argument("--no-report", action="store_true", help="write reproduction.json and claims.md only")
    p.add_argument("--profile", choices=("out_of_tree", "upstream"),
                   help="run every experiment under this profile (default: each scenario's own, out_of_tree)")
    p.set_defaults(func=cmd_reproduce)
    p = sub.add_parser("plot", parents=[common], help="plot a saved run, a sweep or a reproduction (docs/report.md)")
    p.add_argument("results", metavar="RESULTS", help="run directory (run --out), sweep store or reproduction")
    p.add_argument("--kind", metavar="KIND",
                   help="run: throughput, cwnd, srtt, ooo, all (default) or scatter; sweep: bar (default), cdf "
                        "or scatter")
    p.add_argument("--flow", metavar="NAME", help="only this flow")
    p.add_argument("--metric", metavar="COLUMN", help="sweep: summary column to plot (default goodput_mbps)")
    p.add_argument("--figure", type=int, metavar="N", help="reproduction: only figure N (default: every figure)")
    p.add_argument("--out", metavar="FILE", help="FILE.png, .svg or .pdf (default: RESULTS/KIND.png); with "
                   "several figures, FILE-N.png")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("report", parents=[common], help="write a self-contained HTML report (docs/report.md)")
    p.add_argument("results", metavar="RESULTS", help="run directory (run --out), sweep store or reproduction")
    p.add_argument("--out", metavar="FILE", help="HTML file (default: RESULTS/report.html)")
    p.add_argument("--png", action="store_true", help="embed figures as PNG instead of SVG")
    p.set_defaults(func=cmd_report)
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split("\n")).strip()


def _report(message: str, debug: bool) -> None:
    if debug:
        traceback.print_exc()
    print(f"error: {_one_line(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return func(args)
    except (KeyboardInterrupt, SimulationInterrupted):
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ScenarioError as err:
        _report(f"{err.field}: {err.message}" if err.field else err.message, debug)
        return EXIT_BAD_INPUT
    except PluginError as err:
        _report(str(err), debug)
        return EXIT_PLUGIN
    except _core.ScenarioError as err:  # a core call outside core_errors(): same handling
        mapped = from_core(err)
        _report(f"{mapped.field}: {mapped.message}", debug)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `mptcplab list | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as err:  # noqa: BLE001 - the CLI's last line of defence
        _report(f"{type(err).__name__}: {err}", debug)
        return EXIT_ERROR
    except BaseException as err:  # a Rust panic surfaces as pyo3's PanicException
        if isinstance(err, (SystemExit, GeneratorExit)):
            raise
        _report(f"internal error in the simulator core ({type(err).__name__}: {err}); "
                "please report it with the scenario (rerun with --debug for details)", debug)
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
