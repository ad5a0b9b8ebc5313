"""st.deferred."""
import feat
from hypothesis import given, settings
from hypothesis import strategies as st

EXPR = st.deferred(lambda: st.integers(0, 9) | st.lists(EXPR, min_size=2, max_size=2))


def total(tree):
    return tree if isinstance(tree, int) else sum(total(kid) for kid in tree)


@settings(max_examples=30)
@given(EXPR)
def test_ok(tree):
    assert feat.tree_sum_ok(tree) == total(tree)


@settings(max_examples=30)
@given(EXPR)
def test_bad(tree):
    assert feat.tree_sum_bad(tree) == total(tree)
