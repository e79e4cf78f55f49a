"""`mptcplab report RESULTS`: one self-contained HTML page for a saved run, a sweep store
or a reproduction.

    >>> from mptcplab.report import write_report
    >>> write_report("results/run1")                 # -> results/run1/report.html
    >>> write_report("repro/lia-vs-tcp", out="lia.html")

RESULTS is a directory written by `Result.save` (meta.json), a sweep store
(sweep.json, points/), or a reproduction (reproduction.json; the file itself also
works). The page has inline CSS, figures as inline SVG (or base64 PNG), no scripts and
no external URLs; every string from the input is HTML-escaped. Bad input raises
`ScenarioError` naming the path or field (the CLI prints one line and exits 2).
"""
from __future__ import annotations

import base64
import html
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from .errors import ScenarioError
from .reproduce.model import FILE_NAME as REPRODUCTION_FILE
from .reproduce.model import Claim, Reproduction, Table
from .reproduce.model import Figure as FigureSpec
from .stats import fmt_runs, mean_ci

if TYPE_CHECKING:
    from .result import Result

__all__ = ["Run", "Sweep", "open_results", "render_report", "write_report", "REPORT_NAME"]

REPORT_NAME = "report.html"
Source = Union["Run", "Sweep", Reproduction]


# -- what RESULTS holds ---------------------------------------------------------------------
@dataclass
class Run:
    """A saved run (`Result.save`)."""

    result: Result
    directory: Path | None = None

    @property
    def title(self) -> str:
        return f"Run: {self.result.meta.get('scenario_name') or self.result.scenario.name}"

    def meta(self) -> dict[str, Any]:
        meta = dict(sorted(self.result.meta.items()))
        if "created" not in meta and self.directory is not None and (self.directory / "meta.json").is_file():
            meta["saved"] = _utc((self.directory / "meta.json").stat().st_mtime)
        return meta

    def scenarios(self) -> dict[str, str]:
        path = self.directory / "scenario.toml" if self.directory is not None else None
        if path is not None and path.is_file():
            text = path.read_text(encoding="utf-8")  # as saved, comments and all
        else:
            text = self.result.scenario.to_toml()
        return {self.result.scenario.name or "scenario": text}

    def figures(self) -> list[FigureSpec]:
        from .plot import run_figures

        return run_figures(self.result)

    def tables(self) -> list[Table]:
        note = ("One run: its values, without confidence intervals (those need repetitions; a sweep "
                "or a reproduction reports mean ± 95 % CI over runs).")
        return [_frame_table("Flows", self.result.summary, note),
                _frame_table("Subflows", self.result.subflow_summary)]


_DERIVED = {
    "retrans_pct": "retransmitted (% of bytes sent)",
    "srtt_ms": "mean smoothed RTT (ms, weighted by bytes acked)",
    "ooo_max_kb": "largest out-of-order queue (KB)",
}
_LABELS = {"goodput_mbps": "goodput (Mbit/s)", **_DERIVED}
_POINT = re.compile(r"^(?P<hash>[0-9a-f]+)-seed(?P<seed>\d+)-v(?P<version>.+)\.json$")


