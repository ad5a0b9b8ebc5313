"""The fences of verdict_gate/boundary (Landlock, seccomp) proven by trying, each in a real child
process (tests/fence_child.py) that confines itself and then attempts the forbidden act, next to a
control: the same act in a child without that fence succeeds, so every assertion here can fail.

The gate's side is real too: live TCP, UDP, Unix-path and abstract listeners, canary files and a
directory the worker may only read; the gate checks what reached it, so a probe's ``held`` is never
taken on its word. The syscall tables are checked against libseccomp and the kernel headers, and both
ABIs' programs run through a small BPF interpreter here (the aarch64 one is also loaded by the kernel).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import importlib
import importlib.util
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "verdict_gate" / "boundary" / "fence"
CHILD = Path(__file__).with_name("fence_child.py")
SYSTEM_PYTHON = "/usr/bin/python3"  # readable by every uid, unlike root's pyenv
USER = 64001  # an ordinary user for the unprivileged run
SWITCH_UID = 64000  # the uid a root child switches to by itself


def _load(name: str) -> Any:
    """``verdict_gate/boundary/fence/NAME.py``, of the fence package loaded by path under a private name (as
    the worker loads the boundary), not as ``verdict_gate.boundary.fence``."""
    package = "_test_fences"
    if package not in sys.modules:
        spec = importlib.util.spec_from_file_location(package, LIB / "__init__.py",
                                                      submodule_search_locations=[str(LIB)])
        assert spec is not None and spec.loader is not None
        sys.modules[package] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[package])
    return importlib.import_module(f"{package}.{name}")


landlock, seccomp, probe = _load("landlock"), _load("seccomp"), _load("probe")

_why_not = "" if sys.platform == "linux" else "Linux only"
_why_not = _why_not or landlock.available() or seccomp.available()
pytestmark = pytest.mark.skipif(bool(_why_not), reason=_why_not or "-")
ABI = 0 if _why_not else landlock.abi()
ARCH = "" if _why_not else seccomp.native()
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (to switch uid, and as the controls' baseline)")
system_python = pytest.mark.skipif(not os.access(SYSTEM_PYTHON, os.X_OK),
                                   reason=f"no {SYSTEM_PYTHON}: apt-get install python3")


def run_child(config: dict[str, Any], *, python: str = sys.executable, lib: Path = LIB, child: Path = CHILD,
              user: int | None = None) -> dict[str, Any]:
    """Run fence_child.py with ``config`` (as ``user`` when given); return its report."""
    extra: dict[str, Any] = {} if user is None else {"user": user, "group": user, "extra_groups": []}
    proc = subprocess.run([python, "-I", str(child), json.dumps({"lib": str(lib), **config})],
                          capture_output=True, text=True, timeout=60, **extra)
    assert proc.returncode == 0, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


class Gate:
    """The gate's side of the probes under ``root``: listeners, canaries outside every allowed path,
    a directory the worker may only read (``readonly``) and one it may write (``work``). Modes let
    another uid reach all of it, so only a fence can stop it."""

    def __init__(self, root: Path, stack: contextlib.ExitStack) -> None:
        root.mkdir(exist_ok=True)
        root.chmod(0o755)
        self.work, self.readonly = root / "work", root / "readonly"
        self.canaries = [root / "scratch" / "canary", root / "repo" / ".git" / "canary", root / "home" / "canary"]
        for d in (self.work, self.readonly):
            d.mkdir(mode=0o777)
            d.chmod(0o777)
        for canary in self.canaries:
            canary.parent.mkdir(parents=True, exist_ok=True)
            canary.write_text("secret\n")
            for p in (canary, *canary.parents):
                if p == root:
                    break
                p.chmod(0o755 if p.is_dir() else 0o644)
        self.tcp = self._listen(stack, socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
        self.udp = self._listen(stack, socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
        self.unix_path = str(root / "docker.sock")  # a stand-in for /var/run/docker.sock
        self.unix = self._listen(stack, socket.AF_UNIX, socket.SOCK_STREAM, self.unix_path)
        os.chmod(self.unix_path, 0o777)
        self.abstract_name = f"verdict-gate-test-{uuid.uuid4().hex}"
        self.abstract = self._listen(stack, socket.AF_UNIX, socket.SOCK_STREAM, "\0" + self.abstract_name)

    @staticmethod
    def _listen(stack: contextlib.ExitStack, family: int, kind: int, address: Any) -> socket.socket:
        sock = stack.enter_context(socket.socket(family, kind))
        sock.bind(address)
        if kind == socket.SOCK_STREAM:
            sock.listen(8)
        sock.setblocking(False)
        return sock

    def targets(self, pid: int) -> dict[str, list[Any]]:
        """probe.run_all's targets; ``pid`` is the process to signal and trace (the oracle's stand-in)."""
        return {
            "tcp": list(self.tcp.getsockname()), "udp": list(self.udp.getsockname()), "raw": [], "netlink": [],
            "unix": [self.unix_path], "abstract_unix": [self.abstract_name], "io_uring": [],
            "read": [[str(c) for c in self.canaries]], "write": [str(self.readonly)],
            "signal": [pid], "ptrace": [pid], "environ": [pid],
        }

    def landlock(self) -> dict[str, Any]:
        """The worker's Landlock config: ``readonly`` readable, ``work`` and /dev/null writable."""
        return {"read": [str(self.readonly)], "write": [str(self.work), "/dev/null"]}

    def reached(self) -> dict[str, bool]:
        """Which listeners something reached since the last call (draining them)."""
        seen = {}
        for name, sock in (("tcp", self.tcp), ("unix", self.unix), ("abstract_unix", self.abstract)):
            seen[name] = False
            with contextlib.suppress(BlockingIOError):
                while True:
                    sock.accept()[0].close()
                    seen[name] = True
        seen["udp"] = False
        with contextlib.suppress(BlockingIOError):
            while True:
                self.udp.recv(64)
                seen["udp"] = True
        return seen


