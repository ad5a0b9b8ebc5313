"""``verdict-gate`` command line: ``main(argv) -> int``. A thin shell over the pipeline.

Exit codes (DESIGN.md §2): 0 promoted · 1 blocked · 2 usage or configuration error ·
3 void · 4 incomplete. An internal error prints ``internal error`` and exits 2: never 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gate import __version__, validate
from gate.errors import EXIT_USAGE, GateError

if TYPE_CHECKING:
    from gate.pack import PackOptions

EPILOG = """\
exit codes: 0 promoted, 1 blocked, 2 usage or configuration error, 3 void, 4 incomplete.
verdicts: pass, fail, inconclusive. A freeze can make a failure inconclusive, never pass.
docs: README.md in the verdict-gate repository (sections "The oracle pack" and "Verdicts")."""

EXIT_HELP = {  # the exit codes each command's --help states
    'replay': 'exit codes: 0 base.sig.json written, 2 usage or configuration error, 3 the pack cannot be trusted.',
    'freeze': 'exit codes: 0 freeze added, 2 usage error (nothing written).',
    'digest': 'exit codes: 0 printed, 2 not a directory, or a link or special file inside.',
    'manifest': 'exit codes: 0 written or matching, 1 verify found differences, 2 usage error.',
    'pack build': 'exit codes: 0 built, 2 invalid pack directory or output path (nothing written).',
    'demo': 'exit codes: 0 every candidate got its expected outcome, 1 otherwise.',
}


def _progress(message: str) -> None:
    print(f"verdict-gate: {message}", file=sys.stderr, flush=True)


def _today(value: str | None) -> dt.date:
    if value is None:
        return dt.datetime.now(dt.UTC).date()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise GateError("--today", repr(value), "is not a date", "write it as YYYY-MM-DD") from None


def check_out_dir(out_dir: Path, repo: Path | None = None) -> None:
    """Refuse an evidence directory that exists as something else, or holds a non-file where an
    evidence file goes (nothing the user has is overwritten), or that is reached through a
    symbolic link inside ``repo`` (a candidate could commit one). Raises GateError (exit 2)."""
    from gate.report import FILES

    if repo is not None:
        top, here = repo.absolute(), out_dir.absolute()
        if top in here.parents:
            for part in [here, *here.parents]:
                if part == top:
                    break
                if part.is_symlink():
                    raise GateError("--out", str(out_dir), f"goes through the symbolic link {part}, inside the "
                                    "repository; evidence is never written through one", "pass a real directory")
    if out_dir.is_symlink():
        raise GateError("--out", str(out_dir), "is a symbolic link; evidence is never written through one",
                        "pass a real directory path for evidence")
    if out_dir.exists() and not out_dir.is_dir():
        raise GateError("--out", str(out_dir), "exists and is not a directory", "pass a directory path for evidence")
    for name in FILES:
        target = out_dir / name
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise GateError("--out", str(target), "exists and is not a regular file; it is never overwritten",
                            "choose another --out directory")


def write_files(out_dir: Path, files: dict[str, str]) -> None:
    """The one writer: validate each evidence file against its schema, then write it atomically.

    Raises:
        GateError: ``out_dir`` exists and is not a directory, or a target is not a regular file.
        GateError (internal): an evidence file fails its own schema (a bug; fails closed).
    """
    from gate.report import SCHEMA_OF

    check_out_dir(out_dir)
    for name, text in files.items():
        if name in SCHEMA_OF:
            validate.check(SCHEMA_OF[name], json.loads(text), f"(internal) {name}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        target = out_dir / name
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=out_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)


def cmd_run(args: argparse.Namespace) -> int:
    from gate import pipeline, report
    from gate.verdict import EXIT_CODES

    check_out_dir(Path(args.out), Path(args.repo))  # before the work, not after it
    ev = pipeline.run(Path(args.repo), args.base, args.pack, policy=args.policy, today=_today(args.today),
                      progress=_progress, pack_options=_pack_options(args))
    files = report.render_all(ev, args.sarif_category)
    write_files(Path(args.out), files)
    sys.stdout.write(report.terminal_table(ev))
    print(f"evidence: {args.out}", file=sys.stderr)
    return EXIT_CODES[ev.outcome]


def cmd_replay(args: argparse.Namespace) -> int:
    from gate import git, pack, pipeline
    from gate.report import dumps

    repo = git.toplevel(Path(args.repo))
    rev = git.resolve(repo, args.rev, "--rev")
    out = Path(args.out)
    if out.is_symlink() or (out.exists() and not out.is_file()):
        raise GateError("--out", str(out), "exists and is not a regular file", "pass a file path, e.g. base.sig.json")
    out.parent.mkdir(parents=True, exist_ok=True)  # before the work: a bad path fails now, not after
    with pipeline.scratch_dir() as scratch:
        p = pack.load(args.pack, repo, scratch, options=_pack_options(args), progress=_progress)
        notices: list[str] = []
        doc = pipeline.replay(repo, rev, p, args.only_id or None, scratch, _progress, notices)
        for notice in notices:
            print(f"note: {notice}", file=sys.stderr)
    validate.check("base_sig", doc, "(internal) base.sig.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dumps(doc), encoding="utf-8")
    for r in doc["replays"]:
        print(f"{r['prop_id']}: {r['status']} {r['signature'] or ''}")
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _read_file(path: Path, what: str, fix: str) -> str:
    """A user's file as UTF-8 text; a missing or unreadable file is a GateError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GateError(what, str(path), "does not exist", fix) from None
    except IsADirectoryError:
        raise GateError(what, str(path), "is a directory, not a file", fix) from None
    except UnicodeDecodeError as exc:
        raise GateError(what, str(path), f"is not UTF-8 ({exc.reason} at byte {exc.start})",
                        "save the file as UTF-8") from None
    except OSError as exc:
        raise GateError(what, str(path), f"cannot be read ({exc.strerror})", fix) from None


