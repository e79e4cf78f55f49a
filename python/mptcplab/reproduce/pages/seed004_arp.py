"""The seed 004 AR&P page (docs/reproductions/seed004-arp.md). Seed 004 (AR&P scheduler over Coupled BBR, Han et al., IEEE TWC 2021): measured-and-
reported reproductions of Fig. 11 (out-of-order queue with asymmetric RTTs) and Fig. 10a
(goodput recovery when one path breaks down at 15 s).

    mptcplab reproduce arp --page [--reps 5] [--no-diagnostics]

Runs the committed scenarios scenarios/reproduce/seed004-fig11.toml and
scenarios/reproduce/seed004-fig10a.toml (every assumption, the metrics and the verdict
rules are in their header comments) under the variants below, prints Markdown tables
(mean ± 95 % CI over seeds, Student t), evaluates each claim ✓/✗ and writes
docs/reproductions/seed004-arp.md between the `generated` markers (the text around them
is kept) and docs/reproductions/seed004-arp-runs.json (per-run figures).
"""
from __future__ import annotations

import json
import os

from ...api import simulate
from ...scenario import Scenario
from ..checks import ratio_ci
from ..runner import Variant, apply, goodput_over, recovery_s, scenario_path, window_goodput
from . import Page, PageContext
from ...stats import mean_ci
from .common import by_variant, claims_md, fmt, pool, splice

PROFILES: tuple[str, ...] = ()
FIG11 = scenario_path("reproduce/seed004-fig11.toml")
FIG10A = scenario_path("reproduce/seed004-fig10a.toml")
BEGIN, END = "<!-- generated:begin (mptcplab reproduce arp --page) -->", "<!-- generated:end -->"
PREAMBLE = ("# Seed 004 (AR&P scheduler): Fig. 11 and Fig. 10a, measured and reported\n\n"
            "Seed 004 is Han et al., \"Leveraging Coupled BBR and Adaptive Packet Scheduling to Boost MPTCP\", "
            "IEEE TWC 20(11), 2021. Scenarios: `scenarios/reproduce/seed004-fig11.toml` and "
            "`scenarios/reproduce/seed004-fig10a.toml` (their headers hold every assumption and verdict rule). "
            "Rerun with `mptcplab reproduce arp --page`.\n\n")


def default_path(profile: str | None) -> str:
    return "docs/reproductions/seed004-arp.md"


MSS = 1448
DURATION = 30.0

F11_SCHEDS = ["arp", "minrtt", "roundrobin", "redundant", "blest", "ecf"]
F11_SWEEP_SCHEDS = ["arp", "minrtt", "roundrobin"]
F11_RTTS = [50, 100, 150, 200, 250]  # RTT of path 2, ms; 250 = the file as committed
F11_WINDOW = (2.0, DURATION)

F10_SCHEDS = ["arp", "roundrobin", "redundant", "minrtt"]
F10_EVENT = 15.0
F10_TARGET = 0.8 * 20.0  # Mbit/s: 80 % of the surviving path's 20 Mbit/s
F10_LIMIT = 2.0  # s
F10_VARIANTS = {
    "loss": {},  # the file as committed: l2 forward loss 0 -> 10 % at 15 s
    "down": {"links[1].schedule": [{"at": "15 s", "state": "down"}]},
}

