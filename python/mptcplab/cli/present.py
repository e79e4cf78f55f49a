"""How the command line shows things: tables (rich on a terminal, plain text elsewhere, so
pipes and logs stay greppable), progress bars with an ETA (on a terminal only: off in CI,
in pipes and with --no-progress), and the run summary. Nothing below the CLI imports this
module; the pages the package writes use `mptcplab.tables`."""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from ..tables import fmt_bytes, fmt_count, fmt_float, fmt_pct, num, render_table


def is_terminal(stream: TextIO) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


def progress_enabled(no_progress: bool = False, stream: TextIO | None = None) -> bool:
    """Progress bars only on a terminal, never in CI (`CI` set) or with --no-progress."""
    if no_progress or os.environ.get("CI", "").strip().lower() not in ("", "0", "false"):
        return False
    return is_terminal(stream if stream is not None else sys.stderr)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int], title: str | None = None,
          stream: TextIO | None = None) -> None:
    """Print a table: a rich one on a terminal, `render_table`'s plain text elsewhere."""
    out = stream if stream is not None else sys.stdout
    if not is_terminal(out):
        if title:
            print(title, file=out)
        print(render_table(headers, rows, right), file=out)
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, title_justify="left", header_style="bold", box=None, pad_edge=False)
    for i, h in enumerate(headers):
        t.add_column(h, justify="right" if i in right else "left", no_wrap=True)
    for r in rows:
        t.add_row(*r)
    # Never crop a cell: a table wider than the terminal is as wide as it needs (the
    # terminal wraps its lines, as it does the plain table's).
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    console = Console(file=out)
    console.width = max(console.width, sum(widths) + 2 * (len(widths) - 1))
    console.print(t)


class _Bar:
    """A rich progress bar on stderr, started only once the work has taken `after_s`."""

    def __init__(self, label: str, unit: str, after_s: float) -> None:
        self.label, self.unit, self.after_s = label, unit, after_s
        self.start = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def _show(self, done: float, total: float) -> None:
        if self.bar is None:
            if time.monotonic() - self.start < self.after_s:
                return
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            cols = [TextColumn("{task.description}"), BarColumn(), TaskProgressColumn()]
            if self.unit:
                cols.append(MofNCompleteColumn())
            cols += [TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
            self.bar = Progress(*cols, console=Console(file=sys.stderr), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


class RunProgress(_Bar):
    """`simulate(progress=...)`'s callback: simulated seconds against the run's end."""

    def __init__(self, label: str = "simulating", after_s: float = 1.0) -> None:
        super().__init__(label, "", after_s)

    def __call__(self, sim_s: float, end_s: float) -> None:
        self._show(sim_s, end_s)


class CountProgress(_Bar):
    """Counted work (sweep points, benchmark runs): `update(done)`, `close()`; the shape
    `run_sweep` takes (`SweepProgress`)."""

    def __init__(self, label: str, total: int, done: int = 0, after_s: float = 0.0) -> None:
        super().__init__(label, "points", after_s)
        self.total = total
        self.update(done)

    def update(self, done: int, force: bool = False) -> None:
        self._show(done, self.total)


class StageProgress:
    """One bar per stage (a reproduction's experiments): `(stage, done, total)`; a stage
    that finishes stays on screen until `close()`."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.tasks: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.bar is None:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("runs · elapsed"), TimeElapsedColumn(), TextColumn("ETA"),
                                TimeRemainingColumn(), console=Console(file=sys.stderr))
            self.bar.start()
        if stage not in self.tasks:
            self.tasks[stage] = self.bar.add_task(stage, total=total)
        self.bar.update(self.tasks[stage], completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def say_through(bar: Any) -> Any:
    """A `log` callback that prints above a running bar (rich keeps the bar at the bottom)."""

    def say(message: str) -> None:
        live = getattr(bar, "bar", None)
        if live is not None:
            live.console.print(message, markup=False, highlight=False)
        else:
            print(message, file=sys.stderr, flush=True)

    return say


def run_progress(no_progress: bool, label: str = "simulating") -> RunProgress | None:
    return RunProgress(label) if progress_enabled(no_progress) else None


def count_progress(no_progress: bool, label: str) -> Any:
    """A factory `(total, done) -> CountProgress` for `run_sweep`, or False (no bar)."""
    if not progress_enabled(no_progress):
        return False
    return lambda total, done: CountProgress(label, total, done)


# -- the run summary ---------------------------------------------------------------------------
def _rows(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    if not columns:
        return []
    n = max(len(v) for v in columns.values())
    return [{k: (v[i] if i < len(v) else None) for k, v in columns.items()} for i in range(n)]


def summary_tables(result: Any) -> tuple[str, list[tuple[list[str], list[list[str]], set[int]]]]:
    """What `mptcplab run` prints: a head line, then tables: one line per flow, one per
    subflow, and the streams' delay figures when there are any."""
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
    tables = [(["flow", "kind", "cc", "scheduler", "path manager", "subflows", "goodput Mbit/s",
                "delivered", "sent", "retrans", "completed"], flow_rows, {5, 6, 7, 8, 9, 10})]
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
    if sub_rows:
        tables.append((["subflow", "path", "Mbit/s", "sent", "acked", "retrans", "mean srtt ms"], sub_rows,
                       {2, 3, 4, 5, 6}))
    delay = _delay_table(result)
    if delay:
        tables.append(delay)
    fct = _fct_table(result)
    if fct:
        tables.append(fct)
    return head, tables


def _fct_table(result: Any) -> tuple[list[str], list[list[str]], set[int]] | None:
    """Flow completion times by size bucket (`Result.fct_summary`), for runs over a
    generated topology with bounded flows."""
    from ..result import fct_buckets

    cols = result.columns("fct") or {}
    bounded = [z == z for z in cols.get("size_bytes", [])]
    if not any(src and b for src, b in zip(cols.get("src", []), bounded)):
        return None
    ms = lambda v: "-" if v != v else f"{v:.2f}"  # noqa: E731 - NaN: none done
    rows = [[r["bucket"], str(r["flows"]), str(r["done"]), ms(r["mean_ms"]), ms(r["p50_ms"]), ms(r["p99_ms"])]
            for r in fct_buckets(cols["size_bytes"], cols["fct_s"])]
    return (["flow size", "flows", "done", "mean FCT ms", "p50 ms", "p99 ms"], rows, {1, 2, 3, 4, 5})


def _delay_table(result: Any) -> tuple[list[str], list[list[str]], set[int]] | None:
    """Per flow with delay samples (streams, `run.delay_samples`): seed 002's protocol
    delay and HoL degree, model (Eq. 2, 7) and measured, and the frames DATA_ACKed."""
    cols = result.columns("delay_samples") or {}
    if not cols.get("flow"):
        return None
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
    return (["flow", "samples", "υ av/max ms (Eq. 2)", "ζ av/max ms", "measured av/max ms", "ζ measured av/max ms",
             "frames acked"], rows, {1, 2, 3, 4, 5, 6})


def format_summary(result: Any) -> str:
    """The run summary as plain text (what `mptcplab run` prints off a terminal)."""
    head, tables = summary_tables(result)
    return "\n\n".join([head, *(render_table(h, r, right) for h, r, right in tables)])


def print_summary(result: Any) -> None:
    """The run summary on stdout: rich tables on a terminal, else `format_summary`."""
    if not is_terminal(sys.stdout):
        print(format_summary(result))
        return
    head, tables = summary_tables(result)
    print(head)
    for h, r, right in tables:
        print()
        table(h, r, right)
