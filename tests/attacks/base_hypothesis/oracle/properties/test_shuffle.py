"""A property that hands candidate code a Random Hypothesis draws (as a suite of a library taking ``random=`` does):
each number the candidate asks for is a draw of the example's."""

from calc.shuffle import shuffled
from hypothesis import given
from hypothesis import strategies as st


@given(st.randoms(use_true_random=False), st.lists(st.integers(0, 100), max_size=12))
def test_shuffle_keeps_every_item(rnd, xs):
    assert sorted(shuffled(xs, rnd)) == sorted(xs)
