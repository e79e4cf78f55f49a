"""Packet captures (docs/pcap.md): `simulate(pcap=DIR)` / `mptcplab run --pcap DIR` on the
simulator, the tshark recipe (`mptcplab pcap-summary`) on both backends, the error
contract, and captures left by a run that fails midway.

The tshark tests need tshark and mergecap (Debian package `tshark`, installed by
`./dev install`). Without them they skip with the reason; under CI=true on a machine
with apt-get they fail instead, since `./dev` should have installed them.
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli, two_paths

import mptcplab
from mptcplab import ScenarioError
from mptcplab.pcap import COLUMNS, capture_name, format_summary, summarize


def _tshark_missing() -> str | None:
    if shutil.which("tshark") and shutil.which("mergecap"):
        return None
    return "tshark/mergecap not installed (Debian package `tshark`; `./dev install` installs it)"


@pytest.fixture
def tshark() -> str:
    reason = _tshark_missing()
    if reason:
        if os.environ.get("CI", "").lower() == "true" and shutil.which("apt-get"):
            pytest.fail(f"CI=true: {reason}, but ./dev should have installed it")
        pytest.skip(reason)
    return shutil.which("tshark") or "tshark"


def lossy_two_paths(duration: str = "3 s") -> dict:
    """Two paths, random loss on the first: retransmissions and SACKs in the capture."""
    d = two_paths(duration)
    d["name"] = "pcap-two-paths"
    d["links"][0].update(rate="10 Mbit/s", delay="5 ms", loss=0.01)
    d["links"][1].update(rate="5 Mbit/s", delay="15 ms")
    d["connections"][0].update(initial_path="p0", cc="lia")
    return d


def records(data: bytes) -> list[tuple[int, int, int]]:
    """(time ns, captured length, original length) of each record; asserts whole records."""
    assert struct.unpack_from("<I", data, 0)[0] == 0xA1B23C4D
    out, off = [], 24
    while off + 16 <= len(data):
        s, ns, incl, orig = struct.unpack_from("<IIII", data, off)
        out.append((s * 10**9 + ns, incl, orig))
        off += 16 + incl
    assert off == len(data), "the file ends inside a record"
    return out


def tshark_fields(tshark: str, f: Path, *fields: str) -> list[list[str]]:
    cmd = [tshark, "-n", "-r", str(f), "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,",
           "-o", "mptcp.analyze_mptcp:TRUE"]
    for x in fields:
        cmd += ["-e", x]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "cut short" not in proc.stderr and "appears to be damaged" not in proc.stderr, proc.stderr
    return [line.split("\t") for line in proc.stdout.splitlines()]


# -- simulator captures through tshark ------------------------------------------------------
def test_tshark_decodes_a_two_path_sim_capture_cleanly_and_groups_both_subflows_into_one_mptcp_connection(tmp_path, tshark):
    r = mptcplab.simulate(lossy_two_paths(), pcap=tmp_path)
    assert r.meta["pcap"] == {"p0": str(tmp_path / "p0.pcap"), "p1": str(tmp_path / "p1.pcap")}
    for f in r.meta["pcap"].values():
        rows = tshark_fields(tshark, Path(f), "frame.number", "_ws.malformed", "_ws.expert.severity", "tcp.len",
                             "tcp.options.mptcp.subtype", "tcp.checksum.status")
        assert len(rows) == len(records(Path(f).read_bytes())) > 1000
        # no malformed packet and no expert error (PI_ERROR = 0x00800000, epan/proto.h)
        assert not [x for x in rows if x[1]], "malformed packets"
        errors = [x for x in rows if x[2] and any(int(v, 0) >= 0x00800000 for v in x[2].split(","))]
        assert not errors, errors[:3]
        data = [x for x in rows if int(x[3] or 0) > 0]
        assert data and all(x[4] for x in data), "an MPTCP option on every data packet"
        assert all("2" in x[4].split(",") for x in data), "a DSS on every data packet"
    # merged: one MPTCP connection holding both subflows
    table = summarize(tmp_path)
    assert [(row.flow, row.path) for row in table] == [("0", "p0"), ("0", "p1")]
    assert all(row.malformed == 0 and row.expert_errors == 0 for row in table)
    assert all(row.mptcp_data_pkts == row.data_pkts > 0 for row in table)


def test_per_subflow_bytes_from_the_capture_equal_the_simulators_counters_exactly(tmp_path, tshark):
    """payload_bytes (every transmission) = subflow_summary.bytes_sent (SubflowTx
    stats.bytes_sent, retransmissions included); data_pkts = segs_sent; retrans_bytes
    (tshark's retransmission / out-of-order marks) = bytes_retrans."""
    r = mptcplab.simulate(lossy_two_paths(), pcap=tmp_path)
    sim = r.subflow_summary.set_index("path")
    assert sim.loc["p0", "bytes_retrans"] > 0, "the lossy path retransmits"
    for row in summarize(tmp_path):
        assert row.payload_bytes == sim.loc[row.path, "bytes_sent"], row
        assert row.data_pkts == sim.loc[row.path, "segs_sent"], row
        assert row.retrans_bytes == sim.loc[row.path, "bytes_retrans"], row
    acked = max(row.data_acked for row in summarize(tmp_path))
    # DATA_ACK (relative: the first byte is 1) trails the bytes delivered in order by the
    # ACKs still on their way back to the client when the run ends (< 15 Mbit/s x 40 ms).
    assert 0 <= r.summary["bytes_delivered"].iloc[0] + 1 - acked < 75_000


@pytest.mark.parametrize("file,mptcp_subflows,plain", [
    ("path-managers/ndiffports-one-path.toml", 4, 0),  # four subflows on one path: one file
    ("cc/rfc6356-goal1.toml", 2, 2),                   # plain TCP cross flows share the paths
])
def test_subflows_sharing_paths_with_others_are_grouped_and_every_paths_bytes_add_up(tmp_path, tshark, file, mptcp_subflows, plain):
    from conftest import SCENARIOS

    r = mptcplab.simulate(mptcplab.Scenario.from_toml(SCENARIOS / file), duration=2, pcap=tmp_path)
    rows = summarize(tmp_path)
    assert [row.flow for row in rows] == ["0"] * mptcp_subflows + ["-"] * plain
    assert len({row.client for row in rows}) == len(rows)
    sent = r.subflow_summary.groupby("path")["bytes_sent"].sum().to_dict()
    assert {p: sum(row.payload_bytes for row in rows if row.path == p) for p in sent} == sent
    assert all(row.malformed == row.expert_errors == 0 for row in rows)


def test_run_pcap_on_the_sim_backend_writes_one_capture_per_path_and_pcap_summary_prints_the_table(tmp_path, tshark, tmp_toml):
    import tomli_w

    path = tmp_toml(tomli_w.dumps(lossy_two_paths("2 s")))
    out = tmp_path / "caps"
    proc = run_cli("run", str(path), "--pcap", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["p0.pcap", "p1.pcap"]
    proc = run_cli("pcap-summary", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == list(COLUMNS) and len(lines) == 3
    assert [ln.split()[0] for ln in lines[1:]] == ["0", "0"]
    # the join subflow's file alone: tshark has no keys, so no relative DSNs to report
    proc = run_cli("pcap-summary", "--json", str(out / "p1.pcap"))
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["payload_bytes"] > 0 and row["dsn_sent"] == row["data_acked"] == 0


def test_same_scenario_and_seed_write_identical_capture_bytes(tmp_path):
    a, b, c = (tmp_path / x for x in "abc")
    mptcplab.simulate(lossy_two_paths("2 s"), pcap=a)
    mptcplab.simulate(lossy_two_paths("2 s"), pcap=b)
    mptcplab.simulate(lossy_two_paths("2 s"), seed=2, pcap=c)
    for name in ("p0.pcap", "p1.pcap"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
        assert (a / name).read_bytes() != (c / name).read_bytes()


def test_a_run_without_pcap_gives_the_same_result_as_one_with_it(tmp_path):
    with_pcap = mptcplab.simulate(lossy_two_paths("2 s"), pcap=tmp_path)
    without = mptcplab.simulate(lossy_two_paths("2 s"))
    assert with_pcap.subflow_summary.equals(without.subflow_summary)
    assert with_pcap.timeseries.subflows.equals(without.timeseries.subflows)
    assert "pcap" not in without.meta


def test_a_run_that_fails_midway_leaves_whole_readable_captures_of_what_it_simulated(tmp_path, tshark):
    """A Python scheduler that raises after 700 decisions (of about 1460 in the run)
    stops the run with PluginError. Its captures hold whole records, tshark reads them,
    and they are exactly the start of the captures of a run whose scheduler does not
    raise (the same decisions until then)."""
    import plugin_fixtures as fx

    scn = lossy_two_paths("2 s")
    with pytest.raises(mptcplab.PluginError) as info:
        mptcplab.simulate(scn, scheduler=fx.Boom(after=700), pcap=tmp_path / "failed")
    assert 0.2 < info.value.time_s < 1.9
    mptcplab.simulate(scn, scheduler=fx.Boom(after=10**9), pcap=tmp_path / "full")
    sizes = []
    for name in ("p0.pcap", "p1.pcap"):
        failed = (tmp_path / "failed" / name).read_bytes()
        full = (tmp_path / "full" / name).read_bytes()
        recs = records(failed)
        assert full.startswith(failed) and len(recs) > 0
        assert recs[-1][0] <= info.value.time_s * 1e9 + 1
        assert len(tshark_fields(tshark, tmp_path / "failed" / name, "frame.number")) == len(recs)
        sizes.append((len(recs), len(records(full))))
    # (Boom sends on one subflow only: the other holds its handshake.)
    assert max(n for n, _ in sizes) > 500 and all(n < m for n, m in sizes if m > 10), sizes


# -- error contract -------------------------------------------------------------------------
def _unwritable_dir(tmp_path: Path) -> Path:
    if os.geteuid() == 0:
        return Path("/sys")  # root passes permission checks; sysfs refuses new files
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    return d


@pytest.mark.parametrize("kind", ["file", "unwritable"])
def test_a_bad_pcap_target_is_one_stderr_line_with_exit_2_and_a_scenario_error(tmp_path, kind):
    target = tmp_path / "taken" if kind == "file" else _unwritable_dir(tmp_path)
    if kind == "file":
        target.write_text("not a directory")
    proc = run_cli("run", "--pcap", str(target), "--duration", "1", "--no-progress")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("error: --pcap: "), proc.stderr
    with pytest.raises(ScenarioError) as info:
        mptcplab.simulate(two_paths("1 s"), pcap=target)
    assert info.value.field == "--pcap"


def test_pcap_summary_of_a_directory_without_captures_is_a_bad_input_error(tmp_path):
    proc = run_cli("pcap-summary", str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.startswith("error: <pcap>: no *.pcap files"), proc.stderr


def test_pcap_summary_of_a_file_that_is_no_capture_is_one_line_and_exit_2(tmp_path, tshark):
    (tmp_path / "p0.pcap").write_bytes(b"this is not a capture file")
    proc = run_cli("pcap-summary", str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("error: <pcap>: mergecap cannot read")


def test_capture_names_replace_characters_outside_the_portable_set():
    assert capture_name("wifi/5 GHz") == "wifi_5_GHz.pcap"
    assert capture_name("p-lte.0~a") == "p-lte.0~a.pcap"


# -- the same recipe on a kernel capture ----------------------------------------------------
@pytest.mark.kernel
def test_the_recipe_gives_the_same_table_shape_on_a_kernel_capture_of_the_same_scenario(tmp_path, tshark):
    from mptcplab.kernel import run_kernel

    scn = lossy_two_paths("3 s")
    scn["connections"][0]["cc"] = "cubic"  # the kernel backend's congestion controls
    scn["links"][0]["loss"] = 0.0
    k = run_kernel(scn, pcap=tmp_path / "kernel")
    assert set(k.meta["pcap"]) == {"p0", "p1"}
    mptcplab.simulate(scn, pcap=tmp_path / "sim")
    sim_rows, kernel_rows = summarize(tmp_path / "sim"), summarize(tmp_path / "kernel")
    assert [(r.flow, r.path) for r in kernel_rows] == [(r.flow, r.path) for r in sim_rows] == [("0", "p0"), ("0", "p1")]
    assert all(r.payload_bytes > 100_000 and r.dsn_sent > 0 and r.data_acked > 0 for r in kernel_rows)
    assert all(r.malformed == 0 and r.expert_errors == 0 for r in kernel_rows)
    header = lambda rows: format_summary(rows).splitlines()[0].split()  # noqa: E731
    assert header(kernel_rows) == header(sim_rows) == list(COLUMNS)
