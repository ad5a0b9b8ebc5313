"""A child that confines itself and then tries forbidden acts, for tests/test_fences.py.

Standard library only, so Debian's ``/usr/bin/python3`` can run a copy of it as another uid. Usage:
``python fence_child.py CONFIG_JSON``; prints one JSON object (see :func:`main`). Config keys, all
optional but ``lib``:

- ``lib``: the directory of the fence package (``verdict_gate/boundary/fence``, or a copy of its files),
  loaded by path under a private name; its ``landlock``, ``seccomp`` and ``probe`` are used;
- ``uid``: switch to this uid and gid, with no supplementary groups, before any fence;
- ``landlock``: ``{"read": [...], "write": [...], "net": bool, "scope": bool}``; the interpreter's own
  paths (``landlock.python_paths()``) and ``lib`` are added to ``read``;
- ``seccomp``: true to install the filter (after Landlock);
- ``probes``: targets for ``probe.run_all``;
- ``checks``: names of :data:`CHECKS` to run after the fences;
- ``syscalls``: syscall name → arguments, for the ``syscalls`` check.
"""

from __future__ import annotations

import ctypes
import errno
import importlib.util
import json
import os
import signal
import sys
from typing import Any

SIGCHLD = 17
X32_SYSCALL_BIT = 0x40000000
X32_GETPID = X32_SYSCALL_BIT | 39  # getpid's number is 39 for x32 too
I386_GETPID = b"\xb8\x14\x00\x00\x00\xcd\x80\xc3"  # mov eax, 20 (i386 getpid); int 0x80; ret
CLONE_FLAGS = {"NEWNS": 0x00020000, "NEWCGROUP": 0x02000000, "NEWUTS": 0x04000000, "NEWIPC": 0x08000000,
               "NEWUSER": 0x10000000, "NEWPID": 0x20000000, "NEWNET": 0x40000000}
# Imported after the fences to show Python still finds, reads and loads them (C extensions included).
FRESH_MODULES = ("decimal", "sqlite3", "hashlib", "zlib", "asyncio", "unicodedata", "ssl", "csv",
                 "xml.etree.ElementTree", "email.parser")

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long


def load(lib: str, name: str) -> Any:
    """Module ``name`` of the fence package in ``lib``, loaded by path under the private name ``_fence``, as
    the worker loads the boundary package."""
    if "_fence" not in sys.modules:
        spec = importlib.util.spec_from_file_location("_fence", os.path.join(lib, "__init__.py"),
                                                      submodule_search_locations=[lib])
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules["_fence"] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"_fence.{name}")


def syscall(nr: int, *args: int) -> str:
    """``"ok"`` or the errno name of ``syscall(nr, *args)``."""
    ret = LIBC.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    return "ok" if ret >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")


