"""The seed 000 page (docs/reproductions/seed000.md): Chen et al., "MPCOA", Electronics
10(16):1942, 2021. The whole optimiser (`mptcplab optimize`) on the three simulated site
pairs (scenarios/sites/{unis-hin,srl-hu,uit-haw}.toml), judged by the checks written on
the page before its first full run.

    mptcplab reproduce mpcoa --page [--reps 3] [--workers 2]

Two stages, so every figure on the page has one code path:
* `run`: `optimize_scenario` per pair, resumable (its sweep stores live under
  `optimize/pages/seed000/<pair>`, so a killed page run goes on where it stopped);
* `render`: the page's generated part, an SVG per pair and the pair's report
  (report.json without the per-run rows), from those reports alone. The committed reports
  (`seed000-<pair>-report.json`) render to the committed page (a test checks it, and that
  the earlier runs' reports render to the earlier sections kept below the generated part).
"""
from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

from ...sweep.store import VersionMixError
from ..runner import REPO, scenario_path
from . import Page, PageContext
from .common import splice

PROFILES: tuple[str, ...] = ()  # written under the files' own profile only
BEGIN, END = "<!-- generated:begin (mptcplab reproduce mpcoa --page) -->", "<!-- generated:end -->"
PAIRS = ["unis-hin", "srl-hu", "uit-haw"]
HETEROGENEOUS = {"srl-hu", "unis-hin"}
NAMES = {"srl-hu": "SRL-HU", "unis-hin": "UNIS-HiN", "uit-haw": "UiT-HAW"}
# Table 5 of the seed: OPM, OCC, OBS MiB, OTP Mbit/s, bound MiB, RTT_max s, RTO_max s, % of the bound
TABLE5 = {
    "srl-hu": ("PCDC", "Hybla", 12.36, 74.65, 329, 1.8, 2.0, 3.76),
    "unis-hin": ("PCDC", "Cubic", 9.22, 266.66, 54, 0.020, 1.0, 17.07),
    "uit-haw": ("FullMesh", "Scalable", 0.50, 0.81, 1.22, 1.8, 2.0, 40.98),
}
# R² of the seed's own fits (Table 4; one per pair, as printed)
SEED_R2 = {"srl-hu": "0.80", "unis-hin": "0.94", "uit-haw": "0.95"}
COLOURS = {"Cubic": "#1f77b4", "OLIA": "#ff7f0e", "Hybla": "#2ca02c", "Reno": "#d62728", "Scalable": "#9467bd",
           "Vegas": "#8c564b"}
WORK = Path("optimize") / "pages" / "seed000"  # the optimiser's resumable stores, per pair


def default_path(profile: str | None) -> str:
    return "docs/reproductions/seed000.md"


def page(ctx: PageContext) -> Page:
    reports = {pair: run(ctx, pair) for pair in PAIRS}
    generated, files = render(reports)
    preamble = "# Seed 000 (MPCOA): measured and reported\n\n"
    return Page(splice(ctx.previous, BEGIN, END, generated, preamble), files=files)


def run(ctx: PageContext, pair: str) -> dict[str, Any]:
    """The optimiser on one site pair with the page's options (the seed's grid 0.5..30 MiB
    step 0.5, `reps` repetitions, every other option its default); the report without its
    per-run rows (their mean, sd and count per (PM, CC, bs) stay)."""
    from ...mpcoa import optimize_scenario

    class Told:  # the optimiser's sweeps (Ω, then the grid) told to the page's progress hook
        def __init__(self, total: int, done: int) -> None:
            self.total = total
            self.update(done)

        def update(self, done: int, force: bool = False) -> None:
            if ctx.ledger.progress is not None:
                ctx.ledger.progress(f"optimize {NAMES[pair]}", done, self.total)

        def close(self) -> None:
            pass

    def optimize() -> Any:
        return optimize_scenario(scenario_path(f"sites/{pair}.toml"), out=WORK / pair, reps=ctx.seeds or 3,
                                 workers=ctx.workers, progress=Told)

    try:
        rep = optimize()
    except VersionMixError:  # the page's own store holds runs of another build of the model
        shutil.rmtree(WORK / pair)
        rep = optimize()
    t = rep.timings
    ctx.ledger.runs += int(t.get("points_run", 0)) + int(t.get("points_stored", 0))
    ctx.ledger.wall_s += float(t.get("total_s", 0.0))
    return compact(rep.to_dict())


