"""The verdict table (docs/design.md §3): one row per rule, and Hypothesis properties of the core."""

from __future__ import annotations

import datetime as dt
import typing
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core.promotion import Outcome, outcome, promote
from verdict_gate.core.signature import make_signature
from verdict_gate.core.verdict import REASON_ROWS, BaseSig, Example, FailureRef, Freeze, RunResult, Verdict, decide

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

TODAY = dt.date(2026, 11, 30)
BASE = "b" * 40
OLD_BASE = "a" * 40
DIGEST = "d" * 64
SIG = make_signature(prop_id="prop.x", node="properties/test_x.py::test_x", seed=7,
                     exc_type="builtins.AssertionError", message="expected 3, got 2", counterexample={"n": 2})
OTHER = make_signature(prop_id="prop.x", node="properties/test_x.py::test_x", seed=7,
                       exc_type="builtins.AssertionError", message="expected 3, got 2", counterexample={"n": 5})


def freeze(**kw: object) -> Freeze:
    values: dict[str, object] = dict(prop_id="prop.x", signature=SIG.value, signature_parts=SIG.parts,
                                     fixture_digest=DIGEST, base_revision=OLD_BASE, reason="known, ORD-1",
                                     first_seen=dt.date(2026, 11, 1), expires_on=None)
    values.update(kw)
    return Freeze(**values)  # type: ignore[arg-type]


def failed(**kw: object) -> RunResult:
    values: dict[str, object] = dict(status="fail", signature=SIG.value, signature_parts=SIG.parts,
                                     fixture_digest=DIGEST, seed=7, seeded_kind=True, hits=12)
    values.update(kw)
    return RunResult(**values)  # type: ignore[arg-type]


# A second failure of the same property: another test node of its file (docs/design.md §5).
SIG2 = make_signature(prop_id="prop.x", node="properties/test_x.py::test_y", seed=7,
                      exc_type="builtins.ValueError", message="bad", counterexample={"n": 9})
F1, F2, F_OTHER = FailureRef(SIG.value, SIG.parts), FailureRef(SIG2.value, SIG2.parts), \
    FailureRef(OTHER.value, OTHER.parts)
BOTH = (F1, F2)
# A test node whose fixture nobody defines (pytest's FixtureLookupError, before the test's body).
FIXTURE = make_signature(prop_id="prop.x", node="properties/test_x.py::test_z", seed=7,
                         exc_type="_pytest.fixtures.FixtureLookupError", message="fixture 'db' not found",
                         counterexample=None, site="properties/test_x.py:30")
F_FIXTURE = FailureRef(FIXTURE.value, FIXTURE.parts)
HELD, BROKE = Example("1" * 32, True), Example("1" * 32, False, {"n": 12})
HELD2, BROKE2 = Example("2" * 32, True), Example("2" * 32, False, {"n": 7})


def set_freeze(failures: tuple[FailureRef, ...], **kw: object) -> Freeze:
    from verdict_gate.core.signature import set_signature

    return freeze(signature=set_signature(f.signature for f in failures), failures=failures, **kw)


def replayed(*failures: FailureRef, **kw: object) -> list[BaseSig]:
    from verdict_gate.core.signature import set_signature

    return [BaseSig("prop.x", set_signature(f.signature for f in failures), DIGEST, BASE,
                    failures=tuple(f.signature for f in failures), **kw)]  # type: ignore[arg-type]


PASSED = RunResult(status="pass", fixture_digest=DIGEST, seed=7, seeded_kind=True, hits=100)
REPLAYED = [BaseSig("prop.x", SIG.value, DIGEST, BASE)]
ANCESTORS = {OLD_BASE: True}

