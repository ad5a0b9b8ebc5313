"""The oracle pack: one module per source (directory, archive, url, git, artifact), safe
extraction, verification, the archive builder and the HTTP client (docs/design.md §2 step 1, §6)."""

from verdict_gate.pack.loader import load
from verdict_gate.pack.parse import PackSource, parse_source, redact
from verdict_gate.pack.source import PackOptions
from verdict_gate.pack.verify import Pack

__all__ = ["Pack", "PackOptions", "PackSource", "load", "parse_source", "redact"]
