"""Many runs at once: `mptcplab sweep` and `compare`, `optimize` (MPCOA), `reproduce` (a
paper's experiments) and `bench` (the simulator's speed)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import ScenarioError
from ..tables import fmt_float
from .app import Profile, app
from .present import CountProgress, StageProgress, count_progress, progress_enabled, table


@app.command("sweep")
def sweep(
    plan: Annotated[str, typer.Argument(metavar="PLAN", help="sweep plan TOML file")],
    workers: Annotated[Optional[int], typer.Option(metavar="N", help="local worker processes (default: all cores)")] = None,
    scheduler: Annotated[Optional[str], typer.Option(metavar="ADDRESS", help="run on a Dask cluster (dask.distributed scheduler address)")] = None,
    out: Annotated[Optional[str], typer.Option(metavar="DIR", help="result store (default: sweeps/<plan name>)")] = None,
    allow_version_mix: Annotated[bool, typer.Option("--allow-version-mix", help="reuse points stored by another mptcplab version instead of refusing")] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar on stderr")] = False,
) -> None:
    """run a sweep plan (docs/sweeps.md); resumes where it stopped"""
    from ..sweep import load_plan, run_sweep

    p = load_plan(plan)
    frame = run_sweep(p, out=out, workers=workers, scheduler=scheduler, allow_version_mix=allow_version_mix,
                      progress=count_progress(no_progress, "sweep"))
    print(f"{len(frame)} rows ({len(p.points())} points) in {out or f'sweeps/{p.name}'}/results.csv")


@app.command("compare")
def compare(
    a: Annotated[str, typer.Argument(metavar="A", help="sweep directory or results CSV/Parquet")],
    b: Annotated[str, typer.Argument(metavar="B", help="sweep directory or results CSV/Parquet")],
    out: Annotated[Optional[str], typer.Option(metavar="FILE", help="also write the comparison as CSV")] = None,
) -> None:
    """two sweep result sets side by side"""
    from ..sweep import compare as compare_results, load_results

    fa, keys_a = load_results(a, "A")
    fb, keys_b = load_results(b, "B")
    frame = compare_results(fa, fb, keys=keys_a or keys_b)
    if out:
        frame.to_csv(out, index=False)
        print(f"wrote {out}", file=sys.stderr)
    cols = list(frame.columns)
    rows = [[fmt_float(v, 3) if isinstance(v, float) else str(v) for v in r] for r in frame.itertuples(index=False)]
    numeric = {i for i, c in enumerate(cols) if c.endswith((" A", " B", " Δ%"))}
    print(f"A = {a}\nB = {b}\n")
    table(cols, rows, right=numeric)


def _seconds(text: str | None, field: str) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise ScenarioError(field, f"expected a number of seconds, got {text!r}") from None


SCN = "with SCENARIO"


@app.command("optimize")
def optimize(
    scenario: Annotated[Optional[str], typer.Argument(metavar="SCENARIO", help="measure Ω, sweep the buffer grid per (PM, CC), fit, select (e.g. scenarios/sites/unis-hin.toml)")] = None,
    from_coefficients: Annotated[Optional[str], typer.Option(metavar="FILE", help="only the selection, on fitted curves per (PM, CC) in TOML, e.g. data/mpcoa/srl-hu.toml")] = None,
    delta: Annotated[float, typer.Option(metavar="δ", help="throughput sacrificed for a smaller buffer (default 0.07)")] = 0.07,
    literal_eq11: Annotated[bool, typer.Option("--literal-eq11", help="the seed's Eq. 11 as printed: OBS = min over all (PM, CC) (contradicts its Table 5)")] = False,
    out: Annotated[Optional[str], typer.Option(metavar="DIR", help="result stores and report.json (default: optimize/<scenario name>); rerun the same command to resume", rich_help_panel=SCN)] = None,
    reps: Annotated[int, typer.Option(metavar="N", help="repetitions, seeds SEED..SEED+N-1 (default 1)", rich_help_panel=SCN)] = 1,
    seed: Annotated[Optional[int], typer.Option(metavar="S", help="seed of repetition 0 (default: the scenario's run.seed)", rich_help_panel=SCN)] = None,
    cc: Annotated[Optional[str], typer.Option(metavar="LIST", help="congestion controls, comma-separated (default: cubic,olia,hybla,reno,scalable,vegas)", rich_help_panel=SCN)] = None,
    pm: Annotated[Optional[str], typer.Option(metavar="LIST", help="path managers, comma-separated (default: fullmesh,pcdc)", rich_help_panel=SCN)] = None,
    grid: Annotated[Optional[str], typer.Option(metavar="MIB", help="buffer sizes in MiB: START:STOP:STEP or a comma list (default 0.5:30:0.5)", rich_help_panel=SCN)] = None,
    warmup: Annotated[str, typer.Option(metavar="S", help="throughput = goodput after S seconds until the end of the run (default 5)", rich_help_panel=SCN)] = "5",
    duration: Annotated[Optional[str], typer.Option(metavar="S", help="override run.duration (seconds)", rich_help_panel=SCN)] = None,
    omega_t: Annotated[str, typer.Option("--omega-t", metavar="S", help="Ω window T in seconds (Eq. 5; default 15)", rich_help_panel=SCN)] = "15",
    omega_warmup: Annotated[str, typer.Option(metavar="S", help="warm-up before the first Ω window (default 5; 0 = the literal Eq. 5)", rich_help_panel=SCN)] = "5",
    omega_strict: Annotated[bool, typer.Option("--omega-strict", help="SP* keeps only Ω > 0 (default: Ω ≥ 0, Eq. 6)", rich_help_panel=SCN)] = False,
    connection: Annotated[Optional[str], typer.Option(metavar="NAME", help="the MPTCP connection to optimize (default: the first)", rich_help_panel=SCN)] = None,
    workers: Annotated[Optional[int], typer.Option(metavar="N", help="local worker processes (default: all cores)", rich_help_panel=SCN)] = None,
    scheduler: Annotated[Optional[str], typer.Option(metavar="ADDRESS", help="run the points on a Dask cluster", rich_help_panel=SCN)] = None,
    allow_version_mix: Annotated[bool, typer.Option("--allow-version-mix", help="reuse points stored by another mptcplab version", rich_help_panel=SCN)] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar on stderr", rich_help_panel=SCN)] = False,
) -> None:
    """MPCOA: optimal PM, CC, buffer size and throughput (docs/mpcoa.md)"""
    if from_coefficients is None:
        if scenario is None:
            raise ScenarioError("optimize", "give SCENARIO (sweep, fit, select) or --from-coefficients FILE "
                                "(fitted curves); docs/mpcoa.md")
        from ..mpcoa import optimize_scenario
        from ..scenario import Scenario

        report = optimize_scenario(
            Scenario.from_toml(Path(scenario)), out=out, reps=reps, seed=seed, ccs=cc, pms=pm, grid=grid,
            delta=delta, literal_eq11=literal_eq11, warmup=_seconds(warmup, "--warmup"),
            duration=_seconds(duration, "--duration"), omega_T=_seconds(omega_t, "--omega-t"),
            omega_warmup=_seconds(omega_warmup, "--omega-warmup"), omega_strict=omega_strict,
            connection=connection, workers=workers, scheduler=scheduler, allow_version_mix=allow_version_mix,
            progress=count_progress(no_progress, "optimize"),
        )
        print(report.text())
        print(f"\nwrote {report.out}/report.json and points.csv")
        return
    if scenario is not None:
        raise ScenarioError("optimize", "give either SCENARIO or --from-coefficients FILE, not both")
    from ..mpcoa import load_coefficients, optimize as select

    coef = load_coefficients(from_coefficients)
    opt = select(coef, delta=delta, literal_eq11=literal_eq11)
    rule = "Eq. 11 as printed (min obs)" if literal_eq11 else "max fitted throughput"
    print(f"MPCOA from {from_coefficients} ({coef.label}): δ = {100 * opt.delta:g} %, winner by {rule}")
    cols = ["PM", "CC", "curve", "tp_max Mbit/s", "at MiB", "obs MiB", "otp Mbit/s"]
    rows = [[o.curve.pm, o.curve.cc, o.curve.formula(), f"{o.tp_max:.3f}", f"{o.bs_at_max:.2f}",
             f"{o.obs:.2f}", f"{o.otp:.3f}"] for o in opt.per_curve]
    table(cols, rows, right={3, 4, 5, 6})
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


@app.command("reproduce")
def reproduce(
    paper: Annotated[Optional[str], typer.Argument(metavar="PAPER", help="mpcoa, rbpm, streaming, lia-vs-tcp or coupled-bbr; with --page also pcdc-hol, arp, or all (every page)")] = None,
    list_: Annotated[bool, typer.Option("--list", help="list the papers")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="shorter runs, fewer repetitions (CI)")] = False,
    reps: Annotated[Optional[int], typer.Option(metavar="N", help="repetitions per variant (seeds 1..N)")] = None,
    workers: Annotated[Optional[int], typer.Option(metavar="N", help="local worker processes (default: all cores)")] = None,
    out: Annotated[Optional[str], typer.Option(metavar="DIR", help="output directory (default: repro/PAPER[-quick][-PROFILE])")] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="write reproduction.json and claims.md only")] = False,
    profile: Annotated[Optional[Profile], typer.Option(help="run every experiment under this profile (default: each scenario's own, out_of_tree)")] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bars on stderr")] = False,
    page: Annotated[bool, typer.Option("--page", help="write the paper's measured-and-reported page under docs/reproductions/ instead (--reps: seeds per variant)", rich_help_panel="the page")] = False,
    page_file: Annotated[Optional[str], typer.Option(metavar="FILE", help="with --page: write it here instead", rich_help_panel="the page")] = None,
    no_diagnostics: Annotated[bool, typer.Option("--no-diagnostics", help="with --page: skip the post-hoc runs that explain a ✗", rich_help_panel="the page")] = False,
) -> None:
    """run a paper's experiments and write its claims and report (docs/reproduce.md)"""
    from ..reproduce import PAPERS, reproduce as run_reproduction

    if list_ or paper is None:
        from ..reproduce.pages import PAGES

        for name, (_, line) in PAPERS.items():
            print(f"{name:12s} {line}{' (and --page)' if name in PAGES else ''}")
        for name in PAGES:
            if name not in PAPERS:
                print(f"{name:12s} a page only: --page")
        if not list_:
            raise typer.Exit(2)
        return
    if not page:
        for flag, given in (("--page-file", page_file is not None), ("--no-diagnostics", no_diagnostics)):
            if given:
                raise ScenarioError(flag, "belongs to --page")
    bars = StageProgress() if progress_enabled(no_progress) else None
    if page:
        from ..reproduce.pages import write_page

        for flag, given in (("--quick", quick), ("--out", out is not None), ("--no-report", no_report)):
            if given:
                raise ScenarioError(flag, "belongs to a reproduction, not to --page (a page runs as it is written)")
        from ..reproduce.pages import every_page

        if paper == "all":  # every page under each profile it is written for
            if page_file is not None or profile is not None:
                raise ScenarioError("--page-file" if page_file is not None else "--profile",
                                    "writes one page; `reproduce all --page` writes each to its place")
            jobs = every_page()
        else:
            jobs = [(paper, profile.value if profile else None)]
        try:
            for name, prof in jobs:
                where, wall = write_page(name, out=page_file, seeds=reps, workers=workers,
                                         diagnostics=not no_diagnostics, profile=prof, progress=bars)
                print(f"wrote {where} ({wall:.0f} s wall)", file=sys.stderr)
        finally:
            if bars is not None:
                bars.close()
        return
    try:
        rep, where = run_reproduction(paper, quick=quick, reps=reps, workers=workers, out=out,
                                      report=not no_report, profile=profile.value if profile else None,
                                      progress=bars)
    finally:
        if bars is not None:
            bars.close()
    print(rep.claims_markdown())
    m = rep.meta
    print(f"{m['runs']} runs, {m['simulated_s']:.0f} s simulated, {m['wall_s']:.0f} s wall"
          f"{' (quick)' if quick else ''}; written to {where}", file=sys.stderr)