# (row id, run, oracle_edited, freezes, replay, ancestors, freeze_base, verdict, reason)
TABLE = [
    ("V1", PASSED, False, [], REPLAYED, ANCESTORS, "reproduced", "pass", "held"),
    ("V1-stale", PASSED, False, [freeze()], REPLAYED, ANCESTORS, "reproduced", "pass", "held"),
    ("V2", failed(), False, [], REPLAYED, ANCESTORS, "reproduced", "fail", "no_freeze"),
    ("V3", failed(), False, [freeze()], REPLAYED, ANCESTORS, "reproduced", "inconclusive", "frozen"),
    ("V3-exact", failed(), False, [freeze(base_revision=BASE)], REPLAYED, {}, "exact", "inconclusive", "frozen"),
    ("V4", failed(), True, [freeze()], REPLAYED, ANCESTORS, "reproduced", "fail", "oracle_moved"),
    ("V4-not-run", None, True, [freeze()], REPLAYED, ANCESTORS, "reproduced", "fail", "oracle_moved"),
    ("V5", PASSED, True, [], REPLAYED, ANCESTORS, "reproduced", "fail", "catalog_drift"),
    ("V6", None, False, [freeze()], REPLAYED, ANCESTORS, "reproduced", "fail", "missing_run"),
    ("V7", failed(signature=OTHER.value, signature_parts=OTHER.parts), False, [freeze()], REPLAYED, ANCESTORS,
     "reproduced", "fail", "signature_mismatch"),
    ("V8", failed(fixture_digest="e" * 64), False, [freeze()], REPLAYED, ANCESTORS, "reproduced", "fail",
     "digest_mismatch"),
    ("V9", failed(), False, [freeze()], REPLAYED, {OLD_BASE: False}, "reproduced", "fail", "base_mismatch"),
    ("V9-exact", failed(), False, [freeze()], REPLAYED, ANCESTORS, "exact", "fail", "base_mismatch"),
    ("V10", failed(), False, [freeze()], [], ANCESTORS, "reproduced", "fail", "not_reproduced_on_base"),
    ("V10-other-digest", failed(), False, [freeze()], [BaseSig("prop.x", SIG.value, "e" * 64, BASE)], ANCESTORS,
     "reproduced", "fail", "not_reproduced_on_base"),
    ("V11", failed(), False, [freeze(expires_on=dt.date(2026, 11, 29))], REPLAYED, ANCESTORS, "reproduced", "fail",
     "freeze_expired"),
    ("V12", PASSED.__class__(**{**PASSED.__dict__, "fixture_mutated": True}), False, [], REPLAYED, ANCESTORS,
     "reproduced", "fail", "fixture_mutated"),
    ("V13-timeout", failed(status="timeout", signature=OTHER.value, signature_parts=OTHER.parts, hits=None), False,
     [freeze()], REPLAYED, ANCESTORS, "reproduced", "fail", "timed_out"),
    ("V13-crash", failed(status="crash", hits=None), False, [], REPLAYED, ANCESTORS, "reproduced", "fail", "crashed"),
    ("V3-frozen-timeout", failed(status="timeout", hits=None), False, [freeze()], REPLAYED, ANCESTORS, "reproduced",
     "inconclusive", "frozen"),
    ("V14-unseeded", failed(seed=None), False, [freeze()], REPLAYED, ANCESTORS, "reproduced", "fail", "unseeded"),
    ("V14-vacuous", RunResult(status="pass", fixture_digest=DIGEST, seed=7, seeded_kind=True, hits=0), False, [],
     REPLAYED, ANCESTORS, "reproduced", "fail", "vacuous"),
    # Failure sets (docs/design.md §3, §5): a freeze forgives exactly the failures it names.
    ("V15", failed(failures=BOTH), False, [freeze()], replayed(*BOTH), ANCESTORS, "reproduced", "fail",
     "unfrozen_failure"),
    ("V3-set", failed(failures=BOTH), False, [set_freeze(BOTH)], replayed(*BOTH), ANCESTORS, "reproduced",
     "inconclusive", "frozen"),
    ("V3-subset", failed(failures=(F1,)), False, [set_freeze(BOTH)], replayed(*BOTH), ANCESTORS, "reproduced",
     "inconclusive", "frozen"),
    ("V3-two-records", failed(failures=BOTH), False, [freeze(), set_freeze((F2,))], replayed(*BOTH), ANCESTORS,
     "reproduced", "inconclusive", "frozen"),
    ("V7-set", failed(failures=(F_OTHER, F2)), False, [freeze()], replayed(F1), ANCESTORS, "reproduced", "fail",
     "signature_mismatch"),
    ("V10-set", failed(failures=BOTH), False, [set_freeze(BOTH)], replayed(F1), ANCESTORS, "reproduced", "fail",
     "not_reproduced_on_base"),
    ("V13-never-ran", failed(hits=0), False, [freeze()], [BaseSig("prop.x", None, DIGEST, BASE, status="pass")],
     ANCESTORS, "reproduced", "fail", "crashed"),  # the base ran it: the patch broke it, and no freeze can forgive
    ("V13-never-ran-no-base", failed(hits=0), False, [], [], ANCESTORS, "reproduced", "fail", "crashed"),
    # The oracle's own fault (docs/design.md §3, "Gate faults are not the candidate's"): it fails before its body
    # on the base revision too.
    ("V18", failed(hits=0), False, [], REPLAYED, ANCESTORS, "reproduced", "fail", "oracle_error"),
    ("V18-frozen", failed(hits=0), False, [freeze()], REPLAYED, ANCESTORS, "reproduced", "fail", "oracle_error"),
    ("V18-fixture", failed(failures=(F_FIXTURE, F2), hits=3), False, [], replayed(F_FIXTURE), ANCESTORS,
     "reproduced", "fail", "oracle_error"),
    ("V2-fixture-on-the-candidate-only", failed(failures=(F_FIXTURE, F2), hits=3), False, [], replayed(F2),
     ANCESTORS, "reproduced", "fail", "no_freeze"),
    ("V13-other-base", failed(hits=0), False, [], [BaseSig("prop.x", SIG.value, DIGEST, OLD_BASE)], ANCESTORS,
     "reproduced", "fail", "crashed"),  # only a try of the run's own base revision tells
    # Example logs (docs/design.md §8.3): an example that held on the base and fails now is new.
    ("V16", failed(example_log=(BROKE,)), False, [freeze()], replayed(F1, example_log=(HELD,)), ANCESTORS,
     "reproduced", "fail", "new_failing_examples"),
    ("V16-fresh", PASSED.__class__(**{**PASSED.__dict__, "fresh_log": (BROKE,)}), False, [],
     replayed(fresh_log=(HELD,)), ANCESTORS, "reproduced", "fail", "new_failing_examples"),
    ("V1-fresh-preexisting", PASSED.__class__(**{**PASSED.__dict__, "fresh_log": (BROKE,)}), False, [],
     replayed(fresh_log=(BROKE,)), ANCESTORS, "reproduced", "pass", "held"),
    ("V3-log-same-failures", failed(example_log=(BROKE, HELD.__class__("2" * 32, True))), False, [freeze()],
     replayed(F1, example_log=(BROKE, Example("2" * 32, True))), ANCESTORS, "reproduced", "inconclusive", "frozen"),
    ("V17", failed(isolation_asked="sandbox", isolation_level="process", isolation_method="process"), False,
     [freeze()], REPLAYED, ANCESTORS, "reproduced", "fail", "isolation_unavailable"),
    # V17 comes before every verdict a run could earn, a pass too (core.verdict.STAGES)
    ("V17-pass", PASSED.__class__(**{**PASSED.__dict__, "isolation_asked": "sandbox", "isolation_level": "process",
                                     "isolation_method": "process"}), False, [], REPLAYED, ANCESTORS, "reproduced",
     "fail", "isolation_unavailable"),
]


