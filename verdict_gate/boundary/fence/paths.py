"""What a fenced worker may see of the file system: the interpreter's directories, the boundary's own code,
the oracle process's bytecode for them, and the system files Python needs (docs/design.md §8.2)."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import sysconfig
from collections.abc import Sequence

# Top-level directories of the root file system a bubblewrap worker sees (read-only); every other
# entry (run, var, tmp, home, root, srv, mnt, media, opt, the workspace …) stays out, so no socket
# directory and no user's files are reachable. Symbolic links among them (merged /usr) are kept.
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
# What a Landlock worker reads besides the interpreter, its code, the tree and the fixtures: the
# shared libraries and their cache (exec and dlopen), the time zone data, and the devices Python
# and the standard library open.
# Never /proc: Landlock fences only ptrace-mode-attach access there (/proc/PID/mem), not a read of another
# process's /proc/PID/environ, which holds the oracle's environment.
SYSTEM_READ = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo", "/etc/ld.so.cache",
               "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/dev/urandom", "/dev/random",
               "/dev/zero")
SYSTEM_WRITE = ("/dev/null",)  # subprocess opens it read-write

# The boundary package's directory: the worker's own code, which every fenced worker reads.
BOUNDARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def real(path: str) -> str:
    return os.path.realpath(path)


@functools.cache
def _interpreter_dirs() -> tuple[str, ...]:
    return tuple(_find_interpreter_dirs())


def interpreter_dirs() -> list[str]:
    """The interpreter's prefixes, its binary's directory, its standard library and its site-packages
    (found once per process: they do not move)."""
    return list(_interpreter_dirs())


def _find_interpreter_dirs() -> list[str]:
    dirs = {real(sys.prefix), real(sys.base_prefix), real(os.path.dirname(real(sys.executable)))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            dirs.add(real(sysconfig.get_paths()[key]))
    dirs |= {real(p) for p in sys.path if p and os.path.isdir(p) and "site-packages" in p}
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir and os.path.isdir(libdir):
        dirs.add(real(libdir))
    return sorted(d for d in dirs if os.path.isdir(d))


def bytecode_dirs(cache: str | None) -> list[str]:
    """The parts of the oracle process's bytecode cache ``cache`` (its ``sys.pycache_prefix``) a fenced
    worker reads, read-only: the bytecode of the interpreter's own modules and of the worker's code,
    which the oracle compiled from the same read-only sources. Without them each worker compiles the
    standard library afresh: 220 ms a start against 55 ms (docs/design.md §11). Nothing else of the
    cache is shown (it may hold bytecode of earlier packs' ``conftest.py``). ``[]`` when there is no cache."""
    if not cache or not os.path.isabs(cache):
        return []
    sources = [*interpreter_dirs(), BOUNDARY]
    found = {os.path.join(real(cache), src.lstrip("/")) for src in sources}
    return sorted(d for d in found if os.path.isdir(d))


def readable(readonly: Sequence[str], bytecode: str | None) -> tuple[str, ...]:
    """What a Landlock worker may read and execute: the interpreter, the worker's code, ``readonly``
    (the candidate tree, the fixtures, the candidate's python_path), the :func:`bytecode_dirs` of
    ``bytecode`` and :data:`SYSTEM_READ`."""
    # Not sys.path: the oracle process's holds the pack's own directories (pytest's rootdir insertions).
    paths = [*interpreter_dirs(), BOUNDARY, *readonly, *bytecode_dirs(bytecode), *SYSTEM_READ]
    return tuple(sorted({real(p) for p in paths if os.path.exists(p)}))
