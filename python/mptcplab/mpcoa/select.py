"""MPCOA selection math on fitted curves (docs/mpcoa.md, reference path-managers.md §5.8).

Per (path manager, congestion control) a fitted quadratic ``tp = a + b·bs + d·bs²``
(throughput in Mbit/s, buffer size bs in MiB over ``BS = [0.5, 30]``, seed 000 Eq. 9;
another range with ``Coefficients.bs_range``). From those:

* ``tp_max`` per curve: the maximum over BS (the vertex ``−b/(2d)`` when inside, else a
  boundary);
* the winner (PM*, CC*): the largest ``tp_max`` (the rule of the seed's worked examples);
* OBS: the smallest bs in BS with ``f(bs) ≥ (1 − δ)·tp_max``, solved on the continuous
  curve, clamped to 0.5; OTP = f(OBS);
* homogeneity: when PCDC wins with a CC whose subset SP* equals SP, PCDC *is* FullMesh,
  so FullMesh (the simpler one) is reported, with its curve for that CC;
* ``literal_eq11=True``: the seed's Eq. 11 as printed, OBS = min over every (PM, CC) of
  obs_{PM,CC} (contradicts the seed's own Table 5; an option, not the default).

Pure Python, no simulator; `load_coefficients` reads the TOML format of data/mpcoa/*.toml
and raises `ScenarioError` naming the offending field.
"""
from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError

__all__ = [
    "BS_MAX", "BS_MIN", "CONGESTION_CONTROLS", "PATH_MANAGERS", "ClassicBound", "Coefficients",
    "Curve", "Optimum", "curve_optimum", "load_coefficients", "optimize", "parse_coefficients",
]

BS_MIN, BS_MAX = 0.5, 30.0  # MiB, the seed's buffer grid {0.5, 1.0, ..., 30.0}
PATH_MANAGERS = ("FullMesh", "PCDC")
CONGESTION_CONTROLS = ("Cubic", "OLIA", "Hybla", "Reno", "Scalable", "Vegas")
MIB_BITS = 8 * 2**20  # bits in one MiB
_EPS = 1e-9


@dataclass(frozen=True)
class Curve:
    """``tp = a + b·bs + d·bs²`` (Mbit/s over MiB) of one (PM, CC)."""

    pm: str
    cc: str
    a: float
    b: float
    d: float

    def __call__(self, bs: float) -> float:
        return self.a + self.b * bs + self.d * bs * bs

    def formula(self) -> str:
        def term(c: float, suffix: str) -> str:
            return f" {'−' if c < 0 else '+'} {abs(c):g}{suffix}"
        text = f"tp = {self.a:g}" + term(self.b, "·bs")
        return text + (term(self.d, "·bs²") if self.d else "")


@dataclass(frozen=True)
class ClassicBound:
    """Eq. 1: B ≥ (3·RTT_max + RTO_max)·ΣBW."""

    rtt_max_s: float
    rto_max_s: float
    sum_bw_mbit_s: float

    @property
    def mib(self) -> float:
        return (3 * self.rtt_max_s + self.rto_max_s) * self.sum_bw_mbit_s * 1e6 / MIB_BITS


@dataclass
class Coefficients:
    label: str
    curves: dict[tuple[str, str], Curve]
    subflows: list[str] | None = None
    subsets: dict[str, list[str]] = field(default_factory=dict)
    r_squared: float | None = None
    max_p_value: float | None = None
    classic: ClassicBound | None = None
    bs_range: tuple[float, float] = (BS_MIN, BS_MAX)  # MiB: where tp_max and obs are sought


@dataclass(frozen=True)
class CurveOptimum:
    curve: Curve
    tp_max: float
    bs_at_max: float
    obs: float
    otp: float


@dataclass
class Optimum:
    """The MPCOA outputs and how they were reached."""

    opm: str
    occ: str
    obs: float
    otp: float
    tp_max: float
    bs_at_max: float
    curve: Curve
    delta: float
    rule: str  # "max-throughput" or "literal-eq11"
    per_curve: list[CurveOptimum]
    notes: list[str]
    classic_mib: float | None = None

    @property
    def obs_pct_of_classic(self) -> float | None:
        return 100.0 * self.obs / self.classic_mib if self.classic_mib else None


# -- loading ---------------------------------------------------------------------------------
def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ScenarioError(where, f"expected a finite number, got {value!r}")
    return float(value)


