"""`Result`: the output of one run as pandas DataFrames, saved as Parquet.

pandas and pyarrow are imported only when a Result is built or loaded, so that
`import mptcplab` stays fast.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError
from .scenario import PathLike, Scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Result", "Timeseries", "TABLES", "TIMESERIES_TABLES", "fct_buckets"]

TIMESERIES_TABLES = ("subflows", "connections", "links")
TABLES = ("summary", "subflow_summary", *TIMESERIES_TABLES, "subflow_events", "delay_samples", "frames", "fct")
# `Result.fct_summary`'s default size buckets (bytes): the short / medium / long split of
# data-centre transport studies (pFabric, Alizadeh et al. SIGCOMM 2013, Sec. 5).
FCT_BUCKETS = (0, 100_000, 10_000_000, float("inf"))
# Layout of a saved result directory. 2: the subflow series' throughput_mbps counts bytes
# acknowledged at the subflow level on both backends, and sent_mbps the bytes transmitted
# (format 1's simulator results had the transmitted rate under throughput_mbps).
FORMAT_VERSION = 2


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default method)."""
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _bucket_label(lo: float, hi: float) -> str:
    def fmt(b: float) -> str:
        if b == float("inf"):
            return "inf"
        for unit, k in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
            if b >= k:
                return f"{b / k:g} {unit}"
        return f"{b:g} B"
    return f"({fmt(lo)}, {fmt(hi)}]"


def fct_buckets(sizes: list[float], fcts: list[float], buckets: tuple[float, ...] = FCT_BUCKETS) -> list[dict[str, Any]]:
    """`Result.fct_summary`'s rows from the `fct` columns, without pandas (the CLI prints
    them too): per right-closed size bucket and "all", the bounded flows, those done, and
    the mean, p50 and p99 of the done ones' FCT in ms (NaN when none is done)."""
    edges = [float(b) for b in buckets]
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"buckets: expected increasing edges in bytes, got {buckets!r}")
    flows = [(z, t) for z, t in zip(sizes, fcts) if z == z]  # NaN size: unbounded
    groups = [(_bucket_label(lo, hi), [f for f in flows if lo < f[0] <= hi]) for lo, hi in zip(edges, edges[1:])]
    rows = []
    for name, g in groups + [("all", flows)]:
        done = sorted(t * 1e3 for _, t in g if t == t)
        nan = float("nan")
        rows.append({
            "bucket": name,
            "flows": len(g),
            "done": len(done),
            "mean_ms": sum(done) / len(done) if done else nan,
            "p50_ms": _percentile(done, 50) if done else nan,
            "p99_ms": _percentile(done, 99) if done else nan,
        })
    return rows


def _packed(v: Any) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], (bytes, bytearray))


def unpack_column(v: Any, as_array: bool = False) -> Any:
    """A core column as it is used: the time series' numeric columns come packed,
    `(typecode, bytes)` (_core.pyi), 8 bytes a value instead of a Python object each.
    `as_array`: a numpy array (int64 or float64, the dtypes pandas gives the same values
    as lists), else a list of Python ints or floats. Other columns pass through."""
    if not _packed(v):
        return v
    code, data = v
    if as_array:
        import numpy as np

        return np.frombuffer(data, dtype=np.float64 if code == "d" else np.int64)
    from array import array

    return array(code, data).tolist()


def _frame(columns: Any) -> pd.DataFrame:
    """Core columns (dict of equal-length lists, arrays or packed columns) -> DataFrame.
    Unknown extra columns are kept as they come."""
    import pandas as pd

    if columns is None:
        return pd.DataFrame()
    if isinstance(columns, pd.DataFrame):
        return columns
    if not isinstance(columns, Mapping):
        raise TypeError(f"expected a dict of columns from the core, got {type(columns).__name__}")
    return pd.DataFrame({str(k): unpack_column(v, as_array=True) for k, v in columns.items()})


def _plain_meta(meta: Any) -> dict[str, Any]:
    """Meta may come as scalars or as one-row columns; return scalars."""
    out: dict[str, Any] = {}
    for k, v in dict(meta or {}).items():
        if isinstance(v, (list, tuple)) and len(v) == 1:
            v = v[0]
        out[str(k)] = v
    return out


