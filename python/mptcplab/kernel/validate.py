"""`mptcplab validate`: the simulator against the Linux MPTCP stack on a fixed matrix.

Every scenario of the matrix (``scenarios/validate/*.toml``, each file's header states
its assumptions) runs with each congestion control the matrix gives it, `reps` times on
each backend (seeds 1..reps), one run at a time. Per scenario and CC:

* the sim/kernel ratio of the MPTCP connection's mean goodput, with a 95 % interval by
  the delta method (a ratio of means: Var(a/b) ≈ (a/b)² (se_a²/a² + se_b²/b²), Student t
  with Welch–Satterthwaite degrees of freedom on those two terms);
* per path, the difference of the subflow's share of the connection's acknowledged
  bytes, sim minus kernel, in points, with its 95 % CI (`stats.diff_ci`);
* each backend's mean RTT: per run, the subflows' SRTT (mean of the sampled SRTT,
  samples before the handshake left out) weighted by their acknowledged bytes; mean
  over runs with a 95 % CI (`stats.mean_ci`).

The simulator runs `sim_side(scenario)`: the scenario with the upstream profile when the
scenario schema has one, else unchanged (the output says which). Known gaps between the
simulator and the kernel come from the profile's machine-readable list when the core
has one, else from `KNOWN_GAPS` below.

    from mptcplab.kernel.validate import run_validate
    report = run_validate(quick=True)        # a ValidateReport; .text() is the table
"""
from __future__ import annotations

import csv
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..scenario import Scenario
from ..stats import diff_ci, mean_ci, t_quantile

__all__ = ["MATRIX", "QUICK_MATRIX", "KNOWN_GAPS", "RATIO_RANGE", "SHARE_POINTS", "ValidateReport",
           "known_gaps", "ratio_ci", "run_validate", "sim_side", "upstream_profile_available"]

SCENARIO_DIR = Path(__file__).resolve().parents[3] / "scenarios" / "validate"
# The fixed matrix: scenario file (without .toml) and the congestion controls it runs.
MATRIX: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("rate-limited-20ms", ("reno", "cubic", "bbr")),
    ("rate-limited-100ms", ("reno", "cubic", "bbr")),
    ("random-loss", ("reno", "cubic", "bbr")),
    ("asymmetric-rtt", ("reno", "cubic", "bbr")),
    ("buffer-blocking", ("reno", "cubic")),
    ("shared-bottleneck", ("reno", "cubic", "bbr")),
)
QUICK_MATRIX: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("rate-limited-20ms", ("cubic",)),
    ("shared-bottleneck", ("reno",)),
)
FULL_REPS, QUICK_REPS = 3, 2
FULL_DURATION_S, QUICK_DURATION_S = 30.0, 4.0
DRAIN_S = 3.0  # a kernel run's drain: goodput counts what arrived by the duration anyway
RATIO_RANGE = (0.85, 1.15)  # the target for the goodput ratio
SHARE_POINTS = 15.0         # ... and for each subflow's share, in points

# Used when the core does not publish the upstream profile's gap list.
KNOWN_GAPS: tuple[dict[str, str], ...] = (
    {"name": "rack_tlp", "kernel": "RACK-TLP loss detection and tail loss probes (RFC 8985), on in 6.18",
     "sim": "duplicate-ACK / SACK fast retransmit and the RTO only"},
    {"name": "receive_buffer_autotuning", "kernel": "receive-buffer auto-tuning from tcp_rmem[1] = 128 KiB",
     "sim": "a fixed 6 MiB receive buffer from the start"},
    {"name": "send_buffer_autotuning", "kernel": "send buffers auto-tuned (tcp_sndbuf_expand, MPTCP sums "
     "its subflows')", "sim": "a fixed 4 MiB send buffer"},
    {"name": "upstream_scheduler", "kernel": "the default scheduler picks the subflow with the least linger "
     "time (pacing rate, queued bytes) and pushes into subflow send queues",
     "sim": "minRTT over the subflows with cwnd space (without the upstream profile)"},
    {"name": "mptcp_retransmit_timer", "kernel": "an MPTCP-level retransmit timer re-injects the head of "
     "the data stream; no reinjection on a subflow RTO", "sim": "out-of-tree reinjection on a subflow RTO "
     "(without the upstream profile)"},
    {"name": "sack_compression", "kernel": "SACK compression and GRO-driven ACK patterns",
     "sim": "an immediate ACK for every out-of-order segment"},
    {"name": "tcp_since_4x", "kernel": "TCP changes since Linux 4.x (TSQ, autocorking, cwnd undo fixes)",
     "sim": "TCP after Linux 4.x (reference tcp.md)"},
)


