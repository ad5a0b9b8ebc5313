"""The oracle side of the isolation boundary: proxy modules, handles, records, mirrored exceptions.

Part of the boundary package: standard library only, loaded by path by the pytest plugin (:mod:`.load`).

:class:`Finder` is an import hook (first on ``sys.meta_path``) for the top-level names the
candidate's ``python_path`` provides. A property's ``from orders.tax import tax_cents`` then gets a
:class:`ProxyModule` whose attributes come from the candidate worker (:class:`Client`), so the
candidate's code never executes in the oracle process. What comes back:

- plain values (exact builtin types) as themselves;
- dataclass, named tuple and attrs instances as local frozen *records* of a mirror class that
  compare by value here; calling the mirror class constructs in the worker;
- enum members as :class:`EnumMember` records (equal by class and name);
- exception classes as local mirror classes ranked like the candidate's (``pytest.raises`` works);
- anything else as a :class:`Handle`: attribute reads, calls, ``len``, iteration, indexing and
  ``repr`` go to the worker. A handle never equals, orders against or hashes like a value the
  oracle computed: ``handle == 5`` is ``False`` whatever the candidate's ``__eq__`` says. Between two
  handles, the comparison is the candidate's own answer.

A worker that dies, hangs up, floods its pipe or sends a malformed frame ends the property as
``crashed``: the failure is recorded out of band (:attr:`Client.failure`), so an oracle that
catches the exception cannot turn it into a pass.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import threading
import types
from collections.abc import Iterable, Sequence
from typing import Any

from . import codec, sandbox
from .load import WORKER

HANDSHAKE_TIMEOUT_S = 60.0


class WorkerCrashed(Exception):
    """The candidate worker died, hung up, or sent something malformed or oversized."""


class NotCrossable(TypeError):
    """A value that cannot cross the isolation boundary (an oracle function, an unknown object)."""


class IsolationUnavailable(Exception):
    """The host cannot give the isolation level the catalog asks for."""


# --- the client ---------------------------------------------------------------------------------------


class _Targets:
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
        """Label → ``[probe name, its arguments]`` (:mod:`.probe`), for :class:`sandbox.Policy`."""
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


def _reachable(path: str, uid: int) -> None:
    """Raise :class:`sandbox.Unavailable` when a process of ``uid`` (and no group) cannot reach ``path``:
    some directory above it is not searchable by others (a private ``$TMPDIR``), naming it and the fix."""
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    for i in range(1, len(parts)):
        directory = os.sep.join(parts[:i]) or os.sep
        st = os.stat(directory)
        if st.st_uid != uid and not st.st_mode & 0o001:
            raise sandbox.Unavailable(
                f"the worker's own uid {uid} cannot reach {real}: {directory} is not searchable by other users "
                f"(mode {st.st_mode & 0o7777:o}); fix: give the gate a temp dir others can traverse (TMPDIR=/tmp, "
                f"or chmod o+x {directory})")


# The Docker daemon's sockets: a worker that reaches one can start a privileged container.
DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")


class Client:
    """One candidate worker per oracle process, restarted after a crash (for the next property).

    Args:
        level: ``sandbox`` or ``process``.
        python_path: candidate directories (absolute) the worker imports from.
        cwd: the candidate tree (the worker's working directory).
        readonly: directories the worker reads besides the interpreter (the tree, the fixtures).
        method: how the level is given (:func:`sandbox.method`, chosen once by the gate for the run;
            ``None``: chosen here). userns, own_uid: :func:`sandbox.bwrap_userns` and
            :func:`sandbox.own_uid_works` as the gate found them (``None``: probed here).
        scratch: a private directory of this oracle process: the worker's temp dir and the fence
            probes' targets (a canary, a Unix socket) are made in it (``None``: a temp dir of its own).
        secrets: files the worker must not read (the repository's ``.git/config``, a canary in
            ``$HOME``); its probe tries to.
        limits: overrides of :data:`sandbox.DEFAULT_LIMITS` (the catalog's ``limits``).
        cap: the largest message accepted from the worker, in bytes.
        answer_timeout: seconds one answer may take (an import that hangs at collection, when no
            property's own timeout runs yet); ``None`` waits for the runner's property timeout.
        worker_cpu: the CPU the worker pins itself to (``None``: the oracle process's own).
        spin_s: seconds each side polls its pipe before sleeping (:class:`codec.Reader`); for a
            worker with a CPU of its own, where waking a sleeping process costs more than a call.
        bytecode: this process's bytecode cache (``sys.pycache_prefix``), into which only oracle code
            was compiled; a fenced worker reads the interpreter's part of it, read-only
            (:func:`sandbox.bytecode_dirs`), instead of compiling the standard library at every start;
            a ``process`` worker reads none.
    """

    def __init__(self, level: str, python_path: Sequence[str], cwd: str, readonly: Sequence[str] = (), *,
                 method: str | None = None, userns: bool | None = None, own_uid: bool | None = None,
                 scratch: str | None = None,
                 secrets: Sequence[str] = (),
                 limits: dict[str, int] | None = None, cap: int = codec.MAX_MESSAGE,
                 answer_timeout: float | None = None, worker_cpu: int | None = None, spin_s: float = 0.0,
                 bytecode: str | None = None) -> None:
        self.answer_timeout, self.bytecode = answer_timeout, bytecode
        self.worker_cpu, self.spin_s = worker_cpu, spin_s
        self.reader = codec.Reader(-1)
        self.level, self.method, self.python_path, self.cwd = level, method, list(python_path), cwd
        self.userns, self.own_uid = userns, own_uid
        self.readonly, self.limits, self.cap = list(readonly), limits, cap
        self.scratch, self.secrets = scratch, list(secrets)
        self.proc: subprocess.Popen[bytes] | None = None
        self.wfd = self.rfd = -1
        self.generation = 0
        self.failure: str | None = None  # set on a crash; the plugin reads and clears it per property
        self.info: dict[str, Any] = {"level": level, "method": sandbox.UNKNOWN, "fences": {}}
        self.lock = threading.RLock()
        self.unavailable: str | None = None  # why the level could not be given, once a start showed it
        self.crashes = 0  # workers this process lost to the candidate (a crash, a hang-up, a flood)
        self.releases: list[int] = []
        self._targets: _Targets | None = None
        self._tmp: str | None = None
        self._uid: int | None = None  # the running worker's own uid, where it has one

    # lifecycle

    def start(self, wait: bool = True) -> None:
        """Start the worker and send it its ``hello`` (with its :class:`sandbox.Policy`); with ``wait`` also
        take its fence report (else the first request or :meth:`ready` does, so pytest's collection runs
        while the worker starts).

        Raises:
            IsolationUnavailable: the level cannot be given here, the worker did not start, or its
                report shows a fence the method claims open.
        """
        try:
            name = self.method or sandbox.method(self.level)
            if self._targets is None:
                self._targets = _Targets(self.scratch, os.getpid())
            self._tmp = self._worker_tmp(name)
            pol = sandbox.policy(self.level, name, readonly=[*self.readonly, self.cwd, *self.python_path],
                                 tmp=self._tmp or "/tmp", cwd=self.cwd, limits=self.limits, bytecode=self.bytecode,
                                 probes=self._targets.probes(self.cwd, self.secrets), userns=self.userns,
                                 generation=self.generation + 1, own_uid=self.own_uid)
            self._uid = pol.uid
            if pol.uid is not None:
                if self._tmp:
                    os.chown(self._tmp, pol.uid, pol.uid)
                for path in (self.cwd, self._tmp or self.cwd):
                    _reachable(path, pol.uid)
            how = sandbox.launch(pol, bytecode=self.bytecode)
        except (sandbox.Unavailable, OSError) as exc:
            self.unavailable = str(exc)
            raise IsolationUnavailable(self.unavailable) from None
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        argv = [*how.argv, sys.executable, "-P", "-s", "-B", WORKER, str(to_worker_r), str(from_worker_w)]
        assert self._targets is not None
        # The worker's stderr goes to a file of the oracle's (capped by its RLIMIT_FSIZE): its last lines
        # say why a worker that never answered died (a Python it cannot run, a fence that failed to apply).
        self._stderr = os.path.join(self._targets.dir, f"worker-{self.generation + 1}.stderr")
        try:
            with open(self._stderr, "wb") as err:
                self.proc = subprocess.Popen(argv, pass_fds=(to_worker_r, from_worker_w), env=how.env,
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                             stderr=err, cwd="/", preexec_fn=how.preexec,
                                             start_new_session=how.new_session)
        except OSError as exc:
            self.unavailable = f"the candidate worker ({name}) did not start: {exc}"
            raise IsolationUnavailable(self.unavailable) from None
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        self.wfd, self.rfd = to_worker_w, from_worker_r
        self.reader = codec.Reader(from_worker_r, self.spin_s)
        self.generation += 1
        self.releases.clear()
        hello = {"python_path": self.python_path, "cwd": self.cwd, "policy": pol.to_json(),
                 "cpu": self.worker_cpu, "spin_s": self.spin_s}
        try:
            codec.write_frame(self.wfd, hello)
        except OSError as exc:
            self.kill()
            self.unavailable = f"the candidate worker ({name}) did not start: {exc}"
            raise IsolationUnavailable(self.unavailable) from None
        self._policy = pol
        if wait:
            self.ready()

    _policy: Any = None

    _stderr: str | None = None

    def _stderr_tail(self, limit: int = 1500) -> str:
        """``; it said: …`` with the last lines the worker wrote to stderr, or ``""``."""
        try:
            with open(self._stderr or "", "rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - limit))
                text = fh.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""
        return f"; it said: {' | '.join(text.splitlines()[-6:])}" if text else ""

    def _worker_tmp(self, name: str) -> str | None:
        """A fresh private temp dir for a Landlock or ``process`` worker (bubblewrap gives its own ``/tmp``)."""
        if name == "bwrap":
            return None
        import tempfile

        if self._tmp:
            import shutil

            shutil.rmtree(self._tmp, ignore_errors=True)
        return tempfile.mkdtemp(prefix="worker-", dir=self.scratch)

    def ready(self) -> None:
        """Take the started worker's fence report (once per worker); see :meth:`start`."""
        pol, self._policy = self._policy, None
        if pol is None:
            return
        try:
            if not self.reader.ready(HANDSHAKE_TIMEOUT_S):
                raise codec.ProtocolError(f"no answer within {HANDSHAKE_TIMEOUT_S:g} s")
            answer = self.reader.frame(cap=1 << 20, timeout=HANDSHAKE_TIMEOUT_S)
            report = answer["ok"]
            fences = {f: report["fences"][f] is True for f in sandbox.FENCES}
            probes, confined = dict(report["probes"]), dict(report["confined"])
        except (OSError, codec.ProtocolError, KeyError, TypeError, ValueError) as exc:
            self.kill()
            self.unavailable = f"the candidate worker ({pol.method}) did not start: {exc}{self._stderr_tail()}"
            raise IsolationUnavailable(self.unavailable) from None
        assert self._targets is not None
        reached = self._targets.reached()
        if reached:  # the listener saw a connection: the network fence is open, whatever the probe said
            fences["network"] = False
            probes["listener"] = {"held": False, "detail": reached}
        if pol.uid is not None and report.get("uid") == os.geteuid():
            fences["processes"] = False
        open_ = [f for f, claimed in pol.claims.items() if claimed and not fences[f]]
        errors = [str(e) for e in confined.get("errors") or []]
        if open_ or errors:
            self.kill()
            failed = "; ".join(f"{n}: {r.get('detail')}" for n, r in probes.items()
                               if isinstance(r, dict) and not r.get("held"))
            self.unavailable = (f"the {pol.method} sandbox claims the {', '.join(open_) or 'in-process'} fence(s), "
                                f"but the worker found them open: {'; '.join(errors) or failed}")
            raise IsolationUnavailable(self.unavailable)
        self.info = {"level": pol.level, "method": pol.method, "fences": fences, "probes": probes,
                     "uid": report.get("uid"), "landlock": confined.get("landlock"),
                     "seccomp": bool(confined.get("seccomp")), "notes": list(confined.get("notes") or [])}

    def close(self) -> None:
        """Kill the worker and remove what it was given: its temp dir and the probes' targets."""
        self.kill()
        if self._tmp:
            import shutil

            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if self._targets is not None:
            self._targets.close()
            self._targets = None

    def kill(self) -> None:
        for fd in (self.wfd, self.rfd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.wfd = self.rfd = -1
        if self.proc is not None:
            try:
                if self.proc.poll() is None:
                    self.proc.kill()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.SubprocessError):
                pass
            self.proc = None
        if self._uid is not None:  # everything it started, daemons and fork chains included (as root)
            sandbox.kill_uid(self._uid)
            self._uid = None

    def new_property(self) -> None:
        """Clear the last property's failure; a crashed worker is started afresh on next use."""
        self.failure = None

    def _crash(self, why: str) -> WorkerCrashed:
        self.crashes += 1
        self.failure = self.failure or why
        self.kill()
        return WorkerCrashed(why)

    # requests

    def request(self, message: dict[str, Any]) -> Any:
        """Send ``message``, return the decoded ``ok`` value.

        Raises:
            the candidate's exception (mirrored), :class:`NotCrossable` for a value the worker could
            not send, :class:`WorkerCrashed` (and :attr:`failure` set) for any protocol failure,
            :class:`IsolationUnavailable` when the worker cannot be started.
        """
        with self.lock:
            if self.failure is not None:
                raise WorkerCrashed(f"the candidate worker crashed earlier in this property: {self.failure}")
            if self.proc is None:
                self.start()
            else:
                self.ready()
            if self.releases:
                message["rel"], self.releases = self.releases, []
            try:
                codec.write_frame(self.wfd, message)
                if self.answer_timeout is not None and not self.reader.ready(self.answer_timeout):
                    raise self._crash(f"the candidate worker did not answer {message.get('op')} "
                                      f"{str(message.get('mod') or message.get('name') or '')[:80]!r} within "
                                      f"{self.answer_timeout:g} s (it hangs?)")
                answer = self.reader.frame(cap=self.cap, timeout=self.answer_timeout)
            except (OSError, codec.ProtocolError) as exc:
                code = self.proc.poll() if self.proc is not None else None
                exited = f" (the worker exited with {code})" if code is not None else ""
                raise self._crash(f"{exc}{exited}") from None
            except ValueError as exc:
                raise NotCrossable(f"a value cannot be sent to the candidate worker ({exc})") from None
            generation = self.generation
        mutated = answer.pop("mut", None) if isinstance(answer, dict) and "ok" in answer else None
        if not isinstance(answer, dict) or len(answer) != 1:
            raise self._crash("the worker sent an answer of an unknown shape")
        ((kind, body),) = answer.items()
        if mutated is not None:
            try:
                self._apply_mutations(message, mutated, generation)
            except (codec.ProtocolError, KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
                raise self._crash(f"the worker sent malformed argument changes ({type(err).__name__})") from None
        error: BaseException
        try:
            if kind == "ok":
                return decode(self, body, generation)
            if kind == "raise":
                error = exception_from(self, body, generation)
            elif kind == "fail":
                error = NotCrossable(f"the candidate worker reports: {str(body)[:2000]}")
            else:
                raise codec.ProtocolError(f"an answer of kind {str(kind)[:20]!r}")
        except (codec.ProtocolError, KeyError, TypeError, ValueError, IndexError, AttributeError,
                RecursionError) as err:
            raise self._crash(f"the worker sent a malformed answer ({type(err).__name__}: {err})") from None
        raise error

    def encode(self, value: Any) -> Any:
        return codec.encode(value, lambda obj: encode_local(self, obj))

    def call(self, target: dict[str, Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """Call a candidate callable; lists, dicts, sets and bytearrays passed to it are changed here in
        place as the candidate changed its copies (the oracle sees in-place APIs as they are)."""
        message = {"op": "call", "obj": target, "args": self.encode(list(args)),
                   "kw": [[k, self.encode(v)] for k, v in kwargs.items()]}
        self._pending_args = (list(args), dict(kwargs))
        try:
            return self.request(message)
        finally:
            self._pending_args = None

    _pending_args: tuple[list[Any], dict[str, Any]] | None = None

    def _apply_mutations(self, message: dict[str, Any], mutated: Any, generation: int) -> None:
        if self._pending_args is None or message.get("op") != "call":
            return
        args, kwargs = self._pending_args
        for key, tree in mutated:
            local = args[key] if isinstance(key, int) and 0 <= key < len(args) else kwargs.get(key)
            if local is None:
                continue
            new = decode(self, tree, generation)
            if type(local) is not type(new):
                raise TypeError("an argument changed type")
            if isinstance(local, (list, bytearray)):
                local[:] = new
            elif isinstance(local, (dict, set)):
                local.clear()
                local.update(new)


# --- local objects ------------------------------------------------------------------------------------


def _target(desc: dict[str, Any], generation: int, client: Client) -> dict[str, Any]:
    """What the worker needs to find an object again: its id (this worker only) and/or its reference."""
    out: dict[str, Any] = {}
    if desc.get("ref"):
        out["ref"] = desc["ref"]
    if desc.get("id") is not None and generation == client.generation and client.proc is not None:
        out["id"] = desc["id"]
    return out


class Handle:
    """A candidate object that stays in the worker; every operation is a request."""

    __slots__ = ("_vg_client", "_vg_desc", "_vg_gen", "__weakref__")

    # pytest (9.x, fixtures.py) reads `_mock_name` of every object a test module holds, each imported
    # candidate function included, to skip mocks: answered here, not by a round trip per file.
    _mock_name = None

    def __init__(self, client: Client, desc: dict[str, Any], generation: int) -> None:
        object.__setattr__(self, "_vg_client", client)
        object.__setattr__(self, "_vg_desc", desc)
        object.__setattr__(self, "_vg_gen", generation)

    def _vg_target(self) -> dict[str, Any]:
        target = _target(self._vg_desc, self._vg_gen, self._vg_client)
        if not target:
            raise WorkerCrashed("this candidate object belonged to a worker that has since been restarted")
        return target

    def _vg_op(self, name: str, *arg: Any) -> Any:
        message: dict[str, Any] = {"op": "dunder", "obj": self._vg_target(), "name": name}
        if arg:
            message["arg"] = self._vg_client.encode(arg[0])
        return self._vg_client.request(message)

    def _vg_type(self) -> str:
        names = self._vg_desc.get("t") or [["?", "?"]]
        return ".".join(names[0])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_vg_") or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return self._vg_client.request({"op": "getattr", "obj": self._vg_target(), "name": name})

    def __setattr__(self, name: str, value: Any) -> None:
        self._vg_client.request({"op": "setattr", "obj": self._vg_target(), "name": name,
                                 "value": self._vg_client.encode(value)})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._vg_client.call(self._vg_target(), args, kwargs)

    def __del__(self) -> None:
        try:
            desc, client = self._vg_desc, self._vg_client
            if desc.get("id") is not None and self._vg_gen == client.generation and len(client.releases) < 100_000:
                client.releases.append(desc["id"])
        except Exception:
            pass

    def _vg_checked(self, name: str, want: type, *arg: Any) -> Any:
        value = self._vg_op(name, *arg)
        if type(value) is not want:
            raise TypeError(f"{name} of the candidate's {self._vg_type()} returned {type(value).__name__}, "
                            f"not {want.__name__}")
        return value

    # repr() and format() (assertion messages, f-strings) mark the text as the candidate's: a failure
    # message quoting a candidate object can never read like one quoting a plain value, so a new bug
    # cannot dress its message up as a frozen failure's. str() stays the candidate's own text.
    def __repr__(self) -> str:
        try:
            return f"<candidate {self._vg_type()}: {self._vg_checked('__repr__', str)}>"
        except Exception as exc:  # repr must not raise inside pytest's reporting
            return f"<candidate {self._vg_type()} (repr failed: {type(exc).__name__})>"

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __str__(self) -> str:
        return self._vg_checked("__str__", str)

    def __len__(self) -> int:
        return self._vg_checked("__len__", int)

    def __bool__(self) -> bool:
        return self._vg_checked("__bool__", bool)

    def __int__(self) -> int:
        return self._vg_checked("__int__", int)

    def __float__(self) -> float:
        return self._vg_checked("__float__", float)

    def __index__(self) -> int:
        return self._vg_checked("__index__", int)

    def __hash__(self) -> int:
        return self._vg_checked("__hash__", int)

    def __contains__(self, item: Any) -> bool:
        return self._vg_checked("__contains__", bool, item)

    def __iter__(self) -> Any:
        iterator = self._vg_op("__iter__")
        return iterator if isinstance(iterator, Handle) else iter(iterator)

    def __next__(self) -> Any:
        return self._vg_op("__next__")

    def __reversed__(self) -> Any:
        return self._vg_op("__reversed__")

    def __getitem__(self, key: Any) -> Any:
        return self._vg_op("__getitem__", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._vg_op("__setitem__", (key, value))

    def __delitem__(self, key: Any) -> None:
        self._vg_op("__delitem__", key)

    def __enter__(self) -> Any:
        return self._vg_op("__enter__")

    def __exit__(self, *exc: Any) -> Any:
        return self._vg_op("__exit__")

    def _vg_peer(self, other: Any) -> bool:
        return isinstance(other, Handle) and other._vg_client is self._vg_client

    # Comparisons: the candidate answers only about two of its own objects; against a value the oracle
    # computed, a handle is never equal and never ordered (a lying __eq__ cannot reach the oracle).
    def __eq__(self, other: Any) -> Any:
        return self._vg_op("__eq__", other) if self._vg_peer(other) else NotImplemented

    def __ne__(self, other: Any) -> Any:
        return self._vg_op("__ne__", other) if self._vg_peer(other) else NotImplemented

    def __lt__(self, other: Any) -> Any:
        return self._vg_op("__lt__", other) if self._vg_peer(other) else NotImplemented

    def __le__(self, other: Any) -> Any:
        return self._vg_op("__le__", other) if self._vg_peer(other) else NotImplemented

    def __gt__(self, other: Any) -> Any:
        return self._vg_op("__gt__", other) if self._vg_peer(other) else NotImplemented

    def __ge__(self, other: Any) -> Any:
        return self._vg_op("__ge__", other) if self._vg_peer(other) else NotImplemented

    def __neg__(self) -> Any:
        return self._vg_op("__neg__")

    def __pos__(self) -> Any:
        return self._vg_op("__pos__")

    def __abs__(self) -> Any:
        return self._vg_op("__abs__")

    def __invert__(self) -> Any:
        return self._vg_op("__invert__")


def _binary(name: str) -> Any:
    def op(self: Handle, other: Any) -> Any:
        return self._vg_op(name, other)

    op.__name__ = name
    return op


for _name in ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__",
              "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__radd__", "__rsub__", "__rmul__",
              "__rtruediv__", "__rfloordiv__", "__rmod__"):
    setattr(Handle, _name, _binary(_name))


class RemoteClass(Handle):
    """A candidate class that is not a record or an exception: calling it constructs in the worker;
    ``isinstance`` compares class names with the object's method resolution order."""

    __slots__ = ()

    def __instancecheck__(self, obj: Any) -> bool:
        return _is_instance(obj, self._vg_desc)

    def __subclasscheck__(self, cls: Any) -> bool:
        mro = getattr(cls, "_vg_mro", None) or (cls._vg_desc.get("t") if isinstance(cls, Handle) else None) or []
        return list(self._vg_desc["t"][0]) in [list(n) for n in mro]


def _mro_of(obj: Any) -> list[list[str]]:
    if isinstance(obj, Handle):
        return [list(n) for n in obj._vg_desc.get("t") or []]
    return [list(n) for n in getattr(type(obj), "_vg_mro", None) or []]


def _is_instance(obj: Any, class_desc: dict[str, Any]) -> bool:
    own = list(class_desc["t"][0])
    return own in _mro_of(obj)


class _RecordMeta(type):
    """Metaclass of mirror record classes: calling the class constructs in the worker."""

    _vg_client: Client
    _vg_desc: dict[str, Any]
    _vg_gen: int

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        """Construct in the worker (so its validation runs and its exceptions propagate), then keep the
        oracle's own value for every argument the oracle passed: an expected value written in a
        property is the oracle's data, never what the candidate's constructor made of it."""
        client = cls._vg_client
        target = _target(cls._vg_desc, cls._vg_gen, client) or {"ref": cls._vg_desc.get("ref")}
        built = client.call(target, args, kwargs)
        if type(built) is not cls:
            return built
        init, fields = list(cls._vg_desc.get("init") or []), list(cls._vg_desc.get("f") or [])
        unmapped = len(args) > len(init) or any(k not in fields for k in kwargs)
        if unmapped:
            # Its constructor takes arguments that are not its fields: what it built from them is the
            # candidate's data, which an expected value must never be.
            raise NotCrossable(f"{cls.__qualname__}(...) takes arguments that are not its fields, so a record built "
                               "by it in a property would hold what the candidate made of them; build the expected "
                               "value from its fields (keywords), or set `isolation: none` for this property")
        given = dict(zip(init, args, strict=False))
        given.update(kwargs)
        if not given:
            return built
        names = list(cls._vg_desc.get("f") or [])
        values = [given.get(name, getattr(built, name) if cls._vg_kind != "nt" else built[i])
                  for i, name in enumerate(names)]
        held = built.__dict__.get("_vg_handle") if hasattr(built, "__dict__") else None
        return _build_record(cls, values, held[0] if held else None, held[1] if held else client.generation)

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or _is_instance(obj, cls._vg_desc)

    def __repr__(cls) -> str:
        return f"<candidate record class {'.'.join(cls._vg_desc['t'][0])}>"


@dataclasses.dataclass(frozen=True)
class EnumMember:
    """A candidate enum member: equal to another when class and member name are the same."""

    cls: tuple[str, str]
    name: str
    value: Any = dataclasses.field(compare=False)

    def __repr__(self) -> str:
        return f"<{self.cls[1]}.{self.name}: {self.value!r}>"


_MIRRORS: dict[Any, type] = {}


class CandidateBaseException(Exception):
    """Stands for a candidate's ``SystemExit``, ``KeyboardInterrupt`` or other non-``Exception``: in the
    oracle process those would stop pytest itself."""


def _builtin_exception(name: str) -> type | None:
    import builtins

    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None


def mirror_exception(mro: Sequence[Sequence[str]]) -> type:
    """A local exception class standing for a candidate's, ranked like it: builtin classes are
    themselves (``BaseException``-only ones become :class:`CandidateBaseException`); every other
    class in the chain is a local class with the candidate's module and qualified name."""
    chain = [(str(m), str(q)) for m, q in mro if not (m == "builtins" and q in ("object", "BaseException"))]
    base: type = Exception
    for module, qualname in reversed(chain):
        if module == "builtins":
            found = _builtin_exception(qualname)
            if found is None or not issubclass(found, Exception):
                found = CandidateBaseException if found is not None else None
            if found is not None and issubclass(found, base):
                base = found
            continue
        key = (module, qualname, base)
        if key not in _MIRRORS:
            name = qualname.rsplit(".", 1)[-1]
            _MIRRORS[key] = type(name, (base,), {"__module__": module, "__qualname__": qualname})
        base = _MIRRORS[key]
    return base


def record_class(client: Client, desc: dict[str, Any], generation: int) -> type:
    """The mirror class of a candidate dataclass, named tuple or attrs class (cached by name and fields)."""
    kind, fields = desc.get("rk"), [str(f) for f in desc.get("f") or []]
    module, qualname = (str(x) for x in desc["t"][0])
    key = ("record", id(client), module, qualname, kind, tuple(fields), tuple(desc.get("cmp") or ()))
    cls = _MIRRORS.get(key)
    if cls is None:
        name = qualname.rsplit(".", 1)[-1]
        ns: dict[str, Any] = {"__module__": module, "__qualname__": qualname, "_vg_kind": kind,
                              "__getattr__": _record_getattr}
        if kind == "nt":
            base = collections.namedtuple(name, fields, rename=True)  # type: ignore[misc]
            cls = _RecordMeta(name, (base,), ns)
        else:
            ns["__annotations__"] = {f: Any for f in fields}
            compare = list(desc.get("cmp") or [True] * len(fields))
            for f, flag in zip(fields, compare, strict=False):
                if not flag:  # a field the candidate's class leaves out of ==, left out here too
                    ns[f] = dataclasses.field(compare=False)
            cls = dataclasses.dataclass(frozen=True, eq=True, repr=True)(_RecordMeta(name, (), ns))  # type: ignore[arg-type]
        _MIRRORS[key] = cls
    cls._vg_client, cls._vg_desc, cls._vg_gen = client, desc, generation  # type: ignore[attr-defined]
    cls._vg_mro = [list(n) for n in desc["t"]]  # type: ignore[attr-defined]
    return cls


def _build_record(cls: type, values: list[Any], handle: int | None, generation: int) -> Any:
    if cls._vg_kind == "nt":  # type: ignore[attr-defined]
        obj: Any = tuple.__new__(cls, values)
    else:
        obj = object.__new__(cls)
        for f, v in zip(cls.__dataclass_fields__, values, strict=True):  # type: ignore[attr-defined]
            object.__setattr__(obj, f, v)
    if handle is not None:
        object.__setattr__(obj, "_vg_handle", (handle, generation))
    return obj


def _record_getattr(self: Any, name: str) -> Any:
    """Fields are local values; anything else (a method, a property) is read from the candidate's object."""
    if name.startswith("_vg_") or (name.startswith("__") and name.endswith("__")):
        raise AttributeError(name)
    held = self.__dict__.get("_vg_handle")
    client = type(self)._vg_client
    if not held or held[1] != client.generation:
        raise AttributeError(f"{type(self).__qualname__!r} record has no field {name!r} (and its candidate object "
                             "is not held by the current worker)")
    return client.request({"op": "getattr", "obj": {"id": held[0]}, "name": name})


# --- decoding and encoding -----------------------------------------------------------------------------

_PLAIN = (bool, int, float, str)  # exact types: their JSON form is the value itself


def decode(client: Client, tree: Any, generation: int) -> Any:
    if tree is None or type(tree) in _PLAIN:
        return tree

    def make(tag: str, p: Any) -> Any:
        if tag == "h":
            if p.get("k") == "cls":
                return record_class(client, p, generation) if "f" in p else RemoteClass(client, p, generation)
            return Handle(client, p, generation)
        if tag == "r":
            cls = record_class(client, p["c"], generation)
            fields = [decode(client, value, generation) for _name, value in p["f"]]
            return _build_record(cls, fields, p.get("h"), generation)
        if tag == "en":
            names = p["c"]["t"][0]
            return EnumMember((str(names[0]), str(names[1])), str(p["n"]), decode(client, p["v"], generation))
        if tag == "x":
            return mirror_exception(p)
        if tag == "mod":
            # Only a module this process has, or one of the candidate's (a proxy): the worker never
            # gets to make the oracle import, and run, a module of its choosing.
            name = str(p)
            if name in sys.modules:
                return sys.modules[name]
            if any(isinstance(f, Finder) and name.partition(".")[0] in f.names for f in sys.meta_path):
                return importlib.import_module(name)
            raise codec.ProtocolError(f"the worker named the module {name[:80]!r}, which the oracle has not imported")
        raise codec.ProtocolError(f"unknown tag {tag!r}")

    return codec.decode(tree, make)


def exception_from(client: Client, body: dict[str, Any], generation: int) -> BaseException:
    """The candidate's exception, raised again here as data (builtin or mirrored class)."""
    cls = mirror_exception(body["t"])
    message = str(body.get("msg", ""))
    exc: BaseException | None = None
    if body.get("args") is not None:
        try:
            args = decode(client, body["args"], generation)
            exc = cls(*args) if isinstance(args, tuple) else None
        except Exception:
            exc = None
    if exc is None or (message and str(exc) != message and cls.__module__ == "builtins"):
        try:
            exc = cls(message)
        except Exception:
            exc = mirror_exception([[cls.__module__, cls.__qualname__], ["builtins", "Exception"]])(message)
    if cls is CandidateBaseException:
        names = ".".join(body["t"][0])
        exc = CandidateBaseException(f"{names}: {message}")
    with contextlib.suppress(Exception):  # an exception class with __slots__ cannot carry them
        setattr(exc, "__verdict_gate_frames__", [list(f) for f in body.get("tb") or []])  # noqa: B010
    return exc


def encode_local(client: Client, obj: Any) -> Any:
    """The wire form of an oracle-side object sent to the worker (fallback of the codec)."""
    if isinstance(obj, Handle):
        return {"h": obj._vg_target()}
    if isinstance(obj, _RecordMeta):
        return {"h": _target(obj._vg_desc, obj._vg_gen, client) or {"ref": obj._vg_desc.get("ref")}}
    record_meta = type(type(obj))
    if record_meta is _RecordMeta:
        cls = type(obj)
        held = obj.__dict__.get("_vg_handle")
        fields = list(obj) if cls._vg_kind == "nt" else [getattr(obj, f) for f in cls.__dataclass_fields__]
        names = list(cls._fields) if cls._vg_kind == "nt" else list(cls.__dataclass_fields__)
        return {"r": {"c": _target(cls._vg_desc, cls._vg_gen, client) or {"ref": cls._vg_desc.get("ref")},
                      "k": cls._vg_kind, "f": [[n, client.encode(v)] for n, v in zip(names, fields, strict=True)],
                      "h": held[0] if held and held[1] == client.generation else None}}
    if isinstance(obj, EnumMember):
        return {"en": {"c": {"ref": list(obj.cls)}, "n": obj.name}}
    if isinstance(obj, ProxyModule):
        return {"mod": obj.__name__}
    if isinstance(obj, type) and issubclass(obj, BaseException) and obj.__module__ != "builtins":
        return {"x": [[obj.__module__, obj.__qualname__]]}
    raise NotCrossable(f"a {type(obj).__module__}.{type(obj).__qualname__} of the oracle cannot be passed to candidate "
                       "code across the isolation boundary (only plain values, records and the candidate's own objects "
                       "cross); if this property must pass oracle functions or objects to the candidate, set "
                       "`isolation: none` for it in the catalog")


# --- the import hook ------------------------------------------------------------------------------------


class ProxyModule(types.ModuleType):
    """A candidate module seen from the oracle: attributes are read from the worker."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__") and name not in ("__all__", "__version__"):
            raise AttributeError(name)
        client: Client = self.__dict__["_vg_client"]
        value = client.request({"op": "getattr", "obj": {"ref": [self.__name__, ""]}, "name": name})
        if isinstance(value, (Handle, type, ProxyModule)):
            self.__dict__[name] = value  # functions and classes are stable; values are read afresh
        return value

    def __dir__(self) -> list[str]:
        client: Client = self.__dict__["_vg_client"]
        names = client.request({"op": "dir", "obj": {"ref": [self.__name__, ""]}})
        return sorted(set(names) | set(self.__dict__))


class _Loader(importlib.abc.Loader):
    def __init__(self, client: Client) -> None:
        self.client = client

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = ProxyModule(spec.name)
        module.__dict__["_vg_client"] = self.client
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class Finder(importlib.abc.MetaPathFinder):
    """Import hook: the names in ``names`` (top-level) are candidate modules, imported as proxies."""

    def __init__(self, client: Client, names: Iterable[str], ambiguous: Iterable[str] = ()) -> None:
        self.client, self.names, self.ambiguous = client, frozenset(names), frozenset(ambiguous)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname.partition(".")[0]
        if top in self.ambiguous:
            # Installed beside the gate *and* provided by the candidate: which one a property means
            # cannot be told, and serving either silently could judge the wrong code.
            raise ImportError(f"{top!r} is both a module of the candidate (its python_path) and installed beside "
                              f"verdict-gate, so `import {fullname}` is ambiguous: list the candidate's modules in the "
                              f"catalog (`modules: [{top}, ...]`) if the properties mean the candidate's, or rename "
                              "the candidate's module", name=fullname)
        if top not in self.names:
            return None
        try:
            found = self.client.request({"op": "import", "mod": fullname})
        except ModuleNotFoundError as exc:
            # A submodule the candidate's package does not have: not found, as Python says it, so
            # `from pkg import name` reports "cannot import name" (a proxy package has no search
            # path, so no other finder can serve it). A top-level module stays an error here.
            if "." in fullname and str(exc) == f"No module named {fullname!r}":
                return None
            raise
        spec = importlib.machinery.ModuleSpec(fullname, _Loader(self.client), origin="verdict-gate-worker",
                                              is_package=bool(found.get("pkg")))
        if found.get("pkg"):
            spec.submodule_search_locations = []
        return spec


def candidate_names(python_path: Iterable[str], exclude: Iterable[str] = ()) -> set[str]:
    """Top-level module names the candidate's directories provide (``x.py``, ``x/``, extension
    modules), minus the standard library, modules already imported and ``exclude``."""
    names: set[str] = set()
    for directory in python_path:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if entry.is_dir() and name.isidentifier():
                try:
                    has_py = any(child.endswith(".py") or child.endswith(".so") for child in os.listdir(entry.path))
                except OSError:
                    has_py = False
                if has_py:
                    names.add(name)
            elif name.endswith(".py") and name[:-3].isidentifier():
                names.add(name[:-3])
            elif (name.endswith(".so") or name.endswith(".pyd")) and name.split(".")[0].isidentifier():
                names.add(name.split(".")[0])
    blocked = set(sys.stdlib_module_names) | {n.partition(".")[0] for n in sys.modules} | set(exclude)
    return {n for n in names if n not in blocked}


def pack_module_names(pack_dir: str) -> set[str]:
    """Module and package names the pack's own files could be imported as (never proxied)."""
    names: set[str] = set()
    for root, dirs, files in os.walk(pack_dir):
        dirs[:] = [d for d in dirs if d != "fixtures" and not d.startswith(".")]
        names.update(f[:-3] for f in files if f.endswith(".py"))
        names.update(dirs)
        names.add(os.path.basename(root))
    return names


def install(client: Client, python_path: Sequence[str], pack_dir: str, modules: Sequence[str] | None = None) -> Finder:
    """Put the proxy hook first on ``sys.meta_path`` for the candidate's top-level names.

    ``modules`` (the catalog's): exactly these names are the candidate's. Without it, every name the
    candidate's directories provide (:func:`candidate_names`); one of them that is also importable
    from the oracle's own ``sys.path`` (a package installed beside the gate) is ambiguous and its
    import fails with the fix, rather than judge either one silently."""
    if modules:
        return _insert(Finder(client, modules))
    names = candidate_names(python_path, pack_module_names(pack_dir))
    ambiguous = {n for n in names if importlib.machinery.PathFinder.find_spec(n, sys.path) is not None}
    return _insert(Finder(client, names - ambiguous, ambiguous))


def _insert(finder: Finder) -> Finder:
    sys.meta_path.insert(0, finder)
    return finder
