"""The seed 004 page (docs/reproductions/seed004.md). Seed 004 (Coupled BBR, Han et al., IEEE TWC 2021): measured-and-reported reproductions
of Table I and Fig. 17a (issue 3, congestion-control suite).

    mptcplab reproduce coupled-bbr --page [--reps 10] [--workers 2] [--no-diagnostics]

Runs the committed scenarios scenarios/reproduce/seed004-table1.toml and
scenarios/reproduce/seed004-fig17a.toml (every assumption is in their header comments)
under the variants below, prints Markdown tables of goodput (mean ± 95 % CI over seeds),
evaluates each claim ✓/✗ and writes docs/reproductions/seed004.md. Only the part of that
page between the `generated` markers is rewritten; the discussion below it is kept.
"""
from __future__ import annotations

import json

from ..checks import ratio_ci
from ..runner import Variant, scenario_path
from . import Page, PageContext
from .common import by_variant, claims_md, fmt, run_window, splice
from ...stats import mean_ci

PROFILES: tuple[str, ...] = ()
TABLE1 = scenario_path("reproduce/seed004-table1.toml")
FIG17A = scenario_path("reproduce/seed004-fig17a.toml")
WINDOW = (10.0, 70.0)
BEGIN, END = "<!-- generated:begin (mptcplab reproduce coupled-bbr --page) -->", "<!-- generated:end -->"


def default_path(profile: str | None) -> str:
    return "docs/reproductions/seed004.md"


T1_CCS = ["bbr", "cubic", "lia", "olia", "balia"]
T1_PAPER = {  # seed 004 Table I: MPTCP, subflow 1, subflow 2, TCP on path 1, TCP on path 2, utilisation
    "bbr": (55.9, 30.7, 25.2, 31.9, 27.5, 88),
    "cubic": (35.1, 27.6, 7.5, 27.7, 8.5, 54),
    "lia": (20.3, 19.1, 1.2, 21.1, 1.1, 32),
    "olia": (19.9, 19.6, 0.3, 21.3, 1.0, 32),
    "balia": (20.9, 20.5, 0.6, 20.8, 1.2, 33),
}
T1_BG = {"p1": ["bg1a", "bg1b"], "p2": ["bg2a", "bg2b"]}

F17_PAIRS = [("coupled_bbr", "bbr"), ("lia", "reno"), ("olia", "reno"), ("balia", "reno")]
F17_LOSS = [0.0, 0.0001, 0.0005, 0.001, 0.002, 0.005]
F17_BG = ["bg1", "bg2", "bg3"]

def pct(p: float) -> str:
    return f"{p * 100:g} %"


def stat(rows, key):
    return mean_ci([key(r) for r in rows])