def flaky(failures: tuple[FailureRef, ...] = (F1,), rate: tuple[int, int] = (2, 5), **kw: object) -> Freeze:
    """A flaky freeze (docs/design.md §3, "Flaky freezes"): the union of the failures seen, failed ``rate``."""
    return set_freeze(failures, kind="flaky", rate=rate, **kw)


def tried(*outcomes: tuple[FailureRef, ...], **kw: object) -> list[BaseSig]:
    """One base replay try per outcome (a failure set; ``()`` is a pass), on BASE, in try order."""
    from verdict_gate.core.signature import set_signature

    return [BaseSig("prop.x", set_signature(f.signature for f in fs), DIGEST, BASE,
                    failures=tuple(f.signature for f in fs), status="fail" if fs else "pass", **kw)  # type: ignore[arg-type]
            for fs in outcomes]


PASSED_FRESH = PASSED.__class__(**{**PASSED.__dict__, "fresh_log": (BROKE,)})

# Flaky freezes and the catalog's `stale` (docs/design.md §3): (row id, run, freezes, tries, stale, verdict, reason,
# notes). Every row is a case the ledger can hold and the base replay can show.
FLAKY_TABLE = [
    ("V1-flaky-pass-no-note", PASSED, [flaky()], tried((F1,)), "note", "pass", "held", ()),
    ("V1-flaky-pass-stale-fail", PASSED, [flaky()], tried((F1,)), "fail", "pass", "held", ()),
    ("V1-deterministic-stale-note", PASSED, [freeze()], REPLAYED, "note", "pass", "held", ("freeze_stale",)),
    ("V1-deterministic-stale-fail", PASSED, [freeze()], REPLAYED, "fail", "fail", "freeze_stale", ()),
    ("V1-both-kinds-stale-fail", PASSED, [flaky((F2,)), freeze()], tried((F1,)), "fail", "fail", "freeze_stale", ()),
    ("V3-flaky-second-try", failed(), [flaky()], tried((), (F1,)), "note", "inconclusive", "frozen", ()),
    ("V3-flaky-one-of-its-set", failed(), [flaky(BOTH)], tried((F2,), (F1,)), "note", "inconclusive", "frozen", ()),
    # The candidate's examples are compared with none of the tries (none showed its failure): fail closed.
    ("V10-flaky-no-try-showed-its-failures", failed(), [flaky(BOTH)], tried((F2,)), "note", "fail",
     "not_reproduced_on_base", ()),
    ("V3-flaky-set", failed(failures=BOTH), [flaky(BOTH)], tried((F1,)), "note", "inconclusive", "frozen", ()),
    ("V10-flaky-no-try-showed-it", failed(), [flaky()], tried((), (), ()), "note", "fail", "not_reproduced_on_base",
     ()),
    ("V10-flaky-tries-outside-the-set", failed(), [flaky()], tried((F1, F_OTHER)), "note", "fail",
     "not_reproduced_on_base", ()),
    ("V8-flaky-other-digest", failed(), [flaky(fixture_digest="e" * 64)], tried((F1,)), "note", "fail",
     "digest_mismatch", ()),
    ("V11-flaky-expired", failed(), [flaky(expires_on=dt.date(2026, 11, 29))], tried((F1,)), "note", "fail",
     "freeze_expired", ()),
    ("V15-flaky", failed(failures=BOTH), [flaky()], tried((F1,)), "note", "fail", "unfrozen_failure", ()),
    ("V15-flaky-not-shown-on-base-either", failed(failures=BOTH), [flaky()], tried(()), "note", "fail",
     "unfrozen_failure", ()),
    ("V7-flaky", failed(failures=(F_OTHER,)), [flaky()], tried((F1,)), "note", "fail", "signature_mismatch", ()),
    ("V16-flaky-same-state", failed(example_log=(BROKE,)), [flaky()], tried((F1,), example_log=(HELD,)), "note",
     "fail", "new_failing_examples", ()),
    ("V3-flaky-other-state-not-compared", failed(example_log=(BROKE,)), [flaky()],
     tried((), example_log=(HELD,)) + tried((F1,), example_log=(BROKE,)), "note", "inconclusive", "frozen", ()),
    # A flaky union (issue 41): F1 and F2 never showed on the same base try. The candidate shows both, and an
    # example that held on every try fails: compared with each try that showed a failure of its set, it is new.
    ("V16-flaky-union-new-bug", failed(failures=BOTH, example_log=(BROKE,)), [flaky(BOTH)],
     tried((F1,), example_log=(HELD,)) + tried((F2,), example_log=(HELD,)), "note", "fail", "new_failing_examples", ()),
    ("V16-flaky-union-fresh", failed(failures=BOTH, fresh_log=(BROKE,)), [flaky(BOTH)],
     tried((F1,), fresh_log=(HELD,)) + tried((F2,), fresh_log=(HELD,)), "note", "fail", "new_failing_examples", ()),
    ("V16-flaky-union-another-way", failed(failures=BOTH, example_log=(replace(BROKE, fails="b" * 16),)),
     [flaky(BOTH)], tried((F1,), example_log=(replace(BROKE, fails="a" * 16),)) + tried((F2,), example_log=(HELD,)),
     "note", "fail", "new_failing_examples", ()),
    # … and the honest union: each failing example failed the same way on a try that showed a failure of the set.
    ("V3-flaky-union-old-examples", failed(failures=BOTH, example_log=(BROKE, BROKE2)), [flaky(BOTH)],
     tried((F1,), example_log=(BROKE, HELD2)) + tried((F2,), example_log=(HELD, BROKE2)) + tried((), example_log=(
         HELD, HELD2)), "note", "inconclusive", "frozen", ()),
    ("V16-flaky-fresh-on-a-pass", PASSED_FRESH, [flaky()], tried((), fresh_log=(HELD,)), "note", "fail",
     "new_failing_examples", ()),
    ("V16-flaky-fresh-on-a-pass-any-try", PASSED_FRESH, [flaky()], tried((F1,), fresh_log=(HELD,)), "note", "fail",
     "new_failing_examples", ()),  # a freeze never weakens the check of a pass
]


