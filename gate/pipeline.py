"""The gate pipeline in DESIGN.md §2 order: pack → fixture digest → diff split → base replay →
candidate run → verdicts. The orchestration edge: it owns temp dirs, git and subprocesses, and
hands plain values to the pure core (:mod:`gate.verdict`, :mod:`gate.signature`,
:mod:`gate.diffsplit`, :mod:`gate.digest`).

Nothing consults a freeze before the fixture digest exists.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gate import diffsplit, git, pack, runner
from gate.catalog import Catalog, Property
from gate.digest import FORMAT, Entry, Scan, scan, walk
from gate.errors import GateError
from gate.globs import match_any
from gate.signature import make_signature
from gate.verdict import INCOMPLETE_REASONS, BaseSig, RunResult, Verdict, decide, outcome, promote

Progress = Callable[[str], None]


@dataclass
class Evidence:
    """Everything one gate run produced; the report renders it, the writer writes it once."""

    repo: str
    head_revision: str = ""
    base_ref: str = ""
    base_revision: str = ""
    pack: dict[str, Any] = field(default_factory=dict)
    policy: str = "lenient"
    freeze_base: str = "reproduced"
    fixture: dict[str, Any] | None = None
    oracle_edited: dict[str, Any] | None = None
    base_sig: dict[str, Any] | None = None
    runs: dict[str, Any] | None = None
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    claimed: tuple[str, ...] = ()
    properties: dict[str, Property] = field(default_factory=dict)
    outcome: str = "void"
    promoted: bool = False
    why: str = ""
    void_reason: str = ""
    notices: list[str] = field(default_factory=list)


@contextmanager
def scratch_dir(parent: Path | None = None) -> Iterator[Path]:
    """A private temp dir, removed (read-only pack copies included) on every path out."""
    path = Path(tempfile.mkdtemp(prefix="verdict-gate-", dir=parent))
    try:
        yield path
    finally:
        if os.environ.get("VERDICT_GATE_KEEP_WORK"):  # debugging aid: keep specs, results and pytest logs
            print(f"verdict-gate: kept work directory {path}", file=sys.stderr)
        else:
            pack.make_writable(path)
            shutil.rmtree(path, ignore_errors=True)


def printable(text: str) -> str:
    """``text`` with control and other unprintable characters as ``\\xNN`` escapes: a file name
    from the candidate must not move the cursor or start a fake line in a log."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in text)


def check_pack_root(source: str, repo: Path, pack_root: str, pinned: bool = False) -> None:
    """A pack read from this repository must sit at the catalog's ``pack_root``: the diff buckets
    that void a patch editing the ledger or a property are built from ``pack_root``, so a pack
    read from another directory would be unprotected.

    Raises:
        GateError: for ``git:REV:DIR`` with ``DIR`` ≠ ``pack_root``, or a directory inside the
            repository at another path.
    """
    if source.startswith("git:"):
        where = str(PurePosixPath(source[4:].partition(":")[2].strip("/") or "."))
    else:
        path = Path(source)
        if path.is_file() and not pinned:
            try:
                rel = path.resolve().relative_to(repo.resolve()).as_posix()
            except ValueError:
                return  # an archive outside the repository
            if git.git(repo, "ls-files", "-z", "--", rel, check=False).stdout:
                raise GateError("oracle pack", source, "is an archive committed in the candidate's own tree: the "
                                "patch under test could have rebuilt it", "pin it with --pack-sha256 (the sha256 "
                                "`verdict-gate pack build` printed), or read the pack from a protected revision")
            return
        if not path.is_dir():
            return  # a URL or an artifact: it comes from outside the repository
        try:
            where = path.resolve().relative_to(repo.resolve()).as_posix()
        except ValueError:
            return  # a directory outside the repository
        where = "" if where == "." else where
        tracked = git.git(repo, "ls-files", "-z", "--", where or ".", check=False).stdout
        if tracked:
            raise GateError("oracle pack", source, "is a directory of the candidate's own tree: the patch under "
                            "test could have written it", f"read it from a protected revision instead: "
                            f"--pack git:origin/main:{where or '.'} (or your base branch)")
    if where != pack_root:
        raise GateError("oracle pack", source, f"is read from {where or '.'!r}, but its catalog says "
                        f"pack_root: {pack_root!r}, so edits to {where or '.'!r} would not be caught in the diff",
                        f"set `pack_root: {where}` in the catalog, or read the pack from {pack_root!r}")


