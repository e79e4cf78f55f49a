"""`mptcplab bench --suite htsim` (issue 14, item 1): the side-by-side scenarios against
htsim, their htsim_bench commands, paired runs, the figures and their JSON, and the lean
bench child. The runs here are tiny (0.1-0.2 s simulated); htsim is a fake script."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mptcplab import Scenario, ScenarioError
from mptcplab import _bench
from mptcplab.scenario import _duration_text

from conftest import REPO, run_cli

KIT = Path("/work/shared/bench/htsim")  # the side-by-side kit; the tests that need it skip without it
HTSIM_DATA = REPO / "python" / "mptcplab" / "data" / "bench" / "htsim"

# `gen_scale.py tcp 3 20` and `gen_scale.py mptcp 3 20`, as the kit printed them.
SCALE_TCP_3 = """\
name = "scale-tcp-3"
[run]
duration = "20 s"
sample_interval = "1 s"
[[links]]
name = "a"
rate = "30 Mbit/s"
delay = "20 ms"
queue = "100 pkt"
[[links]]
name = "b"
rate = "30 Mbit/s"
delay = "20 ms"
queue = "100 pkt"
[[paths]]
name = "pa"
links = ["a"]
[[paths]]
name = "pb"
links = ["b"]
[[flows]]
name = "f0"
path = "pa"
cc = "reno"
start = "0 us"
app = { kind = "bulk" }
[[flows]]
name = "f1"
path = "pa"
cc = "reno"
start = "1 us"
app = { kind = "bulk" }
[[flows]]
name = "f2"
path = "pa"
cc = "reno"
start = "2 us"
app = { kind = "bulk" }
"""
SCALE_MPTCP_3_CONNECTIONS = """\
[[connections]]
name = "m0"
paths = ["pa", "pb"]
cc = "lia"
start = "0 us"
receive_buffer = "16 MiB"
send_buffer = "16 MiB"
app = { kind = "bulk" }
[[connections]]
name = "m1"
paths = ["pa", "pb"]
cc = "lia"
start = "1 us"
receive_buffer = "16 MiB"
send_buffer = "16 MiB"
app = { kind = "bulk" }
[[connections]]
name = "m2"
paths = ["pa", "pb"]
cc = "lia"
start = "2 us"
receive_buffer = "16 MiB"
send_buffer = "16 MiB"
app = { kind = "bulk" }
"""


# -- the scenarios ----------------------------------------------------------------------------
def test_the_s3_generator_writes_the_committed_gen_scale_text():
    assert _bench.scale_toml("tcp", 3) == SCALE_TCP_3
    head = SCALE_TCP_3.split("[[flows]]")[0].replace("scale-tcp-3", "scale-mptcp-3")
    assert _bench.scale_toml("mptcp", 3) == head + SCALE_MPTCP_3_CONNECTIONS


@pytest.mark.skipif(not (KIT / "gen_scale.py").is_file(), reason="the htsim kit's gen_scale.py is not here")
@pytest.mark.parametrize("mode", ["tcp", "mptcp"])
def test_the_s3_generator_prints_what_gen_scale_prints(mode):
    for n in (3, 1000):
        ref = subprocess.run([sys.executable, str(KIT / "gen_scale.py"), mode, str(n), "20"],
                             capture_output=True, text=True, check=True).stdout
        assert _bench.scale_toml(mode, n) == ref


def test_the_htsim_suite_names_its_scenarios_and_their_htsim_commands():
    assert _bench.htsim_suite_names() == ["s1", "s2", "s3-tcp-1", "s3-tcp-10", "s3-tcp-100", "s3-tcp-1000",
                                          "s3-mptcp-1", "s3-mptcp-10", "s3-mptcp-100", "s3-mptcp-1000"]
    # S3 = htsim_bench tcp|mptcp N 10 40 40 max(100,10N) DURATION
    assert _bench._htsim_entry("s3-mptcp-1000")[3] == ["mptcp", "1000", "10", "40", "40", "10000"]
    assert _bench._htsim_entry("s3-tcp-1")[3] == ["tcp", "1", "10", "40", "40", "100"]
    # S1 and S2: the command the file's header names, with the file's own duration
    for name in ("s1", "s2"):
        path, text, _, args = _bench._htsim_entry(name)
        named = next(line for line in text.splitlines() if "Its htsim twin: htsim_bench" in line)
        seconds, mss = _bench._checked(text, None)
        assert named.split("htsim_bench ", 1)[1].split() == [*args, format(seconds, "g")]
        assert seconds == 600 and mss == 1448


@pytest.mark.skipif(not KIT.is_dir(), reason="the htsim kit is not here")
@pytest.mark.parametrize("file", ["s1-reno-100M.toml", "s2-lia-2x200M.toml"])
def test_the_committed_s1_and_s2_are_the_kits_scenarios(file):
    ours = (HTSIM_DATA / file).read_text(encoding="utf-8")
    kit = (KIT / file).read_text(encoding="utf-8")
    assert ours.endswith(kit)  # a header of comments on top of the kit's file, byte for byte
    assert tomllib.loads(ours) == tomllib.loads(kit)


def test_the_child_hands_the_core_the_text_simulate_would(tmp_path):
    no_run = tmp_path / "no-run.toml"
    no_run.write_text(_bench.scale_toml("tcp", 2).replace('[run]\nduration = "20 s"\nsample_interval = "1 s"\n', ""))
    files = [*sorted((REPO / "python" / "mptcplab" / "data" / "bench").rglob("*.toml")), no_run]
    assert len(files) >= 6
    for path in files:
        for duration in (None, "0.2 s", 0.5, 3):
            scn = Scenario.from_toml(path)
            if duration is not None:
                scn = scn.with_duration(duration)
            text = _bench.core_input(str(path), None if duration is None else _duration_text(duration))
            assert text == scn.to_json(), (path.name, duration)


# -- bad input ---------------------------------------------------------------------------------
@pytest.fixture
def fake_htsim(tmp_path):
    """A stand-in htsim_bench: logs its arguments, prints noise around the figures line."""
    log = tmp_path / "htsim.log"
    script = tmp_path / "htsim_bench"
    script.write_text(f"""#!/bin/sh
