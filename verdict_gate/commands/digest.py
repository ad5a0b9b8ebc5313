"""``verdict-gate digest DIR``: print the ``tree-v1`` digest of a directory."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

EXIT_HELP = "exit codes: 0 printed, 2 not a directory, or a link or special file inside."


def add_parser(sub: Any) -> None:
    dig = sub.add_parser("digest", epilog=EXIT_HELP, help="print the tree-v1 digest of a directory")
    dig.add_argument("dir", help="directory to digest (symlinks refused)")
    dig.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.digest import digest_dir
    from verdict_gate.core.errors import EXIT_PROMOTED

    result = digest_dir(Path(args.dir))
    print(f"tree-v1 {result.digest}  {len(result.files)} files  {result.total_bytes} bytes")
    return EXIT_PROMOTED  # 0: printed