def in_fork(fn: Any) -> str:
    """Run ``fn`` (returning a small int) in a forked child: ``"exit N"`` or ``"killed by SIGNAME"``
    (a kill by seccomp must not take this process's report with it)."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = fn()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit {os.WEXITSTATUS(status)}"


def check_stdlib(cfg: dict[str, Any], mods: dict[str, Any]) -> dict[str, Any]:
    fresh = [name for name in FRESH_MODULES if name not in sys.modules]
    failed = {}
    for name in FRESH_MODULES:
        try:
            importlib.import_module(name)
        except Exception as exc:
            failed[name] = repr(exc)
    return {"fresh": fresh, "failed": failed}


def check_subprocess(cfg: dict[str, Any], mods: dict[str, Any]) -> str:
    import subprocess

    proc = subprocess.run([sys.executable, "-c", "import json; print(json.dumps(6 * 7))"],
                          capture_output=True, text=True, timeout=30)
    return proc.stdout.strip() or proc.stderr.strip()[-300:]


def check_threads(cfg: dict[str, Any], mods: dict[str, Any]) -> int:
    import threading

    out: list[int] = []
    threads = [threading.Thread(target=lambda i=i: out.append(i * i)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(out)


def check_socketpair(cfg: dict[str, Any], mods: dict[str, Any]) -> str:
    import socket

    a, b = socket.socketpair()
    with a, b:
        a.sendall(b"ping")
        return b.recv(4).decode()


def check_socketpair_dgram(cfg: dict[str, Any], mods: dict[str, Any]) -> str:
    import socket

    try:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, "?")
    a.close()
    b.close()
    return "created"


def check_pipe(cfg: dict[str, Any], mods: dict[str, Any]) -> str:
    r, w = os.pipe()
    os.write(w, b"pipe")
    os.close(w)
    data = os.read(r, 4).decode()
    os.close(r)
    return data


def check_clone3(cfg: dict[str, Any], mods: dict[str, Any]) -> str:
    return syscall(mods["seccomp"].ARCHES[mods["seccomp"].native()].numbers()["clone3"], 0, 0)


def _clone(nr: int, flags: int) -> str:
    ret = LIBC.syscall(ctypes.c_long(nr), ctypes.c_long(flags | SIGCHLD), *(ctypes.c_long(0),) * 4)
    if ret == 0:  # the new process: leave at once, without unwinding anything of the parent's
        os._exit(0)
    if ret < 0:
        return errno.errorcode.get(ctypes.get_errno(), "?")
    os.waitpid(ret, 0)
    return "created"


def check_clone_namespaces(cfg: dict[str, Any], mods: dict[str, Any]) -> dict[str, str]:
    nr = mods["seccomp"].ARCHES[mods["seccomp"].native()].numbers()["clone"]
    return {name: _clone(nr, flag) for name, flag in CLONE_FLAGS.items()}


def check_syscalls(cfg: dict[str, Any], mods: dict[str, Any]) -> dict[str, str]:
    numbers = mods["seccomp"].ARCHES[mods["seccomp"].native()].numbers()
    return {name: syscall(numbers[name], *args) for name, args in cfg["syscalls"].items() if name in numbers}


def check_x32(cfg: dict[str, Any], mods: dict[str, Any]) -> str:
    return in_fork(lambda: 0 if syscall(X32_GETPID) == "ok" else 1)


def check_int80(cfg: dict[str, Any], mods: dict[str, Any]) -> str:
    import mmap

    def i386_getpid() -> int:
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(I386_GETPID)
        fn = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
        return 0 if fn() == os.getpid() else 1

    return in_fork(i386_getpid)


def check_foreign_program(cfg: dict[str, Any], mods: dict[str, Any]) -> dict[str, str]:
    """Each ABI's program loaded in a fork, then one syscall: the native one lets it exit; any other
    kills it at its first syscall (and proves the kernel's verifier accepts that program)."""
    sc = mods["seccomp"]

    def under(arch: str) -> int:
        LIBC.prctl(sc.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        sc.load(sc.program(arch))
        os.getppid()
        return 0

    return {arch: in_fork(lambda arch=arch: under(arch)) for arch in sc.ARCHES}


def check_tiocsti(cfg: dict[str, Any], mods: dict[str, Any]) -> str:
    import fcntl
    import termios

    try:
        fcntl.ioctl(cfg["_pty"], termios.TIOCSTI, b"x")
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, "?")
    return "ok"


CHECKS = {
    "stdlib": check_stdlib, "subprocess": check_subprocess, "threads": check_threads,
    "socketpair": check_socketpair, "socketpair_dgram": check_socketpair_dgram, "pipe": check_pipe,
    "clone3": check_clone3, "clone_namespaces": check_clone_namespaces, "syscalls": check_syscalls,
    "x32": check_x32, "int80": check_int80, "foreign_program": check_foreign_program, "tiocsti": check_tiocsti,
}


def main() -> int:
    """Prints ``{"uid", "gid", "groups", "landlock": result or None, "probes": {...}, "checks": {...}}``."""
    cfg = json.loads(sys.argv[1])
    mods = {name: load(cfg["lib"], name) for name in ("landlock", "seccomp", "probe")}
    if "tiocsti" in cfg.get("checks", []):
        _master, cfg["_pty"] = os.openpty()  # opened before the fences, like a terminal the worker inherits
    if cfg.get("uid") is not None:
        os.setgroups([])
        os.setgid(cfg["uid"])
        os.setuid(cfg["uid"])
    report: dict[str, Any] = {"landlock": None}
    if cfg.get("landlock") is not None:
        ll = dict(cfg["landlock"])
        ll["read"] = [*ll.get("read", []), *mods["landlock"].python_paths(), cfg["lib"]]
        report["landlock"] = mods["landlock"].restrict(**ll)
    if cfg.get("seccomp"):
        mods["seccomp"].install()
    report["probes"] = mods["probe"].run_all(cfg.get("probes", {}))
    report["checks"] = {name: CHECKS[name](cfg, mods) for name in cfg.get("checks", [])}
    report.update(uid=os.getuid(), gid=os.getgid(), groups=os.getgroups())
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
