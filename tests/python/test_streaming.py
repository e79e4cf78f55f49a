"""Issue 5: the streaming application, the delay metrics of seed 002 and the other
per-run metrics of reference metrics.md §6.3–6.6 through the Python API, the run
statistics (mptcplab.stats) and the bad-input paths of the stream app."""
from __future__ import annotations

import copy
import math
from typing import Any

import pytest

import mptcplab
from mptcplab import Result, Scenario, ScenarioError
from mptcplab.metrics import jain_index, protocol_delay
from mptcplab.stats import mean_ci, over_runs, t_cdf, t_quantile

from conftest import REPO, minimal, run_cli, two_paths


def stream(duration: str = "3 s", **app: Any) -> dict[str, Any]:
    """Two disjoint paths (10 Mbit/s 10 ms, 5 Mbit/s 30 ms), 1 % loss on the first, and
    one LIA connection streaming."""
    d = two_paths(duration)
    d["links"][0]["loss"] = 0.01
    d["connections"][0]["cc"] = "lia"
    d["connections"][0]["app"] = {"kind": "stream", **app}
    return d


@pytest.fixture(scope="module")
def run() -> Result:
    return mptcplab.simulate(Scenario.from_dict(stream()))


# -- the pure formulas -------------------------------------------------------------------------
def test_protocol_delay_matches_the_reference_vectors():
    assert protocol_delay([20, 80], [0, 40]) == (120, 40)     # metrics.md §6.3
    assert protocol_delay([20, 80], [0, 0]) == (80, 0)        # no waiting: T_over = max SRTT, ζ = 0
    assert protocol_delay([20, 80], [50, 0]) == (80, 0)       # ζ clamps at 0 (Eq. 8)
    with pytest.raises(ValueError):
        protocol_delay([20, 80], [0])


def test_jain_index_matches_the_reference_vectors():
    assert jain_index([1, 1]) == pytest.approx(1.0)
    assert jain_index([1, 0]) == pytest.approx(0.5)
    assert jain_index([3, 1]) == pytest.approx(0.8)            # 16 / 20
    assert jain_index([5, 5, 5, 5]) == pytest.approx(1.0)
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)     # the floor 1/n
    assert math.isnan(jain_index([]))


@pytest.mark.parametrize("p,df,t", [
    (0.975, 1, 12.7062), (0.975, 2, 4.3027), (0.975, 4, 2.7764), (0.975, 9, 2.2622),
    (0.975, 29, 2.0452), (0.975, 100, 1.9840), (0.95, 10, 1.8125), (0.995, 5, 4.0321),
])
def test_the_t_quantile_matches_printed_tables(p, df, t):
    assert t_quantile(p, df) == pytest.approx(t, abs=5e-4)
    assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=1e-10)
    assert t_quantile(1 - p, df) == pytest.approx(-t, abs=5e-4)


def test_mean_ci_is_the_mean_and_the_student_t_half_width():
    m, h = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert m == 3.0
    assert h == pytest.approx(2.7764 * math.sqrt(2.5) / math.sqrt(5), rel=1e-4)
    assert mean_ci([7.0]) == (7.0, pytest.approx(math.nan, nan_ok=True))
    assert mean_ci([2.0, 2.0, 2.0]) == (2.0, 0.0)
    assert mean_ci([1.0, float("nan"), 3.0])[0] == 2.0, "NaN runs are left out"


# -- the streaming app -------------------------------------------------------------------------
def test_a_stream_writes_frames_of_bitrate_over_frame_rate_from_establishment(run):
    frames = run.frames
    assert {"flow", "frame", "size_bytes", "scheduled_s", "enqueued_s", "taken_s", "acked_s", "delivered_s",
            "wait_ms", "send_ms", "ack_ms", "delivery_ms"} <= set(frames.columns)
    assert (frames["size_bytes"] == 18_750).all(), "4.5 Mbit/s / 30 frame/s"
    gaps = frames["scheduled_s"].diff().dropna()
    assert gaps.max() == pytest.approx(1 / 30, abs=1e-9) and gaps.min() == pytest.approx(1 / 30, abs=1e-9)
    first = frames["scheduled_s"].iloc[0]
    assert 0.02 <= first <= 0.03, "frame 0 at the handshake's end (one 20 ms RTT)"
    assert len(frames) == int((3.0 - first) * 30) + 1
    done = frames.dropna(subset=["acked_s"])
    assert len(done) > 0.8 * len(frames)
    assert (done["ack_ms"] >= done["send_ms"]).all() and (done["send_ms"] >= done["wait_ms"]).all()


