"""`reproduce streaming`: seed 002 (Łuczak, Ignaciuk, Morawski, "Experimental Assessment of
MPTCP Congestion Control Algorithms for Streaming Services in Open Internet";
../shared/seeds/002_c4afc38db6f18665.txt), Table 1: a 4.5 Mbit/s stream over two
LTE-like paths under LIA, OLIA, BALIA and wVegas, 10 s runs.

Every assumption (rates, delays, loss, queues, the stream, the reading of the seed's
"path-level Reno/BBR") is in scenarios/reproduce/seed002-streaming-lte.toml; the metrics
are defined in docs/streaming.md. The claims are judged on means over runs, as the
scenario header states; whether the 95 % CIs separate the winner from the runner-up is
reported beside each verdict. Full: 30 runs per CC (the seed's R = 30); quick: 5.
"""
from __future__ import annotations

from typing import Any

from ..stats import mean_ci
from . import Context
from .checks import bar, ci_text
from .model import Claim, Figure, Reproduction, Table
from .runner import Variant, run_variants, scenario_path, values

SCENARIO = "reproduce/seed002-streaming-lte.toml"
CCS = ["lia", "olia", "balia", "wvegas"]
NAMES = {"lia": "LIA", "olia": "OLIA", "balia": "BALIA", "wvegas": "wVegas"}
P1, P2 = "path1", "path2"

# Seed 002 Table 1: (Reno column, BBR column) per MPTCP CC.
PAPER = {
    "upsilon_av": {"lia": (139, 115), "olia": (122, 118), "balia": (109, 112), "wvegas": (266, 120)},
    "upsilon_max": {"lia": (726, 565), "olia": (556, 526), "balia": (491, 533), "wvegas": (860, 556)},
    "zeta_av": {"lia": (61, 39), "olia": (43, 39), "balia": (35, 35), "wvegas": (193, 44)},
    "zeta_max": {"lia": (83, 425), "olia": (423, 390), "balia": (353, 370), "wvegas": (726, 426)},
    "tau1_av": {"lia": (71, 69), "olia": (71, 71), "balia": (67, 68), "wvegas": (66, 69)},
    "tau1_max": {"lia": (202, 223), "olia": (225, 209), "balia": (226, 219), "wvegas": (206, 223)},
    "tau2_av": {"lia": (64, 63), "olia": (65, 65), "balia": (62, 64), "wvegas": (60, 63)},
    "tau2_max": {"lia": (221, 229), "olia": (242, 217), "balia": (229, 219), "wvegas": (218, 218)},
    "d1": {"lia": (9.6, 10.2), "olia": (10.3, 8.2), "balia": (7.9, 7.8), "wvegas": (9.6, 12.3)},
    "d2": {"lia": (8.0, 12.2), "olia": (12.7, 13.0), "balia": (10.5, 11.4), "wvegas": (8.1, 9.2)},
    "thr_av": {"lia": (4.09, 4.57), "olia": (4.47, 4.72), "balia": (5.49, 5.47), "wvegas": (3.69, 3.75)},
    "thr_max": {"lia": (10.74, 12.03), "olia": (11.01, 11.69), "balia": (13.66, 13.52), "wvegas": (8.76, 9.59)},
}
# (row, metric key of Result.metrics, paper key, digits)
ROWS = [
    ("protocol delay υ_av [ms], measured", "delay_av_ms", "upsilon_av", 0),
    ("protocol delay υ_max [ms], measured", "delay_max_ms", "upsilon_max", 0),
    ("HoL degree ζ_av [ms], measured", "zeta_measured_av_ms", "zeta_av", 1),
    ("HoL degree ζ_max [ms], measured", "zeta_measured_max_ms", "zeta_max", 0),
    ("υ_av [ms], model (Eq. 1–2)", "upsilon_av_ms", None, 0),
    ("ζ_av [ms], model", "zeta_av_ms", None, 1),
    ("SRTT τ_1,av [ms]", f"srtt_av_ms[{P1}]", "tau1_av", 0),
    ("SRTT τ_2,av [ms]", f"srtt_av_ms[{P2}]", "tau2_av", 0),
    ("drop rate d_1 [seg/s]", f"drop_rate_segs_per_s[{P1}]", "d1", 1),
    ("drop rate d_2 [seg/s]", f"drop_rate_segs_per_s[{P2}]", "d2", 1),
    ("drop fraction path 1 [%]", f"drop_fraction[{P1}]", None, "pct"),
    ("throughput av [Mbit/s]", "throughput_mean_mbps", "thr_av", 2),
    ("throughput max [Mbit/s]", "throughput_max_mbps", "thr_max", 2),
    ("frame delivery lateness av [ms]", "frame_delivery_av_ms", None, 0),
    ("utilisation", "utilisation", None, 3),
]


