"""``verdict-gate digest DIR``: print the ``tree-v2`` (or ``--tree-format tree-v1``) digest of a directory.

The command hands the core :func:`verdict_gate.host.forks.fork_map`: contiguous runs of the sorted
entries are walked and hashed by forked copies of this process, one per usable core.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

EXIT_HELP = "exit codes: 0 printed, 2 not a directory, or a link or special file inside."


def add_parser(sub: Any) -> None:
    dig = sub.add_parser("digest", epilog=EXIT_HELP, help="print the tree-v2 digest of a directory")
    dig.add_argument("dir", help="directory to digest (symlinks refused)")
    dig.add_argument("--tree-format", choices=("tree-v2", "tree-v1"), default="tree-v2",
                     help="digest format (docs/design.md §4); tree-v1 for freezes recorded before tree-v2")
    dig.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.errors import EXIT_PROMOTED
    from verdict_gate.host.forks import fork_map
    from verdict_gate.host.hashing import digest_dir

    result = digest_dir(Path(args.dir), format=args.tree_format, parallel=fork_map)
    print(f"{result.format} {result.digest}  {len(result.files)} files  {result.total_bytes} bytes")
    return EXIT_PROMOTED  # 0: printed