def test_the_delay_table_has_one_sample_per_acknowledged_segment(run):
    d = run.delay
    assert {"time_s", "flow", "dsn", "len", "taken_s", "subflow", "delay_ms", "theta_ms", "tau_ms", "tau_max_ms",
            "t_over_ms", "zeta_ms", "zeta_measured_ms"} <= set(d.columns)
    assert (d["dsn"].diff().dropna() == d["len"].iloc[:-1].to_numpy()).all(), "contiguous, in order"
    assert (d["t_over_ms"] >= d["tau_max_ms"] - 1e-9).all()
    assert ((d["zeta_ms"] - (d["t_over_ms"] - d["tau_max_ms"])).abs() < 1e-9).all()
    assert (d["delay_ms"] > 0).all()


def test_the_run_metrics_hold_the_seed_002_table_1_columns(run):
    m = run.metrics()
    for key in ("upsilon_av_ms", "upsilon_max_ms", "zeta_av_ms", "zeta_max_ms", "delay_av_ms", "delay_max_ms",
                "zeta_measured_av_ms", "zeta_measured_max_ms", "srtt_av_ms[p0]", "srtt_max_ms[p1]",
                "drop_rate_segs_per_s[p0]", "drop_fraction[p0]", "retrans_rate_segs_per_s[p0]",
                "queue_drop_rate_segs_per_s[p1]", "throughput_mean_mbps", "throughput_max_mbps",
                "goodput_mean_mbps", "utilisation", "capacity_mbps", "frames", "frame_ack_av_ms"):
        assert key in m, key
    d = run.delay
    assert m["upsilon_av_ms"] == pytest.approx(d["t_over_ms"].mean())
    assert m["zeta_max_ms"] == pytest.approx(d["zeta_ms"].max())
    assert m["delay_max_ms"] == pytest.approx(d["delay_ms"].max())
    assert m["samples"] == len(d)
    assert m["capacity_mbps"] == pytest.approx(15.0), "10 + 5 Mbit/s disjoint bottlenecks"
    assert m["utilisation"] == pytest.approx(m["goodput_mbps"] / 15.0)
    assert m["drop_rate_segs_per_s[p0]"] > 0 and m["drop_rate_segs_per_s[p1]"] == 0, "loss only on p0"
    assert 0.003 < m["drop_fraction[p0]"] < 0.03, "about the 1 % loss"
    assert m["throughput_max_mbps"] >= m["throughput_mean_mbps"] > 0
    assert "jain_index" not in m, "one flow: no fairness index"


def test_the_tables_survive_save_and_load(tmp_path, run):
    run.save(tmp_path / "r")
    again = Result.load(tmp_path / "r")
    assert len(again.delay) == len(run.delay)
    assert list(again.frames["ack_ms"].fillna(-1)) == pytest.approx(list(run.frames["ack_ms"].fillna(-1)))
    assert again.metrics()["upsilon_av_ms"] == pytest.approx(run.metrics()["upsilon_av_ms"])


def test_the_same_stream_and_seed_give_identical_samples():
    a = mptcplab.simulate(Scenario.from_dict(stream("2 s")), seed=4)
    b = mptcplab.simulate(Scenario.from_dict(stream("2 s")), seed=4)
    assert a.delay.equals(b.delay) and a.frames.equals(b.frames)


def test_a_bulk_run_has_empty_delay_and_frame_tables_unless_asked():
    bulk = mptcplab.simulate(Scenario.from_dict(two_paths("1 s")))
    assert len(bulk.delay) == 0 and len(bulk.frames) == 0
    m = bulk.metrics()
    assert m["samples"] == 0 and math.isnan(m["upsilon_av_ms"]) and "frames" not in m
    asked = mptcplab.simulate(Scenario.from_dict(two_paths("1 s")).with_("run.delay_samples", True))
    assert len(asked.delay) > 100
    assert asked.summary.equals(bulk.summary), "collecting samples changes nothing else"


def test_jain_index_of_competing_flows_is_in_the_metrics():
    d = minimal("3 s")
    d["flows"] = [{"name": "tcp", "path": "p0", "cc": "reno", "app": {"kind": "bulk"}}]
    r = mptcplab.simulate(Scenario.from_dict(d))
    m = r.metrics()
    assert m["jain_index"] == pytest.approx(jain_index(r.summary["goodput_mbps"]))
    assert m["jain_index"] == pytest.approx(r.fairness())
    assert 0.5 <= m["jain_index"] <= 1.0
    assert r.metrics("tcp")["goodput_mbps"] == pytest.approx(float(r.summary.set_index("flow").loc["tcp", "goodput_mbps"]))
    with pytest.raises(ScenarioError):
        r.metrics("nobody")


