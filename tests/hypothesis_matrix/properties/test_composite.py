"""st.composite."""
import feat
from hypothesis import given, settings
from hypothesis import strategies as st


@st.composite
def ranges(draw):
    lo = draw(st.integers(0, 9))
    return lo, draw(st.integers(lo, lo + 9))


@settings(max_examples=30)
@given(ranges())
def test_ok(bounds):
    assert feat.width_ok(*bounds) == bounds[1] - bounds[0]


@settings(max_examples=30)
@given(ranges())
def test_bad(bounds):
    assert feat.width_bad(*bounds) == bounds[1] - bounds[0]
