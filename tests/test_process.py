"""The gate's own process keeps its secrets from the processes it starts (host/process.py).

Real processes: a child plays the gate (it calls keep_secrets), and readers of its /proc entries play
the oracle process: with the gate's uid, with and without CAP_SYS_PTRACE."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from verdict_gate.host import process

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

CANARY = "ghs_canary0123456789abcdefghijklmnopqrst"
ROOT = Path(__file__).resolve().parent.parent
GATE = f"""
import os, subprocess, sys
sys.path.insert(0, {str(ROOT)!r})
from verdict_gate.host import process
blanked = process.keep_secrets() if sys.argv[1] == "keep" else []
child = subprocess.run(["env"], capture_output=True, text=True).stdout  # inherits the C environment
print(",".join(sorted(blanked)), os.environ["GITHUB_TOKEN"] == {CANARY!r}, "GITHUB_TOKEN={CANARY}" in child, flush=True)
sys.stdin.read()
"""
PR_CAPBSET_DROP = 24


@pytest.fixture
def gate() -> Iterator[Any]:
    started: list[subprocess.Popen[str]] = []

    def start(mode: str) -> tuple[subprocess.Popen[str], str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GITHUB_TOKEN": CANARY,
               "INPUT_GITHUB-TOKEN": CANARY, "REGISTRY_PASSWORD": "hunter2", "PLAIN": "stays"}
        # The gate and its oracle have the same capabilities (as an ordinary user's processes, or root's in a
        # Docker container): none here. A reader with fewer than its target never reads it, dumpable or not.
        proc = subprocess.Popen([sys.executable, "-c", GATE, mode], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, preexec_fn=_no_capabilities)
        started.append(proc)
        assert proc.stdout is not None
        return proc, proc.stdout.readline().strip()

    yield start
    for proc in started:
        proc.communicate(timeout=30)


def _no_capabilities() -> None:
    # As root: no capability in the reader after exec (CAP_SYS_PTRACE grants the read, and on recent kernels
    # CAP_SYS_ADMIN or CAP_PERFMON too; Docker's default set has none of the three).
    libc = ctypes.CDLL(None, use_errno=True)
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def read_environ(pid: int, *, privileged: bool) -> str:
    """The oracle's view: ``/proc/PID/environ`` read by a process of the same uid, with root's capabilities
    or with none (an ordinary user's; root in a Docker container with the default set is alike here)."""
    code = f"import sys\ntry: print(open('/proc/{pid}/environ', 'rb').read().decode(errors='replace'))\n" \
           "except PermissionError: print('PermissionError')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          preexec_fn=None if privileged else _no_capabilities).stdout





@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")
def test_the_gates_environ_is_closed_to_its_children_and_blank_where_open(gate: Any) -> None:
    proc, said = gate("keep")
    # Every secret blanked, and still there for the gate itself and the processes it starts.
    assert said == "GITHUB_TOKEN,INPUT_GITHUB-TOKEN,REGISTRY_PASSWORD True True", said
    assert read_environ(proc.pid, privileged=False) == "PermissionError\n"  # not dumpable
    if os.geteuid() == 0:  # a reader with CAP_SYS_PTRACE sees the block, with the values blanked
        seen = read_environ(proc.pid, privileged=True)
        assert "PLAIN=stays" in seen and CANARY not in seen and "hunter2" not in seen
        assert "GITHUB_TOKEN=" + "*" * len(CANARY) in seen


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")
def test_without_it_the_token_is_in_reach(gate: Any) -> None:
    # The control: the same readers, a gate that does not keep its secrets.
    proc, said = gate("open")
    assert said == "True True"  # nothing blanked (the line starts with the empty list)
    assert CANARY in read_environ(proc.pid, privileged=False)


def test_secret_names() -> None:
    assert all(process.is_secret(n) for n in ("GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "ACTIONS_RUNTIME_TOKEN",
                                               "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "AWS_SECRET_ACCESS_KEY",
                                               "npm_token", "PYPI_PASSWORD"))
    assert not any(process.is_secret(n) for n in ("PATH", "HOME", "GITHUB_REPOSITORY", "GITHUB_SHA",
                                                   "RUNNER_TEMP", "INPUT_ORACLE-PACK"))
