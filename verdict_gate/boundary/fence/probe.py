"""Fences proven by trying: the worker calls these after confining itself and before any candidate
code (:func:`prove`), and each attempts one forbidden act against a target the oracle process set up
(:mod:`.targets`, beside this module).

Every probe returns ``{"held": bool, "detail": str}`` and never raises. ``held`` is true only when
the act failed; ``detail`` names the step and the errno, so the evidence says *which* refusal held
(``EPERM`` from seccomp, ``EACCES`` from Landlock, ``ENETUNREACH``/``ECONNREFUSED`` from another
network namespace, ``ENOENT`` from a hidden path, ``ESRCH`` from another PID namespace). A target the
gate opened is live, so any failure to reach it is a fence; a probe that fails in some other way
(a bad target, a bug) reports ``held: false``. A probe never leaves anything behind: a socket that
connected is closed, a file that was created is removed, a process that was attached is detached.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import socket
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .libc import libc

if TYPE_CHECKING:
    from .policy import Policy

Result = dict[str, Any]  # {"held": bool, "detail": str}

# include/uapi/linux/ptrace.h
PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000  # __WALL (include/uapi/linux/wait.h): wait for a tracee that is not our child
SYS_IO_URING_SETUP = 425  # same number on x86_64 and aarch64
IO_URING_PARAMS_SIZE = 120  # sizeof(struct io_uring_params), include/uapi/linux/io_uring.h
NETLINK_ROUTE = 0
CONNECT_TIMEOUT_S = 2.0


def _result(held: bool, detail: str) -> Result:
    return {"held": held, "detail": detail}


def _err(exc: OSError) -> str:
    """``"EPERM (Operation not permitted)"`` for an OSError."""
    if isinstance(exc, TimeoutError) and exc.errno is None:
        return "timed out"
    code = exc.errno or 0
    return f"{errno.errorcode.get(code, code)} ({os.strerror(code)})"


def _reach(family: int, kind: int, address: Any, what: str, send: bool = False) -> Result:
    """Create a socket and connect (or, ``send``, send a datagram) to ``address``: held when either fails."""
    try:
        sock = socket.socket(family, kind)
    except OSError as exc:
        return _result(True, f"socket(): {_err(exc)}")
    with sock:
        sock.settimeout(CONNECT_TIMEOUT_S)
        try:
            if send:
                sock.sendto(b"verdict-gate-probe", address)
            else:
                sock.connect(address)
        except OSError as exc:
            return _result(True, f"{what}: {_err(exc)}")
    return _result(False, f"{what}: succeeded")


def tcp(host: str, port: int) -> Result:
    """Connect to the gate's TCP listener at ``host``:``port``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return _reach(family, socket.SOCK_STREAM, (host, port), f"connect({host}:{port})")


