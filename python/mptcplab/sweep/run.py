"""Running a sweep: on local cores (ProcessPoolExecutor) or on a Dask cluster.

Points run in worker processes; the driver stores each finished point at once
(`Store.write`, atomic) and skips points already stored, so a killed sweep resumes
where it stopped. dask is imported only when `scheduler` is given.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from ..errors import ScenarioError
from .plan import Plan, Point, load_plan
from .store import Store, plain_columns

__all__ = ["run_sweep", "gather", "run_point", "SweepProgress", "VersionMismatch"]


class VersionMismatch(ScenarioError):
    """A (Dask) worker runs another mptcplab version than the driver. The CLI reports it
    on one line (`error: --scheduler: ...`) and exits 2."""

    def __init__(self, message: str) -> None:
        super().__init__("--scheduler", message)

    def __reduce__(self):  # travels back from Dask workers
        return (type(self), (self.message,))


def _version() -> str:
    """The version a point is stored under: the package's and the model's (a hash of the
    core's sources), so points of another build are never taken for this one's."""
    from .._version import model_version

    return model_version()


def run_point(scenario_json: str, expected_version: str, marks_s: Sequence[float] = (),
              backend: str = "sim") -> dict[str, Any]:
    """Run one point (in a worker, or in the driver for the kernel backend); return its
    record (summary tables as plain columns, and with `marks_s` the `marks` of
    `marks_record`)."""
    import json

    from ..api import simulate
    from ..scenario import Scenario

    version = _version()
    if version != expected_version:
        raise VersionMismatch(f"worker has mptcplab {version}, the sweep runs {expected_version}")
    started = time.time()
    t0 = time.perf_counter()
    scenario = Scenario.from_dict(json.loads(scenario_json))
    if backend == "kernel":
        from ..kernel import run_kernel

        res = run_kernel(scenario)
    else:
        res = simulate(scenario)
    record = {
        "version": version,
        "backend": backend,
        "started_unix_s": round(started, 6),
        "summary": plain_columns(res.columns("summary")),
        "subflow_summary": plain_columns(res.columns("subflow_summary")),
        # Per flow: start, size and completion time (empty for the kernel backend).
        "fct": plain_columns(res.columns("fct")),
    }
    if marks_s:
        record["marks"] = marks_record(res, marks_s)
    record["wall_s"] = round(time.perf_counter() - t0, 6)
    return record


def marks_record(res: Any, marks_s: Sequence[float]) -> dict[str, Any]:
    """What a run delivered by each mark (sampled times, seconds; 0 = the start):

    * ``flows``: ``{flow: [bytes delivered to the application by each mark]}``;
    * ``subflows``: per subflow (``flow``, ``subflow``, ``path`` columns) ``bytes_acked``
      by each mark and ``mean_srtt_ms``, the mean of the SRTT samples in
      (first mark, last mark] (samples before the handshake, SRTT 0, left out).

    A mark that is not a sample time (a multiple of run.sample_interval within the
    run) raises `ScenarioError` on field ``<marks>``."""
    conns = res.timeseries.connections
    subs = res.timeseries.subflows
    marks = [float(m) for m in marks_s]
    sampled = conns["time_s"].to_numpy()
    for t in marks:
        if t != 0 and not (abs(sampled - t) < 1e-9).any():
            raise ScenarioError("<marks>", f"no sample at {t} s: marks must be multiples of "
                                "run.sample_interval within the run")

    def by_mark(frame: Any, column: str) -> list[float]:
        """`column` at each mark; 0 at t = 0 and before the first sample of `frame`
        (a subflow opened after t has acked nothing by t)."""
        out = []
        for t in marks:
            rows = frame[(frame["time_s"] - t).abs() < 1e-9]
            out.append(float(rows[column].iloc[0]) if t != 0 and not rows.empty else 0.0)
        return out

    flows = {str(flow): by_mark(frame, "bytes_delivered") for flow, frame in conns.groupby("flow", sort=False)}
    cols: dict[str, list[Any]] = {"flow": [], "subflow": [], "path": [], "bytes_acked": [], "mean_srtt_ms": []}
    lo, hi = marks[0], marks[-1]
    for (flow, sub), frame in subs.groupby(["flow", "subflow"], sort=True):
        window = frame[(frame["time_s"] > lo + 1e-9) & (frame["time_s"] <= hi + 1e-9) & (frame["srtt_ms"] > 0)]
        cols["flow"].append(str(flow))
        cols["subflow"].append(int(sub))
        cols["path"].append(str(frame["path"].iloc[0]))
        cols["bytes_acked"].append(by_mark(frame, "bytes_acked"))
        cols["mean_srtt_ms"].append(float(window["srtt_ms"].mean()) if not window.empty else None)
    return {"time_s": marks, "flows": flows, "subflows": cols}


def _die_with_parent() -> None:
    """Pool workers get SIGKILL when the driver dies (Linux), so a killed sweep leaves
    no orphans running points that nobody will store."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort, not on every platform
        pass


def _worker_version() -> str:
    return _version()


class SweepProgress:
    """`sweep: 12/40 points (30 %) · 3 running · 4.1 s elapsed · ETA 9 s` on stderr.
    Redrawn in place on a terminal; elsewhere a line at most every `every_s` seconds."""

    def __init__(self, total: int, done: int, stream: TextIO | None = None, every_s: float = 10.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total, self.done, self.start_done = total, done, done
        self.start = time.monotonic()
        self.last = 0.0
        self.every_s = every_s

    def text(self) -> str:
        wall = time.monotonic() - self.start
        ran = self.done - self.start_done
        left = self.total - self.done
        eta = "?" if ran == 0 else _secs(wall / ran * left)
        pct = 100.0 * self.done / self.total if self.total else 100.0
        width = 24
        fill = int(width * self.done / self.total) if self.total else width
        bar = "#" * fill + "." * (width - fill)
        return f"sweep [{bar}] {self.done}/{self.total} points ({pct:3.0f} %) · {_secs(wall)} elapsed · ETA {eta}"

    def update(self, done: int, force: bool = False) -> None:
        self.done = done
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + self.text() + "\x1b[K")
        elif force or now - self.last >= self.every_s:
            self.stream.write(self.text() + "\n")
            self.last = now
        else:
            return
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _secs(s: float) -> str:
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min"


def run_sweep(
    plan: Plan | str | Path,
    out: str | Path | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    allow_version_mix: bool = False,
    progress: bool | SweepProgress | Callable[[int, int], Any] = True,
    log: Callable[[str], None] | None = None,
) -> Any:
    """Run every point of `plan` not yet in the store at `out`; return the gathered
    DataFrame (one row per point and flow, kept metrics as columns). `progress`: True for
    the plain progress line, False for none, a `SweepProgress`, or a factory
    `(total, done) -> bar` whose bar has `update(done, force=False)` and `close()` (the
    CLI's rich bar)."""
    if not isinstance(plan, Plan):
        plan = load_plan(plan)
    if out is None:
        out = Path("sweeps") / plan.name
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ScenarioError("--workers", f"expected a positive integer, got {workers!r}")
    version = _version()
    store = Store(out)
    store.open(plan.name, version, allow_version_mix, keys=[*plan.parameters, "flow"])
    points = plan.points()
    todo: list[Point] = []
    seen: set[str] = set()
    for p in points:
        k = p.key(version)
        found = store.find(p.scenario_hash, p.seed, version, allow_version_mix)
        if found is not None:
            try:
                store.read(found)
                continue
            except (OSError, ValueError):
                found.unlink(missing_ok=True)  # unreadable (not written by us atomically): redo
        if k not in seen:  # the same scenario and seed twice in a plan runs once
            seen.add(k)
            todo.append(p)
    total = len({p.key(version) for p in points})
    say = log or (lambda m: print(m, file=sys.stderr))
    say(f"sweep '{plan.name}': {len(points)} points, {total - len(todo)} already stored, {len(todo)} to run"
        f" -> {store.root}")
    if isinstance(progress, SweepProgress):
        bar: Any = progress
    elif callable(progress):
        bar = progress(total, total - len(todo))
    else:
        bar = SweepProgress(total, total - len(todo)) if progress else None

    done = total - len(todo)

    def finished(p: Point, record: dict[str, Any]) -> None:
        nonlocal done
        record.update(params=p.params, rep=p.rep, seed=p.seed, scenario_hash=p.scenario_hash,
                      scenario=p.scenario_json)
        store.write(p.key(version), record)
        done += 1
        if bar:
            bar.update(done)

    kernel = [p for p in todo if p.kernel]
    rest = [p for p in todo if not p.kernel]
    try:
        if bar and todo:
            bar.update(done, force=True)
        if kernel:  # refuse early, in one line, on a machine that cannot run them
            from ..kernel import check_environment

            check_environment()
        for p in kernel:  # kernel-backend points: one at a time, in this process
            finished(p, run_point(p.scenario_json, version, p.marks_s, backend="kernel"))
        if rest:
            if scheduler:
                _run_dask(rest, scheduler, version, finished)
            else:
                _run_local(rest, workers, version, finished)
    finally:
        if bar:
            bar.update(done, force=True)
            bar.close()
    frame = gather(plan, store.root, allow_version_mix=allow_version_mix)
    _write_results(frame, store.root / "results.csv")
    return frame


def _run_local(points: list[Point], workers: int | None, version: str,
               finished: Callable[[Point, dict[str, Any]], None]) -> None:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    n = min(workers or os.cpu_count() or 1, len(points))
    if n == 1:
        for p in points:
            finished(p, run_point(p.scenario_json, version, p.marks_s))
        return
    with ProcessPoolExecutor(max_workers=n, initializer=_die_with_parent) as ex:
        pending = {ex.submit(run_point, p.scenario_json, version, p.marks_s): p for p in points}
        try:
            while pending:
                ready, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in ready:
                    p = pending.pop(fut)
                    finished(p, fut.result())
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise


def _run_dask(points: list[Point], address: str, version: str,
              finished: Callable[[Point, dict[str, Any]], None]) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise ScenarioError("--scheduler", "needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        client = Client(address, timeout="20s")
    except (OSError, TimeoutError) as err:
        raise ScenarioError("--scheduler", f"cannot connect to '{address}': {err}") from None
    try:
        versions = client.run(_worker_version)
        bad = {w: v for w, v in versions.items() if v != version}
        if bad:
            w, v = next(iter(bad.items()))
            raise VersionMismatch(f"{len(bad)} dask worker(s) run another mptcplab version "
                                  f"(e.g. {w}: {v}); the sweep runs {version}")
        futs = {}
        for p in points:
            fut = client.submit(run_point, p.scenario_json, version, p.marks_s, pure=False)
            futs[fut] = p
        for fut in as_completed(list(futs)):
            finished(futs[fut], fut.result())
    finally:
        client.close()


# -- results --------------------------------------------------------------------------------
def gather(plan: Plan | str | Path, out: str | Path, allow_version_mix: bool = False,
           version: str | None = None) -> Any:
    """The stored points of `plan` as a DataFrame: one row per point and flow, with the
    parameters, repetition, seed, version and kept metrics (subflow metrics as
    ``COLUMN#<subflow>``). Points not stored yet are missing."""
    import pandas as pd

    if not isinstance(plan, Plan):
        plan = load_plan(plan)
    version = version or _version()
    store = Store(out)
    rows: list[dict[str, Any]] = []
    for p in plan.points():
        path = store.find(p.scenario_hash, p.seed, version, allow_version_mix)
        if path is None:
            continue
        rec = store.read(path)
        rows.extend(_rows(plan, p, rec))
    return pd.DataFrame(rows)


def _rows(plan: Plan, p: Point, rec: dict[str, Any]) -> Iterable[dict[str, Any]]:
    summary = rec["summary"]
    subs = rec["subflow_summary"]
    # (A record stored before fct was kept has none: its fct metrics are empty.)
    fct = rec.get("fct") or {}
    fct_row = {f: j for j, f in enumerate(fct.get("flow", []))}
    flows = summary.get("flow", [])
    for i, flow in enumerate(flows):
        row: dict[str, Any] = {"point": p.index, **p.params, "rep": p.rep, "seed": p.seed,
                               "version": rec.get("version"), "flow": flow}
        for table, col in plan.metrics:
            if table == "summary":
                row[col] = summary.get(col, [None] * len(flows))[i]
            elif table == "fct":
                j = fct_row.get(flow)
                row[col] = fct[col][j] if j is not None and col in fct else None
            else:
                for j, f in enumerate(subs.get("flow", [])):
                    if f == flow:
                        row[f"{col}#{subs['subflow'][j]}"] = subs.get(col, [None])[j]
        yield row


def _write_results(frame: Any, path: Path) -> None:
    from .store import atomic_write

    atomic_write(path, frame.to_csv(index=False).encode())
