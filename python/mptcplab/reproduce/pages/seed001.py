"""The seed 001 page (docs/reproductions/seed001.md, seed001-upstream.md): measured-and-reported reproduction of seed 001 (RBPM, receive-buffer-based path
management, IM 2017 short paper) for issue 4: RBPM's goodput against plain MPTCP
(fullmesh + the default minRTT scheduler) in the paper's two 4-path topologies.

  topology 1 (Figs. 2-3, scenarios/rbpm-4path-a.toml): three 5 Mbit/s 10 ms paths and one
      1 Mbit/s 100 ms path; initial subflow on a 5 Mbit/s path (paper's subflow 1).
      Paper: original 275 563.174 B/s, RBPM 1 114 986.038 B/s ("about four times").
  topology 2 (Figs. 4-5, scenarios/rbpm-4path-b.toml): 1/8/3/2 Mbit/s with 100/50/30/10
      ms; initial subflow on the 1 Mbit/s 100 ms path (paper's subflow 1).
      Paper: original 264 422.111 B/s, RBPM 898 704.71 B/s ("about three times").

Both: 200 KB receive buffer, Reno, DropTail 100 packets, opportunistic retransmission
and penalisation off, 100 s (all in the committed scenario files, unchanged here).

Variants (field paths of Scenario.with_):
  fullmesh+minRTT        the scenario as committed;
  RBPM later             connections[0].scheduler = "rbpm" with its defaults:
                         reactivation = "later" (Eq. 3 from packets out, restart in a later
                         decision; the reading of the seed's Eq. 3 and Fig. 4),
                         bandwidth = "delivery_rate";
  RBPM literal           reactivation = "literal" (Algorithm 1 as printed),
                         bandwidth = "cwnd_srtt" (as when this page was first made);
  RBPM all_paths         reactivation = "all_paths" (the prose's reading, with hysteresis),
                         bandwidth = "cwnd_srtt".
All RBPM variants keep the default Eq. 3 reading (required = "pairwise").

Seeds: the scenarios have no random loss, so every variant also sets
run.start_jitter = "100 ms": each seed starts the connection at a different offset in
[0, 100 ms), which moves it against the receiver's read ticks and the sampling grid. Any
spread across seeds comes only from that phase; a tiny CI means the result does not
depend on it, not that the model is right.

Goodput is the connection's application bytes delivered divided by its active time
(the summary's goodput), in B/s. The paper's "byte per second" may count headers (its
bytes per packet are 858 and 932, not an MSS), so a paper figure is compared with ±25 %
tolerance, fixed before the first run:
  - a figure claim is ✓ when the paper's value lies within ±25 % of our mean;
  - a ratio claim ("about N times") is ✓ when our ratio of means is within ±25 % of the
    paper's ratio;
  - an ordering claim (RBPM > original) is ✓ when the 95 % CI of the difference is > 0;
  - a path claim (which subflow RBPM stops) is ✓ when it holds in every seed, read from
    the run's subflow event log (status "inactive", reason "rbpm").

    mptcplab reproduce rbpm --page [--reps 10] [--profile upstream]
"""
from __future__ import annotations

import json
import math
from typing import Any

from ...stats import diff_ci, mean_ci
from ..runner import Variant, run_variants, scenario_path
from . import Page, PageContext

PROFILES = ("out_of_tree", "upstream")


def default_path(profile: str | None) -> str:
    return "docs/reproductions/seed001-upstream.md" if profile == "upstream" else "docs/reproductions/seed001.md"


