"""Landlock for the candidate worker: file-system, TCP, signal and abstract-socket fences that need no
namespaces and no privilege (docs: the kernel's ``Documentation/userspace-api/landlock.rst``).

Part of the fence room (standard library only): the worker applies it to itself (:mod:`.apply`); it
shares :class:`.errors.Unavailable` and :func:`.libc.libc` with the other fences.

:func:`restrict` uses the best ABI the kernel has and what each ABI adds (``include/uapi/linux/landlock.h``):

====  =====  =====================================================================================
ABI   Linux  adds
====  =====  =====================================================================================
1     5.13   file system: execute, read, write, list, remove, make (char, dir, reg, sock, fifo, ...)
2     5.19   ``REFER``: renaming or linking a file into another directory
3     6.2    ``TRUNCATE``
4     6.7    TCP ``bind`` and ``connect`` (``LANDLOCK_ACCESS_NET_*``)
5     6.10   ``IOCTL_DEV``: ioctl on device files
6     6.12   ``scoped``: abstract Unix sockets and signals of processes outside the domain
7     6.15   audit logging of denials (nothing to enforce)
====  =====  =====================================================================================

Every file-system right the ABI knows is handled (denied) and granted back only below the given
paths. Even at ABI 1 a Landlock domain denies every ``mount`` and, towards any process outside
it, what needs ``PTRACE_MODE_ATTACH``: ``ptrace``, ``/proc/PID/mem``, ``process_vm_readv``,
``pidfd_getfd``. Not what needs only ``PTRACE_MODE_READ``: with ``/proc`` readable, the oracle's
``/proc/PID/environ`` (its tokens) and ``maps`` are readable as root (tests/test_fences.py,
``test_proc_must_stay_unreadable``), so ``/proc`` must stay out of ``read``.

What Landlock (ABI ≤ 7) does not fence, so another fence must: ``stat`` and path walks (a file's
existence, size and times stay visible), ``chmod``/``chown``/``utimes``/``setxattr`` (as root with
``CAP_FOWNER`` the worker could change any file's mode: run it as another uid), UDP and every
socket family but TCP, connecting to a *path* Unix socket such as ``/var/run/docker.sock`` (the
seccomp filter denies ``socket()``), file descriptors opened before :func:`restrict`, and threads
started before it (the domain is the calling thread's; :func:`restrict` refuses to run with two).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
import sys
from collections.abc import Sequence

from .errors import Unavailable
from .libc import libc as _libc

# Syscall numbers: one numbering from 424 on, the same on x86_64 and aarch64.
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
LANDLOCK_RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38  # include/uapi/linux/prctl.h

# LANDLOCK_ACCESS_FS_* (include/uapi/linux/landlock.h)
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
# Rights that make sense on a file; the kernel refuses directory rights on one (EINVAL).
FS_FILE = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
FS_READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
NET_BIND_TCP = 1 << 0  # LANDLOCK_ACCESS_NET_*, ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # LANDLOCK_SCOPE_*, ABI 6
SCOPE_SIGNAL = 1 << 1

# struct landlock_ruleset_attr {u64 handled_access_fs; u64 handled_access_net; u64 scoped}: a kernel
# of ABI 1-3 knows the first field only, 4-5 the first two.
_RULESET = struct.Struct("=QQQ")
# struct landlock_path_beneath_attr {u64 allowed_access; s32 parent_fd} __attribute__((packed))
_PATH_BENEATH = struct.Struct("=Qi")


def _fail(step: str, err: int, fix: str) -> Unavailable:
    return Unavailable(f"landlock: {step}: {errno.errorcode.get(err, err)} ({os.strerror(err)}); fix: {fix}")


def abi() -> int:
    """The Landlock ABI version of the running kernel (1, 2, ...).

    Raises:
        Unavailable: the kernel lacks Landlock (``ENOSYS``), has it disabled (``EOPNOTSUPP``), or a
            seccomp filter of the container refuses the syscall (``EPERM``).
    """
    libc = _libc()
    version = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    if version >= 1:
        return int(version)
    err = ctypes.get_errno()
    fix = {
        errno.ENOSYS: "Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK (in a container, also a "
                      "seccomp profile that knows the Landlock syscalls: Docker 23.0 or newer)",
        errno.EOPNOTSUPP: "boot with Landlock enabled (lsm=landlock,... on the kernel command line)",
        errno.EPERM: "the container's seccomp profile refuses Landlock (Docker before 23.0); update Docker",
    }.get(err, "report this")
    raise _fail("landlock_create_ruleset(VERSION)", err, fix)


def available() -> str:
    """``""`` when :func:`restrict` can enforce at least the file-system fence here, else why not."""
    try:
        abi()
    except Unavailable as exc:
        return str(exc)
    return ""


def handled_fs(version: int) -> int:
    """Every ``LANDLOCK_ACCESS_FS_*`` right ABI ``version`` knows (bits 0-12 at ABI 1, then
    ``REFER``, ``TRUNCATE``, and ``IOCTL_DEV`` from ABI 5)."""
    # The rights are contiguous bits: all those below the first one the ABI does not know.
    if version < 2:
        return FS_REFER - 1
    if version < 3:
        return FS_TRUNCATE - 1
    return FS_IOCTL_DEV - 1 if version < 5 else (FS_IOCTL_DEV << 1) - 1


def _ruleset_attr(version: int, net: bool, scope: bool) -> tuple[bytes, bool, bool]:
    """``(struct bytes sized for the ABI, net handled, scope handled)``."""
    net = net and version >= 4
    scope = scope and version >= 6
    packed = _RULESET.pack(handled_fs(version), NET_BIND_TCP | NET_CONNECT_TCP if net else 0,
                           SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if scope else 0)
    size = 8 if version < 4 else 16 if version < 6 else 24
    return packed[:size], net, scope


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _add_path(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> bool:
    """Grant ``rights`` below ``path`` (only the file rights when it is not a directory); ``False``
    when the path does not exist or cannot be opened, which leaves it denied."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FS_FILE
        attr = ctypes.create_string_buffer(_PATH_BENEATH.pack(rights, fd), _PATH_BENEATH.size)
        if libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, attr, 0) != 0:
            raise _fail(f"landlock_add_rule({path!r})", ctypes.get_errno(), "report this")
    finally:
        os.close(fd)
    return True


