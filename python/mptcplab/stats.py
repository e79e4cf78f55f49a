"""Statistics over runs: Student t quantiles and 95 % confidence intervals of a mean
(reference `metrics.md` §6: every metric is computed per run, then averaged over runs
with a 95 % CI from the t-distribution).

Pure Python (no scipy): the t quantile inverts the t CDF, written with the regularised
incomplete beta function (Abramowitz & Stegun 26.7.1 and 26.5.8; the continued fraction
evaluated with the modified Lentz method).

    >>> from mptcplab.stats import mean_ci
    >>> mean_ci([4.1, 4.5, 4.3])        # (mean, half-width of the 95 % CI)
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["t_cdf", "t_quantile", "mean_ci", "over_runs", "t95", "diff_ci", "paired_ci", "spread", "fmt_ci",
           "same_in_all_runs", "fmt_runs"]


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (A&S 26.5.8), modified Lentz."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom (A&S 26.7.1)."""
    if df <= 0 or math.isnan(t) or math.isnan(df):
        return math.nan
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The `p` quantile of Student's t with `df` degrees of freedom, e.g.
    `t_quantile(0.975, 4)` = 2.776 (the two-sided 95 % factor for 5 values)."""
    if not (0.0 < p < 1.0) or not df > 0 or math.isinf(df):
        if math.isinf(df) and 0.0 < p < 1.0:
            return _normal_quantile(p)
        return math.nan
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def _normal_quantile(p: float) -> float:
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if 0.5 * math.erfc(-mid / math.sqrt(2.0)) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> tuple[float, float]:
    """Mean of `values` and the half-width of its two-sided `confidence` interval from
    Student's t with n − 1 degrees of freedom. NaN values are left out; the half-width is
    NaN with fewer than two values (and the mean too with none)."""
    v = [float(x) for x in values]
    v = [x for x in v if not math.isnan(x)]
    n = len(v)
    if n == 0:
        return math.nan, math.nan
    m = math.fsum(v) / n
    if n < 2:
        return m, math.nan
    sd = math.sqrt(math.fsum((x - m) ** 2 for x in v) / (n - 1))
    return m, t_quantile(0.5 + confidence / 2.0, n - 1) * sd / math.sqrt(n)


def same_in_all_runs(values: Iterable[float]) -> bool:
    """True when two or more runs gave exactly the same value. A scenario without random
    loss, start or join jitter (`run.start_jitter`, `run.join_jitter`) replays one run for
    every seed: its "5 seeds, 95 % CI ± 0" is one run printed five times, so n = 1 and
    there is no interval to state."""
    v = [float(x) for x in values]
    v = [x for x in v if not math.isnan(x)]
    return len(v) >= 2 and all(x == v[0] for x in v)


def fmt_runs(values: Sequence[float], digits: int = 2, unit: str = "") -> str:
    """The mean over runs and its 95 % CI ('12.34 ± 0.56 unit'); when every run gave the
    same value, that value with 'n = 1' instead of a CI over copies
    ('12.34 unit (n = 1: the same in all 5 runs)')."""
    if same_in_all_runs(values):
        v = [float(x) for x in values if not math.isnan(float(x))]
        tail = f" {unit}" if unit else ""
        return f"{v[0]:.{digits}f}{tail} (n = 1: the same in all {len(v)} runs)"
    return fmt_ci(mean_ci(values), digits, unit)


def over_runs(runs: Sequence[Any], flow: str | None = None, confidence: float = 0.95) -> pd.DataFrame:
    """Average every per-run metric over runs, with its confidence interval.

    `runs` holds `Result`s (their `.metrics(flow)` is used) or plain metric dicts. Returns
    a DataFrame indexed by metric with columns `mean`, `ci` (half-width), `n` (runs that
    have the metric) and `lo`, `hi`: e.g. seed 002's υ_av = mean over runs of υ_av^r
    (Eq. 5) with its 95 % CI. A metric that is the same in every run (`same_in_all_runs`)
    has n = 1 and no CI (NaN)."""
    import pandas as pd

    per_run: list[Mapping[str, float]] = [r if isinstance(r, Mapping) else r.metrics(flow) for r in runs]
    keys: list[str] = []
    for m in per_run:
        for k in m:
            if k not in keys:
                keys.append(k)
    rows = []
    for k in keys:
        vals = [float(m[k]) for m in per_run if k in m and _is_number(m[k])]
        mean, ci = mean_ci(vals, confidence)
        n = sum(not math.isnan(x) for x in vals)
        if same_in_all_runs(vals):
            n, ci = 1, math.nan
        rows.append({"metric": k, "mean": mean, "ci": ci, "n": n, "lo": mean - ci, "hi": mean + ci})
    return pd.DataFrame(rows, columns=["metric", "mean", "ci", "n", "lo", "hi"]).set_index("metric")


def _is_number(x: Any) -> bool:
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return True


# -- used by reports and reproductions -------------------------------------------------------
def t95(df: int) -> float:
    """t_{0.975, df}: the two-sided 95 % factor."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be ≥ 1, got {df}")
    return t_quantile(0.975, df)


def diff_ci(a: Iterable[float], b: Iterable[float]) -> tuple[float, float]:
    """mean(a) − mean(b) and the half-width of its 95 % CI (Welch–Satterthwaite df)."""
    a, b = [float(x) for x in a], [float(x) for x in b]
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    if len(a) < 2 or len(b) < 2:
        return ma - mb, math.nan
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1) / len(a)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return ma - mb, 0.0
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return ma - mb, t_quantile(0.975, df) * se


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
    v = sorted(float(x) for x in values)
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