# ------------------------------------------------------------------ one run
def _measure(args: tuple[str, str, str, int]) -> dict:
    kind, label, scenario_json, seed = args
    sc = Scenario.from_dict(json.loads(scenario_json))
    res = simulate(sc, seed=seed)
    ts = res.timeseries.connections
    ts = ts[ts.flow == "mptcp"].sort_values("time_s")
    subs = res.subflow_summary
    row = {"kind": kind, "variant": label, "seed": seed}
    row["sched_new_segs"] = [int(x) for x in subs.sort_values("subflow").sched_new_segs]
    row["sched_copied_segs"] = [int(x) for x in subs.sort_values("subflow").sched_copied_segs]
    row["rto_count"] = [int(x) for x in subs.sort_values("subflow").rto_count]
    if kind == "fig11":
        w = ts[(ts.time_s >= F11_WINDOW[0] - 1e-9) & (ts.time_s <= F11_WINDOW[1] + 1e-9)]
        row["ooo_pkts_mean"] = float((w.ooo_bytes / MSS).mean())
        row["ooo_pkts_max"] = float((w.ooo_bytes / MSS).max())
        row["goodput"] = window_goodput(res, *F11_WINDOW)["mptcp"]
    else:
        t, gp = goodput_over(res, "mptcp")
        row["recovery_s"] = recovery_s(t, gp, F10_EVENT, DURATION, F10_TARGET)
        row["gp_before"] = gp(10.0, F10_EVENT)
        row["gp_2s_after"] = gp(F10_EVENT, F10_EVENT + 2.0)
        row["gp_sustained"] = gp(F10_EVENT + 2.0, DURATION)
        # 1 s goodput trace around the event, for the page (t, Mbit/s over [t, t+1))
        row["trace_1s"] = [(float(x), gp(x, x + 1.0)) for x in [12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 20.0, 25.0]]
    return row


def run_all(ctx: PageContext, jobs: list[tuple[str, str, str, int]], workers: int, stage: str) -> list[dict]:
    return pool(ctx, _measure, jobs, min(workers, len(jobs)), stage)


def stat(rows, key):
    return mean_ci([key(r) for r in rows])


def fmt_pct(m_ci, digits=1):
    return f"{m_ci[0] * 100:.{digits}f} ± {m_ci[1] * 100:.{digits}f} %"


# ------------------------------------------------------------------ Fig. 11
def fig11_jobs(seeds):
    base = Scenario.from_toml(FIG11)
    jobs = []
    for s in F11_SCHEDS:
        v = Variant(f"{s}|250", {"connections[0].scheduler": s})
        jobs += [("fig11", v.label, apply(base, v).to_json(), seed) for seed in seeds]
    for rtt in F11_RTTS[:-1]:
        for s in F11_SWEEP_SCHEDS:
            v = Variant(f"{s}|{rtt}", {"connections[0].scheduler": s, "links[1].delay": f"{rtt / 2:g} ms",
                                        "links[1].queue": f"{20e6 * rtt / 1e3 / 8 / 1e3:g} KB"})
            jobs += [("fig11", v.label, apply(base, v).to_json(), seed) for seed in seeds]
    return jobs


