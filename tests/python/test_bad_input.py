"""Bad input (issue 2, acceptance 7): every case raises `mptcplab.ScenarioError` whose
`.field` is the path of the offending field and whose message says what was expected;
the CLI prints it as one stderr line and exits with code 2."""
from __future__ import annotations

import copy
import math
from typing import Any

import pytest

import mptcplab
from mptcplab import Scenario, ScenarioError

from conftest import minimal, run_cli, two_paths


def error_of(data: dict[str, Any]) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(data).validate()
    return info.value


def assert_error(data: dict[str, Any], field: str, *fragments: str) -> ScenarioError:
    err = error_of(data)
    assert err.field == field, f"field {err.field!r}, message {err.message!r}"
    for fragment in fragments:
        assert fragment.lower() in err.message.lower(), f"{fragment!r} not in {err.message!r}"
    return err


def edited(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    return Scenario.from_dict(base or minimal()).with_(path, value).to_dict()


def without(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    d = copy.deepcopy(data)
    node = d
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    if isinstance(node, list):
        del node[int(keys[-1])]
    else:
        del node[keys[-1]]
    return d


# -- sanity: the base scenarios are valid, so each failure below is the edit's ----------------
def test_the_minimal_and_two_path_scenarios_used_below_are_valid():
    Scenario.from_dict(minimal()).validate()
    Scenario.from_dict(two_paths()).validate()


# -- unknown fields ----------------------------------------------------------------------------
def test_an_unknown_field_in_a_link_is_named_with_its_path():
    assert_error(edited("links[0].rtae", "10 Mbit/s"), "links[0].rtae", "unknown field")


def test_an_unknown_top_level_field_is_rejected():
    assert_error(edited("duraton", "10 s"), "duraton", "unknown field")


def test_an_unknown_field_in_a_connection_is_rejected():
    assert_error(edited("connections[0].sheduler", "minrtt"), "connections[0].sheduler", "unknown field")


def test_an_unknown_component_name_lists_what_exists():
    err = assert_error(edited("connections[0].cc", "renoo"), "connections[0].cc", "renoo")
    assert "reno" in err.message.replace("renoo", "")


# -- units ---------------------------------------------------------------------------------------
def test_a_bare_number_for_a_rate_is_rejected_because_it_has_no_unit():
    assert_error(edited("links[0].rate", 100), "links[0].rate", "unit")


def test_a_number_string_without_unit_for_a_rate_is_rejected():
    assert_error(edited("links[0].rate", "100"), "links[0].rate", "no unit")


def test_a_bare_k_is_not_a_rate_unit():
    assert_error(edited("links[0].rate", "100 K"), "links[0].rate", "Mbit/s")


def test_mbit_without_per_second_is_not_a_rate_unit():
    assert_error(edited("links[0].rate", "10 Mbit"), "links[0].rate", "incomplete")


def test_a_jitter_over_a_second_names_the_link_direction():
    assert_error(edited("links[0].jitter", "2 s"), "links[0].jitter", "at most 1 s")
    assert_error(edited("links[0].reverse", {"jitter": "5 s"}), "links[0].reverse.jitter", "at most 1 s")


def test_bytes_per_second_is_not_accepted_as_a_rate():
    assert_error(edited("links[0].rate", "10 MB/s"), "links[0].rate", "bits per second")


def test_a_delay_without_unit_is_rejected():
    assert_error(edited("links[0].delay", "10"), "links[0].delay", "no unit")


def test_a_bare_number_for_a_delay_is_rejected():
    assert_error(edited("links[0].delay", 10), "links[0].delay", "unit")


def test_an_unknown_time_unit_is_rejected():
    assert_error(edited("links[0].delay", "10 sec"), "links[0].delay", "unknown time unit")


def test_a_bare_k_is_an_ambiguous_size():
    d = edited("connections[0].receive_buffer", "200 K")
    assert_error(d, "connections[0].receive_buffer", "ambiguous")


def test_a_queue_limit_without_unit_is_rejected():
    assert_error(edited("links[0].queue", "100"), "links[0].queue", "no unit")


def test_a_run_duration_without_unit_is_rejected():
    assert_error(edited("run.duration", "30"), "run.duration", "no unit")


# -- values out of range ---------------------------------------------------------------------
def test_a_zero_rate_is_rejected():
    assert_error(edited("links[0].rate", "0 Mbit/s"), "links[0].rate", "> 0")


def test_a_negative_rate_is_rejected():
    assert_error(edited("links[0].rate", "-5 Mbit/s"), "links[0].rate", "> 0")


def test_a_zero_poll_chunk_names_the_field():
    assert_error(edited("connections[0].app", {"kind": "bulk", "poll_chunk": "0 B"}), "connections[0].app.poll_chunk", "> 0")


def test_a_poll_chunk_is_a_bulk_option_only():
    err = error_of(edited("connections[0].app", {"kind": "stream", "poll_chunk": "64 KiB"}))
    assert "poll_chunk" in err.field + err.message


def test_a_zero_reverse_rate_is_rejected():
    assert_error(edited("links[0].reverse", {"rate": "0 kbit/s"}), "links[0].reverse.rate", "> 0")


def test_a_negative_delay_is_rejected():
    assert_error(edited("links[0].delay", "-1 ms"), "links[0].delay", ">= 0")


def test_a_loss_above_one_is_rejected():
    assert_error(edited("links[0].loss", 1.5), "links[0].loss", "[0, 1]")


def test_a_negative_loss_is_rejected():
    assert_error(edited("links[0].loss", -0.01), "links[0].loss", "[0, 1]")


def test_a_nan_loss_is_rejected_before_reaching_the_core():
    assert_error(edited("links[0].loss", math.nan), "links[0].loss", "finite")


def test_a_nan_loss_written_in_toml_is_rejected_with_its_field():
    text = Scenario.from_dict({k: v for k, v in minimal().items() if k != "links"}).to_toml()
    text += '\n[[links]]\nname = "l0"\nrate = "10 Mbit/s"\ndelay = "10 ms"\nloss = nan\n'
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text).validate()
    assert info.value.field == "links[0].loss"
    assert "finite" in info.value.message


def test_an_infinite_loss_is_rejected():
    assert_error(edited("links[0].loss", math.inf), "links[0].loss", "finite")


def test_a_nan_rate_is_rejected():
    assert_error(edited("links[0].rate", "nan Mbit/s"), "links[0].rate", "number")


# -- references ------------------------------------------------------------------------------
def test_a_path_naming_a_missing_link_is_rejected_with_the_link_name():
    d = two_paths()
    d["paths"][1]["links"] = ["nope"]
    assert_error(d, "paths[1].links[0]", "nope")


def test_a_connection_naming_a_missing_path_is_rejected_with_the_path_name():
    d = two_paths()
    d["connections"][0]["paths"] = ["p0", "p1", "p-missing"]
    assert_error(d, "connections[0].paths[2]", "p-missing")


def test_an_initial_path_outside_the_connection_paths_is_rejected():
    d = two_paths()
    d["connections"][0]["initial_path"] = "p-missing"
    assert_error(d, "connections[0].initial_path", "p-missing")


def test_a_background_flow_naming_a_missing_path_is_rejected():
    d = minimal()
    d["flows"] = [{"name": "bg", "path": "nowhere", "cc": "reno", "app": {"kind": "bulk"}}]
    assert_error(d, "flows[0].path", "nowhere")


# -- duplicates ------------------------------------------------------------------------------
def test_duplicate_link_names_are_rejected_at_the_second_one():
    d = two_paths()
    d["links"][1]["name"] = "l0"
    d["paths"][1]["links"] = ["l0"]
    assert_error(d, "links[1].name", "duplicate")


def test_duplicate_path_names_are_rejected_at_the_second_one():
    d = two_paths()
    d["paths"][1]["name"] = "p0"
    d["connections"][0]["paths"] = ["p0"]
    assert_error(d, "paths[1].name", "duplicate")


def test_a_flow_named_like_a_connection_is_a_duplicate():
    d = minimal()
    d["flows"] = [{"name": "c0", "path": "p0", "cc": "reno", "app": {"kind": "bulk"}}]
    assert_error(d, "flows[0].name", "duplicate")


# -- empty topologies --------------------------------------------------------------------------
def test_a_scenario_without_links_is_rejected():
    d = minimal()
    d["links"] = []
    assert_error(d, "links", "at least one")


def test_a_scenario_without_paths_is_rejected():
    d = minimal()
    d["paths"] = []
    assert_error(d, "paths", "at least one")


def test_a_scenario_without_flows_or_connections_is_rejected():
    d = without(minimal(), "connections")
    assert_error(d, "connections", "no traffic")


def test_a_path_without_links_is_rejected():
    d = minimal()
    d["paths"][0]["links"] = []
    assert_error(d, "paths[0].links", "at least one")


def test_a_connection_without_paths_is_rejected():
    d = minimal()
    d["connections"][0]["paths"] = []
    assert_error(d, "connections[0].paths", "at least one")


def test_a_missing_required_field_is_named():
    err = error_of(without(minimal(), "links", "0", "rate"))
    assert err.field in ("links[0].rate", "links[0]"), err
    assert "rate" in err.message


# -- errors raised in Python -----------------------------------------------------------------
def test_a_toml_syntax_error_names_the_line():
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml('name = "x"\n[[links]\nrate = "1 Mbit/s"\n')
    assert info.value.field == "<toml>"
    assert "line 2" in info.value.message


def test_a_missing_file_is_a_scenario_error():
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml("no/such/file.toml")
    assert info.value.field == "<file>"
    assert "no/such/file.toml" in info.value.message


def test_simulate_rejects_an_object_that_is_not_a_scenario():
    with pytest.raises(ScenarioError) as info:
        mptcplab.simulate(42)  # type: ignore[arg-type]
    assert info.value.field == "<scenario>"
    assert "int" in info.value.message


def test_simulate_rejects_a_negative_seed():
    with pytest.raises(ScenarioError) as info:
        mptcplab.simulate(minimal(), seed=-1)
    assert info.value.field == "run.seed"


def test_simulate_rejects_a_zero_duration():
    with pytest.raises(ScenarioError) as info:
        mptcplab.simulate(minimal(), duration=0)
    assert info.value.field == "run.duration"
    assert "positive" in info.value.message


def test_simulate_raises_the_same_error_as_validate():
    bad = edited("links[0].rate", "10 Mbit")
    with pytest.raises(ScenarioError) as info:
        mptcplab.simulate(bad)
    assert info.value.field == "links[0].rate"


def test_scenario_error_is_a_value_error_and_can_be_built_in_python():
    err = ScenarioError("links[0].rate", "expected a rate")
    assert isinstance(err, ValueError)
    assert (err.field, err.message) == ("links[0].rate", "expected a rate")
    assert str(err) == "links[0].rate: expected a rate"


def test_core_errors_are_caught_by_the_public_class():
    from mptcplab import _core

    with pytest.raises(ScenarioError):
        try:
            _core.validate('{"links": 1}')
        except _core.ScenarioError as raw:  # what the core raises, mapped in one place
            from mptcplab.errors import from_core

            mapped = from_core(raw)
            assert mapped.field == getattr(raw, "field")
            raise mapped from None


# -- the CLI -----------------------------------------------------------------------------------
def _assert_one_line_error(proc, field: str, fragment: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {field}: "), lines[0]
    assert fragment.lower() in lines[0].lower(), lines[0]
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr


def test_cli_run_prints_one_error_line_and_exits_2_on_a_bad_unit(tmp_toml):
    path = tmp_toml(Scenario.from_dict(edited("links[0].rate", "10 Mbit")).to_toml())
    _assert_one_line_error(run_cli("run", str(path)), "links[0].rate", "incomplete")


def test_cli_validate_prints_one_error_line_and_exits_2_on_a_missing_link(tmp_toml):
    d = two_paths()
    d["paths"][1]["links"] = ["nope"]
    path = tmp_toml(Scenario.from_dict(d).to_toml())
    _assert_one_line_error(run_cli("validate", str(path)), "paths[1].links[0]", "nope")


def test_cli_reports_a_toml_syntax_error_in_one_line(tmp_toml):
    path = tmp_toml('name = "x"\nrate = \n')
    _assert_one_line_error(run_cli("run", str(path)), "<toml>", "line 2")


def test_cli_reports_a_missing_file_in_one_line():
    _assert_one_line_error(run_cli("run", "does-not-exist.toml"), "<file>", "does-not-exist.toml")


def test_cli_rejects_a_duration_without_unit_in_one_line():
    _assert_one_line_error(run_cli("run", "--duration", "10 parsecs"), "run.duration", "10 parsecs")


def test_cli_debug_flag_shows_the_traceback(tmp_toml):
    path = tmp_toml(Scenario.from_dict(edited("links[0].rate", "10 Mbit")).to_toml())
    proc = run_cli("run", str(path), "--debug")
    assert proc.returncode == 2
    assert "Traceback" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: links[0].rate: ")


def test_the_loss_rules_name_their_field_and_the_accepted_values():
    assert_error(edited("tcp.loss_detection", "fack"), "tcp.loss_detection", "rack", "dupthresh")
    assert_error(edited("tcp.tail_loss_probe", "yes"), "tcp.tail_loss_probe")
