"""`reproduce coupled-bbr`: seed 004 (Han et al., "Leveraging Coupled BBR and Adaptive
Packet Scheduling to Boost MPTCP", IEEE TWC 20(11), 2021;
../shared/seeds/004_811a4f59e195d45d.txt).

Five experiments, each on a committed scenario whose header holds every assumption:
Table I (two 100 Mbit/s paths with background flows; the CCs' ordering), Fig. 8
(fairness at a shared bottleneck), Fig. 17a (random-loss tolerance), Fig. 11 (AR&P's
out-of-order reduction) and Fig. 10a (AR&P's recovery after a path fails).
"""
from __future__ import annotations

from typing import Any

from ..stats import mean_ci
from . import Context
from .checks import bar, ci_text, ratio_ci
from .model import Claim, Figure, Reproduction, Table
from .runner import Variant, Window, goodput_over, recovery_s, run_variants, scenario_path, values

TABLE1 = "reproduce/seed004-table1.toml"
FAIRNESS = "cc/coupled-bbr-fairness.toml"
FIG17A = "reproduce/seed004-fig17a.toml"
FIG11 = "reproduce/seed004-fig11.toml"
FIG10A = "reproduce/seed004-fig10a.toml"
MSS = 1448

T1_CCS = ["bbr", "cubic", "lia", "olia", "balia"]
T1_PAPER = {"bbr": 55.9, "cubic": 35.1, "lia": 20.3, "olia": 19.9, "balia": 20.9}
F17_PAIRS = [("coupled_bbr", "bbr"), ("lia", "reno"), ("olia", "reno"), ("balia", "reno")]
F10_EVENT, F10_TARGET, F10_LIMIT = 15.0, 16.0, 2.0  # s, Mbit/s (80 % of the surviving 20), s
ARP_GOODPUT_SLACK = 0.05  # C4: AR&P may lose at most 5 % of minRTT's goodput (docs/reproductions/seed004-arp.md, O2)


class OooWindow:
    """Fig. 11: the connection's mean out-of-order queue (packets of 1448 B, over the
    100 ms samples) and its goodput over [start, end]."""

    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def __call__(self, result: Any) -> dict[str, Any]:
        ts = result.timeseries.connections
        ts = ts[ts.flow == "mptcp"]
        w = ts[(ts.time_s >= self.start - 1e-9) & (ts.time_s <= self.end + 1e-9)]
        return {"ooo_pkts": float((w.ooo_bytes / MSS).mean()),
                "goodput": Window(self.start, self.end)(result)["goodput"]["mptcp"]}


class Recovery:
    """Fig. 10a: seconds from the failure at `event` to the first 1 s window whose
    goodput reaches `target` (None: never), and the goodput before and after."""

    def __init__(self, event: float, target: float, end: float) -> None:
        self.event, self.target, self.end = event, target, end

    def __call__(self, result: Any) -> dict[str, Any]:
        t, gp = goodput_over(result, "mptcp")
        rec = recovery_s(t, gp, self.event, self.end, self.target)
        trace = [[float(x), gp(x, x + 1.0)] for x in t if x + 1.0 <= self.end + 1e-9 and abs(x * 2 - round(x * 2)) < 1e-6]
        return {"recovery_s": rec, "before": gp(max(0.0, self.event - 5.0), self.event),
                "after": gp(self.event + 2.0, self.end), "trace": trace}


def _disjoint_above(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] - a[1] > b[0] + b[1]


def fig11_verdict(ooo: dict[str, list[float]], goodput: dict[str, list[float]]) -> tuple[bool, str]:
    """Claim C4 of seed 004 Fig. 11 (Sec. VI-A: AR&P "reduces the out-of-order queue by
    about 65 %" while keeping minRTT's throughput), both halves on the means:
    1. AR&P's mean out-of-order queue is ≥ 50 % below minRTT's and round-robin's;
    2. AR&P's goodput is no more than 5 % below minRTT's (mean ratio ≥ 0.95).
    `ooo` and `goodput` map a scheduler to its per-run values."""
    red = {o: ratio_ci(mean_ci(ooo["arp"]), mean_ci(ooo[o])) for o in ("minrtt", "roundrobin")}
    ooo_ok = all(1 - red[o][0] >= 0.5 for o in red)
    gp = ratio_ci(mean_ci(goodput["arp"]), mean_ci(goodput["minrtt"]))
    gp_ok = gp[0] >= 1.0 - ARP_GOODPUT_SLACK
    text = (f"AR&P {ci_text(ooo['arp'], 1)} pkts, minRTT {ci_text(ooo['minrtt'], 1)}, round-robin "
            f"{ci_text(ooo['roundrobin'], 1)}; reduction vs minRTT {100 * (1 - red['minrtt'][0]):.1f} ± "
            f"{100 * red['minrtt'][1]:.1f} %, vs round-robin {100 * (1 - red['roundrobin'][0]):.1f} ± "
            f"{100 * red['roundrobin'][1]:.1f} % ({'holds' if ooo_ok else 'fails'}); goodput AR&P "
            f"{ci_text(goodput['arp'])} vs minRTT {ci_text(goodput['minrtt'])} Mbit/s, ratio "
            f"{100 * gp[0]:.1f} ± {100 * gp[1]:.1f} % ({'holds' if gp_ok else 'fails'}: ≥ 95 % needed)")
    return ooo_ok and gp_ok, text


