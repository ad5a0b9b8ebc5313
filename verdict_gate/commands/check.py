"""``verdict-gate check PACK [--rev REV]``: run every property of a pack and say what would be frozen.

For an oracle author trying a pack before committing it: every property runs on the work tree (or
on a detached worktree of ``--rev``), and each is listed as held, as a failure set a freeze could
forgive (with the commands that freeze it), or as a failure no freeze can forgive (it never reached
the property's body: an import or collection error, a missing pytest fixture, zero hits).

Then every property runs once more with no boundary (isolation ``none``: the tree's code imported into
the oracle's pytest process, as plain pytest runs it), and each test node whose outcome the boundary
changes is named (docs/isolation.md, "What crosses the boundary"): a documented limit the gate would
otherwise score, found before anything is frozen. ``--no-plain`` skips that run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verdict_gate.boundary.results import CRASH_EXC, TIMEOUT_EXC
from verdict_gate.commands.common import add_pack_options, pack_options, progress

LOST_EXC = (TIMEOUT_EXC, CRASH_EXC)  # the runner's record of a property whose process it lost mid-way

EXIT_HELP = ("exit codes: 0 every property held or failed in a way a freeze could forgive, 1 a property cannot "
             "run as it is (never reached its body, not collected, checked nothing, or the boundary changes a "
             "test's outcome), 2 usage or configuration error, 3 the pack cannot be trusted.")


def add_parser(sub: Any) -> None:
    chk = sub.add_parser("check", epilog=EXIT_HELP,
                         help="try a pack: run every property and print what would be frozen",
                         description="Run every property of PACK on the work tree (or on --rev) and print, per "
                                     "property, whether it held, which failures a freeze would forgive, and which "
                                     "failures cannot be frozen; then run them again with no boundary (isolation "
                                     "none) and name every test whose outcome the boundary changes. Nothing is "
                                     "written.")
    chk.add_argument("pack", metavar="PACK", help="oracle pack: a directory, an archive, git:REV:DIR, …")
    chk.add_argument("--repo", default=".", help="git repository (default: .)")
    chk.add_argument("--rev", default=None, help="run on this revision (default: the work tree as it is)")
    chk.add_argument("--no-plain", action="store_true",
                     help="skip the second run with no boundary (isolation none: the tree's code in the oracle's "
                          "pytest process, as plain pytest runs it) that finds the tests whose outcome the "
                          "boundary changes")
    add_pack_options(chk)
    chk.add_argument("--jobs", type=int, metavar="N", default=None,
                     help="oracle processes at once, each with its own candidate worker (default: the core count, "
                          "as `run`); the verdicts are the same at any number (docs/design.md §8.1)")
    chk.add_argument("--format", choices=["text", "json"], default="text",
                     help="text (default) or json: one document on stdout: {format, ok, revision, where, notes, "
                          "warnings, properties: [{id, ran, status, would_freeze, why_not, signature, failures, error, "
                          "fix, freeze_command, boundary}]}; boundary: [{node, gate, plain}], the test "
                          "nodes whose outcome differs with no boundary; warnings: what a freeze of a test could not "
                          "see (an assertion in a loop, an expected value computed after candidate code had it)")
    chk.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.errors import EXIT_BLOCKED, EXIT_PROMOTED

    if args.jobs is not None and args.jobs < 1:
        from verdict_gate.core.errors import GateError

        raise GateError("--jobs", str(args.jobs), "is not a positive number of processes", "pass --jobs 1 or more")
    report = check(Path(args.repo), args.pack, args.rev, pack_options(args), plain=not args.no_plain,
                   jobs=args.jobs)
    if getattr(args, "format", "text") == "json":
        import json

        print(json.dumps(report.document(), indent=2, sort_keys=True))
    else:
        print("\n".join(report.lines()))
    return EXIT_PROMOTED if report.ok else EXIT_BLOCKED


@dataclass(frozen=True)
class Checked:
    """What ``check`` found for one property.

    Attributes:
        id: the property id.
        ran: its body ran on at least one example (``False``: not collected, an import or collection error,
            a missing pytest fixture, a host that could not give its isolation, skipped).
        status: ``pass``, ``fail``, ``timeout``, ``crash``, ``skipped``, ``vacuous`` (passed, checked no example)
            or ``missing`` (no result).
        would_freeze: a freeze recorded from a replay of this failure would forgive it.
        why_not: for a property that is not ``pass`` and cannot be frozen, why; else ``None``.
        signature: the failure set's signature, for a failure.
        failures: one line per failure (its node, exception and counterexample).
        error: ``ExcType: message`` of what broke a property that cannot run.
        output_tail: the last lines of pytest's own output, for a lost process.
        fix: for a property that cannot run (it never reached its body), what to do about the pack.
        boundary: the test nodes whose outcome the boundary changes, as ``(node, gate, plain)``: the
            outcome under the gate and with no boundary (pytest's words: ``passed``, ``failed``, …;
            ``missing`` for a node one run did not report), from :func:`boundary_differences`.
    """

    id: str
    ran: bool
    status: str
    would_freeze: bool
    why_not: str | None
    signature: str | None = None
    failures: tuple[str, ...] = ()
    error: str | None = None
    output_tail: tuple[str, ...] = ()
    boundary: tuple[tuple[str, str, str], ...] = ()
    fix: str | None = None


BOUNDARY_FIX = ("the boundary changes what this test shows (docs/isolation.md, \"What crosses the boundary\"): "
                "rewrite the test so it does not depend on it, leave the property out of the catalog, or set "
                "isolation: none for it (the candidate then runs in the oracle's process: only for code you trust)")


BOUNDARY_WHY = "the isolation boundary changes what this test shows, so its failure is not the project's to freeze"


def boundary_differences(gate: Any, plain: Any) -> tuple[tuple[str, str, str], ...]:
    """The test nodes whose outcome differs between ``gate`` and ``plain``, two run records of one
    property (``nodes``: node id → pytest's outcome word), as ``(node, gate, plain)`` sorted by node.

    A node only one record has is ``missing`` on the other side. Records without nodes (a lost run)
    compare by status: ``("(the property)", gate status, plain status)`` when they differ. A run lost mid-way
    (a timeout, a process crash: the runner's record) keeps the nodes that ended before it: those compare, the
    ones after the cut do not (where it falls is the machine's speed), and the statuses do. Nodes past a
    record's cap (``nodes_more``) are not compared.
    """
    if gate is None or plain is None:
        return ()
    status = () if gate.status == plain.status else (("(the property)", gate.status, plain.status),)
    if gate.nodes is None or plain.nodes is None:
        return status
    cut_gate, cut_plain = gate.exc_type in LOST_EXC, plain.exc_type in LOST_EXC
    names = sorted(set(gate.nodes) | set(plain.nodes))
    nodes = tuple((n, gate.nodes.get(n, "missing"), plain.nodes.get(n, "missing")) for n in names
                  if gate.nodes.get(n) != plain.nodes.get(n)
                  and not ((gate.nodes_more or plain.nodes_more) and (n not in gate.nodes or n not in plain.nodes))
                  and not ((cut_gate and n not in gate.nodes) or (cut_plain and n not in plain.nodes)))
    return (status if cut_gate or cut_plain else ()) + nodes


@dataclass(frozen=True)
class Report:
    """The whole ``check``: each property (catalog order), the notes, the revision, and ``ok`` (every
    property can run as it is)."""

    properties: tuple[Checked, ...]
    notes: tuple[str, ...]
    revision: str
    where: str
    freeze_hint: str  # `{id}` is the property's id
    warnings: tuple[str, ...] = ()  # what a freeze of these tests could not see (host.modules.blind_spots)

    @property
    def ok(self) -> bool:
        return all((c.status == "pass" or c.would_freeze) and not c.boundary for c in self.properties)

    def lines(self) -> list[str]:
        """The text report, one block per property."""
        out: list[str] = []
        for c in self.properties:
            if c.status == "missing":
                out.append(f"{c.id}: no result ({c.why_not})")
            elif c.status == "pass":
                out.append(f"{c.id}: held")
            elif c.status == "vacuous":
                out.append(f"{c.id}: checked no example (vacuous)")
            elif c.status == "skipped":
                out.append(f"{c.id}: skipped (checked nothing)")
            elif not c.would_freeze:
                out.append(f"{c.id}: {c.status}, cannot be frozen: {c.why_not}")
                if c.error:  # what broke it (an import error, a missing fixture …), as `run` shows it
                    out.append(f"    {c.error}")
                if c.fix:
                    out.append(f"    fix: {c.fix}")
                out += ["    " + line for line in c.output_tail]
            elif c.boundary:  # a failure the boundary made is never the project's to freeze
                out.append(f"{c.id}: fails with {len(c.failures)} failure(s) ({c.signature}), which a freeze "
                           "would not forgive: the boundary changes what this test shows (below):")
                out += [f"    {line}" for line in c.failures]
            else:
                out.append(f"{c.id}: fails; a freeze would forgive {len(c.failures)} failure(s) ({c.signature}):")
                out += [f"    {line}" for line in c.failures]
                out.append("    to freeze on a protected revision: " + self.freeze_hint.format(id=c.id))
            if c.boundary:
                out.append(f"{c.id}: {len(c.boundary)} test(s) end differently with no boundary; {BOUNDARY_FIX}")
                out += [f"    {node}: {gate} under the gate, {plain} with no boundary"
                        for node, gate, plain in c.boundary]
        return out + [f"warning: {w}" for w in self.warnings] + [f"note: {n}" for n in self.notes]

    def document(self) -> dict[str, Any]:
        """The ``--format json`` document (``verdict-gate/check/v2``)."""
        return {"format": FORMAT, "ok": self.ok, "revision": self.revision, "where": self.where,
                "properties": [{"id": c.id, "ran": c.ran, "status": c.status,
                                "would_freeze": c.would_freeze and not c.boundary,
                                "why_not": c.why_not or (BOUNDARY_WHY if c.boundary and c.status != "pass" else None),
                                "signature": c.signature, "failures": list(c.failures), "error": c.error,
                                "fix": c.fix or (BOUNDARY_FIX if c.boundary else None),
                                "freeze_command": self.freeze_hint.format(id=c.id)
                                if c.would_freeze and not c.boundary else None,
                                "boundary": [{"node": n, "gate": g, "plain": p} for n, g, p in c.boundary]}
                               for c in self.properties],
                "notes": list(self.notes), "warnings": list(self.warnings)}


FORMAT = "verdict-gate/check/v2"  # v2: per-property data (v1: the text lines)


def check(repo: Path, source: str, rev: str | None, options: Any = None, *, plain: bool = True,
          only: Sequence[str] | None = None, jobs: int | None = None) -> Report:
    """Run every property of the pack (or those in ``only``) on ``rev`` (a detached worktree) or on the
    work tree (``None``).

    Returns the :class:`Report`: per property whether it ran, its status, whether a freeze would forgive
    it and, if not, why; with ``plain``, the properties are run again with no boundary (isolation
    ``none``) and each test node whose outcome differs is named. ``jobs``: oracle processes at once (``None``: the
    core count).
    """
    import dataclasses
    from contextlib import nullcontext

    from verdict_gate import pack
    from verdict_gate.host import git
    from verdict_gate.host.modules import blind_spots
    from verdict_gate.host.workdir import scratch_dir
    from verdict_gate.run.collected import check_collected
    from verdict_gate.run.execute import execute

    repo = git.toplevel(repo)
    commit = git.resolve(repo, rev or "HEAD", "--rev")
    with scratch_dir() as scratch:
        oracle_pack = pack.load(source, repo, scratch, options=options, progress=progress)
        props = [p for p in oracle_pack.catalog.properties if only is None or p.id in only]
        where = rev or "the work tree"
        progress(f"checking {len(props)} propert{'y' if len(props) == 1 else 'ies'} on {where}")
        sub = scratch / "check"
        sub.mkdir()
        tree_cm: Any = git.worktree(repo, commit, scratch) if rev else nullcontext(repo)
        with tree_cm as tree:
            generated_notes = _generated(oracle_pack.catalog.generated, tree, rev, commit)
            warnings = blind_spots(oracle_pack.catalog, oracle_pack.dir, tree, [p.id for p in props])
            done = execute(props, oracle_pack, tree, commit, commit, sub, progress, repo=None if rev is None else repo,
                           passes={prop.id: {} for prop in props}, jobs=jobs)
            check_collected(oracle_pack, done)  # a node: pytest did not collect stopped the run: the catalog's error
            bounded = [dataclasses.replace(prop, isolation="none") for prop in props if prop.isolation != "none"]
            unbounded = None
            if plain and bounded:
                progress(f"running {len(bounded)} propert{'y' if len(bounded) == 1 else 'ies'} again with no "
                         "boundary (isolation none, as plain pytest), to find what the boundary changes")
                (scratch / "plain").mkdir()
                unbounded = execute(bounded, oracle_pack, tree, commit, commit, scratch / "plain", progress,
                                    fixtures=done.digested, repo=None if rev is None else repo,
                                    passes={prop.id: {} for prop in bounded}, jobs=jobs)
    # On a protected revision, replayed 5 times: a flake becomes a flaky freeze (docs/design.md §3).
    hint = (f"verdict-gate freeze --rev REV --pack {source} --id {{id}} --reason \"…\" "
            f"--ledger {oracle_pack.catalog.pack_root}/freeze_ledger.json")
    print(f"checked on {where} ({commit[:12]})", file=sys.stderr)
    checked = [_checked(prop.id, done.records.get(prop.id)) for prop in props]
    if unbounded is not None:
        checked = [dataclasses.replace(c, boundary=boundary_differences(done.records.get(c.id),
                                                                        unbounded.records.get(c.id)))
                   for c in checked]
    return Report(tuple(checked),
                  tuple([*generated_notes, *done.notices]), commit, where, hint, tuple(warnings))


def _checked(pid: str, r: Any) -> Checked:
    """One property's :class:`Checked` from its run record (``None``: no result)."""
    from verdict_gate.core.ledger import unfreezable
    from verdict_gate.core.verdict import NEVER_REACHED, oracle_fix
    from verdict_gate.report.text import printable

    if r is None:
        return Checked(pid, False, "missing", False, "not collected: check the catalog's oracle and node")
    if r.status == "pass":
        if r.hits == 0:
            return Checked(pid, False, "vacuous", False, "it checked no example: nothing shows it holds")
        return Checked(pid, True, "pass", False, None)
    if r.status == "skipped":
        return Checked(pid, False, "skipped", False, "it was skipped: it checked nothing")
    replay = {"prop_id": pid, "hits": r.hits, "exc_type": r.exc_type, "node": r.node,
              "failures": [{"node": f.node, "exc_type": f.exc_type, "signature_parts": dict(f.signature_parts)}
                           for f in r.failures]}
    why = unfreezable(replay) if r.status == "fail" else ""
    if r.status in ("timeout", "crash") or why:
        first = r.failures[0] if r.failures else None
        site = (first.signature_parts.get("site") if first is not None else None)
        error = (f"{site + ': ' if site else ''}{r.exc_type}: {printable(str(r.message or ''))[:300]}"
                 if why and r.exc_type else None)
        fix = oracle_fix(r.exc_type or "") if r.status == "fail" and (r.hits == 0 or (
            first is not None and first.exc_type in NEVER_REACHED)) else None
        tail = tuple(r.output_tail.splitlines()[-5:]) if r.output_tail else ()
        return Checked(pid, bool(r.hits), r.status, False, why or printable(str(r.message or r.status)),
                       r.signature, error=error, output_tail=tail, fix=fix)
    return Checked(pid, True, "fail", True, None, r.signature, tuple(failure_line(f) for f in r.failures))


def failure_line(f: Any) -> str:
    """One failure for a person (a run record's :class:`~verdict_gate.core.records.FailureRecord`): its node, the
    exception with the first line of its message, the pack line it came through, and the counterexample."""
    from verdict_gate.report.text import printable

    parts = f.signature_parts
    message = printable(str(f.message or "").strip().splitlines()[0] if str(f.message or "").strip() else "")
    text = f"{f.node}: {f.exc_type}" + (f": {message[:200]}" + ("…" if len(message) > 200 else "") if message else "")
    if parts.get("site"):
        text += f" (at the pack's {str(parts['site']).partition('#')[0]})"
    if parts.get("counterexample") is not None:
        example = str(parts["counterexample"])
        text += " on " + (example if len(example) <= 200 else example[:200] + "…")
    return text


def _generated(files: Any, tree: Path, rev: str | None, commit: str) -> list[str]:
    """The catalog's ``generated:`` files: written into the worktree of ``--rev``; on the work tree
    (never written into: it is the user's), a notice per file it lacks."""
    from verdict_gate.host.generated import missing, write_generated

    if not files:
        return []
    if rev:
        return write_generated(tree, files, f"the tree of {commit[:12]}")[1]
    return [f"generated file {path} (catalog generated:) is missing from the work tree, which the gate never "
            "writes into: its imports fail here; build the package once (e.g. pip install -e .) or check a "
            "clean checkout with --rev HEAD, where the gate writes it" for path in missing(tree, files)]
