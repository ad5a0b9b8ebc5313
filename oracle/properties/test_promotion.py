"""Properties of verdict_gate.core.promotion.promote, run against the candidate's own code."""

from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core.promotion import promote
from verdict_gate.core.verdict import Verdict

IDS = st.sets(st.sampled_from(["prop.a", "prop.b", "prop.c"]), min_size=1)


@given(IDS, st.sampled_from(["lenient", "strict"]))
def test_all_inconclusive_is_not_promoted(ids, policy):
    verdicts = {i: Verdict("inconclusive", "frozen") for i in ids}
    assert not promote(verdicts, ids, policy).promoted


def test_empty_claims_are_not_promoted():
    assert not promote({}, set(), "lenient").promoted
    assert not promote({"prop.a": Verdict("pass", "held")}, set(), "lenient").promoted
