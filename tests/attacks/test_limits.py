"""Known limits: broken patches that no sandbox can stop, kept visible as expected failures.

Each ``limits/<name>/`` case is gated like a corpus case and is expected to be promoted, because
the isolation design cannot catch it: the fix belongs to the oracle or to process (see each
attack.yaml's ``fence``). The xfail is strict: a limit that stops being promoted fails the suite
(XPASS), so it moves into the corpus (``cases/``) where it is held to "never promoted".
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from attack_harness import ARENAS, BROKEN, HERE, Arena, assert_not_promoted, record

LIMITS = sorted(p for p in (HERE / "limits").iterdir() if (p / "attack.yaml").is_file())


@pytest.mark.xfail(reason="a known limit of isolation: the oracle or the process must catch it", strict=True)
@pytest.mark.parametrize("case", LIMITS, ids=[c.name for c in LIMITS])
def test_known_limit(case: Path, request: pytest.FixtureRequest) -> None:
    meta = yaml.safe_load((case / "attack.yaml").read_text())
    arena: Arena = request.getfixturevalue(ARENAS[meta.get("base", "calc")])  # as for a corpus case
    repo = arena.repo("limit")
    arena.apply(repo, case, meta)
    private = bool(meta.get("private_cache"))
    runs = [arena.gate(repo, arena.tmp / "out", private_cache=private)]
    if meta.get("then") == "broken":  # the next run, of a trick-free broken patch
        nxt = arena.repo("next")
        arena.apply(nxt, BROKEN, {"overlay": "none", "description": "the standard bugs, no trick"})
        runs.append(arena.gate(nxt, arena.tmp / "out-next", private_cache=private))
    record(f"limit:{case.name}", runs)
    for run in runs:
        assert_not_promoted(run)
