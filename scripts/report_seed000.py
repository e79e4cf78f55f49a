"""Tables, checks and SVG figures for docs/reproductions/seed000.md from the report.json
files of `mptcplab optimize scenarios/sites/<pair>.toml --out optimize/<pair>`.

    .venv/bin/python scripts/report_seed000.py [--suffix S] optimize/unis-hin optimize/srl-hu \
        optimize/uit-haw > /tmp/seed000-results.md

Writes docs/reproductions/seed000-<pair>.svg (measured mean ± sd and the fitted curves,
per PM) and seed000-<pair>-report.json (report.json without the per-run rows), with
"-S" after <pair> when --suffix S is given (so a rerun can sit beside earlier ones), and
prints Markdown on stdout. The checks are those fixed in seed000.md before
the runs.
"""
from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "reproductions"
HETEROGENEOUS = {"srl-hu", "unis-hin"}
NAMES = {"srl-hu": "SRL-HU", "unis-hin": "UNIS-HiN", "uit-haw": "UiT-HAW"}
# Table 5 of the seed: OPM, OCC, OBS MiB, OTP Mbit/s, bound MiB, RTT_max s, RTO_max s, % of the bound
TABLE5 = {
    "srl-hu": ("PCDC", "Hybla", 12.36, 74.65, 329, 1.8, 2.0, 3.76),
    "unis-hin": ("PCDC", "Cubic", 9.22, 266.66, 54, 0.020, 1.0, 17.07),
    "uit-haw": ("FullMesh", "Scalable", 0.50, 0.81, 1.22, 1.8, 2.0, 40.98),
}
COLOURS = {"Cubic": "#1f77b4", "OLIA": "#ff7f0e", "Hybla": "#2ca02c", "Reno": "#d62728", "Scalable": "#9467bd",
           "Vegas": "#8c564b"}


def ok(flag: bool) -> str:
    return "✓" if flag else "✗"


def fmt_p(p: float | None) -> str:
    return "-" if p is None else (f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}")


