"""Flaky freezes in the core (docs/design.md §3, "Flaky freezes"): Hypothesis properties over random base
replay tries, and the ledger's records and upkeep (judging tries, list, remove, extend, prune, expiry).

The properties: whatever the tries showed, in whatever order, a flaky freeze never forgives a failure
outside its set, never turns a failure into ``pass``, never notes a pass stale, and forgives only when one
try showed failures within its set.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core.errors import GateError
from verdict_gate.core.ledger import add_freeze, judge_tries, ledger_from
from verdict_gate.core.signature import set_signature
from verdict_gate.core.upkeep import expiring, extend, find, prune, prune_plan, remove, row, tries_needed
from verdict_gate.core.verdict import BaseSig, Example, FailureRef, Freeze, RunResult, decide, needs_try
from verdict_gate.host.files import parse_ledger

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

# The failures, digests and example logs of the failure-set properties: the same draws, for flaky freezes.
from test_failure_sets import BASE, DIGEST, FAILURES, OLD, OTHER_DIGEST, TODAY, logs  # noqa: E402

failure_sets = st.lists(st.sampled_from(FAILURES), min_size=1, max_size=3, unique_by=lambda f: f.signature) \
    .map(lambda fs: tuple(sorted(fs, key=lambda f: f.signature)))


@st.composite
def runs(draw: st.DrawFn) -> RunResult:
    status = draw(st.sampled_from(["pass", "fail", "fail", "fail", "timeout", "crash"]))
    failures = draw(failure_sets) if status != "pass" else ()
    return RunResult(status=status, signature=set_signature(f.signature for f in failures),
                     signature_parts=failures[0].parts if len(failures) == 1 else None,
                     fixture_digest=draw(st.sampled_from([DIGEST, DIGEST, OTHER_DIGEST])), seed=7, seeded_kind=True,
                     hits=draw(st.sampled_from([None, 1, 50])), failures=failures,
                     example_log=draw(logs), fresh_log=draw(logs))


@st.composite
def flaky_freezes(draw: st.DrawFn) -> Freeze:
    failures = draw(failure_sets)
    replays = draw(st.integers(1, 20))
    return Freeze(prop_id="prop.x", signature=set_signature(f.signature for f in failures) or "",
                  signature_parts=failures[0].parts, fixture_digest=draw(st.sampled_from([DIGEST, OTHER_DIGEST])),
                  base_revision=draw(st.sampled_from([BASE, OLD])), reason="known flake",
                  first_seen=dt.date(2026, 11, 1),
                  expires_on=draw(st.none() | st.just(dt.date(2026, 11, 29)) | st.just(dt.date(2026, 12, 31))),
                  failures=failures, kind="flaky", rate=(draw(st.integers(1, replays)), replays))


@st.composite
def tries(draw: st.DrawFn) -> list[BaseSig]:
    """Random base replay tries: each passes, fails with any failure set (inside a freeze or not), or is lost."""
    out = []
    for _ in range(draw(st.integers(0, 6))):
        status = draw(st.sampled_from(["pass", "fail", "fail", "missing"]))
        fs = draw(failure_sets) if status == "fail" else ()
        out.append(BaseSig("prop.x", set_signature(f.signature for f in fs), draw(st.sampled_from([DIGEST, DIGEST,
                           OTHER_DIGEST])), draw(st.sampled_from([BASE, BASE, OLD])),
                           failures=tuple(f.signature for f in fs), example_log=draw(logs), fresh_log=draw(logs),
                           status=status))
    return out


def _decide(run: RunResult, frz: list[Freeze], rep: list[BaseSig], stale: str = "note", ancestor: bool = True):
    return decide(run, oracle_edited=False, freezes=frz, replay=rep, base_revision=BASE, ancestors={OLD: ancestor},
                  freeze_base="reproduced", today=TODAY, stale=stale)


@given(run=runs(), frz=st.lists(flaky_freezes(), min_size=1, max_size=3), rep=tries(),
       stale=st.sampled_from(["note", "fail"]), ancestor=st.booleans())
def test_a_flaky_freeze_never_forgives_a_failure_outside_its_set(run, frz, rep, stale, ancestor):
    got = _decide(run, frz, rep, stale, ancestor)
    if got.verdict == "inconclusive":
        frozen = {sig for fr in frz for sig in fr.names()}
        assert run.status != "pass" and got.reason == "frozen"
        assert {f.signature for f in run.failure_set()} <= frozen, "a failure outside every frozen set was forgiven"
        # … and only when one try on the run's base, under the freeze's fixtures, showed failures within the set
        for f in run.failure_set():
            assert any(f.signature in fr.names() and fr.fixture_digest == run.fixture_digest and any(
                t.failure_set() and t.failure_set() <= fr.names() and t.base_revision == BASE
                and t.fixture_digest == fr.fixture_digest for t in rep) for fr in frz)


@given(run=runs(), frz=st.lists(flaky_freezes(), max_size=3), rep=tries(), stale=st.sampled_from(["note", "fail"]))
def test_a_flaky_freeze_never_mints_a_pass_nor_notes_one_stale(run, frz, rep, stale):
    got = _decide(run, frz, rep, stale)
    bare = _decide(run, [], rep, stale)
    assert (got.verdict == "pass") == (bare.verdict == "pass"), "a flaky freeze changed whether the property passed"
    if got.verdict == "pass":
        assert run.status == "pass" and got.reason == "held" and got.notes == () and "stale" not in got.detail


@given(run=runs(), frz=st.lists(flaky_freezes(), min_size=1, max_size=3), rep=tries(), extra=failure_sets)
def test_a_failure_outside_the_set_fails_whatever_the_tries_showed(run, frz, rep, extra):
    frozen = {sig for fr in frz for sig in fr.names()}
    outside = tuple(f for f in extra if f.signature not in frozen)
    if run.status != "fail" or not outside:
        return
    merged = {f.signature: f for f in run.failures + outside}
    more = RunResult(**{**run.__dict__, "failures": tuple(merged[k] for k in sorted(merged))})
    assert _decide(more, frz, rep).verdict == "fail"


@given(run=runs(), frz=st.lists(flaky_freezes(), min_size=1, max_size=3), rep=tries(), data=st.data())
def test_the_verdict_does_not_depend_on_the_order_of_the_tries(run, frz, rep, data):
    shuffled = data.draw(st.permutations(rep))
    assert _decide(run, frz, rep) == _decide(run, frz, list(shuffled))


@given(run=runs(), frz=st.lists(flaky_freezes(), min_size=1, max_size=3), rep=tries())
def test_the_gate_stops_trying_only_when_another_try_could_not_reproduce_more(run, frz, rep):
    """The pipeline tries again while :func:`needs_try` says so: once it says no, no flaky freeze of a failure
    of the run is left unreproduced (all on the run's base and fixtures, as the gate's tries are)."""
    import dataclasses

    frz = [dataclasses.replace(f, fixture_digest=DIGEST, base_revision=BASE) for f in frz]
    rep = [dataclasses.replace(t, fixture_digest=DIGEST, base_revision=BASE) for t in rep]
    run = dataclasses.replace(run, fixture_digest=DIGEST)
    if needs_try(run, frz, rep):
        return
    got = _decide(run, frz, rep)
    assert got.reason != "not_reproduced_on_base", got.detail
    if run.status == "pass" and not any(not e.held for e in run.fresh_log or ()):
        assert got.verdict == "pass"  # a pass asked for no try at all


# A failing example of the candidate that held on every base try (``NEW`` on the candidate, ``NEW_HELD`` on the base).
NEW = Example("9" * 32, False, {"n": 99}, error="AssertionError: new", fails="c" * 16)
NEW_HELD = Example("9" * 32, True)


def _with(log: tuple[Example, ...] | None, example: Example, at: int) -> tuple[Example, ...]:
    log = log or ()
    return log[:at] + (example,) + log[at:]


@given(frozen=failure_sets, more=st.lists(flaky_freezes(), max_size=1), data=st.data())
def test_a_failure_outside_the_set_or_an_example_that_held_on_every_try_is_never_forgiven(frozen, more, data):
    """Issue 41: whatever the base tries showed (a flaky union's failures one per try, none, all, others), and
    whichever failures of the frozen set the candidate shows, a failure outside every frozen set, or an example
    (seeded or fresh) that held on every base try that ran and fails on the candidate, is never forgiven."""
    import dataclasses

    freezes = [Freeze(prop_id="prop.x", signature=set_signature(f.signature for f in frozen),
                      signature_parts=frozen[0].parts, fixture_digest=DIGEST, base_revision=BASE, reason="known flake",
                      first_seen=dt.date(2026, 11, 1), failures=frozen, kind="flaky", rate=(1, 2))]
    freezes += [dataclasses.replace(f, fixture_digest=DIGEST, base_revision=BASE, expires_on=None) for f in more]
    names = {sig for fr in freezes for sig in fr.names()}
    rep = []
    for n in range(data.draw(st.integers(1, 6), label="tries")):
        status = data.draw(st.sampled_from(["pass", "fail", "fail", "fail", "missing"]), label=f"try {n}")
        shown = data.draw(failure_sets, label=f"failures {n}") if status == "fail" else ()
        one = data.draw(st.booleans(), label=f"one failure {n}")  # a flaky union: one failure a try
        shown = shown[:1] if one else shown
        logs_ = [None, None] if status == "missing" else [
            _with(data.draw(logs, label=f"log {n}"), NEW_HELD, data.draw(st.integers(0, 5), label=f"at {n}"))
            for _ in "ef"]
        rep.append(BaseSig("prop.x", set_signature(f.signature for f in shown), DIGEST, BASE,
                           failures=tuple(f.signature for f in shown), example_log=logs_[0], fresh_log=logs_[1],
                           status=status))
    failures = data.draw(failure_sets, label="the candidate's failures")
    which = data.draw(st.sampled_from(["example", "fresh", "outside"]), label="what is new")
    outside = [f for f in failures if f.signature not in names]
    if which == "outside" and not outside:
        return
    example_log, fresh_log = data.draw(logs, label="candidate log"), data.draw(logs, label="candidate fresh log")
    if which != "outside":
        if not any(t.status != "missing" for t in rep):
            return  # no try ran: nothing held on every one
        at = data.draw(st.integers(0, 5), label="at")
        example_log, fresh_log = (_with(example_log, NEW, at), fresh_log) if which == "example" else (
            example_log, _with(fresh_log, NEW, at))
    run = RunResult(status="fail", signature=set_signature(f.signature for f in failures),
                    signature_parts=failures[0].parts if len(failures) == 1 else None, fixture_digest=DIGEST, seed=7,
                    seeded_kind=True, hits=50, failures=failures, example_log=example_log, fresh_log=fresh_log)
    got = _decide(run, freezes, rep)
    assert got.verdict == "fail", (which, got)
    if which != "outside" and got.reason == "new_failing_examples":
        # The detail names a failing example of the candidate's that held on the base: ours, or another one the
        # drawn logs happen to hold (a second regression; the core names the first it meets).
        held = {e.digest for t in rep for e in (t.example_log or ()) + (t.fresh_log or ()) if e.held}
        named = [repr(e.input) for e in (run.example_log or ()) + (run.fresh_log or ())
                 if not e.held and e.digest in held and e.input is not None]
        assert "{'n': 99}" in named and (any(n in got.detail for n in named) or "fresh example" in got.detail)


# --- judging replays for a freeze ------------------------------------------------------------------


def _try(failures: list[FailureRef], n: int = 1, *, status: str | None = None, hits: int | None = 10,
         rev: str = BASE) -> dict:
    return {"prop_id": "prop.x", "status": status or ("fail" if failures else "pass"),
            "signature": set_signature(f.signature for f in failures),
            "signature_parts": failures[0].parts if len(failures) == 1 else None, "fixture_digest": DIGEST,
            "base_revision": rev, "hits": hits, "try": n,
            "failures": [{"node": f.parts["node"], "exc_type": f.parts["exc_type"], "message": "boom",
                          "counterexample": None, "traceback": [], "signature": f.signature,
                          "signature_parts": dict(f.parts)} for f in failures]}


A, B = FAILURES[0], FAILURES[2]
EMPTY = '{"version": 1, "freezes": []}'


def test_replays_that_agree_are_a_deterministic_freeze():
    seen = judge_tries([_try([A, B], n) for n in (1, 2, 3)])
    assert (seen.kind, seen.failed, seen.replays) == ("deterministic", 3, 3)
    assert [f["signature"] for f in seen.failures] == sorted([A.signature, B.signature])


def test_replays_that_differ_are_a_flaky_freeze_of_the_union_seen():
    seen = judge_tries([_try([A], 1), _try([], 2), _try([B], 3), _try([], 4)])
    assert (seen.kind, seen.failed, seen.replays) == ("flaky", 2, 4)
    assert {f["signature"] for f in seen.failures} == {A.signature, B.signature}  # each seen at least once
    record = json.loads(add_freeze(EMPTY, "ledger", [_try([A], 1), _try([], 2), _try([B], 3)], reason="flake",
                                   first_seen="2026-11-01"))["freezes"][0]
    assert record["kind"] == "flaky" and record["rate"] == {"failed": 2, "replays": 3}
    assert record["signature"] == set_signature([A.signature, B.signature])
    (frz,) = parse_ledger(json.dumps({"version": 1, "freezes": [record]}), "ledger").freezes
    assert frz.flaky and frz.rate == (2, 3) and frz.names() == {A.signature, B.signature}


@pytest.mark.parametrize(("tries_", "kind", "says"), [
    ([_try([A], 1), _try([], 2)], "deterministic", "failed 1 of 2 replays"),
    ([_try([A], 1), _try([A, B], 2)], "deterministic", "cannot be recorded as deterministic"),
    ([_try([], 1), _try([], 2)], None, "no failure to freeze"),
    ([_try([A], 1), _try([], 2, status="missing")], None, "produced no result"),
    ([_try([A], 1), _try([A], 2, rev=OLD)], None, "different base revisions"),
    ([_try([A], 1), _try([A], 2, hits=0)], None, "zero hits"),
])
def test_judging_refuses_what_cannot_be_frozen(tries_, kind, says):
    with pytest.raises(GateError, match=says):
        judge_tries(tries_, kind=kind)


def test_a_flake_may_be_recorded_flaky_even_when_it_failed_every_time():
    seen = judge_tries([_try([A], 1), _try([A], 2)], kind="flaky")
    assert (seen.kind, seen.failed, seen.replays) == ("flaky", 2, 2)


@pytest.mark.parametrize(("change", "says"), [
    ({"kind": "deterministic", "rate": {"failed": 2, "replays": 5}}, "flaky"),
    ({"kind": "flaky", "rate": {"failed": 6, "replays": 5}}, "at most"),
    ({"last_seen": "2026-10-01"}, "last_seen"),
])
def test_the_ledger_refuses_records_no_freeze_could_have_written(change, says):
    record = {**json.loads(add_freeze(EMPTY, "ledger", _try([A]), reason="r", first_seen="2026-11-01"))["freezes"][0],
              **change}
    with pytest.raises(GateError, match=says):
        ledger_from({"version": 1, "freezes": [record]}, "ledger")


# --- keeping the ledger: find, list, remove, extend, expiry, prune ------------------------------------


def _ledger(*records: dict) -> tuple[str, object]:
    text = json.dumps({"version": 1, "freezes": list(records)})
    return text, parse_ledger(text, "ledger")


DET = json.loads(add_freeze(EMPTY, "l", [_try([A], 1), _try([A], 2)], reason="det", first_seen="2026-11-01",
                            expires_on="2026-12-05"))["freezes"][0]
FLAKY = json.loads(add_freeze(EMPTY, "l", [_try([B], 1), _try([], 2), _try([], 3), _try([], 4)], reason="flake",
                              first_seen="2026-11-10"))["freezes"][0]


def test_find_by_id_prefix_or_property():
    text, ledger = _ledger(DET, FLAKY)
    det, flk = ledger.freezes
    assert find(ledger, det.id) is det and find(ledger, flk.id[:6]) is flk
    with pytest.raises(GateError, match="names 2 freezes"):
        find(ledger, "prop.x")  # both freeze prop.x: an id is needed
    with pytest.raises(GateError, match="names no freeze"):
        find(ledger, "abc")  # too short to be a prefix


def test_list_rows_say_kind_age_expiry_and_last_seen():
    _, ledger = _ledger(DET, FLAKY)
    det, flk = (row(f, TODAY) for f in ledger.freezes)
    assert (det["kind"], det["rate"], det["age_days"], det["expires_in_days"]) == (
        "deterministic", {"failed": 2, "replays": 2}, 29, 5)
    assert (flk["kind"], flk["rate"], flk["expires_on"], flk["last_seen"]) == (
        "flaky", {"failed": 1, "replays": 4}, None, "2026-11-10")


def test_expiring_is_within_14_days_inclusive():
    _, ledger = _ledger(DET, FLAKY)
    assert [(f.id, d) for f, d in expiring(ledger.freezes, TODAY)] == [(ledger.freezes[0].id, 5)]
    assert expiring(ledger.freezes, dt.date(2026, 11, 21)) == [(ledger.freezes[0], 14)]
    assert expiring(ledger.freezes, dt.date(2026, 11, 20)) == []  # 15 days ahead
    assert expiring(ledger.freezes, dt.date(2026, 12, 6)) == []  # expired already: the verdict says so


def test_remove_and_extend_edit_one_record():
    text, ledger = _ledger(DET, FLAKY)
    det, flk = ledger.freezes
    left = parse_ledger(remove(text, "ledger", det), "ledger").freezes
    assert [f.id for f in left] == [flk.id]
    later = parse_ledger(extend(text, "ledger", det, dt.date(2027, 1, 31), TODAY), "ledger").freezes
    assert later[0].expires_on == dt.date(2027, 1, 31) and later[0].id == det.id and later[1] == flk
    with pytest.raises(GateError, match="before today"):
        extend(text, "ledger", det, dt.date(2026, 11, 29), TODAY)


def _sigs(*outcomes: tuple[FailureRef, ...], digest: str = DIGEST) -> list[BaseSig]:
    return [BaseSig("prop.x", set_signature(f.signature for f in fs), digest, BASE,
                    failures=tuple(f.signature for f in fs), status="fail" if fs else "pass") for fs in outcomes]


def test_prune_by_a_replays_evidence():
    text, ledger = _ledger(DET, FLAKY)  # DET forgives A (2 of 2); FLAKY forgives B (1 of 4)
    contains = {BASE: True}
    plan = prune_plan(ledger, _sigs((), ()), contains)
    assert [p.remove for p in plan] == [True, False]  # B might just not have shown: 2 tries are not enough
    assert f"--replays {tries_needed((1, 4))}" in plan[1].why and tries_needed((1, 4)) == 17
    plan = prune_plan(ledger, _sigs(*[()] * 17), contains)
    assert [p.remove for p in plan] == [True, True]
    plan = prune_plan(ledger, _sigs((A,), ()), contains)
    assert [(p.remove, p.seen) for p in plan] == [(False, True), (False, False)]
    kept = parse_ledger(prune(text, "ledger", plan, TODAY), "ledger").freezes
    assert kept[0].last_seen == TODAY and kept[1].last_seen is None
    # Evidence that says nothing of a freeze keeps it: other fixtures, a revision without its base, no replay.
    assert not any(p.remove for p in prune_plan(ledger, _sigs((), digest=OTHER_DIGEST), contains))
    assert not any(p.remove for p in prune_plan(ledger, _sigs(()), {}))
    assert not any(p.remove for p in prune_plan(ledger, [], contains))


def test_the_kinds_and_stale_policies_are_the_schemas():
    from conftest import ROOT
    from verdict_gate.core.verdict import KINDS, STALE_POLICIES

    ledger = json.loads((ROOT / "schemas" / "freeze_ledger.schema.json").read_text())["properties"]["freezes"]
    catalog = json.loads((ROOT / "schemas" / "catalog.schema.json").read_text())["$defs"]
    ledger = ledger["items"]["properties"]
    assert tuple(ledger["kind"]["enum"]) == KINDS and tuple(catalog["stale"]["enum"]) == STALE_POLICIES
