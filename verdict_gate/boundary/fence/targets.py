"""What the worker's probes try to reach, set up by the oracle process, and what their report proves
(docs/design.md §8.2, "Fences are proven by trying"). The probes themselves run in the worker (:mod:`.probe`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import Unavailable
from .policy import FENCES, Policy

# The Docker daemon's sockets: a worker that reaches one can start a privileged container.
DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")


class Targets:
    """What the worker's probe tries to reach, set up by the oracle process (docs/design.md §8.2,
    "Fences are proven by trying"): a loopback TCP listener, a Unix socket (a stand-in for
    ``/var/run/docker.sock``) and an abstract one, and a canary file in a private directory.

    Args:
        scratch: where to make that directory (``None``: the system's temp dir).
        pid: the process the worker must neither signal nor trace (this oracle process).
    """

    def __init__(self, scratch: str | None, pid: int) -> None:
        import socket
        import tempfile

        self.pid = pid
        self.dir = tempfile.mkdtemp(prefix="fence-", dir=scratch)
        self.canary = os.path.join(self.dir, "canary")
        with open(self.canary, "w", encoding="ascii") as fh:
            fh.write("verdict-gate fence canary: a candidate worker that reads this is not fenced\n")
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(4)
        self.tcp.setblocking(False)
        self.unix_path = os.path.join(self.dir, "s")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract_name = f"verdict-gate-probe-{pid}-{os.urandom(4).hex()}"
        for sock, address in ((self.unix, self.unix_path), (self.abstract, "\0" + self.abstract_name)):
            try:
                sock.bind(address)
                sock.listen(4)
                sock.setblocking(False)
            except OSError:  # a path too long for AF_UNIX: that probe proves nothing, so it is left out
                sock.close()
        self.docker = [p for p in DOCKER_SOCKETS if os.path.exists(p)]

    def probes(self, cwd: str, secrets: Sequence[str]) -> dict[str, Any]:
        """Label → ``[probe name, its arguments]`` (:mod:`.probe`), for :class:`.policy.Policy`."""
        host, port = self.tcp.getsockname()
        out: dict[str, Any] = {
            "tcp": ["tcp", [host, port]], "udp": ["udp", [host, port]], "raw": ["raw", []],
            "netlink": ["netlink", []], "io_uring": ["io_uring", []],
            "read": ["read", [[self.canary, *secrets]]], "write": ["write", [cwd]],
            "signal": ["signal", [self.pid]], "ptrace": ["ptrace", [self.pid]], "environ": ["environ", [self.pid]],
        }
        if self.unix.fileno() >= 0:
            out["unix"] = ["unix", [self.unix_path]]
        if self.abstract.fileno() >= 0:
            out["abstract_unix"] = ["abstract_unix", [self.abstract_name]]
        for i, path in enumerate(self.docker):
            out[f"docker_socket{i or ''}"] = ["unix", [path]]
        return out

    def reached(self) -> str:
        """What connected to a listener since the probe (``""``: nothing did)."""
        got = []
        for what, sock in (("tcp", self.tcp), ("unix", self.unix), ("abstract", self.abstract)):
            if sock.fileno() < 0:
                continue
            try:
                conn, _addr = sock.accept()
            except (BlockingIOError, OSError):
                continue
            conn.close()
            got.append(f"the {what} listener was connected to")
        return "; ".join(got)

    def close(self) -> None:
        import shutil

        for sock in (self.tcp, self.unix, self.abstract):
            sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def reachable(path: str, uid: int) -> None:
    """Raise :class:`.errors.Unavailable` when a process of ``uid`` (and no group) cannot reach ``path``:
    some directory above it is not searchable by others (a private ``$TMPDIR``), naming it and the fix."""
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    for i in range(1, len(parts)):
        directory = os.sep.join(parts[:i]) or os.sep
        st = os.stat(directory)
        if st.st_uid != uid and not st.st_mode & 0o001:
            raise Unavailable(
                f"the worker's own uid {uid} cannot reach {real}: {directory} is not searchable by other users "
                f"(mode {st.st_mode & 0o7777:o}); fix: give the gate a temp dir others can traverse (TMPDIR=/tmp, "
                f"or chmod o+x {directory})")


def judge(policy: Policy, report: Mapping[str, Any], targets: Targets) -> dict[str, Any]:
    """The isolation record of a worker started by ``policy``, from its first answer ``report`` (the fences,
    probes and uid it found, what it confined itself with) and what reached ``targets`` since.

    Returns:
        ``{"level", "method", "fences", "probes", "uid", "landlock", "seccomp", "notes"}``.
    Raises:
        Unavailable: a fence the method claims is open (a probe or a listener found it so, or the worker
            shares the gate's uid where it should have one of its own), or a required in-process fence
            could not be applied; the message names each.
        KeyError, TypeError, ValueError: a report of the wrong shape.
    """
    fences = {f: report["fences"][f] is True for f in FENCES}
    probes, confined = dict(report["probes"]), dict(report["confined"])
    reached = targets.reached()
    if reached:  # the listener saw a connection: the network fence is open, whatever the probe said
        fences["network"] = False
        probes["listener"] = {"held": False, "detail": reached}
    if policy.uid is not None and report.get("uid") == os.geteuid():
        fences["processes"] = False
    open_ = [f for f, claimed in policy.claims.items() if claimed and not fences[f]]
    errors = [str(e) for e in confined.get("errors") or []]
    if open_ or errors:
        failed = "; ".join(f"{n}: {r.get('detail')}" for n, r in probes.items()
                           if isinstance(r, dict) and not r.get("held"))
        raise Unavailable(f"the {policy.method} sandbox claims the {', '.join(open_) or 'in-process'} fence(s), "
                          f"but the worker found them open: {'; '.join(errors) or failed}")
    return {"level": policy.level, "method": policy.method, "fences": fences, "probes": probes,
            "uid": report.get("uid"), "landlock": confined.get("landlock"),
            "seccomp": bool(confined.get("seccomp")), "notes": list(confined.get("notes") or [])}
