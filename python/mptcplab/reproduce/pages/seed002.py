"""The seed 002 page (docs/reproductions/seed002.md). Seed 002 (Łuczak, Ignaciuk, Morawski: MPTCP congestion control for streaming over two
LTE paths): a measured-and-reported reproduction of Table 1 (issue 5).

    mptcplab reproduce streaming --page [--reps 30] [--workers 2] [--no-diagnostics]

Runs the committed scenario scenarios/reproduce/seed002-streaming-lte.toml (every
assumption is in its header) with connections[0].cc = lia, olia, balia, wvegas, R runs
(seeds 1..R) of 10 s each, computes the per-run metrics (`Result.metrics`,
docs/streaming.md), averages them over runs with 95 % CIs (Student t; seed Eq. 5, 6, 10,
11), prints the table in the shape of the seed's Table 1, evaluates the three claims and
writes docs/reproductions/seed002.md (only the part between the `generated` markers) and
docs/reproductions/seed002-runs.json (the tabulated metrics of every primary run).
"""
from __future__ import annotations

import json
import math

from ..._version import __version__
from ...api import simulate
from ...scenario import Scenario
from ...stats import mean_ci
from ..runner import scenario_path
from ..streaming import CCS, NAMES, P1, P2, PAPER  # seed 002 Table 1
from . import Page, PageContext
from .common import claims_md, ok, pool, splice

PROFILES: tuple[str, ...] = ()
SCENARIO = scenario_path("reproduce/seed002-streaming-lte.toml")
BEGIN, END = "<!-- generated:begin (mptcplab reproduce streaming --page) -->", "<!-- generated:end -->"


def default_path(profile: str | None) -> str:
    return "docs/reproductions/seed002.md"


# (row label, metric key, paper key, digits)
ROWS = [
    ("Protocol delay υ_av [ms], measured", "delay_av_ms", "upsilon_av", 0),
    ("Protocol delay υ_max [ms], measured", "delay_max_ms", "upsilon_max", 0),
    ("HoL degree ζ_av [ms], measured", "zeta_measured_av_ms", "zeta_av", 0),
    ("HoL degree ζ_max [ms], measured", "zeta_measured_max_ms", "zeta_max", 0),
    ("υ_av [ms], model (Eq. 1–2)", "upsilon_av_ms", None, 0),
    ("υ_max [ms], model", "upsilon_max_ms", None, 0),
    ("ζ_av [ms], model", "zeta_av_ms", None, 1),
    ("ζ_max [ms], model", "zeta_max_ms", None, 0),
    ("SRTT path 1 τ_1,av [ms]", f"srtt_av_ms[{P1}]", "tau1_av", 0),
    ("SRTT path 1 τ_1,max [ms]", f"srtt_max_ms[{P1}]", "tau1_max", 0),
    ("SRTT path 2 τ_2,av [ms]", f"srtt_av_ms[{P2}]", "tau2_av", 0),
    ("SRTT path 2 τ_2,max [ms]", f"srtt_max_ms[{P2}]", "tau2_max", 0),
    ("Drop rate d_1 [seg/s]", f"drop_rate_segs_per_s[{P1}]", "d1", 1),
    ("Drop rate d_2 [seg/s]", f"drop_rate_segs_per_s[{P2}]", "d2", 1),
    ("Throughput av [Mbit/s]", "throughput_mean_mbps", "thr_av", 2),
    ("Throughput max [Mbit/s]", "throughput_max_mbps", "thr_max", 2),
]
EXTRA = [
    ("Goodput over the run [Mbit/s]", "goodput_mbps", 2),
    ("Queue drops path 1 / path 2 [seg/s]", (f"queue_drop_rate_segs_per_s[{P1}]", f"queue_drop_rate_segs_per_s[{P2}]"), 1),
    ("Drop fraction path 1 / path 2 [%]", (f"drop_fraction[{P1}]", f"drop_fraction[{P2}]"), "pct"),
    ("Retransmissions path 1 / path 2 [seg/s]", (f"retrans_rate_segs_per_s[{P1}]", f"retrans_rate_segs_per_s[{P2}]"), 1),
    ("Acknowledged on path 1 / path 2 [Mbit/s]", (f"throughput_mbps[{P1}]", f"throughput_mbps[{P2}]"), 2),
    ("Utilisation (goodput / 14 Mbit/s) [%]", "utilisation", "pct"),
    ("Frames DATA_ACKed (of ~300)", "frames_acked", 0),
    ("Frame lateness to DATA_ACK, av [ms]", "frame_ack_av_ms", 0),
    ("Frame lateness to DATA_ACK, max [ms]", "frame_ack_max_ms", 0),
]


def _one(job: tuple[str, str, int]) -> dict[str, float]:
    cc, scenario_json, seed = job
    res = simulate(Scenario.from_dict(json.loads(scenario_json)), seed=seed)
    return {"cc": cc, "seed": seed, **{k: float(v) for k, v in res.metrics().items()}}


