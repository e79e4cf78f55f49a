"""Issue 4, observability: scheduler counters in `Result.subflow_summary`, a scheduler's
own subflow status (RBPM's "inactive") in `Result.subflow_events`, and the per-decision
"sched" rows of the `--trace` CSV."""
from __future__ import annotations

import pandas as pd

import mptcplab
from mptcplab import Scenario

from conftest import SCENARIOS

COUNTERS = ["sched_new_segs", "sched_reinjected_segs", "sched_copied_segs", "sched_penalised"]


def test_subflow_summary_has_the_scheduler_counters():
    sc = Scenario.from_toml(SCENARIOS / "schedulers" / "redundant-two-equal-paths.toml").with_(
        "connections[0].scheduler", "redundant")
    ss = mptcplab.simulate(sc, duration=3).subflow_summary
    assert set(COUNTERS) <= set(ss.columns)
    assert (ss[COUNTERS] >= 0).all().all()
    assert ss["sched_copied_segs"].sum() > 0
    assert (ss["sched_new_segs"] + ss["sched_copied_segs"] > 0).all()
    # minRTT on the buffer-limited heterogeneous pair penalises the fast subflow.
    ss = mptcplab.simulate(SCENARIOS / "schedulers" / "heterogeneous-256k.toml", duration=20).subflow_summary
    assert ss["sched_penalised"].sum() > 0
    assert ss["sched_copied_segs"].sum() > 0


def test_rbpm_stops_are_inactive_statuses_in_the_event_log():
    sc = (Scenario.from_toml(SCENARIOS / "rbpm-4path-b.toml")
          .with_("connections[0].scheduler", "rbpm")
          .with_("connections[0].scheduler_options", {"reactivation": "all_paths"}))
    ev = mptcplab.simulate(sc, duration=30).subflow_events
    rbpm = ev[ev["reason"] == "rbpm"]
    assert len(rbpm) >= 1
    assert set(zip(rbpm["from"], rbpm["to"])) <= {("active", "inactive"), ("inactive", "active")}
    assert (rbpm["to"] == "inactive").sum() >= 1
    # minRTT logs no such status.
    ev = mptcplab.simulate(SCENARIOS / "rbpm-4path-b.toml", duration=10).subflow_events
    assert not (ev["to"] == "inactive").any() and not (ev["reason"] == "rbpm").any()


def test_the_trace_has_a_sched_row_before_each_first_transmission(tmp_path):
    sc = Scenario.from_toml(SCENARIOS / "schedulers" / "redundant-two-equal-paths.toml").with_(
        "connections[0].scheduler", "redundant")
    trace = tmp_path / "t.csv"
    res = mptcplab.simulate(sc, duration=2, trace=trace)
    t = pd.read_csv(trace, keep_default_na=False)
    assert "sched_kind" in t.columns
    sched = t[t.event == "sched"]
    assert len(sched) > 0
    assert set(sched.sched_kind) <= {"new", "reinject", "copy", "enqueue", "penalise"}
    assert (t[t.event != "sched"].sched_kind == "").all()
    ss = res.subflow_summary
    assert (sched.sched_kind == "new").sum() == ss["sched_new_segs"].sum()
    assert (sched.sched_kind == "copy").sum() == ss["sched_copied_segs"].sum()
    # Each "send" row has a sched row with the same time, subflow, dsn and length.
    key = ["time_s", "subflow", "dsn", "len"]
    sends = t[t.event == "send"][key]
    chosen = sched[sched.sched_kind.isin(["new", "copy", "reinject"])][key]
    assert len(sends) == len(chosen)
    merged = sends.merge(chosen.drop_duplicates(), on=key, how="left", indicator=True)
    assert (merged["_merge"] == "both").all()
