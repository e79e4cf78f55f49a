"""Inputs for the plot and report tests: a small Reproduction with one figure of each
kind, and a short saved run. Kept apart from the paper modules of `mptcplab.reproduce`,
so these tests depend only on the Reproduction format (reproduce/model.py)."""
from __future__ import annotations

from pathlib import Path

from mptcplab.reproduce import Claim, Figure, Reproduction, Table

# Strings that must reach the page as text, never as markup.
HOSTILE = "<script>alert('x')</script> & <b>bold</b>"


def sample_reproduction() -> Reproduction:
    return Reproduction(
        paper="toy-paper",
        title="A toy paper <with> markup & ampersands",
        seed_file="seed999-toy.pdf",
        summary="We ran **two** configurations; `lia` came out fair.",
        claims=[
            Claim("C1", "LIA gets no more than Reno on a shared bottleneck", "Fig. 3: ratio 0.8",
                  "0.79 ± 0.02", True),
            Claim("C2", HOSTILE, "Table 2: 5 Mbit/s", "4.10 ± 0.30 Mbit/s", False, note="runs 10x shorter"),
            Claim("C3", "Goodput grows with the buffer", "Fig. 5: rising", "rising (3 of 3 steps)", True),
        ],
        tables=[
            Table("Goodput <Mbit/s>", ["cc", "goodput (95 % CI)", "runs"],
                  [["lia", "4.10 ± 0.30", 3], ["reno", "5.12 ± 0.11", 3], [HOSTILE, 5.123456, 3]],
                  note="mean ± 95 % CI over 3 seeds"),
        ],
        figures=[
            Figure("Goodput per congestion control", "bar",
                   {"categories": ["1 MiB", "4 MiB"],
                    "series": [{"label": "lia", "values": [[3.9, 4.1, 4.3], [4.6, 4.9, 5.0]]},
                               {"label": "reno", "values": [[5.0, 5.1, 5.3], [5.2, 5.6, 5.9]]}]},
                   xlabel="send buffer", ylabel="goodput (Mbit/s)", note="3 runs per bar"),
            Figure("CDF of goodput", "cdf",
                   {"series": [{"label": "lia", "values": [3.9, 4.1, 4.3, 4.6]},
                               {"label": "reno", "values": [5.0, 5.1, 5.3, 5.6]}]},
                   xlabel="goodput (Mbit/s)", ylabel="fraction of runs"),
            Figure("Congestion window " + HOSTILE, "timeseries",
                   {"series": [{"label": "subflow 0", "t": [0.1, 0.2, 0.3, 0.4], "y": [10, 20, 14, 18]},
                               {"label": "subflow 1", "t": [0.1, 0.2, 0.3, 0.4], "y": [10, 12, 16, 9]}]},
                   xlabel="time (s)", ylabel="cwnd (packets)"),
            Figure("Throughput against delay", "scatter",
                   {"points": [{"label": "lia", "x": 40.0, "y": 4.1, "xerr": 2.0, "yerr": 0.3},
                               {"label": "reno", "x": 55.0, "y": 5.1, "xerr": None, "yerr": 0.1},
                               {"label": "reno", "x": 60.0, "y": 5.4}]},
                   xlabel="mean RTT (ms)", ylabel="goodput (Mbit/s)"),
        ],
        meta={"version": "0.1.0", "quick": True, "runs": 3, "duration_s": 2.0, "seeds": [1, 2, 3],
              "wall_s": 1.25, "created": "2025-01-02T03:04:05Z", "comment": HOSTILE},
        scenarios={"lia " + HOSTILE: 'name = "toy"\n# <b>not bold</b> & co\n[run]\nduration = "2 s"\n'},
        notes="Assumptions:\n\n- the testbed's RTT was `100 ms`\n- " + HOSTILE,
    )


def saved_run(directory: Path, duration: str = "2 s") -> Path:
    """A short two-path run saved with Result.save."""
    import mptcplab

    from conftest import two_paths

    result = mptcplab.simulate(mptcplab.Scenario.from_dict(two_paths(duration)))
    return result.save(directory)