def fig11_report(rows):
    by = by_variant(rows)
    ooo = {k: stat(v, lambda r: r["ooo_pkts_mean"]) for k, v in by.items()}
    mx = {k: stat(v, lambda r: r["ooo_pkts_max"]) for k, v in by.items()}
    gp = {k: stat(v, lambda r: r["goodput"]) for k, v in by.items()}

    def share2(rs):  # share of new data scheduled on subflow 2 (the long path)
        return stat(rs, lambda r: r["sched_new_segs"][1] / max(1, sum(r["sched_new_segs"])))

    def copies(rs):
        return stat(rs, lambda r: float(sum(r["sched_copied_segs"])))

    t_primary = ("| scheduler | out-of-order queue, mean (pkts) | out-of-order queue, max (pkts) | goodput (Mbit/s) | "
                 "new data on path 2 (share) | copied segments |\n|---|---|---|---|---|---|\n")
    for s in F11_SCHEDS:
        k = f"{s}|250"
        t_primary += (f"| {s} | {fmt(ooo[k])} | {fmt(mx[k], 1)} | {fmt(gp[k])} | {fmt_pct(share2(by[k]))} | "
                      f"{fmt(copies(by[k]), 0)} |\n")

    head = "| RTT of path 2 | " + " | ".join(F11_SWEEP_SCHEDS) + " |\n|---|" + "---|" * len(F11_SWEEP_SCHEDS) + "\n"
    t_sweep_ooo = head + "".join(f"| {rtt} ms | " + " | ".join(fmt(ooo[f'{s}|{rtt}']) for s in F11_SWEEP_SCHEDS) + " |\n"
                                 for rtt in F11_RTTS)
    t_sweep_gp = head + "".join(f"| {rtt} ms | " + " | ".join(fmt(gp[f'{s}|{rtt}']) for s in F11_SWEEP_SCHEDS) + " |\n"
                                for rtt in F11_RTTS)
    red_head = "| RTT of path 2 | vs minrtt | vs roundrobin |\n|---|---|---|\n"
    t_red = red_head
    for rtt in F11_RTTS:
        cells = []
        for o in ["minrtt", "roundrobin"]:
            r = ratio_ci(ooo[f"arp|{rtt}"], ooo[f"{o}|{rtt}"])
            cells.append(f"{(1 - r[0]) * 100:.1f} ± {r[1] * 100:.1f} %")
        t_red += f"| {rtt} ms | " + " | ".join(cells) + " |\n"

    claims = []
    r_min = ratio_ci(ooo["arp|250"], ooo["minrtt|250"])
    r_rr = ratio_ci(ooo["arp|250"], ooo["roundrobin|250"])
    o1 = (1 - r_min[0]) >= 0.5 and (1 - r_rr[0]) >= 0.5
    claims.append((
        "O1", o1,
        "2nd RTT 250 ms: AR&P's mean out-of-order queue ≥ 50 % smaller than minRTT's and than round-robin's (seed: 65 %)",
        f"AR&P {fmt(ooo['arp|250'])} pkts, minRTT {fmt(ooo['minrtt|250'])}, round-robin {fmt(ooo['roundrobin|250'])}; "
        f"reduction vs minRTT {(1 - r_min[0]) * 100:.1f} ± {r_min[1] * 100:.1f} %, vs round-robin "
        f"{(1 - r_rr[0]) * 100:.1f} ± {r_rr[1] * 100:.1f} %",
    ))
    r_gp = ratio_ci(gp["arp|250"], gp["minrtt|250"])
    claims.append((
        "O2", r_gp[0] >= 0.95,
        "2nd RTT 250 ms: AR&P's goodput no more than 5 % below minRTT's",
        f"AR&P {fmt(gp['arp|250'])} Mbit/s, minRTT {fmt(gp['minrtt|250'])}: ratio {r_gp[0] * 100:.1f} ± {r_gp[1] * 100:.1f} %",
    ))
    return t_primary, t_sweep_ooo, t_sweep_gp, t_red, claims


# ------------------------------------------------------------------ Fig. 10a
def fig10_jobs(seeds):
    base = Scenario.from_toml(FIG10A)
    jobs = []
    for case, ch in F10_VARIANTS.items():
        for s in F10_SCHEDS:
            v = Variant(f"{s}|{case}", {**ch, "connections[0].scheduler": s})
            jobs += [("fig10a", v.label, apply(base, v).to_json(), seed) for seed in seeds]
    return jobs


def fig10_report(rows):
    by = by_variant(rows)
    tables, claims = {}, []
    for case in F10_VARIANTS:
        t = ("| scheduler | recovered within 2 s | recovery time per seed (s) | recovery time, mean (s) | "
             "goodput [10, 15] s | goodput [15, 17] s | goodput [17, 30] s |\n|---|---|---|---|---|---|---|\n")
        for s in F10_SCHEDS:
            rs = sorted(by[f"{s}|{case}"], key=lambda r: r["seed"])
            recs = [r["recovery_s"] for r in rs]
            within = sum(1 for x in recs if x is not None and x <= F10_LIMIT)
            per = ", ".join("—" if x is None else f"{x:.1f}" for x in recs)
            fin = [x for x in recs if x is not None]
            mean = fmt(mean_ci(fin), 1) if len(fin) == len(recs) else (
                f"{len(recs) - len(fin)} of {len(recs)} never" if not fin else
                f"{fmt(mean_ci(fin), 1)} ({len(recs) - len(fin)} never)")
            t += (f"| {s} | {within}/{len(recs)} | {per} | {mean} | {fmt(stat(rs, lambda r: r['gp_before']))} | "
                  f"{fmt(stat(rs, lambda r: r['gp_2s_after']))} | {fmt(stat(rs, lambda r: r['gp_sustained']))} |\n")
            if s == "arp":
                claims.append((
                    f"R1-{case}", within == len(recs),
                    f"{'l2 loss 0 → 10 % at 15 s' if case == 'loss' else 'l2 down at 15 s'}: AR&P's goodput reaches "
                    f"≥ 16 Mbit/s (80 % of 20) over a 1 s window starting within 2 s of the failure, in every seed",
                    f"AR&P recovery times {per} s ({within}/{len(recs)} within 2 s); goodput [17, 30] s "
                    f"{fmt(stat(rs, lambda r: r['gp_sustained']))} Mbit/s",
                ))
        # mean 1 s goodput trace
        tr = "| scheduler | " + " | ".join(f"[{x:g}, {x + 1:g}) s" for x, _ in by[f'arp|{case}'][0]["trace_1s"]) + \
             " |\n|---|" + "---|" * len(by[f'arp|{case}'][0]["trace_1s"]) + "\n"
        for s in F10_SCHEDS:
            rs = by[f"{s}|{case}"]
            n = len(rs[0]["trace_1s"])
            tr += f"| {s} | " + " | ".join(f"{sum(r['trace_1s'][i][1] for r in rs) / len(rs):.1f}" for i in range(n)) + " |\n"
        tables[case] = (t, tr)
    return tables, claims


