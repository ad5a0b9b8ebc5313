"""A catalog ``node:`` that pytest did not collect is a configuration error (exit 2), never a verdict."""

from __future__ import annotations

from typing import Any

from verdict_gate.core.errors import GateError


def check_collected(p: Any, done: Any) -> None:
    """Raise when ``done`` (an :class:`~verdict_gate.run.execute.Execution`) reports properties of
    pack ``p`` whose selector matched no test: the catalog names a test that does not exist.

    Raises:
        GateError: naming each such property, its file and node, and the fix.
    """
    props = list(p.catalog.properties)
    index = {prop.id: i for i, prop in enumerate(props)}
    by_id = {prop.id: prop for prop in props}
    # Only a named node: a file with no test at all stays a scored `missing_run` (zero collected
    # tests is `incomplete`, docs/design.md §3), while a node that is not there is a typo.
    uncollected = [pid for pid in getattr(done, "uncollected", None) or [] if pid in by_id and by_id[pid].node]
    if not uncollected:
        return
    lines = [f"$.properties[{index[pid]}] {pid!r}: node {by_id[pid].node!r} is not a test in {by_id[pid].oracle}"
             for pid in uncollected]
    raise GateError("catalog", p.catalog.source, "names tests that pytest did not collect in the pack:\n    "
                    + "\n    ".join(lines),
                    "set each property's node: to a test of its oracle file (test_x, or TestClass::test_x), "
                    "or drop node: to run every test in the file")