# -- the simulator side ---------------------------------------------------------------------
def _profile_values() -> list[str]:
    """The values the scenario schema admits for `run.profile` ([] when it has no such
    field): read from `mptcplab.schema()`, so this follows the core it runs with."""
    from .. import schema
    from ..sweep.plan import _resolve

    root = json.loads(schema())
    values: list[str] = []

    def collect(node: Any) -> None:
        for alt in _resolve(node, root):
            for v in alt.get("enum") or []:
                if isinstance(v, str) and v not in values:
                    values.append(v)
            if isinstance(alt.get("const"), str) and alt["const"] not in values:
                values.append(alt["const"])

    for run_node in _resolve((root.get("properties") or {}).get("run"), root):
        prof = (run_node.get("properties") or {}).get("profile")
        if prof is not None:
            collect(prof)
    return values


def upstream_profile_available() -> bool:
    return "upstream" in _profile_values()


def sim_side(scenario: Scenario) -> tuple[Scenario, str]:
    """The scenario as `validate` runs it on the simulator, and a line saying how.

    With the upstream profile in the schema (``run.profile = "upstream"``): the profile.
    A connection that names no path manager then runs the in-kernel PM model; the kernel
    backend sets `ip mptcp limits set subflow 8`, so the model gets ``subflows_limit =
    8`` where the core accepts it (it changes nothing with up to 3 paths, the kernel's
    default limit of 2 extra subflows). Without the profile: unchanged."""
    if not upstream_profile_available():
        return scenario, "upstream profile: not available (the scenario schema has no run.profile = \"upstream\")"
    scn = scenario.with_("run.profile", "upstream")
    scn.validate()
    raw = scn.to_dict()
    for i, c in enumerate(raw.get("connections") or []):
        if c.get("path_manager") is None and len(c.get("paths") or []) > 3:
            try:
                cand = scn.with_(f"connections[{i}].path_manager", "in_kernel").with_(
                    f"connections[{i}].path_manager_options", {"subflows_limit": 8})
                cand.validate()
                scn = cand
            except ScenarioError:
                pass
    return scn, "upstream profile: applied (run.profile = \"upstream\")"


def known_gaps() -> tuple[list[dict[str, str]], str]:
    """(gaps, source): the upstream profile's gap list from the core when it publishes
    one (`mptcplab.profile_gaps`, or the profiles' JSON), else KNOWN_GAPS."""
    import mptcplab

    from .. import _core

    getter = getattr(mptcplab, "profile_gaps", None)
    if callable(getter):
        try:
            gaps = [dict(g) for g in getter("upstream")]
            if gaps:
                return gaps, "mptcplab.profile_gaps(\"upstream\")"
        except Exception:  # noqa: BLE001 - fall back to our list
            pass
    for name in ("profiles_json", "profile_catalogue_json", "profiles"):
        fn = getattr(_core, name, None)
        if not callable(fn):
            continue
        try:
            data = fn()
            data = json.loads(data) if isinstance(data, str) else data
            for prof in data:
                if prof.get("name") == "upstream" and prof.get("gaps"):
                    return [dict(g) for g in prof["gaps"]], f"mptcplab._core.{name}()"
        except Exception:  # noqa: BLE001
            pass
    return [dict(g) for g in KNOWN_GAPS], "mptcplab.kernel.validate.KNOWN_GAPS (no profile gap list in the core)"


