"""Candidate modules are imported from their source (docs/design.md §8.1): :func:`source_only`.

Part of the boundary package (standard library only, loaded by path: :mod:`.load`).

Python's default path finder also imports *sourceless* bytecode, and prefers an extension module to
a source file: a ``calc/__init__.pyc`` (or ``calc/__init__.cpython-311-x86_64-linux-gnu.so``) beside a
``calc.py`` makes ``import calc`` run the compiled file (a package wins over a module of the same
name), and so does a ``calc.cpython-311-x86_64-linux-gnu.so`` beside it. A patch can commit such a
file: the reviewer reads the ``.py``, the diff shows "binary file", and the gate would judge code
nobody read (and that no other Python version can load). The ``__pycache__`` beside a module is
already out of play (the worker's ``PYTHONPYCACHEPREFIX``, :func:`.fence.child.worker_env`); this closes
the rest. An extension module with no source of its name (a C extension) still imports.
"""

from __future__ import annotations

import importlib.machinery as machinery
import os
import sys
import types
from collections.abc import Callable, Sequence

_SOURCE = (machinery.SourceFileLoader, machinery.SOURCE_SUFFIXES)
_EXTENSION = (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES)  # no SourcelessFileLoader


class SourceFirst(machinery.FileFinder):
    """A file finder for candidate directories: a module's source first, an extension module only
    where no source of that name exists (a compiled file beside ``calc.py``, or a package
    ``calc/`` whose ``__init__`` is compiled, would otherwise run in place of it), never sourceless
    bytecode. Refusals raise :class:`ImportError` naming the file and the fix."""

    def __init__(self, path: str) -> None:
        super().__init__(path, _SOURCE, _EXTENSION)

    def find_spec(self, fullname: str, target: types.ModuleType | None = None) -> machinery.ModuleSpec | None:
        spec = super().find_spec(fullname, target)
        if spec is not None and spec.origin is not None and not isinstance(spec.loader, machinery.ExtensionFileLoader):
            return spec  # a source module or package: the common case, no extra look
        here = os.path.join(self.path, fullname.rpartition(".")[2])
        if spec is not None and spec.origin is not None and (
                os.path.isfile(here + ".py") or os.path.isfile(os.path.join(here, "__init__.py"))):
            raise ImportError(f"verdict-gate: {spec.origin} is compiled code that would run in place of the "
                              f"source of {fullname!r}; remove it from the patch (the gate runs a module from "
                              "its source)", name=fullname)
        if spec is None or spec.origin is None:  # nothing, or a namespace package (a directory without source)
            compiled = [p for p in (here + ".pyc", os.path.join(here, "__init__.pyc")) if os.path.isfile(p)]
            if compiled:
                raise ImportError(f"verdict-gate: {compiled[0]} is bytecode without its source; the gate imports "
                                  "candidate modules from source only: commit the .py instead", name=fullname)
        return spec


def source_only(dirs: Sequence[str]) -> Callable[[str], machinery.FileFinder]:
    """Make every directory in or below ``dirs`` (the candidate's ``python_path``, absolute) import
    through :class:`SourceFirst`; returns the path hook it put first on ``sys.path_hooks``. Call it
    before anything is imported from ``dirs``.

    Other directories (the standard library, site-packages) keep the default finder: the hook
    raises :class:`ImportError` for them, which makes Python try the next hook.
    """
    roots = tuple(os.path.realpath(d) for d in dirs)

    def inside(path: str) -> bool:
        real = os.path.realpath(path or os.getcwd())
        return any(real == root or real.startswith(root + os.sep) for root in roots)

    def hook(path: str) -> machinery.FileFinder:
        if not inside(path):
            raise ImportError("not a candidate directory")
        return SourceFirst(path)

    sys.path_hooks.insert(0, hook)
    for cached in [p for p in sys.path_importer_cache if isinstance(p, str) and inside(p)]:
        del sys.path_importer_cache[cached]
    return hook


def after_stdlib(path: list[str]) -> int:
    """Index just after the last standard-library entry of ``path`` (``sys.path``): the directory of
    ``os``, its ``lib-dynload`` and a ``pythonXY.zip``; never a ``site-packages`` (in a virtualenv
    ``sysconfig``'s ``platstdlib`` is the venv's own lib dir, which holds it). Candidate directories
    go here, so a candidate module named like a standard one (``statistics.py``) cannot replace it."""
    stdlib = os.path.realpath(os.path.dirname(os.__file__))
    last = -1
    for i, entry in enumerate(path):
        real = os.path.realpath(entry or ".")
        if "site-packages" in real or "dist-packages" in real:
            continue
        if real == stdlib or real.startswith(stdlib + os.sep) or real.endswith(".zip"):
            last = i
    return last + 1