@contextlib.contextmanager
def gate_at(root: Path) -> Iterator[Gate]:
    with contextlib.ExitStack() as stack:
        yield Gate(root, stack)


# ---------------------------------------------------------------------------------------------------
# Every probe under every combination of fences. The error names the fence that answered: seccomp's
# EPERM, Landlock's EACCES (files, TCP) or EPERM (ptrace, scopes). None: the act succeeds.

CONFIGS = ("none", "landlock", "seccomp", "both")
_NET = "EACCES" if ABI >= 4 else None
_SCOPED = "EPERM" if ABI >= 6 else None
EXPECTED: dict[str, tuple[str | None, str | None, str | None]] = {
    #                landlock  seccomp  both
    "tcp": (_NET, "EPERM", "EPERM"),
    "udp": (None, "EPERM", "EPERM"),  # Landlock fences TCP only
    "raw": (None, "EPERM", "EPERM"),
    "netlink": (None, "EPERM", "EPERM"),
    "unix": (None, "EPERM", "EPERM"),  # Landlock does not fence connect() to a socket path
    "abstract_unix": (_SCOPED, "EPERM", "EPERM"),
    "io_uring": (None, "EPERM", "EPERM"),
    "ptrace": ("EPERM", "EPERM", "EPERM"),  # a Landlock domain cannot trace outside itself
    "environ": ("EACCES", None, "EACCES"),  # /proc is not readable (see test_proc_must_stay_unreadable)
    "signal": (_SCOPED, None, _SCOPED),  # seccomp does not look at kill()
    "read": ("EACCES", None, "EACCES"),
    "write": ("EACCES", None, "EACCES"),  # into a directory the worker may read
}


def _config(name: str, gate: Gate) -> dict[str, Any]:
    return {"landlock": gate.landlock() if name in ("landlock", "both") else None,
            "seccomp": name in ("seccomp", "both"), "probes": gate.targets(os.getpid())}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """config → the child's report, plus ``reached``: what arrived at the gate's listeners."""
    out = {}
    with gate_at(tmp_path_factory.mktemp("matrix")) as gate:
        for name in CONFIGS:
            report = run_child(_config(name, gate))
            report["reached"] = gate.reached()
            out[name] = report
    return out


def _sysctl(name: str) -> int:
    try:
        return int(Path("/proc/sys", name).read_text())
    except (OSError, ValueError):
        return 0


