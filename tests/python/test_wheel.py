"""The wheel a user installs without a checkout (README "Install without a checkout").

`maturin build` makes one abi3 wheel (here with the `checked` profile, whose build
`./dev test` has just made, so CI compiles the core once; users' wheels use `release`,
which differs only in optimisation and overflow checks); it is installed into a fresh venv (no
system site packages) by pip with no Rust toolchain on PATH and binary packages only, then
that venv's `mptcplab` runs the default scenario and draws one plot, from a directory
outside the checkout so nothing is imported from python/ by accident.

The dependencies come from PyPI through pip's usual wheel cache, so after the first run the
install takes seconds. This test is not skipped anywhere: CI (`./dev test`) must run it.
"""
from __future__ import annotations

import configparser
import email.parser
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, run_cli

PACKAGE = REPO / "python" / "mptcplab"
TOOLCHAIN = ("cargo", "rustc", "rustup")


def _wheel_tags(wheel: zipfile.ZipFile) -> list[str]:
    name = next(n for n in wheel.namelist() if n.endswith(".dist-info/WHEEL"))
    return email.parser.Parser().parsestr(wheel.read(name).decode()).get_all("Tag") or []


def _dist_info(wheel: zipfile.ZipFile, leaf: str) -> str:
    name = next(n for n in wheel.namelist() if n.endswith(f".dist-info/{leaf}"))
    return wheel.read(name).decode()


def _table(stdout: str) -> list[str]:
    """`mptcplab run`'s flow and subflow table without the header (wall time) or "wrote" lines."""
    return [ln for ln in stdout.splitlines()[1:] if ln.strip() and not ln.startswith("wrote ")]


def path_without_rust(path: str) -> str:
    """`path` minus ~/.cargo/bin and every directory that holds cargo, rustc or rustup."""
    cargo_bin = (Path.home() / ".cargo" / "bin").resolve()
    kept = []
    for d in path.split(os.pathsep):
        if not d or Path(d).resolve() == cargo_bin:
            continue
        if any(shutil.which(tool, path=d) for tool in TOOLCHAIN):
            continue
        kept.append(d)
    return os.pathsep.join(kept)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built once per session with the maturin in the checkout's venv."""
    maturin = Path(sys.executable).with_name("maturin")
    assert maturin.exists(), f"{maturin} is missing: ./dev install installs it"
    out = tmp_path_factory.mktemp("wheels")
    env = dict(os.environ)
    cargo_bin = Path.home() / ".cargo" / "bin"
    if shutil.which("cargo") is None and cargo_bin.is_dir():
        env["PATH"] = f"{cargo_bin}{os.pathsep}{env.get('PATH', '')}"
    start = time.monotonic()
    proc = subprocess.run([str(maturin), "build", "--profile", "checked", "--out", str(out)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    print(f"maturin build --profile checked: {time.monotonic() - start:.1f} s")
    wheels = list(out.glob("mptcplab-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_path_without_rust_drops_every_directory_with_a_toolchain_binary(tmp_path):
    with_cargo, plain = tmp_path / "a", tmp_path / "b"
    with_cargo.mkdir()
    plain.mkdir()
    fake = with_cargo / "rustc"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert path_without_rust(f"{with_cargo}{os.pathsep}{plain}") == str(plain)


def test_the_wheel_is_abi3_and_holds_the_package_its_data_the_extension_and_the_script(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        tags = _wheel_tags(zf)
        metadata = _dist_info(zf, "METADATA")
        entry_points = _dist_info(zf, "entry_points.txt")
    # One wheel for every CPython from the minimum on: the tag is cpXY-abi3 (PEP 425/PEP 384),
    # and XY is the package's own floor (Requires-Python), not an older one it cannot run on.
    assert tags and all(t.startswith("cp311-abi3-") for t in tags), tags
    assert "Requires-Python: >=3.11" in metadata
    # Every file of the Python package in the checkout, data included, is in the wheel.
    wanted = {p.relative_to(PACKAGE.parent).as_posix() for p in PACKAGE.rglob("*")
              if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".so", ".pyc")}
    assert {"mptcplab/data/default.toml", "mptcplab/py.typed", "mptcplab/_core.pyi"} <= wanted
    assert not wanted - names, sorted(wanted - names)
    assert [n for n in names if n.startswith("mptcplab/_core.") and n.endswith(".abi3.so")], sorted(names)
    scripts = configparser.ConfigParser()
    scripts.read_string(entry_points)
    assert dict(scripts["console_scripts"]) == {"mptcplab": "mptcplab.cli:main"}


def test_the_wheel_installs_without_rust_and_runs_the_default_scenario_and_a_plot(wheel, tmp_path):
    start = time.monotonic()
    venv = tmp_path / "venv"
    # The checkout's venv interpreter makes a venv from its base Python; no system packages.
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    py, bin_dir = venv / "bin" / "python", venv / "bin"
    path = f"{bin_dir}{os.pathsep}{path_without_rust(os.environ.get('PATH', ''))}"
    for tool in TOOLCHAIN:
        assert shutil.which(tool, path=path) is None, f"{tool} is still on the install PATH"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CARGO_HOME", "RUSTUP_HOME")}
    env.update(PATH=path, VIRTUAL_ENV=str(venv))
    # --only-binary :all: : nothing is compiled, so no toolchain could have been needed.
    install = subprocess.run(
        [str(py), "-m", "pip", "install", "--disable-pip-version-check", "--only-binary", ":all:",
         f"{wheel}[plot]"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-4000:]
    installed = time.monotonic()

    def mptcplab(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(bin_dir / "mptcplab"), *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)

    where = subprocess.run([str(py), "-c", "import mptcplab, mptcplab._core as c; print(mptcplab.__file__); "
                            "print(c.__file__)"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    for line in where.stdout.split():
        assert Path(line).resolve().is_relative_to(venv.resolve()), f"imported from outside the venv: {line}"

    run = mptcplab("run", "--duration", "2", "--no-progress", "--out", "run")
    assert run.returncode == 0, run.stderr
    assert "wifi-lte" in run.stdout and "goodput Mbit/s" in run.stdout
    assert (tmp_path / "run" / "meta.json").is_file()
    # The installed wheel and the checkout simulate the same run: every line but the header
    # (which holds the wall time) is the same.
    here = run_cli("run", "--duration", "2", "--no-progress")
    assert here.returncode == 0, here.stderr
    assert _table(run.stdout) == _table(here.stdout) and len(_table(here.stdout)) >= 4

    plot = mptcplab("plot", "run", "--kind", "throughput", "--out", "throughput.png")
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "throughput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"venv + pip install: {installed - start:.1f} s; run + plot: {time.monotonic() - installed:.1f} s")
