"""The oracle side of the isolation boundary: proxy modules, handles, records, mirrored exceptions,
and the oracle objects the candidate holds by reference (docs/design.md §8.1, "Who answers what").

Part of the boundary package: standard library only, loaded by path by the pytest plugin (:mod:`.load`).

:class:`Finder` is an import hook (first on ``sys.meta_path``) for the top-level names the
candidate's ``python_path`` provides. A property's ``from orders.tax import tax_cents`` then gets a
:class:`ProxyModule` whose attributes come from the candidate worker (:class:`Client`), so the
candidate's code never executes in the oracle process. What comes back:

- plain values (exact builtin types, and the standard library's value types) as themselves;
- dataclass, named tuple and attrs instances as local frozen *records* of a mirror class that
  compare by value here (the fields the class compares, and every field the oracle gave); calling the
  mirror class constructs in the worker and gives a record of exactly that class built from the oracle's
  arguments;
- enum members as :class:`EnumMember` records (equal by class and name; an alias is flagged);
- exception classes as local mirror classes ranked like the candidate's (``pytest.raises`` works);
- anything else as a :class:`Handle`: attribute reads, calls, ``len``, iteration, indexing and
  ``repr`` go to the worker. Operators of a class the oracle *named* (imported or read by name from a
  candidate module) are the candidate's answer, as in plain Python; a handle of a class the oracle
  never named never equals, orders against or hashes like an oracle value, and says which call
  returned it. Between two handles, the comparison is the candidate's own answer.

What goes the other way: plain values by value (lists, dicts and sets a call changes in place are
changed here too), records and enum members by value, and every other oracle object — a lambda, a key
function, an iterator, a test's own instance or class — by *reference*: it stays here and candidate code
calls back into it through the same channel (:class:`_Callbacks` answers only its object's protocol).
A class a test derives from a candidate class is built in the worker from the test's source.

The oracle keeps its own judgement: a candidate ``__exit__`` never suppresses an exception the oracle's
code raised; ``StopIteration`` from a candidate call other than ``__next__`` arrives as an ordinary
exception; a star import from a candidate module binds no builtin's name and no name already bound;
an assertion (or pytest outcome, or Hypothesis control flow) the oracle raised inside a callback is
raised again at the call if candidate code swallowed it.

A worker that dies, hangs up, floods its pipe or sends a malformed frame ends the property as
``crashed``: the failure is recorded out of band (:attr:`Client.failure`), so an oracle that
catches the exception cannot turn it into a pass. A limit of the boundary itself (:class:`BoundaryError`)
is recorded out of band too (:attr:`Client.boundary`): the gate's failure, never the candidate's.
"""

from __future__ import annotations

import collections
import collections.abc
import contextlib
import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import keyword
import os
import re
import subprocess
import sys
import threading
import types
import warnings
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from . import codec, readahead, sandbox, textfence
from .load import WORKER

HANDSHAKE_TIMEOUT_S = 60.0


class WorkerCrashed(Exception):
    """The candidate worker died, hung up, or sent something malformed or oversized."""


class BoundaryError(Exception):
    """A limit of the isolation boundary (not the candidate's doing): the property is the gate's failure
    (``isolation_unavailable``, outcome ``incomplete``), never frozen (docs/design.md §8.1)."""

    __verdict_gate_origin__ = "boundary"


class NotCrossable(BoundaryError):
    """A value or an operation that cannot cross the isolation boundary."""


class IsolationUnavailable(BoundaryError):
    """The host cannot give the isolation level the catalog asks for."""


