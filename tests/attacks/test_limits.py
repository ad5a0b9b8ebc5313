"""Known limits: broken patches that no sandbox can stop, kept visible as expected failures.

Each ``limits/<name>/`` case is gated like a corpus case and is expected to be promoted, because
the isolation design cannot catch it: the fix belongs to the oracle or to process (see each
attack.yaml's ``fence``), or to boundary work still to land (issue 38's red team: its ``fence`` says which).
The xfail is strict and expects only a promotion (:class:`Promoted`): a limit that stops being promoted fails
the suite (XPASS), so it moves into the corpus (``cases/``) where it is held to "never promoted"; a traceback,
the wrong sandbox method or a broken ``attack.yaml`` fails it outright.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from attack_harness import ARENAS, BROKEN, HERE, TRACEBACK, Arena, assert_method, record

LIMITS = sorted(p for p in (HERE / "limits").iterdir() if (p / "attack.yaml").is_file())


class Promoted(AssertionError):
    """The limit's broken patch was promoted (or the gate exited 0): the expected failure, and the only one."""


@pytest.mark.xfail(reason="a known limit of isolation: the oracle or the process must catch it", strict=True,
                   raises=Promoted)
@pytest.mark.parametrize("case", LIMITS, ids=[c.name for c in LIMITS])
def test_known_limit(case: Path, request: pytest.FixtureRequest) -> None:
    meta = yaml.safe_load((case / "attack.yaml").read_text())
    assert {"description", "tries", "fence"} <= set(meta), f"{case.name}: attack.yaml needs description, tries, fence"
    arena: Arena = request.getfixturevalue(ARENAS[meta.get("base", "calc")])  # as for a corpus case
    repo = arena.repo("limit")
    arena.apply(repo, case, meta)
    private = bool(meta.get("private_cache"))
    runs = [arena.gate(repo, arena.tmp / "out", private_cache=private, jobs=meta.get("jobs"))]
    if meta.get("then") == "broken":  # the next run, of a trick-free broken patch
        nxt = arena.repo("next")
        arena.apply(nxt, BROKEN, {"overlay": "none", "description": "the standard bugs, no trick"})
        runs.append(arena.gate(nxt, arena.tmp / "out-next", private_cache=private))
    record(f"limit:{case.name}", runs)
    # Anything else going wrong (a traceback, the wrong sandbox method, a harness error) fails the test: only a
    # promotion is the known limit.
    for run in runs:
        detail = f"exit {run.code}, outcome {run.outcome}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
        assert not TRACEBACK.search(run.stdout + run.stderr), "a traceback was printed: " + detail
        assert_method(run, detail)
    promoted = [f"run {i + 1}: exit {run.code}, outcome {run.outcome}" for i, run in enumerate(runs)
                if run.outcome == "promoted" or run.code == 0]
    if promoted:
        raise Promoted("; ".join(promoted))