def _glob_roots(globs: Sequence[str]) -> list[str]:
    """The literal leading directories of each glob, so only those subtrees are walked."""
    roots = []
    for glob in globs:
        lead = []
        for seg in glob.split("/")[:-1]:
            if any(c in seg for c in "*?["):
                break
            lead.append(seg)
        roots.append("/".join(lead))
    return sorted(set(roots))


def repo_fixture_entries(tree: Path, catalog: Catalog) -> list[Entry]:
    """The tree's files matching the catalog's fixture globs, as digest entries ``repo/<path>``."""
    entries = []
    seen: set[str] = set()
    for root in _glob_roots(catalog.paths.fixtures):
        base = tree / root if root else tree
        if not base.exists():
            continue
        for entry in walk(base, prefix=root):
            rel = entry.path
            # `.git` in a worktree is a file naming the repository and the worktree: not a fixture.
            if rel == ".git" or rel.startswith(".git/") or rel in seen or not match_any(rel, catalog.paths.fixtures):
                continue
            seen.add(rel)
            entries.append(Entry(f"repo/{rel}", entry.file))
    return entries


def fixture_digest(p: pack.Pack, tree: Path, revision: str, *, fresh: bool = False) -> tuple[Scan, dict[str, Any]]:
    """``tree-v1`` over the pack's ``fixtures/`` (paths ``pack/…``) then the tree's repository
    fixtures (paths ``repo/…``), and its ``fixture.digest`` record.

    Every ``pack/`` path sorts before every ``repo/`` path, so the digest continues from the
    hasher state the pack's manifest check left (one read of each pack file). ``fresh``
    re-reads the pack fixtures instead (to detect a property that changed them).
    """
    catalog = p.catalog
    repo_entries = repo_fixture_entries(tree, catalog)
    if fresh or p.fixtures is None:
        pack_scan = scan(walk(p.dir / "fixtures", prefix="pack"), catalog.normalizers)
    else:
        pack_scan = p.fixtures
    result = scan(repo_entries, catalog.normalizers, state=pack_scan.state)
    record = {
        "version": 1,
        "format": FORMAT,
        "digest": result.digest,
        "revision": revision,
        "roots": {"pack": "fixtures/ of the oracle pack", "repo": list(catalog.paths.fixtures)},
        "files": pack_scan.tree_files + result.tree_files,
        "bytes": pack_scan.tree_bytes + result.tree_bytes,
        "normalizers": [vars(n) for n in catalog.normalizers],
    }
    return result, record


def workspace(p: pack.Pack, tree: Path, scratch: Path) -> runner.Workspace:
    catalog = p.catalog
    py_path = tuple((tree / entry).resolve() for entry in catalog.python_path)
    watch = [p.dir / "fixtures"] + [tree / r for r in _glob_roots(catalog.paths.fixtures) if r]
    return runner.Workspace(
        pack_dir=p.dir, tree_dir=tree, python_path=py_path,
        roots=((p.dir, catalog.pack_root), (tree, "")), watch=tuple(watch), scratch=scratch,
        run_as=runner.sandbox_user(),
    )


