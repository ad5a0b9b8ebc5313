"""Fresh examples are part of a property's own budget (docs/design.md §8.3): of its Hypothesis
``max_examples``, ``fresh_examples`` (a count or a percentage, default 20 %, at most half) come from
the run's fresh seed and the rest from the recorded seed, so a run draws what plain pytest draws."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core.catalog import DEFAULT_FRESH
from verdict_gate.core.errors import GateError
from verdict_gate.host.files import parse_catalog
from verdict_gate_plugin import fresh_split

pytestmark = pytest.mark.fast

CATALOG = "version: 1\nseed: 3\nproperties:\n  - id: prop.a\n    oracle: properties/test_a.py\n"


@pytest.mark.parametrize(("fresh", "budget", "split"), [
    (None, 100, (100, 0)),      # an example (kind: example) or a spec without it: none
    (0, 50, (50, 0)),           # off
    ("0%", 50, (50, 0)),
    ("20%", 100, (80, 20)),     # the default on Hypothesis's default budget
    ("20%", 50, (40, 10)),
    ("20%", 3, (2, 1)),         # rounded up: 0.6 → 1
    ("20%", 1, (1, 0)),         # half of one example is none
    ("50%", 7, (4, 3)),         # 3.5 → 4, but at most half: 3
    (10, 50, (40, 10)),         # a count
    (100, 50, (25, 25)),        # a count larger than half the budget: half
])
def test_the_split_of_a_budget(fresh, budget, split) -> None:
    assert fresh_split(fresh, budget) == split


@given(budget=st.integers(1, 100_000),
       fresh=st.one_of(st.none(), st.integers(0, 100_000), st.integers(0, 50).map(lambda p: f"{p}%")))
def test_the_recorded_seed_keeps_the_larger_part_and_nothing_is_drawn_twice(budget, fresh) -> None:
    recorded, drawn_fresh = fresh_split(fresh, budget)
    assert recorded + drawn_fresh == budget
    assert 0 <= drawn_fresh <= budget // 2 <= recorded


def test_the_default_is_a_fifth_of_the_budget() -> None:
    catalog = parse_catalog(CATALOG, "catalog.yaml")
    assert catalog.properties[0].fresh_examples == DEFAULT_FRESH == "20%"
    assert catalog.properties[0].draws_fresh
    off = parse_catalog(CATALOG.replace("seed: 3\n", "seed: 3\nfresh_examples: 0\n"), "catalog.yaml")
    assert not off.properties[0].draws_fresh
    own = parse_catalog(CATALOG + "    fresh_examples: 5\n", "catalog.yaml")
    assert own.properties[0].fresh_examples == 5


@pytest.mark.parametrize("value", ['"60%"', '"20 %"', '"0.2"', "-1", '"%"'])
def test_a_share_over_half_or_misspelt_is_a_configuration_error(value: str) -> None:
    with pytest.raises(GateError) as err:
        parse_catalog(CATALOG.replace("seed: 3\n", f"seed: 3\nfresh_examples: {value}\n"), "catalog.yaml")
    assert "fresh_examples" in str(err.value)
