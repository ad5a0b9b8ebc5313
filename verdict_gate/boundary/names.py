"""Which top-level module names are the candidate's and which the pack's (docs/design.md §8.1): what the
import hook serves, read from directories only (nothing is imported). Used in the oracle process (the import
hook) and by the gate (``host.modules``, the catalog's checks).

Part of the boundary package: standard library only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable


def provided_names(python_path: Iterable[str]) -> set[str]:
    """Top-level module names the candidate's directories provide (``x.py``, a directory ``x/`` holding a
    ``.py`` or ``.so``, extension modules ``x.*.so``), minus the standard library's (never served)."""
    names: set[str] = set()
    for directory in python_path:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if entry.is_dir() and name.isidentifier():
                try:
                    has_py = any(child.endswith(".py") or child.endswith(".so") for child in os.listdir(entry.path))
                except OSError:
                    has_py = False
                if has_py:
                    names.add(name)
            elif name.endswith(".py") and name[:-3].isidentifier():
                names.add(name[:-3])
            elif (name.endswith(".so") or name.endswith(".pyd")) and name.split(".")[0].isidentifier():
                names.add(name.split(".")[0])
    return names - set(sys.stdlib_module_names)


def pack_module_names(pack_dir: str) -> set[str]:
    """Module and package names the pack's own files could be imported as (never proxied)."""
    names: set[str] = set()
    for root, dirs, files in os.walk(pack_dir):
        dirs[:] = [d for d in dirs if d != "fixtures" and not d.startswith(".")]
        names.update(f[:-3] for f in files if f.endswith(".py"))
        names.update(dirs)
        names.add(os.path.basename(root))
    return names
