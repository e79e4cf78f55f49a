"""MPCOA step 6: the regression of throughput on buffer size and congestion control, per
path manager (seed 000 Eq. 8, fitted forms Eqs. 13–15).

The seed writes, per PM, with CC_k ∈ {0, 1} the dummy of the k-th CC::

    tp = a + b·bs + Σ c_k·CC_k + d·bs² + Σ e_k·bs·CC_k + Σ f_k·CC_k²        (Eqs. 13–15)

For a 0/1 dummy CC_k² = CC_k, so c_k and f_k are not identifiable apart (the seed prints
f_k = c_k: only their sum c_k + f_k enters a curve), and with all six dummies plus an
intercept the design is collinear too (Σ CC_k = 1). The identifiable form, fitted here
with statsmodels OLS, is the same model in treatment coding (the first CC of the seed's
order present is the reference)::

    tp ~ bs + I(bs**2) + C(cc) + bs:C(cc)

Per CC it reduces to a quadratic with one bs² coefficient per PM, as in Table 4:
``a' = a + c_k, b' = b + e_k, d' = d`` (c_k = e_k = 0 for the reference CC).

statsmodels is imported here, lazily (``pip install 'mptcplab[optimize]'``).
"""
from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

from ..errors import ScenarioError
from .select import CONGESTION_CONTROLS, Curve

__all__ = ["FORMULA", "Fit", "fit_pm", "require_statsmodels"]

FORMULA = "tp ~ bs + I(bs**2) + C(cc) + bs:C(cc)"
R2_ACCEPT = 0.90  # step 6: accept when R² ≥ 0.90 and every p-value ≤ 0.05
P_ACCEPT = 0.05
_LEVEL = re.compile(r"\[T\.(.+?)\]")


def require_statsmodels() -> Any:
    """The statsmodels formula API, or a `ScenarioError` saying how to install it."""
    try:
        import statsmodels.formula.api as smf
    except ImportError:
        raise ScenarioError("statsmodels", "optimize SCENARIO needs statsmodels: "
                            "pip install 'mptcplab[optimize]'") from None
    return smf


@dataclass
class Fit:
    """One PM's regression: coefficients and p-values by term (``Intercept``, ``bs``,
    ``bs²``, ``CC[<cc>]``, ``bs·CC[<cc>]``), R², and the per-CC curves."""

    pm: str
    reference: str
    nobs: int
    r_squared: float
    r_squared_adj: float
    params: dict[str, float]
    pvalues: dict[str, float | None]
    curves: dict[str, Curve]
    formula: str = FORMULA
    notes: list[str] = field(default_factory=list)

    @property
    def max_p_value(self) -> float | None:
        ps = [p for p in self.pvalues.values() if p is not None]
        return max(ps) if ps else None

    @property
    def accepted(self) -> bool:
        p = self.max_p_value
        return self.r_squared >= R2_ACCEPT and p is not None and p <= P_ACCEPT

    def to_dict(self) -> dict[str, Any]:
        return {
            "pm": self.pm, "formula": self.formula, "reference_cc": self.reference, "nobs": self.nobs,
            "r_squared": self.r_squared, "r_squared_adj": self.r_squared_adj,
            "params": self.params, "pvalues": self.pvalues, "max_p_value": self.max_p_value,
            "accepted": self.accepted,
            "curves": {cc: {"a": c.a, "b": c.b, "d": c.d} for cc, c in self.curves.items()},
            "notes": self.notes,
        }


def _term(name: str) -> tuple[str, str | None]:
    """A statsmodels parameter name -> (kind, cc level): kind ∈ a, b, d, c, e."""
    if name == "Intercept":
        return "a", None
    if name == "bs":
        return "b", None
    if name.replace(" ", "").startswith("I(bs**2"):
        return "d", None
    m = _LEVEL.search(name)
    if m is None:
        raise ValueError(f"unexpected regression term {name!r}")
    return ("e" if ":" in name else "c"), m.group(1)


def _finite(x: Any) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def fit_pm(frame: Any, pm: str) -> Fit:
    """OLS of `FORMULA` on `frame` (columns ``bs`` MiB, ``cc`` a name of
    `CONGESTION_CONTROLS`, ``tp`` Mbit/s; one row per run) for path manager `pm`."""
    import numpy as np
    import pandas as pd

    smf = require_statsmodels()
    if frame.empty:
        raise ScenarioError("<points>", f"no throughput points for {pm}")
    levels = [cc for cc in CONGESTION_CONTROLS if cc in set(frame["cc"])]
    unknown = sorted(set(frame["cc"]) - set(levels))
    if unknown:
        raise ScenarioError("<points>", f"unknown congestion control(s) {unknown} in the points")
    if frame["bs"].nunique() < 3:
        raise ScenarioError("--grid", "the quadratic fit needs at least 3 buffer sizes")
    data = pd.DataFrame({"tp": frame["tp"].astype(float), "bs": frame["bs"].astype(float),
                         "cc": pd.Categorical(frame["cc"], categories=levels)})
    formula = FORMULA if len(levels) > 1 else "tp ~ bs + I(bs**2)"
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # a noise-free fit (a deterministic scenario) has zero residuals: its p-values
        # come out 0 or NaN with a RuntimeWarning, reported as they are
        warnings.simplefilter("ignore")
        model = smf.ols(formula, data).fit()
    exog = np.asarray(model.model.exog)
    if np.linalg.matrix_rank(exog) < exog.shape[1]:
        raise ScenarioError("--grid", f"{pm}: the regression is rank-deficient (too few distinct points per CC)")

    base = {"a": 0.0, "b": 0.0, "d": 0.0}
    by_cc: dict[str, dict[str, float]] = {cc: {"c": 0.0, "e": 0.0} for cc in levels}
    params: dict[str, float] = {}
    pvalues: dict[str, float | None] = {}
    for name, value in model.params.items():
        kind, level = _term(str(name))
        label = {"a": "Intercept", "b": "bs", "d": "bs²"}.get(kind) or \
            (f"CC[{level}]" if kind == "c" else f"bs·CC[{level}]")
        params[label] = float(value)
        pvalues[label] = _finite(model.pvalues[name])
        if level is None:
            base[kind] = float(value)
        else:
            by_cc[level][kind] = float(value)
    curves = {cc: Curve(pm, cc, base["a"] + v["c"], base["b"] + v["e"], base["d"]) for cc, v in by_cc.items()}
    fit = Fit(pm, levels[0], int(model.nobs), float(model.rsquared), float(model.rsquared_adj),
              params, pvalues, curves, formula)
    if fit.r_squared < R2_ACCEPT:
        fit.notes.append(f"{pm}: R² = {fit.r_squared:.3f} < {R2_ACCEPT:.2f}: below the seed's acceptance "
                         "threshold (step 6); used anyway as the best available model, as the seed does")
    weak = [k for k, p in pvalues.items() if p is None or p > P_ACCEPT]
    if weak:
        fit.notes.append(f"{pm}: p-value > {P_ACCEPT} (or undefined) for {', '.join(weak)}")
    return fit
