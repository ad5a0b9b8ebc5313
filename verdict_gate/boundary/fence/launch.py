"""The launcher: how one worker of a :class:`.policy.Policy` is started, by method (docs/design.md §8.2).

The oracle process builds each worker's policy (:func:`worker_policy`, from the method the gate chose once,
:func:`.host.method`) and starts it from :func:`launch`'s command line, environment and pre-``exec`` step;
the worker then applies the same policy to itself (:mod:`.apply`) and proves it (:mod:`.probe`).
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from . import bwrap as bubblewrap
from .child import NO_BYTECODE, preexec, worker_env
from .errors import Unavailable
from .host import bwrap_userns, own_uid_works
from .paths import BOUNDARY, SYSTEM_WRITE, bytecode_dirs, readable, real
from .policy import DEFAULT_LIMITS, Policy, claims_of, worker_uid


@dataclass(frozen=True)
class Launch:
    """How to start one worker: ``argv`` (the worker's own command is appended by the caller), its whole
    environment, what runs in the child before ``exec``, its cwd and whether it gets its own session."""

    policy: Policy
    argv: tuple[str, ...]
    env: dict[str, str]
    preexec: Callable[[], None]
    cwd: str
    new_session: bool


def worker_policy(level: str, method_name: str, *, readonly: Sequence[str], tmp: str, cwd: str,
                  limits: Mapping[str, int] | None = None, bytecode: str | None = None,
                  probes: Mapping[str, Sequence[Any]] | None = None, userns: bool | None = None,
                  generation: int = 0, own_uid: bool | None = None, shared: Sequence[str] = (),
                  tmpdir: str = "") -> Policy:
    """The :class:`Policy` of one worker at ``level`` by ``method_name`` (see :func:`.host.method`).

    Args:
        readonly: what it reads besides the interpreter (the candidate tree, the fixtures, python_path).
        tmp: its private temp dir (made by the caller; a Landlock worker writes only there).
        cwd: its working directory (the candidate tree).
        limits: overrides of :data:`.policy.DEFAULT_LIMITS` (the catalog's ``limits``).
        bytecode: the oracle process's bytecode cache, of which fenced workers read the interpreter's part.
        probes: the forbidden acts to try (label → ``[probe name, arguments]``); none for ``process``.
        userns: for ``bwrap``, whether it makes a user namespace (:func:`.host.bwrap_userns`; ``None``: probe).
        generation: which worker of this oracle process it is (its uid, :func:`.policy.worker_uid`).
        own_uid: it may run as a uid of its own (:func:`.host.own_uid_works`; ``None``: probe): as root the
            ``landlock`` method needs one, and ``bwrap`` with a user namespace takes one (so its mapped root
            is nobody outside).
        shared: directories it reads and writes at their own path as the oracle process does (the one holding
            pytest's basetemp and both processes' ``TMPDIR``; docs/design.md §8.1, "Files").
        tmpdir: the ``TMPDIR`` both use, inside ``shared`` (else its own ``tmp``).

    A worker whose identity outside owns files it must leave alone (the gate's own uid, or root: bubblewrap
    as root maps its user to root) gets :data:`.seccomp.METADATA` denied as well: Landlock does not fence
    modes, owners, times or extended attributes.
    """
    lim = {**DEFAULT_LIMITS, **(limits or {})}
    both = tuple(sorted({real(p) for p in shared if os.path.isdir(p)}))
    tmpdir = tmpdir if tmpdir and any(real(tmpdir).startswith(b + "/") for b in both) else ""
    root = os.geteuid() == 0
    own = own_uid_works() if own_uid is None else own_uid
    if method_name == "bwrap":
        ns = bwrap_userns() if userns is None else userns
        uid = worker_uid(generation=generation) if root and own and ns else None
        return Policy(level, method_name, claims_of(method_name), read=readable(readonly, bytecode),
                      write=("/tmp", *both, *SYSTEM_WRITE), shared=both, tmpdir=tmpdir, tmp="/tmp", cwd=cwd,
                      uid=uid, userns=ns or not root,
                      landlock="best-effort", seccomp="best-effort", metadata=uid is None, limits=lim,
                      probes=dict(probes or {}))
    if method_name == "landlock":
        uid = worker_uid(generation=generation) if root else None
        return Policy(level, method_name, claims_of(method_name), read=readable(readonly, bytecode),
                      write=(tmp, *both, *SYSTEM_WRITE), shared=both, tmpdir=tmpdir, tmp=tmp, cwd=cwd, uid=uid,
                      landlock="required",
                      seccomp="required", metadata=uid is None, limits=lim, probes=dict(probes or {}))
    if method_name == "process":
        return Policy(level, method_name, claims_of(method_name), shared=both, tmpdir=tmpdir, tmp=tmp, cwd=cwd,
                      limits=lim)
    raise Unavailable(f"no worker is started by method {method_name!r} at level {level!r}")


# What the worker imports that the oracle process does not: compiled into the oracle's bytecode cache once
# (:func:`warm_bytecode`), or every fenced worker, which reads that cache but never writes it, compiles them
# from source at each start (the worker's own code alone is about 25 ms of it). Paths below the boundary package.
WORKER_MODULES = ("worker/main", "worker/__init__", "worker/server", "worker/values", "worker/refs", "codec",
                  "links", "protocol", "ship", "sources", "fence/__init__", "fence/apply", "fence/errors",
                  "fence/landlock", "fence/libc", "fence/policy", "fence/probe", "fence/seccomp")
WORKER_STDLIB = ("pickle", "_compat_pickle")
_WARMED: set[str] = set()


def warm_bytecode(cache: str | None) -> None:
    """Write the bytecode of :data:`WORKER_MODULES` and :data:`WORKER_STDLIB` into ``cache``, this process's own
    ``sys.pycache_prefix``, once per process. The sources are the gate's and the interpreter's, read-only to
    candidate code; nothing is written when this process does not write bytecode. Errors are ignored: the
    worker then compiles, as before."""
    if not cache or cache in _WARMED or sys.pycache_prefix != cache or sys.dont_write_bytecode:
        return
    _WARMED.add(cache)
    sources = [os.path.join(BOUNDARY, f"{name}.py") for name in WORKER_MODULES]
    for name in WORKER_STDLIB:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            sources.append(spec.origin)
    for src in sources:
        try:
            target = importlib.util.cache_from_source(src)
            if not _fresh(target, src):
                py_compile.compile(src, cfile=target, doraise=True)
        except (OSError, ValueError, py_compile.PyCompileError):
            continue


def _fresh(pyc: str, src: str) -> bool:
    """Whether ``pyc`` is the timestamp-checked bytecode of ``src`` as it is now (PEP 552's header: flags 0,
    then the source's mtime and size, as the import system checks them)."""
    try:
        with open(pyc, "rb") as fh:
            head = fh.read(16)
        st = os.stat(src)
    except OSError:
        return False
    return (len(head) == 16 and head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == bytes(4)
            and int.from_bytes(head[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(head[12:16], "little") == st.st_size & 0xFFFFFFFF)


def launch(pol: Policy, *, bytecode: str | None = None) -> Launch:
    """How to start the worker of ``pol`` (no probing: the method was chosen by :func:`.host.method`)."""
    run_first = preexec(pol.limits, pol.uid)
    if pol.method != "process":
        warm_bytecode(bytecode)
    if pol.method == "bwrap":
        bwrap = bubblewrap.bwrap_path()
        if not bwrap:
            raise Unavailable("bwrap (bubblewrap) is no longer installed")
        if pol.userns is None:
            pol = replace(pol, userns=bwrap_userns() or os.geteuid() != 0)
        # With a uid of its own, bubblewrap itself runs as that uid (the preexec), unprivileged.
        argv = bubblewrap.command(pol, bwrap, readonly=[p for p in pol.read if os.path.isdir(p)], bytecode=bytecode)
        return Launch(pol, (*argv, "--"), worker_env("/tmp", bytecode if bytecode_dirs(bytecode) else None,
                                                     pol.tmpdir),
                      run_first, pol.cwd, False)
    if pol.method == "landlock":
        # Read-only under Landlock, so a worker can never plant bytecode a later one loads.
        shown = bytecode if bytecode_dirs(bytecode) else None
        return Launch(pol, (), worker_env(pol.tmp, shown, pol.tmpdir), run_first, pol.cwd, True)
    # A `process` worker can write as the gate's user: a bytecode prefix it reads could be poisoned.
    return Launch(pol, (), worker_env(pol.tmp, NO_BYTECODE, pol.tmpdir), run_first, pol.cwd, True)
