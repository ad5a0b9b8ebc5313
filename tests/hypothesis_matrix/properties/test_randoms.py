"""st.randoms(): a Random whose numbers Hypothesis draws (its methods are code Hypothesis writes itself, whose
file name is <string>), used by the test to shuffle what it hands the candidate."""
import feat
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=30)
@given(st.randoms(use_true_random=False), st.lists(st.integers(0, 9), max_size=6))
def test_ok(rnd, xs):
    ys = list(xs)
    rnd.shuffle(ys)
    assert feat.sort_ok(ys) == sorted(xs)


@settings(max_examples=30)
@given(st.randoms(use_true_random=False), st.lists(st.integers(0, 9), max_size=6))
def test_bad(rnd, xs):
    ys = list(xs)
    rnd.shuffle(ys)
    assert feat.sort_bad(ys) == sorted(xs)
