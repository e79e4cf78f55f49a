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

import bisect
import collections
import csv
import dataclasses
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
from ..stats import diff_ci, mean_ci, same_in_all_runs, t_quantile
from . import apps
from .emulator import EMULATOR_REVISION

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
RATIO_RANGE = (0.85, 1.15)  # the target for the goodput ratio (issues 6 and 12)
SHARE_POINTS = 10.0         # ... and for each subflow's share, in points (issue 12)


@dataclass(frozen=True)
class Point:
    """One row group of the matrix: a scenario file with overrides, run with each CC.

    `label` names the row (unique in a family); `duration_s` and `reps` default to the
    matrix's (30 s, 3 runs); `bin_s` asks for the goodput per bin as well as the mean.
    `sim_reps`: the simulator's runs where they may outnumber the kernel's (seeds
    1..sim_reps; default `reps`): only for points without random loss, whose seeds pair
    nothing between the backends (with loss both backends draw the same losses per seed,
    so the runs must pair)."""
    family: str
    label: str
    scenario: str
    ccs: tuple[str, ...]
    overrides: tuple[tuple[str, Any], ...] = ()
    duration_s: float | None = None
    reps: int | None = None
    bin_s: float | None = None
    sim_reps: int | None = None


# The simulator's runs per bounded-buffer point (2026-11-27). These points have no random
# loss: a run differs from another only by the emulator's delay error, which the simulator
# draws as jitter (`with_emulator_noise`), and where the receive deadlock splits the runs
# into two modes a mean over ten runs is mostly luck (the simulator against itself, ten
# runs a side: outside 0.85-1.15 in 22-52 % of draws at the six split points of topology 1).
# A simulator run here costs 0.03-0.1 s, so its mean is taken over 100 runs and the ratio's
# uncertainty is the kernel's runs alone; `band_power` says how far that still reaches.
BOUNDED_BUFFER_SIM_REPS = 100


def _bounded_buffer() -> tuple[Point, ...]:
    """Seed 001's regime (issue 12): both topologies, the initial subflow on the fastest
    and on the slowest path, receive buffers of 100 KB, 200 KB and 1 MB of payload, and
    200 KB with a 200 KB send buffer; reno and cubic, 60 s, 3 kernel runs (10 where the
    receive deadlock splits the runs, 20 where ten leave the band to luck) and
    `BOUNDED_BUFFER_SIM_REPS` simulator runs."""
    out = []
    initials = {"seed001-topology1": (("fast", "path1"), ("slow", "path4")),
                "seed001-topology2": (("fast", "path2"), ("slow", "path1"))}
    buffers = (("rcv100KB", (("connections[0].receive_buffer", "100 KB"),)),
               ("rcv200KB", (("connections[0].receive_buffer", "200 KB"),)),
               ("rcv1MB", (("connections[0].receive_buffer", "1 MB"),)),
               ("rcv200KB-snd200KB", (("connections[0].receive_buffer", "200 KB"),
                                      ("connections[0].send_buffer", "200 KB"))))
    # Ten runs where the runs split into two modes: every point where either backend
    # deadlocked in one of its first three runs (2026-11-25; gap `deadlock_timing`), and
    # topology 1 slow first with the locked send buffer, whose first three kernel runs
    # under emulator revision 4 split without a deadlock (reno 1.96, 1.83, 3.58 Mbit/s,
    # 2026-11-27; the kernel's runs 4-10 are stored beside 1-3). A mean over three runs of
    # a two-mode mixture is mostly luck.
    two_modes = {"topology1/fast/rcv100KB", "topology1/fast/rcv200KB", "topology1/fast/rcv200KB-snd200KB",
                 "topology1/slow/rcv100KB", "topology1/slow/rcv200KB-snd200KB", "topology2/fast/rcv100KB",
                 "topology2/slow/rcv100KB"}
    # Twenty where ten still leave the band to luck: a perfect model (the kernel's runs
    # drawn from the simulator's own) fell outside 0.85-1.15 in more than 20 % of the
    # draws with ten kernel runs (`band_power`, 2026-11-27: topology 1 fast first 200 KB
    # 0.53 / 0.49, fast first 100 KB 0.35 / 0.34, slow first 100 KB 0.23). All three
    # measured (the third on 2026-11-27: reno 0.98, cubic 0.97 with twenty runs).
    # 2026-11-27 (later), the stricter reading of the same table, decided before the runs: twenty
    # wherever `band_power` asks for more than ten kernel runs to bring that chance to
    # 5 % (topology 1 fast first 200 KB with the send buffer, reno: 20; topology 2 fast
    # first 100 KB: 20 / 15), whether the row is in band today or not.
    many_runs = {"topology1/fast/rcv200KB", "topology1/fast/rcv100KB", "topology1/slow/rcv100KB",
                 "topology1/fast/rcv200KB-snd200KB", "topology2/fast/rcv100KB"}
    # 2026-11-28, decided before the runs: toward what `band_power` asks for with revision 5's
    # runs (topology 1 fast first 100 KB 50, 200 KB 100-150, slow first 100 KB 30), as far as
    # one session's kernel time goes, in that order; both CCs of a row to the same count.
    # Whatever the rows show, the runs stay (docs/kernel.md, "More kernel runs where the
    # deadlock splits them").
    # Topology 2 fast first 200 KB with the send buffer (ten runs, added last in that order)
    # did not fit in that session; it got them on 2026-11-28 (later).
    more_runs = {"topology1/fast/rcv100KB": 40, "topology1/fast/rcv200KB": 40, "topology1/slow/rcv100KB": 30,
                 "topology2/fast/rcv200KB-snd200KB": 10}
    # 2026-11-29 (stop 39), decided before the runs: ten where three kernel runs under revision
    # 6 left either CC's 95 % interval wider than 15 % of its mean (the loss-driven 1 MB rows
    # and topology 2 fast first 200 KB), whatever the ratio; `band_power` draws from the
    # simulator's runs, whose spread there is a tenth of the kernel's, so it asked for three.
    wide = {"topology1/fast/rcv1MB", "topology1/slow/rcv1MB", "topology2/fast/rcv200KB",
            "topology2/fast/rcv1MB", "topology2/slow/rcv1MB"}
    more_runs |= dict.fromkeys(wide, 10)
    # Kernel runs per row: each later tier overrides the one before; every other row has 3.
    kernel_runs = dict.fromkeys(two_modes, 10) | dict.fromkeys(many_runs, 20) | more_runs
    for scn, inits in initials.items():
        for first, path in inits:
            for bname, over in buffers:
                label = f"{scn.removeprefix('seed001-')}/{first}/{bname}"
                out.append(Point("bounded-buffer", label, scn,
                                 ("reno", "cubic"), (("connections[0].initial_path", path),) + over,
                                 duration_s=60.0, reps=kernel_runs.get(label, 3),
                                 sim_reps=BOUNDED_BUFFER_SIM_REPS))
    return tuple(out)


