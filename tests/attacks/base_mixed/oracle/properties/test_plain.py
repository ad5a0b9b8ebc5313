"""A property the pack runs at isolation none (a test that needs no boundary, as the README allows)."""

from calc.ops import add


def test_add_small():
    assert add(2, 3) == 5
