"""``verdict-gate run``: the whole pipeline, its evidence written once, the table on stdout."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from verdict_gate.commands.common import (
    EPILOG,
    RAW,
    add_decision_options,
    add_pack_options,
    pack_options,
    progress,
    write_decision,
)


def add_parser(sub: Any) -> None:
    cmd = sub.add_parser("run", help="gate HEAD against a base ref (the whole pipeline)", epilog=EPILOG,
                         formatter_class=RAW,
                         description="Load the pack, digest fixtures, split the diff BASE...HEAD, replay frozen "
                                     "properties on the base revision, run every property on HEAD, and write "
                                     "into --out the pack's catalog.yaml, freeze_ledger.json and manifest.sha256 as "
                                     "read, fixture.digest, oracle_edited.json, base.sig.json, runs.json, "
                                     "verdicts.json, results.sarif, summary.md and attestation.intoto.json "
                                     "(`verdict-gate audit` re-checks them).")
    cmd.add_argument("--repo", default=".", help="git work tree to gate (default: .)")
    cmd.add_argument("--base", required=True, help="base ref; the base revision is its merge base with HEAD")
    cmd.add_argument("--pack", required=True, metavar="SOURCE",
                     help="oracle pack: a directory, a .tar.gz/.zip archive, https://…#sha256=HEX, git:REV:DIR "
                          "read from a revision, or artifact:NAME (a GitHub Actions artifact)")
    add_pack_options(cmd)
    add_decision_options(cmd)
    cmd.add_argument("--jobs", type=int, metavar="N", default=None,
                     help="oracle processes at once, each with its own candidate worker (default: the core count)")
    cmd.add_argument("--shard", metavar="K/N", default=None,
                     help="run only shard K of N (a stable round-robin share of the catalog's properties and "
                          "their base replays) and write partial evidence with shard.json into --out, no "
                          "verdicts; `verdict-gate merge` decides from every shard's directory")
    cmd.add_argument("--format", choices=["text", "json"], default="text",
                     help="stdout: the verdict table (text, default) or one JSON document for scripts (json: "
                          "outcome, exit_code, counts, verdicts, evidence_dir; nothing else on stdout)")
    cmd.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.report.writer import check_out_dir
    from verdict_gate.run import pipeline

    check_out_dir(Path(args.out), Path(args.repo))  # before the work, not after it
    if args.jobs is not None and args.jobs < 1:
        from verdict_gate.core.errors import GateError

        raise GateError("--jobs", str(args.jobs), "is not a positive number of processes", "pass --jobs 1 or more")

    spec = None
    if args.shard is not None:
        from verdict_gate.core.shard import parse_shard

        spec = parse_shard(args.shard)
        import os

        if not (os.environ.get("VERDICT_GATE_RUN_ID") or os.environ.get("GITHUB_RUN_ID")):
            from verdict_gate.core.errors import GateError

            raise GateError("--shard", args.shard, "needs a run id every shard shares (fresh seeds derive from it), "
                            "and neither VERDICT_GATE_RUN_ID nor GITHUB_RUN_ID is set",
                            "set the same VERDICT_GATE_RUN_ID for every shard of one run, e.g. "
                            "VERDICT_GATE_RUN_ID=$(git rev-parse HEAD)-1 (GitHub Actions sets GITHUB_RUN_ID)")
    ev = pipeline.run(Path(args.repo), args.base, args.pack, policy=args.policy, today=pipeline.today(args.today),
                      progress=progress, pack_options=pack_options(args), jobs=args.jobs, shard=spec)
    return write_decision(ev, args)
