"""@given with @example and @settings."""
import feat
from hypothesis import example, given, settings
from hypothesis import strategies as st


@settings(max_examples=30)
@example(n=0)
@given(n=st.integers(0, 9))
def test_ok(n):
    assert feat.inc_ok(n) == n + 1


@settings(max_examples=30)
@example(n=0)
@given(n=st.integers(0, 9))
def test_bad(n):
    assert feat.inc_bad(n) == n + 1
