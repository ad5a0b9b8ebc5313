"""target(), note() and event()."""
import feat
from hypothesis import event, given, note, settings, target
from hypothesis import strategies as st


@settings(max_examples=30)
@given(st.integers(0, 9))
def test_ok(n):
    note(f"tripling {n}")
    event("large" if n > 5 else "small")
    target(float(n), label="n")
    assert feat.triple_ok(n) == 3 * n


@settings(max_examples=30)
@given(st.integers(0, 9))
def test_bad(n):
    note(f"tripling {n}")
    event("large" if n > 5 else "small")
    target(float(n), label="n")
    assert feat.triple_bad(n) == 3 * n