def _lossy_start() -> tuple[Point, ...]:
    """Seed 003's regime (issue 12): its experiment 1 (10 s) and two 100 Mbit/s 50 ms
    paths at 0.01 % and 0.1 % loss (30 s); reno, cubic, bbr; 5 runs; goodput per 5 s."""
    ccs = ("reno", "cubic", "bbr")
    return (
        Point("lossy-start", "exp1", "lossy-start-exp1", ccs, duration_s=10.0, reps=5, bin_s=5.0),
        *(Point("lossy-start", f"two-path/loss{tag}", "lossy-two-path", ccs,
                tuple((f"links[{i}].loss", loss) for i in (0, 1)), duration_s=30.0, reps=5, bin_s=5.0)
          for tag, loss in (("0.01%", 0.0001), ("0.1%", 0.001))),
    )


# Core rows with more runs than FULL_REPS. The shared bottleneck's shares had 95 % intervals
# of 7-19 points with three kernel runs, against the band's 10 (2026-11-28: one of its shares
# decided whether two receive-window rules went in, docs/kernel.md); it has no random loss,
# so the simulator's jittered runs may outnumber the kernel's.
# Under emulator revision 6 (2026-12-07) three kernel runs left two rows' means loose (95 %
# interval wider than 15 % of the mean: random-loss cubic 31 %, buffer-blocking cubic 74 %,
# one run of three at 8.18 Mbit/s against 4.91 and 5.18); the bounded-buffer family's
# ten-run rule, applied to them after that count was seen (docs/kernel.md, stop 40).
_CORE_RUNS: dict[str, dict[str, int]] = {"shared-bottleneck": {"reps": 10, "sim_reps": 100},
                                         "buffer-blocking": {"reps": 10, "sim_reps": 100},
                                         "random-loss": {"reps": 10}}


FAMILIES: dict[str, tuple[Point, ...]] = {
    "core": tuple(Point("core", name, name, ccs, **_CORE_RUNS.get(name, {})) for name, ccs in MATRIX),
    "bounded-buffer": _bounded_buffer(),
    "lossy-start": _lossy_start(),
}