def cmd_freeze(args: argparse.Namespace) -> int:
    from gate.ledger import parse_json, parse_ledger
    from gate.report import dumps

    base_sig_path = Path(args.base_sig)
    base_sig = parse_json(_read_file(base_sig_path, "base.sig.json", "pass the file `verdict-gate replay --out` wrote"),
                          "base.sig.json", args.base_sig)
    validate.check("base_sig", base_sig, args.base_sig)
    found = [r for r in base_sig["replays"] if r["prop_id"] == args.id]
    if not found:
        raise GateError("base.sig.json", args.base_sig, f"has no replay of {args.id!r}",
                        f"replay it on the base revision first: verdict-gate replay … --only-id {args.id}")
    rec = found[0]
    if not rec["signature"]:
        raise GateError("base.sig.json", args.base_sig,
                        f"shows {args.id!r} {rec['status']} on {rec['base_revision'][:12]}: "
                        "there is no failure to freeze",
                        "freeze only a failure the base replay reproduced; a passing property needs no freeze")
    ledger_path = Path(args.ledger)
    if ledger_path.exists():
        text = _read_file(ledger_path, "freeze ledger", "pass the pack's freeze_ledger.json")
    elif ledger_path.parent.is_dir():
        text = '{"version": 1, "freezes": []}'
    else:
        raise GateError("--ledger", str(ledger_path), "is in a directory that does not exist",
                        "pass the pack's freeze_ledger.json, e.g. oracle/freeze_ledger.json")
    parse_ledger(text, str(ledger_path))
    doc = json.loads(text)
    for existing in doc["freezes"]:
        if (existing["signature"], existing["fixture_digest"], existing["base_revision"]) == (
                rec["signature"], rec["fixture_digest"], rec["base_revision"]):
            raise GateError("freeze ledger", str(ledger_path), f"already freezes this failure of {args.id!r}",
                            "nothing to add; edit that record's reason or expires_on instead")
    first_seen = args.first_seen or _today(None).isoformat()
    record = {"prop_id": rec["prop_id"], "signature": rec["signature"], "signature_parts": rec["signature_parts"],
              "fixture_digest": rec["fixture_digest"], "base_revision": rec["base_revision"],
              "reason": args.reason, "first_seen": first_seen}
    if args.expires_on:
        record["expires_on"] = args.expires_on
    doc["freezes"].append(record)
    new_text = dumps(doc)
    parse_ledger(new_text, str(ledger_path))  # the result must load: reason non-empty, dates real
    if args.expires_on and args.expires_on < first_seen:
        raise GateError("--expires-on", args.expires_on, f"is before --first-seen {first_seen}",
                        "give an expiry date after the day the failure was first seen")
    if args.expires_on and args.expires_on < _today(None).isoformat():
        print(f"warning: --expires-on {args.expires_on} is in the past: this freeze will not apply", file=sys.stderr)
    ledger_path.write_text(new_text, encoding="utf-8")
    print(f"added a freeze of {args.id} ({rec['signature'][:19]}…) to {ledger_path}")
    print(f"next: review the reason, then run `verdict-gate manifest write {ledger_path.parent}` "
          "(the manifest covers the ledger)", file=sys.stderr)
    return 0


