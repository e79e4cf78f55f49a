"""Small statistics used by reports and reproductions: means with 95 % confidence
intervals (Student t), differences of means (Welch), and the spread figures the papers
draw as error bars. Pure Python, so `import mptcplab` stays light.

    >>> mean_ci([1.0, 2.0, 3.0])
    (2.0, 2.484...)
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["t95", "mean_ci", "diff_ci", "paired_ci", "spread", "fmt_ci"]

# Two-sided 95 % Student t quantiles t_{0.975, df} (any statistics table); between listed
# degrees of freedom the next lower one is used, which widens the interval slightly.
_T95 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
    10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
    18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060,
    26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980,
}


def t95(df: int) -> float:
    """t_{0.975, df}; 1.96 beyond 120 degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be ≥ 1, got {df}")
    if df in _T95:
        return _T95[df]
    if df > 120:
        return 1.960
    return _T95[max(k for k in _T95 if k <= df)]


def _floats(values: Iterable[float]) -> list[float]:
    return [float(x) for x in values]


def mean_ci(values: Iterable[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % confidence interval (NaN with one value)."""
    v = _floats(values)
    if not v:
        raise ValueError("mean_ci needs at least one value")
    n = len(v)
    m = sum(v) / n
    if n < 2:
        return m, float("nan")
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    return m, t95(n - 1) * sd / math.sqrt(n)


def diff_ci(a: Iterable[float], b: Iterable[float]) -> tuple[float, float]:
    """mean(a) − mean(b) and the half-width of its 95 % CI (Welch–Satterthwaite df)."""
    a, b = _floats(a), _floats(b)
    if len(a) < 2 or len(b) < 2:
        return sum(a) / len(a) - sum(b) / len(b), float("nan")
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1) / len(a)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return ma - mb, 0.0
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return ma - mb, t95(max(1, int(df))) * se


def paired_ci(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Mean of the paired differences a_k − b_k (same seed) and its 95 % CI half-width."""
    if len(a) != len(b):
        raise ValueError(f"paired_ci needs equal lengths, got {len(a)} and {len(b)}")
    return mean_ci(x - y for x, y in zip(a, b))


def _quantile(sorted_v: list[float], q: float) -> float:
    # Linear interpolation between order statistics (numpy's default method).
    pos = q * (len(sorted_v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (pos - lo)


def spread(values: Iterable[float]) -> dict[str, float]:
    """mean, min, max, p10, p90 and n: the figures the papers' bar charts show."""
    v = sorted(_floats(values))
    if not v:
        raise ValueError("spread needs at least one value")
    return {"mean": sum(v) / len(v), "min": v[0], "max": v[-1],
            "p10": _quantile(v, 0.10), "p90": _quantile(v, 0.90), "n": float(len(v))}


def fmt_ci(m_ci: tuple[float, float], digits: int = 2, unit: str = "") -> str:
    """'12.34 ± 0.56 unit' (no ± part when the CI is undefined)."""
    m, h = m_ci
    tail = f" {unit}" if unit else ""
    if math.isnan(h):
        return f"{m:.{digits}f}{tail}"
    return f"{m:.{digits}f} ± {h:.{digits}f}{tail}"
