"""Candidate modules are imported from their source (docs/design.md §8.1): :func:`source_only`.

Standalone: standard library only (the worker and the pytest plugin load it by path, like :mod:`codec`).

Python's default path finder also imports *sourceless* bytecode: a ``calc/__init__.pyc`` beside a
``calc.py`` makes ``import calc`` run the bytecode (a package wins over a module of the same name),
and a ``helper.pyc`` alone is a module. A patch can commit such a file: the reviewer reads the
``.py``, the diff shows "binary file", and the gate would judge code nobody read (and that no other
Python version can load). The ``__pycache__`` beside a module is already out of play (the worker's
``PYTHONPYCACHEPREFIX``, :func:`sandbox.worker_env`); this closes the sourceless loader.
"""

from __future__ import annotations

import importlib.machinery as machinery
import os
import sys
from collections.abc import Callable, Sequence

_LOADERS = [(machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
            (machinery.SourceFileLoader, machinery.SOURCE_SUFFIXES)]  # no SourcelessFileLoader


def source_only(dirs: Sequence[str]) -> Callable[[str], machinery.FileFinder]:
    """Make every directory in or below ``dirs`` (the candidate's ``python_path``, absolute) import
    from source files and extension modules only, never from sourceless bytecode; returns the path
    hook it put first on ``sys.path_hooks``. Call it before anything is imported from ``dirs``.

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
        return machinery.FileFinder(path, *_LOADERS)

    sys.path_hooks.insert(0, hook)
    for cached in [p for p in sys.path_importer_cache if isinstance(p, str) and inside(p)]:
        del sys.path_importer_cache[cached]
    return hook