def _no_control(act: str) -> str:
    """Why ``act`` fails on this machine even without a fence (``""``: it succeeds, as for root here)."""
    root = os.geteuid() == 0
    if act == "raw" and not root:
        return "raw sockets need CAP_NET_RAW"
    if act == "ptrace" and not root and _sysctl("kernel/yama/ptrace_scope") >= 1:
        return "Yama (kernel.yama.ptrace_scope) refuses tracing a parent"
    if act == "io_uring" and _sysctl("kernel/io_uring_disabled") >= (2 if root else 1):
        return "kernel.io_uring_disabled refuses io_uring"
    return ""


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("act", sorted(EXPECTED))
def test_fence_holds_exactly_where_expected(matrix: dict[str, dict[str, Any]], act: str, config: str) -> None:
    want = None if config == "none" else EXPECTED[act][CONFIGS.index(config) - 1]
    if want is None and _no_control(act):  # a cell that must stay open cannot, without root
        pytest.skip(f"no control: {_no_control(act)}")
    got = matrix[config]["probes"][act]
    if want is None:
        assert not got["held"], got
    else:
        assert got["held"] and want in got["detail"], got


@pytest.mark.parametrize("config", CONFIGS)
def test_gate_sees_what_the_probes_claim(matrix: dict[str, dict[str, Any]], config: str) -> None:
    report = matrix[config]
    for act, reached in report["reached"].items():
        assert reached == (not report["probes"][act]["held"]), (act, report["probes"][act])


def test_landlock_reports_what_it_enforced(matrix: dict[str, dict[str, Any]]) -> None:
    assert matrix["both"]["landlock"] == {"abi": ABI, "fs": True, "net": ABI >= 4, "scope": ABI >= 6, "skipped": []}


# ---------------------------------------------------------------------------------------------------
# Python still works inside both fences.


def test_python_works_confined(tmp_path: Path) -> None:
    with gate_at(tmp_path) as gate:
        (gate.readonly / "data.txt").write_text("ok\n")
        report = run_child({
            "landlock": gate.landlock(), "seccomp": True,
            "probes": {"read": [[str(gate.readonly / "data.txt")]], "write": [str(gate.work)]},
            "checks": ["stdlib", "subprocess", "threads", "socketpair", "pipe"],
        })
    checks = report["checks"]
    assert checks["stdlib"]["fresh"] and checks["stdlib"]["failed"] == {}  # imported after the fences
    assert checks["subprocess"] == "42"  # execve of the interpreter, clone3's fallback to clone
    assert checks["threads"] == 0 + 1 + 4 + 9
    assert checks["socketpair"] == "ping" and checks["pipe"] == "pipe"
    assert not report["probes"]["read"]["held"]  # the allowed tree stays readable...
    assert not report["probes"]["write"]["held"]  # ...and the work dir writable


def test_proc_must_stay_unreadable(tmp_path: Path) -> None:
    """Why ``/proc`` stays out of the readable paths: Landlock refuses a trace of the oracle
    (``PTRACE_MODE_ATTACH``) but not a read of its environment (``PTRACE_MODE_READ``). If this fails,
    the kernel closed that gap: update probe.environ's docstring."""
    if os.geteuid() != 0:
        pytest.skip("the gap is root's: as another uid Landlock refuses the environ read as well")
    with gate_at(tmp_path) as gate:
        config = _config("both", gate)
        config["landlock"]["read"].append("/proc")
        report = run_child(config)
    assert report["probes"]["ptrace"]["held"]
    assert not report["probes"]["environ"]["held"], report["probes"]["environ"]


def test_landlock_refuses_a_second_thread() -> None:
    code = (f"import sys, threading, time\nsys.path.insert(0, {str(CHILD.parent)!r})\nimport fence_child\n"
            f"m = fence_child.load({str(LIB)!r}, 'landlock')\n"
            "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"  # alive to the end
            "try:\n    m.restrict([], [])\nexcept m.Unavailable as e:\n    print(e)\n")
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=30)
    assert "2 threads" in proc.stdout, proc.stdout + proc.stderr


# ---------------------------------------------------------------------------------------------------
# The seccomp rules, syscall by syscall, against a child without the filter.