def _table(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScenarioError(where, f"expected a table, got {type(value).__name__}")
    return value


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ScenarioError(where, "expected a non-empty list of subflow names")
    if len(set(value)) != len(value):
        raise ScenarioError(where, "duplicate subflow name")
    return list(value)


def _unknown(data: Mapping[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
    for key in data:
        if key not in allowed:
            raise ScenarioError(f"{prefix}{key}", f"unknown field (expected one of: {', '.join(allowed)})")


def _known(name: str, options: tuple[str, ...], where: str) -> str:
    for option in options:
        if option.lower() == name.lower():
            return option
    raise ScenarioError(where, f"unknown name {name!r} (expected one of: {', '.join(options)})")


def parse_coefficients(data: Mapping[str, Any], label: str = "") -> Coefficients:
    """Validate a parsed coefficient file; `ScenarioError` names the offending field."""
    _unknown(data, ("label", "subflows", "subsets", "fit", "classic", "curves"), "")
    if "label" in data and not isinstance(data["label"], str):
        raise ScenarioError("label", "expected a string")
    label = data.get("label", label)

    if "curves" not in data:
        raise ScenarioError("curves", "missing: [curves.<PM>] tables of <CC> = { a, b, d }")
    curves: dict[tuple[str, str], Curve] = {}
    for pm_name, per_cc in _table(data["curves"], "curves").items():
        pm = _known(pm_name, PATH_MANAGERS, f"curves.{pm_name}")
        for cc_name, coef in _table(per_cc, f"curves.{pm_name}").items():
            where = f"curves.{pm_name}.{cc_name}"
            cc = _known(cc_name, CONGESTION_CONTROLS, where)
            coef = _table(coef, where)
            _unknown(coef, ("a", "b", "d"), f"{where}.")
            for k in ("a", "b", "d"):
                if k not in coef:
                    raise ScenarioError(f"{where}.{k}", "missing (tp = a + b·bs + d·bs²; write d = 0.0 for a line)")
            if (pm, cc) in curves:
                raise ScenarioError(where, "given twice")
            curves[(pm, cc)] = Curve(pm, cc, *(_number(coef[k], f"{where}.{k}") for k in ("a", "b", "d")))
    if not curves:
        raise ScenarioError("curves", "no curve given")

    subflows = _names(data["subflows"], "subflows") if "subflows" in data else None
    subsets: dict[str, list[str]] = {}
    if "subsets" in data:
        if subflows is None:
            raise ScenarioError("subflows", "missing: needed with [subsets] (SP, all subflows)")
        for cc_name, names in _table(data["subsets"], "subsets").items():
            where = f"subsets.{cc_name}"
            cc = _known(cc_name, CONGESTION_CONTROLS, where)
            names = _names(names, where)
            for i, name in enumerate(names):
                if name not in subflows:
                    raise ScenarioError(f"{where}[{i}]", f"{name!r} is not in subflows")
            subsets[cc] = names

    r_squared = max_p = None
    if "fit" in data:
        fit = _table(data["fit"], "fit")
        _unknown(fit, ("r_squared", "max_p_value"), "fit.")
        if "r_squared" in fit:
            r_squared = _number(fit["r_squared"], "fit.r_squared")
            if not 0.0 <= r_squared <= 1.0:
                raise ScenarioError("fit.r_squared", "expected a value in [0, 1]")
        if "max_p_value" in fit:
            max_p = _number(fit["max_p_value"], "fit.max_p_value")
            if not 0.0 <= max_p <= 1.0:
                raise ScenarioError("fit.max_p_value", "expected a value in [0, 1]")

    classic = None
    if "classic" in data:
        c = _table(data["classic"], "classic")
        keys = ("rtt_max_s", "rto_max_s", "sum_bw_mbit_s")
        _unknown(c, keys, "classic.")
        values = []
        for k in keys:
            if k not in c:
                raise ScenarioError(f"classic.{k}", "missing")
            v = _number(c[k], f"classic.{k}")
            if v < 0 or (k == "sum_bw_mbit_s" and v == 0):
                raise ScenarioError(f"classic.{k}", "expected a positive number")
            values.append(v)
        classic = ClassicBound(*values)
    return Coefficients(label, curves, subflows, subsets, r_squared, max_p, classic)


def load_coefficients(path: str | Path) -> Coefficients:
    """Read a coefficient TOML file (format: docs/mpcoa.md)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as err:
        raise ScenarioError("<file>", f"cannot read {p}: {err.strerror or err}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ScenarioError("<toml>", f"{p}: {err}") from None
    return parse_coefficients(data, label=p.stem)


# -- selection ----------------------------------------------------------------------------------
def _max_on_grid(curve: Curve, lo: float = BS_MIN, hi: float = BS_MAX) -> tuple[float, float]:
    """(tp_max, bs) of the curve over [lo, hi]."""
    candidates = [lo, hi]
    if curve.d < 0:
        vertex = -curve.b / (2 * curve.d)
        if lo < vertex < hi:
            candidates.append(vertex)
    best = max(candidates, key=lambda bs: (curve(bs), -bs))
    return curve(best), best


def _smallest_at_least(curve: Curve, target: float, upper: float, lo: float = BS_MIN) -> float:
    """Smallest bs in [lo, upper] with curve(bs) ≥ target (curve(upper) ≥ target)."""
    if curve(lo) >= target:
        return lo
    a, b, d = curve.a - target, curve.b, curve.d
    if abs(d) < 1e-15:
        roots = [-a / b] if b else []
    else:
        sq = math.sqrt(max(b * b - 4 * d * a, 0.0))
        roots = [(-b - sq) / (2 * d), (-b + sq) / (2 * d)]
    inside = [r for r in roots if lo - _EPS <= r <= upper + _EPS]
    # f(lo) < target <= f(upper): exactly one crossing in between (f is a quadratic).
    return min(max(r, lo) for r in inside) if inside else upper


def curve_optimum(curve: Curve, delta: float, bs_range: tuple[float, float] = (BS_MIN, BS_MAX)) -> CurveOptimum:
    """tp_max, where, and obs/otp of one curve at sacrifice δ (Eq. 10), over `bs_range` (MiB)."""
    lo, hi = bs_range
    tp_max, bs_max = _max_on_grid(curve, lo, hi)
    obs = _smallest_at_least(curve, (1.0 - delta) * tp_max, bs_max, lo)
    return CurveOptimum(curve, tp_max, bs_max, obs, curve(obs))


def optimize(coef: Coefficients, delta: float = 0.07, literal_eq11: bool = False) -> Optimum:
    """The MPCOA outputs OTP, OBS, OCC, OPM from fitted curves (see the module docstring)."""
    if not (isinstance(delta, (int, float)) and 0.0 <= delta < 1.0):
        raise ScenarioError("--delta", f"expected a fraction in [0, 1), got {delta!r}")
    order = {(pm, cc): i for i, (pm, cc) in enumerate(
        (pm, cc) for pm in PATH_MANAGERS for cc in CONGESTION_CONTROLS)}
    per_curve = [curve_optimum(c, delta, coef.bs_range)
                 for _, c in sorted(coef.curves.items(), key=lambda kv: order[kv[0]])]
    notes: list[str] = []
    if literal_eq11:
        # Eq. 11 as printed: the smallest obs over every (PM, CC); ties to the higher otp.
        best = min(per_curve, key=lambda o: (round(o.obs, 9), -o.otp))
        rule = "literal-eq11"
        notes.append("rule: Eq. 11 as printed (OBS = min over all (PM, CC) of obs); "
                     "the seed's worked examples and Table 5 use the max-throughput winner instead")
    else:
        best = max(per_curve, key=lambda o: o.tp_max)  # first of equals, in PM, CC order
        rule = "max-throughput"
    chosen = best
    sp_star = coef.subsets.get(best.curve.cc)
    if best.curve.pm == "PCDC" and coef.subflows is not None and sp_star is not None \
            and set(sp_star) == set(coef.subflows):
        fullmesh = coef.curves.get(("FullMesh", best.curve.cc))
        if fullmesh is not None:
            chosen = curve_optimum(fullmesh, delta, coef.bs_range)
            notes.append(f"homogeneity: PCDC's SP* for {best.curve.cc} is all of SP, so PCDC is FullMesh; "
                         f"reporting FullMesh (PCDC's own curve: tp_max {best.tp_max:.3f} Mbit/s, "
                         f"OBS {best.obs:.2f} MiB, OTP {best.otp:.3f} Mbit/s)")
    elif best.curve.pm == "PCDC" and sp_star is None:
        notes.append(f"no SP/SP* for {best.curve.cc} in the file: homogeneity rule not checked")
    if coef.r_squared is not None and coef.r_squared < 0.90:
        notes.append(f"fit R² = {coef.r_squared:.2f} < 0.90: below the acceptance threshold, "
                     "kept as the best available model")
    if coef.max_p_value is not None and coef.max_p_value > 0.05:
        notes.append(f"fit p-value {coef.max_p_value:g} > 0.05: below the acceptance threshold")
    return Optimum(
        opm=chosen.curve.pm, occ=chosen.curve.cc, obs=chosen.obs, otp=chosen.otp,
        tp_max=chosen.tp_max, bs_at_max=chosen.bs_at_max, curve=chosen.curve, delta=delta,
        rule=rule, per_curve=per_curve, notes=notes,
        classic_mib=coef.classic.mib if coef.classic else None,
    )