# -- statistics -----------------------------------------------------------------------------
def ratio_ci(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """mean(a) / mean(b) and its 95 % interval (lo, hi) by the delta method:
    Var(r) ≈ r² (se_a²/ā² + se_b²/b̄²), se = s/√n; Student t with Welch–Satterthwaite
    degrees of freedom on the two relative-variance terms. A side with no spread (the
    simulator without loss) adds nothing; both without: a zero-width interval."""
    a, b = [float(x) for x in a], [float(x) for x in b]
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    if mb == 0:
        return math.nan, math.nan, math.nan
    r = ma / mb
    if len(a) < 2 or len(b) < 2:
        return r, math.nan, math.nan

    def rel_var(v: list[float], m: float) -> float:
        if m == 0:
            return 0.0
        s2 = sum((x - m) ** 2 for x in v) / (len(v) - 1)
        return s2 / len(v) / (m * m)

    ta, tb = rel_var(a, ma), rel_var(b, mb)
    if ta + tb == 0:
        return r, r, r
    df = (ta + tb) ** 2 / ((ta ** 2 / (len(a) - 1) if ta else 0.0) + (tb ** 2 / (len(b) - 1) if tb else 0.0))
    half = t_quantile(0.975, df) * r * math.sqrt(ta + tb)
    return r, r - half, r + half


# -- one run ----------------------------------------------------------------------------------
def run_figures(result: Any) -> dict[str, Any]:
    """What validate keeps of one run (either backend): the first MPTCP connection's
    goodput, each path's share of its subflows' acknowledged bytes, the byte-weighted
    mean SRTT, and every flow's goodput."""
    summ = result.summary
    mp = summ[summ["kind"] == "mptcp"]
    if mp.empty:
        raise ScenarioError("connections", "validate needs an MPTCP connection")
    flow = str(mp["flow"].iloc[0])
    subs = result.subflow_summary
    subs = subs[subs["flow"] == flow]
    acked = subs.groupby("path", sort=False)["bytes_acked"].sum()
    total = float(acked.sum())
    ts = result.timeseries.subflows
    ts = ts[(ts["flow"] == flow) & (ts["srtt_ms"] > 0)]
    srtt = ts.groupby("subflow")["srtt_ms"].mean()
    w_sum = w = 0.0
    for _, s in subs.iterrows():
        sid = s["subflow"]
        if sid in srtt.index and s["bytes_acked"] > 0:
            w_sum += float(srtt[sid]) * float(s["bytes_acked"])
            w += float(s["bytes_acked"])
    return {
        "flow": flow,
        "goodput_mbps": float(mp["goodput_mbps"].iloc[0]),
        "shares": {str(p): (float(v) / total if total > 0 else math.nan) for p, v in acked.items()},
        "rtt_ms": w_sum / w if w > 0 else math.nan,
        "flows_goodput_mbps": {str(f): float(g) for f, g in zip(summ["flow"], summ["goodput_mbps"])},
        "integrity": {str(f): str(i) for f, i in zip(summ["flow"], summ["integrity"])}
        if "integrity" in summ.columns else None,
    }


# -- the report -----------------------------------------------------------------------------
@dataclass
class Row:
    scenario: str
    cc: str
    runs: dict[str, list[dict[str, Any]]]  # backend -> per-run figures

    def goodputs(self, backend: str) -> list[float]:
        return [r["goodput_mbps"] for r in self.runs[backend]]

    def paths(self) -> list[str]:
        out: list[str] = []
        for backend in ("sim", "kernel"):
            for r in self.runs[backend]:
                for p in r["shares"]:
                    if p not in out:
                        out.append(p)
        return out

    def shares(self, backend: str, path: str) -> list[float]:
        return [100.0 * r["shares"].get(path, 0.0) for r in self.runs[backend]]

    def figures(self) -> dict[str, Any]:
        sim_g, ker_g = self.goodputs("sim"), self.goodputs("kernel")
        r, lo, hi = ratio_ci(sim_g, ker_g)
        share = {p: diff_ci(self.shares("sim", p), self.shares("kernel", p)) for p in self.paths()}
        rtt = {b: mean_ci([x["rtt_ms"] for x in self.runs[b]]) for b in ("sim", "kernel")}
        ratio_ok = RATIO_RANGE[0] <= r <= RATIO_RANGE[1]
        shares_ok = all(abs(d) <= SHARE_POINTS for d, _ in share.values())
        return {
            "scenario": self.scenario, "cc": self.cc,
            "goodput_sim_mbps": mean_ci(sim_g), "goodput_kernel_mbps": mean_ci(ker_g),
            "ratio": r, "ratio_lo": lo, "ratio_hi": hi,
            "share_diff_points": share, "rtt_sim_ms": rtt["sim"], "rtt_kernel_ms": rtt["kernel"],
            "ratio_ok": ratio_ok, "shares_ok": shares_ok,
        }


def _pm(m_ci: tuple[float, float], digits: int = 2) -> str:
    m, h = m_ci
    if math.isnan(m):
        return "-"
    return f"{m:.{digits}f} ± {h:.{digits}f}" if not math.isnan(h) else f"{m:.{digits}f}"


def _signed(m_ci: tuple[float, float]) -> str:
    m, h = m_ci
    return f"{m:+.1f} ± {h:.1f}" if not math.isnan(h) else f"{m:+.1f}"


@dataclass
class ValidateReport:
    rows: list[Row]
    meta: dict[str, Any]
    gaps: list[dict[str, str]]
    gaps_source: str
    scenarios: dict[str, str] = field(default_factory=dict)  # name -> TOML (kernel side)

    def table(self) -> list[dict[str, Any]]:
        return [r.figures() for r in self.rows]

    def worst(self) -> dict[str, Any] | None:
        """The row whose ratio is farthest from 1 (in |log r|: 0.5 and 2 are as far)."""
        rows = [f for f in self.table() if f["ratio"] > 0 and not math.isnan(f["ratio"])]
        return max(rows, key=lambda f: abs(math.log(f["ratio"]))) if rows else None

    def text(self) -> str:
        from ..cli import render_table

        head = [
            f"mptcplab validate{' --quick' if self.meta['quick'] else ''}: simulator (mptcplab "
            f"{self.meta['version']}) vs Linux {self.meta['kernel']} MPTCP, {self.meta['reps']} runs per backend "
            f"(seeds 1..{self.meta['reps']}), {self.meta['duration_s']:g} s each",
            self.meta["profile"],
            "ratio = mean sim goodput / mean kernel goodput [95 % delta-method interval]; share Δ = sim − kernel "
            "share of the connection's acked bytes, points ± 95 % CI; RTT = byte-weighted mean SRTT",
        ]
        rows = []
        for f in self.table():
            shares = ", ".join(f"{p} {_signed(v)}" for p, v in f["share_diff_points"].items())
            verdict = "ok" if f["ratio_ok"] and f["shares_ok"] else "MISS (" + ", ".join(
                x for x, ok in (("ratio", f["ratio_ok"]), ("shares", f["shares_ok"])) if not ok) + ")"
            rows.append([
                f["scenario"], f["cc"], _pm(f["goodput_sim_mbps"]), _pm(f["goodput_kernel_mbps"]),
                f"{f['ratio']:.2f} [{f['ratio_lo']:.2f}, {f['ratio_hi']:.2f}]", shares,
                _pm(f["rtt_sim_ms"], 1), _pm(f["rtt_kernel_ms"], 1), verdict,
            ])
        table = render_table(
            ["scenario", "cc", "sim Mbit/s", "kernel Mbit/s", "sim/kernel", "share Δ points (sim − kernel)",
             "RTT sim ms", "RTT kernel ms", "verdict"], rows, right={2, 3, 4, 6, 7})
        gaps = [f"known gaps ({self.gaps_source}):"] + [f"  - {_gap(g)}" for g in self.gaps]
        n = len(self.rows)
        n_ratio = sum(f["ratio_ok"] for f in self.table())
        n_share = sum(f["shares_ok"] for f in self.table())
        w = self.worst()
        tail = [f"{n_ratio} of {n} ratios within {RATIO_RANGE[0]:g}–{RATIO_RANGE[1]:g}; shares within "
                f"±{SHARE_POINTS:g} points in {n_share} of {n}"]
        tail.append(f"worst ratio: {w['ratio']:.2f} [{w['ratio_lo']:.2f}, {w['ratio_hi']:.2f}] "
                    f"({w['scenario']}, {w['cc']})" if w else "worst ratio: -")
        return "\n".join(head + ["", table, ""] + gaps + [""] + tail)

    # -- files -----------------------------------------------------------------------------
    @classmethod
    def load(cls, where: str | Path) -> ValidateReport:
        """Read `validate.json` (a directory or the file) back, e.g. to print the table
        again: the figures are recomputed from the stored runs."""
        path = Path(where)
        path = path / "validate.json" if path.is_dir() else path
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise ScenarioError("<results>", f"cannot read '{path}': {err}") from None
        if data.get("kind") != "validate":
            raise ScenarioError("kind", f"{path}: expected \"validate\", got {data.get('kind')!r}")
        rows = [Row(r["scenario"], r["cc"], {b: r[b] for b in ("sim", "kernel")}) for r in data["runs"]]
        return cls(rows, data["meta"], data["gaps"], data["gaps_source"])

    def to_json(self) -> dict[str, Any]:
        w = self.worst()
        return {
            "kind": "validate", "meta": self.meta, "gaps": self.gaps, "gaps_source": self.gaps_source,
            "ratio_range": list(RATIO_RANGE), "share_points": SHARE_POINTS,
            "table": [_plain(f) for f in self.table()],
            "worst": _plain(w) if w else None,
            "runs": [{"scenario": r.scenario, "cc": r.cc, **{b: r.runs[b] for b in ("sim", "kernel")}}
                     for r in self.rows],
        }

    def csv_rows(self) -> list[list[Any]]:
        out = [["scenario", "cc", "goodput_sim_mbps", "goodput_sim_ci", "goodput_kernel_mbps", "goodput_kernel_ci",
                "ratio", "ratio_lo", "ratio_hi", "path", "share_diff_points", "share_diff_ci", "rtt_sim_ms",
                "rtt_sim_ci", "rtt_kernel_ms", "rtt_kernel_ci", "ratio_ok", "shares_ok"]]
        for f in self.table():
            for p, (d, h) in f["share_diff_points"].items():
                out.append([f["scenario"], f["cc"], *f["goodput_sim_mbps"], *f["goodput_kernel_mbps"], f["ratio"],
                            f["ratio_lo"], f["ratio_hi"], p, d, h, *f["rtt_sim_ms"], *f["rtt_kernel_ms"],
                            f["ratio_ok"], f["shares_ok"]])
        return out

    def reproduction(self) -> Any:
        """The result as a `Reproduction` (`mptcplab report DIR` renders it): per
        scenario and CC, claims "ratio within 0.85–1.15" and "shares within ±15 points"."""
        from ..reproduce.model import Claim, Figure, Reproduction, Table

        claims, k = [], 1
        for f in self.table():
            name = f"{f['scenario']} / {f['cc']}"
            claims.append(Claim(
                f"C{k}", f"{name}: sim/kernel goodput ratio within {RATIO_RANGE[0]:g}–{RATIO_RANGE[1]:g}",
                "target of issue 6", f"{f['ratio']:.3f} [{f['ratio_lo']:.3f}, {f['ratio_hi']:.3f}] "
                f"(sim {_pm(f['goodput_sim_mbps'])}, kernel {_pm(f['goodput_kernel_mbps'])} Mbit/s)",
                bool(f["ratio_ok"])))
            claims.append(Claim(
                f"C{k + 1}", f"{name}: every subflow's share within ±{SHARE_POINTS:g} points",
                "target of issue 6", "; ".join(f"{p} {_signed(v)}" for p, v in f["share_diff_points"].items()),
                bool(f["shares_ok"])))
            k += 2
        cols = ["scenario", "cc", "sim Mbit/s", "kernel Mbit/s", "ratio", "ratio lo", "ratio hi",
                "RTT sim ms", "RTT kernel ms"]
        rows = [[f["scenario"], f["cc"], f["goodput_sim_mbps"][0], f["goodput_kernel_mbps"][0], f["ratio"],
                 f["ratio_lo"], f["ratio_hi"], f["rtt_sim_ms"][0], f["rtt_kernel_ms"][0]] for f in self.table()]
        cats = [f"{r.scenario}/{r.cc}" for r in self.rows]
        fig = Figure("Goodput of the MPTCP connection per run", "bar", {
            "categories": cats,
            "series": [{"label": b, "values": [r.goodputs(b) for r in self.rows]} for b in ("sim", "kernel")],
        }, ylabel="Mbit/s")
        w = self.worst()
        summary = (f"The validate matrix on both backends: {len(self.rows)} scenario/CC pairs, "
                   f"{self.meta['reps']} runs of {self.meta['duration_s']:g} s each per backend. "
                   f"{self.meta['profile']}. Worst ratio: "
                   + (f"{w['ratio']:.2f} ({w['scenario']}, {w['cc']})." if w else "-."))
        notes = (f"Known gaps ({self.gaps_source}):\n\n"
                 + "\n".join(f"* {_gap(g)}" for g in self.gaps)
                 + "\n\nCauses of the misses and what would close them: docs/kernel.md, \"mptcplab validate\".")
        return Reproduction(
            paper="validate" + ("-quick" if self.meta["quick"] else ""),
            title="mptcplab validate: the simulator against the Linux MPTCP stack",
            seed_file="-", summary=summary, claims=claims,
            tables=[Table("sim vs kernel", cols, rows, note="ratio interval: delta method, 95 %")],
            figures=[fig], meta={k: v for k, v in self.meta.items() if not isinstance(v, (dict, list))},
            scenarios=self.scenarios, notes=notes)

    def save(self, out: str | Path) -> Path:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "validate.txt").write_text(self.text() + "\n", encoding="utf-8")
        (out / "validate.json").write_text(json.dumps(self.to_json(), indent=1, default=_plain_default) + "\n",
                                           encoding="utf-8")
        with open(out / "validate.csv", "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(self.csv_rows())
        self.reproduction().save(out)
        return out


def _gap(g: dict[str, Any]) -> str:
    """One known gap on a line: "name: kernel: ...; sim: ..." (other keys as they come)."""
    name = g.get("name", "?")
    rest = [f"{k}: {v}" for k, v in g.items() if k != "name"]
    return f"{name}: " + "; ".join(rest)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _plain_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)


