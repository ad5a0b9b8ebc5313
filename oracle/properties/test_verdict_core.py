"""Properties of verdict_gate.core.verdict.decide, run against the candidate's own code."""

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core.signature import make_signature
from verdict_gate.core.verdict import BaseSig, Freeze, RunResult, decide

SIGS = [make_signature(prop_id="prop.x", node="n", seed=1, exc_type="E", message="m", counterexample=c)
        for c in (None, {"n": 1})]
REVS = ["a" * 40, "b" * 40]
DIGESTS = ["d" * 64, "e" * 64]


@st.composite
def evidence(draw):
    sig = draw(st.sampled_from(SIGS))
    run = None if draw(st.integers(0, 5)) == 0 else RunResult(
        status=draw(st.sampled_from(["pass", "fail", "timeout", "crash", "skipped"])),
        signature=sig.value, signature_parts=sig.parts, fixture_digest=draw(st.sampled_from(DIGESTS)),
        seed=draw(st.sampled_from([None, 1])), seeded_kind=draw(st.booleans()),
        hits=draw(st.sampled_from([None, 0, 3])), fixture_mutated=draw(st.booleans()))
    freezes = [Freeze(prop_id="prop.x", signature=f.value, signature_parts=f.parts,
                      fixture_digest=draw(st.sampled_from(DIGESTS)), base_revision=draw(st.sampled_from(REVS)),
                      reason="r", first_seen=dt.date(2026, 1, 1),
                      expires_on=draw(st.none() | st.just(dt.date(2026, 6, 1))))
               for f in draw(st.lists(st.sampled_from(SIGS), max_size=3))]
    replay = [BaseSig("prop.x", draw(st.sampled_from([s.value for s in SIGS])), draw(st.sampled_from(DIGESTS)),
                      draw(st.sampled_from(REVS))) for _ in range(draw(st.integers(0, 2)))]
    return run, freezes, replay


def verdict_for(run, freezes, replay, *, edited=False, base=REVS[1]):
    return decide(run, oracle_edited=edited, freezes=freezes, replay=replay, base_revision=base,
                  ancestors={REVS[0]: True}, freeze_base="reproduced", today=dt.date(2026, 3, 1))


@given(evidence(), st.booleans())
def test_no_freeze_mints_a_pass(ev, edited):
    run, freezes, replay = ev
    got = verdict_for(run, freezes, replay, edited=edited)
    if got.verdict == "pass":
        assert run is not None and run.status == "pass" and not edited


@given(evidence())
def test_edited_oracle_voids_every_freeze(ev):
    run, freezes, replay = ev
    assert verdict_for(run, freezes, replay, edited=True).verdict == "fail"


@given(evidence())
def test_digest_mismatch_stays_fail(ev):
    run, freezes, replay = ev
    if run is None or run.status == "pass":
        return
    foreign = [f for f in freezes if f.fixture_digest != run.fixture_digest]
    assert verdict_for(run, foreign, replay).verdict == "fail"