TOPOLOGIES = {
    "topology 1": {
        "file": "scenarios/rbpm-4path-a.toml",
        "paper": {"original": 275563.174, "rbpm": 1114986.038, "ratio": 4.0},
        "paths": "three 5 Mbit/s 10 ms + one 1 Mbit/s 100 ms",
        # Paper: RBPM stops subflow 4, the 1 Mbit/s 100 ms path.
        "stopped": ["path4"],
    },
    "topology 2": {
        "file": "scenarios/rbpm-4path-b.toml",
        "paper": {"original": 264422.111, "rbpm": 898704.71, "ratio": 3.0},
        "paths": "1/8/3/2 Mbit/s with 100/50/30/10 ms",
        # Paper: RBPM does not use subflows 1 and 3 (1 Mbit/s 100 ms, 3 Mbit/s 30 ms),
        # later stops subflow 4 too, then restarts the stopped paths.
        "stopped": ["path1", "path3"],
    },
}
JITTER = {"run.start_jitter": "100 ms"}
FULLMESH = "fullmesh+minRTT"
LATER = "RBPM later"
LITERAL = "RBPM literal"
ALL_PATHS = "RBPM all_paths"
RBPM_VARIANTS = (LATER, LITERAL, ALL_PATHS)


def _rbpm(reactivation: str, bandwidth: str) -> dict:
    return {**JITTER, "connections[0].scheduler": "rbpm",
            "connections[0].scheduler_options": {"reactivation": reactivation, "bandwidth": bandwidth}}


VARIANTS = [
    Variant(FULLMESH, dict(JITTER)),
    Variant(LATER, _rbpm("later", "delivery_rate")),
    Variant(LITERAL, _rbpm("literal", "cwnd_srtt")),
    Variant(ALL_PATHS, _rbpm("all_paths", "cwnd_srtt")),
]
TOL = 0.25


KEYS = ("goodput_Bps", "path_Mbps", "new_segs", "stops", "restarts", "first_stop_s")


def rbpm_figures(result: Any) -> dict[str, Any]:
    """One run's figures: goodput (B/s), per-path throughput and new-data segments, RBPM's
    stops per path and restarts (subflow event log, reason "rbpm"), its first stop."""
    s = result.summary.iloc[0]
    ss = result.subflow_summary
    ev = result.subflow_events
    rb = ev[ev["reason"] == "rbpm"]
    stops = rb[rb["to"] == "inactive"]
    restarts = rb[rb["from"] == "inactive"]
    return {
        "goodput_Bps": float(s["goodput_mbps"]) * 1e6 / 8,
        "path_Mbps": {str(r.path): float(r.throughput_mbps) for r in ss.itertuples()},
        "new_segs": {str(r.path): int(r.sched_new_segs) for r in ss.itertuples()},
        "stops": {str(p): int((stops["path"] == p).sum()) for p in ss["path"]},
        "restarts": int(len(restarts)),
        "first_stop_s": float(stops["time_s"].min()) if len(stops) else math.nan,
    }


def kB(x: float) -> str:
    return f"{x:,.0f}".replace(",", " ")


def within(ours: float, paper: float) -> bool:
    return abs(paper - ours) <= TOL * ours


