"""`mptcplab optimize SCENARIO`: MPCOA end to end on the simulator (seed 000 Sec. 3,
Algorithm 1; docs/mpcoa.md).

1. SP = every path of the connection (Eq. 3; with ``[[hosts]]`` one per (local ISP,
   remote ISP) pair).
2. Ω per CC (Eq. 5) with `mptcplab.pcdc`'s procedure (`pcdc.omega_runs`, the runs of
   `pcdc.measure_omega`), run as sweep points; SP* per CC (Eq. 6, `pcdc.sp_star`).
3. The buffer grid for every (PM, CC): send and receive buffer = bs (the seed sets
   SO_SNDBUF and SO_RCVBUF); PCDC runs carry data on SP* only (Eq. 7). Sweep points
   again: local cores or Dask, resumable store.
4. OLS per PM (`fit.fit_pm`, Eq. 8 / 13–15); the curves go to the selection of
   `select.optimize` (Eqs. 9–12).
5. The classic bound, Eq. 1: B = (3·RTT_max + RTO_max)·ΣBW (definitions below).

Throughput of a run: the connection's goodput (bytes delivered in order to the receiving
application, reference metrics.md §6.1) over (W, D], W = warm-up, D = run duration, in
Mbit/s. Repetition r (0-based) runs with seed `seed + r` at every grid point (common
random numbers) and in the Ω runs.

Classic bound inputs (Eq. 1, Table 5):
* ΣBW = Σ over SP of each path's bottleneck rate in the data direction (the slowest
  forward link rate of the path, as configured): the sum over subflows that Eq. 1
  writes. Subflows that share an access link count it once each, as Eq. 1 does.
* RTT_max = the largest mean SRTT of any subflow of SP, measured after the warm-up in
  the FullMesh runs at the largest grid buffer (mean over repetitions, max over CCs and
  subflows): loaded RTTs, queueing included, where buffers are largest.
* RTO_max = max(1 s, RTT_max + 200 ms): Linux's RTO before the first RTT sample
  (TCP_TIMEOUT_INIT = 1 s) and its floor afterwards (RTO ≥ SRTT + TCP_RTO_MIN, reference
  tcp.md §1.4), without backoff.
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from .fit import Fit, fit_pm, require_statsmodels
from .select import ClassicBound, Coefficients, Optimum, optimize

__all__ = ["CC_NAMES", "DEFAULT_GRID", "OptimizeReport", "PM_NAMES", "classic_inputs", "optimize_scenario",
           "parse_grid"]

# The seed's sets (Sec. 3, IPS): scenario names -> the names used in mpcoa.select.
CC_NAMES = {"cubic": "Cubic", "olia": "OLIA", "hybla": "Hybla", "reno": "Reno", "scalable": "Scalable",
            "vegas": "Vegas"}
PM_NAMES = {"fullmesh": "FullMesh", "pcdc": "PCDC"}
DEFAULT_GRID = tuple(0.5 * k for k in range(1, 61))  # BS = {0.5, 1.0, ..., 30.0} MiB (Eq. 9)
LINUX_RTO_INIT_S = 1.0  # TCP_TIMEOUT_INIT
LINUX_RTO_MIN_S = 0.2  # TCP_RTO_MIN

_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]+)\s*$")
_RATE = {"bit/s": 1.0, "bps": 1.0, "kbit/s": 1e3, "kbps": 1e3, "Mbit/s": 1e6, "Mbps": 1e6,
         "Gbit/s": 1e9, "Gbps": 1e9}
_TIME = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def _quantity(text: Any, units: dict[str, float], field_name: str) -> float:
    m = _UNIT.match(str(text))
    if not m or m.group(2) not in units:
        raise ScenarioError(field_name, f"cannot read {text!r} (expected a number and one of: {', '.join(units)})")
    return float(m.group(1)) * units[m.group(2)]


def parse_grid(text: str | Sequence[float]) -> tuple[float, ...]:
    """Buffer sizes in MiB: ``"START:STOP:STEP"`` (STOP included), ``"0.5,1,2"``, or a
    sequence of numbers. Errors name ``--grid``."""
    if isinstance(text, str):
        parts = text.split(":")
        try:
            if len(parts) == 3:
                start, stop, step = (float(p) for p in parts)
                if not step > 0:
                    raise ScenarioError("--grid", f"STEP must be > 0, got {parts[2]!r}")
                if stop < start:
                    raise ScenarioError("--grid", f"STOP must be >= START, got {text!r}")
                n = int(math.floor((stop - start) / step + 1e-9)) + 1
                values = [round(start + k * step, 9) for k in range(n)]
            elif len(parts) == 1:
                values = [float(v) for v in text.split(",") if v.strip()]
            else:
                raise ValueError
        except ValueError:
            raise ScenarioError("--grid", f"expected START:STOP:STEP or a comma list of MiB, got {text!r}") from None
    else:
        values = list(text)
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ScenarioError("--grid", f"buffer sizes must be positive numbers of MiB, got {v!r}")
        out.append(float(v))
    out = sorted(set(out))
    if len(out) < 3:
        raise ScenarioError("--grid", f"needs at least 3 buffer sizes for the quadratic fit, got {len(out)}")
    return tuple(out)


def _names(values: Sequence[str] | str | None, known: dict[str, str], field_name: str) -> list[str]:
    if values is None:
        return list(known)
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    out = []
    for v in values:
        key = str(v).strip().lower()
        if key not in known:
            raise ScenarioError(field_name, f"unknown name {v!r}; expected some of: {', '.join(known)}")
        if key not in out:
            out.append(key)
    if not out:
        raise ScenarioError(field_name, f"give at least one of: {', '.join(known)}")
    return [k for k in known if k in out]  # the seed's order


def _seconds_arg(value: Any, field_name: str, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0 or (positive and value == 0):
        raise ScenarioError(field_name, f"expected a number of seconds {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


def _on_samples(t: float, interval: float, field_name: str) -> None:
    k = t / interval
    if abs(k - round(k)) > 1e-6:
        raise ScenarioError(field_name, f"{t:g} s is not a multiple of run.sample_interval ({interval:g} s)")


def classic_inputs(scenario: Any, paths: Sequence[str]) -> dict[str, float]:
    """Each path's bottleneck rate in the data direction (Mbit/s): the slowest forward
    link rate of the path, as configured (schedules ignored)."""
    data = scenario.validate().to_dict()
    rates = {lk["name"]: _quantity(lk["rate"], _RATE, f"links.{lk['name']}.rate") / 1e6 for lk in data["links"]}
    by_path = {p["name"]: p for p in data["paths"]}
    return {p: min(rates[lk] for lk in by_path[p]["links"]) for p in paths}


# -- the report ------------------------------------------------------------------------------
@dataclass
class OptimizeReport:
    """Everything `optimize_scenario` measured, fitted and chose. `to_dict()` is what
    ``report.json`` holds; `text()` is what the CLI prints."""

    scenario_name: str
    scenario_source: str | None
    scenario_sha256: str
    version: str
    options: dict[str, Any]
    subflows: list[dict[str, Any]]  # path, label, bottleneck_mbit_s
    omega: dict[str, dict[str, float]]  # CC -> label -> Ω
    sp_star: dict[str, list[str]]  # CC -> labels
    fits: dict[str, Fit]  # PM -> fit
    coefficients: Coefficients
    optimum: Optimum
    classic: dict[str, Any]
    points: Any  # DataFrame: pm, cc, bs, rep, seed, tp, wall_s
    timings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    out: Path | None = None
    model: str = ""  # the core's source fingerprint (`_version.__model__`)

    @property
    def labels(self) -> dict[str, str]:
        return {s["path"]: s["label"] for s in self.subflows}

    def measured(self) -> Any:
        """Mean, standard deviation and count of tp per (pm, cc, bs) over repetitions."""
        g = self.points.groupby(["pm", "cc", "bs"], sort=False)["tp"]
        return g.agg(["mean", "std", "count"]).reset_index()

    def to_dict(self) -> dict[str, Any]:
        opt = self.optimum
        measured = self.measured()
        return {
            "format": 1,
            "tool": "mptcplab optimize",
            "version": self.version,
            "model": self.model,
            "scenario": {"name": self.scenario_name, "source": self.scenario_source, "sha256": self.scenario_sha256},
            "options": self.options,
            "throughput_definition": (
                f"goodput of the connection (bytes delivered in order to the receiving application) over "
                f"({self.options['warmup_s']:g} s, {self.options['duration_s']:g} s], Mbit/s"),
            "seeds": {"rule": "repetition r (0-based) runs with seed = seed + r, at every grid point and Ω run",
                      "seeds": self.options["seeds"]},
            "subflows": self.subflows,
            "omega": self.omega,
            "sp_star": self.sp_star,
            "fits": {pm: f.to_dict() for pm, f in self.fits.items()},
            "curves": [{"pm": o.curve.pm, "cc": o.curve.cc, "a": o.curve.a, "b": o.curve.b, "d": o.curve.d,
                        "tp_max": o.tp_max, "bs_at_max": o.bs_at_max, "obs": o.obs, "otp": o.otp}
                       for o in opt.per_curve],
            "outputs": {"OTP_mbit_s": opt.otp, "OBS_mib": opt.obs, "OCC": opt.occ, "OPM": opt.opm,
                        "tp_max_mbit_s": opt.tp_max, "bs_at_max_mib": opt.bs_at_max,
                        "curve": {"pm": opt.curve.pm, "cc": opt.curve.cc, "a": opt.curve.a, "b": opt.curve.b,
                                  "d": opt.curve.d},
                        "delta": opt.delta, "rule": opt.rule, "notes": opt.notes},
            "classic_bound": self.classic,
            "measured": [{"pm": r.pm, "cc": r.cc, "bs": r.bs, "tp_mean": r["mean"],
                          "tp_std": None if math.isnan(r["std"]) else r["std"], "n": int(r["count"])}
                         for _, r in measured.iterrows()],
            "points": [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
                       for row in self.points.to_dict(orient="records")],
            "timings": self.timings,
            "notes": self.notes,
        }

    def save(self, out: str | Path | None = None) -> Path:
        """Write ``report.json`` and ``points.csv`` into `out` (default: the run's --out)."""
        from ..sweep.store import atomic_write

        root = Path(out or self.out or ".")
        root.mkdir(parents=True, exist_ok=True)
        atomic_write(root / "report.json", (json.dumps(self.to_dict(), indent=1, allow_nan=False,
                                                       ensure_ascii=False) + "\n").encode())
        atomic_write(root / "points.csv", self.points.to_csv(index=False).encode())
        return root / "report.json"

    def text(self) -> str:
        from ..tables import render_table

        o = self.options
        lines = [f"MPCOA for {self.scenario_source or self.scenario_name}: {len(self.subflows)} subflows, "
                 f"PM {', '.join(PM_NAMES[p] for p in o['pms'])}; CC {', '.join(CC_NAMES[c] for c in o['ccs'])}; "
                 f"bs {o['grid'][0]:g}..{o['grid'][-1]:g} MiB ({len(o['grid'])} sizes); "
                 f"{o['reps']} repetition(s), seeds {o['seeds'][0]}..{o['seeds'][-1]}",
                 f"throughput = goodput over ({o['warmup_s']:g} s, {o['duration_s']:g} s]; "
                 f"δ = {100 * self.optimum.delta:g} %"]
        if self.omega:
            ccs = list(self.omega)
            lines += ["", f"Ω (Eq. 5; windows of {o['omega_T_s']:g} s after {o['omega_warmup_s']:g} s warm-up, "
                      f"summed over the seeds)"]
            rows = [[s["label"], *(f"{self.omega[cc][s['label']]:.3f}" for cc in ccs)] for s in self.subflows]
            lines.append(render_table(["subflow", *ccs], rows, right=set(range(1, len(ccs) + 1))))
            lines += ["", "SP* (Eq. 6)" + (", strict Ω > 0" if o["omega_strict"] else ", Ω ≥ 0 kept")]
            for cc in ccs:
                lines.append(f"  {cc}: {{{', '.join(self.sp_star[cc])}}}")
        for pm, f in self.fits.items():
            lines += ["", f"{pm}: OLS {f.formula} (reference {f.reference}); n = {f.nobs}, "
                      f"R² = {f.r_squared:.4f}, max p-value = {_p(f.max_p_value)}"]
            rows = [[k, f"{v:.4g}", _p(f.pvalues[k])] for k, v in f.params.items()]
            lines.append(render_table(["term", "coefficient", "p-value"], rows, right={1, 2}))
        opt = self.optimum
        rows = [[c.curve.pm, c.curve.cc, c.curve.formula(), f"{c.tp_max:.3f}", f"{c.bs_at_max:.2f}",
                 f"{c.obs:.2f}", f"{c.otp:.3f}"] for c in opt.per_curve]
        lines += ["", render_table(["PM", "CC", "fitted curve", "tp_max Mbit/s", "at MiB", "obs MiB", "otp Mbit/s"],
                                   rows, right={3, 4, 5, 6})]
        lines += ["", f"OPM = {opt.opm}", f"OCC = {opt.occ}", f"OBS = {opt.obs:.2f} MiB", f"OTP = {opt.otp:.2f} Mbit/s",
                  f"(tp_max = {opt.tp_max:.2f} Mbit/s at bs = {opt.bs_at_max:.2f} MiB; {opt.curve.formula()})"]
        c = self.classic
        lines.append(f"classic bound (3·RTT_max + RTO_max)·ΣBW = (3·{c['rtt_max_s']:.3f} s + {c['rto_max_s']:.3f} s)"
                     f"·{c['sum_bw_mbit_s']:g} Mbit/s = {c['mib']:.2f} MiB; OBS = {c['obs_pct']:.2f} % of it")
        lines.append(f"  RTT_max: {c['rtt_max_from']}")
        for note in [*opt.notes, *self.notes]:
            lines.append(f"note: {note}")
        t = self.timings
        lines.append(f"wall time {t['total_s']:.0f} s (Ω {t['omega_s']:.0f} s, grid {t['grid_s']:.0f} s, "
                     f"fit {t['fit_s']:.1f} s); {t['points_run']} points run, {t['points_stored']} reused")
        return "\n".join(lines)


def _p(p: float | None) -> str:
    return "-" if p is None else (f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}")


# -- the pipeline -----------------------------------------------------------------------------
def optimize_scenario(
    scenario: Any,
    out: str | Path | None = None,
    *,
    reps: int = 1,
    seed: int | None = None,
    ccs: Sequence[str] | str | None = None,
    pms: Sequence[str] | str | None = None,
    grid: Sequence[float] | str | None = None,
    delta: float = 0.07,
    literal_eq11: bool = False,
    warmup: float = 5.0,
    duration: float | None = None,
    omega_T: float = 15.0,
    omega_warmup: float = 5.0,
    omega_strict: bool = False,
    connection: str | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    allow_version_mix: bool = False,
    progress: bool | Callable[[int, int], Any] = True,
    log: Callable[[str], None] | None = None,
) -> OptimizeReport:
    """MPCOA on `scenario` (a `Scenario`, dict or TOML path); see the module docstring.

    `out` (default ``optimize/<scenario name>``) holds the two resumable sweep stores
    (``omega/``, ``grid/``), ``report.json`` and ``points.csv``; rerunning the same call
    after a kill reuses every stored point. `ccs`/`pms` restrict the seed's sets
    (names as in scenarios: cubic, olia, hybla, reno, scalable, vegas; fullmesh, pcdc).
    `grid`: buffer sizes in MiB (default 0.5..30 step 0.5). `warmup`: seconds before the
    throughput window; `duration`: overrides run.duration (the window's end).
    `omega_T`, `omega_warmup`: the Ω windows (`mptcplab.pcdc.measure_omega`);
    `omega_strict`: SP* keeps only Ω > 0. Errors are `ScenarioError` naming the option
    (``--reps``, ``--grid``, ...) or the scenario field."""
    from .._version import __version__
    from ..api import as_scenario
    from ..pcdc import _connection, omega_from_windows, omega_runs, sp_star
    from ..sites import subflow_labels
    from ..sweep.plan import Plan
    from ..sweep.run import run_sweep
    from ..sweep.store import Store

    t_start = time.monotonic()
    started = time.time()
    load_start = _load()
    say = log or (lambda m: print(m, file=sys.stderr))

    # -- inputs ---------------------------------------------------------------------------
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise ScenarioError("--reps", f"expected a positive integer, got {reps!r}")
    if not (isinstance(delta, (int, float)) and not isinstance(delta, bool) and 0.0 <= delta < 1.0):
        raise ScenarioError("--delta", f"expected a fraction in [0, 1), got {delta!r}")
    cc_list = _names(ccs, CC_NAMES, "--cc")
    pm_list = _names(pms, PM_NAMES, "--pm")
    bs_grid = DEFAULT_GRID if grid is None else parse_grid(grid)
    warmup = _seconds_arg(warmup, "--warmup")
    omega_T = _seconds_arg(omega_T, "--omega-t", positive=True)
    omega_warmup = _seconds_arg(omega_warmup, "--omega-warmup")
    require_statsmodels()  # before an hour of simulation, not after

    scn = as_scenario(scenario)
    source = getattr(scn, "source", None)
    if duration is not None:
        scn = scn.with_duration(_seconds_arg(duration, "--duration", positive=True))
    try:
        norm = scn.validate().to_dict()
    except ScenarioError as err:
        if duration is not None and err.field == "run.duration":
            raise ScenarioError("--duration", err.message) from None
        raise
    ci, conn = _connection(scn, connection)
    flow = str(conn.get("name"))
    sp = [str(p) for p in norm["connections"][ci]["paths"]]
    run = norm["run"]
    dur_s = _quantity(run["duration"], _TIME, "run.duration")
    interval = _quantity(run["sample_interval"], _TIME, "run.sample_interval")
    if not warmup < dur_s:
        raise ScenarioError("--warmup", f"{warmup:g} s leaves no measurement window in a {dur_s:g} s run")
    _on_samples(warmup, interval, "--warmup")
    _on_samples(omega_T, interval, "--omega-t")
    _on_samples(omega_warmup, interval, "--omega-warmup")
    base_seed = int(run.get("seed", 1)) if seed is None else seed
    if isinstance(base_seed, bool) or not isinstance(base_seed, int) or base_seed < 0 or base_seed + reps > 2**64:
        raise ScenarioError("--seed", f"expected an integer in [0, 2^64 - reps], got {seed!r}")
    seeds = [base_seed + r for r in range(reps)]
    labels = {p: p for p in sp}
    labels.update({p: lab for p, lab in subflow_labels(scn).items() if p in labels})
    bottleneck = classic_inputs(scn, sp)
    root = Path(out) if out is not None else Path("optimize") / scn.name
    from .._version import __model__
    from ..sweep.run import _version as store_version

    version = str(__version__)
    stored_as = store_version()  # the sweeps' key: version and model
    options = {"reps": reps, "seed": base_seed, "seeds": seeds, "ccs": cc_list, "pms": pm_list,
               "grid": list(bs_grid), "delta": delta, "literal_eq11": literal_eq11, "warmup_s": warmup,
               "duration_s": dur_s, "omega_T_s": omega_T, "omega_warmup_s": omega_warmup,
               "omega_strict": omega_strict, "connection": flow, "workers": workers, "scheduler": scheduler,
               "out": str(root)}
    sweep_kw = {"workers": workers, "scheduler": scheduler, "allow_version_mix": allow_version_mix,
                "progress": progress, "log": say}
    ran = stored = 0

    def records(plan: Plan, where: Path) -> list[tuple[Any, dict[str, Any]]]:
        store = Store(where)
        out_ = []
        for p in plan.points():
            found = store.find(p.scenario_hash, p.seed, stored_as, allow_version_mix)
            if found is None:  # run_sweep stored every point or raised
                raise ScenarioError("--out", f"point {p.index} missing from {where} after the sweep")
            out_.append((p, store.read(found)))
        return out_

    def count(plan: Plan, where: Path) -> None:
        nonlocal ran, stored
        store = Store(where)
        have = sum(1 for p in plan.points() if store.find(p.scenario_hash, p.seed, stored_as, allow_version_mix))
        stored += have
        ran += len(plan.points()) - have

    # -- Ω per CC (steps 2–4) -----------------------------------------------------------
    t0 = time.monotonic()
    omega: dict[str, dict[str, float]] = {}
    sp_stars: dict[str, list[str]] = {}
    if "pcdc" in pm_list:
        _, oruns = omega_runs(scn, T=omega_T, warmup=omega_warmup, connection=connection)
        pm_opts = [r.scenario.to_dict()["connections"][ci]["path_manager_options"] for r in oruns]
        params = {f"connections[{ci}].cc": [cc for cc in cc_list for _ in oruns],
                  f"connections[{ci}].path_manager_options": [o for _ in cc_list for o in pm_opts]}
        oplan = Plan(f"{scn.name}-omega", scn.with_(f"connections[{ci}].path_manager", "pcdc"), "zip", reps,
                     base_seed, _secs_text(omega_warmup + 2 * omega_T), [("summary", "goodput_mbps")], params,
                     marks_s=oruns[0].marks_s)
        count(oplan, root / "omega")
        say(f"optimize: Ω of {len(sp)} subflows x {len(cc_list)} CCs x {reps} seeds")
        run_sweep(oplan, out=root / "omega", **sweep_kw)
        windows: dict[tuple[str, str], list[list[float]]] = {}
        for p, rec in records(oplan, root / "omega"):
            cc = p.params[f"connections[{ci}].cc"]
            path = p.params[f"connections[{ci}].path_manager_options"]["withhold"][0]
            windows.setdefault((cc, path), []).append(rec["marks"]["flows"][flow])
        for cc in cc_list:
            om = {path: omega_from_windows(windows[(cc, path)]) for path in sp}
            omega[CC_NAMES[cc]] = {labels[p]: v for p, v in om.items()}
            sp_stars[cc] = sp_star(om, strict=omega_strict)
    t_omega = time.monotonic() - t0

    # -- the buffer grid (steps 5–6) ----------------------------------------------------------
    t0 = time.monotonic()
    combos = [(pm, cc, bs) for pm in pm_list for cc in cc_list for bs in bs_grid]
    params = {
        f"connections[{ci}].path_manager": [pm for pm, _, _ in combos],
        f"connections[{ci}].cc": [cc for _, cc, _ in combos],
        f"connections[{ci}].path_manager_options": [{"sp": sp_stars[cc]} if pm == "pcdc" else {}
                                                   for pm, cc, _ in combos],
        f"connections[{ci}].send_buffer": [f"{bs:g} MiB" for _, _, bs in combos],
        f"connections[{ci}].receive_buffer": [f"{bs:g} MiB" for _, _, bs in combos],
    }
    gplan = Plan(f"{scn.name}-grid", scn, "zip", reps, base_seed, None, [("summary", "goodput_mbps")], params,
                 marks_s=(warmup, dur_s))
    count(gplan, root / "grid")
    say(f"optimize: buffer grid, {len(pm_list)} PMs x {len(cc_list)} CCs x {len(bs_grid)} sizes x {reps} seeds")
    run_sweep(gplan, out=root / "grid", **sweep_kw)
    t_grid = time.monotonic() - t0

    # -- fit and select (steps 6–7) ----------------------------------------------------------
    import pandas as pd

    t0 = time.monotonic()
    rows = []
    srtt: dict[tuple[str, str, str], list[float]] = {}
    for p, rec in records(gplan, root / "grid"):
        pm, cc, bs = combos[p.index // reps]
        d0, d1 = rec["marks"]["flows"][flow]
        tp = (d1 - d0) * 8 / (dur_s - warmup) / 1e6
        rows.append({"pm": PM_NAMES[pm], "cc": CC_NAMES[cc], "bs": bs, "rep": p.rep, "seed": p.seed, "tp": tp,
                     "wall_s": rec.get("wall_s")})
        if bs == bs_grid[-1]:
            subs = rec["marks"]["subflows"]
            for f, path, m in zip(subs["flow"], subs["path"], subs["mean_srtt_ms"]):
                if f == flow and m is not None:
                    srtt.setdefault((pm, cc, path), []).append(m)
    points = pd.DataFrame(rows)
    fits = {PM_NAMES[pm]: fit_pm(points[points.pm == PM_NAMES[pm]], PM_NAMES[pm]) for pm in pm_list}

    rtt_pm = "fullmesh" if "fullmesh" in pm_list else pm_list[0]
    rtt_means = {k: sum(v) / len(v) for k, v in srtt.items() if k[0] == rtt_pm}
    if not rtt_means:
        raise ScenarioError("<points>", "no SRTT samples after the warm-up: cannot compute RTT_max")
    (rpm, rcc, rpath), rtt_ms = max(rtt_means.items(), key=lambda kv: kv[1])
    rtt_max = rtt_ms / 1e3
    rto_max = max(LINUX_RTO_INIT_S, rtt_max + LINUX_RTO_MIN_S)
    sum_bw = sum(bottleneck.values())
    classic = ClassicBound(rtt_max, rto_max, sum_bw)
    coef = Coefficients(
        label=scn.name,
        curves={(f.pm, cc): c for f in fits.values() for cc, c in f.curves.items()},
        subflows=[labels[p] for p in sp],
        subsets={CC_NAMES[cc]: [labels[p] for p in s] for cc, s in sp_stars.items()},
        classic=classic,  # R² and p-values stay per PM in `fits` (their notes say what misses step 6)
        bs_range=(bs_grid[0], bs_grid[-1]),
    )
    opt = optimize(coef, delta=delta, literal_eq11=literal_eq11)
    notes = [n for f in fits.values() for n in f.notes]
    for note in notes:  # R² < 0.90 or a p-value > 0.05 warns; the selection goes on (step 6)
        say(f"warning: {note}")
    t_fit = time.monotonic() - t0
    classic_dict = {
        "formula": "(3·RTT_max + RTO_max)·ΣBW (seed 000 Eq. 1)",
        "sum_bw_mbit_s": sum_bw, "rtt_max_s": rtt_max, "rto_max_s": rto_max, "mib": classic.mib,
        "obs_pct": opt.obs_pct_of_classic,
        "per_subflow_bw_mbit_s": {labels[p]: v for p, v in bottleneck.items()},
        "rtt_max_from": (f"mean SRTT of {labels[rpath]} after the warm-up, {PM_NAMES[rpm]} + {CC_NAMES[rcc]} "
                         f"at bs = {bs_grid[-1]:g} MiB, mean of {len(srtt[(rpm, rcc, rpath)])} run(s)"),
        "definitions": {
            "sum_bw": "Σ over SP of each path's bottleneck rate in the data direction (slowest forward link, as "
                      "configured)",
            "rtt_max": "max over CCs and subflows of the subflow's mean SRTT after the warm-up, FullMesh runs at "
                       "the largest grid buffer, mean over repetitions",
            "rto_max": "max(1 s, RTT_max + 200 ms): Linux's initial RTO and its RTO floor SRTT + TCP_RTO_MIN, "
                       "no backoff",
        },
    }
    load_end = _load()
    timings = {"total_s": time.monotonic() - t_start, "omega_s": t_omega, "grid_s": t_grid, "fit_s": t_fit,
               "points_run": ran, "points_stored": stored, "cpu_count": os.cpu_count(),
               "loadavg_start": load_start, "loadavg_end": load_end,
               "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))}
    report = OptimizeReport(
        scenario_name=scn.name, scenario_source=str(source) if source else None, scenario_sha256=scn.sha256(),
        version=version, model=__model__, options=options,
        subflows=[{"path": p, "label": labels[p], "bottleneck_mbit_s": bottleneck[p]} for p in sp],
        omega=omega, sp_star={CC_NAMES[cc]: [labels[p] for p in s] for cc, s in sp_stars.items()},
        fits=fits, coefficients=coef, optimum=opt, classic=classic_dict, points=points, timings=timings,
        notes=notes, out=root,
    )
    report.save(root)
    return report


def _secs_text(seconds: float) -> str:
    from ..scenario import _seconds_text

    return _seconds_text(seconds)


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None

