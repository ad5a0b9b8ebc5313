"""``verdict-gate audit DIR``: re-check an evidence directory from its files alone (docs/design.md §9.1)."""

from __future__ import annotations

import argparse
from typing import Any

from verdict_gate.commands.common import RAW

EXIT_HELP = """\
exit codes: 0 every file agrees with the others and with the rules, 1 a difference (each one named),
2 usage (not a directory, or no file verdict-gate writes in it).
A signature proves who wrote the files (gh attestation verify); audit proves they agree: both are needed."""


def add_parser(sub: Any) -> None:
    cmd = sub.add_parser("audit", help="re-check an evidence directory from its files alone", epilog=EXIT_HELP,
                         formatter_class=RAW,
                         description="Validate every evidence file against its schema (an unknown field is an "
                                     "error) and in the exact form the gate writes, check every sha256 and "
                                     "signature, check the inventory (every planned property has a run, every "
                                     "frozen one its base replay tries, nothing ran that was not planned), then "
                                     "re-run the pure decision on the recorded inputs and render every derived "
                                     "file again (verdicts.json, results.sarif, summary.md, "
                                     "attestation.intoto.json), naming each difference. Works on the evidence of "
                                     "a run, of a merge of shards, and on one shard's directory. It never runs a "
                                     "property, never reads git and never uses the network.")
    cmd.add_argument("dir", metavar="DIR", help="the evidence directory (verdict-gate run/merge --out DIR)")
    cmd.add_argument("--format", choices=["text", "json"], default="text",
                     help="stdout: findings for a person (text, default) or one JSON document (json: ok, exit_code, "
                          "kind, outcome, head_revision, gate_version, checked, findings)")
    cmd.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verdict_gate.host.evidence import read_dir
    from verdict_gate.report.audit import audit_document, audit_text, dumps
    from verdict_gate.run.audit import audit

    read = read_dir(Path(args.dir))
    result = audit(read.files, read.odd)
    print(dumps(audit_document(result, args.dir)) if args.format == "json" else audit_text(result, args.dir), end="")
    return 0 if result.ok else 1
