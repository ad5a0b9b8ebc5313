"""Known failures of calc.known, frozen in the ledger by a real base replay (attack_harness.build_base)."""

from calc.known import band, parse_amount, round_all
from hypothesis import given
from hypothesis import strategies as st


def ref(a):
    return (a * 119 + 50) // 100


@given(st.lists(st.integers(0, 2000), min_size=1, max_size=5))
def test_round_known(amounts):
    assert round_all(amounts) == [ref(a) for a in amounts]


CASES = [(10_000, 0), (25_000, 10), (45_000, 20), (65_000, 30), (85_000, 40)]


def test_band_table():
    for income, expected in CASES:
        assert band(income) == expected


def test_parse_known():
    assert parse_amount("12") == 12
    assert parse_amount("+5") == 5
