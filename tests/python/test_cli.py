"""The `mptcplab` command: run, list, schema, validate, bench."""
from __future__ import annotations

import json

import pytest

from mptcplab import Scenario
from mptcplab.cli import Progress, fmt_bytes, format_summary, render_table

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


def test_the_progress_line_stays_silent_for_short_runs():
    import io

    stream = io.StringIO()
    progress = Progress(stream, after_s=3600)
    progress(1.0, 10.0)
    progress.close()
    assert stream.getvalue() == ""


def test_the_progress_line_on_a_non_terminal_is_plain_lines():
    import io

    stream = io.StringIO()
    progress = Progress(stream, after_s=0.0, every_s=0.0)
    progress(5.0, 10.0)
    progress.close()
    assert stream.getvalue().startswith("simulating:")
    assert "\r" not in stream.getvalue() and "50 %" in stream.getvalue()


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
