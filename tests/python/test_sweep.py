"""Sweeps (issue 5): plan validation, expansion, atomic store, resume after SIGKILL,
version guard, and local vs Dask runs giving identical rows."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, minimal, two_paths
from mptcplab import Scenario, ScenarioError
from mptcplab.sweep import VersionMismatch, VersionMixError, gather, load_plan, parse_plan, run_point, run_sweep
from mptcplab.sweep import run as sweep_run

PY = sys.executable


def write_plan(tmp: Path, body: str, scenario: dict | None = None, name: str = "plan.toml") -> Path:
    (tmp / "base.toml").write_text(Scenario.from_dict(scenario or two_paths("1 s")).to_toml(), encoding="utf-8")
    path = tmp / name
    path.write_text('scenario = "base.toml"\n' + body, encoding="utf-8")
    return path


PLAN = """
name = "t"
repetitions = 2
seed = 10
metrics = ["goodput_mbps", "bytes_retrans", "subflow_summary.mean_srtt_ms"]
[parameters]
"connections[0].cc" = ["reno", "cubic", "lia"]
"links[0].rate" = { start = 5, stop = 10, step = 5, unit = "Mbit/s" }
"""


# -- plan errors name the field --------------------------------------------------------------
@pytest.mark.parametrize("body, field", [
    ('colour = "red"\n', "colour"),
    ('mode = "diagonal"\n', "mode"),
    ("repetitions = 0\n", "repetitions"),
    ("seed = -1\n", "seed"),
    ('duration = "fast"\n', "duration"),
    ('metrics = ["goodput_mbps", "warp_factor"]\n', "metrics[1]"),
    ('metrics = ["nosuch.goodput_mbps"]\n', "metrics[0]"),
    ('[parameters]\n"connections[0].colour" = ["red"]\n', 'parameters."connections[0].colour"'),
    ('[parameters]\n"linkz[0].rate" = ["1 Mbit/s"]\n', 'parameters."linkz[0].rate"'),
    ('[parameters]\n"connections[0].cc" = []\n', 'parameters."connections[0].cc"'),
    ('[parameters]\n"connections[0].cc" = ["warp"]\n', 'parameters."connections[0].cc"'),
    ('[parameters]\n"connections[5].cc" = ["reno"]\n', 'parameters."connections[5].cc"'),
    ('[parameters]\n"links[0].rate" = { start = 5, stop = 1, step = 1 }\n', 'parameters."links[0].rate".stop'),
    ('mode = "zip"\n[parameters]\n"connections[0].cc" = ["reno", "lia"]\n"links[0].delay" = ["1 ms"]\n',
     'parameters."links[0].delay"'),
])
def test_plan_errors_name_the_field(tmp_path, body, field):
    with pytest.raises(ScenarioError) as info:
        load_plan(write_plan(tmp_path, body))
    assert info.value.field == field, str(info.value)


def test_bad_base_scenario_names_its_field(tmp_path):
    bad = minimal("1 s")
    bad["links"][0]["rate"] = "fast"
    with pytest.raises(ScenarioError) as info:
        load_plan(write_plan(tmp_path, "", scenario=bad))
    assert info.value.field == "scenario: links[0].rate"


def test_cli_bad_plan_is_one_line_exit_2(tmp_path):
    plan = write_plan(tmp_path, '[parameters]\n"connections[0].colour" = ["red"]\n')
    p = subprocess.run([PY, "-m", "mptcplab", "sweep", str(plan), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and 'parameters."connections[0].colour"' in lines[0], p.stderr
    assert not (tmp_path / "o").exists()  # nothing ran, nothing was created


# -- expansion ---------------------------------------------------------------------------------
def test_cartesian_expansion_ranges_and_seeds(tmp_path):
    plan = load_plan(write_plan(tmp_path, PLAN))
    pts = plan.points()
    assert len(pts) == 3 * 2 * 2
    assert plan.parameters["links[0].rate"] == ["5 Mbit/s", "10 Mbit/s"]
    combos = [(p.params["connections[0].cc"], p.params["links[0].rate"]) for p in pts[::2]]
    assert combos == [(cc, r) for cc in ("reno", "cubic", "lia") for r in ("5 Mbit/s", "10 Mbit/s")]
    assert [(p.rep, p.seed) for p in pts[:2]] == [(0, 10), (1, 11)]  # seed of repetition r = seed + r
    first = json.loads(pts[0].scenario_json)
    assert first["connections"][0]["cc"] == "reno" and first["links"][0]["rate"] == "5 Mbit/s"
    assert first["run"]["seed"] == 10
    # the key: same scenario, different seed -> same hash; a different value -> another hash
    assert pts[0].scenario_hash == pts[1].scenario_hash != pts[2].scenario_hash


def test_zip_expansion(tmp_path):
    body = ('mode = "zip"\n[parameters]\n"connections[0].cc" = ["reno", "lia", "olia"]\n'
            '"links[0].delay" = ["5 ms", "10 ms", "20 ms"]\n')
    pts = load_plan(write_plan(tmp_path, body)).points()
    assert [(p.params["connections[0].cc"], p.params["links[0].delay"], p.seed) for p in pts] == [
        ("reno", "5 ms", 1), ("lia", "10 ms", 1), ("olia", "20 ms", 1)]


def test_import_mptcplab_and_sweep_do_not_import_dask():
    code = "import sys, mptcplab, mptcplab.sweep; print('dask' in sys.modules)"
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


# -- store, resume, versions --------------------------------------------------------------------
def _point_files(out: Path) -> list[Path]:
    return sorted((out / "points").glob("*.json"))


def test_resume_after_sigkill_midway_and_during_a_write(tmp_path):
    plan = write_plan(tmp_path, PLAN)
    out = tmp_path / "out"
    env = {**os.environ, "MPTCPLAB_SWEEP_WRITE_DELAY": "0.4"}  # each point write pauses half-written
    proc = subprocess.Popen([PY, "-m", "mptcplab", "sweep", str(plan), "--out", str(out), "--workers", "2"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:  # kill while a point file is half-written
            if len(_point_files(out)) >= 3 and list((out / "points").glob(".tmp-*")):
                break
            time.sleep(0.02)
        else:
            pytest.fail("the sweep never reached a write")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = {p.name: p.stat().st_ino for p in _point_files(out)}
    assert 3 <= len(before) < 12
    for p in _point_files(out):
        json.loads(p.read_text())  # no finished file is corrupt

    p = subprocess.run([PY, "-m", "mptcplab", "sweep", str(plan), "--out", str(out), "--workers", "2",
                        "--no-progress"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert f"{len(before)} already stored, {12 - len(before)} to run" in p.stderr
    files = _point_files(out)
    assert len(files) == 12 and not list((out / "points").glob(".tmp-*"))
    for f in files:
        rec = json.loads(f.read_text())
        assert rec["summary"]["flow"] == ["c0"]
    assert {f.name: f.stat().st_ino for f in files if f.name in before} == before  # not redone
    import pandas as pd

    rows = pd.read_csv(out / "results.csv")
    assert sorted(rows["point"]) == list(range(12))  # every point once
    assert rows.equals(gather(load_plan(plan), out))


def test_version_mismatch_refuses_unless_asked(tmp_path, monkeypatch):
    plan = load_plan(write_plan(tmp_path, 'repetitions = 2\n'))
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        m.setattr(sweep_run, "_version", lambda: "0.0.0-old")
        old = run_sweep(plan, out=out, workers=1, progress=False, log=lambda _m: None)
    assert list(old["version"]) == ["0.0.0-old"] * 2
    with pytest.raises(VersionMixError) as info:
        run_sweep(plan, out=out, workers=1, progress=False, log=lambda _m: None)
    assert info.value.field == "--out" and "0.0.0-old" in info.value.message
    p = subprocess.run([PY, "-m", "mptcplab", "sweep", str(tmp_path / "plan.toml"), "--out", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "--allow-version-mix" in p.stderr
    messages: list[str] = []
    mixed = run_sweep(plan, out=out, workers=1, progress=False, allow_version_mix=True, log=messages.append)
    assert "2 already stored, 0 to run" in messages[0]
    assert list(mixed["version"]) == ["0.0.0-old"] * 2


def test_points_of_another_build_of_the_same_version_are_not_taken_for_this_ones(tmp_path, monkeypatch):
    """The store keys a point by the package version *and* the model (a hash of the core's
    sources, build.rs): a sweep resumed after the model changed refuses the old points
    (unless --allow-version-mix), although the version string is the same."""
    import mptcplab._version as v

    import re

    from mptcplab import simulate

    assert re.fullmatch(r"[0-9a-f]{16}", v.__model__)
    assert simulate(Scenario.from_toml(REPO / "scenarios" / "multihomed.toml").with_("run.duration", "1 s")).meta["model"] \
        == v.__model__
    plan = load_plan(write_plan(tmp_path, 'repetitions = 2\n'))
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        m.setattr(v, "__model__", "0123456789abcdef")
        old = run_sweep(plan, out=out, workers=1, progress=False, log=lambda _m: None)
    assert list(old["version"]) == [f"{v.__version__}+0123456789abcdef"] * 2
    with pytest.raises(VersionMixError) as info:
        run_sweep(plan, out=out, workers=1, progress=False, log=lambda _m: None)
    assert info.value.field == "--out" and "+0123456789abcdef" in info.value.message
    assert v.model_version() in info.value.message


def test_a_plan_with_backend_kernel_runs_its_points_in_the_driver_one_at_a_time(tmp_path, monkeypatch):
    """`backend = "kernel"` marks every point (Point.kernel, is_kernel's rule), keys it
    apart from the same scenario on the simulator, and run_sweep runs such points one
    after another in the driver (never in the pool) through run_point(backend="kernel").
    The kernel itself is replaced here; test_kernel.py runs it for real (root)."""
    import mptcplab.kernel

    body = '[parameters]\n"connections[0].cc" = ["reno", "cubic"]\n'
    sim_plan = load_plan(write_plan(tmp_path, body, name="sim.toml"))
    plan = load_plan(write_plan(tmp_path, 'backend = "kernel"\n' + body, name="kernel.toml"))
    assert [p.kernel for p in plan.points()] == [True, True] and not any(p.kernel for p in sim_plan.points())
    assert {p.scenario_hash for p in plan.points()}.isdisjoint(p.scenario_hash for p in sim_plan.points())
    calls: list[tuple[str, str, float, float]] = []
    real = sweep_run.run_point

    def fake(scenario_json, version, marks_s=(), backend="sim"):
        t = time.monotonic()
        time.sleep(0.05)
        rec = real(scenario_json, version, marks_s)  # the simulator stands in for the kernel
        calls.append((backend, json.loads(scenario_json)["connections"][0]["cc"], t, time.monotonic()))
        return {**rec, "backend": backend}

    monkeypatch.setattr(sweep_run, "run_point", fake)
    monkeypatch.setattr(mptcplab.kernel, "check_environment", lambda: None)
    monkeypatch.setattr(sweep_run, "_run_local", lambda pts, *a: pytest.fail(f"{len(pts)} points sent to the pool"))
    frame = run_sweep(plan, out=tmp_path / "out", workers=4, progress=False, log=lambda _m: None)
    assert [c[:2] for c in calls] == [("kernel", "reno"), ("kernel", "cubic")]
    assert calls[0][3] <= calls[1][2]  # the second started after the first ended
    assert len(frame) == 2
    with pytest.raises(ScenarioError) as info:
        load_plan(write_plan(tmp_path, 'backend = "ns3"\n', name="bad.toml"))
    assert info.value.field == "backend"


def test_worker_version_check():
    with pytest.raises(VersionMismatch):
        run_point(Scenario.from_dict(minimal("1 s")).to_json(), "0.0.0-other")


# -- Dask ----------------------------------------------------------------------------------------
def test_dask_local_cluster_rows_identical_to_local_run(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    plan = load_plan(write_plan(tmp_path, PLAN))
    local = run_sweep(plan, out=tmp_path / "local", workers=2, progress=False, log=lambda _m: None)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        remote = run_sweep(plan, out=tmp_path / "dask", scheduler=cluster.scheduler_address,
                           progress=False, log=lambda _m: None)
    assert len(local) == 12
    import pandas as pd

    pd.testing.assert_frame_equal(local, remote)


def test_compare_cli(tmp_path):
    plan = write_plan(tmp_path, 'metrics = ["goodput_mbps"]\n[parameters]\n"connections[0].cc" = ["reno", "lia"]\n')
    for out in ("a", "b"):
        subprocess.run([PY, "-m", "mptcplab", "sweep", str(plan), "--out", str(tmp_path / out), "--no-progress"],
                       check=True, capture_output=True, timeout=60)
    p = subprocess.run([PY, "-m", "mptcplab", "compare", str(tmp_path / "a"), str(tmp_path / "b")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "goodput_mbps A" in p.stdout and "goodput_mbps Δ%" in p.stdout and "lia" in p.stdout
    bad = subprocess.run([PY, "-m", "mptcplab", "compare", str(tmp_path / "a"), str(tmp_path / "nope")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("error: B:")


def test_example_plan_is_valid():
    plan = load_plan(REPO / "scenarios" / "sweeps" / "cc-x-buffer.toml")
    assert len(plan.points()) == 3 * 4 * 3


def test_a_sweep_keeps_flow_completion_times(tmp_path):
    """fct.COLUMN metrics (issue 16): each flow's start, size and completion time, the
    values `simulate` gives for the same point, by flow name."""
    from mptcplab import simulate

    (tmp_path / "dc.toml").write_text(
        'name = "dc"\n[run]\nduration = "50 ms"\n'
        '[topology]\nkind = "fat_tree"\nk = 4\nrate = "1 Gbit/s"\ndelay = "1 us"\nqueue = "100 pkt"\n'
        '[[traffic]]\nname = "perm"\nkind = "permutation"\nsize = "200 KB"\ntransport = "tcp"\ncc = "reno"\n',
        encoding="utf-8")
    plan = tmp_path / "plan.toml"
    plan.write_text('scenario = "dc.toml"\nseed = 3\nmetrics = ["goodput_mbps", "fct.size_bytes", "fct.fct_s"]\n'
                    '[parameters]\n"traffic[0].cc" = ["reno", "cubic"]\n', encoding="utf-8")
    rows = run_sweep(plan, tmp_path / "out", workers=1, progress=False)
    assert len(rows) == 2 * 16 and {"size_bytes", "fct_s"} <= set(rows.columns)
    for cc, got in rows.groupby("traffic[0].cc"):
        plan_point = next(p for p in load_plan(plan).points() if p.params["traffic[0].cc"] == cc)
        want = simulate(Scenario.from_dict(json.loads(plan_point.scenario_json))).fct.set_index("flow")
        assert (got["size_bytes"] == 200_000).all()
        # Most finish in 50 ms; a flow whose loss waits for a 200 ms RTO does not (NaN).
        assert got["fct_s"].notna().sum() >= 8 and (got["fct_s"].dropna() > 0).all()
        got_s = got.set_index("flow")["fct_s"].astype(float).sort_index()
        want_s = want["fct_s"].astype(float).sort_index()
        assert got_s.index.equals(want_s.index)
        assert ((got_s == want_s) | (got_s.isna() & want_s.isna())).all()
    with pytest.raises(ScenarioError, match=r"fct.nosuch.*not a column of fct"):
        load_plan(write_plan(tmp_path, 'metrics = ["fct.nosuch"]\n', scenario=None, name="bad.toml"))
