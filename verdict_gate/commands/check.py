"""``verdict-gate check PACK [--rev REV]``: run every property of a pack and say what would be frozen.

For an oracle author trying a pack before committing it: every property runs on the work tree (or
on a detached worktree of ``--rev``), and each is listed as held, as a failure set a freeze could
forgive (with the commands that freeze it), or as a failure no freeze can forgive (it never reached
the property's body: an import or collection error, a missing pytest fixture, zero hits).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from verdict_gate.commands.common import add_pack_options, pack_options, progress

EXIT_HELP = ("exit codes: 0 every property held or failed in a way a freeze could forgive, 1 a property cannot "
             "run as it is (never reached its body, not collected, checked nothing), 2 usage or configuration "
             "error, 3 the pack cannot be trusted.")


def add_parser(sub: Any) -> None:
    chk = sub.add_parser("check", epilog=EXIT_HELP,
                         help="try a pack: run every property and print what would be frozen",
                         description="Run every property of PACK on the work tree (or on --rev) and print, per "
                                     "property, whether it held, which failures a freeze would forgive, and which "
                                     "failures cannot be frozen. Nothing is written.")
    chk.add_argument("pack", metavar="PACK", help="oracle pack: a directory, an archive, git:REV:DIR, …")
    chk.add_argument("--repo", default=".", help="git repository (default: .)")
    chk.add_argument("--rev", default=None, help="run on this revision (default: the work tree as it is)")
    add_pack_options(chk)
    chk.add_argument("--format", choices=["text", "json"], default="text",
                     help="text (default) or json: one document on stdout, {format, ok, lines}")
    chk.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.errors import EXIT_BLOCKED, EXIT_PROMOTED

    lines, ok = check(Path(args.repo), args.pack, args.rev, pack_options(args))
    if getattr(args, "format", "text") == "json":
        import json

        print(json.dumps({"format": "verdict-gate/check/v1", "ok": ok, "lines": lines}, indent=2, sort_keys=True))
    else:
        print("\n".join(lines))
    return EXIT_PROMOTED if ok else EXIT_BLOCKED


def check(repo: Path, source: str, rev: str | None, options: Any = None) -> tuple[list[str], bool]:
    """Run every property of the pack on ``rev`` (a detached worktree) or on the work tree (``None``).

    Returns the report's lines and whether every property can run as it is.
    """
    from contextlib import nullcontext

    from verdict_gate import pack
    from verdict_gate.core.ledger import unfreezable
    from verdict_gate.core.signature import describe_failure
    from verdict_gate.host import git
    from verdict_gate.host.workdir import scratch_dir
    from verdict_gate.report.text import printable
    from verdict_gate.run.execute import execute

    repo = git.toplevel(repo)
    commit = git.resolve(repo, rev or "HEAD", "--rev")
    with scratch_dir() as scratch:
        oracle_pack = pack.load(source, repo, scratch, options=options, progress=progress)
        props = list(oracle_pack.catalog.properties)
        where = rev or "the work tree"
        progress(f"checking {len(props)} propert{'y' if len(props) == 1 else 'ies'} on {where}")
        sub = scratch / "check"
        sub.mkdir()
        tree_cm: Any = git.worktree(repo, commit, scratch) if rev else nullcontext(repo)
        with tree_cm as tree:
            done = execute(props, oracle_pack, tree, commit, commit, sub, progress, repo=None if rev is None else repo,
                           passes={prop.id: {} for prop in props})
    lines: list[str] = []
    ok = True
    for prop in props:
        r = done.records.get(prop.id)
        if r is None:
            ok = False
            lines.append(f"{prop.id}: no result (not collected: check the catalog's oracle and node)")
            continue
        if r.status == "pass":
            vacuous = r.hits == 0
            ok = ok and not vacuous
            lines.append(f"{prop.id}: {'checked no example (vacuous)' if vacuous else 'held'}")
            continue
        if r.status == "skipped":
            ok = False
            lines.append(f"{prop.id}: skipped (checked nothing)")
            continue
        replay = {"prop_id": prop.id, "hits": r.hits, "exc_type": r.exc_type, "node": r.node,
                  "failures": [{"node": f.node, "exc_type": f.exc_type, "signature_parts": dict(f.signature_parts)}
                               for f in r.failures]}
        why = unfreezable(replay) if r.status == "fail" else ""
        if r.status in ("timeout", "crash") or why:
            ok = False
            lines.append(f"{prop.id}: {r.status}, cannot be frozen: {why or r.message}")
            if why and r.exc_type:  # what broke it (an import error, a missing fixture …), as `run` shows it
                lines.append(f"    {r.exc_type}: {printable(str(r.message or ''))[:300]}")
            if r.output_tail:
                lines += ["    " + line for line in r.output_tail.splitlines()[-5:]]
            continue
        lines.append(f"{prop.id}: fails; a freeze would forgive {len(r.failures)} failure(s) ({r.signature}):")
        lines += [f"    {describe_failure(f.signature_parts)}" for f in r.failures]
        lines.append(f"    to freeze on a protected revision (replayed 5 times: a flake becomes a flaky freeze): "
                     f"verdict-gate freeze --rev REV --pack {source} --id {prop.id} --reason \"…\" "
                     f"--ledger {oracle_pack.catalog.pack_root}/freeze_ledger.json")
    lines += [f"note: {n}" for n in done.notices]
    print(f"checked on {rev or 'the work tree'} ({commit[:12]})", file=sys.stderr)
    return lines, ok
