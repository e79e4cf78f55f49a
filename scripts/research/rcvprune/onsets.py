"""When each backend enters the receive deadlock, at one bounded-buffer row of `validate`
(docs/kernel.md, "More kernel runs where the deadlock splits them"; gap `deadlock_timing`).

  onsets.py ROW/CC [SIM_RUNS] [EARLY_S]

The simulator's onset is exact (`receive_stalled_at_s`, 60-s runs with validate's
jitter, seeds 1..SIM_RUNS, default 100). A kernel run stores no time series, so its onset
is estimated from its goodput: a deadlocked run delivers nothing after its onset
(docs/research/upstream-receive-deadlock-measured.md, section 0), so onset ~ goodput /
mean clean goodput x 60 s. Prints both sorted, the counts before EARLY_S (default 6 s)
and Fisher's exact p that both backends deadlock that early equally often.

Runs the model the `mptcplab` on the path gives: PYTHONPATH=altpy for a variant build."""
import json
import sys
from pathlib import Path

from mptcplab.api import simulate
from mptcplab.kernel import validate as val

KERNEL = Path(__file__).resolve().parents[3] / "docs" / "validate" / "kernel" / "bounded-buffer"


def sim_onsets(label: str, cc: str, runs: int) -> list[float]:
    point = {p.label: p for p in val.FAMILIES["bounded-buffer"]}[label]
    base = val.Scenario.from_toml(val.SCENARIO_DIR / f"{point.scenario}.toml")
    scn, _ = val.sim_side(val.point_scenario(base, point, cc, 60.0), "upstream")
    onsets = []
    for seed in range(1, runs + 1):
        fig = val.run_figures(simulate(scn, seed=seed), None, 60.0)
        if fig.get("receive_stalled_at_s") is not None:
            onsets.append(fig["receive_stalled_at_s"])
    return sorted(onsets)


def kernel_onsets(label: str, cc: str) -> tuple[list[float], int]:
    runs = [json.loads(f.read_text())["figures"] for f in sorted((KERNEL / label / cc).glob("seed-*.json"))]
    clean = [r["goodput_mbps"] for r in runs if not val.deadlocked(r)]
    if not clean:
        raise SystemExit(f"{label}/{cc}: no clean kernel run to scale the onsets by")
    rate = sum(clean) / len(clean)
    return sorted(r["goodput_mbps"] / rate * 60.0 for r in runs if val.deadlocked(r)), len(runs)


def main(argv: list[str]) -> None:
    label, cc = argv[1].rsplit("/", 1)
    n_sim = int(argv[2]) if len(argv) > 2 else 100
    early = float(argv[3]) if len(argv) > 3 else 6.0
    sim = sim_onsets(label, cc, n_sim)
    ker, n_k = kernel_onsets(label, cc)
    for name, on, n in (("simulator", sim, n_sim), ("kernel (estimated)", ker, n_k)):
        print(f"{name}: {len(on)} of {n} deadlocked; onsets s: {[round(x) for x in on]}")
    a, b = sum(x < early for x in sim), sum(x < early for x in ker)
    print(f"before {early:g} s: simulator {a} of {n_sim}, kernel {b} of {n_k}; "
          f"Fisher p {val.fisher_exact_p(a, n_sim, b, n_k):.3g}")


if __name__ == "__main__":
    main(sys.argv)
