"""Issue 3 front end: choosing congestion controls and their options, the generated
algorithm table, and the per-ACK CC trace."""
from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import mptcplab
from mptcplab import ScenarioError

from conftest import REPO, minimal, run_cli, two_paths


def test_the_catalogue_lists_every_algorithm_with_kind_source_and_options():
    cat = {c["name"]: c for c in mptcplab.congestion_controls()}
    for name in ["reno", "cubic", "hybla", "scalable", "vegas", "bbr", "coupled_bbr"]:
        assert name in cat, name
        assert cat[name]["source"] and cat[name]["departures"]
    assert cat["coupled_bbr"]["kind"] == "coupled"
    assert cat["bbr"]["kind"] == "uncoupled"
    ai = {o["name"]: o for o in cat["scalable"]["options"]}["ai_cnt"]
    assert ai["default"] == "50"


def test_each_connection_and_flow_runs_its_own_controller_with_options():
    sc = two_paths("3 s")
    sc["connections"][0]["cc"] = "coupled_bbr"
    sc["connections"][0]["cc_options"] = {"phase_length": "min_rtt", "lt_bw": False}
    sc["flows"] = [{"name": "bg", "path": sc["paths"][0]["name"], "cc": "scalable", "cc_options": {"ai_cnt": 100}}]
    res = mptcplab.simulate(sc)
    flows = res.summary.set_index("flow")
    assert flows.loc["bg", "goodput_mbps"] > 0
    assert flows.loc[sc["connections"][0]["name"], "goodput_mbps"] > 0


@pytest.mark.parametrize(
    "cc, options, field, words",
    [
        ("warp", None, "connections[0].cc", "expected one of"),
        ("scalable", {"ai_cnt": 0}, "connections[0].cc_options.ai_cnt", "integer in [1,"),
        ("scalable", {"ai": 50}, "connections[0].cc_options.ai", "its options are: ai_cnt"),
        ("reno", {"x": 1}, "connections[0].cc_options.x", "its options are: growth"),
        ("bbr", {"lt_bw": "yes"}, "connections[0].cc_options.lt_bw", "expected true or false"),
        ("coupled_bbr", {"phase_length": "rtt"}, "connections[0].cc_options.phase_length", '"srtt", "min_rtt"'),
        ("cubic", {"hystart": 1.5}, "connections[0].cc_options.hystart", "expected an integer"),
    ],
)
def test_bad_cc_names_and_options_name_the_field(cc, options, field, words):
    sc = minimal()
    sc["connections"][0]["cc"] = cc
    if options is not None:
        sc["connections"][0]["cc_options"] = options
    with pytest.raises(ScenarioError) as e:
        mptcplab.simulate(sc)
    assert e.value.field == field
    assert words in e.value.message, e.value.message


def test_a_bad_cc_option_in_the_cli_is_one_stderr_line_and_exit_2(tmp_path):
    sc = minimal()
    sc["connections"][0]["cc"] = "vegas"
    sc["connections"][0]["cc_options"] = {"alpha": -1}
    path = tmp_path / "bad.toml"
    path.write_text(mptcplab.Scenario.from_dict(sc).to_toml(), encoding="utf-8")
    r = run_cli("run", str(path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "connections[0].cc_options.alpha" in lines[0], r.stderr


def test_list_markdown_prints_the_registry_table():
    r = run_cli("list", "--markdown")
    assert r.returncode == 0
    assert "| name | kind | source | departures from the source | options (default) |" in r.stdout
    assert "| `coupled_bbr` | coupled |" in r.stdout


def test_the_docs_table_is_the_generated_one():
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_cc_docs.py"), "--check"], cwd=REPO)
    assert r.returncode == 0, "docs/congestion-control.md is stale: run scripts/gen_cc_docs.py"


def test_ack_rows_of_the_trace_carry_the_controllers_state(tmp_path):
    sc = minimal("3 s")
    sc["connections"][0]["cc"] = "bbr"
    trace = tmp_path / "t.csv"
    mptcplab.simulate(sc, trace=trace)
    t = pd.read_csv(trace)
    acks = t[t.event == "ack"]
    assert len(acks) > 100
    assert {"ssthresh_pkts", "ca_state", "cc_mode", "pacing_mbps"} <= set(t.columns)
    assert set(acks.cc_mode) >= {"startup", "probe_bw"}
    assert (acks.pacing_mbps > 0).all()
