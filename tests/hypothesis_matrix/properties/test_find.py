"""find()."""
import feat
from hypothesis import find
from hypothesis import strategies as st


def test_ok():
    assert find(st.integers(0, 100), lambda n: feat.square_ok(n) == 64) == 8


def test_bad():
    assert find(st.integers(0, 100), lambda n: feat.square_bad(n) == 64) == 8