def run_entry(raw: dict[str, Any], prop: Property, digest: str, base_revision: str,
              tmp_paths: Sequence[str]) -> dict[str, Any]:
    """One ``runs.json`` / ``base.sig.json`` entry from the plugin's raw record (signature added)."""
    entry = {
        "status": raw["status"], "node": raw.get("node", prop.selector), "seed": raw.get("seed"),
        "trials": raw.get("trials"), "hits": raw.get("hits"), "counterexample": raw.get("counterexample"),
        "exc_type": raw.get("exc_type"), "message": raw.get("message"), "traceback": raw.get("traceback", []),
        "duration_s": raw.get("duration_s"), "fixture_digest": digest, "base_revision": base_revision,
        "fixture_mutated": bool(raw.get("fixture_mutated")), "signature": None, "signature_parts": None,
    }
    if raw["status"] in ("fail", "timeout", "crash"):
        sig = make_signature(prop_id=prop.id, node=entry["node"], seed=entry["seed"],
                             exc_type=entry["exc_type"] or "builtins.Exception", message=entry["message"] or "",
                             counterexample=entry["counterexample"], tmp_paths=tmp_paths,
                             fold_digits=prop.fold_digits)
        entry["signature"], entry["signature_parts"] = sig.value, dict(sig.parts)
        if entry["message"]:
            for tmp in sorted(tmp_paths, key=len, reverse=True):
                entry["message"] = entry["message"].replace(tmp, "<tmp>")
    return entry


@dataclass
class Execution:
    """One run of properties on one tree: ``runs.json`` entries by id, the ``fixture.digest``
    record, the number of tests pytest ran, and notices for the user."""

    entries: dict[str, dict[str, Any]]
    record: dict[str, Any]
    items: int
    notices: list[str]


def execute(props: Sequence[Property], p: pack.Pack, tree: Path, revision: str, base_revision: str,
            scratch: Path, progress: Progress,
            digest: tuple[Scan, dict[str, Any]] | None = None) -> Execution:
    """Fixture digest (unless the caller already has it as ``digest``), then run ``props`` on ``tree``.

    After the run the fixtures are read again: a change means some property mutated them.
    """
    notices = [f"python_path entry {entry!r} is not a directory of {revision[:12]}: check the catalog's python_path"
               for entry in p.catalog.python_path if not (tree / entry).is_dir()]
    result, record = digest or fixture_digest(p, tree, revision)
    ws = workspace(p, tree, scratch)
    before = result.digest
    raw = runner.run_properties(props, ws, progress) if props else {}
    after, _ = fixture_digest(p, tree, revision, fresh=True)
    by_id = {prop.id: prop for prop in props}
    uncollected = sorted(pid for pid, r in raw.items() if r.get("event") == "uncollected")
    raw = {pid: r for pid, r in raw.items() if r.get("event") != "uncollected"}
    tmp_paths = [str(tree), str(p.dir), str(scratch), os.path.realpath(tree), os.path.realpath(p.dir)]
    entries = {pid: run_entry(r, by_id[pid], before, base_revision, tmp_paths) for pid, r in raw.items()}
    if after.digest != before and not any(e["fixture_mutated"] for e in entries.values()):
        # The fixtures changed but no single property was caught doing it: fail closed.
        for pid, e in entries.items():
            if not by_id[pid].mutates_fixture:
                e["fixture_mutated"] = True
    items = sum(int(r.get("items") or 0) for r in raw.values())
    notices += [f"{pid}: pytest collected no test for {by_id[pid].selector!r} in the pack: check the catalog's "
                "oracle and node" for pid in uncollected]
    return Execution(entries, record, items, notices)


