"""Determinism (issue 2, acceptance 5): the same seed gives identical rows in two separate
processes; another seed gives a different loss pattern; adding an unrelated lossy link
leaves the first link's loss pattern unchanged."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import mptcplab

from conftest import lossy, run_python, two_paths, with_unrelated_lossy_link

# Runs the scenario given as JSON in argv[1] with seed argv[2] and prints every table as
# CSV (the meta's wall time is left out: it is the only field allowed to differ).
CHILD = r"""
import json, sys
import mptcplab
res = mptcplab.simulate(json.loads(sys.argv[1]), seed=int(sys.argv[2]))
out = {name: frame.to_csv(index=False, float_format="%.17g") for name, frame in res.tables().items()}
out["meta"] = {k: v for k, v in res.meta.items() if k != "wall_s"}
print(json.dumps(out, sort_keys=True, default=str))
"""


def run_in_child(scenario: dict, seed: int) -> dict:
    proc = run_python(CHILD, json.dumps(scenario), str(seed))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def drops(result: mptcplab.Result, link: str) -> list[int]:
    links = result.timeseries.links
    rows = links[(links["link"] == link) & (links["direction"] == "forward")].sort_values("time_s")
    return rows["dropped_pkts"].astype("int64").tolist()


def test_the_same_seed_gives_identical_rows_in_two_separate_processes():
    scenario = two_paths("5 s")
    scenario["links"][0]["loss"] = 0.01
    a = run_in_child(scenario, 7)
    b = run_in_child(scenario, 7)
    assert a.keys() == b.keys()
    for table in ("summary", "subflow_summary", "subflows", "connections", "links"):
        assert a[table].count("\n") > 1, f"{table} is empty"
        assert a[table] == b[table], f"{table} differs between processes"
    assert a["meta"] == b["meta"]


def test_the_same_seed_gives_identical_rows_in_one_process_too():
    scenario = lossy("5 s")
    a = mptcplab.simulate(scenario, seed=3)
    b = mptcplab.simulate(scenario, seed=3)
    for name, frame in a.tables().items():
        pd.testing.assert_frame_equal(frame, b.tables()[name], check_exact=True, obj=name)


def test_another_seed_gives_a_different_loss_pattern_on_a_lossy_link():
    scenario = lossy("5 s", loss=0.02)
    one = drops(mptcplab.simulate(scenario, seed=1), "l0")
    two = drops(mptcplab.simulate(scenario, seed=2), "l0")
    assert max(one) > 0 and max(two) > 0, "the lossy link dropped nothing"
    assert one != two


def test_adding_an_unrelated_lossy_link_leaves_the_first_links_drops_unchanged():
    base = lossy("5 s", loss=0.02)
    extended = with_unrelated_lossy_link(base, loss=0.05)
    before = mptcplab.simulate(base, seed=11)
    after = mptcplab.simulate(extended, seed=11)
    assert max(drops(before, "l0")) > 0
    assert max(drops(after, "other")) > 0, "the added link must lose packets too"
    assert drops(before, "l0") == drops(after, "l0")
    # and the flow on the first link saw exactly the same losses
    cols = ["time_s", "bytes_sent", "bytes_retrans"]
    sub_before = before.timeseries.subflows
    sub_after = after.timeseries.subflows
    sub_after = sub_after[sub_after["flow"] == "c0"].reset_index(drop=True)
    pd.testing.assert_frame_equal(sub_before[sub_before["flow"] == "c0"][cols].reset_index(drop=True), sub_after[cols])


@pytest.mark.parametrize("seed", [0, 2**32 + 5, 2**64 - 1])
def test_every_seed_in_the_u64_range_runs_and_is_recorded(seed):
    res = mptcplab.simulate(lossy("1 s"), seed=seed)
    assert int(res.meta["seed"]) == seed
