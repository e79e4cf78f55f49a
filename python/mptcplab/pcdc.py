"""PCDC path management (seed 000_d384ca3f1012c6b1.txt Sec. 2.1 and 3; reference
path-managers.md §5.5): measure each subflow's impact factor Ω_i offline, keep the
subset SP* = {sp_i | Ω_i ≥ 0}, and run the connection with ``path_manager = "pcdc"``.

    >>> om = measure_omega(scenario, T=10)           # {path: Ω}
    >>> run = simulate(with_pcdc(scenario, sp_star(om)))

Ω_i (Eq. 5), one run of 2T per path i: all subflows carry data in [0, T]; from T on,
path i's subflow carries none (it becomes a backup subflow at T, MP_PRIO, and stays
established) and the others go on::

    Ω_i = 1 − Σ_{t=T+1}^{2T} TP_i(t) / Σ_{t=0}^{T} TP_0(t)

TP(t) is the connection's goodput (bytes the application reads) over the second
(t−1, t], so TP(0) = 0 and both sums are the bytes delivered in (0, T] and (T, 2T]: the
printed T+1 versus T samples do not make the windows unequal here.

Bias of this literal form (the default, as the seed measured it): (0, T] starts with the
handshakes and slow start, (T, 2T] starts in steady state. The first window is thus
too small, and Ω_i is biased downwards: by roughly the share of T that slow start costs,
more with long RTTs or short T, and a subflow that helps a little can come out with
Ω_i < 0 and be dropped. ``warmup=W`` runs all subflows for W first and uses the windows
(W, W+T] and (W+T, W+2T] instead (equal lengths, both past slow start).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .api import ScenarioLike, as_scenario, simulate
from .errors import ScenarioError
from .scenario import Scenario

__all__ = ["OmegaRun", "measure_omega", "omega_from_bytes", "omega_from_windows", "omega_runs", "sp_star",
           "with_pcdc"]


def omega_from_bytes(with_all: float, without: float) -> float:
    """Eq. 5 on the window sums: Ω = 1 − Σ TP_i / Σ TP_0. Ω > 0: the connection
    delivered less without the subflow, so it helps; Ω < 0: it delivered more."""
    if with_all <= 0:
        raise ValueError("no data delivered in the first window: Ω is undefined (make T longer)")
    return 1.0 - without / with_all


def _connection(scn: Scenario, connection: str | None) -> tuple[int, dict[str, Any]]:
    conns = scn.to_dict().get("connections") or []
    if not conns:
        raise ScenarioError("connections", "PCDC needs an MPTCP connection; the scenario has none")
    if connection is None:
        return 0, conns[0]
    for i, c in enumerate(conns):
        if c.get("name") == connection:
            return i, c
    names = ", ".join(str(c.get("name")) for c in conns)
    raise ScenarioError("<connection>", f"no MPTCP connection named {connection!r}; connections: {names}")


def _seconds(value: float, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ScenarioError(field, f"expected a number of seconds >= 0, got {value!r}")
    return float(value)


def _delivered_at(result: Any, flow: str, t: float, field: str) -> float:
    """Bytes delivered to `flow`'s application by time t (0 at t = 0)."""
    if t == 0:
        return 0.0
    ts = result.timeseries.connections
    rows = ts[(ts["flow"] == flow) & ((ts["time_s"] - t).abs() < 1e-9)]
    if rows.empty:
        raise ScenarioError(field, f"no sample at {t} s: make T and warm-up multiples of run.sample_interval")
    return float(rows["bytes_delivered"].iloc[0])


@dataclass(frozen=True)
class OmegaRun:
    """One run of the Ω measurement: `scenario` (duration W+2T, the connection under
    PCDC with `path` withheld from W+T on) and the window bounds ``marks_s`` = (W, W+T,
    W+2T) at which the bytes delivered to the application are read."""

    path: str
    scenario: Scenario
    marks_s: tuple[float, float, float]