@pytest.mark.parametrize(("row", "run", "freezes", "tries", "stale", "verdict", "reason", "notes"), FLAKY_TABLE,
                         ids=[row[0] for row in FLAKY_TABLE])
def test_flaky_and_stale_table(row, run, freezes, tries, stale, verdict, reason, notes):
    got = decide(run, oracle_edited=False, freezes=freezes, replay=tries, base_revision=BASE, ancestors=ANCESTORS,
                 freeze_base="reproduced", today=TODAY, stale=stale)
    assert (got.verdict, got.reason, got.notes) == (verdict, reason, notes), got.detail
    assert got.row == row.split("-")[0]
    if any(f.flaky for f in freezes) and got.verdict == "pass":
        assert "stale" not in got.detail  # a flaky failure that did not show is expected: no advice


def test_a_flaky_not_reproduced_says_how_many_tries_and_the_odds():
    got = decide(failed(), oracle_edited=False, freezes=[flaky(rate=(2, 5))], replay=tried((), (), ()),
                 base_revision=BASE, ancestors=ANCESTORS, freeze_base="reproduced", today=TODAY)
    assert "none of the 3 base replay tries" in got.detail and "failed 2 of 5" in got.detail
    assert "21.6%" in got.detail and "replay_tries" in got.detail  # (1 - 2/5) ** 3


