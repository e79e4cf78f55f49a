"""Issue 6: `[run] profile = "upstream"` (docs/upstream-profile.md) from TOML, the
Python API and the command line."""
from __future__ import annotations

import pytest

import mptcplab
from mptcplab import Scenario, ScenarioError

from conftest import run_cli, two_paths

UPSTREAM_TOML = """
[run]
duration = "3 s"
profile = "upstream"
[[links]]
name = "fast"
rate = "20 Mbit/s"
delay = "10 ms"
[[links]]
name = "slow"
rate = "10 Mbit/s"
delay = "30 ms"
[[paths]]
name = "pf"
links = ["fast"]
[[paths]]
name = "ps"
links = ["slow"]
[[connections]]
name = "mp"
paths = "all"
cc = "cubic"
path_manager_options = { subflows_limit = 8, add_addr_accepted = 8 }
"""


def test_the_profile_is_set_from_toml_and_selects_the_upstream_components():
    result = mptcplab.simulate(Scenario.from_toml(UPSTREAM_TOML))
    assert result.meta["profile"] == "upstream"
    row = result.summary.iloc[0]
    assert (row["scheduler"], row["path_manager"], row["subflows"]) == ("upstream", "in_kernel", 2)
    subs = result.subflow_summary
    assert (subs["bytes_sent"] > 0).all(), "both paths carry data"
    assert (subs["sched_penalised"] == 0).all() and (subs["sched_copied_segs"] == 0).all()


def test_the_default_profile_is_out_of_tree_and_is_recorded():
    result = mptcplab.simulate(Scenario.from_dict(two_paths("1 s")))
    assert result.meta["profile"] == "out_of_tree"
    assert result.summary.iloc[0]["scheduler"] == "minrtt"


def test_explicit_fields_override_the_profile():
    d = two_paths("1 s")
    d["run"]["profile"] = "upstream"
    d["connections"][0]["scheduler"] = "minrtt"
    row = mptcplab.simulate(Scenario.from_dict(d)).summary.iloc[0]
    assert (row["scheduler"], row["path_manager"]) == ("minrtt", "in_kernel")


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["run"].__setitem__("profile", "mainline"), "run.profile"),
        (lambda d: d["connections"][0].__setitem__("path_manager_options", {"subflows_limit": 9}), "connections[0].path_manager_options.subflows_limit"),
        (lambda d: d["connections"][0].__setitem__("penalisation", True), "connections[0].penalisation"),
    ],
)
def test_bad_profile_input_names_the_field(edit, field):
    d = two_paths("1 s")
    d["run"]["profile"] = "upstream"
    edit(d)
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict(d).validate()
    assert err.value.field == field


def test_profiles_and_their_gaps_are_machine_readable():
    names = [p["name"] for p in mptcplab.profiles()]
    assert names == ["out_of_tree", "upstream"]
    gaps = mptcplab.profile_gaps("upstream")
    assert "spurious_recovery_undo" in {g["name"] for g in gaps}
    assert all(g["kernel"] and g["sim"] for g in gaps)
    assert mptcplab.profile_gaps("out_of_tree") == []
    with pytest.raises(ValueError, match="upstream"):
        mptcplab.profile_gaps("mainline")
    up = next(p for p in mptcplab.profiles() if p["name"] == "upstream")
    assert any(s["field"] == "connections[].scheduler" and s["value"] == "upstream" for s in up["settings"])


def test_list_shows_the_profiles_and_markdown_the_gaps():
    proc = run_cli("list")
    assert proc.returncode == 0, proc.stderr
    rows = [r.split() for r in proc.stdout.splitlines()[1:] if r.strip()]
    assert ["profile", "upstream"] == rows[-1][:2] or any(r[:2] == ["profile", "upstream"] for r in rows)
    assert any(r[:2] == ["scheduler", "upstream"] for r in rows)
    assert any(r[:2] == ["path_manager", "in_kernel"] for r in rows)
    proc = run_cli("list", "--markdown")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "| `spurious_recovery_undo` |" in out
    assert "| path_manager | `in_kernel` |" in out and "`subflows_limit` (2)" in out


def test_the_normalized_scenario_keeps_the_profile():
    data = Scenario.from_toml(UPSTREAM_TOML).validate().to_dict()
    assert data["run"]["profile"] == "upstream"
    assert data["connections"][0]["scheduler"] == "upstream"
    assert "send_buffer" not in data["connections"][0]
