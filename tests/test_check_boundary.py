"""`verdict-gate check` finds what the boundary changes before anything is frozen (issue 22, README
"What crosses the boundary"): every property runs again with no boundary (isolation none, as plain
pytest runs it) and each test node whose outcome differs is named, with the fix; exit 1."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from test_failure_sets_e2e import ADD, project

from conftest import cli
from verdict_gate.commands.check import boundary_differences

# A candidate class's bases, read in the oracle process, are its proxy class's (the boundary's handle class), not
# the candidate's `object`: `Thing.__bases__ == (object,)` fails under the gate and holds in one process. A
# silent difference (an AssertionError, no boundary error), found only by running the test both ways.
SAME = ("import calc\n\ndef test_same_object():\n    assert calc.Thing.__bases__ == (object,)\n")
ADDS = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
CALC = ADD + "\nclass Thing:\n    pass\n\n\ndef make():\n    return Thing()\n"


def rec(status: str, nodes: dict[str, str] | None, more: int = 0, exc_type: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(status=status, nodes=nodes, nodes_more=more, exc_type=exc_type)


CUT = "verdict_gate.Timeout"  # the runner's record of a property whose process timed out


@pytest.mark.fast
@pytest.mark.parametrize(("gate", "plain", "want"), [
    (rec("pass", {"a": "passed"}), rec("pass", {"a": "passed"}), ()),
    (rec("fail", {"a": "failed", "b": "passed"}), rec("pass", {"a": "passed", "b": "passed"}),
     (("a", "failed", "passed"),)),
    (rec("fail", {"a": "passed", "b": "error"}), rec("pass", {"a": "passed"}), (("b", "error", "missing"),)),
    (rec("pass", {"a": "xfailed"}), rec("pass", {"a": "xpassed"}), (("a", "xfailed", "xpassed"),)),
    (rec("crash", None), rec("pass", {"a": "passed"}), (("(the property)", "crash", "pass"),)),
    (rec("crash", None), rec("crash", None), ()),
    # a run cut by its timeout: the nodes that ended compare, those after the cut do not, the statuses do
    (rec("timeout", {"a": "passed", "b": "failed"}, exc_type=CUT), rec("pass", {"a": "passed", "b": "passed",
                                                                              "c": "passed"}),
     (("(the property)", "timeout", "pass"), ("b", "failed", "passed"))),
    (rec("timeout", {"a": "passed"}, exc_type=CUT), rec("timeout", {"a": "passed", "b": "passed"}, exc_type=CUT),
     ()),
    # past a record's cap a node one side lists and the other counted is not a difference
    (rec("pass", {"a": "passed"}, more=1), rec("pass", {"a": "passed", "b": "passed"}), ()),
    (rec("pass", {"a": "failed"}, more=1), rec("pass", {"a": "passed", "b": "passed"}), (("a", "failed", "passed"),)),
])
def test_the_nodes_whose_outcome_differs(gate, plain, want) -> None:
    assert boundary_differences(gate, plain) == want
    assert boundary_differences(None, plain) == ()


def test_check_names_a_test_the_boundary_changes_and_offers_no_freeze(tmp_path) -> None:
    files = {"src/calc.py": CALC, "oracle/properties/test_same.py": SAME, "oracle/properties/test_add.py": ADDS}
    props = [{"id": "prop.same", "oracle": "properties/test_same.py", "kind": "example"},
             {"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"}]
    repo = project(tmp_path, files, props, [])
    proc = cli("check", str(repo / "oracle"), "--repo", str(repo))
    assert proc.returncode == 1, proc.stderr
    assert "prop.same: 1 test(s) end differently with no boundary" in proc.stdout
    assert "test_same.py::test_same_object: failed under the gate, passed with no boundary" in proc.stdout
    assert "isolation: none" in proc.stdout and "to freeze" not in proc.stdout
    assert "a freeze would forgive" not in proc.stdout and "which a freeze would not forgive" in proc.stdout
    assert "prop.add: held" in proc.stdout
    doc = json.loads(cli("check", str(repo / "oracle"), "--repo", str(repo), "--format", "json").stdout)
    by_id = {p["id"]: p for p in doc["properties"]}
    assert by_id["prop.same"]["boundary"] == [{"node": "properties/test_same.py::test_same_object",
                                               "gate": "failed", "plain": "passed"}]
    assert by_id["prop.same"]["freeze_command"] is None and by_id["prop.add"]["boundary"] == []
    assert by_id["prop.same"]["would_freeze"] is False and "boundary" in by_id["prop.same"]["why_not"]
    assert by_id["prop.same"]["fix"] and "isolation: none" in by_id["prop.same"]["fix"]
    assert doc["ok"] is False
    # --no-plain: the gate's run alone, as before (the failure looks like the project's own)
    proc = cli("check", str(repo / "oracle"), "--repo", str(repo), "--no-plain")
    assert proc.returncode == 0 and "no boundary" not in proc.stdout and "a freeze would forgive" in proc.stdout


def test_freeze_refuses_a_failure_the_boundary_makes(tmp_path) -> None:
    # The same silent difference: `freeze --rev` runs the property both ways before its replays and
    # refuses, so the boundary's failure is never recorded as the project's (and nothing is written).
    files = {"src/calc.py": CALC, "oracle/properties/test_same.py": SAME}
    repo = project(tmp_path, files, [{"id": "prop.same", "oracle": "properties/test_same.py", "kind": "example"}], [])
    ledger = repo / "oracle" / "freeze_ledger.json"
    before = ledger.read_bytes() if ledger.exists() else None
    proc = cli("freeze", "--rev", "HEAD", "--pack", str(repo / "oracle"), "--repo", str(repo), "--id", "prop.same",
               "--reason", "known", "--ledger", str(ledger), "--replays", "1")
    assert proc.returncode == 2, proc.stderr
    assert "test_same.py::test_same_object: failed under the gate, passed with no boundary" in proc.stderr
    assert "isolation: none" in proc.stderr and "Traceback" not in proc.stderr
    assert (ledger.read_bytes() if ledger.exists() else None) == before