def test_stale_fail_names_the_freeze_to_remove():
    got = decide(PASSED, oracle_edited=False, freezes=[freeze()], replay=REPLAYED, base_revision=BASE,
                 ancestors=ANCESTORS, freeze_base="reproduced", today=TODAY, stale="fail")
    assert f"verdict-gate ledger remove {freeze().id}" in got.detail


def test_needs_try_only_where_a_try_can_change_the_verdict():
    from verdict_gate.core.verdict import needs_try

    assert needs_try(failed(), [flaky()], tried(()))  # the flake showed here, not on the base yet
    assert not needs_try(failed(), [flaky()], tried((), (F1,)))  # a try in the candidate's state exists
    assert not needs_try(failed(), [freeze()], [])  # a deterministic freeze gets one try
    assert not needs_try(failed(failures=(F_OTHER,)), [flaky()], tried(()))  # outside the set: fail whatever
    assert not needs_try(failed(failures=BOTH), [flaky()], tried(()))  # F2 is outside: no try can forgive it
    assert not needs_try(PASSED, [flaky()], tried((F1,)))  # a pass is a pass
    assert not needs_try(PASSED_FRESH, [flaky()], tried((F1,)))  # another try could only find more regressions
    assert not needs_try(None, [flaky()], [])


def test_a_freeze_id_names_its_identity():
    assert len(freeze().id) == 12 and int(freeze().id, 16) >= 0
    assert freeze().id == freeze(reason="reworded", expires_on=TODAY).id  # what it forgives, not how it reads
    assert freeze().id != freeze(base_revision=BASE).id != freeze(fixture_digest="e" * 64).id