class BoundaryWarning(UserWarning):
    """Something the boundary did differently from plain Python, on purpose (a star import that would have
    rebound a builtin's name)."""


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
        # The oracle's objects the worker holds by reference: id → object, and id(object) → id.
        self.local: dict[int, Any] = {}
        self.local_ids: dict[int, int] = {}
        self.next_local = 1
        self.handles: weakref.WeakValueDictionary[tuple[int, int], Handle] = weakref.WeakValueDictionary()
        self.named: set[tuple[str, str]] = set()  # candidate classes the oracle named (docs/design.md §8.1)
        # module:qualname of the classes a property may name: the base revision's (None: any). A function the
        # property imports that a patch turned into a class is not one of them.
        self.may_name: frozenset[str] | None = None
        self.boundary: list[dict[str, Any]] = []  # this property's boundary limits (see BoundaryError)
        self.depth = 0  # requests in flight (a callback may call the worker again)
        self.raised_in_callbacks: list[BaseException] = []  # control flow the oracle raised in a callback
        self.random_pending: list[Any] | None = None  # the oracle reseeded its random: the worker follows
        self.callbacks = 0  # callbacks answered in this property (capped: MAX_CALLBACKS)
        self.via = ""  # what the request in flight asked, for the message of an unnamed handle
        # Linked containers (see worker.Worker.links): the oracle's own list, dict, set or bytearray that
        # candidate code holds on to, kept in step with the worker's copy before and after every frame.
        self.links: dict[int, Any] = {}  # link id → the oracle's container
        self.link_of: dict[int, int] = {}  # id(container) → link id
        self.link_state: dict[int, str] = {}  # link id → the JSON both sides last agreed on
        # link id → its scalar items (codec.scalar_items) when its state was last agreed, and that state's text
        self.link_seen: dict[int, tuple[list[Any], str]] = {}
        self.offered: dict[int, Any] = {}  # link id → a container handed over by a call in flight
        self.next_link = 1
        self.ahead: dict[int, tuple[Any, Any]] = {}  # reference id → (iterator read ahead, its position then)
        self.oracle_roots: list[str] = []  # the pack's directory: a class defined under it is a test's own
        # Texts with doctest examples the worker sent (docstrings, a module's namespace): _fence_doctest refuses
        # to parse their examples in this process. Past MAX_DOC_TEXTS it refuses every parse with examples
        # (a worker that floods them cannot push a later one out of sight).
        self.doc_texts: dict[str, None] = {}
        self.pack_modules: dict[str, _PackModule] = {}  # the pack's modules as candidate code imports them
        # id(exception) → (the candidate's exception, digest of the request it answered): see request, _asked.
        self.asked: dict[int, tuple[BaseException, str]] = {}
        self.doc_texts_full = False
        # Every string or bytes the worker sent, of at least MIN_PIECE characters once stripped (a shorter one
        # is no code worth running): candidate text, which textfence never runs as code here (eval(repr(obj)),
        # or a text built around one: repr of a record or a list holding a candidate object). Past MAX_TEXTS
        # texts or MAX_TEXT_BYTES every text is taken for the candidate's (fail closed: a flood cannot push
        # one out of sight).
        self.texts: dict[str | bytes, None] = {}
        self.text_bytes = 0
        self.texts_full = False
        # SystemExit, KeyboardInterrupt, GeneratorExit arrive as themselves only inside a test's call, where
        # pytest reports them as the test's failure (the plugin sets this); elsewhere pytest would stop.
        self.as_itself = False
        self.keep: list[Any] = []  # oracle objects the worker's classes use for as long as it runs
        self.pid = os.getpid()  # the oracle's process: only it may talk to the worker (see roundtrip)

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
        for table in (self.links, self.link_of, self.link_state, self.link_seen, self.offered):
            table.clear()
        if self not in _CLIENTS:
            _CLIENTS.append(self)
        self.local.clear()
        self.local_ids.clear()
        self.local[PACK_MODULES] = _PackModules()
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

    def _forked(self) -> None:
        """In a child the oracle's process forked (a multiprocessing pool's process), on its first request: the
        worker, its channel, probes and uid are the parent's (a frame written here would race the parent's, a
        kill would kill the parent's worker), so they are let go and this process starts a worker of its own.
        The parent's handles are stale here (another generation); what a pool hands over comes pickled, and
        unpickles in the new worker (docs/design.md §8.1)."""
        for fd in (self.wfd, self.rfd):  # this process's copies only
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.wfd = self.rfd = -1
        self.reader = codec.Reader(-1)
        self.proc, self._uid, self._tmp, self._targets, self._policy = None, None, None, None, None
        self.lock = threading.RLock()  # the parent's may have been held by one of its threads at the fork
        self.depth, self.releases = 0, []
        self.pid = os.getpid()

    def new_property(self) -> None:
        """Clear the last property's failure and boundary limits; a crashed worker is started afresh on
        next use."""
        self.failure = None
        self.boundary = []
        self.callbacks = 0
        self.asked = {}

    def _crash(self, why: str) -> WorkerCrashed:
        self.crashes += 1
        self.failure = self.failure or why
        self.kill()
        return WorkerCrashed(why)

    def limit(self, message: str) -> NotCrossable:
        """Record a limit of the boundary met by this property (out of band: an oracle that catches the
        exception still cannot pass) and return the exception to raise."""
        if len(self.boundary) < 50:
            self.boundary.append({"message": message[:2000], "stack": _oracle_stack()})
        return NotCrossable(message)
    # requests

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        """Write ``message`` and read frames until its answer: a frame with ``op`` is the worker calling
        back into an oracle object while it answers (:meth:`_serve`), answered here and then waited past."""
        codec.write_frame(self.wfd, message)
        while True:
            if self.answer_timeout is not None and not self.reader.ready(self.answer_timeout):
                raise self._crash(f"the candidate worker did not answer {message.get('op')} "
                                  f"{str(message.get('mod') or message.get('name') or '')[:80]!r} within "
                                  f"{self.answer_timeout:g} s (it hangs?)")
            frame = self.reader.frame(cap=self.cap, timeout=self.answer_timeout)
            if not isinstance(frame, dict):
                raise codec.ProtocolError("a frame of an unknown shape")
            if "op" in frame:
                self._extras(frame)
                answer = self._serve(frame)
                self._sync_out(answer)
                codec.write_frame(self.wfd, answer)
                continue
            return frame

    def roundtrip(self, message: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """Send one request (starting the worker if needed) and return the raw answer and the worker
        generation it came from; the answer's side effects (output, warnings, releases) are applied.

        Raises:
            WorkerCrashed: any protocol failure (and :attr:`failure` set); IsolationUnavailable: the worker
            cannot be started.
        """
        if os.getpid() != self.pid:
            self._forked()
        with self.lock:
            if self.failure is not None:
                raise WorkerCrashed(f"the candidate worker crashed earlier in this property: {self.failure}")
            if self.proc is None:
                self.start()
            else:
                self.ready()
            if self.releases:
                message["rel"], self.releases = self.releases, []
            if self.random_pending is not None:
                message["rnd"], self.random_pending = self.random_pending, None
            self._sync_out(message)
            if self.depth == 0:
                self.raised_in_callbacks = []
            self.depth += 1
            try:
                answer = self._exchange(message)
            except (OSError, codec.ProtocolError) as exc:
                code = self.proc.poll() if self.proc is not None else None
                exited = f" (the worker exited with {code})" if code is not None else ""
                raise self._crash(f"{exc}{exited}") from None
            except ValueError as exc:
                raise self.limit(f"a value cannot be sent to the candidate worker ({exc})") from None
            finally:
                self.depth -= 1
            generation = self.generation
        self._extras(answer)
        return answer, generation

    def request(self, message: dict[str, Any]) -> Any:
        """Send ``message``, return the decoded ``ok`` value.

        Raises:
            the candidate's exception (mirrored), :class:`NotCrossable` for a value the worker could
            not send, :class:`WorkerCrashed` (and :attr:`failure` set) for any protocol failure,
            :class:`IsolationUnavailable` when the worker cannot be started.
        """
        answer, generation = self.roundtrip(message)
        return self._answered(message, answer, generation)

    def _answered(self, message: dict[str, Any], answer: dict[str, Any], generation: int) -> Any:
        """:meth:`result`, remembering what the oracle asked when the candidate raised (the signature's site,
        docs/design.md §5), here, out of the worker's reach; the outermost request it passes through is last."""
        try:
            return self.result(answer, generation)
        except BaseException as exc:
            if "raise" in answer and getattr(exc, "__verdict_gate_origin__", None) == "candidate":
                self.asked[id(exc)] = (exc, _asked(message))
                while len(self.asked) > MAX_ASKED:
                    self.asked.pop(next(iter(self.asked)))
            raise

    def result(self, answer: dict[str, Any], generation: int) -> Any:
        """The value of an answer, or its exception raised; an exception the oracle raised in a callback that
        candidate code swallowed is raised instead (the oracle's control flow stays the oracle's)."""
        kinds = [k for k in ("ok", "raise", "fail") if k in answer]
        if len(kinds) != 1:
            raise self._crash("the worker sent an answer of an unknown shape")
        kind = kinds[0]
        error: BaseException
        try:
            if kind == "ok":
                value = decode(self, answer["ok"], generation)
                self.note_texts_in(value)
                self._swallowed(None)
                return value
            if kind == "raise":
                error = exception_from(self, answer["raise"], generation)
            else:
                error = self.limit(f"the candidate worker reports: {str(answer['fail'])[:2000]}")
        except (codec.ProtocolError, KeyError, TypeError, ValueError, IndexError, AttributeError,
                RecursionError) as err:
            raise self._crash(f"the worker sent a malformed answer ({type(err).__name__}: {err})") from None
        self._swallowed(error)
        raise error

    def note_text(self, *texts: Any) -> None:
        """Keep the texts the worker sent (a string or bytes answer or the strings of a container answer, an
        iterator's items, a module's docstring and the strings of its namespace; a subclass's value too): the
        candidate's text, never run here as code. Those that hold doctest examples (``>>>``) whole
        (:func:`_fence_doctest`), every one for :meth:`is_text`."""
        for text in texts:
            if isinstance(text, str):
                text = str.__str__(text)  # a subclass's value, as an exact str (its own __str__ not called)
            elif isinstance(text, (bytes, bytearray)):
                text = bytes(memoryview(text))
            else:
                continue
            if not self.texts_full:
                self._keep_text(text)
            if type(text) is str and ">>>" in text and text not in self.doc_texts:
                if len(self.doc_texts) >= MAX_DOC_TEXTS:
                    self.doc_texts_full = True
                    continue
                self.doc_texts[text] = None

    def note_texts_in(self, value: Any) -> None:
        """:meth:`note_text` of an answer: the value itself, or the items (keys and values) of a container."""
        if isinstance(value, (list, tuple, set, frozenset)):
            self.note_text(*value)
        elif type(value).__name__ == "Signature" and type(value).__module__ == "inspect":
            # a candidate callable's signature: its string annotations and defaults are candidate text
            # (typing.ForwardRef would compile an annotation)
            for param in value.parameters.values():
                self.note_text(param.default, param.annotation)
            self.note_text(value.return_annotation)
        elif isinstance(value, dict):
            self.note_text(*value.keys(), *value.values())
        else:
            self.note_text(value)

    def _keep_text(self, text: str | bytes) -> None:
        if text[:1].isspace() or text[-1:].isspace():  # a copy only when stripping changes it
            text = text.strip()
        if len(text) < MIN_PIECE or text in self.texts:
            return
        if len(self.texts) >= MAX_TEXTS or self.text_bytes + len(text) > MAX_TEXT_BYTES:
            self.texts_full = True
            return
        self.texts[text] = None
        self.text_bytes += len(text)

    def is_text(self, value: Any, *, within: bool = False) -> bool:
        """Whether ``value`` (a str, bytes, bytearray or memoryview, or a subclass; anything else is not text)
        strips to a text the worker sent (:meth:`note_text`); with ``within``, also whether it holds one. Always
        for a text of :data:`MIN_PIECE` characters or more once the texts kept reached their cap."""
        if isinstance(value, str):
            value = str.__str__(value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            value = bytes(memoryview(value))
        else:
            return False
        if value[:1].isspace() or value[-1:].isspace():
            value = value.strip()
        if len(value) < MIN_PIECE:
            return False
        if self.texts_full:
            return True
        # eval and compile take either: a str the worker sent is the same code as its UTF-8 bytes.
        other = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else \
            value.decode("utf-8", "surrogateescape")
        if value in self.texts or other in self.texts:
            return True
        if within:
            return any(text in (value if type(text) is type(value) else other) for text in self.texts)
        return False

    def _swallowed(self, error: BaseException | None) -> None:
        if self.depth == 0 and self.raised_in_callbacks:
            pending, self.raised_in_callbacks = self.raised_in_callbacks, []
            if error is None or all(error is not e for e in pending):
                raise pending[0]

    def _extras(self, frame: dict[str, Any]) -> None:
        """What travels with a frame: oracle references the worker dropped, what candidate code printed
        (written to this process's stdout/stderr, where pytest's capture sees it) and warned (raised
        again here, through this process's filters: ``pytest.warns``, ``-W error``).

        Raises:
            WorkerCrashed: a part of the frame has a shape no worker of ours sends (recorded out of band:
                never an exception the oracle's own code could mistake for its own).
        """
        try:
            if "took" in frame:
                self._took(frame)
            for rid in frame.get("rel") or ():
                if type(rid) is not int:
                    continue
                self.ahead.pop(rid, None)
                obj = self.local.pop(rid, None)
                if obj is not None and self.local_ids.get(id(obj)) == rid:
                    del self.local_ids[id(obj)]
            if "kept" in frame or "sync" in frame or "unlink" in frame:
                self._sync_in(frame)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, BufferError, codec.ProtocolError) as bad:
            raise self._crash(f"the worker sent a malformed frame ({type(bad).__name__}: {str(bad)[:200]})") from None
        out, err = frame.get("out"), frame.get("err")
        if isinstance(out, str) and out:
            sys.stdout.write(out)
        if isinstance(err, str) and err:
            sys.stderr.write(err)
        for item in frame.get("w") or ():
            try:
                names, message, filename, lineno = item
                category = mirror_exception(names, base=Warning)
                if not issubclass(category, Warning):
                    continue
                text, path, line = str(message), str(filename), int(lineno)
            except (TypeError, ValueError):
                continue
            warnings.warn_explicit(text, category, path, line, module=path.rpartition("/")[2].rpartition(".")[0])

    def encode(self, value: Any, top: bool = True) -> Any:
        return codec.encode(value, lambda obj: encode_local(self, obj), links=self.link_of or None, top=top)

    # linked containers

    def _offer(self, value: Any) -> Any:
        """A call's argument: a list, dict, set or bytearray goes by value with a link id, so that if candidate
        code holds on to it (a cache it stores, a list a lazy iterator reads) the two stay in step."""
        return self._link(value, held=False)

    def _link_result(self, value: Any) -> Any:
        """A callback's result: a list, dict, set or bytearray of the oracle's (``self.cache`` of a test's own
        instance, read by candidate code) is linked at once, so the candidate's changes reach it; the worker
        lets it go when nothing of the candidate's holds it any more."""
        return self._link(value, held=True)

    def _link(self, value: Any, held: bool) -> Any:
        if type(value) not in (list, dict, set, bytearray) or len(value) > MAX_LINKED_ITEMS:
            return self.encode(value)
        lid = self.link_of.get(id(value))
        if lid is not None and self.links.get(lid) is value:
            return {"lk": lid}
        lid = self.next_link
        self.next_link += 1
        if not held:  # an offered argument is linked when the worker says it kept it
            tree = self.encode(value, top=False)
            self.offered[lid] = value
            self.link_state[lid] = codec.dumps(tree)
            return {"lk": [lid, tree]}
        self.links[lid], self.link_of[id(value)] = value, lid
        nested = self._link_nested(value)
        try:
            tree = codec.encode(value, lambda obj: encode_local(self, obj), links=self.link_of, top=False,
                                fresh={id(child) for child in nested})
        except BaseException:  # nothing of it reached the worker: none of it is linked
            for child in (value, *nested):
                del self.links[self.link_of.pop(id(child))]
            raise
        for child in nested:  # sent with their states inside; the state both sides agree on names them by id
            self.link_state[self.link_of[id(child)]] = codec.dumps(self.encode(child, top=False))
        self.link_state[lid] = codec.dumps(self.encode(value, top=False) if nested else tree)
        return {"lk": [lid, tree]}

    def _link_nested(self, value: Any) -> list[Any]:
        """Link the lists, dicts, sets and bytearrays inside a held container (``self.cache`` inside a test's
        instance's ``__dict__``), at most :data:`MAX_NESTED_LINKS`: each is then one object on each side, so
        a new state of the outer container leaves the inner ones the same objects (``is`` holds, and a
        reference the test kept sees the candidate's changes)."""
        nested: list[Any] = []
        todo = [value]
        while todo and len(nested) < MAX_NESTED_LINKS:
            items = todo.pop()
            for item in items.values() if type(items) is dict else items if type(items) is list else ():
                if type(item) in (list, dict, set, bytearray) and id(item) not in self.link_of \
                        and len(item) <= MAX_LINKED_ITEMS and len(nested) < MAX_NESTED_LINKS:
                    lid = self.next_link
                    self.next_link += 1
                    self.links[lid], self.link_of[id(item)] = item, lid
                    nested.append(item)
                    todo.append(item)
        return nested

    def _sync_out(self, frame: dict[str, Any]) -> None:
        """Attach the new state of every linked container the oracle's code changed since the last frame (and
        the iterators it moved that the worker read ahead)."""
        if self.ahead:
            self._moved(frame)
        changed = []
        for lid, value in self.links.items():
            items, text = codec.scalar_items(value), self.link_state.get(lid)
            seen = self.link_seen.get(lid)
            if items is not None and seen is not None and text is not None and seen[1] is text \
                    and codec.same_items(items, seen[0]):
                continue  # the same scalars as when its state was last agreed: unchanged, no encoding
            tree = self.encode(value, top=False)
            new = codec.dumps(tree)
            if new != text:
                changed.append([lid, tree])
                self.link_state[lid] = text = new
            if items is None:
                self.link_seen.pop(lid, None)
            else:
                self.link_seen[lid] = (items, text)
        if changed:
            frame["sync"] = changed

    def _sync_in(self, frame: dict[str, Any]) -> None:
        """The worker's word on linked containers: which it kept, their new states, then which it let go (its
        last changes first)."""
        for lid in frame.get("kept") or ():
            value = self.offered.get(lid) if type(lid) is int else None
            if value is not None:
                self.links[lid], self.link_of[id(value)] = value, lid
        for lid, tree in frame.get("sync") or ():
            value = self.links.get(lid) if type(lid) is int else None
            if value is None:
                continue
            codec.replace_in_place(value, decode(self, tree, self.generation))
            self.link_state[lid] = codec.dumps(tree)
        for lid in frame.get("unlink") or ():
            value = self.links.pop(lid, None) if type(lid) is int else None
            self.link_state.pop(lid, None)
            self.link_seen.pop(lid, None)
            if value is not None and self.link_of.get(id(value)) == lid:
                del self.link_of[id(value)]

    def call(self, target: dict[str, Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """Call a candidate callable; lists, dicts, sets and bytearrays passed to it are changed here in
        place as the candidate changed its copies (the oracle sees in-place APIs as they are), and stay in
        step with them while candidate code holds on to them (:meth:`_offer`)."""
        before = set(self.offered)
        message = {"op": "call", "obj": target, "args": [self._offer(a) for a in args],
                   "kw": [[k, self._offer(v)] for k, v in kwargs.items()]}
        try:
            answer, generation = self.roundtrip(message)
        finally:
            for lid in set(self.offered) - before:  # kept ones are links now; the rest were only arguments
                value = self.offered.pop(lid)
                if self.links.get(lid) is not value:
                    self.link_state.pop(lid, None)
        mutated = answer.get("mut")
        if mutated is not None and "ok" in answer:
            try:
                self._apply_mutations(list(args), kwargs, mutated, generation)
            except (codec.ProtocolError, KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
                raise self._crash(f"the worker sent malformed argument changes ({type(err).__name__}: {err})") from None
        return self._answered(message, answer, generation)

    def _apply_mutations(self, args: list[Any], kwargs: dict[str, Any], mutated: Any, generation: int) -> None:
        for key, tree in mutated:
            local = args[key] if isinstance(key, int) and 0 <= key < len(args) else kwargs.get(key)
            if local is None:
                continue
            new = decode(self, tree, generation)
            if type(local) is not type(new):
                raise TypeError(f"argument {key!r} changed type: {type(local).__name__} → {type(new).__name__}")
            if isinstance(local, (list, bytearray)):
                local[:] = new
            elif isinstance(local, (dict, set)):
                local.clear()
                local.update(new)

    # callbacks: the worker asks about an oracle object

    def reference(self, obj: Any) -> dict[str, Any]:
        """The wire form of an oracle object the worker will hold by reference (kept alive here until the
        worker drops it), with the operations :class:`_Callbacks` answers for it."""
        rid = self.local_ids.get(id(obj))
        if rid is None or self.local.get(rid) is not obj:
            if len(self.local) >= MAX_LOCAL:
                raise self.limit(f"more than {MAX_LOCAL} oracle objects are held by the candidate worker")
            rid = self.next_local
            self.next_local += 1
            self.local[rid] = obj
            self.local_ids[id(obj)] = rid
        desc: dict[str, Any] = {"id": rid, "c": _caps(obj)}
        names = {}
        for attr in ("__name__", "__qualname__", "__module__", "__doc__"):
            try:
                value = getattr(obj, attr, None) if callable(obj) else None
            except Exception:
                value = None
            if type(value) is str:
                names[attr] = value[:2000]
        if names:
            desc["n"] = names
        return {"o": desc}

    def _serve(self, req: dict[str, Any]) -> dict[str, Any]:
        """Answer one callback (the worker's ``cb`` frame) about an oracle object: its value, or the
        exception the oracle's code raised (which candidate code then sees, as in plain Python)."""
        self.callbacks += 1
        if self.callbacks > MAX_CALLBACKS:
            self.limit(f"more than {MAX_CALLBACKS} callbacks into the oracle in one property")
            return {"fail": f"more than {MAX_CALLBACKS} callbacks into the oracle in one property"}
        if self.depth >= MAX_DEPTH:
            self.limit(f"calls nested more than {MAX_DEPTH} deep across the isolation boundary")
            return {"fail": f"calls nested more than {MAX_DEPTH} deep across the isolation boundary"}
        generation = self.generation
        self.depth += 1
        try:
            if req.get("op") != "cb" or type(req.get("obj")) is not int or req["obj"] not in self.local:
                raise _Refused("the worker asked about an oracle object it does not hold")
            obj = self.local[req["obj"]]
            do = str(req.get("do"))
            args = decode(self, req.get("args") or [], generation)
            if do == "next":
                n = min(max(int(req.get("n") or 1), 1), MAX_BATCH)
                if req.get("ra") is True:
                    return self._read_ahead(req["obj"], obj, n)
                return self._next_batch(obj, n)
            kwargs = {str(k): decode(self, v, generation) for k, v in req.get("kw") or []}
            # While the oracle's code runs, the channel is idle (the worker waits for this answer and serves
            # requests nested in it): the oracle's other threads may use it meanwhile (a pool's threads
            # calling the candidate, its task thread pickling a handle). Only the oracle's code runs without
            # the lock: decoding the arguments and encoding the result touch the client's tables, and every
            # exchange holds it from its request to its answer, so frames stay strictly nested.
            held = self.lock._release_save()  # type: ignore[attr-defined]
            try:
                value = _Callbacks.apply(self, obj, do, args, kwargs, req.get("name"))
            finally:
                self.lock._acquire_restore(held)  # type: ignore[attr-defined]
            return {"ok": self._link_result(value)}
        except (KeyboardInterrupt, SystemExit) as exc:
            if getattr(exc, "__verdict_gate_origin__", None) != "candidate":
                raise  # the oracle process's own (Ctrl-C): never handed to candidate code
            return {"raise": self._exception_body(exc)}
        except codec.Unencodable as exc:
            message = f"an oracle callback's result cannot cross the isolation boundary: {exc}"
            self.limit(message)
            return {"fail": message}
        except (codec.ProtocolError, _Refused) as exc:
            return {"raise": {"t": [["builtins", "AttributeError"]], "msg": str(exc)[:2000]}}
        except BaseException as exc:  # the oracle's code raised: candidate code sees it, as in plain Python
            if _control_flow(exc):
                self.raised_in_callbacks.append(exc)
            return {"raise": self._exception_body(exc)}
        finally:
            self.depth -= 1

    def _next_batch(self, it: Any, n: int) -> dict[str, Any]:
        items: list[Any] = []
        for _ in range(n):
            try:
                items.append(next(it))
            except StopIteration:
                return {"ok": [self.encode(i) for i in items], "end": True}
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:
                if _control_flow(exc):
                    self.raised_in_callbacks.append(exc)
                if not items:
                    return {"raise": self._exception_body(exc)}
                return {"ok": [self.encode(i) for i in items], "then": self._exception_body(exc)}
        return {"ok": [self.encode(i) for i in items]}

    # Read ahead (docs/design.md §8.1 "Batching"): a candidate loop over an oracle iterator whose items
    # nothing can change (a range, str, bytes or tuple iterator of plain values, or a generator expression
    # with no names of its own over one) gets its items in batches although candidate code runs between two
    # of them. They are read from a copy (:func:`readahead.shadow`); the oracle's own iterator moves only by the
    # items candidate code took (``took``, before any of the oracle's code runs), and the worker forgets
    # what it holds once the oracle's code has moved the iterator itself (``drop``).

    def _read_ahead(self, rid: int, it: Any, n: int) -> dict[str, Any]:
        shadow = readahead.shadow(it)
        if shadow is None:
            return self._next_batch(it, 1)
        self.ahead[rid] = (it, readahead.position(it))
        answer = self._next_batch(shadow, n)
        answer["ra"] = True
        return answer

    def _took(self, frame: dict[str, Any]) -> None:
        for rid, n in frame.get("took") or ():
            state = self.ahead.get(rid) if type(rid) is int and type(n) is int else None
            if state is None:
                continue
            it = state[0]
            for _ in range(min(n, MAX_BATCH)):  # one batch at most: a frame goes out before the next
                try:
                    next(it)
                except Exception:  # the copy ended so too: candidate code has had that end already
                    break
            self.ahead[rid] = (it, readahead.position(it))

    def _moved(self, frame: dict[str, Any]) -> None:
        """Tell the worker which iterators the oracle's own code moved since it read them ahead."""
        moved = [rid for rid, (it, where) in self.ahead.items() if readahead.position(it) != where]
        if moved:
            for rid in moved:
                del self.ahead[rid]
            frame["drop"] = moved

    def _exception_body(self, exc: BaseException) -> dict[str, Any]:
        """An exception of the oracle's as data for the worker; its id comes back with it if candidate code
        lets it propagate, and the oracle then raises its own object."""
        try:
            args = self.encode(tuple(exc.args))
        except Exception:
            args = None
        try:
            message = str(exc)[:16_384]
        except Exception:
            message = type(exc).__name__
        body = {"t": codec.mro_names(type(exc)), "args": args, "msg": message}
        with contextlib.suppress(BoundaryError):
            body["o"] = self.reference(exc)["o"]["id"]
        return body


MAX_LOCAL = 1_000_000  # oracle objects the worker may hold by reference at once
MAX_LINKED_ITEMS = 10_000  # a larger argument container goes by value only (changes come back after the call)
MAX_NESTED_LINKS = 64  # containers inside one held container linked with it (the rest go by value inside it)
MAX_CALLBACKS = 10_000_000  # callbacks into the oracle per property
MAX_DEPTH = 64  # calls nested across the boundary
MAX_BATCH = 1024  # items of an iterator taken by one request


class _Refused(Exception):
    """A callback the oracle does not answer (a private attribute, an operation its object lacks)."""


def _control_flow(exc: BaseException) -> bool:
    """An exception the oracle raised in a callback that candidate code must not be able to swallow: an
    assertion, a pytest outcome (``pytest.fail``, ``skip`` …), Hypothesis's control flow (``StopTest`` is a
    ``BaseException``; the others are its real classes as this process loaded them, never a class named like
    one: the candidate's own arrives as a mirror)."""
    if isinstance(exc, AssertionError) or not isinstance(exc, Exception):
        return True
    errors = sys.modules.get("hypothesis.errors")
    kinds = [getattr(errors, name, None) for name in ("UnsatisfiedAssumption", "Frozen")]
    return any(isinstance(kind, type) and isinstance(exc, kind) for kind in kinds)


def _oracle_stack() -> list[list[Any]]:
    """``[[file, line, function], …]`` of the calling stack outside this package (where a limit was met)."""
    import traceback

    here = os.path.dirname(os.path.abspath(__file__))
    return [[f.filename, f.lineno, f.name] for f in traceback.extract_stack()[:-2]
            if not f.filename.startswith(here)][-20:]


# Modules whose objects never answer attribute callbacks: the judge's own (pytest, pluggy, Hypothesis, this
# package, the plugin), so a fixture object the oracle hands over cannot lead into its machinery.
_INTERNAL = ("_pytest", "pytest", "pluggy", "hypothesis", "_hypothesis", "py", "_verdict_gate_boundary",
             "verdict_gate", "verdict_gate_plugin", "sys", "builtins", "importlib", "gc", "inspect", "types")


MAX_ASKED = 256  # candidate exceptions whose request is remembered (the newest, in a property's run)


def _asked(message: dict[str, Any]) -> str:
    """A digest (16 hex) of what the oracle asked of the candidate: the request's operation, attribute name and
    values, without the numbers of this run's tables (handle, reference and link ids), so the same question
    asked on the base and on the candidate digests alike (the signature's ``site``, docs/design.md §5). Not
    the target: its name is the worker's to say (a decorator without ``functools.wraps`` renames it)."""
    import hashlib

    def plain(tree: Any) -> Any:
        if isinstance(tree, list):
            return [plain(t) for t in tree]
        if isinstance(tree, dict):
            if len(tree) == 1:
                ((tag, p),) = tree.items()
                if tag in ("o", "lk") and type(p) is int:
                    return tag  # a reference or a link by its id alone
                if tag == "lk" and isinstance(p, list):
                    return {"lk": plain(p[1:])}  # a fresh link: its value
            return {str(k): plain(v) for k, v in tree.items()
                    if k not in ("id", "via") and not (k == "h" and type(v) is int)}
        return tree

    body = {k: plain(message.get(k)) for k in ("op", "name", "args", "kw", "arg")}
    return hashlib.sha256(codec.dumps(body).encode("utf-8", "surrogatepass")).hexdigest()[:16]


PACK_MODULES = 0  # the reference id of the oracle's _PackModules in every worker (worker.PACK_MODULES)


class _PackModules:
    """What the worker's importer of the oracle's modules asks (``worker._PackImporter``): a module of the pack
    that this process imported, by its name, as a :class:`_PackModule`; ``None`` for any other name."""

    def answer(self, client: Client, do: str, name: Any) -> Any:
        if do != "module" or type(name) is not str:
            raise _Refused("the oracle's modules answer only which of them is the pack's")
        module = sys.modules.get(name)
        if not isinstance(module, types.ModuleType) or isinstance(module, ProxyModule):
            return None
        where = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or ())]
        if not any(type(path) is str and any(path.startswith(root) for root in client.oracle_roots)
                   for path in where):
            return None  # the standard library's, a library's, pytest's, the gate's: never
        found = client.pack_modules.get(name)
        if found is None or found.module is not module:
            found = client.pack_modules[name] = _PackModule(module)
        return found


class _PackModule:
    """A test module of the pack as candidate code sees it when it imports the module by name (toolz's curry
    finds a decorated function by its ``__module__`` and ``__qualname__``): a public name whose value the
    worker holds already (a candidate object, or an oracle object it was handed) and nothing else; every other
    name is missing, so neither the module's other values (a test's expected answers) nor its imports (pytest,
    the plugin) are reachable."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module

    def answer(self, client: Client, do: str, name: Any) -> Any:
        if do == "getattr" and type(name) is str and name.isidentifier() and not name.startswith("_"):
            value = self.module.__dict__.get(name, _PackModule)
            if isinstance(value, (Handle, ProxyModule)) or type(value) is _RecordMeta or \
                    (id(value) in client.local_ids and client.local.get(client.local_ids[id(value)]) is value):
                return value
            raise AttributeError(f"module {self.module.__name__!r} has no attribute {name!r} that candidate code "
                                 "may read (only what it holds already)")
        raise _Refused(f"a module of the pack answers no {do} across the isolation boundary")


def _pack_class(obj: Any, client: Client) -> bool:
    """An object whose public attributes a callback may read and set: an instance of a test's own class, of a
    library's or of the standard library's (a file, a lock, an ``argparse.Namespace`` the test handed over),
    never a module, a class, a function or method, a frame, nor an object of the judge's own machinery
    (:data:`_INTERNAL`)."""
    if isinstance(obj, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                        types.CodeType, types.FrameType, types.TracebackType, types.GeneratorType,
                        types.CoroutineType, types.MethodWrapperType, types.WrapperDescriptorType,
                        types.MappingProxyType)):
        return False
    module = type.__dict__["__module__"].__get__(type(obj))
    return isinstance(module, str) and module.partition(".")[0] not in _INTERNAL


def _caps(obj: Any) -> list[str]:
    """The operations an oracle object answers: the special methods its type defines (looked up in the type's
    own method resolution order: ``hasattr(type(obj), "__call__")`` is true of every class, through ``type``)."""
    defined = {name for c in type.__dict__["__mro__"].__get__(type(obj)) for name in vars(c)}
    caps = [cap for cap, name in (("call", "__call__"), ("iter", "__iter__"), ("next", "__next__"),
                                  ("len", "__len__"), ("getitem", "__getitem__"), ("setitem", "__setitem__"),
                                  ("delitem", "__delitem__"), ("contains", "__contains__"),
                                  ("index", "__index__"), ("int", "__int__"), ("float", "__float__"),
                                  ("enter", "__enter__"))
            if name in defined]
    if isinstance(obj, type):
        caps.append("type")
    else:  # the abstract classes candidate code tests with isinstance that no special method implies
        caps.extend(name for name, abc in _REGISTERED_ABCS if isinstance(obj, abc))
    return caps


_REGISTERED_ABCS = tuple((c.__name__, c) for c in (
    collections.abc.Mapping, collections.abc.MutableMapping, collections.abc.Sequence,
    collections.abc.MutableSequence, collections.abc.Set, collections.abc.MutableSet))


class _Callbacks:
    """What the worker may do with an oracle object: its protocol and nothing else (docs/design.md §8.1).

    Never a private or special attribute (``__globals__``, ``__code__``, ``__closure__``, frames,
    ``__self__``, ``__class__``, ``__subclasses__`` …), never an attribute of a module, a function or a
    class, never a module: only what a plain value of that protocol offers, and the public attributes of
    a test's own instance. Callbacks run the oracle's code in this process; their results cross by the
    same codec (an oracle object by reference again)."""

    COMPARE = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}

    @classmethod
    def apply(cls, client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
        import operator

        if isinstance(obj, (_PackModules, _PackModule)):
            return obj.answer(client, do, name)
        if do == "pickle":
            # What plain pickle says of this object, for candidate code pickling a value that holds it (the
            # worker keeps it by reference: the bytes are dropped). Never of the judge's own objects.
            import pickle

            if type.__dict__["__module__"].__get__(type(obj)).partition(".")[0] in _INTERNAL and \
                    not isinstance(obj, (type, types.FunctionType)):
                raise _Refused("an object of the judge's own machinery is never pickled for candidate code")
            pickle.dumps(obj)
            return None
        if do == "call":
            if not callable(obj):
                raise _Refused(f"a {type(obj).__name__} of the oracle is not callable")
            return obj(*args, **kwargs)
        if do == "global":
            if not isinstance(obj, _ModuleGlobals):
                raise _Refused("not a class's globals")
            return obj.get(str(name))
        one = args[0] if args else None
        simple: dict[str, Any] = {"iter": iter, "len": len, "bool": bool, "hash": hash, "index": operator.index,
                                  "int": int, "float": float}
        if do in simple:
            return simple[do](obj)
        if do == "repr":
            return repr(obj)[:16_384]
        if do == "str":
            return str(obj)[:1 << 20]
        if do == "getitem":
            return obj[one]
        if do == "contains":
            return one in obj
        if do in cls.COMPARE:  # the object's own answer; NotImplemented lets the worker reflect it there
            method = getattr(type(obj), cls.COMPARE[do], None)
            return NotImplemented if method is None else method(obj, one)
        if do == "enter" and hasattr(type(obj), "__enter__"):
            return obj.__enter__()
        if do == "exit" and hasattr(type(obj), "__exit__"):
            return bool(obj.__exit__(None, None, None) if one is None else obj.__exit__(type(one), one, None))
        if do == "signature" and callable(obj):
            return _signature(obj)
        if do == "vars" and _pack_class(obj, client) and isinstance(getattr(obj, "__dict__", None), dict):
            return obj.__dict__  # linked (Client._link_result): candidate code writes the instance's own dict
        if do in ("instancecheck", "subclasscheck"):
            if not isinstance(obj, type):
                raise _Refused("not a class")
            return isinstance(one, obj) if do == "instancecheck" else isinstance(one, type) and issubclass(one, obj)
        public = isinstance(name, str) and name.isidentifier() and not name.startswith("_")
        if do == "getattr" and public and _pack_class(obj, client):
            return getattr(obj, name)
        if do == "setattr" and public and _pack_class(obj, client):
            setattr(obj, name, one)
            return None
        if do == "delattr" and public and _pack_class(obj, client):
            delattr(obj, name)
            return None
        if do in ("setitem", "delitem") and _pack_class(obj, client):
            if do == "setitem":
                obj[one] = args[1]
            else:
                del obj[one]
            return None
        if do == "dir":
            return sorted(n for n in dir(obj) if not n.startswith("_")) if _pack_class(obj, client) else []
        raise _Refused(f"an oracle {type(obj).__name__} answers no {do} {name or ''} across the isolation boundary"
                       .rstrip())


def _signature(obj: Any) -> Any:
    """``inspect.signature`` of an oracle callable (the codec carries an ``inspect.Signature``: its defaults and
    annotations go as any value does), or the name of the exception ``inspect.signature`` raised, so candidate
    code introspecting a callback (toolz's curry and compose, ``functools``) sees what plain Python would."""
    import inspect

    try:
        return inspect.signature(obj)
    except (TypeError, ValueError) as exc:
        return type(exc).__name__


class _ModuleGlobals:
    """The globals of an oracle module a class statement in it may read (the names its source uses), for a
    subclass of a candidate class built in the worker."""

    def __init__(self, namespace: dict[str, Any], names: Iterable[str]) -> None:
        self.namespace, self.names = namespace, frozenset(names)

    def get(self, name: str) -> Any:
        import builtins

        if name in self.names and name in self.namespace:
            return self.namespace[name]
        if name in self.names and hasattr(builtins, name):
            return getattr(builtins, name)
        raise NameError(f"name {name!r} is not defined")


# --- candidate objects ----------------------------------------------------------------------------------


def _target(desc: dict[str, Any], generation: int, client: Client) -> dict[str, Any]:
    """What the worker needs to find an object again: its id (this worker only) and/or its reference."""
    out: dict[str, Any] = {}
    if desc.get("ref"):
        out["ref"] = desc["ref"]
    if desc.get("id") is not None and generation == client.generation and client.proc is not None:
        out["id"] = desc["id"]
    return out


_REPR_CALLERS = ("reprlib", "_pytest.", "pprint", "hypothesis.", "unittest.", "difflib")


class Handle:
    """A candidate object that stays in the worker; every operation is a request.

    Its class is a local subclass named like the candidate's (``type(h).__name__`` reads as in plain
    Python); ``isinstance`` against the candidate's classes works through :class:`RemoteClass`."""

    __slots__ = ("_vg_client", "_vg_desc", "_vg_gen", "_vg_buffer", "_vg_drain", "_vg_mark", "__weakref__")

    # pytest (9.x, fixtures.py) reads `_mock_name` of every object a test module holds, each imported
    # candidate function included, to skip mocks: answered here, not by a round trip per file.
    _mock_name = None

    def __init__(self, client: Client, desc: dict[str, Any], generation: int) -> None:
        object.__setattr__(self, "_vg_client", client)
        object.__setattr__(self, "_vg_desc", desc)
        object.__setattr__(self, "_vg_gen", generation)
        object.__setattr__(self, "_vg_buffer", None)
        object.__setattr__(self, "_vg_drain", False)
        object.__setattr__(self, "_vg_mark", None)

    def _vg_target(self) -> dict[str, Any]:
        target = _target(self._vg_desc, self._vg_gen, self._vg_client)
        if not target:
            raise WorkerCrashed("this candidate object belonged to a worker that has since been restarted")
        return target

    def _vg_op(self, name: str, *arg: Any) -> Any:
        object.__setattr__(self, "_vg_mark", None)
        message: dict[str, Any] = {"op": "dunder", "obj": self._vg_target(), "name": name}
        if arg:
            message["arg"] = self._vg_client.encode(arg[0])
        return self._vg_client.request(message)

    def _vg_type(self) -> str:
        names = self._vg_desc.get("t") or [["?", "?"]]
        return ".".join(names[0])

    def _vg_named(self) -> bool:
        names = self._vg_desc.get("t") or [["?", "?"]]
        return (str(names[0][0]), str(names[0][1])) in self._vg_client.named

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_vg_"):
            raise AttributeError(name)
        if name == "__signature__" and self._vg_desc.get("k") in ("fn", "cls"):
            # What the worker's inspect.signature() says of the candidate's callable (toolz's Compose has a
            # __signature__ of its own): the oracle's inspect.signature() stops here and returns it.
            return self._vg_client.request({"op": "signature", "obj": self._vg_target()})
        if name.startswith("__") and name.endswith("__") and \
                name not in ("__name__", "__qualname__", "__wrapped__", "__self__", "__func__"):
            raise AttributeError(name)
        value = self._vg_client.request({"op": "getattr", "obj": self._vg_target(), "name": name})
        _note_named(self._vg_client, value, self)
        if isinstance(value, EnumMember) and value.name != name and name in (self._vg_desc.get("alias") or ()):
            # HIGH = "low" beside LOW = "low": the oracle means two cases, the candidate collapsed them.
            raise _candidate_error(TypeError(
                f"{self._vg_desc['t'][0][1]}.{name} is an alias of {self._vg_desc['t'][0][1]}.{value.name} in the "
                "candidate's enum (a member whose value repeats another's): the oracle tells them apart"))
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        self._vg_client.request({"op": "setattr", "obj": self._vg_target(), "name": name,
                                 "value": self._vg_client.encode(value)})

    def __delattr__(self, name: str) -> None:
        self._vg_client.request({"op": "delattr", "obj": self._vg_target(), "name": name})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        client = self._vg_client
        names = self._vg_desc.get("n") or {}
        client.via = f"{names.get('__qualname__') or self._vg_type()}(...)"
        try:
            return client.call(self._vg_target(), args, kwargs)
        finally:
            client.via = ""

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
            raise _candidate_error(TypeError(f"{name} of the candidate's {self._vg_type()} returned "
                                             f"{type(value).__name__}, not {want.__name__}"))
        return value

    # repr() in pytest's and Hypothesis's reports marks the text as the candidate's: an assertion message
    # quoting a candidate object can never read like one quoting a plain value, so a new bug cannot dress
    # its message up as a frozen failure's. repr() in the test's own code is the candidate's own text.
    def __repr__(self) -> str:
        try:
            text = self._vg_checked("__repr__", str)
        except Exception as exc:  # repr must not raise inside pytest's reporting
            return f"<candidate {self._vg_type()} (repr failed: {type(exc).__name__})>"
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if isinstance(caller, str) and caller.startswith(_REPR_CALLERS):
            return f"<candidate {self._vg_type()}: {text}>"
        return text

    def __format__(self, spec: str) -> str:
        value = self._vg_op("__format__", spec)
        if type(value) is not str:
            raise _candidate_error(TypeError(f"__format__ of the candidate's {self._vg_type()} returned "
                                             f"{type(value).__name__}, not str"))
        return value

    def __str__(self) -> str:
        return self._vg_checked("__str__", str)

    def __len__(self) -> int:
        mark = self._vg_mark
        if isinstance(mark, Handle) or mark == "iter":
            # iter(h) and then len(h): list(), tuple() and friends are about to take every item (their
            # length hint asks len() first, then __length_hint__).
            object.__setattr__(mark if isinstance(mark, Handle) else self, "_vg_drain", True)
        return self._vg_checked("__len__", int)

    def __bool__(self) -> bool:
        return self._vg_checked("__bool__", bool)

    def __int__(self) -> int:
        return self._vg_checked("__int__", int)

    def __float__(self) -> float:
        return self._vg_checked("__float__", float)

    def __complex__(self) -> complex:
        return self._vg_checked("__complex__", complex)

    def __index__(self) -> int:
        return self._vg_checked("__index__", int)

    def __round__(self, *ndigits: Any) -> Any:
        return self._vg_op("__round2__", ndigits[0]) if ndigits else self._vg_op("__round__")

    def __hash__(self) -> int:
        # The candidate's own hash: a handle that hashes like an oracle value still never equals it (its
        # __eq__ against plain values fails for a class the oracle never named), so no lookup can be fooled.
        return self._vg_checked("__hash__", int)

    def __contains__(self, item: Any) -> bool:
        return self._vg_checked("__contains__", bool, item)

    def __iter__(self) -> Any:
        if self._vg_desc.get("si"):
            object.__setattr__(self, "_vg_mark", "iter")
            return self
        iterator = self._vg_op("__iter__")
        if isinstance(iterator, Handle):
            object.__setattr__(self, "_vg_mark", iterator)
            if iterator is self:
                object.__setattr__(self, "_vg_mark", "iter")
            return iterator
        return iter(iterator)

    def __next__(self) -> Any:
        buffer = self._vg_buffer
        if buffer:
            item = buffer.pop()
            if isinstance(item, _End):
                raise item.exc
            return item
        n = MAX_BATCH if self._vg_drain else 1
        object.__setattr__(self, "_vg_mark", None)
        answer, generation = self._vg_client.roundtrip({"op": "next", "obj": self._vg_target(), "n": n})
        client = self._vg_client
        if "ok" not in answer:
            return client.result(answer, generation)  # raises the candidate's exception
        try:
            items = [decode(client, t, generation) for t in answer["ok"]]
            client.note_text(*items)
            if answer.get("end"):
                items.append(_End(StopIteration()))
            elif "then" in answer:
                items.append(_End(exception_from(client, answer["then"], generation, op="__next__")))
        except (codec.ProtocolError, KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
            raise client._crash(f"the worker sent a malformed answer ({type(err).__name__}: {err})") from None
        if not items:
            raise client._crash("the worker answered next with nothing")
        items.reverse()
        object.__setattr__(self, "_vg_buffer", items)
        return self.__next__()

    def __length_hint__(self) -> int:
        if self._vg_mark == "iter" or self._vg_drain:
            # list(h), tuple(h), sorted(h), "".join(h), list.extend(h): iter() and then a length hint, then
            # every item with nothing of the oracle in between, so the items may come in batches.
            object.__setattr__(self, "_vg_drain", True)
            object.__setattr__(self, "_vg_mark", None)
            return 0
        value = self._vg_op("__length_hint__")
        return value if type(value) is int else 0

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

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        """The candidate's ``__exit__``, told what the ``with`` body raised; it may suppress only an exception
        candidate code raised, never one of the oracle's own (a failed ``assert`` in the body stays failed)."""
        object.__setattr__(self, "_vg_mark", None)
        message: dict[str, Any] = {"op": "dunder", "obj": self._vg_target(), "name": "__exit__", "exc": None}
        theirs = exc is not None and getattr(exc, "__verdict_gate_origin__", None) == "candidate"
        if exc is not None:
            message["exc"] = {"h": getattr(exc, "__verdict_gate_raised__", None)} if theirs else \
                self._vg_client._exception_body(exc)
        answer = self._vg_client.request(message)
        if exc is None or not theirs:
            return False
        return bool(answer)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        """A candidate function or descriptor that is an attribute of an oracle class (``get =
        cachedmethod(...)(f)`` in a test's class body) binds as it would in plain Python, in the worker."""
        if not self._vg_desc.get("dg"):
            return self
        return self._vg_op("__get__", (instance, owner))

    def __set_name__(self, owner: Any, name: str) -> None:
        """A candidate descriptor in an oracle class body is told its owner and name (``cachedmethod``)."""
        if self._vg_desc.get("sn"):
            self._vg_op("__set_name__", (owner, name))

    def __copy__(self) -> Any:
        return self._vg_op("__copy__")

    def __deepcopy__(self, memo: Any) -> Any:
        return self._vg_op("__deepcopy__", None)

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickled in the worker; unpickling asks the worker to unpickle (never in the oracle process)."""
        data = self._vg_op("__pickle__")
        if type(data) is not bytes:
            raise _candidate_error(TypeError("pickling a candidate object gave no bytes"))
        return (_unpickle, (data,))

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        value = self._vg_op("__vars__")
        if type(value) is not dict:
            raise _candidate_error(TypeError(f"vars() of the candidate's {self._vg_type()} is not a dict"))
        return value

    def _vg_peer(self, other: Any) -> bool:
        return isinstance(other, Handle) and other._vg_client is self._vg_client

    def _vg_compare(self, name: str, other: Any) -> Any:
        if self._vg_peer(other) or self._vg_named():
            return self._vg_op(name, other)
        if isinstance(other, Handle) or not _plain(other):
            return NotImplemented  # another candidate object, or an oracle object of its own: it answers
        # A value of a class the oracle never named: its operators are not the behaviour under test, and a
        # lying __eq__ must not reach the oracle's judgement.
        raise _candidate_error(TypeError(
            f"a candidate {self._vg_type()} (returned by {self._vg_desc.get('via') or 'the candidate'}) was "
            f"compared ({name}) with an oracle {type(other).__name__}: its class was never named by the oracle "
            f"(import it from the candidate's module, or compare a plain value of it)"))

    def __eq__(self, other: Any) -> Any:
        return self._vg_compare("__eq__", other)

    def __ne__(self, other: Any) -> Any:
        return self._vg_compare("__ne__", other)

    def __lt__(self, other: Any) -> Any:
        return self._vg_compare("__lt__", other)

    def __le__(self, other: Any) -> Any:
        return self._vg_compare("__le__", other)

    def __gt__(self, other: Any) -> Any:
        return self._vg_compare("__gt__", other)

    def __ge__(self, other: Any) -> Any:
        return self._vg_compare("__ge__", other)

    def __neg__(self) -> Any:
        return self._vg_op("__neg__")

    def __pos__(self) -> Any:
        return self._vg_op("__pos__")

    def __abs__(self) -> Any:
        return self._vg_op("__abs__")

    def __invert__(self) -> Any:
        return self._vg_op("__invert__")


class LiveHandle(Handle):
    """A list, dict or set the oracle read from a candidate module or object: the candidate's own (changes
    go to the worker); compared by its value, which exact builtin types cannot lie about."""

    __slots__ = ()

    def _vg_compare(self, name: str, other: Any) -> Any:
        import operator

        value = self._vg_op("__copy__")
        return getattr(operator, name.strip("_"))(value, other.__copy__() if isinstance(other, LiveHandle) else other)

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: {type(self).__name__!r}")


class _InstanceAttr:
    """``__doc__`` of a handle class: the class's own for ``type(h).__doc__``, the candidate object's (read from the
    worker) for ``h.__doc__`` (a curry's, a wrapper's)."""

    def __init__(self, name: str, own: Any) -> None:
        self.name, self.own = name, own

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self.own
        return instance._vg_client.request({"op": "getattr", "obj": instance._vg_target(), "name": self.name})


def _plain(value: Any) -> bool:
    """A value the oracle computed (a builtin value, a container of them, a record or enum member the codec
    carries by value), as opposed to an object of a class of its own, which answers its own ``__eq__``."""
    t = type(value)
    if t is object:
        return False  # a bare object() has no value, only identity
    return value is None or t.__module__ in ("builtins", "decimal", "fractions", "datetime", "uuid", "pathlib",
                                             "collections") or isinstance(value, EnumMember) \
        or type(t) is _RecordMeta or isinstance(value, _ValueMirror)


class RemoteFunction(Handle):
    """A candidate function (a ``def``): ``isinstance(f, types.FunctionType)`` and so ``inspect.isfunction``
    hold, and ``f.__module__`` is the function's own module, as for the function itself (``inspect.getmembers``
    of a candidate module finds its functions)."""

    __slots__ = ()
    __doc__ = _InstanceAttr("__doc__", __doc__)

    def __getattribute__(self, name: str) -> Any:
        if name == "__class__":
            return types.FunctionType
        if name == "__module__":
            desc = object.__getattribute__(self, "_vg_desc")
            return (desc.get("n") or {}).get("__module__") or (desc.get("ref") or ["?"])[0]
        return object.__getattribute__(self, name)


class _End:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _binary(name: str) -> Any:
    def op(self: Handle, other: Any) -> Any:
        return self._vg_op(name, other)

    op.__name__ = name
    return op


for _name in ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__",
              "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__radd__", "__rsub__", "__rmul__",
              "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__", "__rand__", "__ror__", "__rxor__",
              "__rlshift__", "__rrshift__", "__rmatmul__", "__divmod__", "__rdivmod__", "__iadd__", "__isub__",
              "__imul__", "__ior__", "__iand__", "__ixor__"):
    setattr(Handle, _name, _binary(_name))


def _unpickle(data: bytes) -> Any:
    """``pickle.loads`` of a candidate object's pickle: in the worker, which gives back a handle."""
    client = _CLIENTS[-1] if _CLIENTS else None
    if client is None:
        raise NotCrossable("a pickled candidate object can only be unpickled while its worker runs")
    return client.request({"op": "unpickle", "arg": client.encode(data)})


_CLIENTS: list[Client] = []  # the client of this process (for unpickling)


def _candidate_error(exc: BaseException) -> BaseException:
    """Mark an exception the proxy raises about a candidate object's behaviour as the candidate's."""
    with contextlib.suppress(Exception):
        exc.__verdict_gate_origin__ = "candidate"  # type: ignore[attr-defined]
    return exc


class RemoteClass(Handle):
    """A candidate class that is not a record or an exception: calling it constructs in the worker;
    ``isinstance`` compares class names with the object's method resolution order. Used as a base in a
    class statement of the oracle's, it builds that class in the worker (:func:`_subclass`)."""

    __slots__ = ()
    __doc__ = _InstanceAttr("__doc__", __doc__)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 3 and isinstance(args[0], str) and isinstance(args[1], tuple) and isinstance(args[2], dict):
            return _subclass(args[0], args[1], args[2], kwargs)  # class X(CandidateClass): ...
        return super().__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if len(args) == 3 and isinstance(args[0], Client):
            super().__init__(*args)

    def __instancecheck__(self, obj: Any) -> bool:
        return _is_instance(obj, self._vg_desc)

    def _vg_compare(self, name: str, other: Any) -> Any:
        # A class equals only itself (unless its metaclass says otherwise, which the worker answers).
        return self._vg_op(name, other) if self._vg_peer(other) else NotImplemented

    def __hash__(self) -> int:
        ref = self._vg_desc.get("ref")  # a class is one object: its name hashes it, whatever handle holds it
        return hash(("class", *ref)) if ref else Handle.__hash__(self)

    def __subclasscheck__(self, cls: Any) -> bool:
        mro = getattr(cls, "_vg_mro", None) or (cls._vg_desc.get("t") if isinstance(cls, Handle) else None) or []
        return list(self._vg_desc["t"][0]) in [list(n) for n in mro]


# A test file's class statements and lines, by (path, source): a file with many subclasses of candidate
# classes (cachetools' tests: 23 in 14 files) is parsed once, not once per statement (4-12 ms each).
_CLASS_STATEMENTS: dict[tuple[str, str], tuple[list[Any], list[str]]] = {}
MAX_CLASS_FILES = 64
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a line, ended as the parser ends one


def _class_statements(filename: str, source: str) -> tuple[list[Any], list[str]]:
    """The ``ast.ClassDef`` nodes of ``source`` and its lines as the parser counts them (only ``\\r\\n``, ``\\r``
    and ``\\n`` end a line, as ``ast.get_source_segment`` splits them), parsed once per distinct text.

    Raises:
        SyntaxError, ValueError: ``source`` does not parse.
    """
    import ast

    key = (filename, source)
    found = _CLASS_STATEMENTS.get(key)
    if found is None:
        found = ([n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)], _LINE.findall(source))
        if len(_CLASS_STATEMENTS) >= MAX_CLASS_FILES:
            _CLASS_STATEMENTS.pop(next(iter(_CLASS_STATEMENTS)))
        _CLASS_STATEMENTS[key] = found
    return found


def _segment(lines: list[str], node: Any) -> str:
    """``ast.get_source_segment(source, node, padded=True)`` from the source's lines, already split: the
    node's text, its first line padded to its column with spaces (tabs and form feeds kept). Offsets are
    UTF-8 byte offsets, as the parser gives them."""
    first, last, start, end = node.lineno - 1, node.end_lineno - 1, node.col_offset, node.end_col_offset
    if first == last:
        return lines[first].encode()[start:end].decode()
    head = lines[first].encode()
    pad = "".join(c if c in "\f\t" else " " for c in head[:start].decode())
    return pad + head[start:].decode() + "".join(lines[first + 1:last]) + lines[last].encode()[:end].decode()


def _subclass(name: str, bases: tuple[Any, ...], namespace: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    """An oracle class statement whose base is a candidate class: the class is built in the worker from the
    statement's source (its instances live beside their base class), and the oracle holds a handle to it
    (docs/design.md §8.1, "Subclasses")."""
    import ast
    import textwrap

    remote = [b for b in bases if isinstance(b, RemoteClass)]
    client = remote[0]._vg_client
    frame = sys._getframe(2)
    filename, line = frame.f_code.co_filename, frame.f_lineno
    qualname = str(namespace.get("__qualname__", name))
    module = str(namespace.get("__module__", frame.f_globals.get("__name__", "")))
    try:
        with open(filename, encoding="utf-8") as fh:
            source = fh.read()
        classes, lines = _class_statements(filename, source)
        node = max((n for n in classes if n.name == name and n.lineno <= line), key=lambda n: n.lineno)
        # Blank lines first, so the worker's tracebacks name the lines of the oracle's file.
        text = "\n" * (node.lineno - 1) + textwrap.dedent(_segment(lines, node))
        used = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - {name})
    except (OSError, SyntaxError, ValueError) as exc:
        raise client.limit(f"class {qualname} derives from the candidate's "
                           f"{remote[0]._vg_type()}, and its source could not be read to build it in the candidate "
                           f"worker ({type(exc).__name__}: {exc}); set `isolation: none` for this property") from None
    # The names the statement uses, as its frame sees them: a class written inside a test function reads
    # that function's locals (a fixture, a closure variable) before the module's globals.
    scope = {**frame.f_globals, **frame.f_locals}
    globals_ = _ModuleGlobals(scope, used)
    ref = client.reference(globals_)["o"]["id"]
    # The names the class statement uses go with it (a class body reads them with LOAD_NAME, which a lazy
    # globals mapping cannot answer); a method may still read a later one through the reference.
    values = [[n, client.encode(scope[n])] for n in used if n in scope and not n.startswith("__")
              and not (isinstance(scope[n], types.ModuleType) and not isinstance(scope[n], ProxyModule)
                       and scope[n].__name__.partition(".")[0] not in sys.stdlib_module_names)]
    cls = client.request({"op": "subclass", "name": name, "qualname": qualname, "module": module, "src": text,
                          "file": filename, "names": used, "globals": ref, "values": values})
    if isinstance(cls, Handle):
        client.named.add((module, qualname))  # the property's own class, built in the worker
        t = cls._vg_desc.get("t") or []
        if t and (client.may_name is None or (str(t[0][0]), str(t[0][1])) == (module, qualname)):
            client.named.add((str(t[0][0]), str(t[0][1])))
    client.keep.append(globals_)  # the worker's class reads its globals for as long as the process runs
    return cls


_TYPE_MRO = [["builtins", "type"], ["builtins", "object"]]


def _mro_of(obj: Any) -> list[list[str]]:
    """The class names of ``type(obj)``'s method resolution order, for ``isinstance`` against a candidate class."""
    if isinstance(obj, Handle):
        if obj._vg_desc.get("k") == "cls":  # a class is an instance of its metaclass, not of itself
            return [list(n) for n in obj._vg_desc.get("mt") or _TYPE_MRO]
        return [list(n) for n in obj._vg_desc.get("t") or []]
    return [list(n) for n in getattr(type(obj), "_vg_mro", None) or []]


def _is_instance(obj: Any, class_desc: dict[str, Any]) -> bool:
    own = list(class_desc["t"][0])
    return own in _mro_of(obj)


_HANDLE_CLASSES: dict[tuple[str, str, str], type] = {}


class _OwnModule:
    """Mixin of the handle class of a candidate object that sets its own ``__module__`` (toolz's ``curry``
    takes its function's): ``h.__module__`` is the object's, read from the worker (it may be set), where a
    handle's would be its class's module."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if name == "__module__":
            module = object.__getattribute__(self, "_vg_client").request(
                {"op": "getattr", "obj": object.__getattribute__(self, "_vg_target")(), "name": "__module__"})
            # A name or None, as the import system and pytest expect; anything else reads as its class's.
            return module if module is None or type(module) is str else type(self).__module__
        return object.__getattribute__(self, name)


class _HandleType(type):
    """Metaclass of a handle's local class: a class attribute the local class does not have itself
    (``type(obj).LIMIT``, ``type(obj).parse(...)``, toolz's ``compose(f, h).__class__.__wrapped__``) is read from
    the candidate's class in the worker, as :meth:`Handle.__getattr__` reads an instance's. A class the worker
    cannot name (one defined in a function) has none."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("_vg_") or (name.startswith("__") and name.endswith("__") and name != "__wrapped__"):
            raise AttributeError(name)
        home = type.__getattribute__(cls, "__dict__").get("_vg_home")
        if home is None or "<locals>" in home[1][1]:
            raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")
        client, ref = home
        value = client.request({"op": "getattr", "obj": {"ref": ref}, "name": name})
        _note_named(client, value, cls)
        return value


class _NoLength(TypeError, AttributeError):
    """``len()`` of a handle whose candidate object has no ``__len__`` (a generator): a ``TypeError``, as plain
    ``len()`` raises, and an ``AttributeError``, so ``hasattr(h, "__len__")`` is false as for the object itself
    (multiprocessing's ``Pool.map`` asks it before taking the items with ``list()``)."""


class _Unsized:
    """``__len__`` of the handle class of a candidate iterator without one: reading it raises :class:`_NoLength`."""

    __slots__ = ()

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        raise _NoLength(f"object of type {type(instance).__name__!r} has no len()")


_UNSIZED = _Unsized()


def _handle_class(desc: dict[str, Any], client: Client | None = None) -> type:
    """The local class of a handle: a subclass of :class:`Handle` named like the candidate's class, whose
    class attributes ``client``'s worker answers (:class:`_HandleType`)."""
    kind = str(desc.get("k"))
    if kind == "cls":
        return RemoteClass
    names = desc.get("t") or [["?", "?"]]
    if kind == "fn" and list(names[0]) == ["builtins", "function"]:
        return RemoteFunction
    base = LiveHandle if kind == "live" else Handle
    module, qualname = str(names[0][0]), str(names[0][1])
    own_module, unsized = bool(desc.get("om")), bool(desc.get("nl"))
    key = (module, qualname, kind + ("+om" if own_module else "") + ("+nl" if unsized else ""))
    cls = _HANDLE_CLASSES.get(key)
    if cls is None:
        namespace: dict[str, Any] = {"__slots__": (), "__module__": module, "__qualname__": qualname}
        if unsized:
            namespace["__len__"] = _UNSIZED
        cls = _HandleType(qualname.rpartition(".")[2] or "Handle", (_OwnModule, base) if own_module else (base,),
                          namespace)
        cls.__doc__ = _InstanceAttr("__doc__", None)  # type: ignore[assignment]
        if len(_HANDLE_CLASSES) < 10_000:
            _HANDLE_CLASSES[key] = cls
    home = type.__getattribute__(cls, "__dict__").get("_vg_home")
    if client is not None and (home is None or home[0] is not client):
        # The classes are shared by every client of the process (one, in a run); set only when it changes,
        # since writing a class attribute invalidates the interpreter's caches for that class.
        cls._vg_home = (client, [module, qualname])  # type: ignore[attr-defined]
    return cls


def _note_named(client: Client, value: Any, via: Any) -> None:
    """A class the oracle read by name (from a candidate module, or a named class) is named: its operators
    answer against the oracle's values (docs/design.md §8.1)."""
    if isinstance(value, (RemoteClass, _RecordMeta)):
        t = value._vg_desc.get("t") or []
        if t and (client.may_name is None or f"{t[0][0]}:{t[0][1]}" in client.may_name):
            client.named.add((str(t[0][0]), str(t[0][1])))


class _RecordMeta(type):
    """Metaclass of mirror record classes: calling the class constructs in the worker."""

    _vg_client: Client
    _vg_desc: dict[str, Any]
    _vg_gen: int

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        """Construct in the worker (so its validation runs and its exceptions propagate), then give a record of
        exactly this class holding the oracle's own value for every argument the oracle passed: an expected
        value written in a property is the oracle's data, never what the candidate's constructor made of it."""
        client = cls._vg_client
        target = _target(cls._vg_desc, cls._vg_gen, client) or {"ref": cls._vg_desc.get("ref")}
        built = client.call(target, args, kwargs)
        if type(built) is not cls:
            raise _candidate_error(TypeError(
                f"the candidate's {cls.__qualname__}(...) gave a {type(built).__qualname__}, not a "
                f"{cls.__qualname__} (its __new__ returned another class)"))
        init, fields = list(cls._vg_desc.get("init") or []), list(cls._vg_desc.get("f") or [])
        unmapped = len(args) > len(init) or any(k not in fields for k in kwargs)
        if unmapped:
            # Its constructor takes arguments that are not its fields: what it built from them is the
            # candidate's data, which an expected value must never be.
            raise client.limit(f"{cls.__qualname__}(...) takes arguments that are not its fields, so a record built "
                               "by it in a property would hold what the candidate made of them; build the expected "
                               "value from its fields (keywords), or set `isolation: none` for this property")
        given = dict(zip(init, args, strict=False))
        given.update(kwargs)
        if not given:
            return built
        values = [given.get(name, getattr(built, name) if cls._vg_kind != "nt" else built[i])
                  for i, name in enumerate(fields)]
        held = built.__dict__.get("_vg_handle") if hasattr(built, "__dict__") else None
        return _build_record(cls, values, held[0] if held else None, held[1] if held else client.generation,
                             given)

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or _is_instance(obj, cls._vg_desc)

    def __repr__(cls) -> str:
        return f"<candidate record class {'.'.join(cls._vg_desc['t'][0])}>"


@dataclasses.dataclass(frozen=True)
class EnumMember:
    """A candidate enum member: equal to another when class and member name are the same; a member of an
    ``int``/``str``/``float`` enum also equals its value, as ``IntEnum`` and ``StrEnum`` members do."""

    cls: tuple[str, str]
    name: str
    value: Any = dataclasses.field(compare=False)
    plain: bool = dataclasses.field(default=False, compare=False)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, EnumMember):
            return (self.cls, self.name) == (other.cls, other.name)
        if self.plain and type(other) in (int, str, float, bool):
            return bool(self.value == other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.value) if self.plain else hash((self.cls, self.name))

    def __repr__(self) -> str:
        return f"<{self.cls[1]}.{self.name}: {self.value!r}>"


_MIRRORS: dict[Any, type] = {}


class CandidateBaseException(Exception):
    """Stands for a candidate's ``BaseException`` subclass of its own (not ``SystemExit``,
    ``KeyboardInterrupt`` or ``GeneratorExit``): in the oracle process it would stop pytest itself."""


class CandidateKeyboardInterrupt(KeyboardInterrupt):
    """A ``KeyboardInterrupt`` the candidate raised: ``pytest.raises(KeyboardInterrupt)`` catches it; the plugin
    turns one that reaches pytest into the test's failure (a real Ctrl-C still stops the run)."""


class _CandidateStopIteration(Exception):
    """``StopIteration`` raised by a candidate call other than ``__next__``: an ordinary exception here, so it
    cannot end the oracle's own ``all(map(...))`` or generator early (docs/design.md §8.1)."""


_CandidateStopIteration.__module__ = "builtins"
_CandidateStopIteration.__name__ = _CandidateStopIteration.__qualname__ = "StopIteration"


def _builtin_exception(name: str) -> type | None:
    import builtins

    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None


class _MirrorMeta(type):
    """Metaclass of mirror exception classes: calling one in the oracle (an expected exception built in a test,
    ``TOMLDecodeError(msg, doc, pos)``) runs the candidate's constructor in the worker, so its message, its
    ``args`` and its warnings are the candidate's; ``pytest.raises`` and ``isinstance`` use the local class."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        client = _CLIENTS[-1] if _CLIENTS else None
        ref = cls.__dict__.get("_vg_ref")
        if client is None or client.proc is None or not ref:
            return type.__call__(cls, *args, **kwargs)
        answer, generation = client.roundtrip({"op": "exception", "obj": {"ref": list(ref)},
                                               "args": client.encode(list(args)),
                                               "kw": [[k, client.encode(v)] for k, v in kwargs.items()]})
        if "exc" not in answer:
            client.result(answer, generation)  # raises what the constructor raised
            raise client._crash("the worker built no exception")
        exc = exception_from(client, answer["exc"], generation)
        exc.__dict__.pop("__verdict_gate_origin__", None)  # built for the oracle: raised, it is the oracle's
        return exc


def _mirror_str(self: BaseException) -> str:
    message = self.__dict__.get("_vg_msg")
    return message if isinstance(message, str) else Exception.__str__(self)


def _mirror_getattr(self: BaseException, name: str) -> Any:
    """A public attribute of the candidate's exception (``excinfo.value.code``), read from the worker."""
    held = self.__dict__.get("__verdict_gate_raised__")
    client = self.__dict__.get("_vg_client")
    if name.startswith("_") or held is None or client is None or self.__dict__.get("_vg_gen") != client.generation:
        raise AttributeError(name)
    return client.request({"op": "getattr", "obj": {"id": held}, "name": name})


def mirror_exception(mro: Sequence[Sequence[str]], base: type = Exception, *, ordinary_stop: bool = False) -> type:
    """A local exception class standing for a candidate's, ranked like it: builtin classes are
    themselves (``SystemExit``, ``KeyboardInterrupt`` and ``GeneratorExit`` as themselves, a candidate's
    other ``BaseException``-only classes as :class:`CandidateBaseException`); every other class in the chain
    is a local class with the candidate's module and qualified name. ``ordinary_stop``: ``StopIteration`` and
    ``StopAsyncIteration`` (and subclasses) become ordinary exceptions (a candidate call other than
    ``__next__`` must not end the oracle's loop)."""
    chain = [(str(m), str(q)) for m, q in mro if not (m == "builtins" and q in ("object", "BaseException"))]
    for module, qualname in reversed(chain):
        if module == "builtins":
            found = _builtin_exception(qualname)
            if found is None:
                continue
            if ordinary_stop and found in (StopIteration, StopAsyncIteration):
                found = _CandidateStopIteration
            elif found is KeyboardInterrupt:
                found = CandidateKeyboardInterrupt
            elif not issubclass(found, Exception) and found not in (SystemExit, GeneratorExit):
                found = CandidateBaseException
            if issubclass(found, base) or found in (SystemExit, GeneratorExit, CandidateKeyboardInterrupt):
                base = found
            continue
        key = (module, qualname, base, ordinary_stop)
        if key not in _MIRRORS:
            name = qualname.rsplit(".", 1)[-1]
            _MIRRORS[key] = _MirrorMeta(name, (base,), {"__module__": module, "__qualname__": qualname,
                                                        "_vg_mirror": True, "_vg_ref": [module, qualname],
                                                        "__str__": _mirror_str, "__getattr__": _mirror_getattr})
        base = _MIRRORS[key]
    return base


def record_class(client: Client, desc: dict[str, Any], generation: int) -> type:
    """The mirror class of a candidate dataclass, named tuple or attrs class (cached by name and fields).
    It compares by value on the fields the class compares, and on every field the oracle gave when it built
    either record (:func:`_record_eq`)."""
    kind, fields = desc.get("rk"), [str(f) for f in desc.get("f") or []]
    uncompared = frozenset(str(f) for f in desc.get("nc") or [] if f in fields)
    module, qualname = (str(x) for x in desc["t"][0])
    _check_record_names(qualname.rsplit(".", 1)[-1], fields)
    key = ("record", id(client), module, qualname, kind, tuple(fields), tuple(sorted(uncompared)))
    cls = _MIRRORS.get(key)
    if cls is None:
        name = qualname.rsplit(".", 1)[-1]
        # Built under a module name of its own: dataclasses reads the class's module's namespace, which for a
        # candidate module would be a request to the worker (and its records, and so on); renamed after.
        ns: dict[str, Any] = {"__module__": __name__, "__qualname__": qualname, "_vg_kind": kind,
                              "_vg_uncompared": uncompared, "__getattr__": _record_getattr}
        if kind == "nt":
            base = collections.namedtuple(name, fields, rename=True, module=__name__)  # type: ignore[misc]
            cls = _RecordMeta(name, (base,), ns)
        else:
            ns["__annotations__"] = {f: Any for f in fields}
            ns["__eq__"], ns["__hash__"] = _record_eq, _record_hash
            cls = dataclasses.dataclass(frozen=True, eq=False, repr=True)(_RecordMeta(name, (), ns))  # type: ignore[arg-type]
        cls.__module__ = module
        _MIRRORS[key] = cls
    cls._vg_client, cls._vg_desc, cls._vg_gen = client, desc, generation  # type: ignore[attr-defined]
    cls._vg_mro = [list(n) for n in desc["t"]]  # type: ignore[attr-defined]
    return cls


def _check_record_names(name: str, fields: list[str]) -> None:
    """The names a mirror record class is built from, checked before any code is written from them: the
    standard library builds a dataclass's ``__init__`` and ``__repr__`` as source text from its field names
    and runs it here (found by a red-team run: a name that was Python source ran in the oracle's process).
    A class name and each field name must be an identifier and no keyword, a field name none of the mirror's
    own (a dunder or ``_vg_…``), each field once.

    Raises:
        codec.ProtocolError: the worker described a record no Python class could have (a crash of the
            candidate, never run)."""
    for text in (name, *fields):
        if not text.isidentifier() or keyword.iskeyword(text):
            raise codec.ProtocolError(f"the worker described a record with the name {text[:80]!r}, which no "
                                      "Python class or field can have")
    for field in fields:
        if field.startswith("_vg_") or (field.startswith("__") and field.endswith("__")):
            raise codec.ProtocolError(f"the worker described a record field named {field[:80]!r}")
    if len(set(fields)) != len(fields):
        raise codec.ProtocolError("the worker described a record with a field named twice")


def _build_record(cls: type, values: list[Any], handle: int | None, generation: int,
                  given: Iterable[str] = ()) -> Any:
    if cls._vg_kind == "nt":  # type: ignore[attr-defined]
        obj: Any = tuple.__new__(cls, values)
    else:
        obj = object.__new__(cls)
        for f, v in zip(cls.__dataclass_fields__, values, strict=True):  # type: ignore[attr-defined]
            object.__setattr__(obj, f, v)
        if given:
            object.__setattr__(obj, "_vg_given", frozenset(given))
    if handle is not None:
        object.__setattr__(obj, "_vg_handle", (handle, generation))
    return obj


def _record_eq(self: Any, other: Any) -> Any:
    """Equality of two records of one class: the fields the class compares, as in plain Python, and also
    every field the oracle gave when it built either of them. An expected value the property wrote,
    ``Price(cents, "EUR")``, is compared on ``cents`` even if the candidate declares ``cents`` with
    ``field(compare=False)``; a field the property never gave (an honest patch's new ``note`` that the class
    leaves out of its equality) stays out of it (docs/design.md §8.1)."""
    if type(other) is not type(self):
        return NotImplemented
    skip = type(self)._vg_uncompared - self.__dict__.get("_vg_given", frozenset()) \
        - other.__dict__.get("_vg_given", frozenset())
    return all(getattr(self, f) == getattr(other, f) for f in self.__dataclass_fields__ if f not in skip)


def _record_hash(self: Any) -> int:
    # Over the fields the class compares: records equal by _record_eq agree on those, so their hashes agree.
    return hash(tuple(getattr(self, f) for f in self.__dataclass_fields__ if f not in type(self)._vg_uncompared))


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


class _ValueMirror:
    """Mixin of the local class of a candidate's subclass of an immutable builtin (``tuple``, ``str``, ``int``,
    ``float``, ``bytes``, ``frozenset``): the instance *is* the builtin value (``isinstance(key, tuple)``,
    hashing and equality by value); what the subclass adds (a method, an attribute, an operator it
    overrides) is asked of the candidate's object. An operator it overrides that compares or hashes is the
    candidate's only for a class the oracle named; otherwise the builtin's (a lying ``__eq__`` never reaches
    the oracle)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_vg_") or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        handle = _mirror_handle(self)
        if handle is None:
            raise AttributeError(name)
        return getattr(handle, name)


_VALUE_BUILTINS = {t.__name__: t for t in (tuple, str, int, float, bytes, frozenset)}
_VALUE_CLASSES_SEEN: dict[Any, type] = {}
_COMPARING = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__"})


def _mirror_handle(obj: Any) -> Handle | None:
    """The handle of the candidate's own object behind a builtin value (it lives as long as the value does)."""
    held = obj.__dict__.get("_vg_handle") if hasattr(obj, "__dict__") else None
    if not isinstance(held, Handle) or held._vg_gen != held._vg_client.generation:
        return None
    return held


def _forward(name: str, builtin: type) -> Any:
    fallback = getattr(builtin, name, lambda *_args: NotImplemented)

    def op(self: Any, *args: Any) -> Any:
        handle = _mirror_handle(self)
        names = self._vg_names
        named = handle is not None and (names[0], names[1]) in handle._vg_client.named
        if handle is None or (name in _COMPARING and not named):
            return fallback(self, *args)
        if name == "__hash__":
            return handle._vg_checked("__hash__", int)
        if name in ("__repr__", "__str__"):
            return Handle.__repr__(handle) if name == "__repr__" else Handle.__str__(handle)
        return handle._vg_op(name, *args)

    op.__name__ = name
    return op


def _builtin_value(client: Client, p: dict[str, Any], generation: int) -> Any:
    builtin = _VALUE_BUILTINS.get(str(p["b"]))
    if builtin is None:
        raise codec.ProtocolError("a builtin value of an unknown type")
    desc = p["c"]
    names = tuple(str(x) for x in desc["t"][0])
    over = tuple(sorted(str(n) for n in p.get("ov") or () if hasattr(builtin, str(n)) or str(n).startswith("__r")))
    key = (names, builtin, over)
    cls = _VALUE_CLASSES_SEEN.get(key)
    if cls is None:
        ns: dict[str, Any] = {"__module__": names[0], "__qualname__": names[1], "_vg_names": names,
                              "_vg_mro": [list(n) for n in desc["t"]]}
        ns.update({n: _forward(n, builtin) for n in over})
        if "__eq__" in over and "__hash__" not in over:
            ns["__hash__"] = _forward("__hash__", builtin)
        cls = type(names[1].rpartition(".")[2], (builtin, _ValueMirror), ns)
        if len(_VALUE_CLASSES_SEEN) < 10_000:
            _VALUE_CLASSES_SEEN[key] = cls
    value = decode(client, p["v"], generation)
    if type(value) is not builtin:
        raise codec.ProtocolError("a builtin value of the wrong type")
    obj: Any = builtin.__new__(cls, value)
    if type(p.get("h")) is int:
        held = {"k": "obj", "t": desc["t"], "id": p["h"]}
        where = (generation, p["h"])
        obj.__dict__["_vg_handle"] = client.handles.get(where) or _handle_class(held, client)(client, held, generation)
        client.handles[where] = obj.__dict__["_vg_handle"]
    return obj


# --- decoding and encoding -----------------------------------------------------------------------------

_PLAIN = (bool, int, float, str)  # exact types: their JSON form is the value itself

# Classes of the standard library a handle from the worker may stand for here as themselves (value types:
# calling one makes a value, nothing else); any other class stays a handle whose calls run in the worker.
_VALUE_CLASSES = frozenset({
    ("builtins", n) for n in ("int", "float", "complex", "str", "bytes", "bytearray", "bool", "list", "tuple",
                              "dict", "set", "frozenset", "range", "slice", "object", "type", "NoneType")} | {
    ("decimal", "Decimal"), ("fractions", "Fraction"), ("datetime", "datetime"), ("datetime", "date"),
    ("datetime", "time"), ("datetime", "timedelta"), ("uuid", "UUID"), ("collections", "OrderedDict"),
    ("collections", "Counter"), ("collections", "deque"), ("collections", "defaultdict"),
    ("types", "SimpleNamespace"), ("pathlib", "PurePosixPath"), ("pathlib", "Path")})


def decode(client: Client, tree: Any, generation: int) -> Any:
    if tree is None or type(tree) in _PLAIN:
        return tree

    def make(tag: str, p: Any) -> Any:
        if tag == "h":
            ref = p.get("ref")
            if p.get("k") == "cls" and ref and (str(ref[0]), str(ref[1])) in _VALUE_CLASSES \
                    and str(ref[0]) in sys.modules:
                return _local(str(ref[0]), str(ref[1]))
            if p.get("k") == "fn" and ref and _pure_function(str(ref[0]), str(ref[1])):
                with contextlib.suppress(AttributeError, KeyError):
                    return _local(str(ref[0]), str(ref[1]))  # random.choice, str.lower: the oracle's own
            key = (generation, p.get("id"))
            known = client.handles.get(key) if p.get("id") is not None else None
            if known is not None:
                return known
            if p.get("k") == "cls" and "f" in p:
                return record_class(client, p, generation)
            if client.via and "via" not in p:
                p["via"] = client.via
            handle = _handle_class(p, client)(client, p, generation)
            if p.get("id") is not None:
                client.handles[key] = handle
                if p["id"] in client.releases:  # an earlier handle of it died, its release not sent yet
                    client.releases.remove(p["id"])
            return handle
        if tag == "lk":
            value = client.links.get(p, client.offered.get(p)) if type(p) is int else None
            if value is None:
                raise codec.ProtocolError("the worker named a linked container it was never given")
            return value
        if tag == "o":
            rid = p if type(p) is int else None
            if rid is None or rid not in client.local:
                raise codec.ProtocolError("the worker named an oracle object it was never given")
            return client.local[rid]
        if tag == "r":
            cls = record_class(client, p["c"], generation)
            fields = [decode(client, value, generation) for _name, value in p["f"]]
            return _build_record(cls, fields, p.get("h"), generation)
        if tag == "bv":
            return _builtin_value(client, p, generation)
        if tag == "en":
            names = p["c"]["t"]
            plain = any(list(n) in (["builtins", "int"], ["builtins", "str"], ["builtins", "float"]) for n in names)
            return EnumMember((str(names[0][0]), str(names[0][1])), str(p["n"]), decode(client, p["v"], generation),
                              plain)
        if tag == "x":
            return mirror_exception(p, ordinary_stop=True)  # as a call would raise it (pytest.raises)
        if tag == "xv":  # an exception object handed over as a value (not raised)
            return exception_from(client, p, generation)
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


# Modules of the standard library whose functions only compute (no files, processes, imports or code): one the
# candidate hands back (random.choice as a default, a key function str.lower) is the oracle's own again, so
# identity and equality hold as in one process. Any other function stays a handle that runs in the worker.
_PURE_MODULES = frozenset({"math", "cmath", "operator", "itertools", "functools", "random", "statistics", "string",
                           "decimal", "fractions", "datetime", "json", "re", "collections", "heapq", "bisect",
                           "copy", "textwrap", "unicodedata", "base64", "binascii", "hashlib", "struct", "zlib",
                           "calendar", "numbers", "enum"})
_IMPURE_BUILTINS = frozenset({"eval", "exec", "compile", "open", "__import__", "input", "breakpoint", "exit", "quit",
                              "help", "globals", "locals", "vars", "setattr", "delattr", "getattr", "print"})


def _pure_function(module: str, qualname: str) -> bool:
    if module == "builtins":
        return qualname.partition(".")[0] not in _IMPURE_BUILTINS
    return module in _PURE_MODULES and module in sys.modules


def _local(module: str, qualname: str) -> Any:
    import builtins

    if module == "builtins" and qualname == "NoneType":
        return type(None)
    obj: Any = builtins if module == "builtins" else sys.modules[module]
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _local_exception(cls: type, *args: Any) -> BaseException:
    """An instance of a (mirror) exception class built here, never by the candidate's constructor."""
    exc = type.__call__(cls, *args)
    assert isinstance(exc, BaseException)
    return exc


def exception_from(client: Client, body: dict[str, Any], generation: int, op: str = "",
                   depth: int = 0) -> BaseException:
    """The candidate's exception, raised again here as data (builtin or mirrored class), marked as raised by
    the candidate (its signature's ``origin``) with the worker's frames and what it was raised from; an
    oracle exception that came back through candidate code is the oracle's own object again."""
    oracle = body.get("o")
    if type(oracle) is int and isinstance(client.local.get(oracle), BaseException):
        return client.local[oracle]
    cls = mirror_exception(body["t"], ordinary_stop=op != "__next__")
    message = str(body.get("msg", ""))
    exc: BaseException | None = None
    if body.get("args") is not None:
        try:
            args = decode(client, body["args"], generation)
            exc = _local_exception(cls, *args) if isinstance(args, tuple) else None
        except Exception:
            exc = None
    if exc is None or (message and str(exc) != message and cls.__module__ == "builtins"
                       and cls is not _CandidateStopIteration):
        try:
            exc = _local_exception(cls, message)
        except Exception:
            exc = _local_exception(mirror_exception([[cls.__module__, cls.__qualname__], ["builtins", "Exception"]]),
                                   message)
    if cls is CandidateBaseException or (not client.as_itself and issubclass(cls, (SystemExit, KeyboardInterrupt,
                                                                                  GeneratorExit))):
        # Outside a test's call (at collection, in a fixture) pytest would stop on these: an ordinary exception.
        names = ".".join(body["t"][0])
        exc = CandidateBaseException(f"{names}: {message}")
    with contextlib.suppress(Exception):  # an exception class with __slots__ cannot carry them
        setattr(exc, "__verdict_gate_frames__", [list(f) for f in body.get("tb") or []])  # noqa: B010
        setattr(exc, "__verdict_gate_origin__", "candidate")  # noqa: B010
        if type(body.get("h")) is int:
            setattr(exc, "__verdict_gate_raised__", body["h"])  # noqa: B010
        if getattr(type(exc), "_vg_mirror", False):
            exc.__dict__.update({"_vg_msg": message, "_vg_client": client, "_vg_gen": generation})
    if depth < 3:  # raised from: pytest's report and `raise ... from` checks read these
        with contextlib.suppress(Exception):
            for key, attr in (("cause", "__cause__"), ("ctx", "__context__")):
                if isinstance(body.get(key), dict):
                    setattr(exc, attr, exception_from(client, body[key], generation, depth=depth + 1))
            exc.__suppress_context__ = bool(body.get("sc"))
    return exc


def _stdlib_ref(obj: Any) -> list[str] | None:
    """``[module, qualname]`` of a function or class of the standard library (or a builtin), which the worker
    resolves to its own copy: ``key=str.lower``, ``parse_float=Decimal`` stay plain calls there."""
    if not (isinstance(obj, (type, types.BuiltinFunctionType, types.FunctionType)) or
            type(obj).__name__ in ("method_descriptor", "wrapper_descriptor", "classmethod_descriptor")):
        return None
    if isinstance(obj, types.BuiltinFunctionType) and obj.__self__ is not None \
            and not isinstance(obj.__self__, types.ModuleType):
        return None  # a method bound to an object (some_list.append): that object is the oracle's
    owner = getattr(obj, "__objclass__", None)
    module = getattr(owner if owner is not None else obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if type(module) is not str or type(qualname) is not str or "<" in qualname:
        return None
    top = module.partition(".")[0].lstrip("_")
    if module != "builtins" and top not in sys.stdlib_module_names and module.partition(".")[0] not in \
            sys.stdlib_module_names:
        return None
    try:
        found = _local(module, qualname) if module in sys.modules or module == "builtins" else None
    except (AttributeError, KeyError):
        return None
    return [module, qualname] if found is obj else None


def encode_local(client: Client, obj: Any) -> Any:
    """The wire form of an oracle-side object sent to the worker (fallback of the codec): the candidate's own
    objects as handles, records by value, the standard library's functions and classes by name, and every
    other oracle object by reference (:meth:`Client.reference`)."""
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
    if isinstance(obj, _ValueMirror):
        handle = _mirror_handle(obj)
        if handle is not None:
            return {"h": handle._vg_target()}  # the candidate's own object again
        base = next(t for t in _VALUE_BUILTINS.values() if isinstance(obj, t))
        return client.encode(base(obj) if base is not str else str.__str__(obj))
    if isinstance(obj, ProxyModule):
        return {"mod": obj.__name__}
    if isinstance(obj, type) and issubclass(obj, BaseException) and getattr(obj, "_vg_mirror", False):
        return {"x": [[obj.__module__, obj.__qualname__]]}
    if isinstance(obj, BaseException):  # an exception as a value: as data (it comes back as itself)
        return {"xv": client._exception_body(obj)}
    if isinstance(obj, types.ModuleType):
        name = obj.__name__
        if name.partition(".")[0] in sys.stdlib_module_names:
            return {"mod": name}
        raise client.limit(f"the oracle's module {name!r} cannot be passed to candidate code across the isolation "
                           "boundary (a module of the standard library or of the candidate can)")
    ref = _stdlib_ref(obj)
    if ref is not None:
        return {"h": {"ref": ref}}
    return client.reference(obj)


# --- the import hook ------------------------------------------------------------------------------------

_LOCAL_MODULE_ATTRS = frozenset({"__spec__", "__loader__", "__path__", "__package__", "__file__", "__cached__",
                                 "__builtins__", "__name__", "__doc__"})


class ProxyModule(types.ModuleType):
    """A candidate module seen from the oracle: attributes are read from the worker; setting one sets it in
    the worker (``monkeypatch.setattr(module, "NAME", value)``); a list, dict or set read from it is the
    candidate's own, live; ``vars(module)`` and ``module.__dict__`` are the candidate module's namespace."""

    def __init__(self, name: str, client: Client | None = None) -> None:
        super().__init__(name)
        _own(self)["_vg_client"] = client

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__") and \
                name not in ("__all__", "__version__", "__file__", "__test__"):
            raise AttributeError(name)
        client = _client_of(self)
        if name == "__all__":
            return _star_names(self, client)
        value = client.request({"op": "getattr", "obj": {"ref": [self.__name__, ""]}, "name": name})
        _note_named(client, value, self)
        if isinstance(value, (RemoteClass, type, ProxyModule)) or \
                (isinstance(value, Handle) and value._vg_desc.get("k") == "fn"):
            _own(self)[name] = value  # functions and classes are stable; values are read afresh
        return value

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        """The candidate module's namespace (its public names and ``__name__``, ``__doc__``, ``__all__``,
        ``__file__``), as the worker holds it now: a copy."""
        client = _client_of(self)
        found = client.request({"op": "vars", "obj": {"ref": [self.__name__, ""]}})
        if isinstance(found, dict):
            client.note_text(*found.values())
        return found if isinstance(found, dict) else {}

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LOCAL_MODULE_ATTRS or name.startswith("_vg_") or isinstance(value, ProxyModule):
            super().__setattr__(name, value)  # the import system's own attributes, a submodule
            return
        client = _client_of(self)
        client.request({"op": "setattr", "obj": {"ref": [self.__name__, ""]}, "name": name,
                        "value": client.encode(value)})
        _own(self).pop(name, None)

    def __delattr__(self, name: str) -> None:
        if name in _LOCAL_MODULE_ATTRS or name.startswith("_vg_"):
            super().__delattr__(name)
            return
        client = _client_of(self)
        client.request({"op": "delattr", "obj": {"ref": [self.__name__, ""]}, "name": name})
        _own(self).pop(name, None)

    def __dir__(self) -> list[str]:
        client = _client_of(self)
        names = client.request({"op": "dir", "obj": {"ref": [self.__name__, ""]}})
        return sorted((set(names) | set(_own(self))) - {"_vg_client"})


def _own(module: types.ModuleType) -> dict[str, Any]:
    """A module's own attribute dict (a :class:`ProxyModule` answers ``__dict__`` with the candidate's)."""
    found = vars(types.ModuleType)["__dict__"].__get__(module)
    assert isinstance(found, dict)
    return found


def _client_of(module: types.ModuleType) -> Client:
    client = _own(module).get("_vg_client")
    if not isinstance(client, Client):
        raise AttributeError(f"{module.__name__} is not connected to a candidate worker")
    return client


_IMPORT_STAR = 84  # dis.opmap["IMPORT_STAR"] (3.11, 3.12)


def _star_names(module: ProxyModule, client: Client) -> list[str]:
    """``module.__all__``: the candidate's, or (without one) its public names, as a star import would bind
    them; in a star import, never a builtin's name or a name the importer already bound (docs/design.md §8.1:
    ``from candidate import *`` must not replace the ``sum`` an expected value is computed with)."""
    import builtins
    import dis

    try:
        names = client.request({"op": "getattr", "obj": {"ref": [module.__name__, ""]}, "name": "__all__"})
        names = list(names) if not isinstance(names, Handle) else [str(n) for n in names]
    except AttributeError:
        names = [n for n in client.request({"op": "dir", "obj": {"ref": [module.__name__, ""]}})
                 if isinstance(n, str) and not n.startswith("_")]
    frame = sys._getframe(2)
    star = frame.f_code.co_code[frame.f_lasti] == dis.opmap.get("IMPORT_STAR", _IMPORT_STAR)
    if not star:
        return names
    bound = frame.f_globals
    kept = [n for n in names if isinstance(n, str) and not hasattr(builtins, n) and n not in bound]
    dropped = [n for n in names if n not in kept]
    if dropped:
        warnings.warn(f"from {module.__name__} import *: not bound (a builtin's name, or a name the importer "
                      f"already bound): {', '.join(map(str, dropped[:20]))}", BoundaryWarning, stacklevel=3)
    return kept


class _Loader(importlib.abc.Loader):
    def __init__(self, client: Client) -> None:
        self.client = client

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = ProxyModule(spec.name, self.client)
        doc = spec.loader_state
        if type(doc) is str:
            # The candidate module's docstring, as it was imported: text, like a function's __doc__. A doctest
            # of it never runs here (_fence_doctest: testmod runs in the worker, anything else is refused).
            _own(module)["__doc__"] = doc
            self.client.note_text(doc)
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
                                              is_package=bool(found.get("pkg")), loader_state=found.get("doc"))
        if found.get("pkg"):
            spec.submodule_search_locations = []
        return spec


def provided_names(python_path: Iterable[str]) -> set[str]:
    """Top-level module names the candidate's directories provide (``x.py``, a directory ``x/`` holding a
    ``.py`` or ``.so``, extension modules ``x.*.so``), minus the standard library's (never served)."""
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
    return names - set(sys.stdlib_module_names)


def candidate_names(python_path: Iterable[str], exclude: Iterable[str] = ()) -> set[str]:
    """The names the import hook serves: :func:`provided_names`, minus modules already imported and
    ``exclude``."""
    blocked = {n.partition(".")[0] for n in sys.modules} | set(exclude)
    return {n for n in provided_names(python_path) if n not in blocked}


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
    """Put the proxy hook first on ``sys.meta_path`` for the candidate's top-level names, and make this
    process's ``random`` seeding reach the worker's (a test's ``random.seed(...)``, Hypothesis's per-example
    seeding: candidate code that draws from ``random`` draws what it would in plain pytest).

    ``modules`` (the catalog's): exactly these names are the candidate's. Without it, every name the
    candidate's directories provide (:func:`candidate_names`); one of them that is also importable
    from the oracle's own ``sys.path`` (a package installed beside the gate) is ambiguous and its
    import fails with the fix, rather than judge either one silently."""
    client.oracle_roots = [os.path.realpath(pack_dir) + os.sep, pack_dir.rstrip(os.sep) + os.sep]
    _follow_random(client)
    _fence_doctest(client)
    textfence.install(client)
    if modules:
        return _insert(Finder(client, modules))
    names = candidate_names(python_path, pack_module_names(pack_dir))
    ambiguous = {n for n in names if importlib.machinery.PathFinder.find_spec(n, sys.path) is not None}
    return _insert(Finder(client, names - ambiguous, ambiguous))


MAX_DOC_TEXTS = 10_000  # texts with doctest examples a client keeps (Client.note_text)
MIN_PIECE = 6  # characters of a worker text, stripped, from which textfence looks for it (`exit()` is six)
MAX_TEXTS = 500_000  # worker texts a client keeps (Client.note_text)
MAX_TEXT_BYTES = 32 << 20  # their characters (or bytes) in all


def _fence_doctest(client: Client) -> Any:
    """Doctests of candidate code never run in this process: a docstring or a text file of the candidate's is the
    candidate's text, and a doctest runs it as code.

    - ``doctest.testmod(module)`` of a candidate module runs in the worker, as plain pytest runs it in one
      process (``name``, ``verbose``, ``report``, ``optionflags`` and ``exclude_empty`` go with it; what it
      prints is the worker's output, forwarded) and returns its ``TestResults``; so does
      ``doctest.testfile(path)`` of a file outside the pack (the candidate's README).
    - Every other doctest of candidate text is refused as a boundary limit: ``DocTestFinder.find`` and ``_find``
      on a candidate module, class, function or object (``run_docstring_examples``, a ``testmod`` with the
      oracle's ``globs`` or ``raise_on_error``, pytest's doctest finder, a module's ``__test__``);
      ``DocTestParser.parse`` of a text whose examples are those of a text the worker sent (a docstring read
      as a string); a doctest file outside the pack read any other way (``DocFileSuite``, ``testfile`` with
      the oracle's ``globs``).

    Returns the originals, to undo it: ``find``, ``_find``, ``testmod``, ``parse``, ``testfile``,
    ``_load_testfile``."""
    import doctest

    original, testmod, testfile = doctest.DocTestFinder.find, doctest.testmod, doctest.testfile
    walk = doctest.DocTestFinder._find  # type: ignore[attr-defined]
    parse, load = doctest.DocTestParser.parse, doctest._load_testfile  # type: ignore[attr-defined]
    fix = ("run it with doctest.testmod(module) or doctest.testfile(path) and no globs (run in the candidate "
           "worker), in the project's own test suite, or set isolation: none for this property")

    def refuse(obj: Any, name: Any) -> None:
        if isinstance(obj, (ProxyModule, Handle)):
            raise client.limit(f"a doctest of the candidate's {name or 'object'!s:.200}: its docstring is the "
                               f"candidate's text, which a doctest runs as code in the oracle's process; {fix}")

    def find(self: Any, obj: Any, name: Any = None, *args: Any, **kwargs: Any) -> Any:
        refuse(obj, name)
        return original(self, obj, name, *args, **kwargs)

    def find_in(self: Any, tests: Any, obj: Any, name: Any, *args: Any, **kwargs: Any) -> Any:
        refuse(obj, name)  # a module's members and its __test__ entries
        return walk(self, tests, obj, name, *args, **kwargs)

    seen: dict[str, frozenset[str]] = {}  # a text the worker sent → the sources of its examples

    def parsed(self: Any, string: Any, name: Any = "<string>") -> Any:
        found = parse(self, string, name)
        mine = {part.source for part in found if isinstance(part, doctest.Example)}
        if mine and client.doc_texts_full:
            raise client.limit(f"a doctest of {name!s:.200} in a property whose candidate code sent more than "
                               f"{MAX_DOC_TEXTS} texts with doctest examples: which are the candidate's cannot be "
                               f"told; {fix}")
        if mine and client.doc_texts:
            for text in client.doc_texts:
                if text not in seen:
                    try:
                        seen[text] = frozenset(p.source for p in parse(self, text, "<candidate>")
                                               if isinstance(p, doctest.Example))
                    except ValueError:  # not a doctest's layout: none of its lines is an example doctest runs
                        seen[text] = frozenset()
                if mine & seen[text]:
                    raise client.limit(f"a doctest of {name!s:.200} runs examples of a text the candidate's code "
                                       "sent (a docstring read as a string): they would run as code in the "
                                       f"oracle's process; {fix}")
        return found

    def in_the_worker(request: dict[str, Any]) -> Any:
        got = client.request(request)
        if not (type(got) is list and len(got) == 2 and all(type(n) is int and n >= 0 for n in got)):
            raise client._crash("the worker sent a malformed doctest result")
        return doctest.TestResults(*got)

    def outside_pack(path: str) -> bool:
        real = os.path.realpath(path)
        return not any(real.startswith(root) for root in client.oracle_roots)

    def loaded(filename: Any, package: Any, module_relative: Any, encoding: Any) -> Any:
        if module_relative and package is None:  # resolved from the caller's module, as doctest resolves it
            package = sys.modules.get(sys._getframe(2).f_globals.get("__name__", ""))
        text, path = load(filename, package, module_relative, encoding)
        if outside_pack(path):
            raise client.limit(f"a doctest of the file {path!s:.300}, outside the pack: its text is the "
                               f"candidate's (its tree), which a doctest runs as code in the oracle's process; {fix}")
        return text, path

    def file_in_worker(filename: Any, module_relative: Any = True, name: Any = None, package: Any = None,
                       globs: Any = None, verbose: Any = None, report: Any = True, optionflags: Any = 0,
                       extraglobs: Any = None, raise_on_error: Any = False, parser: Any = None,
                       encoding: Any = None) -> Any:
        if module_relative and package is None:
            package = sys.modules.get(sys._getframe(1).f_globals.get("__name__", ""))
        path = filename
        if module_relative:
            path = doctest._module_relative_path(package, filename)  # type: ignore[attr-defined]
        options = {"name": name, "verbose": verbose, "report": report, "optionflags": optionflags,
                   "encoding": encoding}
        plain = (type(filename) is str and type(name) in (str, type(None)) and type(verbose) in (bool, type(None))
                 and type(report) is bool and type(optionflags) is int and type(encoding) in (str, type(None)))
        if outside_pack(path) and globs is None and extraglobs is None and not raise_on_error and parser is None \
                and plain:
            return in_the_worker({"op": "doctest", "path": os.path.abspath(path), "opts": options})
        return testfile(filename, module_relative, name, package, globs, verbose, report, optionflags, extraglobs,
                        raise_on_error, doctest.DocTestParser() if parser is None else parser, encoding)

    def in_worker(m: Any = None, name: Any = None, globs: Any = None, verbose: Any = None, report: Any = True,
                  optionflags: Any = 0, extraglobs: Any = None, raise_on_error: Any = False,
                  exclude_empty: Any = False) -> Any:
        options = {"name": name, "verbose": verbose, "report": report, "optionflags": optionflags,
                   "exclude_empty": exclude_empty}
        plain = (type(name) in (str, type(None)) and type(verbose) in (bool, type(None)) and type(report) is bool
                 and type(optionflags) is int and type(exclude_empty) is bool)
        if not isinstance(m, ProxyModule) or globs is not None or extraglobs is not None or raise_on_error \
                or not plain:
            return testmod(m, name, globs, verbose, report, optionflags, extraglobs, raise_on_error, exclude_empty)
        return in_the_worker({"op": "doctest", "mod": m.__name__, "opts": options})

    doctest.DocTestFinder.find = find  # type: ignore[method-assign]
    doctest.DocTestFinder._find = find_in  # type: ignore[attr-defined]
    doctest.DocTestParser.parse = parsed  # type: ignore[method-assign]
    doctest._load_testfile = loaded  # type: ignore[attr-defined]
    doctest.testmod = in_worker
    doctest.testfile = file_in_worker
    return original, walk, testmod, parse, testfile, load


def _follow_random(client: Client) -> Any:
    """Wrap this process's ``random.seed``/``random.setstate`` so the worker's ``random`` follows; returns the
    originals (to undo it)."""
    import random

    seed, setstate = random.seed, random.setstate
    # Hypothesis restores the same state (625 ints) after every example: its encoding is kept, not redone.
    last: list[Any] = [None, None]

    def encoded(state: Any) -> Any:
        if last[1] is None or type(state) is not tuple or state != last[0]:
            last[0], last[1] = state, client.encode(state)
        return last[1]

    def seeded(a: Any = None, version: int = 2) -> None:
        seed(a, version)
        if a is None or type(a) in (int, str, bytes, bytearray, float):
            client.random_pending = ["seed", client.encode(a)]
        else:
            client.random_pending = ["state", encoded(random.getstate())]

    def restored(state: Any) -> None:
        setstate(state)
        client.random_pending = ["state", encoded(state)]

    random.seed, random.setstate = seeded, restored
    return seed, setstate


def _insert(finder: Finder) -> Finder:
    sys.meta_path.insert(0, finder)
    return finder
