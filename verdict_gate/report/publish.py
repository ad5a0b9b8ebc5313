"""The one render-and-write path of a finished run, shared by the CLI (``run``, ``merge``) and the action.

:func:`publish` renders the evidence (every file of a decided run, or a shard's partial evidence),
has :mod:`.writer` write it into the evidence directory once, prints the run for a person or a
script on ``stdout``, and says where the evidence is on ``log``. :func:`printer` is the progress
line every long step prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from verdict_gate.core.evidence import Evidence
from verdict_gate.core.progress import Progress
from verdict_gate.report import documents, shard_documents
from verdict_gate.report.jsonout import dumps, run_document
from verdict_gate.report.terminal import terminal_table
from verdict_gate.report.writer import write_files


def printer(stream: TextIO) -> Progress:
    """A progress function: each message one whole line ``verdict-gate: MESSAGE`` on ``stream``, flushed
    (so lines of several threads never interleave mid-line)."""

    def progress(message: str) -> None:
        stream.write(f"verdict-gate: {message}\n")
        stream.flush()

    return progress


def publish(ev: Evidence, out: Path, *, stdout: TextIO, log: TextIO, sarif_category: str = "verdict-gate",
            format: str = "text") -> dict[str, str]:
    """Write ``ev``'s evidence into ``out`` once and print it; return the files written (name → text).

    Args:
        ev: a decided run (an outcome), or one shard of a run (``ev.shard``: partial evidence only).
        out: the evidence directory (checked beforehand: :func:`.writer.check_out_dir`).
        stdout: receives the verdict table (``format`` ``text``) or one JSON document (``json``:
            :func:`.jsonout.run_document`); for a shard, one line or a JSON object saying what ran.
        log: receives ``evidence: OUT``.
        sarif_category: the SARIF ``runAutomationDetails`` id.
        format: ``text`` or ``json``.
    """
    if ev.shard is not None:
        files = write_files(out, shard_documents(ev))
        stdout.write(_shard_line(ev, out, format))
    else:
        files = write_files(out, documents(ev, sarif_category))
        stdout.write(dumps(run_document(ev, str(out))) if format == "json" else terminal_table(ev))
    log.write(f"evidence: {out}\n")
    log.flush()
    return files


def _shard_line(ev: Evidence, out: Path, format: str) -> str:
    assert ev.shard is not None
    label = f"{ev.shard['index']}/{ev.shard['count']}"
    ran = len(ev.shard["properties"])
    if format == "json":
        return json.dumps({"shard": label, "outcome": ev.outcome, "properties": ran,
                           "void_reason": ev.void_reason or None, "evidence_dir": str(out)}, sort_keys=True) + "\n"
    if ev.outcome == "void":
        return f"shard {label}: void: {ev.void_reason}\n"
    return (f"shard {label}: {ran} propert{'y' if ran == 1 else 'ies'} run; "
            "`verdict-gate merge` decides from every shard's directory\n")