@pytest.mark.parametrize(("row", "run", "edited", "freezes", "replay", "ancestors", "policy", "verdict", "reason"),
                         TABLE, ids=[row[0] for row in TABLE])
def test_verdict_table(row, run, edited, freezes, replay, ancestors, policy, verdict, reason):
    got = decide(run, oracle_edited=edited, freezes=freezes, replay=replay, base_revision=BASE,
                 ancestors=ancestors, freeze_base=policy, today=TODAY)
    assert (got.verdict, got.reason) == (verdict, reason)
    assert got.row == row.split("-")[0]


def test_every_row_has_a_case():
    rows = {case[0].split("-")[0] for case in TABLE}
    assert rows == {f"V{i}" for i in range(1, 19)} == set(REASON_ROWS.values())
    assert {case[-1] for case in TABLE} | {case[6] for case in FLAKY_TABLE} == set(REASON_ROWS)  # every reason


def test_stale_freeze_is_reported_on_pass():
    got = decide(PASSED, oracle_edited=False, freezes=[freeze()], replay=[], base_revision=BASE, ancestors={},
                 freeze_base="reproduced", today=TODAY)
    assert got.notes == ("freeze_stale",)


def test_signature_mismatch_names_the_differing_part():
    got = decide(failed(signature=OTHER.value, signature_parts=OTHER.parts), oracle_edited=False, freezes=[freeze()],
                 replay=REPLAYED, base_revision=BASE, ancestors=ANCESTORS, freeze_base="reproduced", today=TODAY)
    assert "counterexample" in got.detail and "seed" not in got.detail


def test_expiry_is_inclusive_of_today():
    got = decide(failed(), oracle_edited=False, freezes=[freeze(expires_on=TODAY)], replay=REPLAYED,
                 base_revision=BASE, ancestors=ANCESTORS, freeze_base="reproduced", today=TODAY)
    assert got.verdict == "inconclusive"


def test_unfrozen_failure_names_each_extra_failure():
    third = FailureRef(OTHER.value, {**OTHER.parts, "node": "properties/test_x.py::test_z"})
    got = decide(failed(failures=(F1, F2, third)), oracle_edited=False, freezes=[freeze()],
                 replay=replayed(F1, F2, third), base_revision=BASE, ancestors=ANCESTORS, freeze_base="reproduced",
                 today=TODAY)
    assert got.reason == "unfrozen_failure"
    assert "2 failure(s)" in got.detail and "test_x.py::test_y" in got.detail and "test_x.py::test_z" in got.detail
    assert "test_x.py::test_x" not in got.detail  # the frozen one is not named as extra


def test_subset_reports_the_fixed_failure_stale():
    got = decide(failed(failures=(F2,)), oracle_edited=False, freezes=[set_freeze(BOTH)], replay=replayed(*BOTH),
                 base_revision=BASE, ancestors=ANCESTORS, freeze_base="reproduced", today=TODAY)
    assert (got.verdict, got.reason, got.notes) == ("inconclusive", "frozen", ("freeze_stale",))
    assert "test_x.py::test_x" in got.detail and "freeze_stale" in got.detail
    whole = decide(failed(failures=BOTH), oracle_edited=False, freezes=[set_freeze(BOTH)], replay=replayed(*BOTH),
                   base_revision=BASE, ancestors=ANCESTORS, freeze_base="reproduced", today=TODAY)
    assert whole.notes == ()


