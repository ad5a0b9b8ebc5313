"""The reference side of the fidelity test: what plain pytest reports for each test node, written as JSON.

Loaded into a plain pytest run (no verdict-gate) with ``-p fidelity_recorder``, its directory on
``PYTHONPATH``, and ``FIDELITY_REPORT`` naming the file to write. Each node's outcome is the category of
pytest's own ``pytest_report_teststatus`` (the word its summary counts: passed, failed, skipped, xfailed,
xpassed, error) read per phase: the setup's or the call's stands, any failed call (a unittest subtest's
included) makes the node ``failed``, a teardown error turns anything but ``failed`` into ``error``; a module
that fails to collect is one ``error`` under its own node id. The message of the first failure is kept.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

_seen: dict[str, dict[str, Any]] = {}
_config: list[pytest.Config] = []
WORDS = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")


def pytest_configure(config: pytest.Config) -> None:
    _config.append(config)


def _word(report: Any) -> str:
    config = _config[0]
    got = config.hook.pytest_report_teststatus(report=report, config=config)
    word = got[0] if isinstance(got, tuple) and got else ""
    if word in WORDS:
        return word
    if report.when != "call" and not report.skipped:  # setup/teardown: "" when it passed
        return "error" if report.failed else ""
    return str(report.outcome)  # e.g. "subtests passed" for a subtest: its own outcome


def _message(report: Any) -> str:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None:
        return str(crash.message)
    return str(getattr(report, "longrepr", "") or "")[-400:]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    node = _seen.setdefault(report.nodeid, {"setup": "", "call": [], "teardown": "", "message": ""})
    word = _word(report)
    if report.when == "call":
        node["call"].append(word)
    else:
        node[report.when] = word
    if report.failed and not node["message"]:
        node["message"] = _message(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _seen[report.nodeid] = {"setup": "error", "call": [], "teardown": "", "message": _message(report)}


def _outcome(node: dict[str, Any]) -> str:
    calls = node["call"]
    outcome = node["setup"] or ("failed" if "failed" in calls else calls[-1] if calls else "")
    if node["teardown"] == "error" and outcome != "failed":
        outcome = "error"
    return outcome


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = {nodeid: {"outcome": _outcome(node), "message": node["message"]} for nodeid, node in _seen.items()
           if _outcome(node)}
    with open(os.environ["FIDELITY_REPORT"], "w", encoding="utf-8") as f:
        json.dump(out, f, sort_keys=True, indent=0)
