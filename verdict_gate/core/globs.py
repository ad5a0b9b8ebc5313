"""Repository path globs with ``**`` (docs/design.md §6). Pure.

``**`` matches any number of whole path segments (zero included), ``*`` any run of
characters inside one segment, ``?`` one character inside one segment. Matching is on
POSIX relative paths, case-sensitive, like git pathspecs with ``:(glob)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=256)
def _compile(glob: str) -> re.Pattern[str]:
    out: list[str] = []
    segments = glob.strip("/").split("/")
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "**":
            out.append(".*" if last else "(?:[^/]*/)*")
            continue
        piece = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in seg)
        out.append(piece if last else piece + "/")
    return re.compile("".join(out), re.DOTALL)


def match(path: str, glob: str) -> bool:
    """True when the POSIX relative ``path`` matches ``glob`` as a whole."""
    return _compile(glob).fullmatch(path) is not None


def match_any(path: str, globs: Iterable[str]) -> bool:
    """True when ``path`` matches at least one of ``globs``."""
    return any(match(path, g) for g in globs)
