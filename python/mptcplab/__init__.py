"""mptcplab: a Multipath TCP lab.

    >>> import mptcplab
    >>> result = mptcplab.simulate(mptcplab.Scenario.default(), duration="5 s")
    >>> result.summary[["flow", "goodput_mbps"]]

`import mptcplab` is kept light: pandas and pyarrow load when a Result is built,
plotting and distributed libraries only in the commands that use them.
Schedulers and path managers written in Python: `mptcplab.plugins` (docs/plugins.md).
"""
from __future__ import annotations

from . import plugins, stats
from ._version import __version__
from .api import simulate
from .catalog import components, congestion_controls, profile_gaps, profiles, schema
from .errors import PluginError, ScenarioError, SimulationInterrupted
from .result import Result, Timeseries
from .scenario import Scenario


__all__ = [
    "PluginError",
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationInterrupted",
    "Timeseries",
    "__version__",
    "components",
    "congestion_controls",
    "plugins",
    "profile_gaps",
    "profiles",
    "schema",
    "simulate",
    "stats",
]
