"""``verdict-gate merge``: decide from the partial evidence of every shard; the evidence written once."""

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
    cmd = sub.add_parser("merge", help="decide from the shards of a sharded run (run --shard K/N)", epilog=EPILOG,
                         formatter_class=RAW,
                         description="Read the partial evidence every `verdict-gate run --shard K/N --out DIR` "
                                     "wrote, check that the shards gated the same head, base revision, pack and "
                                     "fixtures and cover every property exactly once, then score and write the "
                                     "evidence files `run` writes. The pack is loaded and verified again here, so "
                                     "the decision uses a catalog and ledger this job checked. A shard missing or "
                                     "given twice, or shards that disagree, make the outcome incomplete.")
    cmd.add_argument("dirs", nargs="+", metavar="DIR", help="the shard directories (one per shard)")
    cmd.add_argument("--repo", default=".", help="git work tree gated (default: .)")
    cmd.add_argument("--base", required=True, help="base ref, as the shards were given")
    cmd.add_argument("--pack", required=True, metavar="SOURCE", help="oracle pack, as the shards were given")
    add_pack_options(cmd)
    add_decision_options(cmd)
    cmd.add_argument("--format", choices=["text", "json"], default="text",
                     help="stdout: the verdict table (text, default) or one JSON document (as `run --format json`)")
    cmd.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.report.writer import check_out_dir
    from verdict_gate.run import pipeline
    from verdict_gate.run.merge import merge

    check_out_dir(Path(args.out), Path(args.repo))
    ev = merge([Path(d) for d in args.dirs], Path(args.repo), args.base, args.pack, policy=args.policy,
               today=pipeline.today(args.today), progress=progress, pack_options=pack_options(args))
    return write_decision(ev, args)
