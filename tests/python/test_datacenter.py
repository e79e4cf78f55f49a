"""Data-centre topologies and traffic (issue 16): generated links and paths, flow
completion times against the analytic value, the one-line error contract for bad
topology and traffic input, and determinism of generated scenarios."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import mptcplab
from mptcplab import Scenario, ScenarioError

from conftest import run_cli


def fat_tree(k: int = 4, subflows: int = 2, duration: str = "200 ms", **traffic: Any) -> dict[str, Any]:
    return {
        "name": f"fat-tree-k{k}",
        "run": {"duration": duration, "seed": 1},
        "topology": {"kind": "fat_tree", "k": k, "rate": "1 Gbit/s", "delay": "1 us", "queue": "100 pkt"},
        "traffic": [{"name": "perm", "kind": "permutation", "subflows": subflows, "cc": "lia", **traffic}],
    }


# -- generated links and paths ---------------------------------------------------------------
def test_a_k4_fat_tree_runs_its_48_links_and_a_permutation_of_16_connections():
    res = mptcplab.simulate(fat_tree(4, subflows=4))
    links = res.timeseries.links
    # 48 full-duplex links (counted by hand in the core's topology tests), two directions.
    assert links.groupby(["link", "direction"]).ngroups == 96
    assert len(res.summary) == 16 and (res.summary["subflows"] == 4).all()
    f = res.fct
    assert sorted(f["src"]) == sorted(f"h{i}" for i in range(16))
    assert sorted(f["dst"]) == sorted(f"h{i}" for i in range(16))
    assert (f["src"] != f["dst"]).all()


def test_routes_are_equal_cost_and_random_choice_gives_distinct_paths():
    r = Scenario.from_dict(fat_tree(4, subflows=4)).routes()
    assert len(r) == 64
    for conn, g in r.groupby("connection"):
        hops = g["hops"].str.split(" > ")
        lengths = {len(h) for h in hops}
        assert len(lengths) == 1 and lengths <= {2, 4, 6}, conn
        # Across pods there are 4 equal-cost paths: 4 subflows take all of them.
        if lengths == {6}:
            assert g["hops"].nunique() == 4, conn
        assert all(h[0].startswith(f"{g['src'].iloc[0]}-") and h[0].endswith("/forward") for h in hops)
        assert all(h[-1].startswith(f"{g['dst'].iloc[0]}-") and h[-1].endswith("/reverse") for h in hops)


def test_hash_choice_is_deterministic_and_may_collide():
    d = fat_tree(4, subflows=8, path_choice="hash")
    a, b = Scenario.from_dict(d).routes(), Scenario.from_dict(d).routes()
    assert a.equals(b)
    # 8 subflows over at most 4 paths: some share one.
    assert (a.groupby("connection")["hops"].nunique() < 8).all()


# -- determinism -----------------------------------------------------------------------------
def test_same_seed_same_paths_and_results_other_seed_other_permutation():
    d = fat_tree(4, subflows=2, duration="100 ms")
    s = Scenario.from_dict(d)
    assert s.routes().equals(s.routes())
    one, two = mptcplab.simulate(s), mptcplab.simulate(s)
    for t in ("summary", "subflow_summary", "fct"):
        assert one.table(t).equals(two.table(t)), t
    other = s.routes(seed=2)
    assert not s.routes().equals(other)
    # The seed argument of simulate draws the same as run.seed.
    assert mptcplab.simulate(s, seed=2).fct[["src", "dst"]].equals(mptcplab.simulate(s.with_seed(2)).fct[["src", "dst"]])


def test_poisson_workload_is_deterministic_and_offers_the_load():
    d = {
        "run": {"duration": "2 s", "seed": 3},
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4, "rate": "1 Gbit/s",
                     "delay": "2 us", "queue": "100 pkt"},
        "traffic": [{"name": "w", "kind": "poisson", "load": 0.2, "transport": "tcp", "cc": "reno",
                     "size_cdf": [[10000, 0.5], [30000, 1.0]]}],
    }
    # Mean size 15 000 B (half at 10 kB, half uniform to 30 kB): 0.2 × 1 Gbit/s / 15 kB =
    # 1 667 flows/s per host, 8 hosts, 2 s: 26 667 expected, sd 163.
    r = Scenario.from_dict(d).routes()
    assert abs(len(r) - 26_667) < 5 * 163, len(r)
    # Arrivals stop at the run's end: a shorter run draws the same first flows.
    a = mptcplab.simulate(d, duration="50 ms").fct
    b = mptcplab.simulate(d, duration="50 ms").fct
    assert a.equals(b)
    assert a["flow"].tolist() == r["connection"].tolist()[: len(a)]
    assert 500 < len(a) < 800 and (a["start_s"] < 0.05).all()
    assert math.isclose(a["size_bytes"].mean(), 15_000, rel_tol=0.05)


# -- flow completion time against the analytic value -----------------------------------------
D, RATE = 0.010, 1e9


def _rounds(packets: int, iw: int = 10) -> tuple[int, int]:
    """Slow-start rounds to send `packets` from an initial window `iw`, one ACK per
    segment (cwnd doubles per round), and the window of the last round."""
    sent, w, r = 0, iw, 0
    while sent < packets:
        sent += w
        r += 1
        w *= 2
    return r, w // 2


@pytest.mark.parametrize("packets", [10, 30, 70, 150])
def test_fct_of_one_flow_on_an_idle_path_is_handshake_plus_slow_start_rounds(packets):
    # One TCP flow, 1 Gbit/s, 10 ms one way, no loss, one ACK per segment. Analytic:
    #   handshake: 2 D (+ the SYN, SYN/ACK and ACK serialisations, < 2 us);
    #   each of the r - 1 full rounds: one RTT, 2 D + T + T_ack (the ACK clock keeps the
    #   link busy within a round: each ACK releases two segments);
    #   the last round: its w segments back to back, w T, then D to the receiver.
    # T = 1500 B (1448 + 52 of headers) at 1 Gbit/s = 12 us, T_ack = 52 B = 0.416 us.
    scn = {
        "run": {"duration": "1 s"},
        "tcp": {"delayed_ack": False},
        "links": [{"name": "l", "rate": "1 Gbit/s", "delay": "10 ms", "queue": "1000 pkt"}],
        "paths": [{"name": "p", "links": ["l"]}],
        "flows": [{"name": "f", "path": "p", "cc": "reno", "app": {"kind": "bulk", "size": f"{packets * 1448} B"}}],
    }
    fct = mptcplab.simulate(scn).fct["fct_s"].iloc[0]
    t, t_ack = 1500 * 8 / RATE, 52 * 8 / RATE
    r, w = _rounds(packets)
    analytic = 2 * D + (r - 1) * (2 * D + t + t_ack) + w * t + D
    # Within 2 us: a round more would be 20 ms, a segment more 12 us.
    assert abs(fct - analytic) < 2e-6, (packets, fct, analytic)


def test_fct_of_an_mptcp_connection_over_a_generated_dumbbell():
    # Same rule over three hops of 10 ms (host links at 100 Gbit/s, so only the 1 Gbit/s
    # bottleneck serialises): D = 30 ms; data segments carry the 20-byte DSS (1520 B).
    d3 = 3 * D
    for packets in (10, 70):
        scn = {
            "run": {"duration": "1 s"},
            "tcp": {"delayed_ack": False},
            "topology": {"kind": "dumbbell", "hosts": 1, "rate": "1 Gbit/s", "host_rate": "100 Gbit/s",
                         "delay": "10 ms", "queue": "1000 pkt"},
            "connections": [{"name": "c", "from": "l0", "to": "r0", "cc": "lia",
                             "app": {"kind": "bulk", "size": f"{packets * 1448} B"}}],
        }
        res = mptcplab.simulate(scn)
        row = res.fct.iloc[0]
        assert (row["src"], row["dst"], row["size_bytes"]) == ("l0", "r0", packets * 1448)
        t, t_ack = 1520 * 8 / RATE, 64 * 8 / RATE
        r, w = _rounds(packets)
        analytic = 2 * d3 + (r - 1) * (2 * d3 + t + t_ack) + w * t + d3
        assert abs(row["fct_s"] - analytic) < 5e-6, (packets, row["fct_s"], analytic)


def test_fct_summary_buckets_and_unfinished_flows():
    d = {
        "run": {"duration": "50 ms", "seed": 1},
        "topology": {"kind": "dumbbell", "hosts": 2, "rate": "100 Mbit/s", "delay": "1 ms"},
        "connections": [
            {"name": "small", "from": "l0", "to": "r0", "app": {"kind": "bulk", "size": "20 KB"}},
            {"name": "big", "from": "l1", "to": "r1", "app": {"kind": "bulk", "size": "50 MB"}},
            {"name": "endless", "from": "l0", "to": "r1"},
        ],
    }
    s = mptcplab.simulate(d).fct_summary()
    by = s.set_index("bucket")
    assert by.loc["(0 B, 100 KB]", "flows"] == 1 and by.loc["(0 B, 100 KB]", "done"] == 1
    assert by.loc["(10 MB, inf]", "flows"] == 1 and by.loc["(10 MB, inf]", "done"] == 0
    # The unbounded connection has no size: not in any bucket.
    assert by.loc["all", "flows"] == 2


# -- bad input: the one-line contract ----------------------------------------------------------
def _error(d: dict[str, Any]) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        mptcplab.simulate(d, duration="1 ms")
    return info.value


@pytest.mark.parametrize("k", [0, 1, 3, 5])
def test_an_odd_or_small_k_names_the_field(k):
    e = _error(fat_tree(k))
    assert e.field == "topology.k" and "even" in e.message and str(k) in e.message


def test_a_host_pair_that_does_not_exist_names_the_field():
    d = fat_tree(4)
    d["connections"] = [{"name": "c", "from": "h0", "to": "h16"}]
    e = _error(d)
    assert e.field == "connections[0].to" and "unknown host \"h16\"" in e.message and "h15" in e.message
    d["connections"] = [{"name": "c", "from": "h3", "to": "h3"}]
    assert _error(d).field == "connections[0].to"
    d = fat_tree(4, kind="incast", to="nobody")
    assert _error(d).field == "traffic[0].to"


def test_paths_all_without_hand_written_paths_is_an_error_not_a_crash():
    d = fat_tree(4)
    d["connections"] = [{"name": "c", "paths": "all"}]
    e = _error(d)
    assert e.field == "connections[0].paths" and "from" in e.message


def _poisson(cdf: Any) -> dict[str, Any]:
    d = fat_tree(4)
    d["traffic"] = [{"kind": "poisson", "load": 0.5, "size_cdf": cdf}]
    return d


def test_an_empty_cdf_file_and_an_empty_list_name_the_field(tmp_path: Path):
    f = tmp_path / "empty.cdf"
    f.write_text("# nothing\n")
    for cdf in (str(f), []):
        e = _error(_poisson(cdf))
        assert e.field == "traffic[0].size_cdf" and "none" in e.message


def test_a_cdf_that_is_not_monotone_names_the_point(tmp_path: Path):
    f = tmp_path / "bad.cdf"
    f.write_text("1000 0.3\n5000 0.2\n9000 1\n")
    e = _error(_poisson(str(f)))
    assert e.field == "traffic[0].size_cdf" and "not monotone" in e.message and "point 1" in e.message
    e = _error(_poisson([[5000, 0.5], [1000, 1.0]]))
    assert "not monotone" in e.message


def test_a_malformed_or_missing_cdf_file_names_the_line(tmp_path: Path):
    f = tmp_path / "x.cdf"
    f.write_text("1000 0.5\n2000 one\n")
    e = _error(_poisson(str(f)))
    assert e.field == "traffic[0].size_cdf" and "x.cdf:2" in e.message
    assert "no such file" in _error(_poisson(str(tmp_path / "missing.cdf"))).message


def test_built_in_workloads_read_and_percent_files_scale(tmp_path: Path):
    for name in ("websearch", "datamining"):
        pts = Scenario.from_dict(_poisson(name)).to_dict()["traffic"][0]["size_cdf"]
        assert pts[-1][1] == 1.0 and len(pts) >= 8
    f = tmp_path / "pct.cdf"
    f.write_text("0 0\n1000 50\n3000 100\n")
    pts = Scenario.from_dict(_poisson(str(f))).to_dict()["traffic"][0]["size_cdf"]
    assert pts == [[0.0, 0.0], [1000.0, 0.5], [3000.0, 1.0]]


@pytest.mark.parametrize("body, field", [
    ("[topology]\nkind = \"fat_tree\"\nk = 7\nrate = \"1 Gbit/s\"\ndelay = \"1 us\"\n[[traffic]]\nkind = \"permutation\"\n",
     "topology.k"),
    ("[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"1 Gbit/s\"\ndelay = \"1 us\"\n[[connections]]\nname = \"c\"\n"
     "from = \"h0\"\nto = \"h99\"\n", "connections[0].to"),
    ("[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"1 Gbit/s\"\ndelay = \"1 us\"\n[[traffic]]\nkind = \"poisson\"\n"
     "load = 0.5\nsize_cdf = \"empty.cdf\"\n", "traffic[0].size_cdf"),
    ("[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"1 Gbit/s\"\ndelay = \"1 us\"\n[[traffic]]\nkind = \"poisson\"\n"
     "load = 0.5\nsize_cdf = \"bad.cdf\"\n", "traffic[0].size_cdf"),
])
def test_the_cli_prints_one_line_and_exits_2(tmp_path: Path, body: str, field: str):
    (tmp_path / "empty.cdf").write_text("")
    (tmp_path / "bad.cdf").write_text("100 0.9\n200 0.5\n300 1\n")
    scn = tmp_path / "s.toml"
    scn.write_text(body)
    proc = run_cli("run", str(scn))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}:"), proc.stderr
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr


def test_the_cli_prints_flow_completion_times_by_size_for_generated_traffic():
    proc = run_cli("run", "scenarios/datacenter/incast.toml")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("flow size"))
    assert "p99 ms" in lines[head]
    all_row = next(line for line in lines[head:] if line.startswith("all"))
    # 15 responses of 64 KB, every one done within the 1 s run.
    assert all_row.split()[1:3] == ["15", "15"]
    # A scenario without a topology prints no such table.
    assert "flow size" not in run_cli("run", "scenarios/shared-bottleneck.toml", "--duration", "1 s").stdout
