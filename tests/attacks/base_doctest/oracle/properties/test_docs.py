"""The module's documented examples hold, as toolz's own suite checks its curried namespace."""

import doctest

import calc.ops


def test_ops_doctests():
    assert doctest.testmod(calc.ops).failed == 0
