"""Per-run metrics of reference `metrics.md` §6.1–6.6 computed from a `Result`, and the
pure formulas behind them. `Result.metrics(flow)` returns them as one dict; average them
over runs with `mptcplab.stats.over_runs`.

Formulas (each cited next to its code):
* seed 002 (`seeds/002_c4afc38db6f18665.txt`) Sec. IV: path delay `T_i = τ_i + θ_i`
  (Eq. 1), protocol delay `T_over = max_i T_i` (Eq. 2), υ_av / υ_max per run (Eq. 3, 4),
  HoL degree ζ (Eq. 7–9, clamped at 0 as Eq. 8 and 11 do); the per-segment values come
  from the core (`Result.delay`), these functions aggregate them.
* drop rate per path in segments/s (seed 002 Table 1's d_1, d_2) and as a proportion
  (Sec. IV.D), ground-truth network drops apart from retransmissions (§6.4);
* throughput and goodput, mean and max over the sampling interval (§6.1);
* bandwidth utilisation U = goodput / Σ_i C_i over disjoint bottlenecks (§6.5);
* Jain's fairness index (§6.6).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from .result import Result

__all__ = ["jain_index", "protocol_delay", "delay_metrics", "flow_metrics"]


def jain_index(xs: Iterable[float]) -> float:
    """Jain's fairness index `J = (Σ x)² / (n · Σ x²)` (reference §6.6; Jain, Chiu, Hawe
    1984), in [1/n, 1]. J(1, 1) = 1, J(1, 0) = 0.5, J(3, 1) = 0.8. NaN for no values or
    all zeros."""
    v = [float(x) for x in xs]
    sq = math.fsum(x * x for x in v)
    if not v or sq == 0.0:
        return math.nan
    return math.fsum(v) ** 2 / (len(v) * sq)


def protocol_delay(srtt: Sequence[float], waits: Sequence[float]) -> tuple[float, float]:
    """`(T_over, ζ)` of one sample from per-path SRTT τ_i and waiting time θ_i (any one
    unit): seed 002 Eq. 1 `T_i = τ_i + θ_i`, Eq. 2 `T_over = max_i T_i`, Eq. 7/8
    `ζ = max(T_over − max_i τ_i, 0)`. The core computes the same per segment
    (`metrics::delay::path_delay`). SRTT (20, 80), waits (0, 40) -> (120, 40)."""
    if len(srtt) != len(waits):
        raise ValueError(f"expected one wait per path, got {len(srtt)} SRTTs and {len(waits)} waits")
    if not srtt:
        return 0.0, 0.0
    t_over = max(t + w for t, w in zip(srtt, waits))
    return t_over, max(t_over - max(srtt), 0.0)


def delay_metrics(samples: pd.DataFrame) -> dict[str, float]:
    """Per-run delay figures from the per-segment samples of one flow (`Result.delay`
    rows of that flow): K samples; υ_av, υ_max (Eq. 3, 4) and ζ_av, ζ_max (Eq. 8, 9)
    from the model `T_over = max_i (τ_i + θ_i)`; the same from the protocol delay
    measured directly (MPTCP level takes the data -> DATA_ACK), as `delay_*` and
    `zeta_measured_*`. Milliseconds."""
    k = len(samples)
    out: dict[str, float] = {"samples": float(k)}
    cols = [("upsilon", "t_over_ms"), ("zeta", "zeta_ms"), ("delay", "delay_ms"), ("zeta_measured", "zeta_measured_ms")]
    for name, col in cols:
        if k:
            out[f"{name}_av_ms"] = float(samples[col].mean())   # Eq. 3 / Eq. 8: (1/K) Σ_k
            out[f"{name}_max_ms"] = float(samples[col].max())   # Eq. 4 / Eq. 9: max_k
        else:
            out[f"{name}_av_ms"] = math.nan
            out[f"{name}_max_ms"] = math.nan
    return out


def _path_keys(sub: pd.DataFrame) -> list[str]:
    """A key per subflow row: its path name, or `path#subflow` when a path has several."""
    counts = sub["path"].value_counts()
    return [str(p) if counts[p] == 1 else f"{p}#{s}" for p, s in zip(sub["path"], sub["subflow"])]


def _interval_series(result: Result, flow: str) -> tuple[pd.Series, pd.Series]:
    """Throughput (payload sent by all subflows, retransmissions included) and goodput
    per sampling interval, Mbit/s, over the intervals since the flow started."""
    conn = result.timeseries.connections
    conn = conn[conn["flow"] == flow]
    times = conn["time_s"].to_numpy()
    sub = result.timeseries.subflows
    sub = sub[sub["flow"] == flow]
    # §6.1 "throughput" = bytes transmitted: the series' sent_mbps (throughput_mbps counts acked bytes)
    thr = sub.groupby("time_s")["sent_mbps"].sum().reindex(times, fill_value=0.0)
    return thr, conn.set_index("time_s")["goodput_mbps"]


def _capacity_mbps(result: Result, flow: str, paths: list[str]) -> float:
    """Σ_i C_i over the flow's paths: each path's bottleneck is its slowest forward link
    (time-averaged link rate from the link series, so schedules count); a link that is
    the bottleneck of several paths counts once (reference §6.5: disjoint paths, or the
    shared bottleneck). Rates are line rates, headers included."""
    scn = result.scenario.validate().to_dict()
    links_of = {p["name"]: p["links"] for p in scn.get("paths", [])}
    lk = result.timeseries.links
    fwd = lk[lk["direction"] == "forward"]
    mean_rate = fwd.groupby("link")["rate_mbps"].mean().to_dict()
    bottlenecks = {}
    for p in paths:
        names = [n for n in links_of.get(p, []) if n in mean_rate]
        if not names:
            continue
        rates = {n: mean_rate[n] for n in names}
        b = min(rates, key=lambda n: rates[n])
        bottlenecks[b] = rates[b]
    return math.fsum(bottlenecks.values()) if bottlenecks else math.nan


def flow_metrics(result: Result, flow: str) -> dict[str, float]:
    """Every per-run scalar of one flow (see `Result.metrics`)."""
    summ = result.summary
    row = summ[summ["flow"] == flow]
    if row.empty:
        from .errors import ScenarioError

        raise ScenarioError("<flow>", f"no flow named {flow!r}; flows: {', '.join(map(str, summ['flow']))}")
    row = row.iloc[0]
    out: dict[str, float] = {
        "goodput_mbps": float(row["goodput_mbps"]),
        "bytes_delivered": float(row["bytes_delivered"]),
    }
    thr, good = _interval_series(result, flow)
    out["throughput_mean_mbps"] = float(thr.mean()) if len(thr) else math.nan
    out["throughput_max_mbps"] = float(thr.max()) if len(thr) else math.nan
    out["goodput_mean_mbps"] = float(good.mean()) if len(good) else math.nan
    out["goodput_max_mbps"] = float(good.max()) if len(good) else math.nan

    samples = result.delay
    if "flow" in samples.columns:
        samples = samples[samples["flow"] == flow]
    out.update(delay_metrics(samples))

    sub = result.subflow_summary
    sub = sub[sub["flow"] == flow]
    sent_all = drops_all = retrans_all = 0.0
    for key, (_, s) in zip(_path_keys(sub), sub.iterrows()):
        # Results saved before these columns existed give NaN, not an error.
        g = lambda name: float(s.get(name, math.nan))  # noqa: E731
        active = g("active_s")
        drops = g("drops_queue") + g("drops_loss") + g("drops_down")
        sent, retrans = g("segs_sent"), g("segs_retrans")
        sent_all += sent
        drops_all += drops
        retrans_all += retrans
        per_s = (lambda x: x / active) if active > 0 else (lambda x: math.nan)
        frac = (lambda x: x / sent) if sent > 0 else (lambda x: math.nan)
        out[f"srtt_av_ms[{key}]"] = g("tau_av_ms")
        out[f"srtt_max_ms[{key}]"] = g("tau_max_ms")
        out[f"drop_rate_segs_per_s[{key}]"] = per_s(drops)                      # Table 1's d_i
        out[f"queue_drop_rate_segs_per_s[{key}]"] = per_s(g("drops_queue"))
        out[f"drop_fraction[{key}]"] = frac(drops)                               # Sec. IV.D
        out[f"retrans_rate_segs_per_s[{key}]"] = per_s(retrans)
        out[f"retrans_fraction[{key}]"] = frac(retrans)
        out[f"throughput_mbps[{key}]"] = g("throughput_mbps")
    out["drop_fraction"] = drops_all / sent_all if sent_all else math.nan
    out["retrans_fraction"] = retrans_all / sent_all if sent_all else math.nan

    cap = _capacity_mbps(result, flow, [str(p) for p in dict.fromkeys(sub["path"])])
    out["capacity_mbps"] = cap
    out["utilisation"] = out["goodput_mbps"] / cap if cap and not math.isnan(cap) else math.nan

    frames = result.frames
    if "flow" in frames.columns and len(frames[frames["flow"] == flow]):
        frames = frames[frames["flow"] == flow]
        out["frames"] = float(len(frames))
        out["frames_acked"] = float(frames["acked_s"].notna().sum())
        for name in ("wait_ms", "send_ms", "ack_ms", "delivery_ms"):
            col = frames[name]
            out[f"frame_{name[:-3]}_av_ms"] = float(col.mean())
            out[f"frame_{name[:-3]}_max_ms"] = float(col.max())

    if len(summ) > 1:
        out["jain_index"] = jain_index(summ["goodput_mbps"])
    return out
