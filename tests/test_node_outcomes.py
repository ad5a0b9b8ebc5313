"""Per-node outcomes in the evidence (issue 22): runs.json's ``nodes`` gives each test node's outcome as
plain pytest reports it, so a run can be compared with plain pytest node by node (tests/test_fidelity.py).
Real gate runs on real git repositories, and plain pytest on the same files as the reference."""

from __future__ import annotations

import pytest
from fidelity import harness
from test_runner import make_project, run

from conftest import ROOT
from verdict_gate.boundary import results
from verdict_gate.core.catalog import catalog_from
from verdict_gate.core.records import run_record, run_record_from_json

# Every outcome plain pytest's summary names, each reached the way a real suite reaches it.
OUTCOMES = '''
import unittest

import pytest
from calc import add


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup fails")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown fails")


def test_passes():
    assert add(1, 2) == 3


def test_fails():
    assert add(1, 2) == 4


def test_skips():
    pytest.skip("not here")


@pytest.mark.xfail(reason="known")
def test_xfails():
    assert add(1, 1) == 3


@pytest.mark.xfail(reason="fixed since")
def test_xpasses():
    assert add(1, 1) == 2


def test_setup_error(broken_setup):
    pass


def test_teardown_error(broken_teardown):
    assert add(0, 0) == 0


def test_fails_then_teardown_error(broken_teardown):
    assert add(0, 0) == 1


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert add(n, 0) == 1


class TestSub(unittest.TestCase):
    def test_second_subtest_fails(self):
        for n in (1, 2):
            with self.subTest(n=n):
                self.assertEqual(add(n, 0), 1)
'''
EXPECTED = {
    "test_passes": "passed", "test_fails": "failed", "test_skips": "skipped", "test_xfails": "xfailed",
    "test_xpasses": "xpassed", "test_setup_error": "error", "test_teardown_error": "error",
    "test_fails_then_teardown_error": "failed", "test_param[1]": "passed", "test_param[2]": "failed",
    "TestSub::test_second_subtest_fails": "failed",  # pytest 9: the test passed, a subtest failed
}


@pytest.mark.parametrize("level", ["sandbox", "none"])
def test_each_node_outcome_is_plain_pytests(tmp_path, level):
    repo = make_project(tmp_path, {"test_outcomes.py": OUTCOMES, "test_broken.py": "import no_such_module\n"},
                        [{"id": "prop.outcomes", "oracle": "properties/test_outcomes.py", "kind": "example"},
                         {"id": "prop.broken", "oracle": "properties/test_broken.py", "kind": "example"}],
                        extra={"isolation": level})
    code, docs, stderr = run(repo, tmp_path / "out")
    assert code == 4, stderr  # prop.broken cannot import on the base either: the pack's fault, incomplete
    runs = docs["runs.json"]["runs"]
    assert runs["prop.outcomes"]["nodes"] == {f"properties/test_outcomes.py::{k}": v for k, v in EXPECTED.items()}
    assert runs["prop.outcomes"]["nodes_more"] == 0
    # A module that cannot be imported: plain pytest reports one error for the file, so does the record.
    assert runs["prop.broken"]["nodes"] == {"properties/test_broken.py": "error"}
    # The reference: plain pytest on the same files and source, read by the fidelity harness's recorder.
    plain = harness.plain_pytest(repo / "oracle", ["properties/test_outcomes.py", "properties/test_broken.py"],
                                 [repo / "src"])
    assert plain == {**runs["prop.outcomes"]["nodes"], **runs["prop.broken"]["nodes"]}


def test_nodes_are_bounded_and_the_rest_counted(tmp_path):
    many = "import pytest\n\n@pytest.mark.parametrize('n', range(10_003))\ndef test_n(n):\n    assert n >= 0\n"
    repo = make_project(tmp_path, {"test_many.py": many},
                        [{"id": "prop.many", "oracle": "properties/test_many.py", "kind": "example"}],
                        extra={"isolation": "none"})
    code, docs, stderr = run(repo, tmp_path / "out")
    assert code == 0, stderr
    record = docs["runs.json"]["runs"]["prop.many"]
    assert len(record["nodes"]) == 10_000 and record["nodes_more"] == 3
    assert record["nodes"]["properties/test_many.py::test_n[0]"] == "passed"
    assert "properties/test_many.py::test_n[10002]" not in record["nodes"]