def restrict(read: Sequence[str], write: Sequence[str], *, net: bool = True, scope: bool = True) -> dict[str, object]:
    """Confine this process (and every process it starts) for good.

    Args:
        read: paths (directories or files) where reading, listing and executing stay allowed.
        write: paths with every right (create, write, remove, rename, truncate, ...); a file gets
            only the file rights (``/dev/null`` belongs here: subprocess opens it read-write).
        net: deny every TCP ``bind`` and ``connect`` (ABI ≥ 4).
        scope: deny signals to, and abstract Unix sockets of, processes outside the domain (ABI ≥ 6).

    Returns:
        What is enforced: ``{"abi": int, "fs": True, "net": bool, "scope": bool, "skipped": [path, ...]}``
        (``skipped``: given paths that do not exist or cannot be opened, so stay denied).

    Raises:
        Unavailable: Landlock is missing or disabled, or the process has more than one thread
            (a domain binds the calling thread only).
    """
    version = abi()
    threads = _threads()
    if threads > 1:
        raise Unavailable(f"landlock: the process has {threads} threads and a domain binds only the calling "
                          "one; fix: restrict before starting any thread")
    libc = _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:  # required unless CAP_SYS_ADMIN
        raise _fail("prctl(PR_SET_NO_NEW_PRIVS)", ctypes.get_errno(), "Linux 3.5 or newer")
    packed, net, scope = _ruleset_attr(version, net, scope)
    attr = ctypes.create_string_buffer(packed, len(packed))
    ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, attr, len(packed), 0)
    if ruleset < 0:
        raise _fail("landlock_create_ruleset", ctypes.get_errno(), "report this")
    skipped = []
    try:
        everything = handled_fs(version)
        for paths, rights in ((read, FS_READ), (write, everything)):
            skipped += [p for p in paths if not _add_path(libc, ruleset, p, rights & everything)]
        if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            err = ctypes.get_errno()
            raise _fail("landlock_restrict_self", err, "at most 16 nested domains" if err == errno.E2BIG
                        else "report this")
    finally:
        os.close(ruleset)
    return {"abi": version, "fs": True, "net": net, "scope": scope, "skipped": skipped}


def python_paths() -> list[str]:
    """The paths this interpreter needs to read after :func:`restrict` to start again (``subprocess``
    of ``sys.executable``) and import the standard library and installed packages: its binary's
    directory, ``libpython``'s directory, the existing ``sys.path`` entries, the venv's
    ``pyvenv.cfg``, the shared-library directories and ``/etc/ld.so.cache``. Not ``sys.prefix``
    itself: for a system Python that is ``/usr``."""
    import sysconfig  # here, not at import: the worker loads this module on every start

    candidates = [
        os.path.dirname(os.path.realpath(sys.executable)),
        sysconfig.get_config_var("LIBDIR") or "",
        *sys.path,
        os.path.join(sys.prefix, "pyvenv.cfg"),
        "/lib", "/lib64", "/usr/lib", "/usr/lib64", "/etc/ld.so.cache",
    ]
    seen: list[str] = []
    for path in candidates:
        if path and os.path.exists(path) and path not in seen:
            seen.append(path)
    return seen
