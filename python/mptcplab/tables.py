"""Plain-text tables and number formats, shared by the CLI and every page the package
writes (validate, selftest, optimize, bench, pcap summaries). Nothing here prints."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def num(value: Any) -> float | None:
    """A finite float, or None (missing, not a number, inf or NaN)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def fmt_bytes(value: Any) -> str:
    """Decimal units, as in scenario files (KB = 1000 B)."""
    x = num(value)
    if x is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.2f} {unit}"
    return f"{x:.0f} B"


def fmt_float(value: Any, digits: int = 2) -> str:
    x = num(value)
    return "-" if x is None else f"{x:.{digits}f}"


def fmt_pct(part: Any, whole: Any) -> str:
    p, w = num(part), num(whole)
    if p is None or not w:
        return "-"
    return f"{100.0 * p / w:.2f} %"


def fmt_count(value: Any) -> str:
    x = num(value)
    if x is None:
        return "-"
    if abs(x) >= 1e6:
        return f"{x / 1e6:.2f} M"
    if abs(x) >= 1e4:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    """Plain text table; columns in `right` are right-aligned (numbers)."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(cells)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), *(line(r) for r in rows)])