def replay(repo: Path, rev: str, p: pack.Pack, only: Sequence[str] | None, scratch: Path,
           progress: Progress, notices: list[str] | None = None) -> dict[str, Any]:
    """Base replay: run the ledger's properties (or ``only``) on a detached worktree of ``rev``.

    Returns the ``base.sig.json`` document; notices about the run are appended to ``notices``.
    The worktree is removed on every path.
    """
    ids = list(only) if only else p.ledger.prop_ids()
    known = p.catalog.by_id()
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise GateError("property id", ", ".join(unknown), "is not in the pack's catalog",
                        f"use one of: {', '.join(known)}")
    props = [known[i] for i in ids]
    with git.worktree(repo, rev, scratch) as tree:
        sub = scratch / "replay"
        sub.mkdir()
        done = execute(props, p, tree, rev, rev, sub, progress)
    entries, record = done.entries, done.record
    if notices is not None:
        notices += [f"base replay: {n}" for n in done.notices]
    replays = []
    for prop in props:
        e = entries.get(prop.id)
        replays.append({
            "prop_id": prop.id, "status": e["status"] if e else "missing",
            "signature": e["signature"] if e else None, "signature_parts": e["signature_parts"] if e else None,
            "fixture_digest": record["digest"], "base_revision": rev,
        })
    return {"version": 1, "base_revision": rev, "fixture_digest": record["digest"], "replays": replays}


def _as_run_result(entry: dict[str, Any] | None, prop: Property) -> RunResult | None:
    if entry is None:
        return None
    return RunResult(
        status=entry["status"], signature=entry["signature"], signature_parts=entry["signature_parts"],
        fixture_digest=entry["fixture_digest"], seed=entry["seed"], seeded_kind=prop.kind == "property",
        hits=entry["hits"], fixture_mutated=entry["fixture_mutated"] and not prop.mutates_fixture,
    )