echo "$*" >> "{log}"
echo "htsim noise: events 99 data_pkts"
echo "events 10 data_pkts 5 goodput_mbps 1.0"
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


@pytest.mark.parametrize(("kwargs", "field", "words"), [
    ({"suite": "htsims"}, "--suite", "known: model, htsim"),
    ({"suite": "htsim", "scenarios": ["s3-tcp-5"]}, "--scenario", "s3-tcp-1000"),
    ({"suite": "htsim", "runs": 0}, "--runs", "at least 1"),
    ({"suite": "htsim", "duration": "soon"}, "--duration", "soon"),
    ({"suite": "htsim", "duration": -1}, "--duration", "positive"),
    ({"suite": "htsim", "htsim": "/nonexistent/htsim_bench"}, "--htsim", "no such file"),
    ({"suite": "htsim", "plot": "x.txt"}, "--plot", ".svg"),
    ({"suite": "htsim", "scenarios": ["s1"], "plot": "x.svg"}, "--plot", "s3"),
    ({"suite": "htsim", "quick": True}, "--quick", "--duration"),
    ({"suite": "htsim", "json_out": "/nonexistent/dir/bench.json"}, "--json", "no such directory"),
    ({"scenarios": ["s1"]}, "--scenario", "--suite htsim"),
    ({"htsim": "/bin/true"}, "--htsim", "--suite htsim"),
])
def test_bad_bench_options_raise_a_scenario_error_naming_the_option(kwargs, field, words, capsys):
    args = {"runs": 1, "quick": False, "json_out": None, **kwargs}
    with pytest.raises(ScenarioError) as err:
        _bench.run_bench(**args)
    assert err.value.field == field and words in err.value.message
    assert capsys.readouterr().err == ""  # refused before any run