# Arguments under which each denied syscall, were it allowed, fails or does nothing: invalid flags,
# bad file descriptors, or pointer 1 (never mapped) so the kernel faults before acting.
HARMLESS_ARGS: dict[str, tuple[int, ...]] = {
    "socket": (-1, 0, 0), "io_uring_setup": (0, 0), "io_uring_enter": (-1, 0, 0, 0, 0, 0),
    "io_uring_register": (-1, 0, 0, 0), "ptrace": (-1, 0, 0, 0), "process_vm_readv": (0, 0, 0, 0, 0, 1),
    "process_vm_writev": (0, 0, 0, 0, 0, 1), "process_madvise": (-1, 0, 0, 0, 0), "pidfd_getfd": (-1, -1, 0),
    "kcmp": (0, 0, -1, 0, 0), "unshare": (-1,), "setns": (-1, 0), "mount": (1, 1, 1, 0, 1), "umount2": (1, 0),
    "pivot_root": (1, 1), "chroot": (1,), "open_tree": (-1, 1, 0), "open_tree_attr": (-1, 1, 0, 0, 0),
    "move_mount": (-1, 1, -1, 1, 0), "fsopen": (1, 0), "fsconfig": (-1, 0, 0, 0, 0), "fsmount": (-1, 0, 0),
    "fspick": (-1, 1, 0), "mount_setattr": (-1, 1, 0, 1, 0), "bpf": (-1, 0, 0), "perf_event_open": (1, 0, -1, -1, 0),
    "userfaultfd": (-1,), "add_key": (1, 1, 0, 0, 0), "request_key": (1, 1, 0, 0), "keyctl": (-1, 0, 0, 0, 0),
    "init_module": (1, 1, 1), "finit_module": (-1, 1, 0), "delete_module": (1, 0),
    "kexec_load": (0, 0, 0, 0xFFFFFFFF), "kexec_file_load": (-1, -1, 0, 1, 0xFFFF), "reboot": (0, 0, 0, 0),
    "swapon": (1, 0), "swapoff": (1,), "acct": (1,), "quotactl": (0, 1, 0, 0), "quotactl_fd": (-1, 0, 0, 0),
    "syslog": (-1, 0, 0), "fanotify_init": (0xFFFFFFFF, 0), "sethostname": (1, 1), "setdomainname": (1, 1),
    "settimeofday": (1, 1), "clock_settime": (0, 1), "clock_adjtime": (0, 1), "adjtimex": (1,), "iopl": (4,),
    "ioperm": (0, 0, 0), "uselib": (1,), "personality": (0xFFFFFFFF,), "name_to_handle_at": (-1, 1, 1, 1, 0),
    "open_by_handle_at": (-1, 1, 0),
    # System V IPC: a key and flags no object has (IPC_PRIVATE without IPC_CREAT fails), ids none has
    "shmget": (1, 0, 0), "shmat": (-1, 0, 0), "shmctl": (-1, 0, 0), "shmdt": (1,), "semget": (1, 0, 0),
    "semop": (-1, 0, 0), "semctl": (-1, 0, 0, 0), "semtimedop": (-1, 0, 0, 0), "msgget": (1, 0),
    "msgsnd": (-1, 0, 0, 0), "msgrcv": (-1, 0, 0, 0, 0), "msgctl": (-1, 0, 0),
}
SYSCALL_CHECKS = ["clone3", "clone_namespaces", "socketpair_dgram", "syscalls", "x32", "int80",
                  "foreign_program", "tiocsti"]


@pytest.fixture(scope="module")
def syscall_runs() -> dict[str, dict[str, Any]]:
    """``{"fenced": checks under the filter, "control": the same without it}``."""
    checks = [c for c in SYSCALL_CHECKS if ARCH == "x86_64" or c not in ("x32", "int80")]
    return {name: run_child({"seccomp": name == "fenced", "checks": checks, "syscalls": HARMLESS_ARGS})["checks"]
            for name in ("fenced", "control")}


def test_every_denied_syscall_has_a_harmless_call() -> None:
    assert set(HARMLESS_ARGS) == {n for n in seccomp.DENIED if n in seccomp.ARCHES[ARCH].numbers()}


@as_root
def test_denied_syscalls_get_eperm(syscall_runs: dict[str, dict[str, Any]]) -> None:
    fenced, control = syscall_runs["fenced"]["syscalls"], syscall_runs["control"]["syscalls"]
    assert fenced == dict.fromkeys(control, "EPERM")
    assert not [name for name, result in control.items() if result == "EPERM"]  # so EPERM is the filter's


