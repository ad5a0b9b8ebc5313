"""A real suite built on Hypothesis's stateful testing under the gate (issue 42): pyrsistent 0.20.0's own tests
(tests/stateful/pyrsistent, its PROVENANCE.md), copied unchanged into an oracle pack, gated on an honest patch.

Every test node ends as plain pytest ends it on the same source, and the file of state machines
(``hypothesis_vector_test.py``: two ``RuleBasedStateMachine``s with a ``Bundle``, ``st.data()`` rules, ``assume``
and ``st.builds``) is a seeded trial that holds: its seed, trials and fresh examples recorded (before issue 42 it
was ``unseeded``: no ``@given`` test in the file, so no run of it was seeded).

At ``isolation: none``: at a fenced level the suite meets limits of the boundary that are not Hypothesis's (its
tests compare the vector with a list and ask ``isinstance(v, Sequence)``, while the property never names the
candidate's vector class), which tests/fidelity measures for the suites it keeps.
"""

from __future__ import annotations

import json
from pathlib import Path

from fidelity import harness

PYRSISTENT = harness.Project(name="pyrsistent", packages=["pyrsistent"], tests="tests", loose=[],
                             root=Path(__file__).resolve().parent / "stateful")
STATEFUL = "prop.hypothesis_vector_test"


def test_a_real_stateful_suite_runs_under_the_gate_as_under_plain_pytest(tmp_path):
    comp, run, _ = harness.check_project(PYRSISTENT, tmp_path, catalog_extra={"isolation": "none"})
    plain, agree = harness.agreement(comp)
    assert plain > 600 and agree == plain, "\n".join(harness.judge(comp, {}))
    assert any("::PVectorBuilderTests::" in node for node in run.nodes)  # the state machines ran, as nodes
    runs = json.loads((tmp_path / "pyrsistent-evidence" / "runs.json").read_text())["runs"]
    verdicts = json.loads((tmp_path / "pyrsistent-evidence" / "verdicts.json").read_text())["verdicts"]
    machines = runs[STATEFUL]
    assert (verdicts[STATEFUL]["verdict"], verdicts[STATEFUL]["reason"]) == ("pass", "held"), verdicts[STATEFUL]
    assert machines["seed"] == harness.SEED and machines["trials"] > 0 and machines["hits"] > 0, machines
    assert machines["fresh_seed"] is not None and machines["fresh_log"], machines