def test_over_runs_averages_every_metric_with_a_t_interval():
    runs = [mptcplab.simulate(Scenario.from_dict(stream("1 s")), seed=s) for s in (1, 2, 3)]
    table = over_runs(runs)
    assert {"mean", "ci", "n", "lo", "hi"} <= set(table.columns)
    vals = [r.metrics()["upsilon_av_ms"] for r in runs]
    m, h = mean_ci(vals)
    assert table.loc["upsilon_av_ms", "mean"] == pytest.approx(m)
    assert table.loc["upsilon_av_ms", "ci"] == pytest.approx(h)
    assert table.loc["upsilon_av_ms", "n"] == 3
    assert over_runs([{"x": 1.0}, {"x": 3.0}]).loc["x", "mean"] == 2.0


def test_the_cli_prints_the_delay_table_for_a_stream(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(Scenario.from_dict(stream("1 s")).to_toml())
    out = run_cli("run", str(path), "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "υ av/max ms (Eq. 2)" in out.stdout and "frames acked" in out.stdout


def test_validate_writes_out_the_stream_defaults():
    app = Scenario.from_dict(stream()).validate().to_dict()["connections"][0]["app"]
    assert app == {"kind": "stream", "bitrate": "4.5 Mbit/s", "frame_rate": 30.0}


# -- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("app,field,fragment", [
    ({"kind": "stream", "bitrate": 4_500_000}, "connections[0].app.bitrate", "unit"),
    ({"kind": "stream", "bitrate": "4.5 MB/s"}, "connections[0].app.bitrate", "bits per second"),
    ({"kind": "stream", "bitrate": "-1 Mbit/s"}, "connections[0].app.bitrate", "> 0"),
    ({"kind": "stream", "bitrate": "100 bit/s"}, "connections[0].app.bitrate", "less than 1 B"),
    ({"kind": "stream", "frame_rate": 0}, "connections[0].app.frame_rate", "(0, 10000]"),
    ({"kind": "stream", "frame_rate": float("nan")}, "connections[0].app.frame_rate", "finite"),
    ({"kind": "stream", "frame_rate": float("inf")}, "connections[0].app.frame_rate", "finite"),
    ({"kind": "stream", "frame_rate": "30 fps"}, "connections[0].app.frame_rate", "invalid type"),
    ({"kind": "stream", "duration": "0 s"}, "connections[0].app.duration", "> 0"),
    ({"kind": "stream", "duration": 10}, "connections[0].app.duration", "unit"),
    ({"kind": "stream", "size": "1 MB"}, "connections[0].app.size", "unknown field"),
    ({"kind": "streaming"}, "connections[0].app.kind", "unknown variant"),
])
def test_bad_stream_values_raise_a_scenario_error_naming_the_field(app, field, fragment):
    d = minimal()
    d["connections"][0]["app"] = app
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(d).validate()
    assert info.value.field == field, info.value.message
    assert fragment.lower() in info.value.message.lower()


def test_a_bad_stream_in_a_file_is_one_line_on_stderr_and_exit_code_2(tmp_path):
    d = minimal()
    d["connections"][0]["app"] = {"kind": "stream", "frame_rate": -1}
    text = Scenario.from_dict(d).to_toml()
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out = run_cli("run", str(path))
    assert out.returncode == 2
    assert out.stderr.strip().startswith("error: connections[0].app.frame_rate:")
    assert "Traceback" not in out.stderr


def test_metrics_of_a_result_saved_without_the_new_tables_are_nan_not_an_error(tmp_path, run):
    run.save(tmp_path / "old")
    for name in ("delay_samples", "frames"):
        (tmp_path / "old" / f"{name}.parquet").unlink()
    import pyarrow.parquet as pq

    path = tmp_path / "old" / "subflow_summary.parquet"
    table = pq.read_table(path)
    pq.write_table(table.drop(["segs_sent", "segs_retrans", "drops_queue", "drops_loss", "drops_down", "active_s",
                               "tau_av_ms", "tau_max_ms"]), path)
    m = Result.load(tmp_path / "old").metrics()
    assert m["goodput_mbps"] == pytest.approx(run.metrics()["goodput_mbps"])
    assert m["samples"] == 0 and math.isnan(m["upsilon_av_ms"]) and math.isnan(m["drop_rate_segs_per_s[p0]"])
