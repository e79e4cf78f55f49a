"""Verdicts and figure data shared by the papers' modules.

A claim "A < B" holds (✓) when the 95 % CI of mean(A) − mean(B) (Welch) lies entirely
below 0; "same order, not significant" is still a ✗ and says so.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..stats import diff_ci, fmt_runs, mean_ci, same_in_all_runs
from .model import Figure


def less(a: Sequence[float], b: Sequence[float], a_label: str, b_label: str, unit: str = "Mbit/s",
         digits: int = 2) -> tuple[bool, str]:
    """(holds, figures) for the claim mean(a) < mean(b)."""
    d, h = diff_ci(a, b)
    ok = not math.isnan(h) and d + h < 0
    tail = "" if ok else (" (same order, not significant)" if d < 0 else " (wrong order)")
    # Both sides one run each (every seed replayed it): a difference without an interval.
    spread = " (n = 1)" if same_in_all_runs(a) and same_in_all_runs(b) else f" ± {h:.{digits}f}"
    text = (f"{a_label} {fmt_runs(a, digits)} vs {b_label} {fmt_runs(b, digits)} {unit}; "
            f"difference {d:+.{digits}f}{spread}{tail}")
    return ok, text


def ci_text(values: Sequence[float], digits: int = 2, unit: str = "") -> str:
    """Mean ± 95 % CI over runs, or 'n = 1' when every run gave the same value."""
    return fmt_runs(values, digits, unit)


def ratio_ci(num: tuple[float, float], den: tuple[float, float]) -> tuple[float, float]:
    """Ratio of two independent means and an approximate 95 % half-width (delta method)."""
    (m1, h1), (m0, h0) = num, den
    if m0 == 0:
        return float("nan"), float("nan")
    r = m1 / m0
    if m1 == 0:
        return r, float("nan")
    return r, abs(r) * math.sqrt((h1 / m1) ** 2 + (h0 / m0) ** 2)


def ratio_text(num: Sequence[float], den: Sequence[float], digits: int = 2) -> str:
    """mean(num) / mean(den) with its delta-method 95 % half-width, or 'n = 1' when both
    sides are one run replayed by every seed."""
    r, h = ratio_ci(mean_ci(num), mean_ci(den))
    if same_in_all_runs(num) and same_in_all_runs(den):
        return f"{r:.{digits}f} (n = 1)"
    return f"{r:.{digits}f} ± {h:.{digits}f}"


def bar(title: str, categories: list[str], series: dict[str, list[list[float]]], ylabel: str,
        xlabel: str = "", note: str = "") -> Figure:
    """A grouped bar figure: per series, per category, the values of every run."""
    return Figure(title=title, kind="bar", xlabel=xlabel, ylabel=ylabel, note=note,
                  data={"categories": categories,
                        "series": [{"label": k, "values": v} for k, v in series.items()]})


def rounded(rows: list[list[Any]], digits: int = 3) -> list[list[Any]]:
    return [[round(x, digits) if isinstance(x, float) else x for x in r] for r in rows]