def disjoint(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """a's CI lies entirely above b's."""
    return a[0] - a[1] > b[0] + b[1]


# ------------------------------------------------------------------ Table I
def table1(ctx, seeds, workers):
    variants = [Variant(cc, {"connections[0].cc": cc, **{f"flows[{i}].cc": cc for i in range(4)}}) for cc in T1_CCS]
    rows = run_window(ctx, TABLE1, variants, seeds, WINDOW, workers, "Table I")
    by = {cc: [r for r in rows if r["variant"] == cc] for cc in T1_CCS}

    def util(r):
        return sum(r["goodput"].values()) / 200.0

    s = {}
    for cc in T1_CCS:
        rs = by[cc]
        s[cc] = {
            "mptcp": stat(rs, lambda r: r["goodput"]["mptcp"]),
            "sf1": stat(rs, lambda r: r["subflows"].get("mptcp#0", 0.0)),
            "sf2": stat(rs, lambda r: r["subflows"].get("mptcp#1", 0.0)),
            "bg1": stat(rs, lambda r: sum(r["goodput"][f] for f in T1_BG["p1"]) / 2),
            "bg2": stat(rs, lambda r: sum(r["goodput"][f] for f in T1_BG["p2"]) / 2),
            "util": stat(rs, util),
        }
    out = "| Mbit/s (mean ± 95 % CI) | " + " | ".join(T1_CCS) + " |\n|---|" + "---|" * len(T1_CCS) + "\n"
    labels = [("mptcp", "MPTCP"), ("sf1", "Subflow 1 (p1, 0.01 %)"), ("sf2", "Subflow 2 (p2, 0.1 %)"),
              ("bg1", "TCP on path 1 (per flow)"), ("bg2", "TCP on path 2 (per flow)")]
    for k, lab in labels:
        out += f"| {lab} | " + " | ".join(fmt(s[cc][k]) for cc in T1_CCS) + " |\n"
    out += "| Utilisation (MPTCP + 4 TCP) / 200 Mbit/s | " + " | ".join(
        f"{s[cc]['util'][0] * 100:.1f} ± {s[cc]['util'][1] * 100:.1f} %" for cc in T1_CCS) + " |\n"
    paper = "| Seed's Table I | " + " | ".join(T1_CCS) + " |\n|---|" + "---|" * len(T1_CCS) + "\n"
    for i, (k, lab) in enumerate(labels):
        paper += f"| {lab} | " + " | ".join(f"{T1_PAPER[cc][i]}" for cc in T1_CCS) + " |\n"
    paper += "| Bandwidth utilisation | " + " | ".join(f"{T1_PAPER[cc][5]} %" for cc in T1_CCS) + " |\n"

    m = {cc: s[cc]["mptcp"] for cc in T1_CCS}
    three = ["lia", "olia", "balia"]
    best3 = max(three, key=lambda c: m[c][0])
    order_means = m["bbr"][0] > m["cubic"][0] > m[best3][0]
    order_ci = disjoint(m["bbr"], m["cubic"]) and disjoint(m["cubic"], m[best3])
    t1 = order_means and order_ci
    mean3 = sum(m[c][0] for c in three) / 3
    dev = {c: m[c][0] / mean3 - 1 for c in three}
    t2 = all(abs(d) <= 0.25 for d in dev.values())
    u = s["bbr"]["util"]
    t3 = u[0] >= 0.75

    claims = []
    claims.append((
        "T1", t1,
        "MPTCP goodput: uncoupled BBR > uncoupled CUBIC > each of LIA, OLIA, BALIA (means ordered, adjacent 95 % CIs disjoint)",
        f"BBR {fmt(m['bbr'])}, CUBIC {fmt(m['cubic'])}, LIA {fmt(m['lia'])}, OLIA {fmt(m['olia'])}, "
        f"BALIA {fmt(m['balia'])} Mbit/s; means ordered: {'yes' if order_means else 'no'}; "
        f"CIs of BBR vs CUBIC disjoint: {'yes' if disjoint(m['bbr'], m['cubic']) else 'no'}; "
        f"CUBIC vs {best3.upper()} (best of the three) disjoint: {'yes' if disjoint(m['cubic'], m[best3]) else 'no'}",
    ))
    claims.append((
        "T2", t2,
        "LIA, OLIA and BALIA each within ±25 % of the mean of the three",
        f"mean of the three {mean3:.2f} Mbit/s; deviations " + ", ".join(f"{c.upper()} {dev[c] * 100:+.1f} %" for c in three),
    ))
    claims.append((
        "T3", t3,
        "With BBR, total utilisation (MPTCP + four TCP flows) ≥ 75 % of 200 Mbit/s (seed: 88 %)",
        f"{u[0] * 100:.1f} ± {u[1] * 100:.1f} % (95 % CI {100 * (u[0] - u[1]):.1f} – {100 * (u[0] + u[1]):.1f} %)",
    ))
    return rows, out, paper, claims


# ------------------------------------------------------------------ Fig. 17a
def fig17a(ctx, seeds, workers):
    variants = []
    for mp, bg in F17_PAIRS:
        for p in F17_LOSS:
            ch = {"connections[0].cc": mp, **{f"flows[{i}].cc": bg for i in range(3)},
                  **{f"links[{i}].loss": p for i in range(3)}}
            variants.append(Variant(f"{mp}|{p}", ch))
    rows = run_window(ctx, FIG17A, variants, seeds, WINDOW, workers, "Fig. 17a")
    by = by_variant(rows)
    mp_s = {(mp, p): stat(by[f"{mp}|{p}"], lambda r: r["goodput"]["mptcp"]) for mp, _ in F17_PAIRS for p in F17_LOSS}
    bg_s = {(mp, p): stat(by[f"{mp}|{p}"], lambda r: sum(r["goodput"][f] for f in F17_BG)) for mp, _ in F17_PAIRS for p in F17_LOSS}
    ut_s = {(mp, p): stat(by[f"{mp}|{p}"], lambda r: sum(r["goodput"].values()) / 300.0) for mp, _ in F17_PAIRS for p in F17_LOSS}

    head = "| random loss | " + " | ".join(f"{mp} (bg {bg})" for mp, bg in F17_PAIRS) + " |\n|---|" + "---|" * len(F17_PAIRS) + "\n"
    t_mp = head + "".join(f"| {pct(p)} | " + " | ".join(fmt(mp_s[(mp, p)]) for mp, _ in F17_PAIRS) + " |\n" for p in F17_LOSS)
    t_bg = head + "".join(f"| {pct(p)} | " + " | ".join(fmt(bg_s[(mp, p)]) for mp, _ in F17_PAIRS) + " |\n" for p in F17_LOSS)
    t_ut = head + "".join(f"| {pct(p)} | " + " | ".join(f"{ut_s[(mp, p)][0] * 100:.1f} ± {ut_s[(mp, p)][1] * 100:.1f} %" for mp, _ in F17_PAIRS) + " |\n" for p in F17_LOSS)

    hi = F17_LOSS[-1]
    ratios = {mp: ratio_ci(mp_s[(mp, hi)], mp_s[(mp, 0.0)]) for mp, _ in F17_PAIRS}
    claims = []
    r = ratios["coupled_bbr"]
    claims.append((
        "F1", r[0] >= 0.80,
        "Coupled BBR at 0.5 % loss keeps ≥ 80 % of its loss-free MPTCP goodput",
        f"{fmt(mp_s[('coupled_bbr', hi)])} Mbit/s at 0.5 % vs {fmt(mp_s[('coupled_bbr', 0.0)])} at 0: "
        f"ratio {r[0] * 100:.1f} ± {r[1] * 100:.1f} %",
    ))
    for mp in ["lia", "olia", "balia"]:
        r = ratios[mp]
        claims.append((
            f"F2-{mp.upper()}", r[0] <= 0.50,
            f"{mp.upper()} at 0.5 % loss falls to ≤ 50 % of its loss-free MPTCP goodput",
            f"{fmt(mp_s[(mp, hi)])} Mbit/s at 0.5 % vs {fmt(mp_s[(mp, 0.0)])} at 0: ratio {r[0] * 100:.1f} ± {r[1] * 100:.1f} %",
        ))
    return rows, t_mp, t_bg, t_ut, claims


# ------------------------------------------------------------------ diagnostics
# Added after the primary results were seen (they explain them; no verdict depends on them).
def diagnostics(ctx, seeds, workers):
    def same(cc):
        return {"connections[0].cc": cc, **{f"flows[{i}].cc": cc for i in range(4)}}

    linux_order = {"connections[0].paths": ["p2", "p1"]}  # initial subflow (p1) iterated last, as in Linux
    t1v = [
        (Variant("lia (primary)", same("lia")), "mptcp#0", "mptcp#1"),
        (Variant("lia, subflows listed [p2, p1] (Linux iteration order)", {**same("lia"), **linux_order}), "mptcp#1", "mptcp#0"),
        (Variant("lia, cc_options.best_path = \"exact\"", {**same("lia"), "connections[0].cc_options": {"best_path": "exact"}}), "mptcp#0", "mptcp#1"),
        (Variant("olia, subflows listed [p2, p1]", {**same("olia"), **linux_order}), "mptcp#1", "mptcp#0"),
        (Variant("balia, subflows listed [p2, p1]", {**same("balia"), **linux_order}), "mptcp#1", "mptcp#0"),
    ]
    rows = run_window(ctx, TABLE1, [v for v, _, _ in t1v], seeds, WINDOW, workers, "diagnostic: Table I")
    out = ("Table I scenario, LIA/OLIA/BALIA with the subflow list reversed or LIA's exact best-path test:\n\n"
           "| variant | MPTCP | subflow on p1 | subflow on p2 |\n|---|---|---|---|\n")
    res = {}
    for v, k1, k2 in t1v:
        rs = [r for r in rows if r["variant"] == v.label]
        res[v.label] = stat(rs, lambda r: r["goodput"]["mptcp"])
        out += (f"| {v.label} | {fmt(res[v.label])} | {fmt(stat(rs, lambda r: r['subflows'][k1]))} | "
                f"{fmt(stat(rs, lambda r: r['subflows'][k2]))} |\n")
    three = [res[t1v[1][0].label], res[t1v[3][0].label], res[t1v[4][0].label]]
    m3 = sum(x[0] for x in three) / 3
    out += ("\nT2 re-evaluated with all three in Linux iteration order (diagnostic only): mean "
            f"{m3:.2f} Mbit/s; deviations LIA {three[0][0] / m3 * 100 - 100:+.1f} %, OLIA "
            f"{three[1][0] / m3 * 100 - 100:+.1f} %, BALIA {three[2][0] / m3 * 100 - 100:+.1f} %.\n\n")

    f17v = [
        Variant("coupled_bbr, 3 subflows (primary), 0 %", {}),
        Variant("coupled_bbr, 1 subflow (p1 only) = BBR, 0 %", {"connections[0].paths": ["p1"]}),
        Variant("bbr uncoupled, 3 subflows, 0 %", {"connections[0].cc": "bbr"}),
        Variant("bbr uncoupled, 3 subflows, 0.5 %", {"connections[0].cc": "bbr", **{f"links[{i}].loss": 0.005 for i in range(3)}}),
    ]
    rows = run_window(ctx, FIG17A, f17v, seeds, WINDOW, workers, "diagnostic: Fig. 17a")
    out += ("Fig. 17a scenario (BBR background flows): what Coupled BBR takes compared with one BBR flow and "
            "with uncoupled BBR:\n\n| variant | MPTCP | background on p1 | background, sum of 3 |\n|---|---|---|---|\n")
    for v in f17v:
        rs = [r for r in rows if r["variant"] == v.label]
        out += (f"| {v.label} | {fmt(stat(rs, lambda r: r['goodput']['mptcp']))} | {fmt(stat(rs, lambda r: r['goodput']['bg1']))} | "
                f"{fmt(stat(rs, lambda r: sum(r['goodput'][f] for f in F17_BG)))} |\n")
    return out


def page(ctx: PageContext) -> Page:
    seeds = ctx.seed_list(10)
    workers = ctx.workers or 2
    gen = (f"Generated by `mptcplab reproduce coupled-bbr --page` (seeds 1..{len(seeds)} per point, goodput over "
           f"[{WINDOW[0]:g} s, {WINDOW[1]:g} s] of 70 s runs; mean ± 95 % CI, Student t).\n\n")
    all_rows = {}
    all_claims = []
    rows, t, paper, claims = table1(ctx, seeds, workers)
    all_rows["table1"] = rows
    all_claims += claims
    sec = ("### Table I — `scenarios/reproduce/seed004-table1.toml`\n\n"
           "Two 100 Mbit/s, 25 ms bottlenecks (250 pkt DropTail), random loss 0.01 % (path 1) and 0.1 % "
           "(path 2) on the data direction; MPTCP (2 subflows, minRTT) plus two TCP flows of the same CC per "
           "bottleneck. Goodput, Mbit/s:\n\n" + t + "\nThe seed's Table I for comparison:\n\n" + paper +
           "\nClaims:\n\n" + claims_md(claims) + "\n")
    gen += sec
    rows, t_mp, t_bg, t_ut, claims = fig17a(ctx, seeds, workers)
    all_rows["fig17a"] = rows
    all_claims += claims
    sec = ("### Fig. 17a — `scenarios/reproduce/seed004-fig17a.toml`\n\n"
           "Three 100 Mbit/s, 20 ms paths (1 BDP = 500 KB DropTail), the same random loss on each (data "
           "direction); MPTCP (3 subflows, minRTT) plus one TCP flow per path (BBR beside Coupled BBR, Reno "
           "beside LIA/OLIA/BALIA).\n\nMPTCP goodput, Mbit/s:\n\n" + t_mp +
           "\nBackground TCP goodput, sum of the three flows, Mbit/s:\n\n" + t_bg +
           "\nUtilisation (MPTCP + 3 TCP) / 300 Mbit/s:\n\n" + t_ut +
           "\nClaims:\n\n" + claims_md(claims) + "\n")
    gen += sec
    if ctx.diagnostics:
        sec = ("### Diagnostics (added after the primary results were seen; no verdict depends on them)\n\n"
               + diagnostics(ctx, seeds, workers) + "\n")
        gen += sec
    text = splice(ctx.previous, BEGIN, END, gen, "")
    return Page(text, json.dumps(all_rows, indent=1, sort_keys=True) + "\n")