def test_an_htsim_that_cannot_run_is_refused(tmp_path, fake_htsim):
    script, _ = fake_htsim
    script.chmod(0o644)
    with pytest.raises(ScenarioError, match="not executable"):
        _bench.run_bench(1, False, None, suite="htsim", scenarios=["s1"], htsim=str(script))
    with pytest.raises(ScenarioError, match="not a file"):
        _bench.run_bench(1, False, None, suite="htsim", scenarios=["s1"], htsim=str(tmp_path))


@pytest.mark.parametrize(("args", "field"), [
    (["--suite", "htsims"], "--suite"),
    (["--suite", "htsim", "--scenario", "s1", "--htsim", "/nonexistent/htsim_bench"], "--htsim"),
])
def test_the_cli_prints_one_line_and_exits_2_on_bad_bench_options(args, field):
    proc = run_cli("bench", *args, "--runs", "1", "--no-progress", timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}: ")
    assert proc.stdout == ""


# -- runs --------------------------------------------------------------------------------------
def test_a_tiny_htsim_suite_run_writes_consistent_figures(tmp_path):
    out = tmp_path / "bench.json"
    proc = run_cli("bench", "--suite", "htsim", "--scenario", "s3-mptcp-1", "--duration", "0.2 s", "--runs", "1",
                   "--json", str(out), "--no-progress", timeout=120)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text())
    assert r["suite"] == "htsim" and r["runs"] == 1 and r["duration"] == "0.2 s" and not r["paired"]
    assert r["version"] and r["model"] and r["cpus"] >= 1 and r["rss_method"]
    assert list(r["scenarios"]) == ["s3-mptcp-1"]
    e = r["scenarios"]["s3-mptcp-1"]
    assert "htsim" not in e and "ratio" not in e
    assert e["duration_s"] == pytest.approx(0.2) and e["mss_bytes"] == 1448
    assert e["mptcplab"]["command"][1:4] == ["-m", "mptcplab._bench", e["mptcplab"]["command"][3]]
    (s,) = e["mptcplab"]["samples"]
    assert s["seq"] == 0 and s["duration_s"] == pytest.approx(0.2)
    assert s["data_pkts"] > 0 and s["data_pkts"] == s["bytes_delivered"] // 1448
    assert s["ns_per_pkt"] * s["data_pkts"] == pytest.approx(s["wall_s"] * 1e9)
    assert s["pkts_per_wall_s"] == pytest.approx(s["data_pkts"] / s["wall_s"])
    assert s["events_per_pkt"] == pytest.approx(s["events"] / s["data_pkts"])
    assert 0 < s["core_wall_s"] < s["wall_s"] and s["peak_rss_mib"] > 1 and s["goodput_mbps"] > 0
    assert e["mptcplab"]["median"] == {k: v for k, v in s.items() if k != "seq"}
    assert "s3-mptcp-1" in proc.stdout and "ns/pkt" in proc.stdout and "÷ htsim" not in proc.stdout


