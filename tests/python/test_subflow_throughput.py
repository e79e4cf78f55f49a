"""One meaning of per-subflow throughput on both backends (issue 12, item 4): bytes
acknowledged at the subflow level (the kernel's tcpi_bytes_acked), with the transmitted
rate (reference metrics.md §6.1, tcpi_bytes_sent) beside it as `sent_mbps`."""
from __future__ import annotations

import json

import pytest

import mptcplab
from mptcplab import Result, Scenario
from mptcplab.kernel.backend import subflow_sample, subflow_summary_row

from conftest import two_paths

INTERVAL_S = 0.1  # the default sample interval


@pytest.fixture(scope="module")
def lossy_run() -> Result:
    # 3 % loss on path p0: its retransmissions make bytes sent and bytes acked differ.
    d = two_paths("5 s")
    d["links"][0]["loss"] = 0.03
    return mptcplab.simulate(Scenario.from_dict(d))


def _tcp_info(sent: int, acked: int, retrans: int = 0) -> dict[str, int]:
    """A subflow's TCP_INFO sample as the kernel backend's collector reports it."""
    return {"bytes_sent": sent, "bytes_acked": acked, "bytes_retrans": retrans, "snd_mss": 1448, "snd_cwnd": 10,
            "snd_ssthresh": 2 ** 31 - 1, "rtt_us": 40_000, "rttvar_us": 5_000, "min_rtt_us": 30_000,
            "unacked": 3, "sacked": 0, "lost": 0, "retrans": 0, "delivery_rate": 1_000_000,
            "pacing_rate": 2_000_000, "snd_wnd": 65_535, "total_rto": 0, "ca_state": 0}


def test_kernel_subflow_sample_counts_bytes_acked_as_throughput_and_bytes_sent_as_sent_rate():
    first = subflow_sample(0.1, "mp", 0, "p0", _tcp_info(150_000, 100_000), None, INTERVAL_S, 1448)
    assert first["throughput_mbps"] == pytest.approx(100_000 * 8 / INTERVAL_S / 1e6)   # 8 Mbit/s
    assert first["sent_mbps"] == pytest.approx(150_000 * 8 / INTERVAL_S / 1e6)         # 12 Mbit/s
    second = subflow_sample(0.2, "mp", 0, "p0", _tcp_info(200_000, 180_000, 10_000), (150_000.0, 100_000.0),
                            INTERVAL_S, 1448)
    assert second["throughput_mbps"] == pytest.approx(80_000 * 8 / INTERVAL_S / 1e6)
    assert second["sent_mbps"] == pytest.approx(50_000 * 8 / INTERVAL_S / 1e6)
    assert second["inflight_bytes"] == 3 * 1448
    summary = subflow_summary_row(second, [40.0, 42.0], active_s=2.0)
    assert summary["throughput_mbps"] == pytest.approx(180_000 * 8 / 2.0 / 1e6)
    assert summary["mean_srtt_ms"] == pytest.approx(41.0)


def test_the_simulator_series_integrates_to_bytes_acked_and_sent_mbps_to_bytes_sent(lossy_run):
    ts = lossy_run.timeseries.subflows
    for (_, sub), g in ts.groupby(["flow", "subflow"]):
        g = g.sort_values("time_s")
        acked = (g["throughput_mbps"] * 1e6 / 8 * INTERVAL_S).sum()
        sent = (g["sent_mbps"] * 1e6 / 8 * INTERVAL_S).sum()
        assert acked == pytest.approx(g["bytes_acked"].iloc[-1], abs=1.0), f"subflow {sub}"
        assert sent == pytest.approx(g["bytes_sent"].iloc[-1], abs=1.0), f"subflow {sub}"
    lossy = lossy_run.subflow_summary.set_index("path").loc["p0"]
    assert lossy["bytes_retrans"] > 0 and lossy["bytes_sent"] > lossy["bytes_acked"], "the two rates differ here"


def test_both_backends_give_the_same_throughput_column_for_the_same_counters(lossy_run):
    # Feed the simulator's cumulative counters through the kernel backend's row builder:
    # the two throughput columns (and the sent rates) must agree sample by sample.
    ts = lossy_run.timeseries.subflows
    for (_, sub), g in ts.groupby(["flow", "subflow"]):
        prev = None
        for row in g.sort_values("time_s").itertuples():
            k = subflow_sample(row.time_s, row.flow, sub, row.path,
                               _tcp_info(int(row.bytes_sent), int(row.bytes_acked)), prev, INTERVAL_S, 1448)
            prev = (float(row.bytes_sent), float(row.bytes_acked))
            assert k["throughput_mbps"] == pytest.approx(row.throughput_mbps, rel=1e-9, abs=1e-9)
            assert k["sent_mbps"] == pytest.approx(row.sent_mbps, rel=1e-9, abs=1e-9)
    summ = lossy_run.subflow_summary
    for row in summ.itertuples():
        active = row.active_s
        k = subflow_summary_row({"flow": row.flow, "subflow": row.subflow, "path": row.path,
                                 "bytes_sent": row.bytes_sent, "bytes_retrans": row.bytes_retrans,
                                 "bytes_acked": row.bytes_acked, "rto_count": row.rto_count}, [], active)
        assert k["throughput_mbps"] == pytest.approx(row.throughput_mbps, rel=1e-9)


def test_a_format_1_simulator_result_loads_with_the_sent_rate_under_its_own_name(lossy_run, tmp_path):
    where = lossy_run.save(tmp_path / "run")
    # Rewrite it as format 1 wrote it: the sent rate under throughput_mbps, no sent_mbps.
    import pyarrow as pa
    import pyarrow.parquet as pq

    sub = lossy_run.timeseries.subflows
    old = sub.drop(columns=["sent_mbps"]).assign(throughput_mbps=sub["sent_mbps"])
    pq.write_table(pa.Table.from_pandas(old, preserve_index=False), where / "subflows.parquet")
    meta = json.loads((where / "meta.json").read_text())
    meta["format_version"] = 1
    (where / "meta.json").write_text(json.dumps(meta))
    back = Result.load(where).timeseries.subflows
    assert list(back["sent_mbps"]) == list(sub["sent_mbps"]), "kept exactly under its honest name"
    assert back["throughput_mbps"].to_numpy() == pytest.approx(sub["throughput_mbps"].to_numpy(), rel=1e-9, abs=1e-9)