# Used when the core does not publish the upstream profile's gap list.
KNOWN_GAPS: tuple[dict[str, str], ...] = (
    {"name": "spurious_recovery_undo", "kernel": "the undo of spurious recoveries (DSACK, timestamps), "
     "reordering seen", "sim": "no DSACK, no undo, no reordering (RACK and the loss probe are modelled)"},
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
    from ..catalog import schema
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


def sim_side(scenario: Scenario, profile: str = "upstream") -> tuple[Scenario, str]:
    """The scenario as `validate` runs it on the simulator, and a line saying how.

    `profile = "out_of_tree"` runs the simulator's default profile instead (the kernels
    the seeds ran, compared here with the 6.18 kernel only to show how far apart they
    are); the scenario's own fields stay as they are.

    With the upstream profile in the schema (``run.profile = "upstream"``): the profile.
    A connection that names no path manager then runs the in-kernel PM model; the kernel
    backend sets `ip mptcp limits set subflow 8`, so the model gets ``subflows_limit =
    8`` where the core accepts it (it changes nothing with up to 3 paths, the kernel's
    default limit of 2 extra subflows). Without the profile: unchanged."""
    if profile == "out_of_tree":
        scn = scenario.with_("run.profile", "out_of_tree")
        scn.validate()
        scn, noise = with_emulator_noise(scn)
        return scn, "out_of_tree profile: applied (run.profile = \"out_of_tree\"; the kernel is upstream)" + noise
    if profile != "upstream":
        raise ScenarioError("--profile", f"expected \"upstream\" or \"out_of_tree\", got {profile!r}")
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
    scn, writer = with_kernel_writer(scn)
    scn, noise = with_emulator_noise(scn)
    return scn, "upstream profile: applied (run.profile = \"upstream\")" + writer + noise


def with_kernel_writer(scenario: Scenario) -> tuple[Scenario, str]:
    """The simulator's side with the kernel backend's writer: bulk senders that poll the
    socket before each `send` of at most one 64 KiB chunk (`apps._bulk`: a Python socket
    with a timeout polls for POLLOUT first, and MPTCP reports POLLOUT only when free space
    is at least half the queued memory). Such a writer tops the send buffer up a chunk at
    a time and leaves it a third short of full, where a blocking writer fills it; with a
    locked send buffer that decides what is written when the window opens
    (docs/research/upstream-traces-2026-11-27.md, section 2)."""
    raw = scenario.to_dict()
    scn, n = scenario, 0
    for group in ("connections", "flows"):
        for i, c in enumerate(raw.get(group) or []):
            app = c.get("app") or {"kind": "bulk"}
            if app.get("kind", "bulk") == "bulk" and app.get("poll_chunk") is None:
                scn = scn.with_(f"{group}[{i}].app", {**app, "kind": "bulk", "poll_chunk": f"{apps.CHUNK} B"})
                n += 1
    if not n:
        return scenario, ""
    scn.validate()
    return scn, f"; bulk writers poll before each {apps.CHUNK // 1024} KiB write, as the kernel backend's"


# The kernel backend's own timing noise: its selftest measured a mean one-way delay error
# of 0.048-0.069 ms over a path (two veth hops and the forwarder; docs/kernel.md,
# "Accuracy of the emulator"). Uniform in [0, 0.12 ms) has that mean.
EMULATOR_JITTER_US = 120.0


def with_emulator_noise(scenario: Scenario) -> tuple[Scenario, str]:
    """The simulator's side with the emulator's measured per-packet delay error as
    `links[].jitter` (uniform in [0, 0.12 ms) per path direction, split over its links),
    so that loss-free rows vary from run to run as the kernel's do instead of repeating
    one trajectory (gap `deadlock_timing`). Links that set a jitter keep theirs."""
    raw = scenario.to_dict()
    links = raw.get("links") or []
    if not links:
        return scenario, ""
    hops = {ln["name"]: 1 for ln in links}
    for p in raw.get("paths") or []:
        for name in p.get("links") or []:
            if name in hops:
                hops[name] = max(hops[name], len(p["links"]))
    scn = scenario
    for i, ln in enumerate(links):
        if ln.get("jitter") is None:
            scn = scn.with_(f"links[{i}].jitter", f"{EMULATOR_JITTER_US / hops[ln['name']]:g} us")
    scn.validate()
    return scn, f"; the emulator's delay error as per-packet jitter (uniform 0-{EMULATOR_JITTER_US:g} us a path direction)"


def known_gaps() -> tuple[list[dict[str, str]], str]:
    """(gaps, source): the upstream profile's gap list from the core when it publishes
    one (`mptcplab.profile_gaps`, or the profiles' JSON), else KNOWN_GAPS."""
    from .. import _core, catalog

    getter = getattr(catalog, "profile_gaps", None)
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


POWER_RUNS = (3, 5, 10, 15, 20, 30, 40, 50, 60, 80, 100, 150, 200)  # kernel runs band_power tries
POWER_DRAWS = 4000
POWER_MIN_SIM_RUNS = 20


def band_power(sim: Sequence[float], kernel_runs: int) -> dict[str, Any] | None:
    """How far the ratio band reaches with `kernel_runs` kernel runs, were the kernel's runs
    drawn from the simulator's own distribution (a perfect model): over POWER_DRAWS draws of
    that many of the simulator's runs (with replacement), the share whose mean puts
    mean(sim) / mean(draw) outside RATIO_RANGE (`p_miss`: the chance that a perfect model
    misses the band by the luck of the kernel's runs), and the fewest of POWER_RUNS kernel
    runs that bring it to 5 % or below (`runs_for_5pct`, None beyond the last). A bootstrap
    (Efron and Tibshirani, An Introduction to the Bootstrap, 1993, ch. 6) with numpy's PCG64
    seeded 0, so the figures repeat. None with fewer than POWER_MIN_SIM_RUNS simulator runs
    or when they do not spread (then any number of runs gives the same mean)."""
    import numpy as np

    g = np.asarray([float(x) for x in sim])
    if len(g) < POWER_MIN_SIM_RUNS or kernel_runs < 1 or float(g.std()) == 0.0:
        return None
    m = float(g.mean())
    rng = np.random.Generator(np.random.PCG64(0))

    def p_miss(n: int) -> float:
        means = rng.choice(g, size=(POWER_DRAWS, n), replace=True).mean(axis=1)
        with np.errstate(divide="ignore"):
            r = np.where(means > 0, m / np.where(means > 0, means, 1.0), np.inf)
        return float(np.mean((r < RATIO_RANGE[0]) | (r > RATIO_RANGE[1])))

    return {"sim_runs": int(len(g)), "kernel_runs": int(kernel_runs), "p_miss": p_miss(kernel_runs),
            "runs_for_5pct": next((n for n in POWER_RUNS if p_miss(n) <= 0.05), None)}


# -- one run ----------------------------------------------------------------------------------
def goodput_bins(result: Any, flow: str, bin_s: float, duration_s: float) -> list[float]:
    """The connection's goodput in Mbit/s over [k·bin_s, (k+1)·bin_s), from the sampled
    `bytes_delivered` (either backend): the last sample at or before each edge. A
    partial last bin is left out."""
    ts = result.timeseries.connections
    ts = ts[ts["flow"] == flow].sort_values("time_s")
    times = [float(t) for t in ts["time_s"]]
    vals = [float(v) for v in ts["bytes_delivered"]]

    def at(t: float) -> float:
        k = bisect.bisect_right(times, t + 1e-9)
        return vals[k - 1] if k else 0.0

    n = int(duration_s / bin_s + 1e-9)
    return [(at((k + 1) * bin_s) - at(k * bin_s)) * 8 / bin_s / 1e6 for k in range(n)]


def modes(values: Sequence[float], rel_gap: float = 0.25) -> list[tuple[float, int]]:
    """The runs as one mode, or two where they split: sorted, cut at the largest gap
    between neighbours when that gap exceeds `rel_gap` × the mean. [(mean, runs), ...]."""
    v = sorted(float(x) for x in values if not math.isnan(float(x)))
    if not v:
        return []
    mean = sum(v) / len(v)
    if len(v) >= 2:
        k = max(range(1, len(v)), key=lambda i: v[i] - v[i - 1])
        if v[k] - v[k - 1] > rel_gap * abs(mean):
            lo, hi = v[:k], v[k:]
            return [(sum(lo) / len(lo), len(lo)), (sum(hi) / len(hi), len(hi))]
    return [(mean, len(v))]


def run_figures(result: Any, bin_s: float | None = None, duration_s: float | None = None) -> dict[str, Any]:
    """What validate keeps of one run (either backend): the first MPTCP connection's
    goodput, each path's share of its subflows' acknowledged bytes, the byte-weighted
    mean SRTT, every flow's goodput and, with `bin_s`, the connection's goodput per
    bin (`goodput_bins`)."""
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
        **({"netstat": dict(result.meta["netstat"])} if result.meta.get("netstat") else {}),
        # The simulator's receive deadlock (`tcp.receive_memory = "skb"`): when it stalled.
        **({"receive_stalled_at_s": ((result.meta.get("receive_memory") or {}).get(flow) or {}).get("stalled_at_s"),
            "nodss_window": ((result.meta.get("receive_memory") or {}).get(flow) or {}).get("nodss_window")}
           if result.meta.get("receive_memory") else {}),
        # CUBIC's HyStart exits, summed over every flow as the kernel's host-wide TcpExt
        # counters sum them over the client's sockets.
        **({"hystart": {k: sum(int(c[k]) for c in result.meta["hystart"].values()) for k in HYSTART_COUNTERS}}
           if result.meta.get("hystart") else {}),
        # Tail loss probes and RTOs of every flow (tcp.tail_loss_probe on: the upstream
        # profile), as the client's TcpExt TCPLossProbes / TCPLossProbeRecovery /
        # TCPTimeouts count them.
        **({"tail": {"TCPLossProbes": sum(int(c["TCPLossProbes"]) for c in result.meta["loss_probes"].values()),
                     "TCPLossProbeRecovery": sum(int(c["TCPLossProbeRecovery"]) for c in result.meta["loss_probes"].values()),
                     "TCPTimeouts": int(result.subflow_summary["rto_count"].sum())}}
           if result.meta.get("loss_probes") else {}),
        **({"bins": goodput_bins(result, flow, bin_s, float(duration_s or result.meta["duration_s"])),
            "bin_s": bin_s} if bin_s else {}),
    }


def _revision_line(meta: dict[str, Any]) -> str:
    """Which emulator revisions the kernel runs came from, when not all the current one
    (emulator.py EMULATOR_REVISION; docs/kernel.md says what each changed)."""
    revs, cur = meta.get("kernel_emulator_revisions") or {}, meta.get("emulator_revision")
    if not revs or set(revs) == {str(cur)}:
        return ""
    parts = ", ".join(f"revision {k}: {v}" for k, v in revs.items())
    return (f"kernel runs by emulator revision (the current one is {cur}; earlier revisions are measured "
            f"again by deleting their stored runs): {parts}")


def _runs_line(rows: Sequence[Row]) -> str | None:
    """Where the simulator ran more runs than the kernel (`Point.sim_reps`), say so."""
    more = [(len(r.runs["sim"]), len(r.runs["kernel"])) for r in rows if len(r.runs["sim"]) > len(r.runs["kernel"])]
    if not more:
        return None
    sims, kerns = sorted({s for s, _ in more}), sorted({k for _, k in more})
    return (f"runs: the simulator {', '.join(map(str, sims))} a point (seeds 1..N; no random loss, so its seeds pair "
            f"nothing with the kernel's), the kernel {' or '.join(map(str, kerns))}")