def run_all(ctx: PageContext, runs: int, workers: int, changes: dict | None = None,
            stage: str = "Table 1") -> list[dict[str, float]]:
    base = Scenario.from_toml(SCENARIO)
    if ctx.profile:
        base = base.with_("run.profile", ctx.profile)
    for path, value in (changes or {}).items():
        base = base.with_(path, value)
    jobs = [(cc, base.with_("connections[0].cc", cc).to_json(), s) for cc in CCS for s in range(1, runs + 1)]
    return pool(ctx, _one, jobs, workers, stage)


def stats(rows: list[dict], key: str) -> dict[str, tuple[float, float]]:
    return {cc: mean_ci(r[key] for r in rows if r["cc"] == cc and key in r) for cc in CCS}


def cell(mc: tuple[float, float], digits) -> str:
    m, h = mc
    if digits == "pct":
        return f"{m * 100:.2f} ± {h * 100:.2f}"
    return f"{m:.{digits}f} ± {h:.{digits}f}"


def table(rows: list[dict]) -> str:
    head = "| Table 1 quantity | " + " | ".join(NAMES[c] for c in CCS) + " | seed: " + " | seed: ".join(
        f"{NAMES[c]} (Reno / BBR)" for c in CCS) + " |\n|---|" + "---|" * (2 * len(CCS)) + "\n"
    out = head
    for label, key, pkey, digits in ROWS:
        s = stats(rows, key)
        paper = [f"{PAPER[pkey][c][0]:g} / {PAPER[pkey][c][1]:g}" if pkey else "—" for c in CCS]
        out += f"| {label} | " + " | ".join(cell(s[c], digits) for c in CCS) + " | " + " | ".join(paper) + " |\n"
    out += "\nFurther per-run figures (mean ± 95 % CI over the same runs):\n\n"
    out += "| quantity | " + " | ".join(NAMES[c] for c in CCS) + " |\n|---|" + "---|" * len(CCS) + "\n"
    for label, key, digits in EXTRA:
        out += f"| {label} | " + " | ".join(row_cells(rows, key, digits)) + " |\n"
    return out


def row_cells(rows, key, digits: int) -> list[str]:
    """One table row's cells per CC: mean ± CI of `key`, or "a / b" for a pair of keys."""
    if isinstance(key, tuple):
        a, b = stats(rows, key[0]), stats(rows, key[1])
        return [f"{cell(a[c], digits)} / {cell(b[c], digits)}" for c in CCS]
    s = stats(rows, key)
    return [cell(s[c], digits) for c in CCS]


def ranked(s: dict[str, tuple[float, float]], reverse: bool = False) -> list[str]:
    return sorted(CCS, key=lambda c: s[c][0], reverse=reverse)


def separated(s: dict[str, tuple[float, float]], a: str, b: str) -> bool:
    """The 95 % CIs of a and b do not overlap."""
    (ma, ha), (mb, hb) = s[a], s[b]
    return ma + ha < mb - hb or mb + hb < ma - ha


def fig(s: dict[str, tuple[float, float]], digits: int = 1) -> str:
    return ", ".join(f"{NAMES[c]} {s[c][0]:.{digits}f} ± {s[c][1]:.{digits}f}" for c in CCS)


def claims(rows: list[dict]) -> tuple[list, str]:
    ups, zet = stats(rows, "delay_av_ms"), stats(rows, "zeta_measured_av_ms")
    ups_m, zet_m = stats(rows, "upsilon_av_ms"), stats(rows, "zeta_av_ms")
    thr = stats(rows, "throughput_mean_mbps")
    out = []
    r_u, r_z = ranked(ups), ranked(zet)
    a = r_u[0] == "balia" and r_z[0] == "balia"
    model_a = ranked(ups_m)[0] == "balia" and ranked(zet_m)[0] == "balia"
    out.append((
        "(a)", a,
        "BALIA has the lowest υ_av and the lowest ζ_av (measured protocol delay; means over 30 runs)",
        f"υ_av ms: {fig(ups)} (lowest {NAMES[r_u[0]]}, CI apart from the next: "
        f"{'yes' if separated(ups, r_u[0], r_u[1]) else 'no'}); ζ_av ms: {fig(zet)} (lowest {NAMES[r_z[0]]}, "
        f"CI apart: {'yes' if separated(zet, r_z[0], r_z[1]) else 'no'}). Model (Eq. 1–2): υ_av lowest "
        f"{NAMES[ranked(ups_m)[0]]}, ζ_av lowest {NAMES[ranked(zet_m)[0]]} → {ok(model_a)}",
    ))
    r_t = ranked(thr)
    worst_u, worst_z, worst_t = ranked(ups, True)[0], ranked(zet, True)[0], r_t[0]
    b = worst_u == "wvegas" and worst_z == "wvegas" and worst_t == "wvegas"
    out.append((
        "(b)", b,
        "wVegas is the worst: highest υ_av, highest ζ_av and lowest mean throughput",
        f"highest υ_av {NAMES[worst_u]}, highest ζ_av {NAMES[worst_z]}, lowest throughput {NAMES[worst_t]} "
        f"(throughput Mbit/s: {fig(thr, 3)})",
    ))
    best_t = ranked(thr, True)
    c = best_t[0] == "balia"
    out.append((
        "(c)", c,
        "BALIA has the highest mean throughput",
        f"highest {NAMES[best_t[0]]} ({thr[best_t[0]][0]:.3f} ± {thr[best_t[0]][1]:.3f} Mbit/s), next "
        f"{NAMES[best_t[1]]} ({thr[best_t[1]][0]:.3f} ± {thr[best_t[1]][1]:.3f}); CI apart: "
        f"{'yes' if separated(thr, best_t[0], best_t[1]) else 'no'}",
    ))
    return out, claims_md(out)


