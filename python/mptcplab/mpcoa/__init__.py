"""MPCOA, the multi-parameter comprehensive optimized algorithm of seed 000 (Chen, Raza,
Zhou, Dreibholz, Tan, Electronics 10(16):1942, 2021; docs/mpcoa.md).

* `select`: the selection on fitted curves (Eqs. 9–12): `optimize(load_coefficients(f))`,
  what ``mptcplab optimize --from-coefficients FILE`` runs.
* `fit`: the regression per path manager (Eqs. 8, 13–15) with statsmodels OLS.
* `pipeline`: everything from a scenario, ``mptcplab optimize SCENARIO``:
  `optimize_scenario(scenario, out, reps=3) -> OptimizeReport`.

statsmodels is imported only when a fit runs (``pip install 'mptcplab[optimize]'``).
"""
from __future__ import annotations

from .fit import FORMULA, Fit, fit_pm
from .pipeline import CC_NAMES, DEFAULT_GRID, PM_NAMES, OptimizeReport, optimize_scenario, parse_grid
from .select import (
    BS_MAX,
    BS_MIN,
    CONGESTION_CONTROLS,
    PATH_MANAGERS,
    ClassicBound,
    Coefficients,
    Curve,
    CurveOptimum,
    Optimum,
    curve_optimum,
    load_coefficients,
    optimize,
    parse_coefficients,
)

__all__ = [
    "BS_MAX", "BS_MIN", "CC_NAMES", "CONGESTION_CONTROLS", "DEFAULT_GRID", "FORMULA", "PATH_MANAGERS", "PM_NAMES",
    "ClassicBound", "Coefficients", "Curve", "CurveOptimum", "Fit", "OptimizeReport", "Optimum", "curve_optimum",
    "fit_pm", "load_coefficients", "optimize", "optimize_scenario", "parse_coefficients", "parse_grid",
]
