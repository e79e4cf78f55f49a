"""The seed 003 page (docs/reproductions/seed003.md): Kato et al., "Performance Evaluation
of MultiPath TCP Congestion Control", ICN 2019.

  experiment 1 (Sec. IV, Table I): one MPTCP connection over Ethernet (0.1 % loss) and
      WLAN, 100 ms ACK delay, cc = LIA / Reno / CUBIC. Claim: LIA is the lowest.
  experiment 2 (Sec. V, Table II): MPTCP-LIA against one single-path Reno or CUBIC flow
      on a 10 Mbit/s bottleneck. Claims: LIA < Reno flow; LIA vs CUBIC < LIA vs Reno.

The scenario files (scenarios/reproduce/seed003-*.toml) state every assumption.

    mptcplab reproduce lia-vs-tcp --page [--seeds 10] [--no-diagnostics]
"""
from __future__ import annotations

from ...stats import diff_ci, mean_ci
from ..runner import Variant, Window, run_variants, scenario_path, values
from . import Page, PageContext
from .common import fmt, goodput_table, less, paired, per_seed, per_variant_subflow

PROFILES: tuple[str, ...] = ()  # written under the files' own profile only


def default_path(profile: str | None) -> str:
    return "docs/reproductions/seed003.md"


EXP1 = "scenarios/reproduce/seed003-exp1-lia-reno-cubic.toml"
EXP2 = "scenarios/reproduce/seed003-exp2-lia-vs-single-flow.toml"
WINDOW = (0.0, 10.0)  # iperf's 10 s average, slow start included
EXTRA = "lia, best_path=exact (extra)"

EXP1_VARIANTS = [
    Variant("lia", {"connections[0].cc": "lia"}),
    Variant("reno", {"connections[0].cc": "reno"}),
    Variant("cubic", {"connections[0].cc": "cubic"}),
    Variant(EXTRA, {"connections[0].cc": "lia", "connections[0].cc_options": {"best_path": "exact"}}),
]
EXP2_VARIANTS = [
    Variant("lia vs reno", {"flows[0].cc": "reno"}),
    Variant("lia vs cubic", {"flows[0].cc": "cubic"}),
    Variant("lia, best_path=exact (extra) vs reno", {"flows[0].cc": "reno", "connections[0].cc_options": {"best_path": "exact"}}),
    Variant("lia, best_path=exact (extra) vs cubic", {"flows[0].cc": "cubic", "connections[0].cc_options": {"best_path": "exact"}}),
]


def conn(r: dict) -> float:
    return r["goodput"]["mptcp"]


def single(r: dict) -> float:
    return r["goodput"]["single"]


def _runs(ctx: PageContext, path: str, variants: list[Variant], seeds: list[int], window: tuple[float, float],
          label: str) -> list[dict]:
    return run_variants(scenario_path(path.removeprefix("scenarios/")), variants, seeds, Window(*window),
                        ctx.workers, ctx.ledger, label)


