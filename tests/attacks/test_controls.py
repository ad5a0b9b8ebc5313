"""Honest controls: they keep the corpus honest (a gate that blocks everything would pass it).

- every bug the attacks hide, alone and without any trick (``controls/bugs/<name>/``, its
  ``expect.yaml`` naming the properties that must fail), is blocked: exit 1, exactly those fail;
- ``refactor``: a correct rewrite of calc is promoted (exit 0);
- ``legit_tricky``: a correct patch that returns a dataclass (with a ``compare=False`` field and
  ``__post_init__`` validation), raises the custom exception (a richer hierarchy) on bad input,
  returns generators, caches with ``lru_cache`` and uses the standard library is promoted (exit 0);
- on the base whose known failures are frozen (``base_frozen/``), the refactor is promoted with exactly
  those failures forgiven, and each bug an integrity case hides (``expect.yaml`` ``base: frozen``) is blocked;
- ``legit_shuffle``: a correct shuffle that draws from the Random a property hands it (at isolation ``none``), gated
  on the base plus ``base_hypothesis/``, is promoted (exit 0): running out of data inside a draw is Hypothesis's own;
- ``legit_inplace``: a correct in-place sort (the caller's list changes, nothing is returned), gated
  on the base plus ``base_inplace/`` (an in-place API and its property), is promoted (exit 0): the
  isolation must carry in-place changes of arguments back, or the honest patch is blocked;
- every ``controls/<name>/`` with a ``control.yaml`` (its ``base``, its ``description`` and the feature it
  ``uses``): an honest patch that uses, legitimately, the feature an attack case or limit abuses (a subclass of
  a candidate class, a ``Mock`` handed to candidate code, a generator calling a callback, an iterator read
  partly, the test's own ``random.seed``, a public attribute of a test's instance set) is promoted, with exactly
  its base's frozen failures forgiven: the fence that stops the attack must leave the feature working.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from attack_harness import ARENAS, CONTROLS_DIR, FROZEN_IDS, FROZEN_OF, TRACEBACK, Arena, GateRun, record, user_state

BUGS = sorted(p for p in (CONTROLS_DIR / "bugs").iterdir() if (p / "expect.yaml").is_file())
HONEST = ["refactor", "legit_tricky"]
USES = sorted(p for p in CONTROLS_DIR.iterdir() if (p / "control.yaml").is_file())


def _gate(arena: Arena, source: Path, label: str, jobs: int | None = None) -> GateRun:
    repo = arena.repo("control")
    arena.apply(repo, source, {"overlay": "none", "description": label})
    before = user_state(repo)
    run = arena.gate(repo, arena.tmp / "out", jobs=jobs)
    record(f"control:{label}", [run])
    assert not TRACEBACK.search(run.stdout + run.stderr), run.stderr[-3000:]
    assert user_state(repo) == before
    return run


def _detail(run: GateRun) -> str:
    return (f"exit {run.code}, failing {run.failing()}\n--- stdout\n{run.stdout[-3000:]}"
            f"\n--- stderr\n{run.stderr[-3000:]}")


@pytest.mark.parametrize("bug", BUGS, ids=[b.name for b in BUGS])
def test_the_bug_alone_is_blocked(bug: Path, request: pytest.FixtureRequest) -> None:
    expect = yaml.safe_load((bug / "expect.yaml").read_text())
    base = expect.get("base", "calc")
    arena: Arena = request.getfixturevalue(ARENAS[base])
    run = _gate(arena, bug, f"bug:{bug.name}", jobs=expect.get("jobs"))
    assert (run.outcome, run.code) == ("blocked", 1), _detail(run)
    failed = {pid for pid, v in run.failing().items() if v.startswith("fail/")}
    assert failed == set(expect["failing"]), _detail(run)
    # on a base with frozen failures, those the bug leaves alone stay forgiven
    frozen = set(FROZEN_OF.get(base, ())) - failed
    assert {pid for pid, v in run.failing().items() if not v.startswith("fail/")} == frozen, _detail(run)


def test_an_honest_in_place_patch_is_promoted(inplace_arena: Arena) -> None:
    run = _gate(inplace_arena, CONTROLS_DIR / "legit_inplace", "legit_inplace")
    assert (run.outcome, run.code) == ("promoted", 0), _detail(run)
    assert not run.failing(), _detail(run)


@pytest.mark.parametrize("name", HONEST)
def test_an_honest_patch_is_promoted(name: str, arena: Arena) -> None:
    run = _gate(arena, CONTROLS_DIR / name, name)
    assert (run.outcome, run.code) == ("promoted", 0), _detail(run)
    assert not run.failing(), _detail(run)


def test_an_honest_patch_that_draws_from_a_handed_random_is_promoted(hypothesis_arena: Arena) -> None:
    """``legit_shuffle`` on the base of the discard cases (``base_hypothesis/``: Hypothesis at isolation ``none``, and a
    property that hands candidate code a drawn Random there): the patch draws from that Random; when a draw runs out
    of data, as Hypothesis's replays of shorter examples make it about one call in ten, that is Hypothesis's own
    discard, never the candidate's."""
    run = _gate(hypothesis_arena, CONTROLS_DIR / "legit_shuffle", "legit_shuffle")
    assert (run.outcome, run.code) == ("promoted", 0), _detail(run)
    assert not run.failing(), _detail(run)


def test_the_frozen_base_promotes_an_honest_patch(frozen_arena: Arena) -> None:
    """The base of the integrity cases (``base_frozen/``): an honest patch is promoted, its three known failures
    forgiven by their freezes, so a case on it that is not promoted was stopped by the gate, not by the base."""
    run = _gate(frozen_arena, CONTROLS_DIR / "refactor", "frozen:refactor")
    assert (run.outcome, run.code) == ("promoted", 0), _detail(run)
    assert run.failing() == {pid: "inconclusive/frozen" for pid in FROZEN_IDS}, _detail(run)


def test_a_frozen_failure_stays_forgiven_through_an_honest_decorator(frozen_arena: Arena) -> None:
    """``frozen_decorated``: a call-counting decorator without ``functools.wraps`` on the frozen ``parse_amount``,
    its body unchanged: the frozen failure comes through the same pack line with the same question, so it is
    still forgiven (the signature's site never digests the name the worker gives the target; found by a
    red-team run, where it did)."""
    run = _gate(frozen_arena, CONTROLS_DIR / "frozen_decorated", "frozen:decorated")
    assert (run.outcome, run.code) == ("promoted", 0), _detail(run)
    assert run.failing() == {pid: "inconclusive/frozen" for pid in FROZEN_IDS}, _detail(run)


@pytest.mark.parametrize("control", USES, ids=[c.name for c in USES])
def test_an_honest_patch_using_the_feature_is_promoted(control: Path, request: pytest.FixtureRequest) -> None:
    meta = yaml.safe_load((control / "control.yaml").read_text())
    assert {"description", "uses"} <= set(meta), f"{control.name}: control.yaml needs description and uses"
    base = meta.get("base", "calc")
    arena: Arena = request.getfixturevalue(ARENAS[base])
    run = _gate(arena, control, control.name, jobs=meta.get("jobs"))
    assert (run.outcome, run.code) == ("promoted", 0), _detail(run)
    assert run.failing() == {pid: "inconclusive/frozen" for pid in FROZEN_OF.get(base, ())}, _detail(run)
