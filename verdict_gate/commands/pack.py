"""``verdict-gate pack build SRC_DIR --out FILE.tar.gz``: a reproducible oracle pack archive."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_HELP = "exit codes: 0 built, 2 invalid pack directory or output path (nothing written)."


def add_parser(sub: Any) -> None:
    pk = sub.add_parser("pack", help="build a reproducible oracle pack archive",
                        description="pack build: write manifest.sha256, validate the catalog and ledger, and "
                                    "write a byte-reproducible .tar.gz; prints its sha256 (pin it).")
    pk_sub = pk.add_subparsers(dest="pack_command", required=True, metavar="ACTION")
    pkb = pk_sub.add_parser("build", epilog=EXIT_HELP, help="build FILE.tar.gz from a pack directory",
                            description="Write SRC_DIR/manifest.sha256, validate catalog.yaml and freeze_ledger.json "
                                        "against schemas/, write a deterministic archive (sorted members, fixed "
                                        "mtime, owner and mode; gzip mtime 0) to --out, load it back as the gate "
                                        "would, and print `SHA256  FILE` (sha256sum format).")
    pkb.add_argument("src_dir", metavar="SRC_DIR", help="the oracle pack directory (holding catalog.yaml)")
    pkb.add_argument("--out", required=True, metavar="FILE.tar.gz", help="archive to write (outside SRC_DIR)")
    pkb.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.errors import EXIT_PROMOTED
    from verdict_gate.pack import build

    built = build.build(Path(args.src_dir), Path(args.out))
    if built.manifest_changed:
        print(f"updated {Path(args.src_dir) / 'manifest.sha256'}:\n" + "\n".join(built.manifest_changed),
              file=sys.stderr)
    print(f"{built.sha256}  {built.path}")
    print(f"pack build: {built.files} files, {built.bytes} bytes; pin it as --pack-sha256 {built.sha256}",
          file=sys.stderr)
    return EXIT_PROMOTED  # 0: built