def page(ctx: PageContext) -> Page:
    seeds = ctx.seed_list(10)
    rows: list[dict[str, Any]] = []
    for topo, t in TOPOLOGIES.items():
        runs = run_variants(scenario_path(t["file"].removeprefix("scenarios/")), VARIANTS, seeds, rbpm_figures,
                            ctx.workers, ctx.ledger, topo)
        rows += [{"topology": topo, "variant": r["variant"], "seed": r["seed"], **{k: r[k] for k in KEYS}}
                 for r in runs]

    def vals(topo, label, key):
        return [key(r) for r in rows if r["topology"] == topo and r["variant"] == label]

    out = ["# Seed 001 (RBPM): measured and reported"
           + (f" (profile {ctx.profile})" if ctx.profile else ""), "",
           f"Profile: `{ctx.profile or 'out_of_tree'}`"
           + (" (forced with `--profile`)." if ctx.profile else " (the scenario files' own)."), "",
           f"Tables and verdicts generated by `mptcplab reproduce rbpm --page"
           f"{f' --profile {ctx.profile}' if ctx.profile else ''} --reps {len(seeds)}` ({len(rows)} runs); "
           f"per-run figures in `{ctx.runs_file}`.", "",
           "Seed 001 (IM 2017 short paper, *Receive Buffer based Path Management for MPTCP*) claims that RBPM "
           "multiplies plain MPTCP's goodput by about 4 (topology 1) and 3 (topology 2) in two 4-path topologies "
           "with a 200 KB receive buffer, where plain MPTCP suffers buffer blocking.", "",
           "Set-up: the committed scenarios `scenarios/rbpm-4path-a.toml` (topology 1) and "
           "`scenarios/rbpm-4path-b.toml` (topology 2), unchanged; their headers state every reading "
           "(one-way delays, 200 KB = 200 000 B, Reno, DropTail 100 packets, opportunistic retransmission and "
           "penalisation off, 100 s, the initial subflow: a 5 Mbit/s path in topology 1, the 1 Mbit/s 100 ms path "
           "in topology 2). Variants: `fullmesh+minRTT` = the file as committed (the kernel's default scheduler); "
           "`RBPM later` = `connections[0].scheduler = \"rbpm\"` with its defaults, `reactivation = \"later\"` "
           "(the reading of Eq. 3 and Fig. 4: B_req from each path's packets out, restart only in a later decision, "
           "when the window left exceeds twice B_req of all paths) and `bandwidth = \"delivery_rate\"`; "
           "`RBPM literal` = `reactivation = \"literal\"` (Algorithm 1 as printed, o_i = cwnd) and "
           "`RBPM all_paths` = `reactivation = \"all_paths\"` (restart only when the available buffer exceeds "
           "twice what *all* paths need by their cwnds), both with `bandwidth = \"cwnd_srtt\"` as when this page "
           "was first made; see `crates/mptcplab-core/src/mptcp/scheduler/rbpm.rs` for why three readings exist. "
           "All RBPM variants use the default Eq. 3 form (`required = \"pairwise\"`).", "",
           f"Seeds 1-{len(seeds)}; the scenarios have no random loss, so every variant sets "
           "`run.start_jitter = \"100 ms\"` (the connection starts at a seed-dependent offset in [0, 100 ms)). "
           "The spread across seeds is that phase only. Goodput: application bytes delivered over the "
           "connection's active time, B/s, mean ± 95 % CI (Student t).", "",
           "Criteria, fixed before the first run: a paper figure is ✓ when it lies within ±25 % of our mean "
           "(the paper's B/s may include headers: its bytes per packet are 858-932); a ratio claim is ✓ when our "
           "ratio of means is within ±25 % of the paper's; RBPM > original is ✓ when the 95 % CI of the "
           "difference is above 0; a path claim is ✓ when it holds in every seed (subflow event log, status "
           "`inactive`, reason `rbpm`).", ""]

    out += ["## Goodput", "",
            "| topology | paths | variant | goodput (B/s) | Mbit/s | paper (B/s) |",
            "|---|---|---|---|---|---|"]
    for topo, t in TOPOLOGIES.items():
        for v in VARIANTS:
            g = vals(topo, v.label, lambda r: r["goodput_Bps"])
            m, h = mean_ci(g)
            paper = t["paper"]["original"] if v.label == FULLMESH else t["paper"]["rbpm"]
            out.append(f"| {topo} | {t['paths']} | {v.label} | {kB(m)} ± {kB(h)} | {m * 8 / 1e6:.2f} | {kB(paper)} |")
    out.append("")

    out += ["## Per path (mean over seeds)", "",
            "Subflow throughput (bytes acknowledged over its lifetime, Mbit/s), share of the new data the scheduler "
            "put on it (`sched_new_segs`), and RBPM stops per run (`subflow_events`: to `inactive`, reason `rbpm`).", "",
            "| topology | variant | path | Mbit/s | new-data share | stops per run |", "|---|---|---|---|---|---|"]
    for topo in TOPOLOGIES:
        for v in VARIANTS:
            rs = [r for r in rows if r["topology"] == topo and r["variant"] == v.label]
            for p in rs[0]["path_Mbps"]:
                mb = sum(r["path_Mbps"][p] for r in rs) / len(rs)
                share = sum(r["new_segs"][p] / max(1, sum(r["new_segs"].values())) for r in rs) / len(rs)
                st = sum(r["stops"].get(p, 0) for r in rs) / len(rs)
                out.append(f"| {topo} | {v.label} | {p} | {mb:.2f} | {100 * share:.1f} % | {st:.1f} |")
        for v in VARIANTS[1:]:
            rs = [r for r in rows if r["topology"] == topo and r["variant"] == v.label]
            fs = [r["first_stop_s"] for r in rs if not math.isnan(r["first_stop_s"])]
            out.append("")
            out.append(f"{topo}, {v.label}: restarts per run {sum(r['restarts'] for r in rs) / len(rs):.1f}; "
                       f"first stop at {min(fs):.2f}-{max(fs):.2f} s" if fs else f"{topo}, {v.label}: no stop")
        out.append("")

    out += ["## Claims", ""]
    n_ok = n_all = 0
    for topo, t in TOPOLOGIES.items():
        p = t["paper"]
        orig = vals(topo, FULLMESH, lambda r: r["goodput_Bps"])
        mo, ho = mean_ci(orig)
        ok = within(mo, p["original"])
        out.append(f"- **{topo}, original MPTCP ≈ {kB(p['original'])} B/s: {'✓' if ok else '✗'}** — ours "
                   f"{kB(mo)} ± {kB(ho)} B/s ({p['original'] / mo:.2f}× ours).")
        n_ok += ok
        n_all += 1
        for lab in RBPM_VARIANTS:
            rb = vals(topo, lab, lambda r: r["goodput_Bps"])
            mr, hr = mean_ci(rb)
            ok = within(mr, p["rbpm"])
            out.append(f"- **{topo}, RBPM ≈ {kB(p['rbpm'])} B/s ({lab}): {'✓' if ok else '✗'}** — ours "
                       f"{kB(mr)} ± {kB(hr)} B/s ({p['rbpm'] / mr:.2f}× ours).")
            d, h = diff_ci(rb, orig)
            ok2 = d - h > 0
            out.append(f"- **{topo}, RBPM > original ({lab}): {'✓' if ok2 else '✗'}** — difference "
                       f"{kB(d)} ± {kB(h)} B/s (95 % CI, Welch).")
            ratio = mr / mo
            ok3 = abs(ratio - p["ratio"]) <= TOL * p["ratio"]
            out.append(f"- **{topo}, RBPM ≈ {p['ratio']:.0f}× original ({lab}): {'✓' if ok3 else '✗'}** — ours "
                       f"{ratio:.2f}× (paper {p['rbpm'] / p['original']:.2f}×).")
            rs = [r for r in rows if r["topology"] == topo and r["variant"] == lab]
            ok4 = all(all(r["stops"].get(q, 0) >= 1 for q in t["stopped"]) for r in rs)
            seen = sorted({q for r in rs for q, c in r["stops"].items() if c})
            out.append(f"- **{topo}, RBPM stops {' and '.join(t['stopped'])} ({lab}): {'✓' if ok4 else '✗'}** — "
                       f"paths stopped in some seed: {', '.join(seen) or 'none'}; runs where every named path was "
                       f"stopped: {sum(all(r['stops'].get(q, 0) >= 1 for q in t['stopped']) for r in rs)}/{len(rs)}.")
            n_ok += ok + ok2 + ok3 + ok4
            n_all += 4
        if topo == "topology 2":
            for lab in RBPM_VARIANTS:
                rs = [r for r in rows if r["topology"] == topo and r["variant"] == lab]
                ok5 = all(r["restarts"] >= 1 for r in rs)
                out.append(f"- **{topo}, RBPM restarts the stopped paths ({lab}): {'✓' if ok5 else '✗'}** — "
                           f"runs with a restart in the log: {sum(r['restarts'] >= 1 for r in rs)}/{len(rs)}.")
                n_ok += ok5
                n_all += 1
    out += ["", f"{n_ok} of {n_all} claims ✓.", ""]
    text = "\n".join(out)
    # Keep the hand-written discussion (from "## Discussion" on) of the page as it was.
    if "\n## Discussion" in ctx.previous:
        text += ctx.previous[ctx.previous.index("\n## Discussion") + 1:]
    return Page(text, json.dumps(rows, indent=1) + "\n")
