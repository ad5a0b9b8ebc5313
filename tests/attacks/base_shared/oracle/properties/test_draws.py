"""The random module: check digits of ids an unseeded example draws (different in every run), and a sample
the candidate draws after the test's own random.seed(1)."""

import random

from calc.draws import check_digit, sample_ids


def test_check_digits_of_random_ids():
    ids = [random.randrange(10**12) for _ in range(40)]
    for number in ids:
        assert check_digit(number) == sum(map(int, str(number))) % 10, number


def test_sample_follows_the_test_s_seed():
    random.seed(1)
    drawn = sample_ids(5)
    again = random.Random(1)
    assert drawn == [again.randrange(1_000_000) for _ in range(5)]
