"""What the core offers and whether a scenario is right: `mptcplab list`, `schema` and
`validate` (a scenario file's check, or the sim-vs-kernel matrix without one)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .. import _core
from ..errors import ScenarioError
from .app import Profile, app
from .present import CountProgress, progress_enabled, say_through, table
from .run import load_scenario


@app.command("list")
def list_components(
    markdown: Annotated[bool, typer.Option("--markdown", help="print a Markdown table")] = False,
) -> None:
    """list congestion controls, schedulers, path managers, apps"""
    if markdown:
        print("### Congestion controls\n")
        print(_core.congestion_controls_markdown())
        print("### Schedulers, path managers, applications and profiles\n")
        print(_core.components_markdown())
        print("### Profiles (`run.profile`)\n")
        print(_core.profiles_markdown())
        return
    comps = [[str(x) for x in c] for c in _core.components()]
    table(["kind", "name", "description"], comps, right=set())


@app.command("schema")
def schema(out: Annotated[Optional[str], typer.Option(metavar="FILE", help="write to FILE instead of stdout")] = None) -> None:
    """print the scenario JSON Schema"""
    pretty = json.dumps(json.loads(_core.schema_json()), indent=2, ensure_ascii=False) + "\n"
    if out:
        Path(out).write_text(pretty, encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(pretty)


MATRIX = "the sim-vs-kernel matrix (no SCENARIO)"


@app.command("validate")
def validate(
    scenario: Annotated[Optional[str], typer.Argument(metavar="SCENARIO", help="scenario file to check; omit it to run the sim-vs-kernel matrix")] = None,
    print_: Annotated[bool, typer.Option("--print", help="with SCENARIO: print the normalised scenario as JSON")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="2 scenarios, 2 runs of 4 s per backend (CI, ~1 min)", rich_help_panel=MATRIX)] = False,
    reps: Annotated[Optional[int], typer.Option(metavar="N", help="runs per backend and scenario (default 3; quick 2)", rich_help_panel=MATRIX)] = None,
    out: Annotated[Optional[str], typer.Option(metavar="DIR", help="where to write validate.txt/.json/.csv and reproduction.json (default validate/ or validate-quick/)", rich_help_panel=MATRIX)] = None,
    family: Annotated[Optional[list[str]], typer.Option(metavar="NAME", help="core (default), bounded-buffer (seed 001's regime) or lossy-start (seed 003's); repeatable", rich_help_panel=MATRIX)] = None,
    only: Annotated[Optional[str], typer.Option(metavar="TEXT", help='only the points whose "label/cc" contains TEXT', rich_help_panel=MATRIX)] = None,
    profile: Annotated[Optional[Profile], typer.Option(help="the simulator's profile (default upstream, the kernel's own)", rich_help_panel=MATRIX)] = None,
    kernel_data: Annotated[Optional[str], typer.Option(metavar="DIR", help="stored kernel runs (docs/validate/kernel): use them, measure and store the missing ones", rich_help_panel=MATRIX)] = None,
    stored_only: Annotated[bool, typer.Option("--stored-only", help="with --kernel-data: compare with the stored runs only (no root; a missing run is an error)", rich_help_panel=MATRIX)] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar on stderr", rich_help_panel=MATRIX)] = False,
) -> None:
    """check a scenario file; without one, run the sim-vs-kernel matrix (docs/kernel.md)

    `mptcplab validate SCENARIO` checks a scenario file. `mptcplab validate` without a
    scenario runs the fixed sim-vs-kernel matrix (scenarios/validate/, root and Linux MPTCP
    needed) and prints, per scenario and CC, the sim/kernel goodput ratio, each subflow's
    share difference and both backends' RTT, with 95 % CIs; the last line is the worst ratio.
    """
    if scenario is None:
        if print_:
            raise ScenarioError("--print", "shows a scenario file normalised: give SCENARIO")
        from ..kernel.validate import run_validate

        where = out or ("validate-quick" if quick else "validate")
        bar = CountProgress("validate runs", 0) if progress_enabled(no_progress) else None

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar.total = total
                bar.update(done)

        try:
            report = run_validate(quick=quick, reps=reps, out=where, families=family or None, only=only,
                                  profile=profile.value if profile else "upstream", kernel_data=kernel_data,
                                  stored_only=stored_only, progress=progress if bar is not None else None,
                                  log=say_through(bar) if bar is not None else None)
        finally:
            if bar is not None:
                bar.close()
        print(report.text())
        print(f"\nwrote {where}/validate.txt, validate.json, validate.csv and reproduction.json "
              f"(`mptcplab report {where}`)", file=sys.stderr)
        return
    for flag, given in (("--quick", quick), ("--reps", reps is not None), ("--out", out is not None),
                        ("--family", bool(family)), ("--only", only is not None),
                        ("--profile", profile is not None), ("--kernel-data", kernel_data is not None),
                        ("--stored-only", stored_only)):
        if given:
            raise ScenarioError(flag, "belongs to the sim-vs-kernel matrix (`mptcplab validate` without SCENARIO)")
    data = load_scenario(scenario).validate().to_dict()
    if print_:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return
    counts = ", ".join(
        f"{len(data[k])} {k}" for k in ("links", "paths", "connections", "flows", "hosts")
        if isinstance(data.get(k), list) and data[k]
    )
    print(f"ok: {scenario}: {counts}")