def test_new_failing_example_names_its_input():
    got = decide(failed(example_log=(HELD.__class__("2" * 32, True), BROKE)), oracle_edited=False,
                 freezes=[freeze()], replay=replayed(F1, example_log=(Example("2" * 32, True), HELD)),
                 base_revision=BASE, ancestors=ANCESTORS, freeze_base="reproduced", today=TODAY)
    assert got.reason == "new_failing_examples" and "{'n': 12}" in got.detail


@pytest.mark.parametrize(("base_fails", "run_fails", "reason"), [
    ("a" * 16, "a" * 16, "frozen"),  # the example fails as on the base: the frozen failure
    ("a" * 16, "b" * 16, "new_failing_examples"),  # another bug on an example the base already failed
    (None, "b" * 16, "frozen"),  # a base log from before how-it-failed was recorded: nothing to compare
])
def test_an_example_the_base_failed_must_fail_the_same_way(base_fails: str | None, run_fails: str,
                                                            reason: str) -> None:
    base = Example("3" * 32, False, {"n": 3}, fails=base_fails)
    run = Example("3" * 32, False, {"n": 3}, error="AssertionError: assert [0] == [6]", fails=run_fails)
    got = decide(failed(example_log=(run,)), oracle_edited=False, freezes=[freeze()],
                 replay=replayed(F1, example_log=(base,)), base_revision=BASE, ancestors=ANCESTORS,
                 freeze_base="reproduced", today=TODAY)
    assert got.reason == reason
    if reason == "new_failing_examples":
        assert "fails another way on the candidate (AssertionError: assert [0] == [6])" in got.detail


def test_a_log_from_another_base_does_not_count():
    other = [BaseSig("prop.x", SIG.value, DIGEST, OLD_BASE, failures=(SIG.value,), example_log=(HELD,))]
    got = decide(failed(example_log=(BROKE,)), oracle_edited=False, freezes=[freeze()], replay=REPLAYED + other,
                 base_revision=BASE, ancestors=ANCESTORS, freeze_base="reproduced", today=TODAY)
    assert got.reason == "frozen"


def test_any_matching_freeze_among_several_applies():
    stale = freeze(fixture_digest="e" * 64)
    got = decide(failed(), oracle_edited=False, freezes=[stale, freeze()], replay=REPLAYED, base_revision=BASE,
                 ancestors=ANCESTORS, freeze_base="reproduced", today=TODAY)
    assert got.reason == "frozen"


# --- properties of the core -------------------------------------------------------------

hexes = st.sampled_from(["a" * 40, "b" * 40, "c" * 40])
digests = st.sampled_from([DIGEST, "e" * 64])
sigs = st.sampled_from([SIG, OTHER])
statuses = st.sampled_from(["pass", "fail", "timeout", "crash", "skipped"])
dates = st.dates(min_value=dt.date(2026, 1, 1), max_value=dt.date(2027, 12, 31))


@st.composite
def runs(draw: st.DrawFn) -> RunResult | None:
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    sig = draw(sigs)
    return RunResult(status=draw(statuses), signature=sig.value, signature_parts=sig.parts,
                     fixture_digest=draw(digests), seed=draw(st.sampled_from([None, 7])),
                     seeded_kind=draw(st.booleans()), hits=draw(st.sampled_from([None, 0, 1, 50])),
                     fixture_mutated=draw(st.booleans()))


@st.composite
def freezes_(draw: st.DrawFn) -> Freeze:
    sig = draw(sigs)
    return freeze(signature=sig.value, signature_parts=sig.parts, fixture_digest=draw(digests),
                  base_revision=draw(hexes), expires_on=draw(st.none() | dates))


replays = st.lists(st.builds(BaseSig, st.just("prop.x"), st.sampled_from([SIG.value, OTHER.value, None]), digests,
                             hexes), max_size=3)


@given(run=runs(), edited=st.booleans(), frz=st.lists(freezes_(), max_size=3), rep=replays, base=hexes,
       anc=st.dictionaries(hexes, st.booleans()), policy=st.sampled_from(["reproduced", "exact"]), today=dates)