def udp(host: str = "127.0.0.1", port: int = 9) -> Result:
    """Send a datagram to ``host``:``port`` (Landlock does not fence UDP; seccomp does)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return _reach(family, socket.SOCK_DGRAM, (host, port), f"sendto({host}:{port})", send=True)


def _create(attempts: Sequence[tuple[str, int, int, int]]) -> Result:
    """Create each ``(label, family, type, proto)`` socket: held when none can be created."""
    details, made = [], []
    for label, family, kind, proto in attempts:
        try:
            socket.socket(family, kind, proto).close()
        except OSError as exc:
            details.append(f"{label}: {_err(exc)}")
        else:
            details.append(f"{label}: created")
            made.append(label)
    return _result(not made, "; ".join(details))


def raw() -> Result:
    """Create a raw IPv4 socket and a packet socket (root's ``CAP_NET_RAW``: spoofing, sniffing)."""
    return _create([("AF_INET SOCK_RAW", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
                    ("AF_PACKET SOCK_RAW", socket.AF_PACKET, socket.SOCK_RAW, 0)])


def netlink() -> Result:
    """Create a ``NETLINK_ROUTE`` socket (interfaces, routes, and the kernel's netlink surface)."""
    return _create([("AF_NETLINK NETLINK_ROUTE", socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)])


def unix(path: str) -> Result:
    """Connect to the gate's Unix socket at ``path`` (a stand-in for ``/var/run/docker.sock``)."""
    return _reach(socket.AF_UNIX, socket.SOCK_STREAM, path, f"connect({path})")


def abstract_unix(name: str) -> Result:
    """Connect to the gate's abstract Unix socket ``name`` (given without the leading NUL)."""
    return _reach(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + name, f"connect(@{name})")


def read(paths: Sequence[str]) -> Result:
    """Open each canary file for reading: held when none opens."""
    details, opened = [], []
    for path in paths:
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
        except OSError as exc:
            details.append(f"{path}: {_err(exc)}")
        else:
            details.append(f"{path}: opened")
            opened.append(path)
    return _result(not opened, "; ".join(details))


def write(directory: str) -> Result:
    """Create a file in ``directory`` (outside the worker's writable dirs): held when that fails."""
    path = os.path.join(directory, f".verdict-gate-probe-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        return _result(True, f"create in {directory}: {_err(exc)}")
    os.close(fd)
    try:
        os.unlink(path)
    except OSError as exc:
        return _result(False, f"create in {directory}: succeeded; {path} left behind: {_err(exc)}")
    return _result(False, f"create in {directory}: succeeded")


def signal(pid: int) -> Result:
    """``kill(pid, 0)`` on the oracle process: held on ``EPERM`` (Landlock's signal scope or another
    uid) and on ``ESRCH`` (another PID namespace)."""
    try:
        os.kill(pid, 0)
    except OSError as exc:
        why = {errno.EPERM: "refused", errno.ESRCH: "not visible: another PID namespace"}.get(exc.errno or 0)
        return _result(why is not None, f"kill({pid}, 0): {_err(exc)}" + (f": {why}" if why else ""))
    return _result(False, f"kill({pid}, 0): succeeded")


def environ(pid: int) -> Result:
    """Read ``/proc/PID/environ`` of the oracle process (its tokens): held when that fails. Landlock's
    ptrace fence covers only ``PTRACE_MODE_ATTACH`` here (``/proc/PID/mem``); this read is
    ``PTRACE_MODE_READ``, so only keeping ``/proc`` out of the readable paths (or another uid) holds it."""
    path = f"/proc/{pid}/environ"
    try:
        with open(path, "rb") as f:
            size = len(f.read())
    except OSError as exc:
        return _result(True, f"read {path}: {_err(exc)}")
    return _result(False, f"read {path}: {size} bytes")


def _ptrace(lib: ctypes.CDLL, request: int, pid: int) -> int:
    return int(lib.ptrace(ctypes.c_long(request), ctypes.c_long(pid), None, None))


def ptrace(pid: int) -> Result:
    """``PTRACE_SEIZE`` the oracle process (unlike ``PTRACE_ATTACH`` it does not stop the tracee);
    held when refused. Should it succeed, the tracee is interrupted, waited for and detached."""
    lib = libc()
    if _ptrace(lib, PTRACE_SEIZE, pid) != 0:
        err = ctypes.get_errno()
        return _result(True, f"ptrace(SEIZE, {pid}): {errno.errorcode.get(err, err)} ({os.strerror(err)})")
    # PTRACE_DETACH needs a stopped tracee; if any step fails, our exit detaches it all the same.
    if _ptrace(lib, PTRACE_INTERRUPT, pid) == 0:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, WALL)
            _ptrace(lib, PTRACE_DETACH, pid)
    return _result(False, f"ptrace(SEIZE, {pid}): succeeded (detached)")


def io_uring() -> Result:
    """``io_uring_setup(1, params)``: held on ``EPERM``/``EACCES`` (seccomp, or the
    ``kernel.io_uring_disabled`` sysctl) and ``ENOSYS``; any other failure reached io_uring's code."""
    params = ctypes.create_string_buffer(IO_URING_PARAMS_SIZE)
    fd = libc().syscall(SYS_IO_URING_SETUP, 1, params)
    if fd >= 0:
        os.close(fd)
        return _result(False, "io_uring_setup: succeeded")
    err = ctypes.get_errno()
    held = err in (errno.EPERM, errno.EACCES, errno.ENOSYS)
    return _result(held, f"io_uring_setup: {errno.errorcode.get(err, err)} ({os.strerror(err)})")


PROBES: dict[str, Callable[..., Result]] = {
    "tcp": tcp, "udp": udp, "raw": raw, "netlink": netlink, "unix": unix, "abstract_unix": abstract_unix,
    "read": read, "write": write, "signal": signal, "ptrace": ptrace, "environ": environ, "io_uring": io_uring,
}


def run_all(targets: dict[str, Sequence[Any]]) -> dict[str, Result]:
    """Run the probes named in ``targets``, each with its positional arguments, e.g.
    ``{"tcp": ["127.0.0.1", 40123], "udp": ["127.0.0.1", 40124], "raw": [], "netlink": [],
    "unix": ["/tmp/gate.sock"], "abstract_unix": ["gate-1"], "read": [["/scratch/canary"]],
    "write": ["/scratch"], "signal": [1234], "ptrace": [1234], "environ": [1234], "io_uring": []}``.

    Returns:
        probe name → result; an unknown name or a probe that raised is ``held: false``.
    """
    results: dict[str, Result] = {}
    for name, args in targets.items():
        fn = PROBES.get(name)
        if fn is None:
            results[name] = _result(False, f"no such probe: {name!r}")
            continue
        try:
            results[name] = fn(*args)
        except Exception as exc:  # a probe never raises: a broken one proves nothing
            results[name] = _result(False, f"probe error: {type(exc).__name__}: {exc}")
    return results


def prove(policy: Policy) -> dict[str, Any]:
    """Try each forbidden act ``policy`` names (its ``probes``) and check the rlimits: which fences hold,
    checked before any candidate code runs, so no candidate code can forge the answer.

    Returns:
        ``{"fences": {fence: held}, "probes": {label: {"held", "detail"}}, "uid": int, "rlimits": {…}}``;
        a fence holds when it was tried and every probe that proves it (:data:`.policy.FENCE_PROBES`) held.
    """
    import resource

    results: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    for label, (name, args) in policy.probes.items():
        kinds[label] = name
        run = PROBES.get(name)
        try:  # a probe never raises; one that does proves nothing
            results[label] = run(*args) if run is not None else {"held": False, "detail": f"no probe {name!r}"}
        except Exception as exc:
            results[label] = {"held": False, "detail": f"probe error: {type(exc).__name__}: {exc}"}
    rlimits = {}
    for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NPROC"):
        soft, _hard = resource.getrlimit(getattr(resource, name))
        rlimits[name] = None if soft == resource.RLIM_INFINITY else soft
    unset = [n for n in ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_CPU") if rlimits[n] is None]
    results["limits"] = {"held": not unset, "detail": f"unset: {', '.join(unset)}" if unset else
                         ", ".join(f"{k}={v}" for k, v in rlimits.items())}
    kinds["limits"] = "limits"
    fences = {}
    for fence, names in policy.fences.items():
        mine = [label for label, kind in kinds.items() if kind in names]
        fences[fence] = bool(mine) and all(results[label]["held"] for label in mine)
    return {"fences": fences, "probes": results, "uid": os.getuid(), "rlimits": rlimits}
