"""Every single value of every JSON evidence file changed, with every digest made to fit (a consistent forgery of
one value): the audit never raises, and finds each change except in the fields that are measurements it takes as
recorded (docs/design.md §9.1: a signature says who recorded them). The list below is that specification: a change
that leaves another field unchecked fails here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from test_audit import JSON_WRITTEN, _at, _edit, refit
from test_explain import CASES

from verdict_gate.run.audit import audit

# (file, path with "*" for any index or property id): what the run measured and the decision never reads.
AS_RECORDED = {
    ("runs.json", ("environment", "*")),  # the interpreter's pins
    ("runs.json", ("runs", "*", "duration_s")),
    ("runs.json", ("runs", "*", "output_tail")),  # pytest's last lines, for a person
    ("runs.json", ("runs", "*", "node")),  # the property's selector as run; each failure's node is signed
    ("runs.json", ("runs", "*", "failures", "*", "message")),  # its digest is signed, not the text kept for people
    ("runs.json", ("runs", "*", "failures", "*", "counterexample", "*")),  # as kept; its canonical form is signed
    ("base.sig.json", ("replays", "*", "failures", "*", "message")),
    ("base.sig.json", ("replays", "*", "failures", "*", "counterexample", "*")),
    ("base.sig.json", ("replays", "*", "hits")),
    ("fixture.digest", ("roots", "pack")),
    ("verdicts.json", ("decision", "items")),  # only zero items with no run at all changes the outcome
    # a passing run's top-level failure fields (null) and its count of examples tried: no report shows them
    ("runs.json", ("runs", "*", "exc_type")),
    ("runs.json", ("runs", "*", "message")),
    ("runs.json", ("runs", "*", "counterexample")),
    ("runs.json", ("runs", "*", "trials")),
    ("runs.json", ("runs", "*", "hits")),  # as counted (zero makes a pass vacuous, which the decision re-derives)
}


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _leaves(v, (*path, i))
    else:
        yield path


def _pattern(path: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple("*" if isinstance(p, int) or p in ("p0", "x", "PYTHONHASHSEED", "TZ", "python", "pytest",
                                                   "hypothesis") else p for p in path)


@pytest.mark.parametrize("case", ["new_failing_examples", "held"])  # a frozen failure with example logs; a pass
def test_every_value_changed_consistently_is_found(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_audit_property import pipeline_files

    files = pipeline_files(CASES[case][0], monkeypatch)
    missed = set()
    for name in (*JSON_WRITTEN, "manifest.sha256"):
        doc = json.loads(files[name])
        for path in _leaves(doc):
            # refit() rewrites these digests itself: a change there is the digest check's (tests/test_audit.py)
            if (name, path[:1]) in (("verdicts.json", ("evidence",)), (ATT, ("subject",))):
                continue
            for value in ("x", 0, None):
                if json.dumps(_at(doc, path)) == json.dumps(value):
                    continue
                changed = _edit(files, name, lambda d, p=path, v=value: _at(d, p[:-1]).__setitem__(p[-1], v))
                try:
                    forged = refit(changed)
                except (TypeError, KeyError):  # the change broke what refit reads: the plain file then
                    forged = changed
                if audit(forged).ok:  # never raises: a finding or nothing
                    missed.add((name, _pattern(path)))
    assert missed <= AS_RECORDED, sorted(missed - AS_RECORDED)


ATT = "attestation.intoto.json"
