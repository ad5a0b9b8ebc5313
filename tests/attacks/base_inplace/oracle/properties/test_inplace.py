"""An in-place API: the property checks the caller's list after the call."""

from calc.inplace import sort_in_place
from hypothesis import given
from hypothesis import strategies as st


@given(st.lists(st.integers(-1000, 1000)))
def test_sort_in_place(xs):
    expected = sorted(xs)
    assert sort_in_place(xs) is None
    assert xs == expected
