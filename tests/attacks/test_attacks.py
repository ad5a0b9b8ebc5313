"""The attack corpus: hostile candidate patches, each gated end to end on a real git repository.

Every case in ``cases/<name>/`` leaves ``src/`` genuinely broken (the standard bugs in ``broken/``,
or its own) and adds a trick to get it promoted anyway. The gate must not promote it: the
outcome is not ``promoted``, the exit code is not 0, nothing prints a traceback, and the user's
repository is as it was. A case's ``attack.yaml`` may also claim fences that must hold
(``fences:``): ``pid`` (nothing the run started outlives it), ``network`` (the loopback server
sees no connection), ``files`` (nothing created outside the temp dirs: site-packages, the
gate's install, /tmp), ``evidence`` (the evidence directory holds only the gate's files),
``secrets`` (the canary token never leaves the gate's process: not sent, not in the evidence, in
neither its plain nor its ``.git/config`` form), ``acts`` (no forbidden act a case tries, a socket, a
read of a secret, a signal or a trace of the oracle, succeeded: the case says ``FENCE-OPEN`` in its
failure when one does, and no output or evidence may hold that).
``forbid_output`` / ``forbid_summary`` list text the gate must not relay from candidate code. ``then: broken`` gates a
second, trick-free broken patch after the first (persistence: daemons, planted files).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from attack_harness import ARENAS, BROKEN, CASES_DIR, Arena, assert_not_promoted, edit_file, record, user_state

EVIDENCE_FILES = {"fixture.digest", "oracle_edited.json", "base.sig.json", "runs.json", "verdicts.json",
                  "results.sarif", "summary.md", "catalog.yaml", "freeze_ledger.json", "manifest.sha256",
                  "attestation.intoto.json"}
CASES = sorted(p for p in CASES_DIR.iterdir() if (p / "attack.yaml").is_file())
FENCES = {"pid", "network", "files", "evidence", "secrets", "acts"}


def load_meta(case: Path) -> dict:
    meta = yaml.safe_load((case / "attack.yaml").read_text())
    assert {"description", "tries", "fence"} <= set(meta), f"{case.name}: attack.yaml needs description, tries, fence"
    assert set(meta.get("fences", [])) <= FENCES, f"{case.name}: unknown fences {meta.get('fences')}"
    assert meta.get("base", "calc") in ARENAS, f"{case.name}: unknown base {meta.get('base')}"
    return meta




def test_the_corpus_is_big_enough() -> None:
    assert len(CASES) >= 60, len(CASES)


def test_an_edit_of_a_base_file_must_match_once(tmp_path: Path) -> None:
    target = tmp_path / "known.py"
    target.write_text("def f():\n    return 1\n\ndef g():\n    return 1\n")
    edit_file(target, [{"old": "def f():\n", "new": "def f():  # edited\n"}], "case")
    assert target.read_text().startswith("def f():  # edited\n    return 1\n")
    for old in ("return 1\n", "def h():\n"):  # twice, never: the case is wrong, not quietly applied
        with pytest.raises(AssertionError, match="occurs (2|0) times"):
            edit_file(target, [{"old": old, "new": ""}], "case")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_attack_is_not_promoted(case: Path, request: pytest.FixtureRequest) -> None:
    meta = load_meta(case)
    # base: frozen gates the case on the base whose known failures are frozen in the ledger (base_frozen/);
    # base: text on the base with properties that read the candidate's text: doctests, eval(repr(...)),
    # pickle.loads of its bytes (base_text/).
    arena: Arena = request.getfixturevalue(ARENAS[meta.get("base", "calc")])
    repo = arena.repo("attack")
    arena.apply(repo, case, meta)
    before = user_state(repo)
    out = arena.tmp / "out"
    runs = [arena.gate(repo, out, private_cache=bool(meta.get("private_cache")), jobs=meta.get("jobs"))]
    if meta.get("then") == "broken":  # the next run, of a trick-free broken patch, must not be forged
        nxt = arena.repo("next")
        arena.apply(nxt, BROKEN, {"overlay": "none", "description": "the standard bugs, no trick"})
        runs.append(arena.gate(nxt, arena.tmp / "out-next", private_cache=bool(meta.get("private_cache"))))
    survivors, foreign, connections = arena.survivors(), arena.foreign(), list(arena.server.connections)
    secrets = (arena.canary.encode(), arena.canary_basic.encode())
    leaked = [c.decode(errors="replace")[:80] for c in connections if any(s in c for s in secrets)]
    leaked += [str(p) for run in runs if run.out.is_dir() for p in sorted(run.out.iterdir())
               if p.is_file() and any(s in p.read_bytes() for s in secrets)]
    leaked += [f"gate output of run {i + 1}" for i, run in enumerate(runs)
               if any(s.decode() in run.stdout + run.stderr for s in secrets)]
    opened = [f"run {i + 1}: {line.strip()[:300]}" for i, run in enumerate(runs)
              for line in (run.stdout + run.stderr).splitlines() if "FENCE-OPEN" in line]
    opened += [str(p) for run in runs if run.out.is_dir() for p in sorted(run.out.iterdir())
               if p.is_file() and b"FENCE-OPEN" in p.read_bytes()]
    extra_evidence = sorted(p.name for p in out.iterdir() if p.name not in EVIDENCE_FILES or p.is_symlink()) \
        if out.is_dir() else []
    gh_output = arena.github_output.read_text()
    record(case.name, runs, survivors=len(survivors), connections=len(connections), foreign=len(foreign),
           extra_evidence=len(extra_evidence), github_output=bool(gh_output), user_files=user_state(repo) != before)

    for i, run in enumerate(runs):
        assert_not_promoted(run, f"run {i + 1}:")
    for pid in meta.get("must_fail", []):  # the property the trick targets is failed, not forgiven or passed
        verdict = (runs[0].verdicts or {}).get("verdicts", {}).get(pid, {})
        assert verdict.get("verdict") == "fail", f"{pid}: {verdict}\n{runs[0].stdout[-3000:]}"
    assert user_state(repo) == before, "the user's repository changed"
    assert not gh_output, f"GITHUB_OUTPUT was written: {gh_output[:200]}"
    for text in meta.get("forbid_output", []):
        assert not any(text in run.stdout + run.stderr for run in runs), f"the gate's output relays {text!r}"
    for text in meta.get("forbid_summary", []):
        for run in runs:
            summary = run.out / "summary.md"
            rendered = _outside_code_fences(summary.read_text()) if summary.is_file() else ""
            assert text not in rendered, f"summary.md renders {text!r} (outside a code block)"
    fences = set(meta.get("fences", []))
    if "pid" in fences:
        assert not survivors, f"processes outlived the run: {survivors}"
    if "network" in fences:
        assert not connections, f"the loopback server saw {len(connections)} connection(s)"
    if "files" in fences:
        assert not foreign, f"files created outside the temp dirs: {foreign}"
    if "evidence" in fences:
        assert not extra_evidence, f"the evidence directory holds files the gate did not write: {extra_evidence}"
    if "secrets" in fences:
        assert not leaked, f"the canary token left the gate: {leaked}"
    if "acts" in fences:
        assert not opened, f"a forbidden act succeeded: {opened}"


def _outside_code_fences(markdown: str) -> str:
    """The Markdown text that renders as markup: fenced code blocks (any fence length) and inline code spans
    removed."""
    out, fence = [], ""
    for line in markdown.splitlines():
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence) and stripped.strip("`") == "":
                fence = ""
            continue
        if stripped.startswith("```"):
            fence = stripped[:len(stripped) - len(stripped.lstrip("`"))]
            continue
        out.append(re.sub(r"(`+)(.+?)\1", "", line))  # a code span: a run of backticks to the same run
    return "\n".join(out)

