"""How many base replay tries a flaky freeze gets (docs/design.md §3, "Flaky freezes"). Pure, exact.

A flake that failed k of n replays when it was frozen is missed by one try with chance 1 - k/n, and by T
independent tries with chance (1 - k/n)^T. An honest patch whose run shows the flake is blocked
(``not_reproduced_on_base``) exactly when every base try misses it, so the tries follow from the rate: the
fewest T with (1 - k/n)^T ≤ :data:`MISS`, one gate in 10,000 at most. The catalog's ``replay_tries`` sets the
number instead; the property's timeout and :data:`MAX_TRIES` bound it, and the run says so when they bite.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

MISS = Fraction(1, 10_000)  # the chance, at most, that the tries all miss a flake at its recorded rate
MAX_TRIES = 100  # tries of one property in one gate, whatever its rate (a flake rarer than 1 in 11 needs more)
NO_RATE_TRIES = 5  # a flaky freeze without a rate (the ledger's schema requires one): the old default


def tries_for(rate: tuple[int, int] | None) -> int:
    """The fewest tries T ≥ 1 with (1 - k/n)^T ≤ :data:`MISS` for ``rate`` = (k, n): failed k of n replays
    (k is taken as at most n; a flake that failed every replay needs one). :data:`NO_RATE_TRIES` without a
    usable rate. Not capped (see :func:`planned`)."""
    if not rate or rate[1] <= 0 or rate[0] <= 0:
        return NO_RATE_TRIES
    k, n = min(rate[0], rate[1]), rate[1]
    if k == n:
        return 1
    miss_one = Fraction(n - k, n)
    guess = max(1, math.ceil(math.log(MISS) / math.log(miss_one)))  # floats: within one of the answer
    while guess > 1 and miss_one ** (guess - 1) <= MISS:
        guess -= 1
    while miss_one ** guess > MISS:
        guess += 1
    return guess


def miss_chance(rate: tuple[int, int] | None, tries: int) -> Fraction | None:
    """(1 - k/n)^tries, exactly; ``None`` without a usable rate."""
    if not rate or rate[1] <= 0 or rate[0] <= 0:
        return None
    return Fraction(rate[1] - min(rate[0], rate[1]), rate[1]) ** tries


def planned(rates: Iterable[tuple[int, int] | None], replay_tries: int | None = None) -> int:
    """The tries one property gets: the catalog's ``replay_tries`` when set, else enough for the rarest of its
    flaky freezes' ``rates`` (:func:`tries_for`), at most :data:`MAX_TRIES`; 1 without a flaky freeze."""
    if replay_tries is not None:
        return replay_tries
    wanted = [tries_for(rate) for rate in rates]
    return min(MAX_TRIES, max(wanted)) if wanted else 1


def one_in(chance: Fraction | float) -> str:
    """``1 in 10,000``-style words for a chance (``never`` for 0)."""
    if chance <= 0:
        return "never"
    return f"1 in {round(1 / float(chance)):,}"


def notice(prop_id: str, *, plan: int, replay_tries: int | None, rate: tuple[int, int] | None, tried: int,
           state: str, timeout: float, spent: float) -> str:
    """One property's flaky tries in words, for the run's notices: the plan and why, and what the tries showed.

    ``state``: ``passed`` (the candidate passed: no try beyond the base replay's), ``outside`` (it failed outside
    the freeze: no try could change its verdict), ``showed`` (try ``tried`` showed what the candidate's run
    showed) or ``missed`` (none did: the tries stopped at the plan, or at the property's ``timeout`` seconds when
    their own run time, ``spent``, reached it; the notice then gives the odds of such a miss at ``rate``)."""
    why = (f"the catalog's replay_tries {replay_tries}" if replay_tries is not None
           else f"its freeze failed {rate[0]} of {rate[1]} replays" if rate else "its freeze has no rate")
    head = f"base replay: {prop_id}: flaky freeze: {plan} tr{'y' if plan == 1 else 'ies'} planned ({why}"
    if replay_tries is None and rate and tries_for(rate) > plan:
        head += f"; {tries_for(rate)} would keep a miss under 1 in 10,000, and {MAX_TRIES} is the most a gate makes"
    head += ")"
    if state == "passed":
        return f"{head}; the candidate passed, so no try beyond the first"
    if state == "outside":
        return f"{head}; the candidate failed outside the freeze, so no try could change its verdict"
    if state == "showed":
        return f"{head}; try {tried} showed what the candidate's run showed"
    bound = (f"its planned {plan}" if tried >= plan else
             f"the property's {timeout:g} s timeout (its tries after the first ran {spent:.1f} s)")
    chance = miss_chance(rate, tried)
    odds = f"; a flake at its rate is missed by {tried} tries {one_in(chance)} of the time" if chance else ""
    return f"{head}; no try showed what the candidate's run showed, stopped at {bound}{odds}"
