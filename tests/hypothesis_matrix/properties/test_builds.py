"""st.builds (of the candidate's own dataclass)."""
import feat
from hypothesis import given, settings
from hypothesis import strategies as st

PAIRS = st.builds(feat.Pair, a=st.integers(0, 9), b=st.integers(0, 9))


@settings(max_examples=30)
@given(PAIRS)
def test_ok(pair):
    assert feat.pair_sum_ok(pair) == pair.a + pair.b


@settings(max_examples=30)
@given(PAIRS)
def test_bad(pair):
    assert feat.pair_sum_bad(pair) == pair.a + pair.b
