"""What the candidate worker's sandbox can use inside the action's container, printed as JSON.

A diagnostic of `make container-test` (not a case): run in the action image as root under the
engine's default seccomp profile and capabilities, like the action, with --entrypoint. It says
which of the primitives of docs/design.md §8.2 this engine allows: user namespaces (bubblewrap),
Landlock (and its ABI), seccomp filters and no_new_privs.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import subprocess

SYS_SECCOMP, SYS_UNSHARE, SYS_LANDLOCK_CREATE_RULESET = 317, 272, 444  # x86_64
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
LANDLOCK_CREATE_RULESET_VERSION = 1
SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_KILL_PROCESS = 2, 0x80000000
PR_GET_NO_NEW_PRIVS = 39


def syscall(libc: ctypes.CDLL, number: int, *args: object) -> str:
    result = libc.syscall(number, *args)
    return f"ok ({result})" if result >= 0 else f"refused: {os.strerror(ctypes.get_errno())}"


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    facts: dict[str, object] = {"kernel": platform.release(), "uid": os.geteuid()}
    facts["landlock ABI"] = syscall(libc, SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    action = ctypes.c_uint32(SECCOMP_RET_KILL_PROCESS)
    facts["seccomp filters"] = syscall(libc, SYS_SECCOMP, SECCOMP_GET_ACTION_AVAIL, 0, ctypes.byref(action))
    facts["no_new_privs already set"] = libc.prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1
    pid = os.fork()
    if pid == 0:  # unshare in a child: the namespaces must not stick to this process
        code = 0 if libc.syscall(SYS_UNSHARE, CLONE_NEWUSER) == 0 else 10 + ctypes.get_errno()
        os._exit(code)
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    facts["unshare(CLONE_NEWUSER)"] = "ok" if status == 0 else f"refused: {os.strerror(status - 10)}"
    for name, argv in (("bwrap with a user namespace", ["--unshare-all", "--unshare-user"]),
                       ("bwrap as root", ["--unshare-all"])):
        proc = subprocess.run(["bwrap", *argv, "--ro-bind", "/", "/", "true"], capture_output=True, text=True)
        facts[name] = "ok" if proc.returncode == 0 else f"refused: {proc.stderr.strip()[:160]}"
    with open("/proc/self/status", encoding="ascii") as fh:
        facts.update({k: v.strip() for k, _, v in (line.partition(":") for line in fh)
                      if k in ("CapEff", "CapBnd", "Seccomp", "NoNewPrivs")})
    print(json.dumps(facts))


if __name__ == "__main__":
    main()