def test_htsim_runs_pair_with_mptcplab_runs_and_give_the_ratios(tmp_path, fake_htsim):
    script, log = fake_htsim
    out = tmp_path / "bench.json"
    proc = run_cli("bench", "--suite", "htsim", "--scenario", "s3-tcp-10", "--scenario", "s1", "--duration", "0.1",
                   "--runs", "2", "--htsim", str(script), "--json", str(out), "--no-progress", timeout=120)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text())
    assert r["paired"] and r["htsim"] == str(script) and r["duration"] == "100 ms"  # "0.1", as with_duration writes it
    assert list(r["scenarios"]) == ["s1", "s3-tcp-10"]  # the suite's order
    # A B A B: each mptcplab run is followed by its htsim run
    seqs = {(name, side): [s["seq"] for s in e[side]["samples"]]
            for name, e in r["scenarios"].items() for side in ("mptcplab", "htsim")}
    assert seqs == {("s1", "mptcplab"): [0, 2], ("s1", "htsim"): [1, 3],
                    ("s3-tcp-10", "mptcplab"): [4, 6], ("s3-tcp-10", "htsim"): [5, 7]}
    # htsim got the same duration, in seconds, and the equivalent arguments
    s1_args, s3_args = "tcp 1 100 40 40 100 0.1", "tcp 10 10 40 40 100 0.1"
    assert log.read_text().splitlines() == [s1_args, s1_args, s3_args, s3_args]
    assert r["scenarios"]["s1"]["htsim"]["command"] == [str(script), *s1_args.split()]
    for e in r["scenarios"].values():
        pairs = list(zip(e["mptcplab"]["samples"], e["htsim"]["samples"]))
        for _, h in pairs:
            assert (h["events"], h["data_pkts"], h["goodput_mbps"]) == (10, 5, 1.0)
            assert h["ns_per_pkt"] == pytest.approx(h["wall_s"] * 1e9 / 5) and h["events_per_pkt"] == 2
        speed = [m["data_pkts"] / m["wall_s"] / (5 / h["wall_s"]) for m, h in pairs]
        rss = [m["peak_rss_mib"] / h["peak_rss_mib"] for m, h in pairs]
        ratio = e["ratio"]
        assert ratio["pkts_per_wall_s"]["samples"] == pytest.approx(speed)
        assert ratio["pkts_per_wall_s"]["median"] == pytest.approx(sum(speed) / 2)  # two runs
        assert (ratio["pkts_per_wall_s"]["min"], ratio["pkts_per_wall_s"]["max"]) == pytest.approx(
            (min(speed), max(speed)))
        assert ratio["peak_rss"]["samples"] == pytest.approx(rss)
        assert e["htsim"]["median"]["data_pkts"] == 5
    assert "pkts/wall s ÷ htsim (min–max)" in proc.stdout
    assert f"s1: {script} {s1_args}" in proc.stdout


def test_the_scaling_plot_draws_s3_from_the_json_figures(tmp_path):
    def entry(ns):
        return {"median": {"ns_per_pkt": ns}}

    report = {"scenarios": {f"s3-{mode}-{n}": {"mptcplab": entry(100.0 * n ** 0.1), "htsim": entry(50.0)}
                            for mode in ("tcp", "mptcp") for n in _bench.S3_FLOWS}}
    path = tmp_path / "fig.json"
    path.write_text(json.dumps(report))
    a = Path(_bench.plot_scaling(report, str(tmp_path / "a.svg"))).read_text()
    b = Path(_bench.plot_scaling(str(path), str(tmp_path / "b.svg"))).read_text()
    assert a == b  # byte-stable, from the dict or its JSON file
    assert "<dc:date>" not in a
    # matplotlib writes each text as a comment next to its glyph paths: the legend's labels
    for label in ("mptcplab tcp", "mptcplab mptcp", "htsim tcp", "htsim mptcp", "ns per data packet"):
        assert f"<!-- {label} -->" in a
    for e in report["scenarios"].values():
        del e["htsim"]
    alone = Path(_bench.plot_scaling(report, str(tmp_path / "alone.svg"))).read_text()
    assert "<!-- mptcplab mptcp -->" in alone and "htsim" not in alone
    with pytest.raises(ScenarioError) as err:
        _bench.plot_scaling({"scenarios": {"s1": {"mptcplab": entry(1.0)}}}, str(tmp_path / "c.svg"))
    assert err.value.field == "--plot"


# -- the lean child ------------------------------------------------------------------------------
def test_the_bench_child_imports_neither_the_api_nor_the_parents_modules():
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "mptcplab._bench",
                           str(REPO / "python" / "mptcplab" / "data" / "bench" / "cubic-100M.toml"), "1 ms"],
                          capture_output=True, text=True, cwd=REPO, env={**os.environ, "CI": "1"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["duration_s"] == pytest.approx(0.001)
    loaded = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "mptcplab._core" in loaded and "tomllib" in loaded
    heavy = {"mptcplab.api", "mptcplab.scenario", "mptcplab.result", "mptcplab.plugins", "mptcplab.errors",
             "pandas", "numpy", "dataclasses", "statistics", "subprocess", "tempfile"}
    assert loaded & heavy == set()
