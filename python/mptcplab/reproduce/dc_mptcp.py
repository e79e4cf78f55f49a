"""`reproduce dc-mptcp`: Raiciu et al., "Improving Datacenter Performance and Robustness
with Multipath TCP" (SIGCOMM 2011), the permutation experiment on a FatTree: throughput
as a fraction of optimal against the number of MPTCP subflows (LIA), and single-path TCP
on a random path (ECMP).

Every assumption is in the scenario file's header (scenarios/reproduce/
dc-mptcp-fattree-k8.toml). `--quick` runs a k = 4 FatTree (16 hosts) for 2 s. htsim's
side of the same experiment: docs/performance/htsim-dc.md (scripts/htsim-dc/).
"""
from __future__ import annotations

from typing import Any

from . import Context
from .checks import bar, ci_text, less
from .model import Claim, Reproduction, Table
from .runner import Variant, run_variants, scenario_path, values, window_goodput

SCENARIO = "reproduce/dc-mptcp-fattree-k8.toml"
SUBFLOWS = (1, 2, 4, 8)
TCP = "TCP (ECMP)"
MSS, TCP_WIRE, MPTCP_WIRE = 1448, 1500, 1520  # payload and wire bytes of a full segment


class Fraction:
    """Mean over connections of goodput over [start, end] / the payload rate of a 1 Gbit/s
    host link for the transport (MSS / wire bytes of a full segment). Picklable."""

    def __init__(self, start: float, end: float, wire: int) -> None:
        self.start, self.end, self.wire = start, end, wire

    def __call__(self, result: Any) -> dict[str, Any]:
        g = window_goodput(result, self.start, self.end)
        line = 1000.0 * MSS / self.wire  # Mbit/s of payload at 1 Gbit/s
        per = [v / line for v in g.values()]
        return {"fraction": sum(per) / len(per) if per else float("nan"),
                "worst": min(per) if per else float("nan"), "connections": len(per)}


def _label(n: int) -> str:
    return f"LIA, {n} subflow" + ("s" if n > 1 else "")


def run(ctx: Context) -> Reproduction:
    seeds = ctx.seeds(full=5, quick=2)
    quick = {"topology.k": 4, "run.duration": "2 s"} if ctx.quick else {}
    start, end = (0.5, 2.0) if ctx.quick else (1.0, 10.0)
    k = 4 if ctx.quick else 8
    tcp = Variant(TCP, {**quick, "traffic[0].transport": "tcp", "traffic[0].subflows": 1, "traffic[0].cc": "reno"})
    lia = [Variant(_label(n), {**quick, "traffic[0].subflows": n}) for n in SUBFLOWS]
    path = scenario_path(SCENARIO)
    rows = run_variants(path, [tcp], seeds, Fraction(start, end, TCP_WIRE), ctx.workers, ctx.ledger, "TCP, one random path")
    rows += run_variants(path, lia, seeds, Fraction(start, end, MPTCP_WIRE), ctx.workers, ctx.ledger,
                         "MPTCP LIA, 1-8 subflows")
    frac = {v.label: values(rows, v.label, lambda r: r["fraction"]) for v in [tcp, *lia]}
    worst = {v.label: values(rows, v.label, lambda r: r["worst"]) for v in [tcp, *lia]}
    f = lambda n: frac[_label(n)]  # noqa: E731 - a short local view

    ok1, t1 = less(frac[TCP], f(8), TCP, _label(8), unit="of optimal")
    ok2, t2 = less(f(1), f(8), _label(1), _label(8), unit="of optimal")
    means = [sum(f(n)) / len(f(n)) for n in SUBFLOWS]
    mono = all(a <= b for a, b in zip(means, means[1:]))
    m8, mt = means[-1], sum(frac[TCP]) / len(frac[TCP])
    claims = [
        Claim("C1", "MPTCP (LIA, 8 subflows) gets more of the bisection than single-path TCP on random paths",
              "Sec. 4: about 90 % against about half", t1, ok1),
        Claim("C2", "Throughput rises with the number of subflows (1 < 8, and the means in order 1 <= 2 <= 4 <= 8)",
              "Sec. 4: more subflows, closer to optimal; about 8 needed on a FatTree",
              f"{t2}; means " + ", ".join(f"{n}: {m:.3f}" for n, m in zip(SUBFLOWS, means)), ok2 and mono),
        Claim("C3", "With 8 subflows MPTCP gets close to optimal (at least 85 %)",
              "Sec. 4: about 90 % of optimal", ci_text(f(8), 3), m8 >= 0.85,
              "the mean over seeds against 0.85"),
        Claim("C4", "Single-path TCP with random paths leaves much of the network unused (at most 65 % of optimal)",
              "Sec. 4: about half of optimal", ci_text(frac[TCP], 3), mt <= 0.65,
              "the mean over seeds against 0.65"),
    ]
    n = len(seeds)
    table = Table(f"Fraction of optimal throughput, k = {k} FatTree permutation, goodput over [{start:g} s, {end:g} s] "
                  "(mean ± 95 % CI over seeds)",
                  ["transport", "fraction of optimal", "worst connection (mean over seeds)"],
                  [[v, ci_text(frac[v], 3), f"{sum(worst[v]) / len(worst[v]):.3f}"] for v in [TCP, *map(_label, SUBFLOWS)]],
                  note=f"{n} seeds per row; each seed draws its own permutation and paths. htsim's figures for the "
                       "same experiment: docs/performance/htsim-dc.md.")
    fig = bar("Fraction of optimal throughput against subflows", [TCP, *(str(s) for s in SUBFLOWS)],
              {"fraction of optimal": [frac[TCP], *(f(s) for s in SUBFLOWS)]}, "fraction of optimal",
              xlabel="TCP, or MPTCP subflows")
    return Reproduction(
        paper="dc-mptcp",
        title="Raiciu et al., Improving Datacenter Performance and Robustness with Multipath TCP (SIGCOMM 2011)",
        seed_file="(not a seed: issue 16)",
        summary=(f"A random permutation on a k = {k} FatTree of 1 Gbit/s links, {n} seeds: single-path TCP (Reno) on "
                 "one random equal-cost path, and MPTCP LIA with 1, 2, 4 and 8 subflows on distinct random paths. "
                 "A claim A < B holds when the 95 % CI of the difference of the means (Welch) lies below 0."),
        claims=claims, tables=[table], figures=[fig],
        notes=("The paper's figures are quoted from its text (it is not among the seed files). The switch queues "
               "(8 packets), link rates and delays follow htsim's SIGCOMM 2011 main; the transport is the Linux 4.x "
               "stack of the out_of_tree profile, not htsim's NewReno without SACK, and ACKs cross the network. "
               "Quick runs use a k = 4 FatTree for 2 s and are not the experiment."),
    )
