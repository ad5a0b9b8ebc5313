"""One module per CLI command; each has ``add_parser(subparsers)`` and sets ``run(args) -> int``."""

from verdict_gate.commands import (
    audit,
    check,
    demo,
    digest,
    doctor,
    explain,
    freeze,
    ledger,
    manifest,
    merge,
    pack,
    replay,
    run,
)

# in --help order
COMMANDS = (run, merge, audit, explain, replay, freeze, ledger, check, digest, manifest, pack, demo, doctor)

__all__ = ["COMMANDS"]
