"""st.recursive."""
import feat
from hypothesis import given, settings
from hypothesis import strategies as st

TREES = st.recursive(st.integers(0, 9), lambda kids: st.lists(kids, max_size=3), max_leaves=6)


def total(tree):
    return tree if isinstance(tree, int) else sum(total(kid) for kid in tree)


@settings(max_examples=30)
@given(TREES)
def test_ok(tree):
    assert feat.tree_sum_ok(tree) == total(tree)


@settings(max_examples=30)
@given(TREES)
def test_bad(tree):
    assert feat.tree_sum_bad(tree) == total(tree)
