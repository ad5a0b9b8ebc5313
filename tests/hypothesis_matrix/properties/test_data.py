"""st.data() and data.draw."""
import feat
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=30)
@given(st.data())
def test_ok(data):
    xs = data.draw(st.lists(st.integers(0, 9), min_size=1, max_size=4), label="xs")
    k = data.draw(st.integers(0, 9), label="k")
    assert feat.shift_ok(xs, k) == [x + k for x in xs]


@settings(max_examples=30)
@given(st.data())
def test_bad(data):
    xs = data.draw(st.lists(st.integers(0, 9), min_size=1, max_size=4), label="xs")
    k = data.draw(st.integers(0, 9), label="k")
    assert feat.shift_bad(xs, k) == [x + k for x in xs]