# ------------------------------------------------------------------ diagnostics
# Added after the primary results were seen (they explain them; no verdict depends on them).
def diagnostics(ctx, seeds, workers):
    b10 = Scenario.from_toml(FIG10A)
    b11 = Scenario.from_toml(FIG11)
    down = F10_VARIANTS["down"]
    d10 = [
        Variant("coupled_bbr, path 1 only (no path 2 at all)", {"connections[0].paths": ["p1"]}),
        Variant("bbr (uncoupled), arp, l2 down at 15 s", {**down, "connections[0].cc": "bbr", "connections[0].scheduler": "arp"}),
        Variant("bbr (uncoupled), roundrobin, l2 down at 15 s", {**down, "connections[0].cc": "bbr", "connections[0].scheduler": "roundrobin"}),
        Variant("bbr (uncoupled), redundant, l2 down at 15 s", {**down, "connections[0].cc": "bbr", "connections[0].scheduler": "redundant"}),
        Variant("bbr (uncoupled), arp, l2 loss 10 % at 15 s", {"connections[0].cc": "bbr", "connections[0].scheduler": "arp"}),
    ]
    d11 = [
        Variant("coupled_bbr, path 1 only (50 ms)", {"connections[0].paths": ["p1"]}),
        Variant("bbr (uncoupled), arp, 250 ms", {"connections[0].cc": "bbr", "connections[0].scheduler": "arp"}),
        Variant("bbr (uncoupled), minrtt, 250 ms", {"connections[0].cc": "bbr", "connections[0].scheduler": "minrtt"}),
    ]
    jobs = [("fig10a", v.label, apply(b10, v).to_json(), sd) for v in d10 for sd in seeds]
    jobs += [("fig11", v.label, apply(b11, v).to_json(), sd) for v in d11 for sd in seeds]
    rows = run_all(ctx, jobs, workers, "diagnostics")
    out = ("Fig. 10a scenario: is the surviving path's goodput after a link failure limited by the scheduler or by "
           "Coupled BBR? (goodput, Mbit/s; recovery as in R1)\n\n| variant | recovered within 2 s | goodput [10, 15] s | "
           "goodput [17, 30] s |\n|---|---|---|---|\n")
    for v in d10:
        rs = [r for r in rows if r["variant"] == v.label]
        within = sum(1 for r in rs if r["recovery_s"] is not None and r["recovery_s"] <= F10_LIMIT)
        out += (f"| {v.label} | {within}/{len(rs)} | {fmt(stat(rs, lambda r: r['gp_before']))} | "
                f"{fmt(stat(rs, lambda r: r['gp_sustained']))} |\n")
    out += ("\nFig. 11 scenario: a single 50 ms path, and uncoupled BBR at 250 ms (out-of-order queue in packets over "
            "[2 s, 30 s], goodput in Mbit/s):\n\n| variant | out-of-order queue, mean | goodput | new data on path 2 |\n"
            "|---|---|---|---|\n")
    for v in d11:
        rs = [r for r in rows if r["variant"] == v.label]
        sh = stat(rs, lambda r: (r["sched_new_segs"][1] / max(1, sum(r["sched_new_segs"]))) if len(r["sched_new_segs"]) > 1 else 0.0)
        out += f"| {v.label} | {fmt(stat(rs, lambda r: r['ooo_pkts_mean']))} | {fmt(stat(rs, lambda r: r['goodput']))} | {fmt_pct(sh)} |\n"
    return out, len(jobs)