def omega_runs(
    scenario: ScenarioLike,
    T: float = 10.0,
    warmup: float | None = None,
    connection: str | None = None,
) -> tuple[str, list[OmegaRun]]:
    """The runs of `measure_omega` without running them: (connection name, one run per
    path). For callers that run them elsewhere (`mptcplab.mpcoa.optimize_scenario` runs
    them as sweep points) and then call `omega_from_windows`."""
    scn = as_scenario(scenario)
    T = _seconds(T, "<T>")
    if T <= 0:
        raise ScenarioError("<T>", "T must be > 0 s")
    w = 0.0 if warmup is None else _seconds(warmup, "<warmup>")
    ci, conn = _connection(scn, connection)
    flow = str(conn.get("name"))
    if conn.get("paths") == "all":  # `paths = "all"` (multi-homed hosts): the expanded list
        conn = scn.validate().to_dict()["connections"][ci]
    paths = [str(p) for p in conn.get("paths") or []]
    base = scn.with_(f"connections[{ci}].path_manager", "pcdc")
    runs = []
    for path in paths:
        opts = {"withhold": [path], "withhold_at_ms": round((w + T) * 1000)}
        run_scn = base.with_(f"connections[{ci}].path_manager_options", opts).with_duration(w + 2 * T)
        runs.append(OmegaRun(path, run_scn, (w, w + T, w + 2 * T)))
    return flow, runs


def omega_from_windows(delivered: Iterable[Sequence[float]]) -> float:
    """Ω of one path from the bytes delivered by (W, W+T, W+2T) in each seed's run: the
    window sums are added over seeds, then Eq. 5 (`omega_from_bytes`)."""
    first = second = 0.0
    for d0, d1, d2 in delivered:
        first += d1 - d0
        second += d2 - d1
    return omega_from_bytes(first, second)


def measure_omega(
    scenario: ScenarioLike,
    T: float = 10.0,
    warmup: float | None = None,
    seeds: Iterable[int] | None = None,
    connection: str | None = None,
) -> dict[str, float]:
    """Ω per path of `connection` (default: the first connection), seed 000 Eq. 5.

    For each path i, for each seed: one run of W+2T seconds (W = `warmup`, default 0)
    with the connection under ``path_manager = "pcdc"`` (one subflow per path, like
    fullmesh) and path i withheld from W+T on. The window sums are added over seeds,
    then Ω_i = 1 − Σ(without i) / Σ(with all). `T` and `warmup` in seconds, multiples of
    the scenario's sample interval. Ω depends on the congestion control, so measure it
    per (scenario, cc), as the seed's Table 2 does.
    """
    flow, runs = omega_runs(scenario, T=T, warmup=warmup, connection=connection)
    seed_list = [None] if seeds is None else list(seeds)
    if not seed_list:
        raise ScenarioError("<seeds>", "give at least one seed")
    omegas: dict[str, float] = {}
    for run in runs:
        windows = []
        for seed in seed_list:
            r = simulate(run.scenario, seed=seed)
            w, t1, t2 = run.marks_s
            windows.append((_delivered_at(r, flow, w, "<warmup>"), _delivered_at(r, flow, t1, "<T>"),
                            _delivered_at(r, flow, t2, "<T>")))
        omegas[run.path] = omega_from_windows(windows)
    return omegas


def sp_star(omegas: Mapping[str, float], strict: bool = False) -> list[str]:
    """SP* = SP \\ {sp_i | Ω_i < 0} (Eq. 6): Ω_i = 0 is kept. `strict=True` keeps only
    Ω_i > 0, as Algorithm 1 and the seed's introduction word it. If no path qualifies,
    the path with the largest Ω is kept, so the connection still carries data."""
    keep = [p for p, o in omegas.items() if (o > 0 if strict else o >= 0)]
    if not keep and omegas:
        keep = [max(omegas, key=lambda p: omegas[p])]
    return keep


def with_pcdc(scenario: ScenarioLike, sp: Sequence[str], connection: str | None = None) -> Scenario:
    """The scenario with `connection` (default: the first) under ``path_manager =
    "pcdc"`` and ``path_manager_options.sp`` = `sp`: only those paths carry data, the
    others stand by as backup subflows."""
    scn = as_scenario(scenario)
    ci, _ = _connection(scn, connection)
    return scn.with_(f"connections[{ci}].path_manager", "pcdc").with_(
        f"connections[{ci}].path_manager_options", {"sp": list(sp)}
    )
