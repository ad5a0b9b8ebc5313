"""The process-wide hooks of the oracle side (docs/design.md §8.1): the import hook first on ``sys.meta_path``,
``random``'s seeding followed into the worker, the working directory followed, child processes fenced, and
``doctest``, ``eval``, ``exec``, ``compile`` and ``pickle.loads`` fenced against candidate text. One call,
:func:`install`, by the plugin once per oracle process (a hub module: it assembles the spokes).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from ..names import pack_module_names, provided_names
from . import children, doctests, importer, state, textguard
from .client import Client


def install(client: Client, python_path: Sequence[str], pack_dir: str,
            modules: Sequence[str] | None = None, reviewed: Sequence[str] | None = None) -> importer.Finder:
    """Put the proxy hook first on ``sys.meta_path`` for the candidate's top-level names, make this process's
    ``random`` seeding reach the worker's (a test's ``random.seed(...)``, Hypothesis's per-example seeding:
    candidate code that draws from ``random`` draws what it would in plain pytest), and fence ``doctest``,
    ``eval``, ``exec``, ``compile`` and ``pickle.loads`` against candidate text (:mod:`.doctests`,
    :mod:`.textguard`).

    ``modules`` (the catalog's): exactly these names are the candidate's. Without it, every name the
    candidate's directories provide (:func:`..names.provided_names`) that is neither the pack's own nor the
    judge's (pytest, Hypothesis, the gate): as plain pytest with the candidate's directories on ``PYTHONPATH``,
    the candidate's module wins over one installed beside the gate, and over one the judge imported already
    (:func:`.importer.shadow`: the judge keeps its own) — if the base revision provides it too (``reviewed``;
    ``None``: any). A module only the patch adds, named like one installed beside the gate, is not served to
    the pack: it would shadow the pack's own tool (``import yaml`` to read its data)."""
    client.oracle_roots = [os.path.realpath(pack_dir) + os.sep, pack_dir.rstrip(os.sep) + os.sep]
    _follow_random(client)
    state.follow_cwd()
    children.install(client)
    doctests.install(client)
    textguard.install(client)
    names = set(modules) if modules else provided_names(python_path) - pack_module_names(pack_dir)
    names = {n for n in names if not importer.judges(n)}
    loaded = {m.partition(".")[0] for m in list(sys.modules)}
    if not modules and reviewed is not None:  # the judge's own modules stay the judge's unless reviewed
        names = {n for n in names if n in reviewed or not (n in loaded or importer.installed(n))}
    importer.shadow(names & loaded)
    return _insert(importer.Finder(client, names))


def _follow_random(client: Client) -> Any:
    """Wrap this process's ``random.seed``/``random.setstate`` so the worker's ``random`` follows a seeding (a
    test's ``random.seed(1)``, Hypothesis's seeding of each example: candidate code draws what it would in plain
    pytest), and puts its own state back when this process puts its own back (Hypothesis's restore after an
    example): never this process's state itself, which would let candidate code predict what an unseeded test
    draws next (docs/design.md §8.1). Returns the originals (to undo it)."""
    import random

    seed, setstate = random.seed, random.setstate

    def seeded(a: Any = None, version: int = 2) -> None:
        seed(a, version)
        if a is None or type(a) in (int, str, bytes, bytearray, float):
            event = ["seed", client.encode(a)]
        else:  # seeded with an object: the state it made (which tells nothing the seed did not)
            event = ["state", client.encode(random.getstate())]
        client.random_pending = [*(client.random_pending or [])[-63:], event]

    def restored(state: Any) -> None:
        setstate(state)
        pending = client.random_pending or []
        if pending and pending[-1][0] != "restore":  # a seeding the worker never followed, undone: nothing to send
            pending.pop()
            client.random_pending = pending or None
        else:
            client.random_pending = [*pending[-63:], ["restore"]]

    random.seed, random.setstate = seeded, restored
    return seed, setstate


def _insert(finder: importer.Finder) -> importer.Finder:
    sys.meta_path.insert(0, finder)
    return finder
