"""The one way the boundary package is loaded outside the gate's own process (docs/design.md §8.1).

The pytest plugin and the candidate worker load :mod:`verdict_gate.boundary` from its directory
under the private name :data:`PACKAGE`, never as ``verdict_gate.boundary``: in the oracle process a
property may import a candidate that is verdict-gate itself, and that import must find the
candidate's package, not ours. The plugin runs this file (``runpy.run_path``) and calls
:func:`package`; the worker is started as ``python -P -s -B load.py RFD WFD`` (:data:`WORKER`), and a test's
child process as ``python -P -s -B load.py fenced POLICY -- COMMAND...`` (:mod:`.fence.fenced`).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType

PACKAGE = "_verdict_gate_boundary"
HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.abspath(__file__)  # run as a script, it serves as the candidate worker


def package(directory: str = HERE) -> ModuleType:
    """The boundary package in ``directory``, registered in ``sys.modules`` as :data:`PACKAGE` (once).

    Its submodules are then ``importlib.import_module(f"{PACKAGE}.codec")`` and so on.
    """
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(PACKAGE, os.path.join(directory, "__init__.py"),
                                                      submodule_search_locations=[directory])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
        spec.loader.exec_module(module)
    return sys.modules[PACKAGE]


def module(name: str, directory: str = HERE) -> ModuleType:
    """One module of the boundary package (``"oracle"``, ``"results"``, ``"worker.main"`` …), loaded by path."""
    package(directory)
    return importlib.import_module(f"{PACKAGE}.{name}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "fenced":  # a test's child process, fenced as the worker is
        sys.exit(module("fence.fenced").main(sys.argv[2:]))
    sys.exit(module("worker.main").main(sys.argv))
