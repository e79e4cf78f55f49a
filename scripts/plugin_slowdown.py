"""How much slower a scheduler written in Python is than the built-in minRTT.

    .venv/bin/python scripts/plugin_slowdown.py [--runs 5] [--duration 10]

Runs two fixed scenarios with the built-in "minrtt" and with Python schedulers:
- `MinRttScheduler` (examples/minrtt_scheduler.py): the same decisions in Python, so
  the results are identical and the difference is the cost of the Python plug-in;
- `RoundRobinScheduler` (examples/round_robin_scheduler.py);
- `FirstAvailable` below: the least a Python scheduler can do (the plug-in call itself).
Each figure is the fastest of `--runs` runs (wall time measured by the core, `meta.wall_s`,
so scenario parsing is not included). The decision count comes from a separate
counting run. The Python runs keep the GIL; other Python threads are idle here.
"""
from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))

import mptcplab  # noqa: E402
from mptcplab.plugins import New, Send  # noqa: E402
from minrtt_scheduler import MinRttScheduler  # noqa: E402
from round_robin_scheduler import RoundRobinScheduler  # noqa: E402


class FirstAvailable:
    """New data on the first available subflow in list order, nothing else."""

    def schedule(self, view):
        if view.meta.new_data:
            for i in view.order:
                if view.subflows[i].available:
                    return [Send(i, New())]
        return []


class Counting:
    """Counts the decisions of the plug-in it wraps."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = 0

    def schedule(self, view):
        self.calls += 1
        return self.inner.schedule(view)


def best_wall(scenario, runs: int, scheduler=None) -> tuple[float, object]:
    walls, result = [], None
    for _ in range(runs):
        result = mptcplab.simulate(scenario, scheduler=scheduler)
        walls.append(result.meta["wall_s"])
    return min(walls), result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--duration", type=float, default=10.0, help="simulated seconds per run")
    args = ap.parse_args()
    scenarios = {
        "default (WiFi+LTE, cubic)": mptcplab.Scenario.default(),
        "bench mptcp-2x200M (reno)": mptcplab.Scenario.bench("mptcp-2x200M"),
    }
    print(f"mptcplab {mptcplab.__version__}, Python {platform.python_version()}, {platform.machine()}; "
          f"{args.duration:g} s simulated, fastest of {args.runs} runs")
    for title, scenario in scenarios.items():
        scenario = scenario.with_duration(args.duration).with_("connections[0].opportunistic_retransmission", True) \
            .with_("connections[0].penalisation", True)
        base, ref = best_wall(scenario, args.runs)
        segs = ref.meta["data_segments_sent"]
        print(f"\n{title}: {segs} data segments; built-in minrtt {base * 1e3:.1f} ms")
        print(f"  {'scheduler':<34} {'wall ms':>9} {'slowdown':>9} {'decisions':>10} {'us/decision':>12}  same results as minrtt")
        for name, make in (("python MinRttScheduler", MinRttScheduler), ("python RoundRobinScheduler", RoundRobinScheduler),
                           ("python FirstAvailable", FirstAvailable)):
            wall, res = best_wall(scenario, args.runs, scheduler=make)
            counter = Counting(make())
            counted = mptcplab.simulate(scenario, scheduler=counter)
            calls = counted.plugins["mptcp"]["scheduler"].calls
            same = res.summary.drop(columns="scheduler").equals(ref.summary.drop(columns="scheduler")) and \
                res.timeseries.subflows.equals(ref.timeseries.subflows)
            print(f"  {name:<34} {wall * 1e3:9.1f} {wall / base:8.1f}x {calls:10d} {(wall - base) / calls * 1e6:12.2f}  {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