def svg(rep: dict, pair: str) -> str:
    """Two panels (FullMesh, PCDC): measured mean ± sd per CC over bs, and the fitted curves."""
    meas = rep["measured"]
    pms = [pm for pm in ("FullMesh", "PCDC") if pm in rep["fits"]]
    hi = max(m["tp_mean"] + (m["tp_std"] or 0) for m in meas)
    lo = min(m["tp_mean"] - (m["tp_std"] or 0) for m in meas)
    ymin = max(0.0, lo - 0.08 * (hi - lo))  # the y axis starts near the data, not at 0
    ymax = hi + 0.08 * (hi - lo)
    xmin, xmax = rep["options"]["grid"][0], rep["options"]["grid"][-1]
    W, H, L, R, T, B, GAP = 460, 310, 55, 10, 44, 40, 20
    width = len(pms) * W + (len(pms) - 1) * GAP
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{H + 30}" font-family="sans-serif" '
           f'font-size="11">', f'<rect width="{width}" height="{H + 30}" fill="white"/>']
    for k, pm in enumerate(pms):
        x0 = k * (W + GAP)

        def X(bs: float) -> float:
            return x0 + L + (bs - xmin) / (xmax - xmin) * (W - L - R)

        def Y(tp: float) -> float:
            return T + (1 - (tp - ymin) / (ymax - ymin)) * (H - T - B)

        f = rep["fits"][pm]
        out.append(f'<text x="{x0 + L}" y="18" font-size="12">{rep["scenario"]["name"]} · {pm} · R² = '
                   f'{f["r_squared"]:.3f}</text>')
        out.append(f'<line x1="{X(xmin)}" y1="{Y(ymin)}" x2="{X(xmax)}" y2="{Y(ymin)}" stroke="black"/>')
        out.append(f'<line x1="{X(xmin)}" y1="{Y(ymin)}" x2="{X(xmin)}" y2="{Y(ymax)}" stroke="black"/>')
        for i in range(6):
            tp = ymin + (ymax - ymin) * i / 5
            out.append(f'<text x="{X(xmin) - 4}" y="{Y(tp) + 4}" text-anchor="end">{tp:.3g}</text>')
            out.append(f'<line x1="{X(xmin)}" y1="{Y(tp)}" x2="{X(xmax)}" y2="{Y(tp)}" stroke="#eee"/>')
        for bs in (0.5, 5, 10, 15, 20, 25, 30):
            if xmin <= bs <= xmax:
                out.append(f'<text x="{X(bs)}" y="{Y(ymin) + 14}" text-anchor="middle">{bs:g}</text>')
        out.append(f'<text x="{x0 + W / 2}" y="{H - 5}" text-anchor="middle">buffer size bs (MiB)</text>')
        out.append(f'<text x="{x0 + 12}" y="{T + (H - T - B) / 2}" transform="rotate(-90 {x0 + 12} '
                   f'{T + (H - T - B) / 2})" text-anchor="middle">goodput (Mbit/s)</text>')
        for cc, c in f["curves"].items():
            col = COLOURS.get(cc, "black")
            pts = [m for m in meas if m["pm"] == pm and m["cc"] == cc]
            for m in pts:
                sd = m["tp_std"] or 0
                out.append(f'<line x1="{X(m["bs"]):.1f}" y1="{Y(m["tp_mean"] - sd):.1f}" x2="{X(m["bs"]):.1f}" '
                           f'y2="{Y(m["tp_mean"] + sd):.1f}" stroke="{col}" stroke-opacity="0.4"/>')
                out.append(f'<circle cx="{X(m["bs"]):.1f}" cy="{Y(m["tp_mean"]):.1f}" r="1.6" fill="{col}"/>')
            xs = [xmin + (xmax - xmin) * i / 100 for i in range(101)]
            line = " ".join(f"{X(x):.1f},{Y(min(max(c['a'] + c['b'] * x + c['d'] * x * x, ymin), ymax)):.1f}"
                            for x in xs)
            out.append(f'<polyline points="{line}" fill="none" stroke="{col}" stroke-width="1.5"/>')
        for i, cc in enumerate(f["curves"]):  # legend: one row under the title
            out.append(f'<text x="{x0 + L + 62 * i}" y="34" fill="{COLOURS.get(cc, "black")}">{cc}</text>')
    out.append(f'<text x="5" y="{H + 22}" font-size="10">dots: mean over {rep["options"]["reps"]} seed(s), '
               f'bars ± 1 sd; lines: OLS fit {rep["fits"][pms[0]]["formula"]}'
               f'{"; the y axis does not start at 0" if ymin > 0 else ""}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def section(where: Path, suffix: str = "") -> tuple[str, dict]:
    rep = json.loads((where / "report.json").read_text(encoding="utf-8"))
    pair = rep["scenario"]["name"]
    seed_t3 = tomllib.loads((REPO / "data" / "mpcoa" / f"{pair}.toml").read_text(encoding="utf-8"))
    o, c, t = rep["outputs"], rep["classic_bound"], rep["timings"]
    opts = rep["options"]
    lines = [f"### {NAMES.get(pair, pair)}", ""]
    lines.append(f"`mptcplab optimize scenarios/sites/{pair}.toml --reps {opts['reps']}` — {len(rep['points'])} grid "
                 f"runs, seeds {opts['seeds'][0]}..{opts['seeds'][-1]}; wall time **{t['total_s'] / 60:.1f} min** "
                 f"(Ω {t['omega_s']:.0f} s, grid {t['grid_s']:.0f} s, fit {t['fit_s']:.1f} s) on {t['cpu_count']} "
                 f"cores, load average at start {t['loadavg_start']}, at end {t['loadavg_end']} "
                 f"(1/5/15 min; other engineers' jobs included); mptcplab {rep['version']}.")
    lines.append("")
    if rep["omega"]:
        ccs = list(rep["omega"])
        lines.append("Ω per subflow and CC (Eq. 5; Table 2's layout), SP* (Eq. 6) against the seed's Table 3:")
        lines.append("")
        lines.append("| subflow | " + " | ".join(ccs) + " |")
        lines.append("|---|" + "---|" * len(ccs))
        for s in rep["subflows"]:
            lines.append(f"| {s['label']} | " + " | ".join(f"{rep['omega'][cc][s['label']]:+.3f}" for cc in ccs) + " |")
        lines.append("| **SP\\*** | " + " | ".join("{" + ", ".join(rep["sp_star"][cc]) + "}" for cc in ccs) + " |")
        lines.append("| seed's Table 3 | " + " | ".join("{" + ", ".join(seed_t3["subsets"][cc]) + "}" for cc in ccs)
                     + " |")
        lines.append("")
    lines.append("Fits (OLS per PM, `tp ~ bs + I(bs**2) + C(cc) + bs:C(cc)`, reference Cubic):")
    lines.append("")
    terms = list(next(iter(rep["fits"].values()))["params"])
    lines.append("| PM | n | R² | max p | step 6 | " + " | ".join(terms) + " |")
    lines.append("|---|---|---|---|---|" + "---|" * len(terms))
    for pm, f in rep["fits"].items():
        cells = [f"{f['params'][k]:.4g} (p {fmt_p(f['pvalues'][k])})" for k in terms]
        lines.append(f"| {pm} | {f['nobs']} | {f['r_squared']:.3f} | {fmt_p(f['max_p_value'])} | "
                     f"{ok(f['accepted'])} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Fitted curves (Table 4's layout) and the measured mean at the largest buffer (Figs. 6–8):")
    lines.append("")
    top = opts["grid"][-1]
    meas = {(m["pm"], m["cc"]): m for m in rep["measured"] if m["bs"] == top}
    lines.append(f"| PM | CC | curve | tp_max | at MiB | obs MiB | otp | measured at {top:g} MiB |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for cv in rep["curves"]:
        m = meas.get((cv["pm"], cv["cc"]))
        mtxt = f"{m['tp_mean']:.3f} ± {m['tp_std'] or 0:.3f}" if m else "-"
        lines.append(f"| {cv['pm']} | {cv['cc']} | {cv['a']:.4g} {cv['b']:+.4g}·bs {cv['d']:+.4g}·bs² | "
                     f"{cv['tp_max']:.3f} | {cv['bs_at_max']:.2f} | {cv['obs']:.2f} | {cv['otp']:.3f} | {mtxt} |")
    lines.append("")
    s5 = TABLE5[pair]
    lines.append("| | OPM | OCC | OBS MiB | OTP Mbit/s | classic bound MiB | RTT_max s | RTO_max s | ΣBW Mbit/s | OBS % of bound |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    lines.append(f"| mptcplab | {o['OPM']} | {o['OCC']} | {o['OBS_mib']:.2f} | {o['OTP_mbit_s']:.3f} | {c['mib']:.2f} | "
                 f"{c['rtt_max_s']:.3f} | {c['rto_max_s']:.3f} | {c['sum_bw_mbit_s']:g} | {c['obs_pct']:.2f} |")
    lines.append(f"| seed (Table 5) | {s5[0]} | {s5[1]} | {s5[2]:.2f} | {s5[3]:.2f} | {s5[4]:g} | {s5[5]:.3f} | "
                 f"{s5[6]:.3f} | - | {s5[7]:.2f} |")
    lines.append("")
    lines.append(f"RTT_max from: {c['rtt_max_from']}. Notes: " + ("; ".join(o["notes"] + rep["notes"]) or "none") + ".")
    lines.append("")
    lines.append(f"![{pair}: goodput over bs per CC, measured and fitted](seed000-{pair}{suffix}.svg)")
    lines.append("")
    (DOCS / f"seed000-{pair}{suffix}.svg").write_text(svg(rep, pair), encoding="utf-8")
    # report.json without the per-run rows (kept: mean, sd and n per PM, CC and bs)
    compact = {k: v for k, v in rep.items() if k != "points"}
    (DOCS / f"seed000-{pair}{suffix}-report.json").write_text(json.dumps(compact, ensure_ascii=False, separators=(",", ":"))
                                                     + "\n", encoding="utf-8")

    best = {pm: max(cv["tp_max"] for cv in rep["curves"] if cv["pm"] == pm) for pm in rep["fits"]}
    checks = {}
    if pair in HETEROGENEOUS and {"PCDC", "FullMesh"} <= set(best):
        checks["1"] = (best["PCDC"] >= best["FullMesh"],
                       f"max tp_max PCDC {best['PCDC']:.3f} vs FullMesh {best['FullMesh']:.3f} Mbit/s")
        n = sum(1 for cc in rep["omega"] if meas[("PCDC", cc)]["tp_mean"] >= meas[("FullMesh", cc)]["tp_mean"])
        checks["1-extra"] = (None, f"PCDC ≥ FullMesh measured at {top:g} MiB for {n} of {len(rep['omega'])} CCs")
    checks["2"] = (c["obs_pct"] <= 50.0, f"OBS {o['OBS_mib']:.2f} MiB = {c['obs_pct']:.2f} % of {c['mib']:.2f} MiB")
    if pair == "uit-haw":
        checks["3"] = (o["OPM"] == "FullMesh", f"OPM = {o['OPM']}")
    for pm, f in rep["fits"].items():
        checks[f"4-{pm}"] = (f["accepted"], f"{pm}: R² {f['r_squared']:.3f}, max p {fmt_p(f['max_p_value'])}")
    return "\n".join(lines), {"pair": pair, "checks": checks}


def main(args: list[str]) -> None:
    suffix = ""
    if "--suffix" in args:
        i = args.index("--suffix")
        suffix = "-" + args[i + 1]
        args = args[:i] + args[i + 2:]
    parts, verdicts = [], []
    for d in args:
        text, v = section(Path(d), suffix)
        parts.append(text)
        verdicts.append(v)
    print("## Checks\n")
    print("| pair | check | verdict | figures |")
    print("|---|---|---|---|")
    for v in verdicts:
        for k, (flag, txt) in v["checks"].items():
            print(f"| {v['pair']} | {k} | {'(reported)' if flag is None else ok(flag)} | {txt} |")
    print()
    print("## Results\n")
    print("\n".join(parts))


if __name__ == "__main__":
    main(sys.argv[1:])