class Metrics:
    """Every per-run scalar of `Result.metrics()` (docs/streaming.md), plus the
    per-segment measured delays (for the CDF)."""

    def __call__(self, result: Any) -> dict[str, Any]:
        m = {k: float(v) for k, v in result.metrics().items()}
        d = result.delay
        return {"m": m, "delays": [float(x) for x in d.delay_ms.to_numpy()[::10]] if len(d) else []}


def run(ctx: Context) -> Reproduction:
    seeds = ctx.seeds(full=30, quick=5)
    rows = run_variants(scenario_path(SCENARIO), [Variant(cc, {"connections[0].cc": cc}) for cc in CCS], seeds,
                        Metrics(), ctx.workers, ctx.ledger, "Table 1")

    def per(key: str) -> dict[str, list[float]]:
        return {cc: values(rows, cc, lambda r: r["m"].get(key, float("nan"))) for cc in CCS}

    def stat(key: str) -> dict[str, tuple[float, float]]:
        return {cc: mean_ci(v) for cc, v in per(key).items()}

    def ranked(s: dict[str, tuple[float, float]], reverse: bool = False) -> list[str]:
        return sorted(CCS, key=lambda c: s[c][0], reverse=reverse)

    def apart(s: dict[str, tuple[float, float]], a: str, b: str) -> str:
        (ma, ha), (mb, hb) = s[a], s[b]
        return "yes" if (ma + ha < mb - hb or mb + hb < ma - ha) else "no"

    def fig(s: dict[str, tuple[float, float]], digits: int = 1) -> str:
        return ", ".join(f"{NAMES[c]} {s[c][0]:.{digits}f} ± {s[c][1]:.{digits}f}" for c in CCS)

    ups, zet, thr = stat("delay_av_ms"), stat("zeta_measured_av_ms"), stat("throughput_mean_mbps")
    ups_m, zet_m = stat("upsilon_av_ms"), stat("zeta_av_ms")
    r_u, r_z, r_t = ranked(ups), ranked(zet), ranked(thr, True)
    claims = [
        Claim("C1", "BALIA has the lowest protocol delay υ_av and the lowest HoL-blocking degree ζ_av",
              "Table 1: BALIA υ_av 109/112 ms, ζ_av 35/35 ms (Reno/BBR columns), the lowest of the four",
              f"υ_av ms: {fig(ups)} (lowest {NAMES[r_u[0]]}, CI apart from the next: {apart(ups, r_u[0], r_u[1])}); "
              f"ζ_av ms: {fig(zet)} (lowest {NAMES[r_z[0]]}, CI apart: {apart(zet, r_z[0], r_z[1])})",
              r_u[0] == "balia" and r_z[0] == "balia",
              f"measured protocol delay; the model (Eq. 1–2) ranks υ_av lowest {NAMES[ranked(ups_m)[0]]} and "
              f"ζ_av lowest {NAMES[ranked(zet_m)[0]]}"),
        Claim("C2", "wVegas is the worst: highest υ_av, highest ζ_av and lowest mean throughput",
              "Table 1: wVegas υ_av 266 ms, ζ_av 193 ms, throughput 3.69 Mbit/s (Reno column)",
              f"highest υ_av {NAMES[ranked(ups, True)[0]]}, highest ζ_av {NAMES[ranked(zet, True)[0]]}, lowest "
              f"throughput {NAMES[ranked(thr)[0]]} (Mbit/s: {fig(thr, 3)})",
              ranked(ups, True)[0] == "wvegas" and ranked(zet, True)[0] == "wvegas" and ranked(thr)[0] == "wvegas"),
        Claim("C3", "BALIA has the highest mean throughput",
              "Table 1: BALIA 5.49/5.47 Mbit/s, the highest of the four",
              f"highest {NAMES[r_t[0]]} ({ci_text(per('throughput_mean_mbps')[r_t[0]], 3)} Mbit/s), next "
              f"{NAMES[r_t[1]]} ({ci_text(per('throughput_mean_mbps')[r_t[1]], 3)}); CI apart: "
              f"{apart(thr, r_t[0], r_t[1])}", r_t[0] == "balia"),
    ]
    table_rows = []
    for label, key, pkey, digits in ROWS:
        s = per(key)
        if digits == "pct":
            cells = [ci_text([100 * x for x in s[c]], 2) for c in CCS]
        else:
            cells = [ci_text(s[c], digits) for c in CCS]
        paper = " · ".join(f"{PAPER[pkey][c][0]:g}/{PAPER[pkey][c][1]:g}" for c in CCS) if pkey else "—"
        table_rows.append([label, *cells, paper])
    table = Table(f"Seed 002 Table 1 in our runs: mean ± 95 % CI over {len(seeds)} runs of 10 s",
                  ["quantity", *[NAMES[c] for c in CCS], "seed (Reno/BBR): LIA · OLIA · BALIA · wVegas"],
                  table_rows)
    figs = [
        bar("Protocol delay υ_av and HoL-blocking degree ζ_av (measured)", [NAMES[c] for c in CCS],
            {"υ_av (ms)": [per("delay_av_ms")[c] for c in CCS],
             "ζ_av (ms)": [per("zeta_measured_av_ms")[c] for c in CCS]}, "ms"),
        bar("Mean throughput", [NAMES[c] for c in CCS], {"throughput": [per("throughput_mean_mbps")[c] for c in CCS]},
            "Mbit/s"),
        Figure("Measured protocol delay per data segment (every 10th sample, all runs)", "cdf",
               {"series": [{"label": NAMES[c], "values": [x for r in rows if r["variant"] == c for x in r["delays"]]}
                           for c in CCS]}, xlabel="delay from the MPTCP level taking the data to its DATA_ACK (ms)"),
        Figure("Throughput against protocol delay (means over runs)", "scatter",
               {"points": [{"label": NAMES[c], "x": ups[c][0], "y": thr[c][0], "xerr": ups[c][1], "yerr": thr[c][1]}
                           for c in CCS]}, xlabel="υ_av (ms)", ylabel="throughput (Mbit/s)"),
    ]
    for r in rows:
        r.pop("delays", None)
    return Reproduction(
        paper="streaming",
        title="Łuczak, Ignaciuk, Morawski: Experimental Assessment of MPTCP Congestion Control Algorithms for "
              "Streaming Services in Open Internet",
        seed_file="002_c4afc38db6f18665.txt",
        summary=(f"A 4.5 Mbit/s, 30 frame/s stream over two 7 Mbit/s LTE-like paths (RTT 46/40 ms, 1 % loss), "
                 f"LIA / OLIA / BALIA / wVegas, {len(seeds)} runs of 10 s each; the seed's Table 1 metrics."),
        claims=claims, tables=[table], figures=figs,
        notes=("The seed's \"path-level Reno/BBR\" has no meaning in Linux MPTCP (one CC module per connection); "
               "our runs stand for its Reno column and are compared with both. The protocol delay is measured "
               "per data segment from the MPTCP level taking it to its DATA_ACK; the model of Eq. 1–2 (θ_i as read "
               "in docs/streaming.md) is reported beside it. Diagnostics under other loss rates are in "
               "docs/reproductions/seed002.md."),
    )