def test_no_freeze_ever_mints_a_pass(run, edited, frz, rep, base, anc, policy, today):
    got = decide(run, oracle_edited=edited, freezes=frz, replay=rep, base_revision=base, ancestors=anc,
                 freeze_base=policy, today=today)
    assert got.verdict in ("pass", "fail", "inconclusive")
    if got.verdict == "pass":
        assert run is not None and run.status == "pass" and not edited and not run.fixture_mutated
        assert got.reason == "held"
    if edited:
        assert got.verdict == "fail"  # an edited oracle voids every freeze
    if got.verdict == "inconclusive":
        assert run is not None and run.status != "pass" and got.reason == "frozen"
        match = [f for f in frz if f.signature == run.signature and f.fixture_digest == run.fixture_digest]
        assert match, "inconclusive needs a freeze with this signature and fixture digest"
        assert any(r.signature == run.signature and r.base_revision == base for r in rep)


@given(run=runs(), edited=st.booleans(), frz=st.lists(freezes_(), max_size=3), rep=replays, base=hexes,
       anc=st.dictionaries(hexes, st.booleans()), today=dates)
def test_oracle_error_only_on_the_base_s_own_evidence(run, edited, frz, rep, base, anc, today):
    """The oracle is blamed only where the base revision showed the same failure before the property's body; it
    is never a pass, and it makes the outcome incomplete (a missing run is never a pass)."""
    from verdict_gate.core.verdict import INCOMPLETE_REASONS, never_reached

    got = decide(run, oracle_edited=edited, freezes=frz, replay=rep, base_revision=base, ancestors=anc,
                 freeze_base="reproduced", today=today)
    if got.reason == "oracle_error":
        assert got.verdict == "fail" and run is not None and not edited and "oracle_error" in INCOMPLETE_REASONS
        on_base = {r.signature for r in rep if r.base_revision == base}
        assert {f.signature for f in never_reached(run)} & on_base
        assert "fix:" in got.detail


@given(run=runs(), frz=st.lists(freezes_(), max_size=3), rep=replays, today=dates)
def test_adding_freezes_never_turns_a_fail_into_a_pass(run, frz, rep, today):
    bare = decide(run, oracle_edited=False, freezes=[], replay=rep, base_revision=BASE, ancestors={},
                  freeze_base="reproduced", today=today)
    frozen = decide(run, oracle_edited=False, freezes=frz, replay=rep, base_revision=BASE, ancestors={},
                    freeze_base="reproduced", today=today)
    assert (bare.verdict == "pass") == (frozen.verdict == "pass")


verdict_values = st.sampled_from([Verdict("pass", "held"), Verdict("fail", "no_freeze"),
                                  Verdict("inconclusive", "frozen")])
ids = st.sampled_from(["prop.a", "prop.b", "prop.c", "prop.d"])


@given(verdicts=st.dictionaries(ids, verdict_values), claimed=st.sets(ids),
       policy=st.sampled_from(["lenient", "strict"]))
def test_promotion_rules(verdicts, claimed, policy):
    got = promote(verdicts, claimed, policy)
    values = [v.verdict for v in verdicts.values()]
    if got.promoted:
        assert claimed, "an empty claim set never promotes"
        assert set(verdicts) == claimed, "verdict ids must equal the claims"
        assert "fail" not in values
        assert "pass" in values, "all-inconclusive never promotes"
        if policy == "strict":
            assert set(values) == {"pass"}
    if not claimed or set(verdicts) != claimed or "pass" not in values or "fail" in values:
        assert not got.promoted


@given(incomplete=st.booleans(), promoted=st.booleans())
def test_outcome_precedence(incomplete, promoted):
    got = outcome(incomplete=incomplete, promoted=promoted)
    # void is never computed: the pipeline records it explicitly
    assert got in typing.get_args(Outcome) and got != "void"
    assert (got == "promoted") == (not incomplete and promoted)
    if incomplete:
        assert got == "incomplete"
    elif not promoted:
        assert got == "blocked"
