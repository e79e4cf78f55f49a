"""`import mptcplab` is lazy (PEP 562, issue 14): it loads the compiled core and nothing
else of the package, and every public name still works as when the package imported them
all: `from mptcplab import ...`, attribute access, `*`, `dir()`, `__all__`."""
from __future__ import annotations

import json

import pytest

import mptcplab

from conftest import run_python


def test_import_mptcplab_loads_only_the_core_and_the_version():
    proc = run_python("import sys, json, mptcplab; print(json.dumps(sorted(m for m in sys.modules "
                      "if m == 'mptcplab' or m.startswith('mptcplab.') or m in ('pandas', 'numpy', 'typing'))))")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["mptcplab", "mptcplab._core", "mptcplab._version"]


def test_a_public_name_loads_its_module_on_first_use_and_stays():
    code = ("import sys, mptcplab; a = 'mptcplab.scenario' in sys.modules; S = mptcplab.Scenario; "
            "print(a, 'mptcplab.scenario' in sys.modules, 'Scenario' in vars(mptcplab), "
            "'mptcplab.result' in sys.modules)")
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "True", "False"]


@pytest.mark.parametrize("name", mptcplab.__all__)
def test_every_public_name_is_the_object_its_module_defines(name):
    import importlib

    value = getattr(mptcplab, name)
    home = {"simulate": "api", "Result": "result", "Timeseries": "result", "Scenario": "scenario",
            "PluginError": "errors", "ScenarioError": "errors", "SimulationInterrupted": "errors",
            "__version__": "_version"}.get(name, "catalog")
    if name in ("plugins", "stats"):
        assert value is importlib.import_module(f"mptcplab.{name}")
    else:
        assert value is getattr(importlib.import_module(f"mptcplab.{home}"), name)


def test_star_import_dir_and_submodules_are_as_when_the_package_was_eager():
    # The names a fresh `dir(mptcplab)` showed when __init__ imported everything.
    eager = ['PluginError', 'Result', 'Scenario', 'ScenarioError', 'SimulationInterrupted', 'Timeseries',
             '__all__', '__builtins__', '__cached__', '__doc__', '__file__', '__loader__', '__name__',
             '__package__', '__path__', '__spec__', '__version__', '_core', '_version', 'annotations', 'api',
             'catalog', 'components', 'congestion_controls', 'errors', 'plugins', 'profile_gaps', 'profiles',
             'result', 'scenario', 'schema', 'simulate', 'stats']
    code = ("import json, mptcplab; before = dir(mptcplab); ns = {}; exec('from mptcplab import *', ns); "
            "print(json.dumps([before, dir(mptcplab), sorted(k for k in ns if k != '__builtins__'), "
            "mptcplab.scenario.Scenario is mptcplab.Scenario, mptcplab.plugins.Scheduler.__name__]))")
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    before, after, star, same, scheduler = json.loads(proc.stdout)
    assert before == eager and after == eager
    assert star == sorted(mptcplab.__all__)
    assert same and scheduler == "Scheduler"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'mptcplab' has no attribute 'simulat'"):
        mptcplab.simulat  # noqa: B018
    assert not hasattr(mptcplab, "_HOME_nope")
    with pytest.raises(ImportError):
        exec("from mptcplab import simulat", {})