def page(ctx: PageContext) -> Page:
    seeds = ctx.seed_list(10)
    r1 = _runs(ctx, EXP1, EXP1_VARIANTS, seeds, WINDOW, "experiment 1 (Table I)")
    r2 = _runs(ctx, EXP2, EXP2_VARIANTS, seeds, WINDOW, "experiment 2 (Table II)")
    diagnostics = _diagnostics(ctx, seeds, r1) if ctx.diagnostics else (
        "## Diagnostics\n\nNot run for this page (`mptcplab reproduce lia-vs-tcp --page` runs them unless "
        "`--no-diagnostics`).\n")

    # Experiment 1
    lia, reno, cubic = (values(r1, v, conn) for v in ("lia", "reno", "cubic"))
    ok_a, line_a = less("LIA < Reno", lia, reno, "LIA", "Reno")
    ok_b, line_b = less("LIA < CUBIC", lia, cubic, "LIA", "CUBIC")
    d, h = diff_ci(reno, cubic)
    pair = (f"Reno {fmt(mean_ci(reno))} vs CUBIC {fmt(mean_ci(cubic))} Mbit/s; Reno − CUBIC = {d:+.2f} ± {h:.2f} "
            f"Mbit/s ({'the CI of the difference excludes 0' if abs(d) > h else 'not distinguishable at 95 %'}; "
            f"the paper's runs overlap: Reno 14.4, 18.8 / CUBIC 23.0, 16.1)")
    exp1_verdict = "✓" if ok_a and ok_b else "✗"

    # Experiment 2
    m_r, s_r = values(r2, "lia vs reno", conn), values(r2, "lia vs reno", single)
    m_c, s_c = values(r2, "lia vs cubic", conn), values(r2, "lia vs cubic", single)
    ok2a, line2a = less("Claim 2a, LIA < Reno flow", m_r, s_r, "MPTCP-LIA", "Reno flow")
    ok2b, line2b = less("Claim 2b, LIA against CUBIC < LIA against Reno", m_c, m_r, "MPTCP-LIA vs CUBIC", "MPTCP-LIA vs Reno")
    ok2c, line2c = less("(implied) LIA < CUBIC flow", m_c, s_c, "MPTCP-LIA", "CUBIC flow")
    ex_r = values(r2, "lia, best_path=exact (extra) vs reno", conn), values(r2, "lia, best_path=exact (extra) vs reno", single)
    ex_c = values(r2, "lia, best_path=exact (extra) vs cubic", conn), values(r2, "lia, best_path=exact (extra) vs cubic", single)
    _, line2x = less("extra, 2a with best_path=exact", ex_r[0], ex_r[1], "MPTCP-LIA", "Reno flow")
    _, line2y = less("extra, 2b with best_path=exact", ex_c[0], ex_r[0], "MPTCP-LIA vs CUBIC", "MPTCP-LIA vs Reno")
    ex1 = values(r1, EXTRA, conn)
    _, line1x = less("extra, LIA (best_path=exact) < Reno", ex1, reno, "LIA exact", "Reno")
    _, line1y = less("extra, LIA (best_path=exact) < CUBIC", ex1, cubic, "LIA exact", "CUBIC")

    n = len(seeds)
    verdicts = [("1", "LIA gives the lowest throughput of LIA, Reno, CUBIC", exp1_verdict),
                ("1, part", "LIA < Reno", "✓" if ok_a else "✗"),
                ("1, part", "LIA < CUBIC", "✓" if ok_b else "✗"),
                ("2a", "MPTCP-LIA < single Reno flow", "✓" if ok2a else "✗"),
                ("2b", "MPTCP-LIA against CUBIC < MPTCP-LIA against Reno", "✓" if ok2b else "✗"),
                ("2b, implied", "MPTCP-LIA < single CUBIC flow", "✓" if ok2c else "✗")]
    summary = "| exp. | claim | verdict |\n|---|---|---|\n" + "".join(f"| {e} | {c} | {v} |\n" for e, c, v in verdicts)

    return Page(f"""# Seed 003 reproductions (issue 3): LIA vs Reno vs CUBIC

Seed 003: Kato et al., "Performance Evaluation of MultiPath TCP Congestion Control",
ICN 2019 (`/work/shared/seeds/003_ec592094afd498d4.txt`). Generated by
`mptcplab reproduce lia-vs-tcp --page` ({n} seeds per variant, goodput over [{WINDOW[0]:g} s, {WINDOW[1]:g} s],
mean ± 95 % CI (Student t)). A claim "A < B" is ✓ when the 95 % CI of
the difference of the means (Welch) lies entirely below 0.

Every assumption (mapping of the testbed onto links and paths, rates, delays, queues,
loss and delay placement, durations, window, seeds, what "Reno"/"CUBIC" mean for MPTCP)
is stated in the header of the scenario files, committed before their first run:

* [`scenarios/reproduce/seed003-exp1-lia-reno-cubic.toml`](../../{EXP1})
* [`scenarios/reproduce/seed003-exp2-lia-vs-single-flow.toml`](../../{EXP2})

In short: experiment 1 = Ethernet path (100 Mbit/s, 0.1 % Bernoulli loss on data) and
WLAN path (20 Mbit/s DropTail) joined on the receiver's 100 Mbit/s link whose ACK
direction carries the 100 ms netem delay; 1000-packet queues; 10 s; the seed drives the
loss. Experiment 2 = the same two MPTCP paths plus a single-path sender, all through a
10 Mbit/s bottleneck (100-packet queue) with the 100 ms delay on the ACKs, no artificial
loss, start offsets drawn in [0, 100 ms) per seed. "Reno"/"CUBIC" for MPTCP are the
uncoupled per-subflow controllers. CC options are the defaults (Linux-faithful); the
variants marked *extra* set LIA's `best_path = "exact"` (RFC 6356's max instead of Linux's
integer quotient, which is 0 for every subflow at these RTTs while cwnd < ~149) and are
not the primary result.

## Experiment 1 (Sec. IV, Table I): one MPTCP connection, cc = LIA / Reno / CUBIC

Paper (two runs each): LIA 12.5, 12.1; Reno 14.4, 18.8; CUBIC 23.0, 16.1 Mbit/s.

{goodput_table(r1, [("mptcp", "MPTCP goodput (Mbit/s)")], [("mptcp#0", "Ethernet subflow"), ("mptcp#1", "WLAN subflow")])}
Subflow columns: bytes acknowledged on the subflow over the window (Mbit/s).

{per_seed(r1, conn)}
**Claim 1, LIA gives the lowest throughput: {exp1_verdict}**

* {line_a}
* {line_b}
* Reno vs CUBIC (reported, no claim): {pair}
* {line1x}
* {line1y}

## Experiment 2 (Sec. V, Table II): MPTCP-LIA against one single-path flow, 10 Mbit/s

Paper (mean of four runs): LIA 2.82 vs Reno 7.03; LIA 1.58 vs CUBIC 8.37 Mbit/s.

{goodput_table(r2, [("mptcp", "MPTCP-LIA (Mbit/s)"), ("single", "single flow (Mbit/s)")], [("mptcp#0", "Ethernet subflow"), ("mptcp#1", "WLAN subflow")])}
{per_seed(r2, conn).replace("per seed", "MPTCP-LIA per seed")}
* {line2a}
* {line2b}
* {line2c}
* {line2x}
* {line2y}

## Verdicts

{summary}
""" + diagnostics)