def fisher_exact_p(a: int, n1: int, b: int, n2: int) -> float:
    """Two-sided p-value of Fisher's exact test that `a` of `n1` and `b` of `n2` come
    from one rate: the probability, under the hypergeometric law of the first count given
    both margins, of every table no more likely than the observed one (Agresti,
    Categorical Data Analysis, 2nd ed., section 3.5.1; ties within a relative 1e-7)."""
    k, n = a + b, n1 + n2
    total = math.comb(n, k)

    def prob(x: int) -> float:
        return math.comb(n1, x) * math.comb(n2, k - x) / total

    seen = prob(a)
    lo, hi = max(0, k - n2), min(k, n1)
    return min(1.0, sum(q for q in (prob(x) for x in range(lo, hi + 1)) if q <= seen * (1 + 1e-7)))


def mann_whitney_p(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Two-sided exact p-value of the Mann-Whitney U test that `xs` and `ys` come from
    one distribution (Mann & Whitney 1947): U counts the pairs with x > y (ties 1/2), and
    its null distribution is counted exactly over the C(m + n, m) orderings (the ties'
    effect on it is neglected). None when either sample is empty."""
    m, n = len(xs), len(ys)
    if not m or not n:
        return None
    u = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in xs for y in ys)
    # ways[i][j][k]: orderings of i x's and j y's with k (x, y) pairs where x comes later
    ways = [[[0] * (m * n + 1) for _ in range(n + 1)] for _ in range(m + 1)]
    for i in range(m + 1):
        for j in range(n + 1):
            if i == 0 or j == 0:
                ways[i][j][0] = 1
                continue
            for k in range(i * j + 1):
                # the largest value is an x (it beats all j y's) or a y
                ways[i][j][k] = (ways[i - 1][j][k - j] if k >= j else 0) + ways[i][j - 1][k]
    total = math.comb(m + n, m)
    below = sum(ways[m][n][k] for k in range(m * n + 1) if k <= u) / total
    above = sum(ways[m][n][k] for k in range(m * n + 1) if k >= u) / total
    return min(1.0, 2 * min(below, above))


def deadlocked(run: dict[str, Any]) -> bool | None:
    """Whether a run ended in the 6.18 receive deadlock (docs/research/upstream-receive-
    deadlock-measured.md): on the simulator its receiver stalled (`receive_stalled_at_s`);
    on the kernel the receiving host dropped in-sequence data over a subflow's buffer
    (`TcpExt.TCPRcvQDrop` > 0), which follows every deadlock and nothing else in these
    runs. None when the run does not tell."""
    if "receive_stalled_at_s" in run:
        return run["receive_stalled_at_s"] is not None
    server = (run.get("netstat") or {}).get("server")
    if server is None:
        return None
    return int(server.get("TcpExt.TCPRcvQDrop", 0)) > 0


HYSTART_COUNTERS = ("TCPHystartTrainDetect", "TCPHystartTrainCwnd", "TCPHystartDelayDetect", "TCPHystartDelayCwnd")


def _client_counters(run: dict[str, Any], key: str, counters: tuple[str, ...]) -> dict[str, int] | None:
    """`counters` of one run: the simulator's own under `key`, else the kernel's TcpExt
    counters on the sending host (`TcpExt.<name>`, 0 when absent). None when the run
    does not tell."""
    if key in run:
        return {k: int(run[key][k]) for k in counters}
    client = (run.get("netstat") or {}).get("client")
    if client is None:
        return None
    return {k: int(client.get(f"TcpExt.{k}", 0)) for k in counters}


def hystart_exits(run: dict[str, Any]) -> dict[str, int] | None:
    """CUBIC's HyStart exits from slow start (tcp_cubic.c `hystart_update`): how many by
    ACK train and by delay, and the cwnd summed at them. None when the run does not
    tell."""
    return _client_counters(run, "hystart", HYSTART_COUNTERS)


TAIL_COUNTERS = ("TCPLossProbes", "TCPLossProbeRecovery", "TCPTimeouts")


def tail_counters(run: dict[str, Any]) -> dict[str, int] | None:
    """Tail loss probes sent, the ones that repaired a loss, and retransmission timeouts
    (tcp_output.c `tcp_send_loss_probe`, tcp_input.c `tcp_process_tlp_ack`, tcp_timer.c
    `tcp_retransmit_timer`): the kernel's TcpExt counters on the sending host, the
    simulator's own count of the same events. None when the run does not tell."""
    return _client_counters(run, "tail", TAIL_COUNTERS)


def nodss_drops(run: dict[str, Any]) -> int | None:
    """Out-of-order data the receiving MPTCP socket dropped past the edge it advertised
    after a subflow had ACKed it (`mptcp_data_queue_ofo`): the kernel's
    `MPTcpExt.NoDSSInWindow` on the receiver, the simulator's `nodss_window`. None when
    the run does not tell."""
    if "nodss_window" in run:
        return None if run["nodss_window"] is None else int(run["nodss_window"])
    server = (run.get("netstat") or {}).get("server")
    if server is None:
        return None
    return int(server.get("MPTcpExt.NoDSSInWindow", 0))


# -- the report -----------------------------------------------------------------------------
@dataclass
class Row:
    scenario: str  # the point's label (the scenario file's name in the core family)
    cc: str
    runs: dict[str, list[dict[str, Any]]]  # backend -> per-run figures
    family: str = "core"

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
        out = {
            "family": self.family, "scenario": self.scenario, "cc": self.cc,
            "goodput_sim_mbps": mean_ci(sim_g), "goodput_kernel_mbps": mean_ci(ker_g),
            "ratio": r, "ratio_lo": lo, "ratio_hi": hi,
            "share_diff_points": share,
            "share_sim_pct": {p: mean_ci(self.shares("sim", p)) for p in self.paths()},
            "share_kernel_pct": {p: mean_ci(self.shares("kernel", p)) for p in self.paths()},
            "rtt_sim_ms": rtt["sim"], "rtt_kernel_ms": rtt["kernel"],
            "modes_sim_mbps": modes(sim_g), "modes_kernel_mbps": modes(ker_g),
            "ratio_ok": ratio_ok, "shares_ok": shares_ok,
            "deadlock": self.deadlock(),
            "nodss_window": self.nodss(),
            "hystart": self.hystart(),
            "tail": self.tail(),
            "band_power": band_power(sim_g, len(ker_g)),
        }
        bins = self.bins()
        if bins:
            out["bins"] = bins
        return out

    def deadlock(self) -> dict[str, Any] | None:
        """Per backend: runs that deadlocked, and the mean goodput of the deadlocked and
        of the clean runs (None where a backend's runs do not tell, or none deadlocked)."""
        out: dict[str, Any] = {}
        dead_goodputs: dict[str, list[float]] = {}
        for b in ("sim", "kernel"):
            flags = [deadlocked(r) for r in self.runs[b]]
            if any(f is None for f in flags):
                return None
            dead = [r["goodput_mbps"] for r, f in zip(self.runs[b], flags) if f]
            clean = [r["goodput_mbps"] for r, f in zip(self.runs[b], flags) if not f]
            dead_goodputs[b] = dead
            out[b] = {"runs": len(flags), "deadlocked": len(dead),
                      "deadlocked_mbps": sum(dead) / len(dead) if dead else None,
                      "clean_mbps": sum(clean) / len(clean) if clean else None}
        if not (out["sim"]["deadlocked"] or out["kernel"]["deadlocked"]):
            return None
        # Whether the two backends deadlock equally often, beyond the luck of ten runs.
        out["frequency_p"] = fisher_exact_p(out["sim"]["deadlocked"], out["sim"]["runs"],
                                            out["kernel"]["deadlocked"], out["kernel"]["runs"])
        # A deadlocked run delivers nothing after its onset, so its goodput dates the onset:
        # whether the two backends deadlock equally early.
        out["onset_p"] = mann_whitney_p(dead_goodputs["sim"], dead_goodputs["kernel"])
        return out

    def nodss(self) -> dict[str, Any] | None:
        """Per backend: the mean number of NoDSSInWindow drops a run (None where a
        backend's runs do not tell, or neither dropped anything)."""
        out: dict[str, Any] = {}
        for b in ("sim", "kernel"):
            n = [nodss_drops(r) for r in self.runs[b]]
            if not n or any(x is None for x in n):
                return None
            out[b] = {"runs": len(n), "mean": sum(n) / len(n), "runs_with_drops": sum(1 for x in n if x)}
        return out if out["sim"]["mean"] or out["kernel"]["mean"] else None

    def tail(self) -> dict[str, Any] | None:
        """Per backend: the mean tail loss probes, probe recoveries and RTOs a run (None
        unless both backends' runs tell, or when neither had any)."""
        out: dict[str, Any] = {}
        for b in ("sim", "kernel"):
            c = [tail_counters(r) for r in self.runs[b]]
            if not c or any(x is None for x in c):
                return None
            out[b] = {"runs": len(c), **{k: sum(x[k] for x in c) / len(c) for k in TAIL_COUNTERS}}
        return out if any(out[b][k] for b in out for k in TAIL_COUNTERS) else None

    def hystart(self) -> dict[str, Any] | None:
        """CUBIC rows: per backend, the mean HyStart exits a run by ACK train and by delay,
        and the mean cwnd at an exit (None unless both backends' runs tell)."""
        if self.cc != "cubic":
            return None
        out: dict[str, Any] = {}
        for b in ("sim", "kernel"):
            ex = [hystart_exits(r) for r in self.runs[b]]
            if not ex or any(x is None for x in ex):
                return None
            n = len(ex)
            exits = sum(x["TCPHystartTrainDetect"] + x["TCPHystartDelayDetect"] for x in ex)
            cwnd = sum(x["TCPHystartTrainCwnd"] + x["TCPHystartDelayCwnd"] for x in ex)
            out[b] = {"runs": n,
                      "train": sum(x["TCPHystartTrainDetect"] for x in ex) / n,
                      "delay": sum(x["TCPHystartDelayDetect"] for x in ex) / n,
                      "cwnd_at_exit": cwnd / exits if exits else None}
        return out

    def bins(self) -> list[dict[str, Any]]:
        """Per bin: both backends' mean goodput with its CI and the ratio (runs that
        carry `bins`; a bin that one run lacks is left out)."""
        runs = {b: [r["bins"] for r in self.runs[b] if r.get("bins")] for b in ("sim", "kernel")}
        if not runs["sim"] or not runs["kernel"]:
            return []
        width = float(next(r["bin_s"] for r in self.runs["sim"] if r.get("bins")))
        n = min(len(x) for b in runs for x in runs[b])
        out = []
        for k in range(n):
            sim = [x[k] for x in runs["sim"]]
            ker = [x[k] for x in runs["kernel"]]
            r, lo, hi = ratio_ci(sim, ker)
            out.append({"t0_s": k * width, "t1_s": (k + 1) * width, "sim_mbps": mean_ci(sim),
                        "kernel_mbps": mean_ci(ker), "ratio": r, "ratio_lo": lo, "ratio_hi": hi,
                        "modes_kernel_mbps": modes(ker)})
        return out


def _pm(m_ci: tuple[float, float], digits: int = 2) -> str:
    m, h = m_ci
    if math.isnan(m):
        return "-"
    return f"{m:.{digits}f} ± {h:.{digits}f}" if not math.isnan(h) else f"{m:.{digits}f}"


def _modes(ms: Sequence[Sequence[float]]) -> str:
    return " | ".join(f"{m:.2f} ({int(n)})" for m, n in ms) if len(ms) > 1 else "one"


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
    _figures: list[dict[str, Any]] | None = field(default=None, init=False, repr=False, compare=False)

    def table(self) -> list[dict[str, Any]]:
        """Every row's figures, computed once (the text, JSON, CSV and reproduction all read
        them; the tests and bootstraps in them are not free)."""
        if self._figures is None:
            self._figures = [r.figures() for r in self.rows]
        return self._figures

    def worst(self) -> dict[str, Any] | None:
        """The row whose ratio is farthest from 1 (in |log r|: 0.5 and 2 are as far)."""
        rows = [f for f in self.table() if f["ratio"] > 0 and not math.isnan(f["ratio"])]
        return max(rows, key=lambda f: abs(math.log(f["ratio"]))) if rows else None

    def text(self) -> str:
        from ..tables import render_table

        head = [
            f"mptcplab validate{' --quick' if self.meta['quick'] else ''}: simulator (mptcplab "
            f"{self.meta['version']}) vs Linux {self.meta['kernel']} MPTCP, "
            + (f"{self.meta['reps']} runs per backend (seeds 1..{self.meta['reps']}), {self.meta['duration_s']:g} s each"
               if self.meta.get("reps") else f"families {', '.join(self.meta.get('families') or [])}: runs and "
               "duration per point as the family sets them (docs/kernel.md)"),
            self.meta["profile"],
            *filter(None, [_revision_line(self.meta)]),
            "ratio = mean sim goodput / mean kernel goodput [95 % delta-method interval]; share Δ = sim − kernel "
            "share of the connection's acked bytes, points ± 95 % CI; RTT = byte-weighted mean SRTT; "
            "n = 1: every simulator run gave the same goodput (no loss or jitter to vary it)",
            *filter(None, [_runs_line(self.rows)]),
        ]
        rows = []
        table_rows = self.table()
        bimodal = any(len(f["modes_kernel_mbps"]) > 1 for f in table_rows)
        for row, f in zip(self.rows, table_rows):
            shares = ", ".join(f"{p} {_signed(v)}" for p, v in f["share_diff_points"].items())
            verdict = "ok" if f["ratio_ok"] and f["shares_ok"] else "MISS (" + ", ".join(
                x for x, ok in (("ratio", f["ratio_ok"]), ("shares", f["shares_ok"])) if not ok) + ")"
            sim_cell = (f"{f['goodput_sim_mbps'][0]:.2f} (n = 1)" if same_in_all_runs(row.goodputs("sim"))
                        else _pm(f["goodput_sim_mbps"]))
            rows.append([
                f["scenario"], f["cc"], sim_cell, _pm(f["goodput_kernel_mbps"]),
                f"{f['ratio']:.2f} [{f['ratio_lo']:.2f}, {f['ratio_hi']:.2f}]", shares,
                _pm(f["rtt_sim_ms"], 1), _pm(f["rtt_kernel_ms"], 1), verdict,
            ] + ([_modes(f["modes_kernel_mbps"])] if bimodal else []))
        table = render_table(
            ["scenario", "cc", "sim Mbit/s", "kernel Mbit/s", "sim/kernel", "share Δ points (sim − kernel)",
             "RTT sim ms", "RTT kernel ms", "verdict"] + (["kernel modes Mbit/s (runs)"] if bimodal else []),
            rows, right={2, 3, 4, 6, 7})
        binned = [f for f in table_rows if f.get("bins")]
        if binned:
            brows = []
            for f in binned:
                for b in f["bins"]:
                    brows.append([f["scenario"], f["cc"], f"{b['t0_s']:g}–{b['t1_s']:g} s", _pm(b["sim_mbps"]),
                                  _pm(b["kernel_mbps"]), f"{b['ratio']:.2f} [{b['ratio_lo']:.2f}, {b['ratio_hi']:.2f}]",
                                  _modes(b["modes_kernel_mbps"])])
            table += "\n\ngoodput per bin:\n" + render_table(
                ["scenario", "cc", "bin", "sim Mbit/s", "kernel Mbit/s", "sim/kernel", "kernel modes Mbit/s (runs)"],
                brows, right={3, 4, 5})
        dead = [f for f in table_rows if f.get("deadlock")]
        if dead:
            def cell(d: dict[str, Any], key: str) -> str:
                return "—" if d[key] is None else f"{d[key]:.2f}"
            drows = [[f["scenario"], f["cc"],
                      f"{f['deadlock']['sim']['deadlocked']} of {f['deadlock']['sim']['runs']}",
                      f"{f['deadlock']['kernel']['deadlocked']} of {f['deadlock']['kernel']['runs']}",
                      cell(f["deadlock"]["sim"], "deadlocked_mbps"), cell(f["deadlock"]["kernel"], "deadlocked_mbps"),
                      cell(f["deadlock"]["sim"], "clean_mbps"), cell(f["deadlock"]["kernel"], "clean_mbps"),
                      f"{f['deadlock']['frequency_p']:.2f}",
                      "—" if f["deadlock"]["onset_p"] is None else f"{f['deadlock']['onset_p']:.2f}"]
                     for f in dead]
            table += ("\n\nthe receive deadlock per run (sim: the receiver stalled; kernel: TCPRcvQDrop > 0 on the "
                      "receiver), each mode's mean goodput in Mbit/s, and Fisher's exact p that both backends "
                      "deadlock equally often and Mann-Whitney's that their deadlocked runs' goodputs, which date "
                      "the onset, come from one distribution (small: they differ beyond the luck of the runs):\n") + render_table(
                ["scenario", "cc", "deadlocked sim", "deadlocked kernel", "deadlocked sim Mbit/s",
                 "deadlocked kernel Mbit/s", "clean sim Mbit/s", "clean kernel Mbit/s", "same frequency p",
                 "same onset p"], drows, right={2, 3, 4, 5, 6, 7, 8, 9})
        powered = [f for f in table_rows if f.get("band_power")]
        if powered:
            prow = [[f["scenario"], f["cc"], str(b["sim_runs"]), str(b["kernel_runs"]), f"{b['p_miss']:.2f}",
                     f"> {POWER_RUNS[-1]}" if b["runs_for_5pct"] is None else str(b["runs_for_5pct"])]
                    for f in powered for b in [f["band_power"]]]
            table += (f"\n\nhow far the ratio band reaches with this many kernel runs, were the kernel's runs drawn "
                      f"from the simulator's own (a perfect model; {POWER_DRAWS} draws with replacement from the "
                      f"simulator's runs): the chance that the ratio still falls outside {RATIO_RANGE[0]:g}–"
                      f"{RATIO_RANGE[1]:g}, and the kernel runs that bring that chance to 5 %:\n") + render_table(
                ["scenario", "cc", "sim runs", "kernel runs", "P(miss | perfect model)", "kernel runs for <= 5 %"],
                prow, right={2, 3, 4, 5})
        dropped = [f for f in table_rows if f.get("nodss_window")]
        if dropped:
            nrows = [[f["scenario"], f["cc"], f"{f['nodss_window']['sim']['mean']:.0f}",
                      f"{f['nodss_window']['kernel']['mean']:.0f}",
                      f"{f['nodss_window']['sim']['runs_with_drops']} of {f['nodss_window']['sim']['runs']}",
                      f"{f['nodss_window']['kernel']['runs_with_drops']} of {f['nodss_window']['kernel']['runs']}"]
                     for f in dropped]
            table += ("\n\nout-of-order data the receiving MPTCP socket dropped past its advertised edge after a "
                      "subflow ACKed it (kernel: MPTcpExt.NoDSSInWindow; sim: the same rule), mean a run:\n") + render_table(
                ["scenario", "cc", "drops sim", "drops kernel", "runs with drops sim", "runs with drops kernel"],
                nrows, right={2, 3, 4, 5})
        hys = [f for f in table_rows if f.get("hystart")]
        if hys:
            def cw(d: dict[str, Any]) -> str:
                return "—" if d["cwnd_at_exit"] is None else f"{d['cwnd_at_exit']:.0f}"
            hrows = [[f["scenario"], f["cc"], f"{h['sim']['train']:.1f} / {h['sim']['delay']:.1f}",
                      f"{h['kernel']['train']:.1f} / {h['kernel']['delay']:.1f}", cw(h["sim"]), cw(h["kernel"])]
                     for f in hys for h in [f["hystart"]]]
            table += ("\n\nCUBIC's HyStart exits from slow start, mean a run (kernel: the client's TcpExt "
                      "TCPHystartTrainDetect / TCPHystartDelayDetect and their Cwnd sums; sim: the same events):\n") + render_table(
                ["scenario", "cc", "train / delay sim", "train / delay kernel", "cwnd at exit sim", "cwnd at exit kernel"],
                hrows, right={2, 3, 4, 5})
        tails = [f for f in table_rows if f.get("tail")]
        if tails:
            trows = [[f["scenario"], f["cc"]] + [f"{t[b][k]:.1f}" for k in TAIL_COUNTERS for b in ("sim", "kernel")]
                     for f in tails for t in [f["tail"]]]
            table += ("\n\ntail loss probes, the probes that repaired a loss, and RTOs, mean a run (kernel: the "
                      "client's TcpExt TCPLossProbes / TCPLossProbeRecovery / TCPTimeouts; sim: the same events):\n"
                      ) + render_table(
                ["scenario", "cc", "probes sim", "probes kernel", "repaired sim", "repaired kernel",
                 "RTOs sim", "RTOs kernel"], trows, right={2, 3, 4, 5, 6, 7})
        gaps = [f"known gaps ({self.gaps_source}):"] + [f"  - {_gap(g)}" for g in self.gaps]
        n = len(self.rows)
        n_ratio = sum(f["ratio_ok"] for f in table_rows)
        n_share = sum(f["shares_ok"] for f in table_rows)
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
        rows = [Row(r["scenario"], r["cc"], {b: r[b] for b in ("sim", "kernel")}, r.get("family", "core"))
                for r in data["runs"]]
        return cls(rows, data["meta"], data["gaps"], data["gaps_source"])

    def to_json(self) -> dict[str, Any]:
        w = self.worst()
        return {
            "kind": "validate", "meta": self.meta, "gaps": self.gaps, "gaps_source": self.gaps_source,
            "ratio_range": list(RATIO_RANGE), "share_points": SHARE_POINTS,
            "table": [_plain(f) for f in self.table()],
            "worst": _plain(w) if w else None,
            "runs": [{"family": r.family, "scenario": r.scenario, "cc": r.cc,
                      **{b: r.runs[b] for b in ("sim", "kernel")}}
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
                   + (f"{self.meta['reps']} runs of {self.meta['duration_s']:g} s each per backend. "
                      if self.meta.get("reps") else "runs and durations per point as its family sets them. ")
                   + 
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


# -- the kernel-side data ------------------------------------------------------------------
class KernelStore:
    """Kernel runs kept as data, one JSON file a run, so that the simulator is checked
    against them later without root (`validate --kernel-data DIR`), and a matrix that
    stops (Ctrl-C, a crash, the end of a session) resumes where it stopped.

    Layout: DIR/<family>/<label>/<cc>/seed-<n>.json holding the run's figures, the
    sha256 of the kernel-side scenario it ran (`digest`: its data as canonical JSON), the
    kernel release, the mptcplab version and the date. A stored run whose scenario hash
    differs is stale: it is not used, and a kernel run replaces it."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, point: Point, cc: str, seed: int) -> Path:
        safe = point.label.replace("%", "pct")
        return self.root / point.family / safe / cc / f"seed-{seed}.json"

    @staticmethod
    def digest(scenario: Scenario) -> str:
        """sha256 of the scenario's data as canonical JSON (keys sorted, no spaces), so
        that the key depends on the data only, not on how a TOML writer lays it out
        (until issue 15 it hashed `to_toml()`; the stored runs were re-keyed then)."""
        import hashlib

        data = json.loads(scenario.to_json())  # to_json refuses NaN and dates, naming the field
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def load(self, point: Point, cc: str, seed: int,
             scenario: Scenario) -> tuple[dict[str, Any], int, str | None] | None:
        """A stored run of this scenario: its figures, the emulator revision it was
        measured with (emulator.py EMULATOR_REVISION; for runs stored before the number,
        inferred from their keys) and the kernel release it ran on (None if not stored).
        None when missing or stale."""
        path = self.path(point, cc, seed)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            raise ScenarioError("--kernel-data", f"cannot read '{path}': {err}") from None
        if data.get("scenario_sha256") != self.digest(scenario):
            return None
        if "emulator_revision" in data:
            revision = int(data["emulator_revision"])
        else:
            revision = 3 if "loss_draws" in data else 2 if "emulator_steering" in data else 1
        return dict(data["figures"]), revision, data.get("kernel")

    def get(self, point: Point, cc: str, seed: int, scenario: Scenario) -> dict[str, Any] | None:
        run = self.load(point, cc, seed, scenario)
        return run[0] if run is not None else None

    def put(self, point: Point, cc: str, seed: int, scenario: Scenario, figures: dict[str, Any],
            meta: dict[str, Any]) -> Path:
        path = self.path(point, cc, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"kind": "validate-kernel-run", "family": point.family, "label": point.label, "cc": cc, "seed": seed,
                "scenario_sha256": self.digest(scenario), **meta, "figures": _plain(figures)}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, default=_plain_default) + "\n", encoding="utf-8")
        tmp.replace(path)  # atomic: a run is stored whole or not at all
        return path


def _releases_text(releases: collections.Counter[str]) -> str:
    """'6.18.44' for one kernel release; '6.18.44-a (120 runs), 6.18.44-b (40 runs)' for several
    (the machine's kernel may change between the sessions that measure a matrix)."""
    if len(releases) <= 1:
        return next(iter(releases), "")
    return ", ".join(f"{r} ({n} run{'' if n == 1 else 's'})" for r, n in sorted(releases.items()))


def point_scenario(base: Scenario, point: Point, cc: str, duration_s: float) -> Scenario:
    """The scenario a point runs with `cc` for `duration_s` on both backends: its base file
    with the point's overrides, the duration, and `cc` on the connection and every flow."""
    scn = base
    for fld, value in point.overrides:
        scn = scn.with_(fld, value)
    scn = scn.with_duration(duration_s).with_("connections[0].cc", cc)
    for i, _f in enumerate(scn.to_dict().get("flows") or []):
        scn = scn.with_(f"flows[{i}].cc", cc)
    return scn


def select_points(families: Sequence[str] | None = None, only: str | None = None,
                  quick: bool = False) -> list[Point]:
    """The points of the named families (default: core; quick: the quick matrix), those
    whose "label/cc" contains `only` when given (their other CCs dropped)."""
    if quick and not families:
        pts = [Point("core", name, name, ccs) for name, ccs in QUICK_MATRIX]
    else:
        names = list(families or ["core"])
        for name in names:
            if name not in FAMILIES:
                raise ScenarioError("--family", f"expected one of {', '.join(FAMILIES)}, got {name!r}")
        pts = [p for name in names for p in FAMILIES[name]]
    if only:
        kept = []
        for p in pts:
            ccs = tuple(cc for cc in p.ccs if only in f"{p.label}/{cc}")
            if ccs:
                kept.append(dataclasses.replace(p, ccs=ccs))
        if not kept:
            raise ScenarioError("--only", f"no point of the matrix matches {only!r}")
        pts = kept
    return pts


# -- running --------------------------------------------------------------------------------
def run_validate(
    quick: bool = False,
    reps: int | None = None,
    out: str | Path | None = None,
    duration: float | None = None,
    matrix: Sequence[tuple[str, Sequence[str]]] | None = None,
    scenario_dir: str | Path | None = None,
    log: Callable[[str], None] | None = None,
    *,
    families: Sequence[str] | None = None,
    only: str | None = None,
    profile: str = "upstream",
    kernel_data: str | Path | None = None,
    stored_only: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ValidateReport:
    """Run the matrix on both backends, one run at a time: per point and CC, the
    simulator's runs, then the kernel's (seeds 1..reps).

    `families` picks the matrix (`FAMILIES`: core, bounded-buffer, lossy-start; default
    core, `quick` the quick core); `only` keeps the points whose "label/cc" contains it;
    `matrix` (scenario names and CCs of the core family) overrides both. `reps` and
    `duration` override every point's. `profile`: the simulator's profile (upstream, or
    out_of_tree to see how far the seeds' kernels are from this one). `progress(done,
    total)` after every run of either backend, when given (the CLI's bar).

    `kernel_data`: a `KernelStore` directory. Kernel runs found there (same scenario)
    are used, the missing ones run and are stored as each ends; with `stored_only` a
    missing run is an error and nothing needs root. Writes validate.txt/.json/.csv and
    reproduction.json into `out` when given. Raises ScenarioError on bad arguments,
    KernelRunError/IntegrityError when a kernel run fails (never a silent figure)."""
    import platform

    from .._version import __version__
    from ..api import simulate
    from .backend import check_environment, run_kernel

    if reps is not None and (isinstance(reps, bool) or not isinstance(reps, int) or reps < 2):
        raise ScenarioError("--reps", f"expected an integer >= 2 (a CI needs two runs), got {reps!r}")
    if matrix is not None:
        points = [Point("core", name, name, tuple(ccs)) for name, ccs in matrix]
    else:
        points = select_points(families, only, quick)
    default_reps = QUICK_REPS if quick else FULL_REPS
    default_duration = QUICK_DURATION_S if quick else FULL_DURATION_S
    src = Path(scenario_dir) if scenario_dir is not None else SCENARIO_DIR
    say = log or (lambda m: print(m, file=sys.stderr, flush=True))
    store = KernelStore(kernel_data) if kernel_data is not None else None
    if stored_only and store is None:
        raise ScenarioError("--stored-only", "needs --kernel-data DIR (the stored kernel runs to compare with)")
    bases: dict[str, Scenario] = {}
    for p in points:
        path = src / f"{p.scenario}.toml"
        if not path.is_file():
            raise ScenarioError("<matrix>", f"no scenario file {path}")
        bases.setdefault(p.scenario, Scenario.from_toml(path))
    _, profile_line = sim_side(next(iter(bases.values())), profile)
    gaps, gaps_source = known_gaps()
    if not stored_only:
        check_environment()

    def plan(p: Point) -> tuple[int, float]:
        n = reps if reps is not None else (p.reps if p.reps is not None and not quick else default_reps)
        d = float(duration) if duration is not None else (
            p.duration_s if p.duration_s is not None and not quick else default_duration)
        return n, d

    def sim_runs(p: Point) -> int:
        n = plan(p)[0]
        return max(n, p.sim_reps) if p.sim_reps is not None and not quick else n

    t_start = time.monotonic()
    total = sum(len(p.ccs) * (plan(p)[0] + sim_runs(p)) for p in points)
    done = 0
    rows: list[Row] = []
    scenarios: dict[str, str] = {}
    revisions: collections.Counter[int] = collections.Counter()
    kernel_release = platform.release()
    # The kernel each run was measured on: stored runs name theirs, which may not be this
    # machine's (the header must not claim the running kernel for runs it never made).
    releases: collections.Counter[str] = collections.Counter()
    for p in points:
        n, dur = plan(p)
        for cc in p.ccs:
            scn = point_scenario(bases[p.scenario], p, cc, dur)
            if sim_runs(p) > n and any(ln.get("loss") for ln in scn.to_dict().get("links") or []):
                # With random loss both backends draw the same losses per seed: the runs must pair.
                raise ScenarioError("<matrix>", f"{p.family}/{p.label}: sim_reps needs a point without random loss "
                                    "(its seeds pair the backends' loss draws)")
            scenarios[f"{p.label}/{cc}"] = scn.to_toml()
            sim_scn, _ = sim_side(scn, profile)
            runs: dict[str, list[dict[str, Any]]] = {"sim": [], "kernel": []}
            for seed in range(1, sim_runs(p) + 1):
                runs["sim"].append({"seed": seed, **run_figures(simulate(sim_scn, seed=seed), p.bin_s, dur)})
                done += 1
                if progress is not None:
                    progress(done, total)
            for seed in range(1, n + 1):
                loaded = store.load(p, cc, seed, scn) if store is not None else None
                stored, revision, release = loaded if loaded is not None else (None, EMULATOR_REVISION, kernel_release)
                revisions[revision] += 1
                releases[release or "unknown"] += 1
                if stored is None:
                    if stored_only:
                        raise ScenarioError("--kernel-data", f"no stored kernel run for {p.family}/{p.label}/{cc} "
                                            f"seed {seed} in {store.root if store else '-'} (run without "
                                            "--stored-only, as root, to measure it)")
                    say(f"validate: {p.family}/{p.label}/{cc}: kernel run {seed}/{n} ({done}/{total} runs, "
                        f"{time.monotonic() - t_start:.0f} s)")
                    stored = run_figures(run_kernel(scn, seed=seed, drain_s=DRAIN_S), p.bin_s, dur)
                    if store is not None:
                        store.put(p, cc, seed, scn, stored, {
                            "kernel": kernel_release, "version": __version__, "duration_s": dur,
                            "emulator_revision": EMULATOR_REVISION,
                            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
                runs["kernel"].append({"seed": seed, **stored})
                done += 1
                if progress is not None:
                    progress(done, total)
            rows.append(Row(p.label, cc, runs, p.family))
    # One line for the whole matrix only when every point runs as many runs on both backends.
    uniform = {plan(p) for p in points} if all(sim_runs(p) == plan(p)[0] for p in points) else set()
    fams = sorted({p.family for p in points}, key=list(FAMILIES).index)
    meta = {
        "kernel_emulator_revisions": {str(k): v for k, v in sorted(revisions.items())},
        "emulator_revision": EMULATOR_REVISION,
        "version": __version__, "kernel": _releases_text(releases) or kernel_release, "quick": quick,
        "kernel_releases": dict(sorted(releases.items())),
        "reps": next(iter(uniform))[0] if len(uniform) == 1 else None,
        "duration_s": next(iter(uniform))[1] if len(uniform) == 1 else None,
        "families": fams, "sim_profile": profile,
        "profile": profile_line, "matrix": [[p.label, list(p.ccs)] for p in points],
        "points": [{"family": p.family, "label": p.label, "scenario": p.scenario, "ccs": list(p.ccs),
                    "overrides": [[f, v] for f, v in p.overrides], "reps": plan(p)[0],
                    "sim_reps": sim_runs(p), "duration_s": plan(p)[1],
                    "bin_s": p.bin_s} for p in points],
        "kernel_data": str(kernel_data) if kernel_data is not None else None,
        "wall_s": round(time.monotonic() - t_start, 1),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "ratio_range": list(RATIO_RANGE), "share_points": SHARE_POINTS,
    }
    report = ValidateReport(rows, meta, gaps, gaps_source, scenarios)
    if out is not None:
        report.save(out)
    return report
