"""A seccomp-bpf filter the candidate worker installs on itself: a fence that needs no namespaces.

Part of the fence room (standard library only): the worker applies it to itself (:mod:`.apply`); it
shares :class:`.errors.Unavailable` and :func:`.libc.libc` with the other fences.

Implementation: a classic BPF program assembled here from small per-architecture syscall tables,
loaded with ``seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, ...)``. Why not a ctypes
binding of ``libseccomp.so.2``:

- no runtime dependency: a pip-installed CLI cannot count on ``libseccomp2`` (slim and distroless
  images lack it, and its soname and symbols are ctypes-by-hand with no type checking);
- exact: the program below is the whole policy, a few dozen instructions a reviewer can read, and
  :func:`program` builds it for any supported architecture on any machine, so the aarch64 program
  is assembled, run through a BPF interpreter and loaded by the kernel's verifier in tests on x86_64;
- the cost, owning the tables, is paid by a test: every number is checked against libseccomp's own
  tables (``seccomp_syscall_resolve_name_arch``) and the kernel's uapi headers where present. Numbers
  newer than both local sources (Linux 6.18: ``open_tree_attr`` 467, the highest number 469) were
  checked by hand against the kernel's ``arch/x86/entry/syscalls/syscall_64.tbl`` and
  ``scripts/syscall.tbl``; from 424 on every architecture shares one numbering.

The program, in order (the arch check must come first: a syscall number means nothing until the
ABI is known):

1. ``seccomp_data.arch`` is not this ABI's ``AUDIT_ARCH_*`` (i386 through ``int 0x80`` on x86_64,
   arm32 compat on aarch64): ``SECCOMP_RET_KILL_PROCESS``.
2. x86_64 only: a number with ``__X32_SYSCALL_BIT`` (0x40000000) set, the x32 ABI: kill.
3. A number above :data:`LAST_NUMBER`: ``ENOSYS``. A deny list only fences the syscalls it knows;
   a syscall added after this table (a ``fchroot`` has been proposed) would pass. ``ENOSYS`` is what
   an older kernel answers, so libc and CPython take their fallbacks.
4. ``clone3``: ``ENOSYS`` (its flags live in a struct in memory, which seccomp cannot read); glibc's
   ``posix_spawn`` and ``pthread_create`` then fall back to ``clone``.
5. ``clone``: ``EPERM`` when the flags (arg0 on x86_64 and aarch64; the kernel reads its low 32 bits)
   ask for a namespace (``CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET``); threads,
   ``fork`` and ``vfork`` pass. ``CLONE_NEWTIME`` exists only for ``clone3`` and ``unshare``.
6. ``socketpair``: allowed only for ``AF_UNIX`` with ``SOCK_STREAM`` or ``SOCK_SEQPACKET`` (Python's
   ``socket.socketpair()``, asyncio, multiprocessing). Such a pair is connected for life, so
   ``connect`` and ``sendmsg`` to an address fail with ``EISCONN``; a ``SOCK_DGRAM`` pair could be
   re-connected to any datagram socket path (syslog, journald), and ``AF_TIPC`` pairs reach a
   network. With ``socket`` denied, every socket the process holds is such a pair or inherited.
7. ``ioctl`` ``TIOCSTI`` and ``TIOCLINUX``: ``EPERM`` (pushing keystrokes into a terminal the
   worker shares with the gate; ``dev.tty.legacy_tiocsti`` is still 1 on many kernels).
8. The syscalls of :data:`SELF_ONLY` (``prlimit64``, ``setpriority``, ``sched_set*``, ``ioprio_set``,
   ``migrate_pages``, ``move_pages``): allowed for the caller itself (pid 0), else ``EPERM``: neither
   Landlock nor a shared uid keeps a worker from setting the oracle's RLIMIT_AS to a page.
9. Each name of :data:`DENIED` (System V IPC among them: the host's IPC namespace is shared without
   namespaces): ``EPERM``. Everything else: allowed.

Allowed on purpose: ``seccomp`` and the ``landlock_*`` syscalls (a process can only add filters and
domains; none can be removed or loosened, so letting candidate code stack its own protects the same),
``prctl`` (``no_new_privs`` cannot be unset), ``execve`` and ``fork`` (tests run subprocesses).

Because only ``clone``, ``socketpair``, ``ioctl`` and :data:`SELF_ONLY` read arguments, the kernel's
seccomp action cache (Linux 5.11+) proves every other allowed syscall constant and skips the filter for it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys
from typing import NamedTuple

from .errors import Unavailable
from .libc import libc as _libc

# (x86_64, aarch64) number of each syscall the program names; None where the ABI has none.
# Sources: arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h (aarch64).
NUMBERS: dict[str, tuple[int | None, int | None]] = {
    # inspected or needed to install
    "clone": (56, 220),
    "clone3": (435, 435),
    "ioctl": (16, 29),
    "seccomp": (317, 277),
    "socketpair": (53, 199),
    # network: every socket() (AF_UNIX too), io_uring (IORING_OP_SOCKET/CONNECT bypass seccomp)
    "socket": (41, 198),
    "socketcall": (None, None),  # i386/arm32 only, which rule 1 kills
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    # other processes' memory, file descriptors and kernel objects
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "process_madvise": (440, 440),
    "pidfd_getfd": (438, 438),
    "kcmp": (312, 272),  # compares two processes' kernel objects: only checkpoint/restore needs it
    # namespaces and mounts
    "unshare": (272, 97),
    "setns": (308, 268),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "open_tree": (428, 428),
    "open_tree_attr": (467, 467),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    # the kernel's attack surface and global state
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "keyctl": (250, 219),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "reboot": (169, 142),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "acct": (163, 89),
    "quotactl": (179, 60),
    "quotactl_fd": (443, 443),
    "syslog": (103, 116),
    "fanotify_init": (300, 262),
    "sethostname": (170, 161),
    "setdomainname": (171, 162),
    "settimeofday": (164, 170),
    "clock_settime": (227, 112),
    "clock_adjtime": (305, 266),
    "adjtimex": (159, 171),
    "iopl": (172, None),
    "ioperm": (173, None),
    "uselib": (134, None),
    "personality": (135, 92),  # ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC: no ABI changes
    "name_to_handle_at": (303, 264),
    "open_by_handle_at": (304, 265),  # the "shocker" container escape
    # System V IPC: the host's IPC namespace, shared by every worker without namespaces (a covert channel,
    # and segments that keep their memory after the run); POSIX semaphores (/dev/shm) are a file matter
    "shmget": (29, 194),
    "shmat": (30, 196),
    "shmctl": (31, 195),
    "shmdt": (67, 197),
    "semget": (64, 190),
    "semop": (65, 193),
    "semctl": (66, 191),
    "semtimedop": (220, 192),
    "msgget": (68, 186),
    "msgsnd": (69, 189),
    "msgrcv": (70, 188),
    "msgctl": (71, 187),
    # file metadata (METADATA): modes, owners, times, extended attributes; Landlock does not fence them
    "chmod": (90, None),
    "fchmod": (91, 52),
    "fchmodat": (268, 53),
    "fchmodat2": (452, 452),
    "chown": (92, None),
    "fchown": (93, 55),
    "lchown": (94, None),
    "fchownat": (260, 54),
    "utime": (132, None),
    "utimes": (235, None),
    "futimesat": (261, None),
    "utimensat": (280, 88),
    "setxattr": (188, 5),
    "lsetxattr": (189, 6),
    "fsetxattr": (190, 7),
    "removexattr": (197, 14),
    "lremovexattr": (198, 15),
    "fremovexattr": (199, 16),
    "setxattrat": (463, 463),
    "removexattrat": (466, 466),
    "file_setattr": (469, 469),
    # another process's limits, priority, CPUs and memory placement: allowed for itself only (SELF_ONLY)
    "prlimit64": (302, 261),
    "setpriority": (141, 140),
    "sched_setaffinity": (203, 122),
    "sched_setscheduler": (144, 119),
    "sched_setparam": (142, 118),
    "sched_setattr": (314, 274),
    "ioprio_set": (251, 30),
    "migrate_pages": (256, 238),
    "move_pages": (279, 239),
}

# Syscalls that act on the process their arguments name: allowed only for the caller itself, (argument
# index → the value it must have): pid 0 (prlimit64, sched_set*, migrate_pages, move_pages), or
# which = PRIO_PROCESS / IOPRIO_WHO_PROCESS with who = 0. Another process of the same uid (the oracle, the
# gate, a later worker, as an ordinary user) is neither Landlock's nor the uid's to protect here.
SELF_ONLY: dict[str, tuple[tuple[int, int], ...]] = {
    "prlimit64": ((0, 0),), "sched_setaffinity": ((0, 0),), "sched_setscheduler": ((0, 0),),
    "sched_setparam": ((0, 0),), "sched_setattr": ((0, 0),), "migrate_pages": ((0, 0),), "move_pages": ((0, 0),),
    "setpriority": ((0, 0), (1, 0)),  # PRIO_PROCESS, who 0
    "ioprio_set": ((0, 1), (1, 0)),  # IOPRIO_WHO_PROCESS, who 0
}
INSPECTED = ("clone", "socketpair", "ioctl", *SELF_ONLY)  # rules 5-8: decided by their arguments
NOT_IMPLEMENTED = ("clone3",)  # rule 4: ENOSYS
# Changing a file's mode, owner, times or extended attributes, path and descriptor forms alike: denied
# (Rules.deny + METADATA) for a worker whose identity outside owns files it must leave alone - the
# gate's own uid (the landlock method as an ordinary user: ~/.ssh, the repository) or root (bubblewrap
# as root, where the worker maps to root outside and owns /dev/null). Landlock has no right for them.
METADATA = ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
            "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
            "fremovexattr", "setxattrat", "removexattrat", "file_setattr")
DENIED = tuple(name for name in NUMBERS if name not in (*INSPECTED, *NOT_IMPLEMENTED, *METADATA, "seccomp"))
LAST_NUMBER = 469  # file_setattr, the highest syscall of Linux 6.18 (same number on both ABIs)

# include/uapi/linux/audit.h: EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000  # arch/x86/include/uapi/asm/unistd.h

# include/uapi/linux/seccomp.h
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
ACTIONS_AVAIL = "/proc/sys/kernel/seccomp/actions_avail"
# include/uapi/linux/prctl.h
PR_GET_SECCOMP = 21
PR_SET_NO_NEW_PRIVS = 38

# include/uapi/linux/sched.h
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
AF_UNIX = 1
SOCK_TYPE_MASK = 0xF  # include/linux/net.h: the type without SOCK_NONBLOCK / SOCK_CLOEXEC
SOCK_STREAM, SOCK_SEQPACKET = 1, 5
TIOCSTI, TIOCLINUX = 0x5412, 0x541C  # include/uapi/asm-generic/ioctls.h (x86 and arm64 use these)

# struct seccomp_data (include/uapi/linux/seccomp.h): int nr; u32 arch; u64 ip; u64 args[6].
# Both ABIs are little-endian (big-endian aarch64 has another AUDIT_ARCH, which rule 1 kills), so an
# argument's low 32 bits sit at its own offset.
_NR, _ARCH = 0, 4


def _arg(i: int) -> int:
    """Offset of the low 32 bits of argument ``i`` in ``struct seccomp_data``."""
    return 16 + 8 * i


# Classic BPF opcodes (include/uapi/linux/bpf_common.h): class | size | mode | op | source.
_LD_W_ABS = 0x00 | 0x00 | 0x20
_ALU_AND_K = 0x04 | 0x50
_JEQ_K, _JGT_K, _JGE_K, _JSET_K = 0x05 | 0x10, 0x05 | 0x20, 0x05 | 0x30, 0x05 | 0x40
_RET_K = 0x06
_INSN = struct.Struct("=HBBI")  # struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}


class Arch(NamedTuple):
    """One syscall ABI: ``audit`` is its ``AUDIT_ARCH_*``; ``x32`` whether numbers with
    ``__X32_SYSCALL_BIT`` reach it; ``column`` its column in the number table."""

    name: str
    audit: int
    x32: bool
    column: int

    def numbers(self) -> dict[str, int]:
        """Syscall name → number for every named syscall this ABI has."""
        return {name: nr for name, pair in NUMBERS.items() if (nr := pair[self.column]) is not None}


ARCHES = {
    "x86_64": Arch("x86_64", AUDIT_ARCH_X86_64, True, 0),
    "aarch64": Arch("aarch64", AUDIT_ARCH_AARCH64, False, 1),
}


class Rules(NamedTuple):
    """What the program refuses: ``deny`` with ``EPERM``, ``enosys`` with ``ENOSYS`` (names of
    :data:`NUMBERS`; a name the ABI lacks is skipped). The argument rules and the ABI checks are
    not optional."""

    deny: tuple[str, ...] = DENIED
    enosys: tuple[str, ...] = NOT_IMPLEMENTED


def native() -> str:
    """The :data:`ARCHES` key of this process's ABI.

    Raises:
        Unavailable: no table for this machine, or a 32-bit Python on a 64-bit kernel (its
            syscalls arrive under a compat ``AUDIT_ARCH``, which the program kills).
    """
    machine = {"arm64": "aarch64"}.get(os.uname().machine, os.uname().machine)
    if machine not in ARCHES:
        raise Unavailable(f"seccomp: no syscall table for {machine!r} (have: {', '.join(ARCHES)}); "
                          "fix: run the gate on x86_64 or aarch64, or use the bwrap sandbox")
    if sys.maxsize <= 2**32:
        raise Unavailable(f"seccomp: a 32-bit Python on {machine}; fix: use a 64-bit Python")
    return machine


class _Assembler:
    """Instructions with symbolic jump targets; :meth:`bytes` resolves them (forward, ≤ 255)."""

    def __init__(self) -> None:
        self.insns: list[tuple[int, str | int, str | int, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.insns)

    def op(self, code: int, k: int, jt: str | int = 0, jf: str | int = 0) -> None:
        self.insns.append((code, jt, jf, k))

    def bytes(self) -> bytes:
        out = []
        for i, (code, jt, jf, k) in enumerate(self.insns):
            offsets = [self.labels[t] - i - 1 if isinstance(t, str) else t for t in (jt, jf)]
            if not all(0 <= off <= 255 for off in offsets):
                raise ValueError(f"seccomp: jump out of range at instruction {i}: {offsets}")
            out.append(_INSN.pack(code, offsets[0], offsets[1], k))
        return b"".join(out)


def program(arch: str, rules: Rules | None = None) -> bytes:
    """The filter for ABI ``arch`` (a key of :data:`ARCHES`) as ``struct sock_filter`` bytes, in the
    order of this module's docstring.

    Raises:
        KeyError: an unknown ``arch`` or a rule naming a syscall not in the table.
    """
    rules = rules or Rules()
    spec = ARCHES[arch]
    nrs = spec.numbers()
    unknown = [name for name in (*rules.deny, *rules.enosys) if name not in NUMBERS]
    if unknown:  # a typo in the rules is an error, never a syscall silently allowed
        raise KeyError(f"seccomp: no syscall table entry for {unknown}")
    a = _Assembler()
    a.op(_LD_W_ABS, _ARCH)
    a.op(_JEQ_K, spec.audit, 0, "kill")
    a.op(_LD_W_ABS, _NR)
    if spec.x32:
        a.op(_JGE_K, X32_SYSCALL_BIT, "kill", 0)
    a.op(_JGT_K, LAST_NUMBER, "enosys", 0)
    for name in INSPECTED:
        a.op(_JEQ_K, nrs[name], name, 0)
    for name in rules.enosys:
        if name in nrs:
            a.op(_JEQ_K, nrs[name], "enosys", 0)
    for name in rules.deny:
        if name in nrs:
            a.op(_JEQ_K, nrs[name], "eperm", 0)
    a.op(_RET_K, SECCOMP_RET_ALLOW)  # the fall-through; the argument rules below jump to "allow"
    a.label("clone")
    a.op(_LD_W_ABS, _arg(0))
    a.op(_JSET_K, CLONE_NAMESPACES, "eperm", "allow")
    a.label("socketpair")
    a.op(_LD_W_ABS, _arg(0))
    a.op(_JEQ_K, AF_UNIX, 0, "eperm")
    a.op(_LD_W_ABS, _arg(1))
    a.op(_ALU_AND_K, SOCK_TYPE_MASK)
    a.op(_JEQ_K, SOCK_STREAM, "allow", 0)
    a.op(_JEQ_K, SOCK_SEQPACKET, "allow", "eperm")
    a.label("ioctl")
    a.op(_LD_W_ABS, _arg(1))
    a.op(_JEQ_K, TIOCSTI, "eperm", 0)
    a.op(_JEQ_K, TIOCLINUX, "eperm", "allow")
    for name, wanted in SELF_ONLY.items():
        a.label(name)
        for index, value in wanted:
            a.op(_LD_W_ABS, _arg(index))
            a.op(_JEQ_K, value, 0, "eperm")
        a.op(_RET_K, SECCOMP_RET_ALLOW)
    a.label("eperm")
    a.op(_RET_K, SECCOMP_RET_ERRNO | errno.EPERM)
    a.label("enosys")
    a.op(_RET_K, SECCOMP_RET_ERRNO | errno.ENOSYS)
    a.label("kill")
    a.op(_RET_K, SECCOMP_RET_KILL_PROCESS)
    a.label("allow")  # classic BPF jumps only forward, so the rules' shared exits come last
    a.op(_RET_K, SECCOMP_RET_ALLOW)
    return a.bytes()


def describe(rules: Rules | None = None) -> dict[str, object]:
    """What the filter refuses, as JSON-able evidence (names, not numbers)."""
    rules = rules or Rules()
    return {
        "eperm": sorted(rules.deny), "enosys": sorted(rules.enosys), "enosys_above": LAST_NUMBER,
        "clone": "EPERM with a CLONE_NEW* flag", "socketpair": "AF_UNIX stream or seqpacket only",
        "ioctl": "EPERM for TIOCSTI and TIOCLINUX", "foreign_abi": "kill process (other AUDIT_ARCH, x32)",
        "self_only": sorted(SELF_ONLY),
    }


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]  # struct sock_fprog


def available() -> str:
    """``""`` when :func:`install` can work here, else why not and the fix; installs nothing.
    It reads ``/proc/sys/kernel/seccomp``: call it before Landlock hides ``/proc``."""
    try:
        native()
    except Unavailable as exc:
        return str(exc)
    libc = _libc()
    if libc.prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0:
        return f"seccomp: prctl(PR_GET_SECCOMP): {os.strerror(ctypes.get_errno())}; fix: a kernel with CONFIG_SECCOMP"
    try:
        with open(ACTIONS_AVAIL) as f:
            actions = f.read().split()
    except FileNotFoundError:
        return f"seccomp: no {ACTIONS_AVAIL} (kernel older than 4.14); fix: Linux 4.14 or newer"
    except OSError:  # unreadable (under Landlock, say): seccomp() itself will tell
        return ""
    missing = [a for a in ("kill_process", "errno", "allow") if a not in actions]
    if missing:
        return f"seccomp: the kernel lacks the actions {missing}; fix: Linux 4.14 or newer"
    return ""


def load(prog: bytes) -> None:
    """Install ``prog`` (from :func:`program`) on every thread of this process (``TSYNC``).
    ``no_new_privs`` must already be set unless the process has ``CAP_SYS_ADMIN``.

    Raises:
        Unavailable: the kernel refused; the message names the errno and a fix.
    """
    libc = _libc()
    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = _SockFprog(len(prog) // _INSN.size, ctypes.cast(buf, ctypes.c_void_p))
    nr = ARCHES[native()].numbers()["seccomp"]
    ret = libc.syscall(nr, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, ctypes.byref(fprog))
    if ret > 0:  # TSYNC: the id of a thread that could not take the filter
        raise Unavailable(f"seccomp: thread {ret} cannot take the filter (it has a different one); "
                          "fix: install before starting threads")
    if ret < 0:
        err = ctypes.get_errno()
        fix = {
            errno.EACCES: "set no_new_privs first (install() does)",
            errno.EINVAL: "a kernel with CONFIG_SECCOMP_FILTER (3.17 or newer)",
            errno.ENOSYS: "a kernel with the seccomp() syscall (3.17 or newer)",
            errno.EPERM: "the container's own seccomp profile refuses seccomp(); allow it",
        }.get(err, "report this")
        raise Unavailable(f"seccomp: seccomp(SET_MODE_FILTER): {errno.errorcode.get(err, err)} "
                          f"({os.strerror(err)}); fix: {fix}")


def install(rules: Rules | None = None) -> None:
    """Set ``no_new_privs`` and install this ABI's filter on the whole process, for good.

    Call it after the worker's own imports and before any candidate code: from then on, every
    ``socket()`` fails with ``PermissionError`` (Python imports that open sockets at import time
    must come first).

    Raises:
        Unavailable: no table for this ABI (:func:`native`), or the kernel refused (:func:`load`).
    """
    arch = native()
    libc = _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise Unavailable(f"seccomp: prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}; fix: Linux 3.5 or newer")
    load(program(arch, rules))
