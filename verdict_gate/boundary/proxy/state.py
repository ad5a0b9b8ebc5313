"""What a test changes of its own process that the worker follows (docs/design.md §8.1, "State the test
changes"): the working directory. ``os.chdir`` and ``os.fchdir`` are wrapped once, so a test's
``monkeypatch.chdir(tmp_path)`` (and its undoing) reaches the worker with the next frame; the environment and
``sys.argv`` are compared by the hub at each frame (:meth:`.client.Client._state_out`), which costs a dict
comparison, where a working directory would cost a system call.

A spoke of the oracle side: it imports nothing of the boundary.
"""

from __future__ import annotations

import os
from typing import Any

CWD: list[str | None] = [None]  # the working directory a test changed to (None: the one the process started in)


def follow_cwd() -> None:
    """Wrap ``os.chdir`` and ``os.fchdir`` (once per process) to record the directory they change to."""
    if getattr(os.chdir, "_vg_follows", False):
        return
    chdir, fchdir = os.chdir, os.fchdir

    def followed(path: Any) -> None:
        chdir(path)
        CWD[0] = os.getcwd()

    def ffollowed(fd: Any) -> None:
        fchdir(fd)
        CWD[0] = os.getcwd()

    followed._vg_follows = True  # type: ignore[attr-defined]
    os.chdir, os.fchdir = followed, ffollowed
