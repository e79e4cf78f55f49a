"""PCDC path management (seed 000 Sec. 2.1/3, reference path-managers.md §5.5): the Ω
formula, SP*, the scenario helper, option errors, and acceptance 8 (PCDC degenerates to
fullmesh in a homogeneous network). Run with `-s` to see the Ω values."""
from __future__ import annotations

import pytest

import mptcplab
from mptcplab import Scenario, ScenarioError
from mptcplab.pcdc import measure_omega, omega_from_bytes, sp_star, with_pcdc

from conftest import SCENARIOS, two_paths

HOMOGENEOUS = SCENARIOS / "path-managers" / "pcdc-homogeneous-2path.toml"


def same_rows(a: mptcplab.Result, b: mptcplab.Result) -> list[str]:
    """The tables whose rows differ, ignoring only the summary's path-manager label."""
    diff = []
    if not a.summary.drop(columns=["path_manager"]).equals(b.summary.drop(columns=["path_manager"])):
        diff.append("summary")
    for t in ("subflow_summary", "subflows", "connections", "links", "subflow_events"):
        if not a.table(t).equals(b.table(t)):
            diff.append(t)
    return diff


def test_omega_follows_eq_5_of_the_reference_test_vectors():
    # §5.5: TP_0 sums to 100; without i 120 -> Ω = −0.2 (excluded), 60 -> Ω = 0.4 (kept).
    assert omega_from_bytes(100, 120) == pytest.approx(-0.2)
    assert omega_from_bytes(100, 60) == pytest.approx(0.4)
    assert sp_star({"a": 0.4, "b": -0.2}) == ["a"]
    with pytest.raises(ValueError):
        omega_from_bytes(0, 10)


def test_sp_star_keeps_a_zero_omega_by_default_and_drops_it_when_strict():
    om = {"a": 0.3, "b": 0.0, "c": -0.01}
    assert sp_star(om) == ["a", "b"]  # Eq. 6
    assert sp_star(om, strict=True) == ["a"]  # Algorithm 1 wording
    # Nothing qualifies: the best path is kept, so the connection still carries data.
    assert sp_star({"a": -0.5, "b": -0.1}) == ["b"]


def test_with_pcdc_sets_the_path_manager_and_sp_star():
    s = with_pcdc(Scenario.from_dict(two_paths()), ["p1"])
    c = s.to_dict()["connections"][0]
    assert c["path_manager"] == "pcdc" and c["path_manager_options"] == {"sp": ["p1"]}
    short = mptcplab.simulate(s, duration="0.5 s").subflow_summary.set_index("path")
    r = mptcplab.simulate(s, duration="3 s")
    sub = r.subflow_summary.set_index("path")
    ev = r.subflow_events
    # p0, the initial path, is demoted (MP_PRIO) at its handshake. It is the only subflow
    # until p1 opens (0.14 s) and carries data until then; afterwards it stands by.
    assert ((ev.path == "p0") & (ev.to == "backup") & (ev.reason == "mp_prio")).any()
    assert ((ev.path == "p0") & (ev.to == "standby")).any()
    assert sub.loc["p0", "bytes_sent"] == short.loc["p0", "bytes_sent"], "p0 took data while p1 worked"
    assert sub.loc["p1", "bytes_sent"] > 1_000_000


@pytest.mark.parametrize("sp, message", [
    (["p0", "nope"], "\"nope\" is not one of this connection's paths: p0, p1"),
    (["p0", "p0"], "listed twice"),
    ([], "at least one"),
    ("p0", "a list of path names"),
])
def test_a_bad_sp_names_the_field(sp, message):
    s = Scenario.from_dict(two_paths()).with_("connections[0].path_manager", "pcdc").with_("connections[0].path_manager_options", {"sp": sp})
    with pytest.raises(ScenarioError) as e:
        s.validate()
    assert "path_manager_options.sp" in str(e.value) and message in str(e.value)


def test_measure_omega_rejects_bad_arguments():
    s = Scenario.from_dict(two_paths())
    with pytest.raises(ScenarioError, match="T must be > 0"):
        measure_omega(s, T=0)
    with pytest.raises(ScenarioError, match="no MPTCP connection named 'x'"):
        measure_omega(s, T=1, connection="x")
    with pytest.raises(ScenarioError, match="sample_interval"):
        measure_omega(s, T=1.05)
    with pytest.raises(ScenarioError, match="at least one seed"):
        measure_omega(s, T=1, seeds=[])


def test_a_slow_lossy_path_gets_a_lower_omega_than_the_fast_one():
    # Heterogeneous: a fast path and a slow, lossy one. Removing the fast path must hurt
    # much more than removing the slow one (Ω_fast > Ω_slow).
    d = two_paths()
    d["links"][1].update({"rate": "1 Mbit/s", "delay": "100 ms", "loss": 0.02})
    om = measure_omega(Scenario.from_dict(d), T=5)
    print(f"\nheterogeneous two paths, T = 5 s: Ω = {om}")
    assert om["p0"] > om["p1"]
    assert om["p0"] > 0.5


def test_acceptance_8_pcdc_degenerates_to_fullmesh_in_a_homogeneous_two_path_network():
    scn = Scenario.from_toml(HOMOGENEOUS)
    om = measure_omega(scn, T=10)
    om_warm = measure_omega(scn, T=10, warmup=2)
    print(f"\nhomogeneous two paths, T = 10 s: Ω literal = {om}; Ω with 2 s warm-up = {om_warm}")
    assert set(om) == {"a", "b"}
    assert all(o >= 0 for o in om.values()), om
    # Removing one of two equal paths roughly halves the capacity.
    assert all(0.3 < o < 0.7 for o in om_warm.values()), om_warm
    sp = sp_star(om)
    assert sp == ["a", "b"]
    full = mptcplab.simulate(scn)
    pcdc = mptcplab.simulate(with_pcdc(scn, sp))
    assert list(pcdc.summary["path_manager"]) == ["pcdc"] and list(full.summary["path_manager"]) == ["fullmesh"]
    print(f"fullmesh goodput {full.summary.goodput_mbps[0]:.3f} Mbit/s, PCDC {pcdc.summary.goodput_mbps[0]:.3f} Mbit/s")
    assert same_rows(full, pcdc) == []
    assert full.num_rows("connections") > 0 and full.num_rows("subflow_events") > 0
