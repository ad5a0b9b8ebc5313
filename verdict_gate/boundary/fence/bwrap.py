"""The bubblewrap command line of a worker's :class:`.policy.Policy` (method ``bwrap``, docs/design.md §8.2).

:func:`argv` is pure (its tests pin it argument by argument); :func:`command` reads this host's root
directory and the interpreter's directories and hands them to it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence

from .paths import BOUNDARY, SYSTEM_DIRS, bytecode_dirs, interpreter_dirs, real
from .policy import Policy

NOBODY = "65534"  # the uid and gid a worker has inside its own user namespace


def bwrap_path() -> str:
    """The bubblewrap executable: ``$VERDICT_GATE_BWRAP`` ("" or a missing path: none), else ``bwrap`` on PATH."""
    path = os.environ.get("VERDICT_GATE_BWRAP", shutil.which("bwrap") or "")
    return path if path and os.access(path, os.X_OK) else ""


def argv(policy: Policy, bwrap: str, *, root: Sequence[tuple[str, str | None]], binds: Iterable[str],
         cwd: str) -> list[str]:
    """The bubblewrap command line for ``policy`` (without the worker's command after ``--``).

    The root file system holds only :data:`.paths.SYSTEM_DIRS` (read-only; links kept), so nothing of
    ``/run``, ``/var`` or another socket directory, no user's home, the gate's scratch dir or the
    repository is there; every one of ``binds`` outside them is bound read-only at its own path, shortest
    first (a directory before what is inside it).

    Args:
        policy: its ``userns`` (``True``: a user namespace, the worker ``nobody`` inside) and its
            ``limits["tmp_bytes"]`` (the size of the private ``/tmp``) are read.
        bwrap: the bubblewrap executable.
        root: the system directories of the host's root, ``(name, link target)`` (``None``: a directory),
            in order (:func:`root_view`).
        binds: absolute, resolved directories to bind read-only (the interpreter, the worker's code, the
            candidate tree, the fixtures, the bytecode the worker reads).
        cwd: the worker's working directory, resolved (the candidate tree).
    """
    out = [bwrap, "--unshare-all"]
    if policy.userns:
        out += ["--unshare-user", "--uid", NOBODY, "--gid", NOBODY]
    out += ["--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    for name, link in root:
        path = "/" + name
        out += ["--symlink", link, path] if link is not None else ["--ro-bind", path, path]
    out += ["--dev", "/dev", "--proc", "/proc", "--size", str(int(policy.limits["tmp_bytes"])), "--tmpfs", "/tmp"]
    system = tuple("/" + d for d in SYSTEM_DIRS)
    for path in sorted(set(binds), key=lambda p: (len(p), p)):
        if not any(path == s or path.startswith(s + "/") for s in system):  # already there
            out += ["--ro-bind", path, path]
    for path in policy.shared:  # read and written by the oracle process and the worker alike (pytest's tmp_path)
        out += ["--bind", path, path]
    out += ["--chdir", cwd]
    return out


def root_view() -> list[tuple[str, str | None]]:
    """The :data:`.paths.SYSTEM_DIRS` of this host's root, sorted: ``(name, link target)`` for a symbolic
    link, ``(name, None)`` for a directory; any other entry is left out."""
    view: list[tuple[str, str | None]] = []
    for name in sorted(os.listdir("/")):
        path = "/" + name
        if name not in SYSTEM_DIRS:
            continue
        if os.path.islink(path):
            view.append((name, os.readlink(path)))
        elif os.path.isdir(path):
            view.append((name, None))
    return view


def command(policy: Policy, bwrap: str, *, readonly: Sequence[str], bytecode: str | None = None) -> list[str]:
    """:func:`argv` on this host: the interpreter's directories, the worker's code, ``readonly`` (the candidate
    tree, the fixtures) and the :func:`.paths.bytecode_dirs` of ``bytecode`` bound read-only."""
    binds = [*interpreter_dirs(), BOUNDARY, *readonly, *bytecode_dirs(bytecode)]
    return argv(policy, bwrap, root=root_view(), binds={real(p) for p in binds if os.path.isdir(p)},
                cwd=real(policy.cwd))