def compact(report: dict[str, Any]) -> dict[str, Any]:
    """report.json without the per-run rows."""
    return {k: v for k, v in report.items() if k != "points"}


def report_text(report: dict[str, Any]) -> str:
    return json.dumps(report, ensure_ascii=False, separators=(",", ":")) + "\n"


# ------------------------------------------------------------------ rendering
def render(reports: dict[str, dict[str, Any]], suffix: str = "") -> tuple[str, dict[str, str]]:
    """The generated part of the page (summary, checks, a section per pair) and the files
    beside it (`seed000-<pair><suffix>.svg` and `-report.json`), from compact reports."""
    files, sections, verdicts = {}, [], []
    for pair, rep in reports.items():
        text, checks = section(rep, pair, suffix)
        sections.append(text)
        verdicts.append((pair, checks))
        files[f"seed000-{pair}{suffix}.svg"] = svg(rep)
        files[f"seed000-{pair}{suffix}-report.json"] = report_text(rep)
    out = ["## Current run", "",
           f"`mptcplab reproduce mpcoa --page`: `mptcplab optimize scenarios/sites/<pair>.toml` for each pair with "
           f"every default above; the run data (report.json without the per-run rows) are in "
           f"`seed000-<pair>{suffix}-report.json`, the figures in `seed000-<pair>{suffix}.svg`.", "",
           summary(reports), "", "### Checks", "", checks_table(verdicts), "", "## Current run: details", "",
           "\n".join(sections)]
    return "\n".join(out) + "\n", files


def ok(flag: bool) -> str:
    return "✓" if flag else "✗"


def fmt_p(p: float | None) -> str:
    return "-" if p is None else (f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}")


def summary(reports: dict[str, dict[str, Any]]) -> str:
    lines = ["| pair | | OPM | OCC | OBS MiB | OTP Mbit/s | classic bound MiB | OBS % of bound | R² FullMesh / PCDC |",
             "|---|---|---|---|---|---|---|---|---|"]
    for pair, rep in reports.items():
        o, c = rep["outputs"], rep["classic_bound"]
        r2 = " / ".join(f"{rep['fits'][pm]['r_squared']:.3f}" for pm in ("FullMesh", "PCDC") if pm in rep["fits"])
        s5 = TABLE5[pair]
        lines.append(f"| {NAMES[pair]} | mptcplab | {o['OPM']} | {o['OCC']} | {o['OBS_mib']:.2f} | "
                     f"{o['OTP_mbit_s']:.2f} | {c['mib']:.2f} | {c['obs_pct']:.2f} | {r2} |")
        lines.append(f"| | seed | {s5[0]} | {s5[1]} | {s5[2]:.2f} | {s5[3]:.2f} | {s5[4]:g} | {s5[7]:.2f} | {SEED_R2[pair]} |")
    return "\n".join(lines)


def checks_table(verdicts: list[tuple[str, dict[str, tuple[bool | None, str]]]]) -> str:
    lines = ["| pair | check | verdict | figures |", "|---|---|---|---|"]
    for pair, checks in verdicts:
        for k, (flag, txt) in checks.items():
            lines.append(f"| {pair} | {k} | {'(reported)' if flag is None else ok(flag)} | {txt} |")
    return "\n".join(lines)


def section(rep: dict[str, Any], pair: str, suffix: str = "") -> tuple[str, dict[str, tuple[bool | None, str]]]:
    """One pair's tables (Ω and SP*, fits, curves, outputs against Table 5) and its checks."""
    seed_t3 = tomllib.loads((REPO / "data" / "mpcoa" / f"{pair}.toml").read_text(encoding="utf-8"))
    o, c, t = rep["outputs"], rep["classic_bound"], rep["timings"]
    opts = rep["options"]
    runs = sum(m["n"] for m in rep["measured"])
    lines = [f"### {NAMES.get(pair, pair)}", ""]
    lines.append(f"`mptcplab optimize scenarios/sites/{pair}.toml --reps {opts['reps']}` — {runs} grid "
                 f"runs, seeds {opts['seeds'][0]}..{opts['seeds'][-1]}; wall time **{t['total_s'] / 60:.1f} min** "
                 f"(Ω {t['omega_s']:.0f} s, grid {t['grid_s']:.0f} s, fit {t['fit_s']:.1f} s) on {t['cpu_count']} "
                 f"cores, load average at start {t['loadavg_start']}, at end {t['loadavg_end']} "
                 f"(1/5/15 min; other engineers' jobs included); mptcplab {rep['version']}"
                 + (f" (model {rep['model']})" if rep.get("model") else "")
                 + (f"; {t['points_stored']} of the runs were reused from the store of an earlier call, so the "
                    f"wall time is not the whole run's" if t.get("points_stored") else "") + ".")
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
    lines.append("| | OPM | OCC | OBS MiB | OTP Mbit/s | classic bound MiB | RTT_max s | RTO_max s | ΣBW Mbit/s | "
                 "OBS % of bound |")
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
    return "\n".join(lines), checks(rep, pair)