# Added after the primary results were seen: the same scenario in two other regimes, to
# show what the claims depend on. No verdict depends on them.
DIAGNOSTICS = [
    ("D1: random loss 0.1 % instead of 1 % on each path",
     {"links[0].loss": 0.001, "links[1].loss": 0.001}),
    ("D2: no random loss, 3 Mbit/s per path instead of 7 (the stream needs both paths; drops are queue overflows)",
     {"links[0].loss": 0.0, "links[1].loss": 0.0, "links[0].rate": "3 Mbit/s", "links[1].rate": "3 Mbit/s"}),
]
DIAG_ROWS = [
    ("υ_av [ms], measured", "delay_av_ms", 0), ("υ_max [ms], measured", "delay_max_ms", 0),
    ("ζ_av [ms], measured", "zeta_measured_av_ms", 1), ("ζ_max [ms], measured", "zeta_measured_max_ms", 0),
    ("υ_av [ms], model", "upsilon_av_ms", 0), ("ζ_av [ms], model", "zeta_av_ms", 1),
    ("τ_1,av / τ_1,max [ms]", (f"srtt_av_ms[{P1}]", f"srtt_max_ms[{P1}]"), 0),
    ("τ_2,av / τ_2,max [ms]", (f"srtt_av_ms[{P2}]", f"srtt_max_ms[{P2}]"), 0),
    ("d_1 / d_2 [seg/s]", (f"drop_rate_segs_per_s[{P1}]", f"drop_rate_segs_per_s[{P2}]"), 1),
    ("Throughput av / max [Mbit/s]", ("throughput_mean_mbps", "throughput_max_mbps"), 2),
    ("Frames DATA_ACKed", "frames_acked", 0),
]


def diagnostics(ctx: PageContext, runs: int, workers: int) -> tuple[str, dict]:
    out = ("### Diagnostics (added after the primary results were seen; no verdict depends on them)\n\n"
           "The same file with the changes named, the same runs and metrics. The line under each table says what the "
           "three claims would read there.\n\n")
    all_rows = {}
    for label, changes in DIAGNOSTICS:
        rows = run_all(ctx, runs, workers, changes, label.split(":")[0])
        all_rows[label] = rows
        out += f"**{label}**\n\n| quantity | " + " | ".join(NAMES[c] for c in CCS) + " |\n|---|" + "---|" * len(CCS) + "\n"
        for name, key, digits in DIAG_ROWS:
            out += f"| {name} | " + " | ".join(row_cells(rows, key, digits)) + " |\n"
        cl, _ = claims(rows)
        out += "\nThe claims here: " + "; ".join(f"{cid} {ok(v)}" for cid, v, _, _ in cl) + ".\n\n"
    return out, all_rows


def page(ctx: PageContext) -> Page:
    runs = len(ctx.seed_list(30))
    workers = ctx.workers or 2
    rows = run_all(ctx, runs, workers)
    t = table(rows)
    _, cmd = claims(rows)
    gen = (f"Generated by `mptcplab reproduce streaming --page` ({runs} runs of 10 s per CC, seeds 1..{runs}; "
           f"mean ± 95 % CI over runs, Student t with {runs - 1} degrees of freedom; mptcplab "
           f"{__version__}).\n\n" + t + "\nClaims (verdicts on the means, fixed in the scenario header "
           "before the first run):\n\n" + cmd + "\n")
    if ctx.diagnostics:
        d, _ = diagnostics(ctx, runs, workers)
        gen += d
    text = splice(ctx.previous, BEGIN, END, gen, preamble="# Seed 002 — streaming over two LTE paths (Table 1)\n\n")
    keys = {"cc", "seed", "samples", "goodput_mbps", "frames", "frames_acked"}
    for spec in [*(r[1] for r in ROWS), *(r[1] for r in EXTRA), *(r[1] for r in DIAG_ROWS)]:
        keys.update(spec if isinstance(spec, tuple) else (spec,))

    def slim(rs: list[dict]) -> list[dict]:
        return [{k: (None if isinstance(v, float) and math.isnan(v) else float(f"{v:.5g}") if isinstance(v, float) else v)
                 for k, v in r.items() if k in keys} for r in rs]

    # The primary runs only (the diagnostics rerun in seconds).
    return Page(text, json.dumps(slim(rows), sort_keys=True, separators=(",", ":")) + "\n")
