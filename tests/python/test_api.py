"""The Python API: Scenario, simulate, Result, save/load, schema and components."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

import mptcplab
from mptcplab import Result, Scenario

from conftest import REPO, SCENARIOS, minimal, run_python, two_paths

EXPECTED_COLUMNS = {
    "summary": {"flow", "kind", "cc", "scheduler", "path_manager", "subflows", "bytes_delivered",
                "goodput_mbps", "bytes_sent", "bytes_retrans", "completion_s", "ooo_max_bytes",
                "rcvbuf_max_bytes"},
    "subflow_summary": {"flow", "subflow", "path", "bytes_sent", "bytes_retrans", "bytes_acked",
                        "mean_srtt_ms", "throughput_mbps"},
    "subflows": {"time_s", "flow", "subflow", "path", "cwnd_pkts", "ssthresh_pkts", "srtt_ms",
                 "inflight_bytes", "bytes_sent", "bytes_acked", "bytes_retrans", "throughput_mbps", "sent_mbps"},
    "connections": {"time_s", "flow", "goodput_mbps", "bytes_delivered", "ooo_bytes", "rcvbuf_bytes",
                    "sndbuf_bytes"},
    "links": {"time_s", "link", "direction", "queue_pkts", "queue_bytes", "sent_pkts", "delivered_pkts",
              "dropped_pkts", "rate_mbps"},
}
META_KEYS = {"version", "model", "seed", "duration_s", "wall_s", "events", "data_segments_sent", "acks_sent", "scenario_name"}


@pytest.fixture(scope="module")
def default_run() -> Result:
    return mptcplab.simulate(Scenario.default(), duration=2)


# -- simulate ------------------------------------------------------------------------------
def test_simulating_the_default_scenario_returns_dataframes_with_the_expected_columns(default_run):
    for name, expected in EXPECTED_COLUMNS.items():
        frame = default_run.table(name)
        assert isinstance(frame, pd.DataFrame)
        assert expected <= set(frame.columns), f"{name} lacks {expected - set(frame.columns)}"
        assert len(frame) > 0, f"{name} is empty"
    assert META_KEYS <= set(default_run.meta)


def test_the_default_scenario_delivers_data_over_both_paths(default_run):
    summary = default_run.summary
    assert list(summary["kind"]) == ["mptcp"]
    assert summary["goodput_mbps"].iloc[0] > 1.0
    assert summary["bytes_delivered"].iloc[0] > 0
    subs = default_run.subflow_summary
    assert set(subs["path"]) == {"p-wifi", "p-lte"}
    assert (subs["bytes_acked"] > 0).all()


def test_the_duration_override_sets_the_simulated_time_and_the_sample_times(default_run):
    assert default_run.meta["duration_s"] == pytest.approx(2.0)
    times = default_run.timeseries.connections["time_s"]
    assert times.max() <= 2.0 + 1e-9
    # 100 ms samples by default
    assert len(times.unique()) >= 15
    assert default_run.scenario.to_dict()["run"]["duration"] == "2 s"


def test_timeseries_are_reachable_by_attribute_and_by_name(default_run):
    ts = default_run.timeseries
    assert ts["links"] is ts.links
    assert set(ts.keys()) == {"subflows", "connections", "links"}
    assert set(default_run.timeseries.links["direction"]) <= {"forward", "reverse"}


def test_simulate_accepts_a_path_a_dict_and_toml_text(tmp_path):
    text = Scenario.from_dict(minimal("1 s")).to_toml()
    path = tmp_path / "s.toml"
    path.write_text(text)
    results = [mptcplab.simulate(x) for x in (path, str(path), minimal("1 s"), text)]
    goodputs = {r.summary["goodput_mbps"].iloc[0] for r in results}
    assert len(goodputs) == 1 and next(iter(goodputs)) > 0


def test_the_seed_override_is_recorded_in_meta_and_in_the_scenario():
    res = mptcplab.simulate(minimal("1 s"), seed=42)
    assert res.meta["seed"] == 42
    assert res.scenario.to_dict()["run"]["seed"] == 42


def test_progress_is_called_with_simulated_and_end_time():
    calls: list[tuple[float, float]] = []
    mptcplab.simulate(two_paths("20 s"), progress=lambda t, end: calls.append((t, end)))
    assert calls, "progress is called at least once, at the end"
    assert calls[-1][0] == pytest.approx(20.0)
    times = [t for t, _ in calls]
    assert times == sorted(times)
    for t, end in calls:
        assert 0.0 <= t <= end == pytest.approx(20.0)


def test_a_bulk_transfer_of_fixed_size_completes_and_reports_its_completion_time():
    d = minimal("10 s")
    d["connections"][0]["app"] = {"kind": "bulk", "size": "1 MB"}
    res = mptcplab.simulate(d)
    row = res.summary.iloc[0]
    assert row["bytes_delivered"] == 1_000_000
    assert 0.8 < row["completion_s"] < 10.0  # 1 MB at 10 Mbit/s takes 0.8 s at best


def test_an_unbounded_transfer_has_no_completion_time():
    res = mptcplab.simulate(minimal("1 s"))
    assert math.isnan(res.summary["completion_s"].iloc[0])


def test_a_background_tcp_flow_appears_as_a_tcp_row():
    d = two_paths("2 s")
    d["flows"] = [{"name": "bg", "path": "p1", "cc": "cubic", "app": {"kind": "bulk"}}]
    summary = mptcplab.simulate(d).summary.set_index("flow")
    assert summary.loc["bg", "kind"] == "tcp"
    assert summary.loc["c0", "kind"] == "mptcp"
    assert summary.loc["bg", "bytes_delivered"] > 0


def test_subflow_status_changes_are_a_table_with_a_failover():
    d = two_paths("6 s")
    d["paths"][1]["backup"] = True
    d["links"][0]["schedule"] = [{"at": "2 s", "state": "down"}]
    ev = mptcplab.simulate(d).subflow_events
    assert {"time_s", "flow", "subflow", "path", "from", "to", "reason"} <= set(ev.columns)
    failed = ev[(ev["path"] == "p0") & (ev["to"] == "failed")]
    assert len(failed) == 1 and failed["reason"].iloc[0] == "rto" and 2.0 < failed["time_s"].iloc[0] < 3.0
    takeover = ev[(ev["path"] == "p1") & (ev["to"] == "backup")]
    assert list(takeover["time_s"]) == list(failed["time_s"])


# -- save / load ---------------------------------------------------------------------------
def test_save_and_load_round_trip_records_scenario_seed_and_version(tmp_path, default_run):
    out = default_run.save(tmp_path / "run")
    names = {p.name for p in out.iterdir()}
    assert {"meta.json", "scenario.toml", "summary.parquet", "subflow_summary.parquet", "subflows.parquet",
            "connections.parquet", "links.parquet"} <= names
    meta = json.loads((out / "meta.json").read_text())
    assert meta["seed"] == default_run.meta["seed"]
    assert meta["version"] == mptcplab.__version__
    assert meta["scenario_name"] == "wifi-lte"
    assert meta["scenario_sha256"] == default_run.scenario.sha256()
    assert isinstance(meta["wall_s"], float)

    loaded = Result.load(out)
    assert loaded.scenario == default_run.scenario
    assert loaded.meta == default_run.meta
    for name, frame in default_run.tables().items():
        pd.testing.assert_frame_equal(loaded.table(name), frame, check_dtype=False, obj=name)


def test_a_saved_scenario_reruns_to_the_same_rows(tmp_path):
    first = mptcplab.simulate(minimal("1 s"), seed=5, duration="1500 ms")
    first.save(tmp_path / "a")
    again = mptcplab.simulate(tmp_path / "a" / "scenario.toml")
    pd.testing.assert_frame_equal(first.timeseries.subflows, again.timeseries.subflows)


def test_loading_a_directory_without_meta_is_an_error(tmp_path):
    with pytest.raises(mptcplab.ScenarioError):
        Result.load(tmp_path)


# -- schema, components, version ---------------------------------------------------------------
def test_the_schema_is_valid_json_and_describes_links():
    schema = json.loads(mptcplab.schema())
    assert isinstance(schema, dict)
    assert "links" in json.dumps(schema)
    assert "links" in schema.get("properties", {})


def test_components_list_the_algorithms_of_issue_2():
    comps = mptcplab.components()
    names = {name for _, name, _ in comps}
    assert {"minrtt", "fullmesh", "reno", "cubic", "bulk"} <= names
    kinds = {kind for kind, _, _ in comps}
    assert len(kinds) >= 4
    assert all(desc and "\n" not in desc for _, _, desc in comps)


def test_the_package_version_is_the_core_version():
    from mptcplab import _core

    assert mptcplab.__version__ == _core.version()
    assert mptcplab.__version__.count(".") >= 2


# -- Scenario --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_every_example_scenario_validates(path: Path):
    Scenario.from_toml(path).validate()


def test_the_example_folder_holds_the_promised_scenarios():
    names = {p.name for p in SCENARIOS.glob("*.toml")}
    assert {"two-paths-wifi-lte.toml", "shared-bottleneck.toml", "multihomed.toml", "rbpm-4path-a.toml",
            "rbpm-4path-b.toml"} <= names


def test_the_multihomed_example_opens_one_subflow_per_isp_pair():
    res = mptcplab.simulate(SCENARIOS / "multihomed.toml", duration=2)
    paths = set(res.subflow_summary["path"])
    assert paths == {"uninett~cernet", "uninett~cnunicom", "powertech~cernet", "powertech~cnunicom"}
    assert res.summary["subflows"].iloc[0] == 4


@pytest.mark.parametrize("name", ["bbr-100M", "cubic-100M", "mptcp-2x200M"])
def test_the_bench_scenarios_validate(name):
    Scenario.bench(name).validate()


def test_with_sets_a_nested_field_and_leaves_the_original_alone():
    s = Scenario.from_dict(minimal())
    t = s.with_("connections[0].cc", "cubic").with_("tcp.initial_cwnd", 4)
    assert t.to_dict()["connections"][0]["cc"] == "cubic"
    assert t.to_dict()["tcp"] == {"initial_cwnd": 4}
    assert s.to_dict()["connections"][0]["cc"] == "reno"


def test_with_rejects_an_index_past_the_end():
    with pytest.raises(mptcplab.ScenarioError) as info:
        Scenario.from_dict(minimal()).with_("links[3].rate", "1 Mbit/s")
    assert info.value.field == "links[3]"


@pytest.mark.parametrize("given,text", [(30, "30 s"), (0.25, "250 ms"), ("10 s", "10 s"), ("1.5", "1500 ms")])
def test_with_duration_writes_seconds_with_a_unit(given, text):
    assert Scenario.from_dict(minimal()).with_duration(given).to_dict()["run"]["duration"] == text


def test_validate_returns_a_scenario_that_keeps_units_as_given_and_validates_again():
    d = minimal()
    d["links"][0]["rate"] = "10000 kbit/s"
    norm = Scenario.from_dict(d).validate()
    assert norm.to_dict()["links"][0]["rate"] == "10000 kbit/s"
    assert norm.validate() == norm


def test_validate_writes_out_every_default():
    norm = Scenario.from_dict(minimal()).validate().to_dict()
    assert norm["run"]["seed"] == 1
    assert norm["run"]["sample_interval"] == "100 ms"
    assert norm["links"][0]["loss"] == 0.0
    conn = (norm.get("connections") or norm.get("flows"))[0]
    assert conn["cc"] == "reno"  # given, kept
    assert conn["scheduler"] == "minrtt"
    assert conn["receive_buffer"] == "6 MiB"


def test_the_default_scenario_is_shipped_as_package_data():
    import mptcplab.scenario as sc

    assert (sc._DATA / "default.toml").is_file()
    s = Scenario.default()
    assert s.name == "wifi-lte"
    assert [link["name"] for link in s.to_dict()["links"]] == ["wifi", "lte"]


# -- import cost ---------------------------------------------------------------------------------
def test_importing_mptcplab_does_not_import_pandas_or_plotting_libraries():
    proc = run_python(
        "import sys, mptcplab; heavy = [m for m in ('pandas', 'pyarrow', 'matplotlib', 'dask', 'statsmodels', 'numpy') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_importing_mptcplab_is_fast():
    proc = run_python(
        "import time; t = time.perf_counter(); import mptcplab; print(time.perf_counter() - t)"
    )
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) < 0.5  # the target is ~0.1 s; slack for a loaded CI machine



def test_the_trace_holds_only_the_chosen_flows(tmp_path):
    trace = tmp_path / "trace.csv"
    mptcplab.simulate(SCENARIOS / "shared-bottleneck.toml", duration=2, trace=trace, trace_flows=["background"])
    frame = pd.read_csv(trace)
    assert len(frame) > 0
    assert set(frame["flow"]) == {"background"}


def test_tracing_an_unknown_flow_is_a_scenario_error(tmp_path):
    with pytest.raises(mptcplab.ScenarioError) as info:
        mptcplab.simulate(minimal("1 s"), trace=tmp_path / "t.csv", trace_flows=["nope"])
    assert "nope" in info.value.message


def test_time_series_come_packed_from_the_core_and_unpack_to_the_same_values_and_dtypes():
    # Issue 14: the time series' numeric columns cross from the core as (typecode, bytes),
    # 8 bytes a value; tables, column lists and row counts read them as before.
    from mptcplab import _core
    from mptcplab.result import unpack_column

    scn = Scenario.default().with_duration("3 s")
    raw = _core.simulate(scn.to_json(), None, None, None, None)
    subs = raw["subflows"]
    assert subs["cwnd_pkts"][0] == "q" and subs["srtt_ms"][0] == "d"
    assert isinstance(subs["flow"], list)
    n = len(subs["flow"])
    assert n > 0 and len(subs["time_s"][1]) == 8 * n
    cwnd = unpack_column(subs["cwnd_pkts"])
    assert all(type(v) is int for v in cwnd) and max(cwnd) > 0
    assert all(type(v) is float for v in unpack_column(subs["time_s"]))
    res = mptcplab.simulate(scn)
    frame = res.timeseries.subflows
    assert str(frame["cwnd_pkts"].dtype) == "int64" and str(frame["srtt_ms"].dtype) == "float64"
    assert frame["cwnd_pkts"].tolist() == cwnd
    assert res.columns("subflows")["cwnd_pkts"] == cwnd
    assert res.num_rows("subflows") == n == len(frame)
    # Names are shared objects, one per flow, equal to the summary's.
    assert set(subs["flow"]) <= set(res.summary["flow"])