class Timeseries:
    """The sampled time series of a run: `.subflows`, `.connections`, `.links`
    (DataFrames, built on first access). In `.subflows`, throughput_mbps is the bytes
    acknowledged at the subflow level per sample interval (the kernel backend's
    Δ tcpi_bytes_acked) and sent_mbps the bytes transmitted, retransmissions included
    (reference metrics.md §6.1's "throughput"), on both backends."""

    __slots__ = ("_result",)

    def __init__(self, result: Result) -> None:
        self._result = result

    @property
    def subflows(self) -> pd.DataFrame:
        return self._result.table("subflows")

    @property
    def connections(self) -> pd.DataFrame:
        return self._result.table("connections")

    @property
    def links(self) -> pd.DataFrame:
        return self._result.table("links")

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in TIMESERIES_TABLES:
            raise KeyError(name)
        return self._result.table(name)

    def keys(self) -> tuple[str, ...]:
        return TIMESERIES_TABLES

    def items(self) -> Iterator[tuple[str, pd.DataFrame]]:
        return ((k, self._result.table(k)) for k in TIMESERIES_TABLES)

    def __repr__(self) -> str:
        rows = ", ".join(f"{k}={self._result.num_rows(k)} rows" for k in TIMESERIES_TABLES)
        return f"Timeseries({rows})"


