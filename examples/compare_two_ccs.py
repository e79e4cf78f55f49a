# %% [markdown]
# # Two congestion controls on the default two-path scenario
#
# A notebook-style script: each `# %%` starts a cell (VS Code, JupyterLab with
# jupytext, Spyder run them one by one), and `python examples/compare_two_ccs.py [OUT]`
# runs it whole. It simulates the default scenario (WiFi-like and LTE-like paths, the
# WiFi rate drops at 12 s), saves the run and loads it back as a notebook would, plots
# it, then compares uncoupled CUBIC with the coupled LIA (RFC 6356) over a few seeds.
#
# Writes OUT/run.png and OUT/compare.png. OUT: the first argument, else
# $MPTCPLAB_EXAMPLE_OUT, else ./example-out. $MPTCPLAB_EXAMPLE_DURATION shortens the
# runs (default: the scenario's 30 s).

# %%
import os
import sys
from pathlib import Path

import pandas as pd

import mptcplab
from mptcplab import Result, Scenario, plot

out = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MPTCPLAB_EXAMPLE_OUT", "example-out"))
out.mkdir(parents=True, exist_ok=True)
duration = os.environ.get("MPTCPLAB_EXAMPLE_DURATION")
base = Scenario.default()
if duration:
    base = base.with_duration(duration)
base  # in a notebook: the scenario's HTML summary (Scenario._repr_html_)

# %% One run, saved and loaded back
result = Result.load(mptcplab.simulate(base, seed=1).save(out / "run-cubic"))
result  # in a notebook: the run's summary tables (Result._repr_html_)

# %% Plot it: each subflow's throughput over time
fig = plot.timeseries(result, kind="throughput")
print(f"wrote {plot.save(fig, out / 'run.png')}")

# %% Compare two CCs: the same scenario and seeds, only `cc` differs
CCS = ("cubic", "lia")
SEEDS = (1, 2, 3)
paths = [p["name"] for p in base.to_dict()["paths"]]
runs = {cc: [mptcplab.simulate(base.with_("connections[0].cc", cc), seed=s) for s in SEEDS] for cc in CCS}


def per_run(res: Result) -> dict[str, float]:
    """Goodput of the connection and what each path carried (bytes acknowledged at the
    subflow level) and retransmitted, in one run."""
    sub = res.subflow_summary.groupby("path")[["bytes_acked", "bytes_retrans", "bytes_sent"]].sum()
    secs = float(res.meta["duration_s"])
    row = {"goodput_mbps": float(res.summary["goodput_mbps"].iloc[0])}
    for p in paths:
        row[f"{p}_mbps"] = float(sub.loc[p, "bytes_acked"]) * 8 / secs / 1e6 if p in sub.index else 0.0
    row["retrans_pct"] = 100.0 * float(sub["bytes_retrans"].sum()) / max(1.0, float(sub["bytes_sent"].sum()))
    return row


rows = {cc: pd.DataFrame([per_run(r) for r in rs]) for cc, rs in runs.items()}  # one row per seed
table = pd.DataFrame({cc: frame.mean() for cc, frame in rows.items()}).T
table.index.name = "cc"
print(f"mean of {len(SEEDS)} seeds, {base.to_dict()['run']['duration']} each")
print(table.round(2).to_string())

# %% The comparison as bars: each seed's value, mean with 10-90 % bar and min/max whiskers
fig = plot.bars(
    [*paths, "goodput"],
    [{"label": cc, "values": [frame[f"{p}_mbps"].tolist() for p in paths] + [frame["goodput_mbps"].tolist()]}
     for cc, frame in rows.items()],
    title="cubic vs lia on " + base.name, ylabel="Mbit/s",
)
print(f"wrote {plot.save(fig, out / 'compare.png')}")
