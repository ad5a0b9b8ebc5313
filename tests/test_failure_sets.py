"""Failure sets, example logs and fresh seeds in the core (docs/design.md §3 V3/V15/V16, §5, §8.3).

Hypothesis properties: no combination of failure sets, example logs and freezes yields ``pass`` or
``inconclusive`` when a failure of the run is outside the frozen set or an example regressed; and
the ledger reads both record shapes (one signature, a failure set).
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core.catalog import Property
from verdict_gate.core.errors import GateError
from verdict_gate.core.ledger import add_freeze, unfreezable
from verdict_gate.core.records import run_record
from verdict_gate.core.signature import make_signature, set_signature
from verdict_gate.core.verdict import BaseSig, Example, FailureRef, Freeze, RunResult, decide
from verdict_gate.host.files import parse_ledger

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

BASE, OLD = "b" * 40, "a" * 40
DIGEST, OTHER_DIGEST = "d" * 64, "e" * 64
TODAY = dt.date(2026, 11, 30)


def _sig(node: str, n: int) -> FailureRef:
    s = make_signature(prop_id="prop.x", node=f"properties/test_x.py::{node}", seed=7,
                       exc_type="builtins.AssertionError", message="boom", counterexample={"n": n})
    return FailureRef(s.value, s.parts)


FAILURES = [_sig("test_a", 1), _sig("test_a", 2), _sig("test_b", 1), _sig("test_c", 0)]
DIGESTS = ["a" * 32, "b" * 32, "c" * 32]

failure_sets = st.lists(st.sampled_from(FAILURES), min_size=1, max_size=4, unique_by=lambda f: f.signature)
logs = st.none() | st.lists(st.builds(Example, st.sampled_from(DIGESTS), st.booleans(), st.just({"n": 1})),
                            max_size=5).map(tuple)
revisions = st.sampled_from([BASE, OLD])
digests = st.sampled_from([DIGEST, OTHER_DIGEST])


@st.composite
def runs(draw: st.DrawFn) -> RunResult:
    status = draw(st.sampled_from(["pass", "fail", "fail", "fail", "timeout", "crash"]))
    failures = tuple(sorted(draw(failure_sets), key=lambda f: f.signature)) if status != "pass" else ()
    return RunResult(status=status, signature=set_signature(f.signature for f in failures),
                     signature_parts=failures[0].parts if len(failures) == 1 else None,
                     fixture_digest=draw(digests), seed=7, seeded_kind=True,
                     hits=draw(st.sampled_from([None, 1, 50])), failures=failures,
                     example_log=draw(logs), fresh_log=draw(logs))


@st.composite
def freezes(draw: st.DrawFn) -> Freeze:
    failures = tuple(sorted(draw(failure_sets), key=lambda f: f.signature))
    return Freeze(prop_id="prop.x", signature=set_signature(f.signature for f in failures) or "",
                  signature_parts=failures[0].parts, fixture_digest=draw(digests), base_revision=draw(revisions),
                  reason="known", first_seen=dt.date(2026, 11, 1),
                  expires_on=draw(st.none() | st.just(dt.date(2026, 11, 29)) | st.just(dt.date(2026, 12, 31))),
                  failures=failures)


@st.composite
def replays(draw: st.DrawFn) -> BaseSig:
    failures = tuple(f.signature for f in draw(st.lists(st.sampled_from(FAILURES), max_size=4)))
    return BaseSig("prop.x", set_signature(failures), draw(digests), draw(revisions), failures=failures,
                   example_log=draw(logs), fresh_log=draw(logs))


def _regressed(log: tuple[Example, ...] | None, base_logs: list[tuple[Example, ...] | None]) -> bool:
    held = {e.digest for b in base_logs if b for e in b if e.held}
    return any(not e.held and e.digest in held for e in log or ())


@given(run=runs(), frz=st.lists(freezes(), max_size=3), rep=st.lists(replays(), max_size=3),
       policy=st.sampled_from(["reproduced", "exact"]), ancestor=st.booleans())
def test_no_unfrozen_failure_or_regressed_example_is_forgiven(run, frz, rep, policy, ancestor):
    got = decide(run, oracle_edited=False, freezes=frz, replay=rep, base_revision=BASE, ancestors={OLD: ancestor},
                 freeze_base=policy, today=TODAY)
    fresh_regressed = _regressed(run.fresh_log, [r.fresh_log for r in rep if r.base_revision == BASE])
    if got.verdict == "pass":
        assert run.status == "pass" and not fresh_regressed
    if got.verdict == "inconclusive":
        assert run.status != "pass" and got.reason == "frozen"
        frozen = {f.signature for fr in frz for f in fr.failure_set()}
        reproduced = {s for r in rep if r.base_revision == BASE for s in r.failure_set()}
        for failure in run.failure_set():
            assert failure.signature in frozen, "a failure outside every frozen set was forgiven"
            assert failure.signature in reproduced, "a failure the base replay did not reproduce was forgiven"
        logged = [r.example_log for r in rep if r.base_revision == BASE and r.fixture_digest == run.fixture_digest]
        assert not _regressed(run.example_log, logged), "an example that held on the base was forgiven"
        assert not fresh_regressed, "a fresh example that held on the base was forgiven"


@given(run=runs(), frz=st.lists(freezes(), max_size=3), rep=st.lists(replays(), max_size=3), extra=failure_sets)
def test_adding_a_failure_outside_the_freezes_never_helps(run, frz, rep, extra):
    frozen = {f.signature for fr in frz for f in fr.failure_set()}
    outside = [f for f in extra if f.signature not in frozen and f not in run.failures]
    if run.status != "fail" or not outside:
        return
    more = RunResult(**{**run.__dict__, "failures": run.failures + tuple(outside)})
    got = decide(more, oracle_edited=False, freezes=frz, replay=rep, base_revision=BASE, ancestors={OLD: True},
                 freeze_base="reproduced", today=TODAY)
    assert got.verdict == "fail"


# --- the ledger: both shapes load; `freeze` writes sets and refuses what never ran -------------


def _replay_doc(failures: list[FailureRef], hits: int | None = 10) -> dict:
    return {"prop_id": "prop.x", "status": "fail", "signature": set_signature(f.signature for f in failures),
            "signature_parts": failures[0].parts if len(failures) == 1 else None, "fixture_digest": DIGEST,
            "base_revision": BASE, "hits": hits,
            "failures": [{"node": f.parts["node"], "exc_type": f.parts["exc_type"], "message": "boom",
                          "counterexample": None, "traceback": [], "signature": f.signature,
                          "signature_parts": dict(f.parts)} for f in failures]}


EMPTY = '{"version": 1, "freezes": []}'


def test_freeze_writes_a_failure_set_and_the_ledger_reads_it_back():
    text = add_freeze(EMPTY, "ledger", _replay_doc(FAILURES[:2]), reason="known", first_seen="2026-11-01")
    record = json.loads(text)["freezes"][0]
    assert [f["signature"] for f in record["failures"]] == sorted(f.signature for f in FAILURES[:2])
    assert record["signature"] == set_signature(f.signature for f in FAILURES[:2])
    assert "signature_parts" not in record
    (frz,) = parse_ledger(text, "ledger").freezes
    assert {f.signature for f in frz.failure_set()} == {f.signature for f in FAILURES[:2]}


def test_a_record_with_one_signature_is_a_set_of_one():
    one = FAILURES[0]
    legacy = {"version": 1, "freezes": [{"prop_id": "prop.x", "signature": one.signature,
                                         "signature_parts": dict(one.parts), "fixture_digest": DIGEST,
                                         "base_revision": BASE, "reason": "known", "first_seen": "2026-11-01"}]}
    (frz,) = parse_ledger(json.dumps(legacy), "ledger").freezes
    assert frz.failure_set() == (FailureRef(one.signature, one.parts),)
    run = RunResult(status="fail", signature=one.signature, signature_parts=one.parts, fixture_digest=DIGEST,
                    seed=7, seeded_kind=True, hits=3)
    got = decide(run, oracle_edited=False, freezes=[frz], replay=[BaseSig("prop.x", one.signature, DIGEST, BASE)],
                 base_revision=BASE, ancestors={}, freeze_base="reproduced", today=TODAY)
    assert got.reason == "frozen"


def test_a_set_record_whose_signature_is_not_its_set_is_refused():
    text = add_freeze(EMPTY, "ledger", _replay_doc(FAILURES[:2]), reason="known", first_seen="2026-11-01")
    doc = json.loads(text)
    doc["freezes"][0]["failures"].pop()  # a hand edit that narrows the set but keeps the old signature
    with pytest.raises(GateError, match="sorted failure set"):
        parse_ledger(json.dumps(doc), "ledger")


@pytest.mark.parametrize(("exc_type", "hits", "why"), [
    ("_pytest.fixtures.FixtureLookupError", 0, "fixture"),
    ("builtins.ModuleNotFoundError", 0, "zero hits"),
    ("verdict_gate.Crash", None, "crashed"),
])
def test_freeze_refuses_a_failure_that_never_reached_the_body(exc_type, hits, why):
    ref = FailureRef("x", {**FAILURES[0].parts, "exc_type": exc_type})
    from verdict_gate.core.signature import signature_of

    ref = FailureRef(signature_of(ref.parts), ref.parts)
    assert why in unfreezable(_replay_doc([ref], hits=hits))
    with pytest.raises(GateError, match="cannot be frozen"):
        add_freeze(EMPTY, "ledger", _replay_doc([ref], hits=hits), reason="known", first_seen="2026-11-01")


def test_run_record_keeps_every_failure_with_its_own_signature():
    prop = Property(id="prop.x", oracle="properties/test_x.py", node=None, kind="property", mutates_fixture=False,
                    seed=7, timeout=60, fold_digits=True)
    raw = {"status": "fail", "seed": 7, "hits": 5, "node": "properties/test_x.py::test_a",
           "exc_type": "builtins.AssertionError", "message": "boom", "counterexample": {"n": 1},
           "failures": [{"node": "properties/test_x.py::test_a", "exc_type": "builtins.AssertionError",
                         "message": "boom", "counterexample": {"n": 1}, "traceback": [], "origin": "oracle"},
                        {"node": "properties/test_x.py::test_b", "exc_type": "builtins.AssertionError",
                         "message": "boom", "counterexample": {"n": 1}, "traceback": [], "origin": "oracle"}]}
    rec = run_record(raw, prop, DIGEST, BASE, [])
    assert {f.signature for f in rec.failures} == {FAILURES[0].signature, FAILURES[2].signature}
    assert rec.signature == set_signature([FAILURES[0].signature, FAILURES[2].signature])
    assert rec.signature_parts is None  # a set of two has no one set of parts
    assert [f.signature for f in rec.failures] == sorted(f.signature for f in rec.failures)
    one = run_record({**raw, "failures": raw["failures"][:1]}, prop, DIGEST, BASE, [])
    assert one.signature == FAILURES[0].signature and one.signature_parts == FAILURES[0].parts
