"""``verdict-gate manifest write|verify PACKDIR``: record or check every file's sha256."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_HELP = ("exit codes: 0 written or matching, 1 verify found differences, 2 usage error or an invalid catalog, "
             "ledger or file name (nothing is written).")


def add_parser(sub: Any) -> None:
    man = sub.add_parser("manifest", epilog=EXIT_HELP, help="write or verify a pack's manifest.sha256",
                         description="write: validate the catalog and ledger, then record every file's sha256. "
                                     "verify: list every missing, extra and changed path (exit 1 on any).")
    man.add_argument("action", choices=["write", "verify"])
    man.add_argument("packdir", help="oracle pack directory")
    man.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.catalog import CATALOG_NAME
    from verdict_gate.core.digest import MANIFEST_NAME, compare_manifest
    from verdict_gate.core.errors import EXIT_BLOCKED, EXIT_PROMOTED, GateError
    from verdict_gate.core.ledger import parse_json
    from verdict_gate.host import schemas
    from verdict_gate.host.files import read_utf8
    from verdict_gate.host.hashing import build_manifest
    from verdict_gate.pack.build import check_source, write_manifest

    pack_dir = Path(args.packdir)
    if not pack_dir.is_dir():
        raise GateError("pack directory", str(pack_dir), "does not exist or is not a directory",
                        "pass the oracle pack directory (the one holding catalog.yaml)")
    if not (pack_dir / CATALOG_NAME).is_file():
        raise GateError("pack directory", str(pack_dir), "holds no catalog.yaml, so it is not an oracle pack",
                        "pass the oracle pack directory (the one holding catalog.yaml), e.g. oracle")
    path = pack_dir / MANIFEST_NAME
    if args.action == "write":
        # The catalog and ledger are checked first, as the gate will read them: a manifest never seals a
        # pack that `run` would only find void (an id the schema refuses, a missing property file).
        check_source(pack_dir)
        text, _ = write_manifest(pack_dir)
        print(f"wrote {path} ({len(parse_json(text, 'manifest', str(path)))} files)")
        return EXIT_PROMOTED  # 0: written
    if not path.is_file():
        raise GateError("manifest", str(path), "does not exist", f"create it: verdict-gate manifest write {pack_dir}")
    actual = build_manifest(pack_dir)
    expected = parse_json(read_utf8(path, "manifest", f"recreate it: verdict-gate manifest write {pack_dir}"),
                          "manifest", str(path))
    schemas.check("manifest", expected, str(path))
    diff = compare_manifest(expected, actual)
    if diff.ok:
        print(f"manifest ok: {len(actual)} files match {path}")
        return EXIT_PROMOTED  # 0: matching
    print(f"manifest mismatch in {path}:\n{diff.describe()}")
    print(f"if these changes are reviewed, record them: verdict-gate manifest write {pack_dir}", file=sys.stderr)
    return EXIT_BLOCKED  # 1: differences