def run(ctx: Context) -> Reproduction:
    seeds = ctx.seeds(full=10, quick=3)
    q = ctx.quick
    dur = 30.0 if q else 70.0
    win = Window(10.0, dur)
    led, w = ctx.ledger, ctx.workers
    claims: list[Claim] = []
    tables: list[Table] = []
    figs: list[Figure] = []
    short = {"run.duration": f"{dur:g} s"}

    # ---- Table I: the ordering of the CCs --------------------------------------------------
    v1 = [Variant(cc, {**short, "connections[0].cc": cc, **{f"flows[{i}].cc": cc for i in range(4)}}) for cc in T1_CCS]
    r1 = run_variants(scenario_path(TABLE1), v1, seeds, win, w, led, "Table I")
    g = {cc: values(r1, cc, lambda r: r["goodput"]["mptcp"]) for cc in T1_CCS}
    m = {cc: mean_ci(g[cc]) for cc in T1_CCS}
    best3 = max(("lia", "olia", "balia"), key=lambda c: m[c][0])
    ordered = m["bbr"][0] > m["cubic"][0] > m[best3][0]
    sig = _disjoint_above(m["bbr"], m["cubic"]) and _disjoint_above(m["cubic"], m[best3])
    claims.append(Claim(
        "C1", "Table I: MPTCP goodput, uncoupled BBR > uncoupled CUBIC > each of LIA, OLIA, BALIA",
        "Table I: BBR 55.9 > CUBIC 35.1 > BALIA 20.9, LIA 20.3, OLIA 19.9 Mbit/s",
        ", ".join(f"{cc.upper()} {ci_text(g[cc])}" for cc in T1_CCS) + " Mbit/s"
        + f"; adjacent 95 % CIs disjoint: {'yes' if sig else 'no'}",
        ordered and sig, "means ordered and the CIs of BBR vs CUBIC and CUBIC vs the best coupled CC disjoint"))
    util = {cc: values(r1, cc, lambda r: sum(r["goodput"].values()) / 200.0 * 100) for cc in T1_CCS}
    tables.append(Table(f"Table I: goodput over [10 s, {dur:g} s], Mbit/s (mean ± 95 % CI)",
                        ["cc", "MPTCP", "subflow 1 (p1)", "subflow 2 (p2)", "utilisation %", "paper MPTCP"],
                        [[cc, ci_text(g[cc]), ci_text(values(r1, cc, lambda r: r["subflows"].get("mptcp#0", 0.0))),
                          ci_text(values(r1, cc, lambda r: r["subflows"].get("mptcp#1", 0.0))), ci_text(util[cc], 1),
                          T1_PAPER[cc]] for cc in T1_CCS]))
    figs.append(bar("Table I: MPTCP goodput by congestion control", T1_CCS, {"MPTCP": [g[c] for c in T1_CCS]},
                    "goodput (Mbit/s)"))

    # ---- Fig. 8: fairness at a shared bottleneck --------------------------------------------
    v8 = [Variant(cc, {**short, "connections[0].cc": cc}) for cc in ("coupled_bbr", "bbr")]
    r8 = run_variants(scenario_path(FAIRNESS), v8, seeds, win, w, led, "Fig. 8 (fairness)")

    def share(r: dict) -> float:
        flows = [v for k, v in r["goodput"].items() if k != "mptcp"]
        return r["goodput"]["mptcp"] / (sum(flows) / len(flows))

    fr = {cc: values(r8, cc, share) for cc in ("coupled_bbr", "bbr")}
    fm = {cc: mean_ci(fr[cc]) for cc in fr}
    ok8 = 0.8 <= fm["coupled_bbr"][0] <= 1.2 and not (0.8 <= fm["bbr"][0] <= 1.2)
    claims.append(Claim(
        "C2", "Fig. 8: at a shared bottleneck Coupled BBR takes one single flow's share; uncoupled BBR takes more",
        "Fig. 8: Coupled BBR's connection ≈ each single-path BBR flow; uncoupled BBR ≈ two flows' shares",
        f"connection / mean single flow: Coupled BBR {ci_text(fr['coupled_bbr'], 3)}, uncoupled BBR "
        f"{ci_text(fr['bbr'], 3)}", ok8, "✓ when Coupled BBR's mean ratio is in [0.8, 1.2] and uncoupled BBR's is not"))
    figs.append(bar("Fig. 8: connection goodput / mean single-flow goodput", ["coupled_bbr", "bbr"],
                    {"ratio": [fr["coupled_bbr"], fr["bbr"]]}, "ratio"))

    # ---- Fig. 17a: random-loss tolerance -----------------------------------------------------
    losses = [0.0, 0.005] if q else [0.0, 0.0001, 0.0005, 0.001, 0.002, 0.005]
    v17 = [Variant(f"{mp}|{p:g}", {**short, "connections[0].cc": mp, **{f"flows[{i}].cc": bg for i in range(3)},
                                   **{f"links[{i}].loss": p for i in range(3)}})
           for mp, bg in F17_PAIRS for p in losses]
    r17 = run_variants(scenario_path(FIG17A), v17, seeds, win, w, led, "Fig. 17a (random loss)")
    g17 = {(mp, p): values(r17, f"{mp}|{p:g}", lambda r: r["goodput"]["mptcp"]) for mp, _ in F17_PAIRS for p in losses}
    hi = losses[-1]
    ratio = {mp: ratio_ci(mean_ci(g17[(mp, hi)]), mean_ci(g17[(mp, 0.0)])) for mp, _ in F17_PAIRS}
    ok17 = ratio["coupled_bbr"][0] >= 0.8 and all(ratio[mp][0] <= 0.5 for mp in ("lia", "olia", "balia"))
    claims.append(Claim(
        "C3", "Fig. 17a: at 0.5 % random loss Coupled BBR keeps ≥ 80 % of its loss-free goodput while LIA, OLIA "
              "and BALIA fall to ≤ 50 %",
        "Fig. 17a: Coupled BBR flat up to 0.5 % loss; the loss-based coupled CCs collapse",
        "; ".join(f"{mp.upper()} {100 * ratio[mp][0]:.1f} ± {100 * ratio[mp][1]:.1f} %" for mp, _ in F17_PAIRS)
        + " of loss-free goodput", ok17))
    tables.append(Table(f"Fig. 17a: MPTCP goodput over [10 s, {dur:g} s] by random loss, Mbit/s (mean ± 95 % CI)",
                        ["loss"] + [f"{mp} (bg {bg})" for mp, bg in F17_PAIRS],
                        [[f"{100 * p:g} %"] + [ci_text(g17[(mp, p)]) for mp, _ in F17_PAIRS] for p in losses]))
    figs.append(Figure("Fig. 17a: MPTCP goodput against random loss", "scatter",
                       {"points": [{"label": mp, "x": 100 * p, "y": mean_ci(g17[(mp, p)])[0],
                                    "yerr": mean_ci(g17[(mp, p)])[1]} for mp, _ in F17_PAIRS for p in losses]},
                       xlabel="random loss (%)", ylabel="goodput (Mbit/s)"))

    # ---- Fig. 11: out-of-order queue per scheduler ---------------------------------------------
    d11 = 15.0 if q else 30.0
    scheds = ["arp", "minrtt", "roundrobin"] if q else ["arp", "minrtt", "roundrobin", "redundant", "blest", "ecf"]
    v11 = [Variant(s, {"run.duration": f"{d11:g} s", "connections[0].scheduler": s}) for s in scheds]
    r11 = run_variants(scenario_path(FIG11), v11, seeds, OooWindow(2.0, d11), w, led, "Fig. 11 (out-of-order queue)")
    ooo = {s: values(r11, s, lambda r: r["ooo_pkts"]) for s in scheds}
    gp11 = {s: values(r11, s, lambda r: r["goodput"]) for s in scheds}
    ok11, text11 = fig11_verdict(ooo, gp11)
    claims.append(Claim(
        "C4", "Fig. 11: with a 250 ms second path, AR&P's mean out-of-order queue is ≥ 50 % smaller than minRTT's "
              "and round-robin's, and AR&P's goodput is no more than 5 % below minRTT's",
        "Fig. 11: AR&P reduces the out-of-order queue by about 65 %; Sec. VI (Fig. 19a): it keeps or raises "
        "Coupled BBR's goodput", text11, ok11,
        "✓ only when both halves hold: the out-of-order reduction and AR&P's goodput ≥ 95 % of minRTT's"))
    tables.append(Table(f"Fig. 11: out-of-order queue and goodput over [2 s, {d11:g} s] (mean ± 95 % CI)",
                        ["scheduler", "mean out-of-order queue (pkts)", "goodput (Mbit/s)"],
                        [[s, ci_text(ooo[s], 1), ci_text(gp11[s])] for s in scheds]))
    figs.append(bar("Fig. 11: mean out-of-order queue by scheduler", scheds, {"out-of-order": [ooo[s] for s in scheds]},
                    "packets"))
    figs.append(Figure("Fig. 11: throughput against out-of-order delay proxy", "scatter",
                       {"points": [{"label": s, "x": mean_ci(ooo[s])[0], "y": mean_ci(gp11[s])[0]} for s in scheds]},
                       xlabel="mean out-of-order queue (pkts)", ylabel="goodput (Mbit/s)"))

    # ---- Fig. 10a: recovery after path 2 fails at 15 s ---------------------------------------
    d10 = 20.0 if q else 30.0
    s10 = ["arp", "roundrobin"] if q else ["arp", "roundrobin", "redundant", "minrtt"]
    cases = {"loss": {}, "down": {"links[1].schedule": [{"at": "15 s", "state": "down"}]}}
    v10 = [Variant(f"{s}|{c}", {"run.duration": f"{d10:g} s", "connections[0].scheduler": s, **ch})
           for c, ch in cases.items() for s in s10]
    r10 = run_variants(scenario_path(FIG10A), v10, seeds, Recovery(F10_EVENT, F10_TARGET, d10), w, led,
                       "Fig. 10a (recovery)")
    rows10, ok10, texts = [], True, []
    for c in cases:
        for s in s10:
            rs = [r for r in r10 if r["variant"] == f"{s}|{c}"]
            recs = [r["recovery_s"] for r in rs]
            within = sum(1 for x in recs if x is not None and x <= F10_LIMIT)
            per = ", ".join("never" if x is None else f"{x:.1f}" for x in recs)
            rows10.append([c, s, f"{within}/{len(recs)}", per, ci_text([r["before"] for r in rs]),
                           ci_text([r["after"] for r in rs])])
            if s == "arp":
                ok10 = ok10 and within == len(recs)
                texts.append(f"{'loss 0 → 10 %' if c == 'loss' else 'link down'}: recovered within 2 s in "
                             f"{within}/{len(recs)} runs (times {per} s)")
    claims.append(Claim(
        "C5", "Fig. 10a: when path 2 fails at 15 s (loss 0 → 10 %, or link down), AR&P's goodput is back to "
              "≥ 80 % of the surviving 20 Mbit/s path within 2 s, in every run",
        "Fig. 10a: AR&P recovers within about 1–2 s", "; ".join(texts), ok10))
    tables.append(Table("Fig. 10a: recovery after path 2 fails at 15 s",
                        ["failure", "scheduler", "recovered ≤ 2 s", "recovery time per run (s)",
                         "goodput [10, 15] s", f"goodput [17, {d10:g}] s"], rows10))
    series = []
    for c in cases:
        for s in s10:
            rs = [r for r in r10 if r["variant"] == f"{s}|{c}"]
            tr = rs[0]["trace"]
            series.append({"label": f"{s}, {c}", "t": [p[0] for p in tr],
                           "y": [sum(r["trace"][i][1] for r in rs) / len(rs) for i in range(len(tr))]})
    figs.append(Figure("Fig. 10a: goodput over 1 s windows around the failure (mean over runs)", "timeseries",
                       {"series": series}, xlabel="time (s)", ylabel="goodput (Mbit/s)"))

    n = len(seeds)
    return Reproduction(
        paper="coupled-bbr",
        title="Han et al., Leveraging Coupled BBR and Adaptive Packet Scheduling to Boost MPTCP (IEEE TWC 2021)",
        seed_file="004_811a4f59e195d45d.txt",
        summary=(f"Five experiments of seed 004, {n} seeds per variant: Table I ({dur:g} s), Fig. 8 fairness "
                 f"({dur:g} s), Fig. 17a random loss ({dur:g} s), Fig. 11 out-of-order queue ({d11:g} s) and "
                 f"Fig. 10a recovery ({d10:g} s). Goodput is connection-level bytes delivered over the stated "
                 "window; ratios carry a delta-method 95 % CI."),
        claims=claims, tables=tables, figures=figs,
        notes=("The seed ran Linux MPTCP v0.94 on a testbed (Table I, Figs. 8–11) and NS-3 DCE (Fig. 17). "
               "Assumptions (rates, queues, background flows, start jitter, what the paper's schedulers map to) "
               "are in the scenario headers; longer discussions and diagnostics are in "
               "docs/reproductions/seed004.md and seed004-arp.md."),
    )
