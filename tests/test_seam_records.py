"""The records of the seams between the gate's processes own their wire forms (verdict_gate/boundary/spec.py,
results.py; docs/design.md §8): the run spec the runner writes and the plugin reads, and the results stream's
``result`` event, each written from its typed record and read back the same."""

from __future__ import annotations

import json

import pytest

from verdict_gate.boundary import results
from verdict_gate.boundary.spec import IsolationSpec, PropertySpec, RunSpec

pytestmark = pytest.mark.fast


def test_a_run_spec_reads_back_as_written() -> None:
    spec = RunSpec(python_path=["/t/src"], roots=[("/p", "oracle"), ("/t", "")], watch=["/p/fixtures"],
                   properties=[PropertySpec("prop.a", "properties/test_a.py", 7, "property", "20%",
                                            {"example_log": True, "fresh_seed": 11}),
                               PropertySpec("ex.b", "properties/test_b.py::test_b", None, "example", None)],
                   files=["/p/properties/test_a.py"], boundary="/gate/boundary", hypothesis=False, keep_bytecode=True,
                   isolation=IsolationSpec("sandbox", "bwrap", True, False, 0, None, 0.0, 30.0, "/t", ["/t"], "/s",
                                           ["/t/.git/config"], {"memory_bytes": 1}, ["calc"], ["calc:Money"]))
    doc = json.loads(json.dumps(spec.to_json()))
    assert RunSpec.from_json(doc) == RunSpec(
        python_path=("/t/src",), roots=(("/p", "oracle"), ("/t", "")), watch=("/p/fixtures",),
        properties=tuple(spec.properties), files=("/p/properties/test_a.py",), boundary="/gate/boundary",
        hypothesis=False, keep_bytecode=True,
        isolation=IsolationSpec("sandbox", "bwrap", True, False, 0, None, 0.0, 30.0, "/t", ("/t",), "/s",
                                ("/t/.git/config",), {"memory_bytes": 1}, ("calc",), ("calc:Money",)))
    assert doc["properties"][0] == {"id": "prop.a", "selector": "properties/test_a.py", "seed": 7, "kind": "property",
                                    "fresh": "20%", "example_log": True, "fresh_seed": 11}
    assert IsolationSpec.from_json(None) == IsolationSpec("none")


def test_a_result_event_is_its_record_s_fields_each_typed_once() -> None:
    event = results.Result("prop.a", "fail", seed=1, hypothesis=True, trials=3, hits=3, items=3, duration_s=0.5,
                           fixture_mutated=False, node="n", exc_type="builtins.AssertionError", message="m",
                           failures=[{"node": "n", "exc_type": "builtins.AssertionError", "message": "m",
                                      "traceback": [{"path": "a.py", "line": 1, "function": "f"}]}]).to_json()
    assert results.well_formed(event)
    assert set(results.RESULT_FIELDS) == set(event) - {"event", "id", "counterexample"}
    for name, wrong in (("trials", True), ("hits", "3"), ("status", "held"), ("failures", [{"node": 1}]),
                        ("traceback", [{"path": "a.py", "line": "1", "function": "f"}])):
        assert not results.well_formed({**event, name: wrong}), name  # planted: each field's wrong type
    assert results.result("prop.a", "fail", seed=1, hypothesis=True, trials=3, hits=3, items=3, duration_s=0.5,
                          fixture_mutated=False, node="n", exc_type="builtins.AssertionError", message="m",
                          failures=event["failures"]) == event


def test_the_fixture_and_diff_records_write_what_their_schemas_take() -> None:
    from verdict_gate.core.records import DiffRecord, FixtureRecord
    from verdict_gate.host import schemas

    fixture = FixtureRecord("tree-v2", "d" * 64, "b" * 40, ("fixtures/**",), 2, 10,
                            ({"glob": "*.csv", "pattern": "\\d+", "replacement": "<n>"},), {"tree-v1": "e" * 64})
    schemas.check("fixture_digest", fixture.to_json(), "fixture.digest")
    assert FixtureRecord.from_json(json.loads(json.dumps(fixture.to_json()))) == fixture
    buckets = {name: () for name in ("oracle", "control", "fixtures", "src", "generated", "other")}
    diff = DiffRecord("b" * 40, "c" * 40, {**buckets, "oracle": ("oracle/properties/test_a.py",)}, ("prop.a",), ())
    doc = diff.to_json()
    schemas.check("oracle_edited", doc, "oracle_edited.json")
    assert (doc["oracle_moved"], doc["void"]) == (["prop.a"], False)  # the document keeps its first key's name
    assert DiffRecord("b" * 40, "h" * 40, {}, (), ("oracle/catalog.yaml",)).void