def page(ctx: PageContext) -> Page:
    seeds = ctx.seed_list(5)
    workers = ctx.workers or min(2, os.cpu_count() or 1)
    jobs = []
    jobs += fig11_jobs(seeds)
    jobs += fig10_jobs(seeds)
    rows = run_all(ctx, jobs, workers, "Fig. 11 and Fig. 10a")
    gen = (f"Generated by `mptcplab reproduce arp --page` (seeds 1..{len(seeds)} per point, 30 s runs, "
           f"start jitter [0, 500 ms); mean ± 95 % CI over seeds, Student t; ratios with a delta-method CI).\n\n")
    all_claims = []
    t_p, t_so, t_sg, t_red, claims = fig11_report([r for r in rows if r["kind"] == "fig11"])
    all_claims += claims
    sec = ("### Fig. 11 — `scenarios/reproduce/seed004-fig11.toml`\n\n"
           "Two 20 Mbit/s paths, RTT 50 ms (path 1) and 250 ms (path 2), 1-BDP DropTail queues, no loss; "
           "Coupled BBR. Out-of-order queue = connection-level `ooo_bytes` / 1448, averaged over the 100 ms "
           "samples in [2 s, 30 s]; goodput over [2 s, 30 s].\n\n"
           "At 250 ms, every scheduler:\n\n" + t_p +
           "\nSweep of path 2's RTT (queue = 1 BDP of path 2), mean out-of-order queue, packets:\n\n" + t_so +
           "\nGoodput over [2 s, 30 s], Mbit/s:\n\n" + t_sg +
           "\nAR&P's reduction of the mean out-of-order queue (1 − AR&P / other):\n\n" + t_red +
           "\nClaims:\n\n" + claims_md(claims) + "\n")
    gen += sec
    tables, claims = fig10_report([r for r in rows if r["kind"] == "fig10a"])
    all_claims += claims
    sec = ("### Fig. 10a — `scenarios/reproduce/seed004-fig10a.toml`\n\n"
           "Two 20 Mbit/s, 50 ms RTT paths, 125 KB DropTail, Coupled BBR. At 15 s path 2 fails: its forward "
           "loss steps from 0 to 10 % (primary), or its link goes down (variant). Recovery time = first sample "
           "t ≥ 15 s whose goodput over [t, t + 1 s] is ≥ 16 Mbit/s, minus 15 s (— = never before 29 s). "
           "minRTT is context only.\n\n"
           "**Loss 0 → 10 % on path 2 at 15 s** (goodput in Mbit/s):\n\n" + tables["loss"][0] +
           "\nMean goodput over 1 s windows, Mbit/s:\n\n" + tables["loss"][1] +
           "\n**Path 2's link down at 15 s:**\n\n" + tables["down"][0] +
           "\nMean goodput over 1 s windows, Mbit/s:\n\n" + tables["down"][1] +
           "\nClaims:\n\n" + claims_md(claims) + "\n")
    gen += sec
    n_diag = 0
    if ctx.diagnostics:
        d, n_diag = diagnostics(ctx, seeds, workers)
        sec = "### Diagnostics (added after the primary results were seen; no verdict depends on them)\n\n" + d + "\n"
        gen += sec
    gen += f"Runs: {len(jobs) + n_diag}.\n"
    text = splice(ctx.previous, BEGIN, END, gen, PREAMBLE)
    return Page(text, json.dumps(rows, indent=1, sort_keys=True) + "\n")