def _diagnostics(ctx: PageContext, seeds: list[int], r1: list[dict]) -> str:
    """Post-hoc runs that locate the cause of the ✗ (they change no verdict): the paired
    view of experiment 1, its late window and 100-s runs, experiment 2 at steady state
    and with the single flow first."""
    r1_late = _runs(ctx, EXP1, EXP1_VARIANTS[:3], seeds, (5.0, 10.0), "diagnostic: experiment 1, [5 s, 10 s]")
    long1 = [Variant(v.label, {**v.changes, "run.duration": "100 s"}) for v in EXP1_VARIANTS[:3]]
    r1_long = _runs(ctx, EXP1, long1, seeds, (20.0, 100.0), "diagnostic: experiment 1, 100 s")
    long2 = [Variant(v.label, {**v.changes, "run.duration": "300 s"}) for v in EXP2_VARIANTS[:2]]
    r2_long = _runs(ctx, EXP2, long2, seeds, (100.0, 300.0), "diagnostic: experiment 2, 300 s")
    first = [Variant("single flow first (MPTCP at 1 s) vs " + cc, {"flows[0].cc": cc, "connections[0].start": "1 s", "run.duration": "11 s"})
             for cc in ("reno", "cubic")]
    r2_first = _runs(ctx, EXP2, first, seeds, (1.0, 11.0), "diagnostic: experiment 2, single flow first")
    lia, reno, cubic = (values(r1, v, conn) for v in ("lia", "reno", "cubic"))
    n = len(seeds)
    k_r, d_r, h_r = paired(lia, reno)
    k_c, d_c, h_c = paired(lia, cubic)
    late = per_variant_subflow(r1_late, "mptcp#0")
    long1_c = {v: mean_ci(values(r1_long, v, conn)) for v in ("lia", "reno", "cubic")}
    long1_e = per_variant_subflow(r1_long, "mptcp#0")
    l2 = {v: (mean_ci(values(r2_long, v, conn)), mean_ci(values(r2_long, v, single))) for v in ("lia vs reno", "lia vs cubic")}
    f2 = {v.label: (mean_ci(values(r2_first, v.label, conn)), mean_ci(values(r2_first, v.label, single))) for v in first}
    fr, fc = f2[first[0].label], f2[first[1].label]
    return f"""## Why the ✗: diagnostics (run after the results; they change no verdict)

The scenario files were not changed after their first run. The runs below depart from
the paper on purpose (longer runs, another start order) to locate the cause of the ✗;
they are explanations, not reproductions.

**Experiment 1, LIA < Reno.** Every seed has LIA below Reno, but the pre-registered test
(Welch, independent samples) does not separate them: most of the seed-to-seed spread is
the Ethernet subflow's slow-start overshoot before its first random loss, and that phase
is identical for LIA and Reno (LIA couples only congestion avoidance) and the seed fixes
the loss draws, so the spread is common to both. Paired by seed (post hoc): LIA < Reno in
{k_r}/{n} seeds, LIA − Reno = {d_r:+.2f} ± {h_r:.2f} Mbit/s; LIA < CUBIC in {k_c}/{n} seeds,
LIA − CUBIC = {d_c:+.2f} ± {h_c:.2f} Mbit/s. Once the overshoot has decayed, the
Ethernet subflow over [5 s, 10 s] carries LIA {fmt(late["lia"])}, Reno {fmt(late["reno"])},
CUBIC {fmt(late["cubic"])} Mbit/s: LIA's coupled increase on the Ethernet subflow is tiny
(the WLAN subflow, cwnd in the hundreds behind a 1000-packet queue, is the best path;
in seed 2 the Ethernet cwnd is 9 from 5.6 s on, the WLAN's ~650 at ~390 ms srtt, so
Linux's alpha·2^12/cwnd_total = 5, i.e. +1 packet per ~820 ACKs, ~160 RTTs), which is the paper's mechanism (Fig. 4: the Ethernet cwnd grows least
with LIA). The WLAN subflow is link-limited and essentially the same under every cc (17.5-17.7 Mbit/s). In 100 s runs
(window [20 s, 100 s]) the order is clear: LIA {fmt(long1_c["lia"])}, Reno {fmt(long1_c["reno"])},
CUBIC {fmt(long1_c["cubic"])} Mbit/s (Ethernet subflow: LIA {fmt(long1_e["lia"])},
Reno {fmt(long1_e["reno"])}, CUBIC {fmt(long1_e["cubic"])}). In 10 s the transient dominates.
Absolute totals exceed the paper's 12-23 Mbit/s because the modelled WLAN carries
~17.6 Mbit/s in every variant; the paper's WLAN subflow was capped by OS-set cwnd maxima
and real 802.11g airtime sharing, neither modelled.

**Experiment 2, LIA < Reno flow.** With ~100-220 ms RTTs a 10 s run is about 50-100 RTTs,
and its outcome is set by the overflows of the bottleneck queue at the end of slow start
(about 0.8-2 s). LIA couples only congestion avoidance, so the MPTCP connection slow-starts
like the Reno flow (its Ethernet subflow and the Reno flow both reach ~140-160 packets and
both lose at ~0.9 s); the second overflow, when both leave recovery at ~1.5-2 s, falls on
the Reno flow alone in 9 of seeds 1-10 (cwnd ~70 -> ~40) and on both in one (checked in
the cwnd time series). Afterwards the queue does not overflow again before ~9.2 s: the
Reno flow regrows at 1 packet per RTT (~200 ms), LIA barely grows, and the ~7 s left are
too short for the Reno flow to catch up. Against CUBIC the single flow regrows faster, hence claim 2b holds even in
10 s. At steady state (300 s runs, window [100 s, 300 s]) the paper's picture appears:
LIA {fmt(l2["lia vs reno"][0])} vs Reno {fmt(l2["lia vs reno"][1])} Mbit/s, and
LIA {fmt(l2["lia vs cubic"][0])} vs CUBIC {fmt(l2["lia vs cubic"][1])} Mbit/s
(paper: 2.82 vs 7.03 and 1.58 vs 8.37). It also appears in 10 s if the single flow
starts 1 s before the MPTCP connection (window [1 s, 11 s]): LIA {fmt(fr[0])} vs Reno
{fmt(fr[1])}, LIA {fmt(fc[0])} vs CUBIC {fmt(fc[1])} Mbit/s. The paper gives neither its
start order nor its tbf queue limit, both of which set this transient; we keep our
pre-registered simultaneous start (with 0-100 ms jitter) and 100-packet queue as the
primary result.
"""
