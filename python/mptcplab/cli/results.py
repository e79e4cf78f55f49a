"""Saved results as figures and pages: `mptcplab plot` and `mptcplab report`."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import ScenarioError
from .app import app


@app.command("plot")
def plot(
    results: Annotated[str, typer.Argument(metavar="RESULTS", help="run directory (run --out), sweep store or reproduction")],
    kind_opt: Annotated[Optional[str], typer.Option("--kind", metavar="KIND", help="run: throughput, cwnd, srtt, ooo, all (default) or scatter; sweep: bar (default), cdf or scatter")] = None,
    flow: Annotated[Optional[str], typer.Option(metavar="NAME", help="only this flow")] = None,
    metric: Annotated[Optional[str], typer.Option(metavar="COLUMN", help="sweep: summary column to plot (default goodput_mbps)")] = None,
    figure: Annotated[Optional[int], typer.Option(metavar="N", help="reproduction: only figure N (default: every figure)")] = None,
    out: Annotated[Optional[str], typer.Option(metavar="FILE", help="FILE.png, .svg or .pdf (default: RESULTS/KIND.png); with several figures, FILE-N.png")] = None,
) -> None:
    """plot a saved run, a sweep or a reproduction (docs/report.md)"""
    from .. import plot
    from ..report import Run, Sweep, open_results

    if out is not None:
        plot.check_format(out)  # before any drawing
    src = open_results(results)
    base = Path(results)
    base = base.parent if base.is_file() else base
    if isinstance(src, Run):
        kind = kind_opt or "all"
        if kind not in (*plot.RUN_KINDS, "all", "scatter"):
            raise ScenarioError("--kind", f"for a run: expected one of {', '.join(plot.RUN_KINDS)}, all or scatter, "
                                f"got {kind!r}")
        if figure is not None or metric is not None:
            raise ScenarioError("--figure" if figure is not None else "--metric",
                                "only for a reproduction (--figure) or a sweep (--metric)")
        if kind == "scatter":
            figs = [("scatter", plot.throughput_delay(src.result, flow=flow))]
        else:
            figs = [(kind, plot.timeseries(src.result, kind=kind, flow=flow))]
    elif isinstance(src, Sweep):
        kind = kind_opt or "bar"
        if figure is not None:
            raise ScenarioError("--figure", "only for a reproduction; a sweep has --kind bar|cdf|scatter")
        figs = [(kind, plot.draw(src.figure(kind, metric=metric or "goodput_mbps", flow=flow)))]
    else:
        if kind_opt is not None or metric is not None or flow is not None:
            raise ScenarioError("--kind" if kind_opt else "--metric" if metric else "--flow",
                                "a reproduction's figures are fixed; choose one with --figure N")
        if not src.figures:
            raise ScenarioError("<results>", f"'{results}' has no figures")
        numbers = [figure] if figure is not None else list(range(1, len(src.figures) + 1))
        for n in numbers:
            if not 1 <= n <= len(src.figures):
                raise ScenarioError("--figure", f"expected 1 to {len(src.figures)}, got {n}")
        figs = [(f"figure-{n}", plot.draw(src.figures[n - 1], field=f"figures[{n - 1}]")) for n in numbers]
    for name, fig in figs:
        if out is None:
            target = base / f"{name}.png"
        elif len(figs) > 1:
            o = Path(out)
            target = o.with_name(f"{o.stem}-{name.rsplit('-', 1)[-1]}{o.suffix}")
        else:
            target = Path(out)
        print(f"wrote {plot.save(fig, target)}")


@app.command("report")
def report(
    results: Annotated[str, typer.Argument(metavar="RESULTS", help="run directory (run --out), sweep store or reproduction")],
    out: Annotated[Optional[str], typer.Option(metavar="FILE", help="HTML file (default: RESULTS/report.html)")] = None,
    png: Annotated[bool, typer.Option("--png", help="embed figures as PNG instead of SVG")] = False,
) -> None:
    """write a self-contained HTML report (docs/report.md)"""
    from ..report import write_report

    print(f"wrote {write_report(results, out=out, figure_format='png' if png else 'svg')}")
