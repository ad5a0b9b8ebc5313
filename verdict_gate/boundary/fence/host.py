"""What this host can give: the method of each isolation level, chosen once per process by trying
(docs/design.md §8.2). ``verdict-gate doctor`` reports it (:func:`describe_host`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from . import bwrap as bubblewrap
from . import landlock, seccomp
from .child import preexec, worker_env
from .errors import Unavailable
from .policy import DEFAULT_LIMITS, LEVELS, METHODS, Policy, claims_of, worker_uid

_PROBED: dict[str, str] = {}  # key → "" when usable, else why not


def _run(cmd: Sequence[str], **kwargs: Any) -> str:
    """``""`` when ``cmd`` exits 0, else the last line it printed (or its exit code, or the error)."""
    try:
        proc = subprocess.run(list(cmd), capture_output=True, timeout=30, stdin=subprocess.DEVNULL, **kwargs)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if proc.returncode == 0:
        return ""
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit {proc.returncode}"


def _bwrap_works(bwrap: str, userns: bool) -> str:
    key = f"bwrap:{bwrap}:{userns}"
    if key not in _PROBED:
        # The same mounts a worker gets (the interpreter bound back where a tmpfs covers it).
        probe = Policy("sandbox", "bwrap", claims_of("bwrap"), userns=userns,
                       limits={**DEFAULT_LIMITS, "tmp_bytes": 1 << 20})
        cmd = [*bubblewrap.command(probe, bwrap, readonly=[]), "--", sys.executable, "-S", "-c", "pass"]
        _PROBED[key] = _run(cmd, env=worker_env())
    return _PROBED[key]


def _uid_can_run(uid: int) -> str:
    key = f"uid:{uid}"
    if key not in _PROBED:
        _PROBED[key] = _run([sys.executable, "-S", "-c", "pass"], env=worker_env(), cwd="/",
                            preexec_fn=preexec(DEFAULT_LIMITS, uid))
    return _PROBED[key]


def own_uid_works() -> bool:
    """Whether a worker here runs as a uid of its own: the gate is root and that uid can run the gate's
    interpreter (probed once per process). The gate decides it once and hands it to the oracle processes."""
    return os.geteuid() == 0 and not _uid_can_run(worker_uid())


def _landlock_works() -> str:
    """Why the ``landlock`` method cannot fence a worker here (``""``: it can)."""
    why = landlock.available() or seccomp.available()
    if why:
        return why
    if os.geteuid() == 0:
        uid = worker_uid()
        failed = _uid_can_run(uid)
        return (f"uid {uid} (the worker's own) cannot run {sys.executable}: {failed}; fix: install verdict-gate "
                "where other users can read it (a virtualenv of /usr/bin/python3 outside /root)") if failed else ""
    if landlock.abi() < 6:
        return (f"as uid {os.geteuid()} the worker would share the gate's uid, and this kernel's Landlock (ABI "
                f"{landlock.abi()}) cannot scope signals (ABI 6, Linux 6.12): the processes fence does not hold; "
                "fix: allow user namespaces for bubblewrap, run the gate as root, or use Linux 6.12 or newer")
    return ""


def method(level: str) -> str:
    """The method that gives ``level`` on this host (probed once per process, then cached).

    Raises:
        Unavailable: ``sandbox`` where neither bubblewrap nor Landlock with seccomp can fence a worker,
            naming what is missing and the fix; or an unknown level.
    """
    if level in ("process", "none"):
        return METHODS[level][0]
    if level != "sandbox":
        raise Unavailable(f"no worker is started at isolation level {level!r} (levels: {', '.join(LEVELS)})")
    reasons = []
    bwrap = bubblewrap.bwrap_path()
    if bwrap:
        for userns in (True, False):
            if not userns and os.geteuid() != 0:
                continue
            why = _bwrap_works(bwrap, userns)
            if not why:
                return "bwrap"
            reasons.append(f"bwrap{' with a user namespace' if userns else ' as root'}: {why}")
    else:
        reasons.append("bwrap (bubblewrap) is not installed")
    why = _landlock_works()
    if not why:
        return "landlock"
    reasons.append(f"landlock: {why}")
    raise Unavailable("isolation level sandbox is not available on this host: " + "; ".join(reasons)
                      + ". Fix: install bubblewrap (apt-get install bubblewrap) and allow user namespaces, or give "
                      "the worker Landlock and seccomp (Linux 5.13 or newer with Landlock enabled); or set "
                      "`isolation: process` in the catalog for a candidate you trust. See verdict-gate doctor")


def bwrap_userns() -> bool:
    """Whether bubblewrap makes a user namespace here (probed once per process); as root without one it
    runs as root with every capability dropped. The gate decides it once and hands it to the oracle
    processes in the run spec, which then start workers without probing again."""
    bwrap = bubblewrap.bwrap_path()
    return bool(bwrap) and not _bwrap_works(bwrap, True)


def describe_host() -> dict[str, Any]:
    """What this host can give, level by level, without starting a worker (``verdict-gate doctor``
    starts one too, to prove the fences)."""
    out: dict[str, Any] = {"uid": os.geteuid(), "bwrap": bubblewrap.bwrap_path() or None,
                           "landlock_abi": landlock.abi() if not landlock.available() else None,
                           "seccomp": not seccomp.available(), "levels": {}}
    for level in LEVELS:
        try:
            name = method(level)
            out["levels"][level] = {"available": True, "method": name, "claims": claims_of(name)}
        except Unavailable as exc:
            out["levels"][level] = {"available": False, "why": str(exc)}
    return out