CATALOG = catalog_from({"version": 1, "properties": [{"id": "prop.a", "oracle": "properties/test_a.py"}]}, "c")


def _raw(**fields):
    return results.result("prop.a", "pass", seed=None, hypothesis=False, trials=1, hits=1, items=1, duration_s=0.1,
                          fixture_mutated=False, **fields)


@pytest.mark.fast
def test_a_record_with_an_unknown_outcome_is_not_well_formed():
    assert results.well_formed(_raw(nodes={"properties/test_a.py::t": "passed"}, nodes_more=0))
    assert not results.well_formed(_raw(nodes={"properties/test_a.py::t": "held"}, nodes_more=0))
    assert not results.well_formed(_raw(nodes={"properties/test_a.py::t": "passed"}, nodes_more=-1))
    assert not results.well_formed(_raw(nodes=["properties/test_a.py::t"], nodes_more=0))
    assert not results.well_formed(_raw(nodes={}, nodes_more=True))


@pytest.mark.fast
def test_nodes_survive_runs_json_and_its_schema():
    from verdict_gate.host import schemas

    prop = CATALOG.properties[0]
    nodes = {"properties/test_a.py::t": "xfailed", "properties/test_a.py::u": "passed"}
    record = run_record(_raw(nodes=nodes, nodes_more=4), prop, "0" * 64, "a" * 40, [])
    doc = record.to_json()
    assert doc["nodes"] == nodes and doc["nodes_more"] == 4
    back = run_record_from_json(doc, "runs.json")
    assert back.nodes == nodes and back.nodes_more == 4
    lost = run_record(results.lost("prop.a", "timeout", seed=None, node="n", exc_type=results.TIMEOUT_EXC,
                                   message="timed out"), prop, "0" * 64, "a" * 40, [])
    assert lost.to_json()["nodes"] is None  # the run was lost before it said
    for one in (record, lost):
        whole = {"version": 1, "revision": "b" * 40, "base_revision": "a" * 40, "fixture_digest": "0" * 64,
                 "environment": {"PYTHONHASHSEED": "0", "TZ": "UTC", "python": "3", "pytest": "9",
                                 "hypothesis": "6"}, "runs": {"prop.a": one.to_json()}}
        schemas.check("runs", whole, "runs.json")
    assert ROOT.joinpath("schemas", "runs.schema.json").is_file()


CRASHES = '''
import pytest
from calc import add, die


def test_before():
    assert add(1, 2) == 3


def test_kills_the_worker():
    die()


def test_catches_the_crash():
    try:
        die()
    except Exception:
        pass  # the worker is gone: a test that swallows that still fails, out of band


def test_after():
    assert add(2, 2) == 4
'''


@pytest.mark.parametrize("level", ["sandbox", "process"])
def test_a_worker_crash_fails_the_node_it_served_and_the_next_node_gets_a_fresh_worker(tmp_path, level):
    """Faults are contained per test node (docs/design.md §8.1): the node that crashed the worker fails (even one
    that caught the exception), the property is crashed, and the nodes after it run on a fresh worker, each with
    its own outcome (before: every node after the crash was lost with it)."""
    repo = make_project(tmp_path, {"test_crash.py": CRASHES},
                        [{"id": "prop.crash", "oracle": "properties/test_crash.py", "kind": "example"}],
                        src={"src/calc.py": "import os\n\ndef add(a, b):\n    return a + b\n\n"
                                                      "def die():\n    os._exit(3)\n"},
                        extra={"isolation": level})
    code, docs, stderr = run(repo, tmp_path / "out")
    assert code == 1, stderr
    record = docs["runs.json"]["runs"]["prop.crash"]
    assert record["status"] == "crash"
    assert record["nodes"] == {"properties/test_crash.py::test_before": "passed",
                               "properties/test_crash.py::test_kills_the_worker": "failed",
                               "properties/test_crash.py::test_catches_the_crash": "failed",
                               "properties/test_crash.py::test_after": "passed"}
    crashed = {f["node"] for f in record["failures"] if f["exc_type"] == "verdict_gate.WorkerCrashed"}
    assert crashed == {"properties/test_crash.py::test_kills_the_worker",
                       "properties/test_crash.py::test_catches_the_crash"}
    assert docs["verdicts.json"]["verdicts"]["prop.crash"]["reason"] == "crashed"