# -- running --------------------------------------------------------------------------------
def run_validate(
    quick: bool = False,
    reps: int | None = None,
    out: str | Path | None = None,
    duration: float | None = None,
    matrix: Sequence[tuple[str, Sequence[str]]] | None = None,
    scenario_dir: str | Path | None = None,
    log: Callable[[str], None] | None = None,
) -> ValidateReport:
    """Run the matrix (QUICK_MATRIX with `quick`) on both backends, `reps` runs each
    (default 3, quick 2), one run at a time: first the simulator's runs of a scenario,
    then the kernel's. Writes validate.txt/.json/.csv and reproduction.json into `out`
    when given. Raises ScenarioError on bad arguments, KernelRunError/IntegrityError
    when a kernel run fails (never a silent figure)."""
    import platform

    from .. import __version__
    from ..api import simulate
    from .backend import check_environment, run_kernel

    reps = (QUICK_REPS if quick else FULL_REPS) if reps is None else reps
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 2:
        raise ScenarioError("--reps", f"expected an integer >= 2 (a CI needs two runs), got {reps!r}")
    duration = (QUICK_DURATION_S if quick else FULL_DURATION_S) if duration is None else float(duration)
    matrix = list(matrix if matrix is not None else (QUICK_MATRIX if quick else MATRIX))
    src = Path(scenario_dir) if scenario_dir is not None else SCENARIO_DIR
    say = log or (lambda m: print(m, file=sys.stderr, flush=True))
    check_environment()
    bases: dict[str, Scenario] = {}
    for name, _ in matrix:
        path = src / f"{name}.toml"
        if not path.is_file():
            raise ScenarioError("<matrix>", f"no scenario file {path}")
        bases[name] = Scenario.from_toml(path)
    _, profile_line = sim_side(next(iter(bases.values())))
    gaps, gaps_source = known_gaps()

    t_start = time.monotonic()
    total = sum(len(ccs) for _, ccs in matrix) * reps * 2
    done = 0
    rows: list[Row] = []
    scenarios: dict[str, str] = {}
    for name, ccs in matrix:
        for cc in ccs:
            scn = bases[name].with_duration(duration).with_("connections[0].cc", cc)
            for i, _f in enumerate(scn.to_dict().get("flows") or []):
                scn = scn.with_(f"flows[{i}].cc", cc)
            scenarios[f"{name}/{cc}"] = scn.to_toml()
            sim_scn, _ = sim_side(scn)
            runs: dict[str, list[dict[str, Any]]] = {"sim": [], "kernel": []}
            for seed in range(1, reps + 1):
                runs["sim"].append({"seed": seed, **run_figures(simulate(sim_scn, seed=seed))})
                done += 1
            for seed in range(1, reps + 1):
                say(f"validate: {name}/{cc}: kernel run {seed}/{reps} ({done}/{total} runs, "
                    f"{time.monotonic() - t_start:.0f} s)")
                runs["kernel"].append({"seed": seed, **run_figures(run_kernel(scn, seed=seed, drain_s=DRAIN_S))})
                done += 1
            rows.append(Row(name, cc, runs))
    meta = {
        "version": __version__, "kernel": platform.release(), "quick": quick, "reps": reps,
        "duration_s": duration, "profile": profile_line, "matrix": [[n, list(c)] for n, c in matrix],
        "wall_s": round(time.monotonic() - t_start, 1),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "ratio_range": list(RATIO_RANGE), "share_points": SHARE_POINTS,
    }
    report = ValidateReport(rows, meta, gaps, gaps_source, scenarios)
    if out is not None:
        report.save(out)
    return report