@app.command("bench")
def bench(
    suite: Annotated[str, typer.Option(metavar="NAME", help="model (default): the simulator's own scenarios and targets; htsim: side by side with htsim (S1, S2, S3)")] = "model",
    scenario: Annotated[Optional[list[str]], typer.Option("--scenario", metavar="NAME", help="--suite htsim: run only this scenario (repeatable): s1, s2, s3-tcp-N, s3-mptcp-N (N = 1, 10, 100, 1000)")] = None,
    runs: Annotated[Optional[int], typer.Option(help="runs per scenario (default 5, 3 with --quick)")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="model suite: 10 s of simulated time instead of 60 s")] = False,
    duration: Annotated[Optional[str], typer.Option(metavar="TIME", help="--suite htsim: simulate this long instead (e.g. \"60 s\"), in both simulators")] = None,
    htsim: Annotated[Optional[str], typer.Option(metavar="PATH", help="--suite htsim: also run this htsim_bench, paired with mptcplab (A B A B ...), and give the ratios")] = None,
    json_out: Annotated[Optional[str], typer.Option("--json", metavar="FILE", help="also write the figures as JSON (the medians; with --suite htsim every run too)")] = None,
    plot: Annotated[Optional[str], typer.Option(metavar="FILE", help="--suite htsim: draw S3's ns per packet against N (.svg, .png or .pdf)")] = None,
    pcap: Annotated[bool, typer.Option("--pcap", help="model suite: write packet captures in every run (their cost; docs/pcap.md)")] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar on stderr")] = False,
) -> None:
    """benchmark the simulator: its own scenarios, or side by side with htsim (--suite htsim)"""
    from .._bench import run_bench

    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = CountProgress("bench runs", total, done)
        bar.update(done)

    try:
        code = run_bench(runs=runs, quick=quick, json_out=json_out, pcap=pcap,
                         progress=progress if progress_enabled(no_progress) else None,
                         suite=suite, scenarios=scenario, duration=duration, htsim=htsim, plot=plot)
    finally:
        if bar is not None:
            bar.close()
    if code:
        raise typer.Exit(code)
