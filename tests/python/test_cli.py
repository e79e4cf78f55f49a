"""The `mptcplab` command: run, list, schema, validate, bench."""
from __future__ import annotations

import json

import pytest

from mptcplab import Scenario
from mptcplab.cli.present import RunProgress, format_summary, progress_enabled
from mptcplab.tables import fmt_bytes, render_table

from conftest import SCENARIOS, minimal, run_cli


def test_run_without_a_scenario_runs_the_default_and_prints_flows_and_subflows():
    proc = run_cli("run", "--duration", "1")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "wifi-lte" in out and "seed 1" in out
    assert "goodput Mbit/s" in out
    flow_line = next(line for line in out.splitlines() if line.startswith("mptcp "))
    assert "cubic" in flow_line and "minrtt" in flow_line and "fullmesh" in flow_line
    assert "mptcp/0" in out and "mptcp/1" in out
    assert "p-wifi" in out and "p-lte" in out


def test_run_with_seed_duration_and_out_saves_a_result(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(Scenario.from_dict(minimal()).to_toml())
    out = tmp_path / "result"
    proc = run_cli("run", str(path), "--seed", "9", "--duration", "1500 ms", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "seed 9" in proc.stdout
    meta = json.loads((out / "meta.json").read_text())
    assert meta["seed"] == 9 and meta["duration_s"] == pytest.approx(1.5)
    assert (out / "links.parquet").stat().st_size > 0


def test_run_writes_a_trace_file_when_asked(tmp_path):
    trace = tmp_path / "trace.txt"
    proc = run_cli("run", "--duration", "0.5", "--trace", str(trace))
    assert proc.returncode == 0, proc.stderr
    assert trace.is_file() and trace.stat().st_size > 0


def test_list_prints_every_component_with_a_description():
    proc = run_cli("list")
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()[1:]
    names = {r.split()[1] for r in rows if r.strip()}
    assert {"minrtt", "fullmesh", "reno", "cubic", "bulk"} <= names
    assert all(len(r.split()) >= 3 for r in rows if r.strip())


def test_list_markdown_prints_a_table():
    proc = run_cli("list", "--markdown")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "| kind | name | description | options (default) |" in lines
    assert any(line.startswith("| `cubic` |") for line in lines)
    assert any(line.startswith("| scheduler | `blest` |") and "`lambda` (12)" in line for line in lines)
    assert any(line.startswith("| path_manager | `ndiffports` |") for line in lines)


def test_schema_prints_json_schema_and_writes_it_to_a_file(tmp_path):
    proc = run_cli("schema")
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    assert "links" in json.dumps(schema)
    target = tmp_path / "schema.json"
    assert run_cli("schema", "--out", str(target)).returncode == 0
    assert json.loads(target.read_text()) == schema


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_validate_accepts_every_example(path):
    proc = run_cli("validate", str(path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: ")


def test_no_command_prints_help_and_exits_2():
    proc = run_cli()
    assert proc.returncode == 2
    assert "run" in proc.stderr and "bench" in proc.stderr


def test_bench_quick_runs_both_scenarios_and_prints_the_figures(tmp_path):
    target = tmp_path / "bench.json"
    proc = run_cli("bench", "--quick", "--runs", "1", "--json", str(target), timeout=900)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(target.read_text())
    assert set(report["scenarios"]) == {"bbr-100M", "cubic-100M", "mptcp-2x200M"}
    for fig in report["scenarios"].values():
        assert fig["duration_s"] == pytest.approx(10.0)
        assert fig["data_segments_sent"] > 0 and fig["acks_sent"] > 0
        assert fig["segments_per_wall_s"] > 0 and fig["peak_rss_mib"] > 1
        assert fig["goodput_mbps"] > 10
    assert 0 < report["import_s"] < 5 and 0 < report["import_plus_1s_default_run_s"] < 5
    assert "M data seg/wall s" in proc.stdout


# -- pure helpers (no core run) -----------------------------------------------------------------
def test_byte_counts_use_decimal_units_like_scenario_files():
    assert fmt_bytes(999) == "999 B"
    assert fmt_bytes(1_500) == "1.50 KB"
    assert fmt_bytes(2_000_000) == "2.00 MB"
    assert fmt_bytes(float("nan")) == "-"


def test_tables_right_align_numbers():
    text = render_table(["name", "n"], [["a", "1"], ["bbb", "100"]], right={1})
    assert text.splitlines() == ["name    n", "a       1", "bbb   100"]


def test_progress_bars_are_on_a_terminal_only_and_off_in_ci_or_with_no_progress(monkeypatch):
    import io

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("CI", raising=False)
    assert progress_enabled(False, Tty())
    assert not progress_enabled(False, io.StringIO()), "a pipe or a log file gets no bar"
    assert not progress_enabled(True, Tty()), "--no-progress"
    monkeypatch.setenv("CI", "true")
    assert not progress_enabled(False, Tty()), "CI"
    monkeypatch.setenv("CI", "0")
    assert progress_enabled(False, Tty())


def test_the_run_progress_bar_stays_silent_for_short_runs():
    progress = RunProgress(after_s=3600)
    progress(1.0, 10.0)
    assert progress.bar is None
    progress.close()


def test_a_long_run_on_a_terminal_shows_a_progress_bar_with_an_eta_and_a_pipe_does_not():
    import os
    import pty
    import subprocess
    import sys

    from conftest import REPO

    env = {k: v for k, v in os.environ.items() if k != "CI"}
    argv = [sys.executable, "-m", "mptcplab", "run", "--duration", "4000"]
    leader, follower = pty.openpty()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower,
                            cwd=REPO, env=env)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=120)
    os.close(leader)
    assert proc.returncode == 0
    text = seen.decode(errors="replace")
    assert "simulating" in text and "ETA" in text, text[-500:]
    piped = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert piped.returncode == 0 and piped.stderr == ""


def test_the_summary_table_shows_retransmissions_as_a_share_of_bytes_sent():
    class Fake:
        meta = {"version": "0.1.0", "scenario_name": "x", "seed": 1, "duration_s": 10.0, "wall_s": 0.5, "events": 10}

        def columns(self, name):
            if name == "summary":
                return {"flow": ["f"], "kind": ["tcp"], "cc": ["reno"], "scheduler": [None],
                        "path_manager": [None], "subflows": [1], "goodput_mbps": [9.5],
                        "bytes_delivered": [11_875_000], "bytes_sent": [12_000_000],
                        "bytes_retrans": [120_000], "completion_s": [float("nan")], "extra": [1]}
            return {}

    text = format_summary(Fake())
    line = next(ln for ln in text.splitlines() if ln.startswith("f "))
    assert "1.00 %" in line and "9.50" in line and "11.88 MB" in line
    assert "(20x real time)" in text


def test_ctrl_c_stops_a_long_run_cleanly_with_exit_code_130():
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO

    proc = subprocess.Popen(
        [sys.executable, "-m", "mptcplab", "run", "--duration", "100000", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (proc.returncode, err)
    assert err.strip() == "interrupted"
    assert out == ""


def test_an_unwritable_trace_path_is_reported_before_the_run(tmp_path):
    proc = run_cli("run", "--duration", "1", "--trace", str(tmp_path / "no" / "such" / "dir" / "t.csv"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: <trace>: cannot write")
    assert proc.stdout == ""


@pytest.mark.parametrize("argv, field", [
    (["run", "--seed", "x"], "--seed"),
    (["run", "--bogus"], "--bogus"),
    (["run", "--backend", "foo"], "--backend"),
    (["validate", "--profile", "mainline"], "--profile"),
    (["pcap-summary"], "DIR|FILE..."),
    (["sweep"], "PLAN"),
    (["nosuchcommand"], "mptcplab"),
])
def test_bad_arguments_are_one_line_naming_the_option_and_exit_2(argv, field):
    proc = run_cli(*argv)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}: "), proc.stderr
    assert "Traceback" not in proc.stderr


def test_debug_anywhere_on_the_line_shows_the_traceback_of_a_bad_argument():
    proc = run_cli("run", "--seed", "x", "--debug")
    assert proc.returncode == 2
    assert "Traceback" in proc.stderr and proc.stderr.strip().splitlines()[-1].startswith("error: --seed: ")


def test_version_and_help_exit_0_and_kernel_without_a_command_exits_2():
    assert run_cli("--version").stdout.startswith("mptcplab ")
    helped = run_cli("run", "--help")
    assert helped.returncode == 0 and "--no-progress" in helped.stdout
    bare = run_cli("kernel")
    assert bare.returncode == 2 and "selftest" in bare.stderr


def test_a_rich_table_on_a_narrow_terminal_crops_no_cell(monkeypatch):
    import io

    from mptcplab.cli.present import table

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setenv("COLUMNS", "30")
    out = Tty()
    table(["flow", "scheduler", "goodput Mbit/s"], [["a-long-flow-name", "minrtt", "123.45"]], right={2}, stream=out)
    text = out.getvalue()
    assert "…" not in text and "a-long-flow-name" in text and "goodput Mbit/s" in text and "123.45" in text