def test_clone3_answers_enosys(syscall_runs: dict[str, dict[str, Any]]) -> None:
    assert syscall_runs["fenced"]["clone3"] == "ENOSYS"
    assert syscall_runs["control"]["clone3"] != "ENOSYS"  # clone3 exists here: ENOSYS is the filter's


@as_root
def test_clone_with_a_namespace_flag_is_refused(syscall_runs: dict[str, dict[str, Any]]) -> None:
    flags = syscall_runs["control"]["clone_namespaces"]
    assert syscall_runs["control"]["clone_namespaces"] == dict.fromkeys(flags, "created")
    assert syscall_runs["fenced"]["clone_namespaces"] == dict.fromkeys(flags, "EPERM")


def test_only_stream_socketpairs(syscall_runs: dict[str, dict[str, Any]]) -> None:
    assert syscall_runs["control"]["socketpair_dgram"] == "created"
    assert syscall_runs["fenced"]["socketpair_dgram"] == "EPERM"


@pytest.mark.skipif(ARCH != "x86_64", reason="x32 and int 0x80 exist on x86_64 only")
def test_x32_syscall_kills(syscall_runs: dict[str, dict[str, Any]]) -> None:
    assert syscall_runs["control"]["x32"].startswith("exit ")  # refused (ENOSYS) or served, but alive
    assert syscall_runs["fenced"]["x32"] == "killed by SIGSYS"


@pytest.mark.skipif(ARCH != "x86_64", reason="x32 and int 0x80 exist on x86_64 only")
def test_i386_syscall_kills(syscall_runs: dict[str, dict[str, Any]]) -> None:
    if syscall_runs["control"]["int80"] != "exit 0":
        pytest.skip(f"no i386 emulation in this kernel ({syscall_runs['control']['int80']})")
    assert syscall_runs["fenced"]["int80"] == "killed by SIGSYS"


def test_foreign_abi_program_kills_at_once(syscall_runs: dict[str, dict[str, Any]]) -> None:
    want = {arch: "exit 0" if arch == ARCH else "killed by SIGSYS" for arch in seccomp.ARCHES}
    assert syscall_runs["control"]["foreign_program"] == want  # the kernel loads both ABIs' programs


@as_root
def test_tiocsti_is_refused(syscall_runs: dict[str, dict[str, Any]]) -> None:
    if syscall_runs["control"]["tiocsti"] != "ok":
        pytest.skip(f"TIOCSTI is off in this kernel ({syscall_runs['control']['tiocsti']})")
    assert syscall_runs["fenced"]["tiocsti"] == "EPERM"


# ---------------------------------------------------------------------------------------------------
# Without root: an ordinary user, and a root child that switches uid by itself.


@pytest.fixture()
def shared(tmp_path: Path) -> Iterator[Path]:
    """A directory every uid can read (pytest's tmp_path is below a 0700 directory of root's), with
    copies of the fence package's modules and the child in ``lib/`` (which the child's Landlock allows reading)."""
    path = Path(tempfile.mkdtemp(prefix="verdict-gate-fences-", dir="/tmp"))
    try:
        path.chmod(0o755)
        (path / "lib").mkdir(mode=0o755)
        for src in (*LIB.glob("*.py"), CHILD):
            shutil.copy(src, path / "lib" / src.name)
            (path / "lib" / src.name).chmod(0o644)
        yield path
    finally:
        shutil.rmtree(path)


@as_root
@system_python
def test_fences_hold_for_an_ordinary_user(shared: Path) -> None:
    with gate_at(shared / "gate") as gate, subprocess.Popen(
            [SYSTEM_PYTHON, "-c", "import time; time.sleep(3600)"], user=USER, group=USER, extra_groups=[]) as peer:
        try:
            runs = {}
            for name in ("control", "fenced"):
                config = _config("both" if name == "fenced" else "none", gate)
                config["probes"].update(signal=[peer.pid], ptrace=[peer.pid], environ=[peer.pid])  # same uid
                config["checks"] = ["stdlib", "subprocess", "threads", "socketpair"] if name == "fenced" else []
                runs[name] = run_child(config, python=SYSTEM_PYTHON, lib=shared / "lib",
                                       child=shared / "lib" / CHILD.name, user=USER)
                runs[name]["reached"] = gate.reached()
        finally:
            peer.kill()
    control, fenced = runs["control"], runs["fenced"]
    assert control["uid"] == fenced["uid"] == USER and fenced["groups"] == []
    # Without privilege only raw sockets fail on their own; every other act succeeds...
    held = {act: r["detail"] for act, r in control["probes"].items() if r["held"]}
    assert set(held) == {"raw"}, held
    # ...and with both fences every act fails, as the gate saw.
    assert [a for a, r in fenced["probes"].items() if not r["held"]] == [], fenced["probes"]
    assert not any(fenced["reached"].values()) and all(control["reached"].values())
    assert fenced["checks"]["stdlib"]["failed"] == {} and fenced["checks"]["subprocess"] == "42"


