"""What the pages share: mean ± CI cells, per-variant tables, per-seed lists and the
verdict of a claim "A < B" (the 95 % CI of the difference of the means, Welch)."""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ...stats import diff_ci, mean_ci
from ..runner import values


def fmt(m_ci: tuple[float, float], digits: int = 2) -> str:
    m, ci = m_ci
    return f"{m:.{digits}f} ± {ci:.{digits}f}"


def variants_of(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["variant"] for r in rows))


def by_variant(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The rows of each variant, variants in first-seen order."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["variant"], []).append(r)
    return by


def paired(a: list[float], b: list[float]) -> tuple[int, float, float]:
    """Seeds where a < b, and mean(a - b) with its 95 % CI half-width (paired t)."""
    d = [x - y for x, y in zip(a, b)]
    m, h = mean_ci(d)
    return sum(x < 0 for x in d), m, h


def less(name: str, a: list[float], b: list[float], a_label: str, b_label: str) -> tuple[bool, str]:
    """Claim a < b: ✓ when the 95 % CI of mean(a) - mean(b) lies below 0."""
    d, h = diff_ci(a, b)
    ok = d + h < 0
    verdict = "✓" if ok else ("✗ (same order, not significant)" if d < 0 else "✗")
    line = (f"**{name}: {verdict}** — {a_label} {fmt(mean_ci(a))} vs {b_label} {fmt(mean_ci(b))} Mbit/s; "
            f"difference {d:+.2f} ± {h:.2f} Mbit/s (95 % CI, Welch)")
    return ok, line


def goodput_table(rows: list[dict[str, Any]], flows: list[tuple[str, str]], subflows: list[tuple[str, str]]) -> str:
    """Variant × (flow goodput, subflow goodput) as mean ± CI, Markdown."""
    cols = flows + subflows
    head = "| variant | " + " | ".join(c[1] for c in cols) + " |\n|---|" + "---:|" * len(cols) + "\n"
    body = ""
    for v in variants_of(rows):
        cells = [fmt(mean_ci(values(rows, v, lambda r, k=k: r["goodput"].get(k, 0.0)))) for k, _ in flows]
        cells += [fmt(mean_ci(values(rows, v, lambda r, k=k: r["subflows"].get(k, 0.0)))) for k, _ in subflows]
        body += f"| {v} | " + " | ".join(cells) + " |\n"
    return head + body


def per_seed(rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], float], fmt_s: str = "{:.2f}") -> str:
    out = ""
    for v in variants_of(rows):
        out += f"| {v} | " + ", ".join(fmt_s.format(x) for x in values(rows, v, key)) + " |\n"
    return "| variant | per seed (Mbit/s) |\n|---|---|\n" + out


def per_variant_subflow(rows: list[dict[str, Any]], key: str) -> dict[str, tuple[float, float]]:
    return {v: mean_ci(values(rows, v, lambda r: r["subflows"].get(key, 0.0))) for v in variants_of(rows)}


def ok(b: bool) -> str:
    """A verdict mark."""
    return "✓" if b else "✗"


def claims_md(claims: list[tuple[str, bool, str, str]]) -> str:
    """Markdown table of (id, verdict, what, measured) claims."""
    out = "| claim | verdict | what | measured |\n|---|---|---|---|\n"
    for cid, v, what, fig in claims:
        out += f"| {cid} | {ok(v)} | {what} | {fig} |\n"
    return out


def pool(ctx: Any, fn: Callable[[Any], Any], jobs: list, workers: int, stage: str) -> list:
    """`fn` over `jobs` on `workers` processes, in job order, each told to the ledger's bar."""
    out = []
    with ProcessPoolExecutor(max_workers=workers) as ex:
        for r in ex.map(fn, jobs):
            out.append(r)
            if ctx.ledger.progress is not None:
                ctx.ledger.progress(stage, len(out), len(jobs))
    return out


GENERATED_BEGIN = "<!-- generated:begin"


def splice(previous: str, begin: str, end: str, generated: str, preamble: str = "") -> str:
    """The page with the text between its generated markers replaced (the hand-written rest
    kept); a page without markers starts with `preamble`. Any `<!-- generated:begin ...`
    line counts as the begin marker, so a page keeps its sections when its generator moves."""
    start = previous.find(GENERATED_BEGIN)
    if start >= 0 and end in previous[start:]:
        pre = previous[:start]
        line_end = previous.index("\n", start)
        post = previous[line_end:].split(end, 1)[1]
    else:
        pre, post = preamble, "\n"
    return pre + begin + "\n" + generated + end + post


def run_window(ctx: Any, path: Any, variants: list, seeds: list[int], window: tuple[float, float],
               workers: int | None, stage: str) -> list[dict[str, Any]]:
    """Every (variant, seed) of a committed scenario file, goodput of each flow and subflow
    over `window`: one row per run with exactly `variant`, `seed`, `goodput`, `subflows`
    (the shape the pages' per-run JSON keeps)."""
    from ..runner import Window, run_variants

    rows = run_variants(path, variants, seeds, Window(*window), workers, ctx.ledger, stage)
    return [{"variant": r["variant"], "seed": r["seed"], "goodput": r["goodput"], "subflows": r["subflows"]}
            for r in rows]
