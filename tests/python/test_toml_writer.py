"""The TOML writer behind `Scenario.to_toml` and `scenario.toml` in saved results."""
from __future__ import annotations

import math
import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st

from mptcplab import Scenario
from mptcplab._toml import dumps

from conftest import SCENARIOS

keys = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
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
    assert tomllib.loads(dumps(doc)) == doc


def test_every_example_scenario_round_trips_through_the_writer():
    for path in sorted(SCENARIOS.glob("*.toml")) + [None]:
        s = Scenario.default() if path is None else Scenario.from_toml(path)
        assert Scenario.from_toml(s.to_toml()) == s, path


def test_lists_of_tables_become_array_of_tables_and_small_tables_stay_inline():
    text = dumps({"name": "x", "links": [{"name": "a", "reverse": {"rate": "1 Mbit/s"}}], "run": {"seed": 1}})
    assert "[[links]]" in text
    assert 'reverse = { rate = "1 Mbit/s" }' in text
    assert "run = { seed = 1 }" in text or "[run]" in text


def test_special_floats_and_escapes_are_written_as_toml():
    doc = {"a": math.inf, "b": -math.inf, "c": 1e-300, "d": 'quote " and \\ and \n and \x01', "e f": 1}
    back = tomllib.loads(dumps(doc))
    assert back == doc
    assert math.isnan(tomllib.loads(dumps({"n": math.nan}))["n"])