def cmd_digest(args: argparse.Namespace) -> int:
    from gate.digest import digest_dir

    result = digest_dir(Path(args.dir))
    print(f"tree-v1 {result.digest}  {len(result.files)} files  {result.total_bytes} bytes")
    return 0


def cmd_manifest(args: argparse.Namespace) -> int:
    from gate.digest import MANIFEST_NAME, build_manifest, compare_manifest
    from gate.ledger import parse_json

    pack_dir = Path(args.packdir)
    if not pack_dir.is_dir():
        raise GateError("pack directory", str(pack_dir), "does not exist or is not a directory",
                        "pass the oracle pack directory (the one holding catalog.yaml)")
    if not (pack_dir / "catalog.yaml").is_file():
        raise GateError("pack directory", str(pack_dir), "holds no catalog.yaml, so it is not an oracle pack",
                        "pass the oracle pack directory (the one holding catalog.yaml), e.g. oracle")
    actual = build_manifest(pack_dir)
    path = pack_dir / MANIFEST_NAME
    if args.action == "write":
        path.write_text(json.dumps(actual, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {path} ({len(actual)} files)")
        return 0
    if not path.is_file():
        raise GateError("manifest", str(path), "does not exist", f"create it: verdict-gate manifest write {pack_dir}")
    expected = parse_json(_read_file(path, "manifest", f"recreate it: verdict-gate manifest write {pack_dir}"),
                          "manifest", str(path))
    validate.check("manifest", expected, str(path))
    diff = compare_manifest(expected, actual)
    if diff.ok:
        print(f"manifest ok: {len(actual)} files match {path}")
        return 0
    print(f"manifest mismatch in {path}:\n{diff.describe()}")
    print(f"if these changes are reviewed, record them: verdict-gate manifest write {pack_dir}", file=sys.stderr)
    return 1


def _pack_options(args: argparse.Namespace) -> PackOptions:
    """The pack source options of ``run``/``replay`` (the token is never an option: GITHUB_TOKEN only)."""
    from gate.pack import PackOptions

    return PackOptions(sha256=args.pack_sha256 or None, workflow=args.pack_workflow or None,
                       branch=args.pack_branch or None, repository=args.pack_repository or None)


def _add_pack_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pack-sha256", metavar="HEX", default=None,
                        help="sha256 the pack's bytes must have: required for https:// (or #sha256=HEX in the URL), "
                             "optional for an archive or an artifact's zip")
    parser.add_argument("--pack-workflow", metavar="FILE", default=None,
                        help="artifact:NAME only: the workflow file that uploads the pack (e.g. oracle-pack.yml)")
    parser.add_argument("--pack-branch", metavar="BRANCH", default=None,
                        help="artifact:NAME only: branch of the successful run (default: the repository's default)")
    parser.add_argument("--pack-repository", metavar="OWNER/NAME", default=None,
                        help="artifact:NAME only: repository of the run (default: $GITHUB_REPOSITORY); the token "
                             "is read from $GITHUB_TOKEN, the API from $GITHUB_API_URL")


def cmd_pack_build(args: argparse.Namespace) -> int:
    from gate import packbuild

    built = packbuild.build(Path(args.src_dir), Path(args.out))
    if built.manifest_changed:
        print(f"updated {Path(args.src_dir) / 'manifest.sha256'}:\n" + "\n".join(built.manifest_changed),
              file=sys.stderr)
    print(f"{built.sha256}  {built.path}")
    print(f"pack build: {built.files} files, {built.bytes} bytes; pin it as --pack-sha256 {built.sha256}",
          file=sys.stderr)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from gate import demo

    return demo.main(keep=args.keep, refresh_ledger=args.refresh_ledger)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verdict-gate", description="Score a patch against a protected oracle: pass, fail or inconclusive.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"verdict-gate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="gate HEAD against a base ref (the whole pipeline)", epilog=EPILOG,
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         description="Load the pack, digest fixtures, split the diff BASE...HEAD, replay frozen "
                                     "properties on the base revision, run every property on HEAD, and write "
                                     "fixture.digest, oracle_edited.json, base.sig.json, runs.json, verdicts.json, "
                                     "results.sarif and summary.md into --out.")
    run.add_argument("--repo", default=".", help="git work tree to gate (default: .)")
    run.add_argument("--base", required=True, help="base ref; the base revision is its merge base with HEAD")
    run.add_argument("--pack", required=True, metavar="SOURCE",
                     help="oracle pack: a directory, a .tar.gz/.zip archive, https://…#sha256=HEX, git:REV:DIR "
                          "read from a revision, or artifact:NAME (a GitHub Actions artifact)")
    _add_pack_options(run)
    run.add_argument("--out", required=True, help="directory for the evidence files (created)")
    run.add_argument("--policy", choices=["lenient", "strict"], default=None,
                     help="promotion policy (default: the catalog's, else lenient)")
    run.add_argument("--today", metavar="YYYY-MM-DD", default=None,
                     help="date freezes expire against (default: today, UTC)")
    run.add_argument("--sarif-category", default="verdict-gate",
                     help="SARIF runAutomationDetails id (default: verdict-gate)")
    run.set_defaults(func=cmd_run)

    rep = sub.add_parser("replay", epilog=EXIT_HELP['replay'],
                         help="base replay alone: run frozen properties on a revision",
                         description="Run the ledger's properties (or --only-id) on a detached worktree of --rev "
                                     "and write base.sig.json to --out.")
    rep.add_argument("--repo", default=".", help="git repository (default: .)")
    rep.add_argument("--rev", required=True, help="revision to replay on")
    rep.add_argument("--pack", required=True, metavar="SOURCE", help="oracle pack, as for run")
    _add_pack_options(rep)
    rep.add_argument("--out", required=True, metavar="FILE", help="where to write base.sig.json")
    rep.add_argument("--only-id", action="append", metavar="ID", help="replay only this property (repeatable)")
    rep.set_defaults(func=cmd_replay)

    frz = sub.add_parser("freeze", epilog=EXIT_HELP['freeze'],
                         help="add a reviewed freeze to a ledger from a base replay",
                         description="Append a ledger record for --id from a base.sig.json that reproduced its "
                                     "failure. The reason is yours to write; it is required.")
    frz.add_argument("--base-sig", required=True, metavar="FILE", help="base.sig.json from `verdict-gate replay`")
    frz.add_argument("--id", required=True, help="property id to freeze")
    frz.add_argument("--reason", required=True, help="why this failure is known and forgiven (human-written)")
    frz.add_argument("--ledger", required=True, metavar="FILE", help="freeze_ledger.json to append to (created)")
    frz.add_argument("--first-seen", metavar="YYYY-MM-DD", help="default: today")
    frz.add_argument("--expires-on", metavar="YYYY-MM-DD", help="optional expiry date")
    frz.set_defaults(func=cmd_freeze)

    dig = sub.add_parser("digest", epilog=EXIT_HELP['digest'], help="print the tree-v1 digest of a directory")
    dig.add_argument("dir", help="directory to digest (symlinks refused)")
    dig.set_defaults(func=cmd_digest)

    man = sub.add_parser("manifest", epilog=EXIT_HELP['manifest'], help="write or verify a pack's manifest.sha256",
                         description="write: record every file's sha256. verify: list every missing, extra and "
                                     "changed path (exit 1 on any).")
    man.add_argument("action", choices=["write", "verify"])
    man.add_argument("packdir", help="oracle pack directory")
    man.set_defaults(func=cmd_manifest)

    pk = sub.add_parser("pack", help="build a reproducible oracle pack archive",
                        description="pack build: write manifest.sha256, validate the catalog and ledger, and "
                                    "write a byte-reproducible .tar.gz; prints its sha256 (pin it).")
    pk_sub = pk.add_subparsers(dest="pack_command", required=True, metavar="ACTION")
    pkb = pk_sub.add_parser("build", epilog=EXIT_HELP['pack build'], help="build FILE.tar.gz from a pack directory",
                            description="Write SRC_DIR/manifest.sha256, validate catalog.yaml and freeze_ledger.json "
                                        "against schemas/, write a deterministic archive (sorted members, fixed "
                                        "mtime, owner and mode; gzip mtime 0) to --out, load it back as the gate "
                                        "would, and print `SHA256  FILE` (sha256sum format).")
    pkb.add_argument("src_dir", metavar="SRC_DIR", help="the oracle pack directory (holding catalog.yaml)")
    pkb.add_argument("--out", required=True, metavar="FILE.tar.gz", help="archive to write (outside SRC_DIR)")
    pkb.set_defaults(func=cmd_pack_build)

    demo = sub.add_parser("demo", epilog=EXIT_HELP['demo'],
                         help="build the embedded example and gate its candidate patches",
                          description="Build examples/orders in a temp git repository, produce its freeze by a real "
                                      "base replay, gate each candidate patch and check the expected outcomes "
                                      "(exit 0 when all hold).")
    demo.add_argument("--keep", action="store_true", help="keep the temp repository and evidence")
    demo.add_argument("--refresh-ledger", action="store_true",
                      help="rewrite examples/orders/freeze_ledger.json from the replay (after editing the example)")
    demo.set_defaults(func=cmd_demo)
    return parser


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _terminate_as_interrupt() -> None:
    """SIGTERM (a cancelled CI job) unwinds like Ctrl-C: worktrees, temp dirs and the property
    process group are cleaned up by the same ``finally`` blocks."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_interrupt)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command. Returns the exit code (never raises)."""
    parser = build_parser()
    _terminate_as_interrupt()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        return int(args.func(args))
    except GateError as exc:
        print(f"verdict-gate: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("verdict-gate: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # the file system said no: a path or permission problem, not a bug
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"verdict-gate: error: {exc.strerror or exc}{where}\n  fix: check that path and its permissions",
              file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # fail closed: an internal error never exits 0 and never emits pass
        import traceback

        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        print(f"verdict-gate: internal error: {detail}\n  this is a bug in verdict-gate; the run is not promoted. "
              f"Set VERDICT_GATE_DEBUG=1 for the traceback.", file=sys.stderr)
        if os.environ.get("VERDICT_GATE_DEBUG"):
            traceback.print_exc()
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
