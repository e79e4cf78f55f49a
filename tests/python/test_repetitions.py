"""Repetitions that differ, or n = 1 stated (issue 12, item 4): a loss-free scenario
replays one run for every seed unless `run.start_jitter` / `run.join_jitter` give the
seed something to vary; reports over identical runs say n = 1, not "± 0.0"."""
from __future__ import annotations

import math

import pytest

import mptcplab
from mptcplab import Scenario
from mptcplab.errors import ScenarioError
from mptcplab.reproduce.checks import ci_text, less
from mptcplab.stats import fmt_runs, over_runs, same_in_all_runs

from conftest import two_paths

SEEDS = (1, 2, 3, 4, 5)


def _goodputs(d: dict) -> list[float]:
    return [float(mptcplab.simulate(Scenario.from_dict(d), seed=s).summary["goodput_mbps"].iloc[0]) for s in SEEDS]


def _jittered(join: str) -> dict:
    d = two_paths("3 s")
    d["run"]["join_jitter"] = join
    return d


def test_a_lossless_scenario_without_jitter_is_one_run_and_its_report_says_n_1():
    g = _goodputs(two_paths("3 s"))
    assert same_in_all_runs(g), g
    text = ci_text(g)
    assert text == f"{g[0]:.2f} (n = 1: the same in all 5 runs)" and "±" not in text
    table = over_runs([{"goodput": x} for x in g])
    assert table.loc["goodput", "n"] == 1 and math.isnan(table.loc["goodput", "ci"])
    ok, diff = less(g, [x + 1.0 for x in g], "A", "B")
    assert "(n = 1)" in diff and "±" not in diff


def test_join_jitter_gives_the_same_run_for_a_seed_and_different_runs_across_seeds():
    d = _jittered("200 ms")
    g = _goodputs(d)
    again = float(mptcplab.simulate(Scenario.from_dict(d), seed=3).summary["goodput_mbps"].iloc[0])
    assert again == g[2], "same scenario and seed: bit-identical"
    assert len(set(g)) >= 4, f"the seeds' runs differ: {g}"
    assert not same_in_all_runs(g)
    assert "±" in ci_text(g) and "n = 1" not in ci_text(g)
    table = over_runs([{"goodput": x} for x in g])
    assert table.loc["goodput", "n"] == 5 and table.loc["goodput", "ci"] > 0
    print(f"join_jitter 200 ms, 3 s: goodput per seed {[round(x, 4) for x in g]} Mbit/s -> {ci_text(g, 3)}")


def test_join_jitter_must_be_shorter_than_the_run():
    with pytest.raises(ScenarioError) as e:
        mptcplab.simulate(Scenario.from_dict(_jittered("3 s")))
    assert e.value.field == "run.join_jitter"
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(_jittered("200")).validate()
    assert "join_jitter" in e.value.field


def test_the_kernel_backend_refuses_a_join_jitter_it_cannot_apply():
    from mptcplab.kernel.plan import make_plan

    with pytest.raises(ScenarioError) as e:
        make_plan(Scenario.from_dict(_jittered("100 ms")))
    assert e.value.field == "run.join_jitter"


def test_fmt_runs_keeps_the_interval_when_runs_differ_and_ignores_nan():
    assert fmt_runs([1.0, 2.0, 3.0]) == "2.00 ± 2.48"
    assert fmt_runs([4.0, math.nan, 4.0], 1, "ms") == "4.0 ms (n = 1: the same in all 2 runs)"
    assert fmt_runs([7.0]) == "7.00"


def test_a_ratio_of_two_replayed_runs_says_n_1_and_keeps_its_interval_otherwise():
    from mptcplab.reproduce.checks import ratio_text

    assert ratio_text([600.8] * 5, [668.6] * 5) == "0.90 (n = 1)"
    assert ratio_text([1.0, 1.2, 1.1], [2.0, 2.0, 2.0]).startswith("0.55 ± ")
