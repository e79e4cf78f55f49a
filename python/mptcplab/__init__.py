"""mptcplab: a Multipath TCP lab.

    >>> import mptcplab
    >>> result = mptcplab.simulate(mptcplab.Scenario.default(), duration="5 s")
    >>> result.summary[["flow", "goodput_mbps"]]

`import mptcplab` is kept light: it loads the compiled core and nothing else; each public
name (`__all__`) is imported on first use (PEP 562 `__getattr__`), pandas and pyarrow when a
Result is built, plotting and distributed libraries only in the commands that use them.
So `python -m mptcplab._bench` (the benchmark's child, timed as a whole process) pays
for what it uses only.
Schedulers and path managers written in Python: `mptcplab.plugins` (docs/plugins.md).
"""
from __future__ import annotations

import sys

from ._version import __version__

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

# Type checkers see the names as if imported here (`TYPE_CHECKING` is true for them; a
# local constant rather than typing's, whose import costs more than all of this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from . import api, catalog, errors, plugins, result, scenario, stats
    from .api import simulate
    from .catalog import components, congestion_controls, profile_gaps, profiles, schema
    from .errors import PluginError, ScenarioError, SimulationInterrupted
    from .result import Result, Timeseries
    from .scenario import Scenario

# Public name -> the submodule that defines it. A submodule maps to itself: `plugins` and
# `stats` are public, and `api`, `catalog`, `errors`, `result`, `scenario` were attributes
# of the package when it imported them eagerly, so `mptcplab.scenario.Scenario` still works.
_HOME = {
    "simulate": "api",
    "components": "catalog",
    "congestion_controls": "catalog",
    "profile_gaps": "catalog",
    "profiles": "catalog",
    "schema": "catalog",
    "PluginError": "errors",
    "ScenarioError": "errors",
    "SimulationInterrupted": "errors",
    "Result": "result",
    "Timeseries": "result",
    "Scenario": "scenario",
    **{m: m for m in ("api", "catalog", "errors", "plugins", "result", "scenario", "stats")},
}


def _submodule(name: str) -> object:
    # `import mptcplab.x`, not `from . import x`: the latter first asks this package for
    # `x` (hasattr), which lands back in `__getattr__`. Import statements, not importlib:
    # readers, and the import graph of tests/python/test_imports.py, see every edge.
    if name == "api":
        import mptcplab.api
    elif name == "catalog":
        import mptcplab.catalog
    elif name == "errors":
        import mptcplab.errors
    elif name == "plugins":
        import mptcplab.plugins
    elif name == "result":
        import mptcplab.result
    elif name == "scenario":
        import mptcplab.scenario
    else:
        import mptcplab.stats  # noqa: F401 - the import is the point
    return sys.modules[f"{__name__}.{name}"]


def __getattr__(name: str) -> object:
    """PEP 562: import a public name's submodule on first use and keep the name here, so
    later lookups are plain module attributes."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _submodule(home)
    value = module if home == name else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The names an eager package had: its globals and every lazy name, not the machinery."""
    hidden = {"TYPE_CHECKING", "_HOME", "_submodule", "__getattr__", "__dir__", "sys"}
    return sorted((set(globals()) - hidden) | set(_HOME) | set(__all__))
