"""`mptcplab run` (a scenario on the simulator or the kernel) and `mptcplab pcap-summary`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import ScenarioError
from .app import Backend, app
from .present import print_summary, run_progress


def load_scenario(arg: str | None):  # noqa: ANN201 - a Scenario
    from ..scenario import Scenario

    return Scenario.default() if arg is None else Scenario.from_toml(Path(arg))


def duration_arg(text: str | None) -> float | str | None:
    """Seconds as a number, or a duration with its unit ("10 s"), which the core checks."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return text


@app.command("run")
def run(
    scenario: Annotated[Optional[str], typer.Argument(metavar="SCENARIO", help="scenario TOML file")] = None,
    seed: Annotated[Optional[int], typer.Option(help="override [run].seed")] = None,
    duration: Annotated[Optional[str], typer.Option(metavar="D", help='override [run].duration: seconds or "10 s"')] = None,
    out: Annotated[Optional[str], typer.Option(metavar="DIR", help="save Parquet tables, scenario.toml and meta.json to DIR")] = None,
    trace: Annotated[Optional[str], typer.Option(metavar="FILE", help="write the per-packet and per-ACK event trace (CSV) to FILE")] = None,
    trace_flow: Annotated[Optional[list[str]], typer.Option("--trace-flow", metavar="NAME", help="trace only this flow (repeatable; default: every flow)")] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar on stderr")] = False,
    backend: Annotated[Backend, typer.Option(help="sim (default) or kernel: the Linux MPTCP stack in network namespaces (docs/kernel.md)")] = Backend.sim,
    pcap: Annotated[Optional[str], typer.Option(metavar="DIR", help="write one packet capture per path into DIR (<path>.pcap; docs/pcap.md)")] = None,
) -> None:
    """run a scenario (the embedded default without one)"""
    from ..api import simulate

    on_kernel = backend == Backend.kernel

    scn = load_scenario(scenario)
    dur = duration_arg(duration)
    progress = run_progress(no_progress, "running on the kernel" if on_kernel else "simulating")
    try:
        if on_kernel:
            if trace or trace_flow:
                raise ScenarioError("--trace", "the kernel backend writes no packet trace; the sim backend does")
            from ..kernel import run_kernel

            result = run_kernel(scn, seed=seed, duration=dur, progress=progress, pcap=pcap)
        else:
            result = simulate(scn, seed=seed, duration=dur, progress=progress,
                              trace=trace, trace_flows=trace_flow, pcap=pcap)
    finally:
        if progress is not None:
            progress.close()
    print_summary(result)
    if out:
        where = result.save(out)
        print(f"\nwrote {where}/ (Parquet tables, scenario.toml, meta.json)")
    if trace:
        print(f"wrote trace {trace}")
    if pcap:
        print(f"wrote captures {pcap}/ (one pcap a path; `mptcplab pcap-summary {pcap}`)")


@app.command("pcap-summary")
def pcap_summary(
    captures: Annotated[list[str], typer.Argument(metavar="DIR|FILE...", help="a --pcap directory, or capture files")],
    as_json: Annotated[bool, typer.Option("--json", help="print the rows as JSON")] = False,
) -> None:
    """per-subflow bytes, data-sequence progress and reordering from a run's captures (tshark; docs/pcap.md)"""
    from ..pcap import TsharkMissing, format_summary, summarize

    try:
        rows = summarize(captures[0] if len(captures) == 1 else captures)
    except TsharkMissing as err:
        raise ScenarioError("tshark", str(err)) from None
    if as_json:
        from dataclasses import asdict

        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        print(format_summary(rows))
