"""Shared helpers for the Python tests: small scenarios built in code, and a way to run
code in a separate Python process."""
from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"


def minimal(duration: str = "2 s") -> dict[str, Any]:
    """The smallest valid scenario: one link, one path, one MPTCP connection."""
    return {
        "name": "minimal",
        "run": {"duration": duration, "seed": 1},
        "links": [{"name": "l0", "rate": "10 Mbit/s", "delay": "10 ms", "queue": "100 pkt"}],
        "paths": [{"name": "p0", "links": ["l0"]}],
        "connections": [{"name": "c0", "paths": ["p0"], "cc": "reno", "app": {"kind": "bulk"}}],
    }


def two_paths(duration: str = "2 s") -> dict[str, Any]:
    """Two disjoint paths, one MPTCP connection over both."""
    d = minimal(duration)
    d["links"].append({"name": "l1", "rate": "5 Mbit/s", "delay": "30 ms", "queue": "100 pkt"})
    d["paths"].append({"name": "p1", "links": ["l1"]})
    d["connections"][0]["paths"] = ["p0", "p1"]
    return d


def lossy(duration: str = "5 s", loss: float = 0.02) -> dict[str, Any]:
    """One TCP-like MPTCP connection through a link with random loss on the data direction."""
    d = minimal(duration)
    d["name"] = "lossy"
    d["links"][0]["loss"] = loss
    return d


def with_unrelated_lossy_link(d: dict[str, Any], loss: float = 0.05) -> dict[str, Any]:
    """`d` plus a lossy link, listed FIRST, carrying its own background flow on its own path.
    Listing it first catches RNG streams keyed by position instead of by name."""
    d = copy.deepcopy(d)
    d["links"].insert(0, {"name": "other", "rate": "20 Mbit/s", "delay": "5 ms", "queue": "100 pkt", "loss": loss})
    d["paths"].insert(0, {"name": "p-other", "links": ["other"]})
    d.setdefault("flows", []).insert(0, {"name": "bg-other", "path": "p-other", "cc": "reno", "app": {"kind": "bulk"}})
    return d


def run_python(code: str, *args: str, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -c code args...` in a fresh process (a fresh PYTHONHASHSEED too)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("PYTHONHASHSEED", None)
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout, env=full_env, cwd=REPO
    )


def run_cli(*args: str, timeout: float = 300, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the `mptcplab` command (as `python -m mptcplab`, so PATH does not matter)."""
    return subprocess.run(
        [sys.executable, "-m", "mptcplab", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd or REPO
    )


@pytest.fixture
def tmp_toml(tmp_path: Path):
    """Write TOML text to a file and return its path."""
    def write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return write


# -- kernel backend tests ------------------------------------------------------------------
# Tests marked `kernel` run the Linux MPTCP stack in network namespaces: they need root
# (CAP_NET_ADMIN), a kernel with MPTCP, and ip/tc/ethtool/cc. Elsewhere they skip with
# the reason. With CI=true on a machine that can run them (root, MPTCP), a skipped
# kernel test fails the session: CI must not pass by quietly running none of them.
def kernel_skip_reason() -> str | None:
    import shutil

    if os.geteuid() != 0:
        return "kernel backend tests need root (CAP_NET_ADMIN)"
    if not Path("/proc/sys/net/mptcp/enabled").exists():
        return "kernel backend tests need a kernel with MPTCP"
    missing = [t for t in ("ip", "tc", "ethtool") if shutil.which(t) is None]
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        missing.append("cc")
    if missing:
        return f"kernel backend tests need {', '.join(missing)} (./dev install installs them)"
    return None


def _kernel_capable_ci() -> bool:
    return (os.environ.get("CI", "").lower() == "true" and os.geteuid() == 0
            and Path("/proc/sys/net/mptcp/enabled").exists())


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kernel: runs the Linux MPTCP stack in network namespaces (root)")
    config._kernel_outcomes = {}  # type: ignore[attr-defined]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = kernel_skip_reason()
    for item in items:
        if item.get_closest_marker("kernel") and reason:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "kernel" not in report.keywords:
        return
    outcomes = getattr(pytest, "_mptcplab_kernel_outcomes", {})
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        outcomes[report.nodeid] = report.outcome
    pytest._mptcplab_kernel_outcomes = outcomes  # type: ignore[attr-defined]


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    outcomes = getattr(pytest, "_mptcplab_kernel_outcomes", {})
    counts = {k: sum(1 for v in outcomes.values() if v == k) for k in ("passed", "failed", "skipped")}
    terminalreporter.write_line(
        f"kernel backend tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
        + (f" ({kernel_skip_reason()})" if counts["skipped"] and kernel_skip_reason() else ""))
    if counts["skipped"] and _kernel_capable_ci():
        terminalreporter.write_line(
            "error: CI=true on a root MPTCP machine, and kernel tests were skipped: failing the run")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    outcomes = getattr(pytest, "_mptcplab_kernel_outcomes", {})
    if _kernel_capable_ci() and any(v == "skipped" for v in outcomes.values()):
        session.exitstatus = 1
