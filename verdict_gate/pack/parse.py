"""The ``--pack`` value → a typed pack source (one parser for the CLI and the action).

A pack source is one of:

- a directory, or a ``.tar.gz``/``.tgz``/``.tar``/``.zip`` archive (optionally pinned);
- ``https://…`` with a sha256 pin, ``#sha256=HEX`` or :attr:`PackOptions.sha256`; refused
  without one (plain ``http://`` only to a loopback address, e.g. a local mirror);
- ``git:REV:DIR``: read from a revision of the repository, never from the work tree;
- ``artifact:NAME``: the newest unexpired artifact ``NAME`` of a successful run of
  :attr:`PackOptions.workflow` on :attr:`PackOptions.branch` (default: the repository's default
  branch) of :attr:`PackOptions.repository` (default: ``GITHUB_REPOSITORY``).
"""

from __future__ import annotations

import re
from pathlib import Path

from verdict_gate.core.errors import GateError
from verdict_gate.pack import http
from verdict_gate.pack.archive import ArchiveSource
from verdict_gate.pack.artifact import ArtifactSource
from verdict_gate.pack.directory import DirectorySource
from verdict_gate.pack.git import GitSource
from verdict_gate.pack.source import ARCHIVE_SUFFIXES, PackOptions, pin
from verdict_gate.pack.url import UrlSource

PackSource = DirectorySource | ArchiveSource | UrlSource | GitSource | ArtifactSource
SOURCE_FORMS = "a directory, a .tar.gz/.tgz/.tar/.zip archive, https://…#sha256=HEX, git:REV:DIR or artifact:NAME"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_BAD_ARTIFACT_CHARS = set('":<>|*?\\/\r\n')  # characters actions/upload-artifact refuses in a name


def redact(source: str) -> str:
    """``source`` as it may be shown: URLs lose user info and query values, others are unchanged."""
    if _SCHEME.match(source):
        url, sep, frag = source.partition("#")
        return http.redact_url(url) + (sep + frag if frag.startswith("sha256=") else "")
    return source


def parse_source(text: str, options: PackOptions | None = None) -> PackSource:
    """Parse a ``--pack`` value (see the module docstring for the forms).

    Raises:
        GateError: an empty or unknown form, a URL without a sha256 pin (or with two different
            pins), plain http to a non-loopback host, an ``artifact:`` source without a
            workflow, artifact options on another kind of source, a pin on a directory or git
            source, or a local path that does not exist.
    """
    opts = options or PackOptions()
    pinned = pin(opts.sha256, "--pack-sha256") if opts.sha256 else None
    if not text:
        raise GateError("oracle pack", "--pack", "is empty", f"pass {SOURCE_FORMS}")
    artifact_only = [flag for flag, value in (("--pack-workflow", opts.workflow), ("--pack-branch", opts.branch),
                                              ("--pack-repository", opts.repository)) if value]
    if text.startswith("artifact:"):
        name = text[len("artifact:"):]
        if not name or set(name) & _BAD_ARTIFACT_CHARS:
            raise GateError("oracle pack", text, "does not name an artifact",
                            "write artifact:NAME with the name given to actions/upload-artifact")
        if not opts.workflow:
            raise GateError("oracle pack", text, "needs the workflow that uploads the artifact",
                            "pass --pack-workflow FILE (e.g. oracle-pack.yml, the file under .github/workflows)")
        return ArtifactSource(name=name, display=text, pin=pinned)
    if artifact_only:
        raise GateError("oracle pack", redact(text), f"{', '.join(artifact_only)} apply only to artifact:NAME sources",
                        "drop those options, or use --pack artifact:NAME")
    if text.startswith("git:"):
        rev, sep, sub = text[4:].partition(":")
        if not sep or not rev or not sub.strip("/"):
            raise GateError("oracle pack", text, "is not of the form git:REV:DIR (with a directory)",
                            "write e.g. git:origin/main:oracle")
        if pinned:
            raise GateError("--pack-sha256", text, "does not apply to a git: source (its revision names the contents)",
                            "drop --pack-sha256, or pin a commit id in REV")
        return GitSource(rev=rev, subdir=sub.strip("/"), display=text)
    scheme = _SCHEME.match(text)
    if scheme:
        url, _, fragment = text.partition("#")
        shown = http.redact_url(url)
        kind = scheme.group(1).lower()
        if kind == "http" and not http.is_loopback(url):
            raise GateError("oracle pack", shown, "is plain http; only https (or http to a loopback address) is used",
                            "serve the pack over https")
        if kind not in ("http", "https"):
            raise GateError("oracle pack", shown, f"uses the unsupported scheme {kind}://", f"pass {SOURCE_FORMS}")
        url_pin = None
        if fragment:
            if not fragment.startswith("sha256="):
                raise GateError("oracle pack", shown, f"has the fragment #{fragment[:40]}; only #sha256=HEX is known",
                                "end the URL with #sha256=HEX")
            url_pin = pin(fragment[len("sha256="):], "the URL's #sha256=")
        if url_pin and pinned and url_pin != pinned:
            raise GateError("oracle pack", shown, f"has two different pins: #sha256={url_pin} and --pack-sha256 "
                            f"{pinned}", "keep one of them")
        pinned = pinned or url_pin
        if not pinned:
            raise GateError("oracle pack", shown, "is a URL without a sha256 pin; unpinned downloads are refused",
                            "append #sha256=HEX to the URL or pass --pack-sha256 HEX (the sha256 that "
                            "`verdict-gate pack build` printed)")
        return UrlSource(url=url, pin=pinned, display=f"{shown}#sha256={pinned}")
    path = Path(text)
    if not path.exists():
        raise GateError("oracle pack", text, "does not exist", f"pass --pack with {SOURCE_FORMS}")
    if path.is_dir():
        if pinned:
            raise GateError("--pack-sha256", text, "does not apply to a directory (its manifest is verified instead)",
                            "drop --pack-sha256, or pass the pack as an archive")
        return DirectorySource(path=path, display=text)
    if path.name.endswith(ARCHIVE_SUFFIXES):
        return ArchiveSource(path=path, display=text, pin=pinned)
    raise GateError("oracle pack", text, "is neither a directory nor a .tar.gz/.tgz/.tar/.zip archive",
                    f"pass {SOURCE_FORMS}")
