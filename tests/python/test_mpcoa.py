"""MPCOA selection on fitted curves (python/mptcplab/mpcoa.py, docs/mpcoa.md).

The committed coefficient files (data/mpcoa/*.toml) transcribe the seed's Table 4 curves
and Table 3 subsets; they must give the seed's Table 5 (reference path-managers.md §5.8).
The printed coefficients are rounded, hence the tolerances.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from mptcplab import ScenarioError
from mptcplab.cli import main
from mptcplab.mpcoa import Curve, curve_optimum, load_coefficients, optimize, parse_coefficients

from conftest import REPO

DATA = REPO / "data" / "mpcoa"

# Table 5 of the seed: file, OPM, OCC, OBS [MiB], OTP [Mbit/s], OBS as % of Eq. 1's bound.
TABLE5 = [
    ("srl-hu", "PCDC", "Hybla", 12.36, 74.65, 3.76),
    ("unis-hin", "PCDC", "Cubic", 9.22, 266.66, 17.07),
    ("uit-haw", "FullMesh", "Scalable", 0.50, 0.81, 40.98),
]


@pytest.mark.parametrize(("name", "opm", "occ", "obs", "otp", "pct"), TABLE5)
def test_table5(name: str, opm: str, occ: str, obs: float, otp: float, pct: float) -> None:
    opt = optimize(load_coefficients(DATA / f"{name}.toml"))
    assert (opt.opm, opt.occ) == (opm, occ)
    assert opt.obs == pytest.approx(obs, abs=0.05)
    assert opt.otp == pytest.approx(otp, abs=0.1)
    assert opt.obs_pct_of_classic == pytest.approx(pct, abs=0.05)


@pytest.mark.parametrize(("name", "opm", "occ", "obs", "otp", "pct"), TABLE5)
def test_cli_prints_table5(name: str, opm: str, occ: str, obs: float, otp: float, pct: float,
                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimize", "--from-coefficients", str(DATA / f"{name}.toml")]) == 0
    out = capsys.readouterr().out
    assert f"OPM = {opm}\n" in out and f"OCC = {occ}\n" in out
    got_obs = float(re.search(r"^OBS = ([\d.]+) MiB$", out, re.M).group(1))
    got_otp = float(re.search(r"^OTP = ([\d.]+) Mbit/s$", out, re.M).group(1))
    assert abs(got_obs - obs) <= 0.05 and abs(got_otp - otp) <= 0.1
    assert re.search(r"^classic bound \(3·RTT_max \+ RTO_max\)·ΣBW = .* MiB; OBS = [\d.]+ % of it$", out, re.M)


def test_reference_vectors() -> None:
    """path-managers.md §5.8 test vectors, to the 2nd decimal of the recomputation."""
    hybla = curve_optimum(Curve("PCDC", "Hybla", 24.49, 6.16, -0.17), 0.07)
    assert (round(hybla.tp_max, 2), round(hybla.bs_at_max, 2)) == (80.29, 18.12)
    assert (round(hybla.obs, 2), round(hybla.otp, 2)) == (12.37, 74.67)
    cubic = curve_optimum(Curve("PCDC", "Cubic", 200.82, 9.63, -0.27), 0.07)
    assert (round(cubic.tp_max, 2), round(cubic.bs_at_max, 2)) == (286.69, 17.83)
    assert (round(cubic.obs, 2), round(cubic.otp, 2)) == (9.21, 266.62)
    scalable = curve_optimum(Curve("FullMesh", "Scalable", 0.807, 0.002, 0.0), 0.07)
    assert (round(scalable.tp_max, 3), scalable.bs_at_max) == (0.867, 30.0)
    assert scalable.obs == 0.5 and round(scalable.otp, 2) == 0.81
    # f(obs) hits (1 − δ)·tp_max exactly when the clamp does not apply
    assert hybla.otp == pytest.approx(0.93 * hybla.tp_max, rel=1e-12)


def test_homogeneity_rule_picks_fullmesh() -> None:
    """UiT-HAW: PCDC-Scalable is nominally 0.001 higher, but SP* = SP, so FullMesh."""
    coef = load_coefficients(DATA / "uit-haw.toml")
    assert coef.curves[("PCDC", "Scalable")].a > coef.curves[("FullMesh", "Scalable")].a
    opt = optimize(coef)
    assert opt.opm == "FullMesh" and opt.curve.pm == "FullMesh"
    assert any(n.startswith("homogeneity") for n in opt.notes)
    # without SP/SP*, the rule cannot apply: PCDC (the larger tp_max) is reported
    data = tomllib.loads((DATA / "uit-haw.toml").read_text(encoding="utf-8"))
    del data["subflows"], data["subsets"]
    assert optimize(parse_coefficients(data)).opm == "PCDC"


def test_literal_eq11() -> None:
    srl = optimize(load_coefficients(DATA / "srl-hu.toml"), literal_eq11=True)
    assert (srl.opm, srl.occ, round(srl.obs, 2)) == ("FullMesh", "Reno", 11.00)
    unis = optimize(load_coefficients(DATA / "unis-hin.toml"), literal_eq11=True)
    assert (unis.opm, unis.occ, round(unis.obs, 2)) == ("PCDC", "Vegas", 8.75)
    assert srl.rule == "literal-eq11" and any("Eq. 11" in n for n in srl.notes)


def test_delta_changes_obs() -> None:
    coef = load_coefficients(DATA / "srl-hu.toml")
    assert optimize(coef, delta=0.0).obs == pytest.approx(6.16 / 0.34)  # the vertex
    assert optimize(coef, delta=0.2).obs < optimize(coef, delta=0.07).obs
    with pytest.raises(ScenarioError) as err:
        optimize(coef, delta=1.5)
    assert err.value.field == "--delta"


def test_coefficient_files_agree_with_the_regression_equations() -> None:
    """Table 4 rows are Eq. 13/14/15 reduced per CC (CC1..CC6 = Cubic, OLIA, Hybla, Reno,
    Scalable, Vegas): a' = a + 2·c_k (CC_k and CC_k² both 1), b' = b + e_k."""
    eqs = {  # seed Eq. 13 (SRL-HU), 14 (UNIS-HiN), 15 (UiT-HAW): a, b, c_k, e_k
        "srl-hu": {
            "FullMesh": (3.63, 4.17, [-0.07, 1.69, 1.14, 0.42, -0.07, 0.52], [0.68, 1.09, 0.83, 0.42, 0.68, 0.46]),
            "PCDC": (4.89, 4.92, [0.71, -1.24, 9.8, -0.7, -1.45, -2.21], [0.53, 1.59, 1.24, 0.38, 0.72, 0.46]),
        },
        "unis-hin": {
            "FullMesh": (85.02, 10.58, [43.3, 8.51, 11.99, 13.36, 22.73, -14.87], [0.5, 2.58, 2.9, 2.96, 2.37, -0.73]),
            "PCDC": (107.82, 9.14, [46.5, 5.39, 25.84, 15.24, 35.37, -20.51], [0.49, 3.11, 2.28, 3.03, 1.6, -1.37]),
        },
        "uit-haw": {
            "FullMesh": (0.567, 0.002, [0.098, 0.054, 0.114, 0.093, 0.12, 0.088], [0, 0.002, 0, 0, 0, 0]),
            "PCDC": (0.568, 0.002, [0.098, 0.056, 0.114, 0.093, 0.12, 0.088], [0, 0.001, 0, 0, 0, 0]),
        },
    }
    ccs = ["Cubic", "OLIA", "Hybla", "Reno", "Scalable", "Vegas"]
    for name, per_pm in eqs.items():
        coef = load_coefficients(DATA / f"{name}.toml")
        assert len(coef.curves) == 12
        for pm, (a, b, c, e) in per_pm.items():
            for k, cc in enumerate(ccs):
                curve = coef.curves[(pm, cc)]
                assert curve.a == pytest.approx(a + 2 * c[k], abs=1e-9), (name, pm, cc)
                assert curve.b == pytest.approx(b + e[k], abs=1e-9), (name, pm, cc)


def test_no_code_path_names_a_scenario() -> None:
    files = sorted((REPO / "python" / "mptcplab" / "mpcoa").glob("*.py"))
    assert {f.name for f in files} >= {"select.py", "fit.py", "pipeline.py"}
    for f in files:
        src = f.read_text(encoding="utf-8")
        for site in ("SRL", "UNIS", "HiN", "UiT", "HAW", "srl-hu"):
            assert site not in src, f"{f.name} names {site}"


def _bad(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "bad.toml"
    p.write_text(text, encoding="utf-8")
    return p


GOOD = 'subflows = ["x", "y"]\n[subsets]\nReno = ["x"]\n[curves.PCDC]\nReno = { a = 1.0, b = 2.0, d = -0.1 }\n'


@pytest.mark.parametrize(("text", "field"), [
    ("", "curves"),
    ("curves = 3", "curves"),
    ("[curves.Default]\nReno = { a = 1.0, b = 2.0, d = 0.0 }", "curves.Default"),
    ("[curves.PCDC]\nBBR = { a = 1.0, b = 2.0, d = 0.0 }", "curves.PCDC.BBR"),
    ("[curves.PCDC]\nReno = { a = 1.0, b = 2.0 }", "curves.PCDC.Reno.d"),
    ('[curves.PCDC]\nReno = { a = 1.0, b = "2", d = 0.0 }', "curves.PCDC.Reno.b"),
    ("[curves.PCDC]\nReno = { a = 1.0, b = 2.0, d = 0.0, e = 1.0 }", "curves.PCDC.Reno.e"),
    ("colour = 1\n" + GOOD, "colour"),
    (GOOD.replace('Reno = ["x"]', 'Reno = ["z"]'), "subsets.Reno[0]"),
    (GOOD.replace('Reno = ["x"]', "Reno = []"), "subsets.Reno"),
    (GOOD.replace('subflows = ["x", "y"]\n', ""), "subflows"),
    (GOOD + "[classic]\nrtt_max_s = 1.0\nrto_max_s = 1.0\n", "classic.sum_bw_mbit_s"),
    (GOOD + "[fit]\nr_squared = 1.5\n", "fit.r_squared"),
    ("[curves.PCDC\n", "<toml>"),
])
def test_bad_file(tmp_path: Path, text: str, field: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = _bad(tmp_path, text)
    with pytest.raises(ScenarioError) as err:
        load_coefficients(path)
    assert err.value.field == field
    assert main(["optimize", "--from-coefficients", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}: ")


def test_good_minimal_file(tmp_path: Path) -> None:
    opt = optimize(load_coefficients(_bad(tmp_path, GOOD)))
    assert (opt.opm, opt.occ) == ("PCDC", "Reno") and opt.classic_mib is None


def test_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimize", "scenarios/whatever.toml", "--from-coefficients", str(DATA / "srl-hu.toml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not both" in err[0]
    assert main(["optimize"]) == 2
    assert "--from-coefficients" in capsys.readouterr().err
    assert main(["optimize", "--from-coefficients", str(tmp_path / "missing.toml")]) == 2
    assert capsys.readouterr().err.startswith("error: <file>: ")
    assert main(["optimize", "--from-coefficients", str(DATA / "srl-hu.toml"), "--delta", "2"]) == 2
    assert capsys.readouterr().err.startswith("error: --delta: ")
