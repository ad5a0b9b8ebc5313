"""Pack source: ``https://…`` pinned by sha256 (plain ``http://`` only to a loopback address)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from verdict_gate.pack import http
from verdict_gate.pack.extract import safe_extract
from verdict_gate.pack.source import Context


@dataclass(frozen=True)
class UrlSource:
    """A download; ``url`` is without its fragment, ``display`` without credentials or query values."""

    kind: ClassVar[str] = "url"
    url: str
    pin: str
    display: str

    def materialise(self, ctx: Context) -> str:
        with http.Client(ctx.options.limits) as client:
            ctx.say(f"downloading {self.display}")
            got = client.download(self.url, ctx.work / "pack.download", expected_sha256=self.pin, what="oracle pack")
        ctx.record["sha256"] = got.sha256
        try:
            safe_extract(got.path, ctx.dest, source=self.display, **ctx.options.caps)
        finally:
            got.path.unlink(missing_ok=True)
        return got.sha256
