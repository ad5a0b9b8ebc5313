"""Pack source: ``artifact:NAME``, the newest artifact of a successful run of a workflow (GitHub REST).

The artifact zip holds either the pack files or one pack archive (what ``verdict-gate pack
build`` writes); the lookup and download are :class:`verdict_gate.pack.http.GitHub`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from verdict_gate.core.errors import GateError
from verdict_gate.host.hashing import sha256_file
from verdict_gate.pack import http
from verdict_gate.pack.extract import discard, safe_extract
from verdict_gate.pack.source import ARCHIVE_SUFFIXES, Context


@dataclass(frozen=True)
class ArtifactSource:
    """``artifact:NAME``; ``pin`` is the sha256 hex the artifact zip must have, or None."""

    kind: ClassVar[str] = "artifact"
    name: str
    display: str
    pin: str | None = None

    def materialise(self, ctx: Context) -> str:
        opts = ctx.options
        environ = http.default_env() if ctx.env is None else ctx.env
        repository = opts.repository or http.env_repository(environ)
        if not repository:
            raise GateError("oracle pack", self.display, "needs the repository that holds the artifact",
                            "pass --pack-repository OWNER/NAME, or set GITHUB_REPOSITORY (GitHub Actions sets it)")
        assert opts.workflow
        with http.Client(opts.limits) as client:
            github = http.GitHub.from_env(environ, client)
            ctx.say(f"looking up artifact {self.name} of {opts.workflow} in {repository}")
            artifact = github.find_artifact(repository, opts.workflow, opts.branch or None, self.name)
            ctx.record["artifact"] = artifact.record()
            ctx.say(f"downloading artifact {artifact.name} (id {artifact.artifact_id}) of run {artifact.run_id} "
                    f"({artifact.head_sha[:12]} on {artifact.branch})")
            got = github.download_artifact(artifact, ctx.work / "artifact.zip", expected_sha256=self.pin)
        ctx.record["sha256"] = got.sha256
        unpacked = ctx.work / "artifact"
        try:
            safe_extract(got.path, unpacked, source=f"{self.display} (artifact {artifact.artifact_id})",
                         **opts.caps)
        finally:
            got.path.unlink(missing_ok=True)
        entries = list(unpacked.rglob("*"))
        inner = entries[0] if len(entries) == 1 and entries[0].is_file() else None
        if inner is not None and inner.name.endswith(ARCHIVE_SUFFIXES):
            ctx.record["inner_archive"] = {"name": inner.name, "sha256": sha256_file(inner)}
            try:
                safe_extract(inner, ctx.dest, source=f"{self.display} ({inner.name})", **opts.caps)
            finally:
                discard(unpacked)
        else:
            unpacked.rename(ctx.dest)
        return got.sha256