@dataclass
class Sweep:
    """The finished points of a sweep store (docs/sweeps.md), grouped by parameter values."""

    directory: Path
    name: str
    keys: list[str]                  # parameter paths, in plan order
    versions: list[str]
    records: list[dict[str, Any]]    # one per stored point, sorted by parameters then seed
    mtimes: list[float] = field(default_factory=list)

    @classmethod
    def load(cls, directory: str | Path) -> Sweep:
        root = Path(directory)
        manifest: dict[str, Any] = {}
        if (root / "sweep.json").is_file():
            try:
                manifest = json.loads((root / "sweep.json").read_text(encoding="utf-8"))
            except ValueError as err:
                raise ScenarioError("sweep.json", f"'{root / 'sweep.json'}' is not valid JSON ({err})") from None
        by_key: dict[tuple[str, int], tuple[str, dict[str, Any], float]] = {}
        for p in sorted((root / "points").glob("*.json")) if (root / "points").is_dir() else []:
            m = _POINT.match(p.name)
            if not m:
                continue
            try:
                rec = json.loads(p.read_text(encoding="utf-8"))
            except ValueError as err:
                raise ScenarioError(f"points/{p.name}", f"not valid JSON ({err})") from None
            for k in ("params", "seed", "summary", "subflow_summary"):
                if k not in rec:
                    raise ScenarioError(f"points/{p.name}", f"has no '{k}' (not a sweep point)")
            # The same point stored by several versions (--allow-version-mix): keep one,
            # this version's if present, else the highest.
            key, version = (m["hash"], int(m["seed"])), m["version"]
            old = by_key.get(key)
            if old is None or _prefer(version, old[0]):
                by_key[key] = (version, rec, p.stat().st_mtime)
        if not by_key:
            raise ScenarioError("<results>", f"'{root}' holds no finished sweep points (points/*.json)")
        keys = [k for k in manifest.get("keys") or [] if k != "flow"]
        for _, rec, _ in by_key.values():
            keys += [k for k in rec["params"] if k not in keys]
        order = _plan_order(root / "results.csv", keys)

        def sort_key(e: tuple[str, dict[str, Any], float]) -> tuple[Any, ...]:
            params = e[1]["params"]
            combo = tuple(str(params.get(k)) for k in keys)
            return (order.get(combo, math.inf), [_natural(params.get(k)) for k in keys], int(e[1]["seed"]))

        entries = sorted(by_key.values(), key=sort_key)
        return cls(directory=root, name=str(manifest.get("name") or root.name), keys=keys,
                   versions=sorted({str(e[1].get("version", e[0])) for e in entries}),
                   records=[e[1] for e in entries], mtimes=[e[2] for e in entries])

    @property
    def title(self) -> str:
        return f"Sweep: {self.name}"

    # -- grouping ----------------------------------------------------------------------------
    def combos(self) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for rec in self.records:
            c = self.combo(rec)
            if c not in out:
                out.append(c)
        return out

    def combo(self, rec: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(_hashable(rec["params"].get(k)) for k in self.keys)

    def label(self, combo: Sequence[Any], keys: Sequence[str] | None = None) -> str:
        keys = list(self.keys if keys is None else keys)
        if not keys:
            return "all runs"
        short = {k: _short(k) for k in keys}
        dupes = {s for s in short.values() if list(short.values()).count(s) > 1}
        return ", ".join(f"{k if short[k] in dupes else short[k]}={v}" for k, v in zip(keys, combo))

    def flows(self) -> list[str]:
        out: list[str] = []
        for rec in self.records:
            out += [str(f) for f in rec["summary"].get("flow", []) if str(f) not in out]
        return out

    def metrics(self) -> list[str]:
        cols: list[str] = []
        for rec in self.records:
            for k, v in rec["summary"].items():
                if k not in cols and any(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
                    cols.append(k)
        return cols + list(_DERIVED)

    def values(self, metric: str, combo: tuple[Any, ...] | None, flow: str) -> list[float]:
        """One value per run of `combo` (None: every run) for `flow`; NaNs left out."""
        if metric not in self.metrics():
            raise ScenarioError("--metric", f"'{metric}' is not a sweep metric; known: {', '.join(self.metrics())}")
        out = []
        for rec in self.records:
            if combo is None or self.combo(rec) == combo:
                v = _metric(rec, metric, flow)
                if v is not None and math.isfinite(v):
                    out.append(v)
        return out

    # -- what the report shows ---------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        from .scenario import Scenario

        reps = [len({int(r["seed"]) for r in self.records if self.combo(r) == c}) for c in self.combos()]
        durations = []
        for rec in self.records:
            try:
                d = Scenario.from_dict(json.loads(rec["scenario"])).to_dict().get("run", {}).get("duration")
            except (KeyError, TypeError, ValueError, ScenarioError):
                d = None
            if d is not None and str(d) not in durations:
                durations.append(str(d))
        walls = [float(r["wall_s"]) for r in self.records if isinstance(r.get("wall_s"), (int, float))]
        return {
            "name": self.name,
            "version": ", ".join(self.versions),
            "parameters": ", ".join(self.keys) or "(none)",
            "points": len(self.records),
            "parameter combinations": len(self.combos()),
            "runs per combination": _span(reps),
            "seeds": _seeds(int(r["seed"]) for r in self.records),
            "simulated duration per run": ", ".join(durations) or "?",
            "wall time of the runs (sum)": f"{sum(walls):.2f} s" if walls else "?",
            "first point written": _utc(min(self.mtimes)) if self.mtimes else "?",
            "last point written": _utc(max(self.mtimes)) if self.mtimes else "?",
        }

    def scenarios(self) -> dict[str, str]:
        from .scenario import Scenario

        rec = self.records[0]
        try:
            text = Scenario.from_dict(json.loads(rec["scenario"])).to_toml()
        except (KeyError, TypeError, ValueError, ScenarioError):
            return {}
        return {f"first point ({self.label(self.combo(rec))}, seed {rec['seed']}); the other points differ "
                f"in the parameters and the seed": text}

    def figure(self, kind: str = "bar", metric: str = "goodput_mbps", flow: str | None = None) -> FigureSpec:
        """One figure of the sweep as data: `bar` (mean per parameter value with 10–90 % and
        min/max bars), `cdf` (the runs of each combination) or `scatter` (goodput against
        delay, mean ± 95 % CI per combination)."""
        flows = self.flows()
        if flow is not None and flow not in flows:
            raise ScenarioError("--flow", f"no flow {flow!r}; flows: {', '.join(flows)}")
        label = _LABELS.get(metric, metric)
        if kind == "bar":
            flow = flow or flows[0]
            self.values(metric, None, flow)  # checks the metric name
            if not self.keys:
                return FigureSpec(f"{label} per flow", "bar",
                                  {"categories": flows, "series": [{"label": "runs", "values": [
                                      self.values(metric, None, f) for f in flows]}]}, "flow", label)
            first, rest = self.keys[0], self.keys[1:]
            cats: list[Any] = []
            groups: list[tuple[Any, ...]] = []
            for c in self.combos():
                cats += [c[0]] if c[0] not in cats else []
                groups += [c[1:]] if c[1:] not in groups else []
            series = [{"label": self.label(g, rest) if rest else label,
                       "values": [self.values(metric, (cat, *g), flow) if (cat, *g) in self.combos() else []
                                  for cat in cats]} for g in groups]
            return FigureSpec(f"{label} of {flow}", "bar", {"categories": [str(c) for c in cats], "series": series},
                              first, label)
        if kind == "cdf":
            sel = [flow] if flow else flows
            series = [{"label": self._series_label(c, f, sel), "values": self.values(metric, c, f)}
                      for c in self.combos() for f in sel]
            return FigureSpec(f"CDF of {label} over runs", "cdf", {"series": series}, label, "fraction of runs")
        if kind == "scatter":
            sel = [flow] if flow else flows
            points = []
            for c in self.combos():
                for f in sel:
                    x, y = self.values("srtt_ms", c, f), self.values(metric, c, f)
                    if not x or not y:
                        continue
                    (mx, hx), (my, hy) = mean_ci(x), mean_ci(y)
                    points.append({"label": self._series_label(c, f, sel), "x": mx, "y": my,
                                   "xerr": None if math.isnan(hx) else hx, "yerr": None if math.isnan(hy) else hy})
            return FigureSpec(f"{label} against delay (mean ± 95 % CI over runs)", "scatter", {"points": points},
                              _LABELS["srtt_ms"], label)
        raise ScenarioError("--kind", f"for a sweep: expected bar, cdf or scatter, got {kind!r}")

    def _series_label(self, combo: tuple[Any, ...], flow: str, flows: Sequence[str]) -> str:
        text = self.label(combo)
        return f"{text} · {flow}" if len(flows) > 1 else text

    def figures(self) -> list[FigureSpec]:
        out = [self.figure("bar", flow=f) for f in self.flows()[:4]]
        out.append(self.figure("scatter"))
        if len(self.combos()) * len(self.flows()) <= 12:
            out.append(self.figure("cdf"))
        return out

    def tables(self) -> list[Table]:
        cols = [*(_short(k) for k in self.keys), "flow", "runs", "goodput (Mbit/s)", "retransmitted (%)",
                "mean srtt (ms)", "max out-of-order (KB)"]
        rows = []
        for c in self.combos():
            for f in self.flows():
                good = self.values("goodput_mbps", c, f)
                if not good:
                    continue
                cells = [_ci_text(self.values(m, c, f)) for m in ("goodput_mbps", "retrans_pct", "srtt_ms",
                                                                   "ooo_max_kb")]
                rows.append([*(str(v) for v in c), f, len(good), *cells])
        return [Table("Per parameter combination and flow", cols, rows,
                      "mean ± half-width of the 95 % confidence interval (Student t) over the runs (seeds); "
                      "n = 1 where every run gave the same value (no loss or jitter to vary the seeds)")]


def _ci_text(values: list[float]) -> str:
    return fmt_runs(values) if values else "–"


def _metric(rec: Mapping[str, Any], metric: str, flow: str) -> float | None:
    summary = rec["summary"]
    flows = [str(f) for f in summary.get("flow", [])]
    if flow not in flows:
        return None
    i = flows.index(flow)

    def col(name: str) -> float | None:
        v = (summary.get(name) or [None] * len(flows))[i]
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    if metric == "retrans_pct":
        sent, retrans = col("bytes_sent"), col("bytes_retrans")
        return 100.0 * retrans / sent if sent and retrans is not None else None
    if metric == "ooo_max_kb":
        v = col("ooo_max_bytes")
        return None if v is None else v / 1e3
    if metric == "srtt_ms":
        subs = rec["subflow_summary"]
        pairs = [(s, w) for f, s, w in zip(subs.get("flow", []), subs.get("mean_srtt_ms", []),
                                           subs.get("bytes_acked", [])) if str(f) == flow and s is not None]
        total = sum(w or 0 for _, w in pairs)
        if not pairs:
            return None
        if total <= 0:
            return sum(s for s, _ in pairs) / len(pairs)
        return sum(s * (w or 0) for s, w in pairs) / total  # weighted by bytes acked on each subflow
    return col(metric)


def _plan_order(csv_path: Path, keys: list[str]) -> dict[tuple[str, ...], float]:
    """Parameter combination -> first point index in plan order, from results.csv (the
    points themselves do not record it). Empty without the file: natural order is used."""
    import csv

    order: dict[tuple[str, ...], float] = {}
    try:
        with csv_path.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                combo = tuple(row.get(k, "") for k in keys)
                order.setdefault(combo, float(row.get("point") or math.inf))
    except (OSError, ValueError, csv.Error):
        return {}
    return order


def _prefer(version: str, other: str) -> bool:
    from ._version import model_version

    mine = model_version()  # the store's key: this build's version and model
    if version == mine or other == mine:
        return version == mine
    return _natural(version) > _natural(other)


def _natural(value: Any) -> tuple[Any, ...]:
    """Sort key: numbers by value, '2 MiB' before '10 MiB', then text."""
    if isinstance(value, bool) or value is None:
        return (2, str(value))
    if isinstance(value, (int, float)):
        return (0, float(value), "")
    m = re.match(r"^\s*([-+]?\d+(?:\.\d+)?)\s*(.*)$", str(value))
    if m:
        return (0, float(m[1]), m[2])
    return (1, str(value))


def _hashable(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    return value


def _short(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def _span(values: list[int]) -> str:
    if not values:
        return "0"
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _seeds(seeds: Iterable[int]) -> str:
    """'1–3, 7'"""
    out: list[str] = []
    s = sorted(set(seeds))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        out.append(str(s[i]) if i == j else f"{s[i]}–{s[j]}")
        i = j + 1
    return ", ".join(out)


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _frame_table(title: str, frame: Any, note: str = "") -> Table:
    cols = [str(c) for c in frame.columns]
    rows = [list(r) for r in frame.itertuples(index=False)] if not frame.empty else []
    return Table(title, cols, rows, note)


# -- loading --------------------------------------------------------------------------------
def open_results(results: str | Path | Result | Reproduction | Run | Sweep) -> Source:
    """What RESULTS holds: a `Run`, a `Sweep` or a `Reproduction`."""
    from .result import Result

    if isinstance(results, (Run, Sweep, Reproduction)):
        return results
    if isinstance(results, Result):
        return Run(results)
    if not isinstance(results, (str, os.PathLike)):
        raise ScenarioError("<results>", f"expected a directory, a Result or a Reproduction, got "
                            f"{type(results).__name__}")
    path = Path(results)
    if not path.exists():
        raise ScenarioError("<results>", f"'{path}' does not exist")
    if path.is_file():
        if path.name.endswith(".json"):
            return load_reproduction(path)
        raise ScenarioError("<results>", f"'{path}' is a file; expected a run, sweep or reproduction directory")
    if (path / REPRODUCTION_FILE).is_file():
        return load_reproduction(path / REPRODUCTION_FILE)
    if (path / "meta.json").is_file():
        from .plot import load_result

        return Run(load_result(path), path)
    if (path / "sweep.json").is_file() or (path / "points").is_dir():
        return Sweep.load(path)
    raise ScenarioError("<results>", f"'{path}' holds no saved run (meta.json), sweep store (sweep.json) or "
                        f"reproduction ({REPRODUCTION_FILE})")


_CLAIM_FIELDS = {"id": str, "statement": str, "paper": str, "ours": str, "verdict": bool}


def load_reproduction(path: Path) -> Reproduction:
    """Reproduction.load, with every missing or mistyped field named (``claims[2].verdict``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ScenarioError(REPRODUCTION_FILE, f"'{path}' is not valid JSON ({err})") from None
    if not isinstance(data, dict) or data.get("kind") != "reproduction":
        got = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise ScenarioError("kind", f"{path}: expected \"reproduction\", got {got!r}")
    for k in ("paper", "title", "seed_file", "summary"):
        if not isinstance(data.get(k), str):
            raise ScenarioError(k, f"{path}: expected a string, got {data.get(k)!r}")
    for name, want in (("claims", list), ("tables", list), ("figures", list), ("meta", dict), ("scenarios", dict)):
        if not isinstance(data.get(name, want()), want):
            raise ScenarioError(name, f"{path}: expected a {want.__name__}")
    for i, c in enumerate(data.get("claims", [])):
        if not isinstance(c, dict):
            raise ScenarioError(f"claims[{i}]", "expected a table (dict)")
        for k, t in _CLAIM_FIELDS.items():
            if not isinstance(c.get(k), t):
                raise ScenarioError(f"claims[{i}].{k}", f"expected a {t.__name__}, got {c.get(k)!r}")
        extra = set(c) - {*_CLAIM_FIELDS, "note"}
        if extra:
            raise ScenarioError(f"claims[{i}].{sorted(extra)[0]}", "unknown field")
    for i, t in enumerate(data.get("tables", [])):
        if not isinstance(t, dict) or not isinstance(t.get("columns"), list) or not isinstance(t.get("rows"), list):
            raise ScenarioError(f"tables[{i}]", "expected a table with title, columns (list) and rows (list)")
        for j, row in enumerate(t["rows"]):
            if not isinstance(row, list) or len(row) != len(t["columns"]):
                raise ScenarioError(f"tables[{i}].rows[{j}]", f"expected a list of {len(t['columns'])} cells")
    for i, f in enumerate(data.get("figures", [])):
        if not isinstance(f, dict) or not isinstance(f.get("data"), dict):
            raise ScenarioError(f"figures[{i}]", "expected a table with title, kind and data (a table)")
        if "kind" not in f:
            raise ScenarioError(f"figures[{i}].kind", "missing")
    try:
        return Reproduction.load(path)
    except ScenarioError as err:
        raise ScenarioError(_figure_field(err.field, data), err.message) from None
    except TypeError as err:  # an unknown field in a table or figure
        raise ScenarioError(REPRODUCTION_FILE, f"{path}: {err}") from None


def _figure_field(fld: str, data: Mapping[str, Any]) -> str:
    if fld == "figure.kind":
        from .reproduce.model import FIGURE_KINDS

        for i, f in enumerate(data.get("figures", [])):
            if f.get("kind") not in FIGURE_KINDS:
                return f"figures[{i}].kind"
    return fld


# -- HTML -----------------------------------------------------------------------------------
def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: Any) -> tuple[str, bool]:
    """(text, numeric)"""
    if value is None:
        return "–", False
    if isinstance(value, bool):
        return ("✓" if value else "✗"), False
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, int):
        return str(value), True
    if isinstance(value, float):
        if math.isnan(value):
            return "–", True
        return (f"{value:.6g}" if abs(value) < 1e6 else f"{value:.0f}"), True
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False), False
    return str(value), False


def _table_html(t: Table, cls: str = "data") -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in t.columns)
    body = []
    for row in t.rows:
        cells = []
        for v in row:
            text, numeric = _cell(v)
            cells.append(f'<td class="num">{_e(text)}</td>' if numeric else f"<td>{_e(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note">{_e(t.note)}</p>' if t.note else ""
    return (f'<div class="wide"><table class="{cls}"><caption>{_e(t.title)}</caption><thead><tr>{head}</tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table></div>{note}')


def _meta_html(meta: Mapping[str, Any]) -> str:
    rows = []
    for k, v in meta.items():
        text, _ = _cell(v)
        rows.append(f"<tr><th scope=\"row\">{_e(k)}</th><td>{_e(text)}</td></tr>")
    return f'<table class="meta"><tbody>{"".join(rows)}</tbody></table>'


def _claims_html(claims: Sequence[Claim], passed: int) -> str:
    rows = []
    for c in claims:
        cls = "pass" if c.verdict else "fail"
        rows.append(
            f'<tr class="claim {cls}" data-claim="{_e(c.id)}"><td>{_e(c.id)}</td><td>{_e(c.statement)}</td>'
            f'<td>{_e(c.paper)}</td><td>{_e(c.ours)}</td>'
            f'<td class="mark" title="{"holds" if c.verdict else "does not hold"}">{_e(c.mark)}</td>'
            f"<td>{_e(c.note)}</td></tr>")
    return (f'<p class="passcount"><span class="passed">{passed}</span> of <span class="total">{len(claims)}</span> '
            f'claims hold.</p><table class="claims"><thead><tr><th>#</th><th>claim</th><th>paper</th>'
            f'<th>mptcplab (95 % CI)</th><th>holds</th><th>note</th></tr></thead><tbody>{"".join(rows)}</tbody>'
            "</table>")


_SVG_DROP = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->|<metadata>.*?</metadata>|<style.*?</style>", re.S)


def _inline_svg(text: str, prefix: str, label: str) -> str:
    """A matplotlib SVG made fit for inlining: no prolog, comments, metadata or global
    <style>; ids prefixed so that several figures on one page never share one."""
    text = _SVG_DROP.sub("", text).strip()
    text = re.sub(r'\s(?:xmlns|xmlns:xlink)="[^"]*"', "", text)
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}\1"', text)
    text = text.replace("url(#", f"url(#{prefix}").replace('href="#', f'href="#{prefix}')
    return text.replace("<svg ", f'<svg role="img" aria-label="{_e(label)}" ', 1)


def _figure_html(spec: FigureSpec, n: int, fmt: str, fld: str) -> str:
    from . import plot

    fig = plot.draw(spec, field=fld)
    label = spec.title or f"figure {n}"
    if fmt == "png":
        data = base64.b64encode(plot.png(fig)).decode("ascii")
        w, h = (round(x * plot.STYLE["savefig.dpi"]) for x in fig.get_size_inches())
        body = f'<img src="data:image/png;base64,{data}" width="{w}" height="{h}" alt="{_e(label)}">'
    else:
        body = _inline_svg(plot.svg(fig), f"f{n}-", label)
    sentences = [spec.title, spec.note]
    if spec.kind == "bar":
        sentences.append("Bars: mean over runs; thick lines: 10th to 90th percentile; whiskers: min to max.")
    caption = " ".join(_sentence(t) for t in sentences if t and t.strip())
    return (f'<figure class="plot" id="figure-{n}" data-kind="{_e(spec.kind)}">{body}<figcaption>'
            f'<span class="fignum">Figure {n}.</span> {_e(caption)}</figcaption></figure>')


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?", ")")) else text + "."


def _markdown(text: str) -> str:
    """A small, safe subset of Markdown (headings, lists, paragraphs, `code`, **bold**):
    everything is escaped first."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.splitlines()
        if all(re.match(r"^\s*[-*] ", ln) or ln.startswith("  ") for ln in lines) and re.match(r"^\s*[-*] ", lines[0]):
            items, cur = [], ""
            for ln in lines:
                if re.match(r"^\s*[-*] ", ln):
                    if cur:
                        items.append(cur)
                    cur = re.sub(r"^\s*[-*] ", "", ln)
                else:
                    cur += " " + ln.strip()
            items.append(cur)
            out.append("<ul>" + "".join(f"<li>{_inline_md(i)}</li>" for i in items) + "</ul>")
        elif m := re.match(r"^(#{1,4})\s+(.*)$", lines[0]):
            out.append(f"<h4>{_inline_md(m[2])}</h4>" + (f"<p>{_inline_md(' '.join(lines[1:]))}</p>"
                                                      if lines[1:] else ""))
        else:
            out.append(f"<p>{_inline_md(' '.join(ln.strip() for ln in lines))}</p>")
    return "".join(out)


def _inline_md(text: str) -> str:
    text = _e(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


_CSS = """
:root{color-scheme:light}
body{margin:0;background:#fff;color:#1d1d1f;font:15px/1.5 "DejaVu Sans",system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:1100px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:1.6em;margin:.2em 0 .1em}
h2{font-size:1.2em;margin:2em 0 .6em;padding-bottom:.2em;border-bottom:1px solid #d8dde3}
h4{margin:1em 0 .3em}
.sub{color:#555;margin:0 0 1em}
table{border-collapse:collapse;margin:.4em 0 .4em;font-size:.9em}
caption{text-align:left;font-weight:bold;padding:.3em 0}
th,td{border:1px solid #d0d6dd;padding:4px 8px;text-align:left;vertical-align:top}
thead th,table.meta th{background:#f1f4f8}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.mark{text-align:center;font-weight:bold;font-size:1.15em}
tr.pass td.mark{color:#1a7f37;background:#eaf7ee}
tr.fail td.mark{color:#c62828;background:#fdecec}
.passcount{font-size:1.1em;font-weight:bold}
.note{color:#555;font-size:.88em;margin:.2em 0 1.4em}
figure.plot{margin:1.2em 0 2em}
figure.plot svg,figure.plot img{display:block;width:100%;max-width:880px;height:auto}
div.wide{overflow-x:auto;max-width:100%}
table.data{font-size:.85em}
figure.plot svg *{stroke-linejoin:round;stroke-linecap:butt}
figcaption{font-size:.9em;color:#444;margin-top:.3em}
.fignum{font-weight:bold;color:#1d1d1f}
pre{background:#f6f8fa;border:1px solid #e1e4e8;padding:10px 12px;overflow:auto;font-size:.82em;line-height:1.4}
code{font-family:"DejaVu Sans Mono",ui-monospace,monospace}
details summary{cursor:pointer;margin:.4em 0}
footer{margin-top:3em;color:#777;font-size:.85em}
"""


def render_report(results: str | Path | Result | Reproduction | Run | Sweep, *, figure_format: str = "svg") -> str:
    """The report as HTML text (see `write_report`)."""
    from ._version import __version__

    if figure_format not in ("svg", "png"):
        raise ScenarioError("figure_format", f"expected 'svg' or 'png', got {figure_format!r}")
    src = open_results(results)
    sections: list[tuple[str, str, str]] = []  # (id, heading, html)
    if isinstance(src, Reproduction):
        title = f"Reproduction: {src.title}"
        sub = f"<code>mptcplab reproduce {_e(src.paper)}</code> · seed file {_e(src.seed_file)}"
        intro = _markdown(src.summary) if src.summary else ""
        sections.append(("claims", "Claims", _claims_html(src.claims, src.passed)))
        figures, tables, meta, scenarios = src.figures, src.tables, dict(src.meta), dict(src.scenarios)
        notes = _markdown(src.notes) if src.notes else ""
    else:
        title, intro, notes = src.title, "", ""
        m = src.meta()
        if isinstance(src, Run):
            sub = (f"mptcplab {_e(m.get('version', '?'))} · seed {_e(m.get('seed', '?'))} · "
                   f"{_e(_cell(m.get('duration_s', '?'))[0])} s simulated")
        else:
            sub = (f"mptcplab {_e(m['version'])} · {_e(m['points'])} runs · "
                   f"{_e(m['parameter combinations'])} parameter combinations")
        figures, tables, meta, scenarios = src.figures(), src.tables(), m, src.scenarios()
    if figures:
        sections.append(("figures", "Figures", "".join(
            _figure_html(f, i + 1, figure_format, f"figures[{i}]") for i, f in enumerate(figures))))
    if tables:
        sections.append(("tables", "Tables", "".join(_table_html(t) for t in tables)))
    if notes:
        sections.append(("notes", "Notes", notes))
    sections.append(("meta", "Metadata", _meta_html(meta)))
    if scenarios:
        blocks = "".join(
            f"<details{' open' if len(scenarios) == 1 else ''}><summary>{_e(name)}</summary>"
            f'<pre class="toml"><code>{_e(text)}</code></pre></details>' for name, text in scenarios.items())
        sections.append(("scenarios", "Scenario" if len(scenarios) == 1 else "Scenarios", blocks))
    body = "".join(f'<section id="{sid}"><h2>{_e(head)}</h2>{content}</section>' for sid, head, content in sections)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="mptcplab {_e(__version__)}">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n"
        f'<body><main><header><h1>{_e(title)}</h1><p class="sub">{sub}</p>{intro}</header>\n'
        f"{body}\n<footer>Written by mptcplab {_e(__version__)}.</footer></main></body></html>\n"
    )


def write_report(results: str | Path | Result | Reproduction | Run | Sweep, out: str | Path | None = None, *,
                 figure_format: str = "svg") -> Path:
    """Write the HTML report of `results` (a saved run, sweep store or reproduction
    directory, or a Result or Reproduction object) to `out` (default:
    RESULTS/report.html; required for objects) and return its path. `figure_format`:
    ``"svg"`` (inline SVG) or ``"png"`` (base64 PNG)."""
    if out is None:
        if not isinstance(results, (str, os.PathLike)):
            raise ScenarioError("--out", f"give out= to write the report of a {type(results).__name__}")
        base = Path(results)
        out = (base.parent if base.is_file() else base) / REPORT_NAME
    out = Path(out)
    text = render_report(results, figure_format=figure_format)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as err:
        raise ScenarioError("--out", f"cannot write '{out}': {err.strerror or err}") from None
    return out