@as_root
@system_python
def test_another_uid_cannot_signal_trace_or_read_root(shared: Path) -> None:
    """The uid fence alone (no Landlock, no seccomp): the control is the matrix's ``none`` column,
    where a root child signals and traces this process."""
    pid = [os.getpid()]
    report = run_child({"uid": SWITCH_UID, "probes": {"signal": pid, "ptrace": pid, "environ": pid}},
                       python=SYSTEM_PYTHON, lib=shared / "lib", child=shared / "lib" / CHILD.name)
    assert (report["uid"], report["gid"], report["groups"]) == (SWITCH_UID, SWITCH_UID, [])
    assert report["probes"]["signal"] == {"held": True, "detail": f"kill({os.getpid()}, 0): EPERM "
                                          "(Operation not permitted): refused"}
    assert report["probes"]["ptrace"]["held"] and "EPERM" in report["probes"]["ptrace"]["detail"]
    assert report["probes"]["environ"]["held"] and "EACCES" in report["probes"]["environ"]["detail"]


# ---------------------------------------------------------------------------------------------------
# The syscall tables against independent sources, and both ABIs' programs in a BPF interpreter.


def _libseccomp_numbers(audit_arch: int) -> dict[str, int | None]:
    """name → number (None: libseccomp knows the name but the ABI has none); names it does not know
    are absent. SCMP_ARCH_* tokens are the AUDIT_ARCH_* values."""
    try:
        lib = ctypes.CDLL("libseccomp.so.2")
    except OSError:
        return {}
    resolve = lib.seccomp_syscall_resolve_name_arch
    resolve.argtypes, resolve.restype = [ctypes.c_uint32, ctypes.c_char_p], ctypes.c_int
    out: dict[str, int | None] = {}
    for name in seccomp.NUMBERS:
        nr = resolve(audit_arch, name.encode())
        if nr != -1:  # __NR_SCMP_ERROR: unknown name; other negatives are libseccomp's pseudo numbers
            out[name] = nr if nr >= 0 else None
    return out


HEADERS = {"x86_64": ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"),
           "aarch64": ("/usr/include/asm-generic/unistd.h",)}


def _header_numbers(arch: str) -> dict[str, int | None]:
    for path in HEADERS[arch]:
        with contextlib.suppress(OSError):
            text = Path(path).read_text()
            return {m[1]: int(m[2]) for m in re.finditer(r"^#define __NR_(\w+)\s+(\d+)\s*$", text, re.M)}
    return {}


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_syscall_table_matches_libseccomp_and_kernel_headers(arch: str) -> None:
    spec = seccomp.ARCHES[arch]
    sources = {"libseccomp": _libseccomp_numbers(spec.audit), "headers": _header_numbers(arch)}
    if not any(sources.values()):
        pytest.skip("neither libseccomp.so.2 nor the kernel headers (apt-get install linux-libc-dev)")
    unverified = []
    for name, pair in seccomp.NUMBERS.items():
        ours = pair[spec.column]
        known = {src: table[name] for src, table in sources.items() if name in table}
        assert all(v == ours for v in known.values()), (name, ours, known)
        if not known:
            unverified.append(name)
    # What no local source knows yet must be from the one numbering all ABIs share (above 450 here).
    for name in unverified:
        assert seccomp.NUMBERS[name][0] == seccomp.NUMBERS[name][1] and (seccomp.NUMBERS[name][0] or 0) > 450
    assert all(nr <= seccomp.LAST_NUMBER for nr in spec.numbers().values())


