"""The TOML behind `Scenario.to_toml` and `scenario.toml` in saved results (tomli-w since
issue 15; until then a hand-written writer): what it writes reads back to the same data."""
from __future__ import annotations

import math
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mptcplab import Scenario
from mptcplab.errors import ScenarioError
from mptcplab.kernel.validate import KernelStore

from conftest import SCENARIOS, two_paths

keys = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=12,
)
documents = st.dictionaries(keys, values, max_size=6)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_any_document_of_toml_types_reads_back_equal(doc):
    assert tomllib.loads(Scenario.from_dict(doc).to_toml()) == doc


def test_every_example_scenario_round_trips_through_the_writer():
    paths = sorted(SCENARIOS.rglob("*.toml"))
    assert len(paths) > 20
    for path in paths + [None]:
        s = Scenario.default() if path is None else Scenario.from_toml(path)
        assert Scenario.from_toml(s.to_toml()) == s, path


def test_long_tables_become_sections_and_short_lists_of_tables_stay_one_per_line():
    d = two_paths()
    text = Scenario.from_dict(d).to_toml()
    assert "[run]" in text and "[[connections]]" in text and "[connections.app]" in text
    assert '  { name = "l0", rate = "10 Mbit/s", delay = "10 ms", queue = "100 pkt" },' in text.splitlines()
    assert tomllib.loads(text) == d


def test_escapes_and_extreme_floats_read_back_exactly():
    doc = {"c": 1e-300, "big": 1.7976931348623157e308, "d": 'quote " and \\ and \n and \x01 and \x7f', "e f": 1,
           "neg": -0.0}
    back = tomllib.loads(Scenario.from_dict(doc).to_toml())
    assert back == doc and math.copysign(1.0, back["neg"]) == -1.0


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_naming_the_field(bad):
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict({"links": [{"loss": bad}]}).to_toml()
    assert err.value.field == "links[0].loss" and "finite" in err.value.message


def test_the_kernel_store_key_depends_on_the_data_not_on_the_toml_layout():
    a = Scenario.from_dict(two_paths())
    flipped = Scenario.from_dict(dict(reversed(list(a.to_dict().items()))))  # same data, other key order
    assert KernelStore.digest(a) == KernelStore.digest(Scenario.from_toml(a.to_toml())) == KernelStore.digest(flipped)
    assert KernelStore.digest(a) != KernelStore.digest(a.with_("connections[0].cc", "lia"))
