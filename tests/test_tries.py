"""How many base replay tries a flaky freeze gets, from its recorded rate (docs/design.md §3, "Flaky freezes";
issue 40): a table, and Hypothesis properties of the exact rule."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core.tries import MAX_TRIES, MISS, NO_RATE_TRIES, miss_chance, notice, one_in, planned, tries_for

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)


@pytest.mark.parametrize(("rate", "tries"), [
    ((1, 2), 14),     # a 50 % flake: 0.5^13 = 1.2e-4 is not enough, 0.5^14 = 6.1e-5 is
    ((7, 14), 14),    # the same rate, recorded from more replays
    ((4, 5), 6),      # 0.2^5 = 3.2e-4, 0.2^6 = 6.4e-5
    ((3, 5), 11),     # 0.4^10 = 1.05e-4: just over
    ((2, 5), 19),     # 0.6^18 = 1.016e-4: just over
    ((2, 3), 9),      # 3^8 = 6,561 < 10,000 <= 3^9
    ((1, 5), 42),
    ((1, 100), 917),  # a rare flake needs many (planned caps them)
    ((5, 5), 1),      # failed every replay (a flaky freeze by --kind flaky): one try shows it
    ((9, 5), 1),      # more failures than replays (a hand-edited ledger): taken as every replay
    (None, NO_RATE_TRIES),
    ((0, 5), NO_RATE_TRIES),
])
def test_tries_follow_from_the_recorded_rate(rate: tuple[int, int] | None, tries: int) -> None:
    assert tries_for(rate) == tries


@pytest.mark.parametrize(("rates", "replay_tries", "tries"), [
    ([(1, 2)], None, 14),
    ([(1, 2), (1, 5)], None, 42),  # the rarest flake of the property decides
    ([(1, 100)], None, MAX_TRIES),  # at most MAX_TRIES in one gate (the run says so)
    ([(1, 2)], 3, 3),               # the catalog's replay_tries, when set
    ([], None, 1),                  # no flaky freeze: the base replay's one try
])
def test_the_plan_of_one_property(rates: list[tuple[int, int]], replay_tries: int | None, tries: int) -> None:
    assert planned(rates, replay_tries) == tries


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(1, n), st.just(n))))
def test_the_tries_are_the_fewest_that_miss_at_most_once_in_10000(rate: tuple[int, int]) -> None:
    tries = tries_for(rate)
    k, n = rate
    assert Fraction(n - k, n) ** tries <= MISS  # enough
    assert tries == 1 or Fraction(n - k, n) ** (tries - 1) > MISS  # and no more than needed
    assert miss_chance(rate, tries) == Fraction(n - k, n) ** tries


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(1, n), st.just(n))), st.integers(1, 399))
def test_a_more_frequent_flake_never_needs_more_tries(rate: tuple[int, int], more: int) -> None:
    k, n = rate
    assert tries_for((min(n, k + more), n)) <= tries_for(rate)


def test_odds_in_words() -> None:
    assert one_in(Fraction(1, 64)) == "1 in 64" and one_in(Fraction(1, 16384)) == "1 in 16,384"
    assert one_in(0) == "never"


@pytest.mark.parametrize(("kw", "words"), [
    (dict(plan=14, replay_tries=None, rate=(1, 2), tried=1, state="passed"),
     "14 tries planned (its freeze failed 1 of 2 replays); the candidate passed, so no try beyond the first"),
    (dict(plan=14, replay_tries=None, rate=(1, 2), tried=3, state="showed"),
     "(its freeze failed 1 of 2 replays); try 3 showed what the candidate's run showed"),
    (dict(plan=3, replay_tries=3, rate=(1, 2), tried=1, state="outside"),
     "3 tries planned (the catalog's replay_tries 3); the candidate failed outside the freeze"),
    (dict(plan=6, replay_tries=None, rate=(4, 5), tried=6, state="missed"),  # 0.2^6
     "no try showed what the candidate's run showed, stopped at its planned 6; a flake at its rate is missed by 6 "
     "tries 1 in 15,625 of the time"),
    # The timeout bites first: said so, with the odds the tries made leave.
    (dict(plan=14, replay_tries=None, rate=(1, 2), tried=4, state="missed", timeout=120, spent=118.5),
     "stopped at the property's 120 s timeout (its tries after the first ran 118.5 s); a flake at its rate is "
     "missed by 4 tries 1 in 16 of the time"),
    # The 100-try bound bites first: said so.
    (dict(plan=100, replay_tries=None, rate=(1, 100), tried=1, state="passed"),
     "100 tries planned (its freeze failed 1 of 100 replays; 917 would keep a miss under 1 in 10,000, and 100 is "
     "the most a gate makes)"),
])
def test_each_property_s_tries_are_reported(kw: dict, words: str) -> None:
    got = notice("prop.x", **{"timeout": 120.0, "spent": 0.0, **kw})
    assert got.startswith("base replay: prop.x: flaky freeze: ") and words in got, got
