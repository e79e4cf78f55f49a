"""`reproduce lia-vs-tcp`: seed 003 (Kato et al., "Performance Evaluation of MultiPath
TCP Congestion Control", ICN 2019; ../shared/seeds/003_ec592094afd498d4.txt).

Experiment 1 (Sec. IV, Table I): one MPTCP connection over Ethernet (0.1 % loss) and
WLAN, 100 ms delay at the receiver, cc = LIA / Reno / CUBIC, 10 s.
Experiment 2 (Sec. V, Table II): MPTCP-LIA against one single-path Reno or CUBIC flow on
a 10 Mbit/s bottleneck, 10 s.

Every assumption is in the scenario files' headers (scenarios/reproduce/seed003-*.toml).
Goodput is the connection-level bytes delivered over [0, 10 s] (iperf's average).
"""
from __future__ import annotations

from . import Context
from .checks import bar, ci_text, less
from .model import Claim, Reproduction, Table
from .runner import Variant, Window, run_variants, scenario_path, values

EXP1 = "reproduce/seed003-exp1-lia-reno-cubic.toml"
EXP2 = "reproduce/seed003-exp2-lia-vs-single-flow.toml"
WINDOW = Window(0.0, 10.0)
CCS = ("lia", "reno", "cubic")


def _conn(r: dict) -> float:
    return r["goodput"]["mptcp"]


def _single(r: dict) -> float:
    return r["goodput"]["single"]


def run(ctx: Context) -> Reproduction:
    seeds = ctx.seeds(full=10, quick=3)
    r1 = run_variants(scenario_path(EXP1), [Variant(cc, {"connections[0].cc": cc}) for cc in CCS], seeds,
                      WINDOW, ctx.workers, ctx.ledger, "experiment 1 (Table I)")
    exp2 = [Variant(f"lia vs {cc}", {"flows[0].cc": cc}) for cc in ("reno", "cubic")]
    r2 = run_variants(scenario_path(EXP2), exp2, seeds, WINDOW, ctx.workers, ctx.ledger, "experiment 2 (Table II)")

    g1 = {cc: values(r1, cc, _conn) for cc in CCS}
    eth = {cc: values(r1, cc, lambda r: r["subflows"].get("mptcp#0", 0.0)) for cc in CCS}
    wlan = {cc: values(r1, cc, lambda r: r["subflows"].get("mptcp#1", 0.0)) for cc in CCS}
    m_r, s_r = values(r2, "lia vs reno", _conn), values(r2, "lia vs reno", _single)
    m_c, s_c = values(r2, "lia vs cubic", _conn), values(r2, "lia vs cubic", _single)

    ok_r, t_r = less(g1["lia"], g1["reno"], "LIA", "Reno")
    ok_c, t_c = less(g1["lia"], g1["cubic"], "LIA", "CUBIC")
    ok2a, t2a = less(m_r, s_r, "MPTCP-LIA", "Reno flow")
    ok2b, t2b = less(m_c, m_r, "MPTCP-LIA vs CUBIC", "MPTCP-LIA vs Reno")
    ok2c, t2c = less(m_c, s_c, "MPTCP-LIA", "CUBIC flow")
    def paired(a: list[float], b: list[float]) -> str:
        return f"{sum(x < y for x, y in zip(a, b))}/{len(a)}"

    claims = [
        Claim("C1", "Experiment 1: LIA gives the lowest MPTCP throughput (LIA < Reno and LIA < CUBIC)",
              "Table I: LIA 12.5, 12.1; Reno 14.4, 18.8; CUBIC 23.0, 16.1 Mbit/s", f"{t_r}; {t_c}", ok_r and ok_c,
              f"paired by seed, LIA < Reno in {paired(g1['lia'], g1['reno'])} and LIA < CUBIC in "
              f"{paired(g1['lia'], g1['cubic'])} seeds; 10 s runs include slow start, whose loss-driven spread is "
              "common to all three CCs"),
        Claim("C2", "Experiment 2: MPTCP-LIA gets less than the single-path Reno flow it shares the bottleneck with",
              "Table II: LIA 2.82 vs Reno 7.03 Mbit/s", t2a, ok2a),
        Claim("C3", "Experiment 2: MPTCP-LIA gets less against CUBIC than against Reno",
              "Table II: 1.58 (vs CUBIC) < 2.82 (vs Reno) Mbit/s", t2b, ok2b),
        Claim("C4", "Experiment 2: MPTCP-LIA gets less than the single-path CUBIC flow",
              "Table II: LIA 1.58 vs CUBIC 8.37 Mbit/s", t2c, ok2c),
    ]
    n = len(seeds)
    t1 = Table("Experiment 1: MPTCP goodput over [0, 10 s], Mbit/s (mean ± 95 % CI)",
               ["cc", "MPTCP", "Ethernet subflow", "WLAN subflow", "paper (two runs)"],
               [[cc, ci_text(g1[cc]), ci_text(eth[cc]), ci_text(wlan[cc]), paper]
                for cc, paper in zip(CCS, ("12.5, 12.1", "14.4, 18.8", "23.0, 16.1"))],
               note=f"{n} runs per cc; subflow columns are bytes acknowledged on the subflow.")
    t2 = Table("Experiment 2: goodput over [0, 10 s] on the 10 Mbit/s bottleneck, Mbit/s (mean ± 95 % CI)",
               ["single flow", "MPTCP-LIA", "single flow goodput", "paper (LIA vs single)"],
               [["Reno", ci_text(m_r), ci_text(s_r), "2.82 vs 7.03"],
                ["CUBIC", ci_text(m_c), ci_text(s_c), "1.58 vs 8.37"]],
               note=f"{n} runs per variant")
    figs = [
        bar("Experiment 1: MPTCP goodput by congestion control", list(CCS), {"MPTCP": [g1[c] for c in CCS]},
            "goodput (Mbit/s)"),
        bar("Experiment 2: MPTCP-LIA against one single-path flow", ["vs Reno", "vs CUBIC"],
            {"MPTCP-LIA": [m_r, m_c], "single flow": [s_r, s_c]}, "goodput (Mbit/s)"),
    ]
    return Reproduction(
        paper="lia-vs-tcp",
        title="Kato et al., Performance Evaluation of MultiPath TCP Congestion Control (ICN 2019)",
        seed_file="003_ec592094afd498d4.txt",
        summary=(f"Two experiments of seed 003, {n} seeds each, 10 s runs: one MPTCP connection with LIA, "
                 "uncoupled Reno or uncoupled CUBIC over a lossy Ethernet path and a WLAN path; and MPTCP-LIA "
                 "against one single-path flow on a 10 Mbit/s bottleneck. A claim A < B holds when the 95 % CI "
                 "of the difference of the means (Welch) lies below 0."),
        claims=claims, tables=[t1, t2], figures=figs,
        notes=("LIA is the Linux-faithful module (cc_options default, `best_path = \"linux\"`). \"Reno\" and "
               "\"CUBIC\" for MPTCP are uncoupled per-subflow controllers, as with "
               "net.ipv4.tcp_congestion_control on the paper's MPTCP kernel. The paper gives neither its start "
               "order nor its queue limits, both of which set the 10 s transient; the longer-run diagnostics "
               "are in docs/reproductions/seed003.md."),
    )
