"""assume() and reject()."""
import feat
from hypothesis import assume, given, reject, settings
from hypothesis import strategies as st


@settings(max_examples=30)
@given(st.integers(0, 19))
def test_ok(n):
    assume(n != 5)
    if n == 11:
        reject()
    assert feat.halve_ok(n) == n // 2


@settings(max_examples=30)
@given(st.integers(0, 19))
def test_bad(n):
    assume(n != 5)
    if n == 11:
        reject()
    assert feat.halve_bad(n) == n // 2