# include/uapi/linux/bpf_common.h, written out again here rather than taken from the module.
_BPF = {0x20: "ld", 0x54: "and", 0x15: "jeq", 0x25: "jgt", 0x35: "jge", 0x45: "jset", 0x06: "ret"}
ALLOW, KILL = 0x7FFF0000, 0x80000000
EPERM, ENOSYS = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
AUDIT_ARCH_I386, AUDIT_ARCH_ARM = 0x40000003, 0x40000028


def run_bpf(prog: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """The action a classic BPF seccomp program returns for one syscall (only the opcodes it uses)."""
    data = struct.pack("<IIQ6Q", nr & 0xFFFFFFFF, arch, 0, *(list(args) + [0] * 6)[:6])
    insns = [struct.unpack_from("=HBBI", prog, i) for i in range(0, len(prog), 8)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        op = _BPF[code]
        if op == "ret":
            return k
        if op == "ld":
            acc = struct.unpack_from("<I", data, k)[0]
        elif op == "and":
            acc &= k
        else:
            taken = {"jeq": acc == k, "jgt": acc > k, "jge": acc >= k, "jset": bool(acc & k)}[op]
            pc += jt if taken else jf


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_program_decides_every_syscall_as_documented(arch: str) -> None:
    spec = seccomp.ARCHES[arch]
    prog, nrs = seccomp.program(arch), spec.numbers()
    denied = {nrs[n] for n in seccomp.DENIED if n in nrs}
    inspected = {nrs[n] for n in seccomp.INSPECTED}
    for nr in range(seccomp.LAST_NUMBER + 1):
        if nr not in inspected:
            want = EPERM if nr in denied else ENOSYS if nr == nrs["clone3"] else ALLOW
            assert run_bpf(prog, nr, spec.audit) == want, nr
    for nr in (seccomp.LAST_NUMBER + 1, 1000, 0x3FFFFFFF):
        assert run_bpf(prog, nr, spec.audit) == ENOSYS
    for foreign in (AUDIT_ARCH_I386, AUDIT_ARCH_ARM, *(a.audit for a in seccomp.ARCHES.values() if a != spec)):
        assert run_bpf(prog, nrs["socket"], foreign) == KILL
    x32 = KILL if arch == "x86_64" else ENOSYS
    assert {run_bpf(prog, 0x40000000 | nr, spec.audit) for nr in (0, 41, nrs["socket"], 0xFFFF)} == {x32}
    assert run_bpf(prog, -1, spec.audit) == x32  # 0xFFFFFFFF


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_argument_rules(arch: str) -> None:
    spec = seccomp.ARCHES[arch]
    prog, nrs = seccomp.program(arch), spec.numbers()
    for name, wanted in seccomp.SELF_ONLY.items():  # for itself only: every wanted argument, else EPERM
        itself = [0] * 6
        for index, value in wanted:
            itself[index] = value
        assert run_bpf(prog, nrs[name], spec.audit, tuple(itself)) == ALLOW, name
        for index, value in wanted:
            other = list(itself)
            other[index] = value + 4242
            assert run_bpf(prog, nrs[name], spec.audit, tuple(other)) == EPERM, (name, index)

    def clone(flags: int) -> int:
        return run_bpf(prog, nrs["clone"], spec.audit, (flags,))

    thread = 0x003D0F00  # CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID
    assert clone(thread) == clone(17) == clone((1 << 32) | thread) == ALLOW  # fork is SIGCHLD alone
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        assert clone(flag | 17) == EPERM
    pair = nrs["socketpair"]
    assert run_bpf(prog, pair, spec.audit, (1, 1 | 0x80000)) == ALLOW  # AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC
    assert run_bpf(prog, pair, spec.audit, (1, 5 | 0x800)) == ALLOW  # SOCK_SEQPACKET|SOCK_NONBLOCK
    assert run_bpf(prog, pair, spec.audit, (1, 2)) == EPERM  # SOCK_DGRAM
    assert run_bpf(prog, pair, spec.audit, (30, 1)) == EPERM  # AF_TIPC
    ioctl = nrs["ioctl"]
    assert run_bpf(prog, ioctl, spec.audit, (0, 0x5412)) == run_bpf(prog, ioctl, spec.audit, (0, 0x541C)) == EPERM
    assert run_bpf(prog, ioctl, spec.audit, (0, 0x5401)) == run_bpf(prog, ioctl, spec.audit, (0, 0x541B)) == ALLOW


def test_policy_names_must_exist() -> None:
    with pytest.raises(KeyError):
        seccomp.program("x86_64", seccomp.Rules(deny=("sockett",)))
    narrow = seccomp.program("x86_64", seccomp.Rules(deny=("ptrace",)))
    nrs = seccomp.ARCHES["x86_64"].numbers()
    assert run_bpf(narrow, nrs["ptrace"], seccomp.AUDIT_ARCH_X86_64) == EPERM
    assert run_bpf(narrow, nrs["socket"], seccomp.AUDIT_ARCH_X86_64) == ALLOW


def test_describe_is_evidence() -> None:
    doc = json.loads(json.dumps(seccomp.describe()))
    assert set(doc["eperm"]) == set(seccomp.DENIED) and doc["enosys"] == ["clone3"]


# ---------------------------------------------------------------------------------------------------
# Landlock's ABI degradation, the kernel's acceptance of each ABI's struct, and the probes' contract.

# include/uapi/linux/landlock.h: the LANDLOCK_ACCESS_FS_* rights each ABI knows.
HANDLED_FS = {1: 0x1FFF, 2: 0x3FFF, 3: 0x7FFF, 4: 0x7FFF, 5: 0xFFFF, 6: 0xFFFF, 7: 0xFFFF}


@pytest.mark.parametrize("version", sorted(HANDLED_FS))
def test_landlock_ruleset_per_abi(version: int) -> None:
    packed, net, scope = landlock._ruleset_attr(version, True, True)
    assert landlock.handled_fs(version) == HANDLED_FS[version]
    assert (len(packed), net, scope) == ({1: 8, 2: 8, 3: 8, 4: 16, 5: 16}.get(version, 24), version >= 4, version >= 6)
    if version > ABI:
        pytest.skip(f"the kernel has ABI {ABI}")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(444, ctypes.create_string_buffer(packed, len(packed)), len(packed), 0)
    assert fd >= 0, os.strerror(ctypes.get_errno())  # the kernel takes this ABI's struct as built
    os.close(fd)


def test_probes_never_raise() -> None:
    results = probe.run_all({"nope": [], "tcp": ["127.0.0.1", "x"], "read": []})
    assert results["nope"] == {"held": False, "detail": "no such probe: 'nope'"}
    assert not results["tcp"]["held"] and results["tcp"]["detail"].startswith("probe error")
    assert results["read"] == {"held": False, "detail": "probe error: TypeError: "
                               "read() missing 1 required positional argument: 'paths'"}


@pytest.mark.parametrize("name", ["landlock", "seccomp", "probe"])
def test_modules_import_as_package_too(name: str) -> None:
    module = importlib.import_module(f"verdict_gate.boundary.fence.{name}")
    assert module.__file__ == str(LIB / f"{name}.py")


@pytest.mark.fast
@pytest.mark.parametrize(("method", "root", "own_uid", "userns", "metadata"), [
    ("bwrap", True, True, True, False),     # as root, a uid of its own: it owns nothing outside its temp dir
    ("bwrap", True, False, True, True),     # as root, mapped to root outside: owns every root-owned inode
    ("bwrap", True, True, False, True),     # as root without a user namespace: root
    ("bwrap", False, False, True, True),    # an ordinary user: mapped to the gate's own uid, which owns its files
    ("landlock", True, True, None, False),  # as root, a uid of its own
    ("landlock", False, False, None, True),  # an ordinary user: the gate's own uid
])
def test_a_worker_that_owns_files_outside_gets_file_metadata_calls_denied(monkeypatch, method, root, own_uid, userns,
                                                                          metadata) -> None:
    """Landlock does not fence chmod, chown, utimes or setxattr: a worker whose identity outside is the gate's
    own uid or root (fence_chmod_host_devices in the corpus: the setuid bit on its inherited stderr file) gets
    them denied by its seccomp filter."""
    from verdict_gate.boundary.fence import launch

    monkeypatch.setattr(os, "geteuid", lambda: 0 if root else 1000)
    pol = launch.worker_policy("sandbox", method, readonly=[], tmp="/tmp/x", cwd="/tmp", own_uid=own_uid, userns=userns)
    assert pol.metadata is metadata
