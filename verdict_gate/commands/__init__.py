"""One module per CLI command; each has ``add_parser(subparsers)`` and sets ``run(args) -> int``."""

from verdict_gate.commands import check, demo, digest, doctor, freeze, ledger, manifest, merge, pack, replay, run

COMMANDS = (run, merge, replay, freeze, ledger, check, digest, manifest, pack, demo, doctor)  # in --help order

__all__ = ["COMMANDS"]
