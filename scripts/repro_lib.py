"""Small helpers for the measured-and-reported reproductions: run a committed scenario
under named variants and seeds, measure goodput over a window, and report means with
95 % confidence intervals (Student t). Issue 5 will grow this into `mptcplab reproduce`.

    from repro_lib import Variant, run_variants, table
    rows = run_variants("scenarios/reproduce/x.toml", [Variant("lia", {"connections[0].cc": "lia"})],
                        seeds=range(1, 6), window=(10, 70))
    print(table(rows))
"""
from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

import mptcplab  # noqa: E402
from mptcplab import Scenario  # noqa: E402

from mptcplab.stats import mean_ci  # noqa: E402


@dataclass
class Variant:
    """A named change of the base scenario: field path -> value (Scenario.with_)."""

    label: str
    changes: dict[str, Any] = field(default_factory=dict)


def _apply(base: Scenario, v: Variant) -> Scenario:
    sc = base
    for path, value in v.changes.items():
        sc = sc.with_(path, value)
    return sc


def window_goodput(result: Any, start_s: float, end_s: float) -> dict[str, float]:
    """Goodput (Mbit/s) of every connection and flow over [start_s, end_s]."""
    ts = result.timeseries.connections
    out = {}
    for flow, g in ts.groupby("flow", sort=False):
        g = g.sort_values("time_s")
        before = g[g.time_s <= start_s + 1e-9]
        upto = g[g.time_s <= end_s + 1e-9]
        b0 = int(before.bytes_delivered.iloc[-1]) if len(before) else 0
        b1 = int(upto.bytes_delivered.iloc[-1])
        out[str(flow)] = (b1 - b0) * 8 / (end_s - start_s) / 1e6
    return out


def window_subflow_goodput(result: Any, start_s: float, end_s: float) -> dict[tuple[str, int], float]:
    """Subflow-level goodput (bytes acknowledged, Mbit/s) of every subflow over the window."""
    ts = result.timeseries.subflows
    out = {}
    for (flow, sub), g in ts.groupby(["flow", "subflow"], sort=False):
        g = g.sort_values("time_s")
        before = g[g.time_s <= start_s + 1e-9]
        upto = g[g.time_s <= end_s + 1e-9]
        b0 = int(before.bytes_acked.iloc[-1]) if len(before) else 0
        b1 = int(upto.bytes_acked.iloc[-1])
        out[(str(flow), int(sub))] = (b1 - b0) * 8 / (end_s - start_s) / 1e6
    return out


def _one(args: tuple[str, str, int, float, float]) -> dict[str, Any]:
    label, scenario_json, seed, start, end = args
    sc = Scenario.from_dict(json.loads(scenario_json))
    res = mptcplab.simulate(sc, seed=seed)
    return {
        "variant": label,
        "seed": seed,
        "goodput": window_goodput(res, start, end),
        "subflows": {f"{k[0]}#{k[1]}": v for k, v in window_subflow_goodput(res, start, end).items()},
    }


def run_variants(scenario: str | Path, variants: list[Variant], seeds: Iterable[int], window: tuple[float, float],
                 workers: int | None = None) -> list[dict[str, Any]]:
    """Run every (variant, seed) of the scenario file; one row per run."""
    base = Scenario.from_toml(Path(scenario))
    jobs = [(v.label, _apply(base, v).to_json(), s, window[0], window[1]) for v in variants for s in seeds]
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    with ProcessPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(_one, jobs))


def per_variant(rows: list[dict[str, Any]], key) -> dict[str, tuple[float, float]]:
    """Mean and CI over seeds of `key(row)` for each variant, in first-seen order."""
    out: dict[str, list[float]] = {}
    for r in rows:
        out.setdefault(r["variant"], []).append(key(r))
    return {k: mean_ci(v) for k, v in out.items()}


def fmt(m_ci: tuple[float, float], digits: int = 2) -> str:
    m, ci = m_ci
    return f"{m:.{digits}f} ± {ci:.{digits}f}"


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown table: variant × flow goodput (mean ± 95 % CI over seeds)."""
    flows: list[str] = []
    for r in rows:
        for f in r["goodput"]:
            if f not in flows:
                flows.append(f)
    head = "| variant | " + " | ".join(f"{f} (Mbit/s)" for f in flows) + " |\n|---|" + "---|" * len(flows) + "\n"
    body = ""
    for v in dict.fromkeys(r["variant"] for r in rows):
        cells = [fmt(per_variant([r for r in rows if r["variant"] == v], lambda r, f=f: r["goodput"].get(f, 0.0))[v]) for f in flows]
        body += f"| {v} | " + " | ".join(cells) + " |\n"
    return head + body


def ok(b: bool) -> str:
    """A verdict mark."""
    return "✓" if b else "✗"


def claims_md(claims) -> str:
    """Markdown table of (id, verdict, what, measured) claims."""
    out = "| claim | verdict | what | measured |\n|---|---|---|---|\n"
    for cid, v, what, fig in claims:
        out += f"| {cid} | {ok(v)} | {what} | {fig} |\n"
    return out


def write_generated(doc: Path, begin: str, end: str, generated: str, preamble: str = "") -> None:
    """Replace the text between the `begin` and `end` markers of `doc` (keeping the
    hand-written rest); a new page starts with `preamble`."""
    doc.parent.mkdir(parents=True, exist_ok=True)
    old = doc.read_text() if doc.exists() else ""
    if begin in old and end in old:
        pre, rest = old.split(begin, 1)
        _, post = rest.split(end, 1)
    else:
        pre, post = preamble, "\n"
    doc.write_text(pre + begin + "\n" + generated + end + post)