def checks(rep: dict[str, Any], pair: str) -> dict[str, tuple[bool | None, str]]:
    """The checks fixed on the page before the first run (its "Set-up and criteria")."""
    o, c = rep["outputs"], rep["classic_bound"]
    top = rep["options"]["grid"][-1]
    meas = {(m["pm"], m["cc"]): m for m in rep["measured"] if m["bs"] == top}
    best = {pm: max(cv["tp_max"] for cv in rep["curves"] if cv["pm"] == pm) for pm in rep["fits"]}
    out: dict[str, tuple[bool | None, str]] = {}
    if pair in HETEROGENEOUS and {"PCDC", "FullMesh"} <= set(best):
        out["1"] = (best["PCDC"] >= best["FullMesh"],
                    f"max tp_max PCDC {best['PCDC']:.3f} vs FullMesh {best['FullMesh']:.3f} Mbit/s")
        n = sum(1 for cc in rep["omega"] if meas[("PCDC", cc)]["tp_mean"] >= meas[("FullMesh", cc)]["tp_mean"])
        out["1-extra"] = (None, f"PCDC ≥ FullMesh measured at {top:g} MiB for {n} of {len(rep['omega'])} CCs")
    out["2"] = (c["obs_pct"] <= 50.0, f"OBS {o['OBS_mib']:.2f} MiB = {c['obs_pct']:.2f} % of {c['mib']:.2f} MiB")
    if pair == "uit-haw":
        out["3"] = (o["OPM"] == "FullMesh", f"OPM = {o['OPM']}")
    for pm, f in rep["fits"].items():
        out[f"4-{pm}"] = (f["accepted"], f"{pm}: R² {f['r_squared']:.3f}, max p {fmt_p(f['max_p_value'])}")
    return out


def svg(rep: dict[str, Any]) -> str:
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

        def X(bs: float, x0: float = x0) -> float:
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
        for cc, cv in f["curves"].items():
            col = COLOURS.get(cc, "black")
            for m in (m for m in meas if m["pm"] == pm and m["cc"] == cc):
                sd = m["tp_std"] or 0
                out.append(f'<line x1="{X(m["bs"]):.1f}" y1="{Y(m["tp_mean"] - sd):.1f}" x2="{X(m["bs"]):.1f}" '
                           f'y2="{Y(m["tp_mean"] + sd):.1f}" stroke="{col}" stroke-opacity="0.4"/>')
                out.append(f'<circle cx="{X(m["bs"]):.1f}" cy="{Y(m["tp_mean"]):.1f}" r="1.6" fill="{col}"/>')
            xs = [xmin + (xmax - xmin) * i / 100 for i in range(101)]
            line = " ".join(f"{X(x):.1f},{Y(min(max(cv['a'] + cv['b'] * x + cv['d'] * x * x, ymin), ymax)):.1f}"
                            for x in xs)
            out.append(f'<polyline points="{line}" fill="none" stroke="{col}" stroke-width="1.5"/>')
        for i, cc in enumerate(f["curves"]):  # legend: one row under the title
            out.append(f'<text x="{x0 + L + 62 * i}" y="34" fill="{COLOURS.get(cc, "black")}">{cc}</text>')
    out.append(f'<text x="5" y="{H + 22}" font-size="10">dots: mean over {rep["options"]["reps"]} seed(s), '
               f'bars ± 1 sd; lines: OLS fit {rep["fits"][pms[0]]["formula"]}'
               f'{"; the y axis does not start at 0" if ymin > 0 else ""}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