class Result:
    """One run: `.meta` (dict), `.summary` (one row per flow), `.subflow_summary`,
    `.timeseries.{subflows,connections,links}`, `.subflow_events` and the `.scenario`
    that produced it.

    The core's columns are kept as they came; each DataFrame is built on first access,
    so code that only needs `.columns(name)` (the CLI's summary) never imports pandas.
    """

    __slots__ = ("meta", "scenario", "plugins", "_columns", "_frames")

    def __init__(
        self,
        meta: Mapping[str, Any],
        scenario: Scenario,
        columns: Mapping[str, Any] | None = None,
        frames: Mapping[str, pd.DataFrame] | None = None,
    ) -> None:
        self.meta = dict(meta)
        self.scenario = scenario
        self._columns: dict[str, Any] = {k: columns[k] for k in TABLES if columns and columns.get(k) is not None}
        self._frames: dict[str, pd.DataFrame] = dict(frames or {})
        # The Python plug-in objects that ran, {flow: {"scheduler": obj, ...}} (not saved).
        self.plugins: dict[str, dict[str, Any]] = {}

    @classmethod
    def from_core(cls, raw: Mapping[str, Any], scenario: Scenario) -> Result:
        """Build from the dict `_core.simulate` returns."""
        meta = _plain_meta(raw.get("meta"))
        meta.setdefault("scenario_name", scenario.name)
        meta["scenario_sha256"] = scenario.sha256()
        return cls(meta, scenario, columns=raw)

    # -- tables ----------------------------------------------------------------------------
    def table(self, name: str) -> pd.DataFrame:
        """A table by name: summary, subflow_summary, subflows, connections, links,
        subflow_events."""
        if name not in TABLES:
            raise KeyError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        frame = self._frames.get(name)
        if frame is None:
            frame = _frame(self._columns.get(name))
            self._frames[name] = frame
        return frame

    def columns(self, name: str) -> dict[str, list[Any]]:
        """A table as a dict of column lists (no pandas needed for results of a run)."""
        if name in self._columns:
            return {str(k): list(unpack_column(v)) for k, v in self._columns[name].items()}
        frame = self.table(name)
        return {str(k): frame[k].tolist() for k in frame.columns}

    def num_rows(self, name: str) -> int:
        if name in self._frames:
            return len(self._frames[name])
        cols = self._columns.get(name) or {}
        if not cols:
            return 0
        first = next(iter(cols.values()))
        return len(first[1]) // 8 if _packed(first) else len(first)

    @property
    def summary(self) -> pd.DataFrame:
        """One row per flow (MPTCP connection or background TCP flow)."""
        return self.table("summary")

    @property
    def subflow_summary(self) -> pd.DataFrame:
        """One row per subflow: conn, subflow, path, bytes_sent, bytes_retrans,
        bytes_acked, mean_srtt_ms, throughput_mbps (bytes acknowledged at the subflow
        level over the subflow's active time, on both backends), rto_count, recoveries and the
        scheduler's counters: sched_new_segs (new data sent on it), sched_reinjected_segs
        (from the reinjection queue), sched_copied_segs (copies of data sent elsewhere:
        redundant copies, opportunistic retransmissions) and sched_penalised (times its
        cwnd was halved by penalisation)."""
        return self.table("subflow_summary")

    @property
    def subflow_events(self) -> pd.DataFrame:
        """One row per subflow status change of an MPTCP connection: time_s, flow,
        subflow, path, from, to (idle, opening, active, standby, backup, failed, or a
        scheduler's own status of an otherwise active subflow: "inactive" for RBPM) and
        reason (opened, established, rto, ack_received, mp_prio, no_active_usable,
        active_usable, or the scheduler's name, "rbpm")."""
        return self.table("subflow_events")

    @property
    def timeseries(self) -> Timeseries:
        return Timeseries(self)

    @property
    def delay(self) -> pd.DataFrame:
        """One row per data segment at its DATA_ACK (seed 002 Sec. IV: a sample k), for
        streaming connections and runs with `run.delay_samples = true`: time_s (the
        DATA_ACK instant), flow, dsn, len, taken_s (the MPTCP level took it from the send
        buffer), subflow (whose copy arrived first), delay_ms (measured: taken ->
        DATA_ACK), theta_ms (θ of that subflow), tau_ms (its SRTT), tau_max_ms
        (max_i τ_i), t_over_ms (Eq. 2: max_i τ_i + θ_i), zeta_ms (Eq. 7/8) and
        zeta_measured_ms (Eq. 7 with the measured delay). docs/streaming.md."""
        return self.table("delay_samples")

    @property
    def frames(self) -> pd.DataFrame:
        """One row per frame of a streaming application: flow, frame, size_bytes,
        scheduled_s (generated), enqueued_s (its last byte entered the send buffer),
        taken_s (taken by the MPTCP level), acked_s (DATA_ACKed), delivered_s (read by
        the receiving application), NaN when not reached; and the lateness of its last
        byte relative to scheduled_s: wait_ms (in the application queue), send_ms,
        ack_ms, delivery_ms."""
        frame = self.table("frames")
        if "ack_ms" not in frame.columns and "scheduled_s" in frame.columns:
            frame = frame.assign(
                wait_ms=(frame["enqueued_s"] - frame["scheduled_s"]) * 1e3,
                send_ms=(frame["taken_s"] - frame["scheduled_s"]) * 1e3,
                ack_ms=(frame["acked_s"] - frame["scheduled_s"]) * 1e3,
                delivery_ms=(frame["delivered_s"] - frame["scheduled_s"]) * 1e3,
            )
            self._frames["frames"] = frame
        return frame

    @property
    def fct(self) -> pd.DataFrame:
        """One row per connection and flow: flow, src and dst (hosts of a `[topology]`,
        empty otherwise), start_s (after `run.start_jitter`), size_bytes (NaN:
        unbounded) and fct_s, the flow completion time from start_s until the receiving
        application has read the last byte (NaN: unbounded, or not done by the end)."""
        return self.table("fct")

    def fct_summary(self, buckets: tuple[float, ...] = FCT_BUCKETS) -> pd.DataFrame:
        """Flow completion times of the bounded flows by size bucket (edges in bytes,
        right-closed: (0, 100 KB], (100 KB, 10 MB], (10 MB, inf) by default) and "all":
        flows, done (completed by the end of the run), mean_ms, p50_ms and p99_ms over
        the completed ones. Flows not done are counted, not averaged: a run too short for
        its long flows shows it in `done`."""
        import pandas as pd

        cols = self.columns("fct")
        return pd.DataFrame(fct_buckets(cols.get("size_bytes", []), cols.get("fct_s", []), buckets))

    def metrics(self, flow: str | None = None) -> dict[str, float]:
        """Per-run scalars of one flow (default: the first MPTCP connection), reference
        `metrics.md` §6.1–6.6 and seed 002 Sec. IV (formulas in `mptcplab.metrics`):
        goodput_mbps (whole run); throughput_mean/max_mbps and goodput_mean/max_mbps (over
        the sampling intervals; throughput = payload sent, retransmissions included);
        samples (K), upsilon_av/max_ms and zeta_av/max_ms (model, Eq. 2–9), delay_av/
        max_ms and zeta_measured_av/max_ms (measured directly); per path `[name]`:
        srtt_av/max_ms (τ_i over the samples), drop_rate_segs_per_s (network drops,
        Table 1's d_i), queue_drop_rate_segs_per_s, drop_fraction, retrans_rate_segs_
        per_s, retrans_fraction, throughput_mbps (bytes acknowledged); drop_fraction and retrans_fraction of
        the flow; capacity_mbps and utilisation (goodput / Σ bottleneck rates); frames,
        frames_acked and frame_{wait,send,ack,delivery}_{av,max}_ms for a stream;
        jain_index over every flow's goodput when there are several. Average over runs
        with `mptcplab.stats.over_runs`."""
        from .metrics import flow_metrics

        if flow is None:
            summ = self.summary
            mp = summ[summ["kind"] == "mptcp"] if "kind" in summ.columns else summ
            pick = mp if len(mp) else summ
            if pick.empty:
                raise ScenarioError("<flow>", "the result has no flows")
            flow = str(pick["flow"].iloc[0])
        return flow_metrics(self, flow)

    def fairness(self) -> float:
        """Jain's index over the goodputs of every flow of the run (reference §6.6; an
        MPTCP connection counts as one flow)."""
        from .metrics import jain_index

        return jain_index(self.summary["goodput_mbps"])

    @property
    def seed(self) -> Any:
        return self.meta.get("seed")

    @property
    def version(self) -> Any:
        return self.meta.get("version")

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by name."""
        return {name: self.table(name) for name in TABLES}

    def __repr__(self) -> str:
        return (
            f"Result(scenario={self.meta.get('scenario_name')!r}, seed={self.seed!r}, "
            f"flows={self.num_rows('summary')}, {self.timeseries!r})"
        )

    def _repr_html_(self) -> str:
        """Jupyter's display: scenario name, seed, version, simulated duration, the
        per-flow and per-subflow summaries and the run's meta. Text is escaped; no scripts."""
        from . import _html as h

        meta = self.meta
        first = ("seed", "version", "duration_s", "backend")
        head = [(k, meta[k]) for k in first if k in meta]
        rest = sorted(((k, v) for k, v in meta.items() if k not in first), key=lambda kv: kv[0])  # sorted like a saved meta.json
        parts = [h.fields(head),
                 h.heading(f"flows ({self.num_rows('summary')})"), h.frame(self.summary),
                 h.heading(f"subflows ({self.num_rows('subflow_summary')})"), h.frame(self.subflow_summary),
                 h.heading("meta"), h.fields(rest)]
        name = meta.get("scenario_name", self.scenario.name)
        desc = self.scenario.to_dict().get("description")
        return h.wrap(f"Result of {name}", desc if isinstance(desc, str) else None, parts)

    # -- persistence -----------------------------------------------------------------------
    def save(self, directory: PathLike) -> Path:
        """Write `<table>.parquet` for every table, `scenario.toml` and `meta.json`
        (scenario name, seed, version, wall time, sha256 of the scenario JSON)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        for name, frame in self.tables().items():
            table = pa.Table.from_pandas(frame, preserve_index=False)
            pq.write_table(table, out / f"{name}.parquet")
        (out / "scenario.toml").write_text(self.scenario.to_toml(), encoding="utf-8")
        meta = {"format_version": FORMAT_VERSION, **self.meta}
        (out / "meta.json").write_text(
            json.dumps(meta, indent=2, sort_keys=True, default=_json_default) + "\n", encoding="utf-8"
        )
        return out

    @classmethod
    def load(cls, directory: PathLike) -> Result:
        """Read a directory written by `save`."""
        import pyarrow.parquet as pq

        src = Path(directory)
        meta_path = src / "meta.json"
        if not meta_path.is_file():
            raise ScenarioError("<file>", f"'{src}' is not a saved result (no meta.json)")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        version = int(meta.pop("format_version", 1))
        frames = {}
        for name in TABLES:
            path = src / f"{name}.parquet"
            frames[name] = pq.read_table(path).to_pandas() if path.is_file() else _frame({})
        if version < 2:
            frames["subflows"] = _subflow_rates_v2(frames["subflows"], frames["links"], meta.get("backend"))
        scenario = Scenario.from_toml(src / "scenario.toml")
        return cls(meta, scenario, frames=frames)


def _subflow_rates_v2(sub: pd.DataFrame, links: pd.DataFrame, backend: Any) -> pd.DataFrame:
    """A format-1 subflow series in format 2's meaning: throughput_mbps = Δ bytes_acked / Δt
    and sent_mbps = Δ bytes_sent / Δt per sample, Δt from the run's sample grid (the link
    series, sampled at every sample). A format-1 simulator series held the sent rate under
    throughput_mbps: it becomes sent_mbps as saved; a kernel series already had the acked
    rate there."""
    if sub.empty or "sent_mbps" in sub.columns or not {"bytes_sent", "bytes_acked", "time_s"} <= set(sub.columns):
        return sub
    grid = sorted(set(links["time_s"]) if "time_s" in links.columns and len(links) else set(sub["time_s"]))
    before = dict(zip(grid, [0.0, *grid[:-1]]))
    dt = sub["time_s"].map(lambda t: t - before.get(t, t)).clip(lower=1e-12)

    def rate(col: str) -> Any:
        step = sub.groupby(["flow", "subflow"], sort=False)[col].diff().fillna(sub[col])
        return step.astype(float) * 8 / dt / 1e6

    out = sub.copy()
    if backend == "kernel":
        out["sent_mbps"] = rate("bytes_sent")
    else:
        out["sent_mbps"] = sub["throughput_mbps"] if "throughput_mbps" in sub.columns else rate("bytes_sent")
        out["throughput_mbps"] = rate("bytes_acked")
    return out


def _json_default(value: Any) -> Any:
    # numpy scalars; anything else as text
    if hasattr(value, "item"):
        return value.item()
    return str(value)