def run(repo: Path, base_ref: str, pack_source: str, *, policy: str | None, today: dt.date,
        progress: Progress, temp_parent: Path | None = None, pack_options: pack.PackOptions | None = None) -> Evidence:
    """The whole pipeline. Returns the :class:`Evidence`; writing it is the caller's.

    Raises:
        GateError: usage or configuration errors (exit 2) before anything was scored.
    """
    repo = git.toplevel(repo)
    ev = Evidence(repo=str(repo), base_ref=base_ref)
    head = git.resolve(repo, "HEAD", "HEAD")
    base_commit = git.resolve(repo, base_ref, "base ref")
    ev.head_revision = head
    ev.base_revision = git.merge_base(repo, base_commit, head)
    dirty = git.dirty_paths(repo)
    if dirty:
        ev.notices.append(f"{len(dirty)} uncommitted change(s) are not scored: the gate checks out HEAD {head[:12]}")
    with scratch_dir(temp_parent) as scratch:
        progress(f"loading oracle pack {pack.redact(pack_source)}")
        origin: dict[str, Any] = {}  # filled as the load learns it: kind, sha256, artifact and run ids
        try:
            p = pack.load(pack_source, repo, scratch, options=pack_options, origin=origin, progress=progress)
        except GateError as exc:
            if exc.exit_code != 3:
                raise
            ev.void_reason = str(exc)
            ev.pack = {"source": pack.redact(pack_source), **origin}
            return ev
        catalog = p.catalog
        check_pack_root(pack_source, repo, catalog.pack_root, pinned=bool(getattr(pack_options, "sha256", None)))
        if pack_source.startswith("git:"):
            rev = pack_source[4:].partition(":")[0]
            if git.resolve(repo, rev, "pack revision") == head:
                ev.notices.append(f"the pack is read from {rev}, the candidate itself: that is not a protected "
                                  "source (use the base branch, e.g. git:origin/main:oracle)")
        ev.pack = {**p.origin, "files": len(p.manifest), "pack_root": catalog.pack_root}
        ev.policy = policy or catalog.policy
        ev.freeze_base = catalog.freeze_base
        ev.claimed = catalog.claimed
        ev.properties = catalog.by_id()

        with git.worktree(repo, head, scratch) as cand:
            progress("fixture digest")
            try:
                cand_digest = fixture_digest(p, cand, head)
                ev.fixture = cand_digest[1]
            except GateError as exc:
                # The candidate's own tree cannot be digested (a link or special file among its
                # fixtures): it cannot be scored, whatever else the patch does.
                where = exc.where.replace(str(cand) + "/", "").replace(str(cand), ".")
                ev.void_reason = f"the candidate's fixtures cannot be digested: {where} {exc.problem}"
                return ev
            progress(f"splitting the diff {ev.base_revision[:12]}...{head[:12]}")
            raw_diff = git.diff_name_status(repo, ev.base_revision, head)
            try:
                changes = diffsplit.parse_name_status(raw_diff)
            except diffsplit.DiffParseError as exc:
                raise RuntimeError(f"git diff output could not be parsed: {exc}") from None
            parts = diffsplit.split(changes, catalog)
            if not changes:
                ev.notices.append(f"the diff {ev.base_revision[:12]}...{head[:12]} is empty: "
                                  "HEAD adds nothing to the base")
            ev.oracle_edited = {
                "version": 1, "base_revision": ev.base_revision, "head_revision": head,
                "buckets": {k: list(v) for k, v in parts.buckets.items()},
                "oracle_moved": list(parts.oracle_moved), "control_edits": list(parts.control_edits),
                "void": parts.void,
            }
            if parts.void:
                more = len(parts.control_edits) - 10
                ev.void_reason = ("the diff edits control files of the oracle: "
                                  + ", ".join(printable(path) for path in parts.control_edits[:10])
                                  + (f" and {more} more" if more > 0 else ""))
                return ev

            to_replay = [i for i in p.ledger.prop_ids() if i not in parts.oracle_moved]
            if to_replay:
                progress(f"base replay of {len(to_replay)} frozen propert{'y' if len(to_replay) == 1 else 'ies'} "
                         f"on {ev.base_revision[:12]}")
                ev.base_sig = replay(repo, ev.base_revision, p, to_replay, scratch, progress, ev.notices)
            else:
                ev.base_sig = {"version": 1, "base_revision": ev.base_revision,
                               "fixture_digest": ev.fixture["digest"], "replays": []}

            props = [prop for prop in catalog.properties if prop.id not in parts.oracle_moved]
            progress(f"running {len(props)} propert{'y' if len(props) == 1 else 'ies'} on the candidate {head[:12]}")
            cand_scratch = scratch / "candidate"
            cand_scratch.mkdir()
            done = execute(props, p, cand, head, ev.base_revision, cand_scratch, progress, cand_digest)
            entries, items = done.entries, done.items
            ev.notices += done.notices
        ev.runs = {
            "version": 1, "revision": head, "base_revision": ev.base_revision,
            "fixture_digest": ev.fixture["digest"], "environment": runner.environment_pins(), "runs": entries,
        }

        replays = [BaseSig(r["prop_id"], r["signature"], r["fixture_digest"], r["base_revision"])
                   for r in ev.base_sig["replays"]]
        ancestors = {f.base_revision: git.is_ancestor(repo, f.base_revision, ev.base_revision)
                     for f in p.ledger.freezes}
        for prop in catalog.properties:
            ev.verdicts[prop.id] = decide(
                _as_run_result(entries.get(prop.id), prop),
                oracle_edited=prop.id in parts.oracle_moved,
                freezes=p.ledger.for_id(prop.id),
                replay=[r for r in replays if r.prop_id == prop.id],
                base_revision=ev.base_revision, ancestors=ancestors,
                freeze_base=catalog.freeze_base, today=today,
            )
        claimed = {i: ev.verdicts[i] for i in catalog.claimed}
        promotion = promote(claimed, catalog.claimed, ev.policy)
        # Zero collected: nothing ran and nothing failed to import. A collection error is a
        # failure (blocked), not an empty run.
        nothing_ran = bool(props) and items == 0 and not any(e["status"] != "skipped" for e in entries.values())
        incomplete = any(v.reason in INCOMPLETE_REASONS for v in claimed.values()) or nothing_ran
        if nothing_ran:
            ev.notices.append("pytest collected zero tests for the catalog's properties: outcome incomplete")
        ev.why = promotion.why
        ev.outcome = outcome(void=False, incomplete=incomplete, promoted=promotion.promoted)
        ev.promoted = ev.outcome == "promoted"
        return ev
