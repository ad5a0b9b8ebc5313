"""The oracle side's hub: one :class:`Client` per oracle process, the request and its round trip, the reference
table (the oracle's objects the worker holds) and the handle table (the candidate's objects the oracle holds)
(docs/design.md §8.1).

Every part of the oracle side that holds a candidate object holds the client it was given and asks through it
(RPyC's ``netref`` holds its connection the same way): the handles, records, exceptions and proxy modules are
spokes (:mod:`.handles`, :mod:`.records`, :mod:`.exceptions`, :mod:`.importer`, :mod:`.subclass`,
:mod:`.callbacks`, :mod:`.textguard`, :mod:`.doctests`), each importing only the protocol, the codec and
:mod:`.errors`; this module and :mod:`.translate` (the codec's fallbacks) import them, never the other way.

A worker that dies, hangs up, floods its pipe or sends a malformed frame ends the property as ``crashed``:
the failure is recorded out of band (:attr:`Client.failure`), so an oracle that catches the exception cannot
turn it into a pass. A limit of the boundary itself (:class:`.errors.BoundaryError`) is recorded out of band
too (:attr:`Client.boundary`): the gate's failure, never the candidate's.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import subprocess
import sys
import threading
import types
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

from .. import codec, ship
from ..fence import host, launch, reap, targets
from ..fence.errors import Unavailable
from ..fence.policy import UNKNOWN
from ..links import Links
from ..load import WORKER
from ..protocol import CALL, HANDSHAKE_TIMEOUT_S, MAX_LOCAL, PACK_MODULES
from . import (
    callbacks,
    children,
    classes,
    exceptions,
    handles,
    importer,
    records,
    state,
    textguard,
    translate,
)
from .errors import IsolationUnavailable, NotCrossable, WorkerCrashed, named

# The programs a test's child process may run besides the interpreter (a shell, the system's tools).
CHILD_PROGRAMS = ("/usr/bin", "/bin", "/usr/local/bin")
_CLIENTS: list[Client] = []  # the clients of this process, the newest last (one, in a run)


def current() -> Client | None:
    """The client of this process: what unpickles a candidate object, or builds a mirror exception a property
    calls, where no handle is at hand."""
    return _CLIENTS[-1] if _CLIENTS else None


handles.current_client = exceptions.current_client = current


@named
class Client:
    """One candidate worker per oracle process, restarted after a crash (for the next property).

    Args:
        level: ``sandbox`` or ``process``.
        python_path: candidate directories (absolute) the worker imports from.
        cwd: the candidate tree (the worker's working directory).
        readonly: directories the worker reads besides the interpreter (the tree, the fixtures).
        method: how the level is given (:func:`.fence.host.method`, chosen once by the gate for the run;
            ``None``: chosen here). userns, own_uid: :func:`.fence.host.bwrap_userns` and
            :func:`.fence.host.own_uid_works` as the gate found them (``None``: probed here).
        scratch: a private directory of this oracle process: the worker's temp dir and the fence
            probes' targets (a canary, a Unix socket) are made in it (``None``: a temp dir of its own).
        secrets: files the worker must not read (the repository's ``.git/config``, a canary in
            ``$HOME``); its probe tries to.
        limits: overrides of :data:`.fence.policy.DEFAULT_LIMITS` (the catalog's ``limits``).
        cap: the largest message accepted from the worker, in bytes.
        answer_timeout: seconds one answer may take (an import that hangs at collection, when no
            property's own timeout runs yet); ``None`` waits for the runner's property timeout.
        worker_cpu: the CPU the worker pins itself to (``None``: the oracle process's own).
        spin_s: seconds each side polls its pipe before sleeping (:class:`codec.Reader`); for a
            worker with a CPU of its own, where waking a sleeping process costs more than a call.
        bytecode: this process's bytecode cache (``sys.pycache_prefix``), into which only oracle code
            was compiled; a fenced worker reads the interpreter's part of it, read-only
            (:func:`.fence.paths.bytecode_dirs`), instead of compiling the standard library at every start;
            a ``process`` worker reads none.
        shared: directories the worker reads and writes at their own path, as this process does: the one
            holding pytest's basetemp and this process's ``TMPDIR`` (``tmp_path`` and ``tempfile`` are the same
            directories on both sides, docs/design.md §8.1, "Files").
    """

    # The kinds of objects this client makes, for the spokes' isinstance checks (a spoke imports no other spoke).
    Handle = handles.Handle
    RemoteFunction = handles.RemoteFunction
    cap_methods = handles.CAP_METHODS
    ProxyModule = importer.ProxyModule
    RecordMeta = records.RecordMeta
    ProxyType = classes.ProxyType

    def __init__(self, level: str, python_path: Sequence[str], cwd: str, readonly: Sequence[str] = (), *,
                 method: str | None = None, userns: bool | None = None, own_uid: bool | None = None,
                 scratch: str | None = None,
                 secrets: Sequence[str] = (),
                 limits: dict[str, int] | None = None, cap: int = codec.MAX_MESSAGE,
                 answer_timeout: float | None = None, worker_cpu: int | None = None, spin_s: float = 0.0,
                 bytecode: str | None = None, shared: Sequence[str] = ()) -> None:
        # What the worker is started with
        self.level, self.method, self.python_path, self.cwd = level, method, list(python_path), cwd
        self.userns, self.own_uid, self.readonly, self.limits = userns, own_uid, list(readonly), limits
        self.scratch, self.secrets, self.bytecode, self.shared = scratch, list(secrets), bytecode, list(shared)
        self.cap, self.answer_timeout, self.worker_cpu, self.spin_s = cap, answer_timeout, worker_cpu, spin_s
        # The running worker: its process, its pipes, which one it is, what its start showed
        self.proc: subprocess.Popen[bytes] | None = None
        self.wfd = self.rfd = -1
        self.reader = codec.Reader(-1)
        self.generation = 0
        self.info: dict[str, Any] = {"level": level, "method": UNKNOWN, "fences": {}}
        self.unavailable: str | None = None  # why the level could not be given, once a start showed it
        self.crashes = 0  # workers this process lost to the candidate (a crash, a hang-up, a flood)
        self._policy: Any = None  # the started worker's policy, until its fence report is taken
        self._targets: targets.Targets | None = None
        self._tmp: str | None = None
        self._uid: int | None = None  # the running worker's own uid, where it has one
        self._stderr: str | None = None
        self.pid = os.getpid()  # the oracle's process: only it may talk to the worker (see roundtrip)
        self.lock = threading.RLock()
        self.depth = 0  # requests in flight (a callback may call the worker again)
        # The tables: the oracle's objects the worker holds by reference (id → object, id(object) → id), the
        # candidate's the oracle holds by handle, and the containers both sides keep in step (links).
        self.local: dict[int, Any] = {}
        self.local_ids: dict[int, int] = {}
        self.next_local = 1
        self.shipped: set[int] = set()  # reference ids of the oracle functions the worker holds a copy of
        self.handles: weakref.WeakValueDictionary[tuple[int, int], handles.Handle] = weakref.WeakValueDictionary()
        self.releases: list[int] = []  # handles the oracle dropped, to tell the worker with the next request
        self.links = Links()
        self.texts = textguard.Texts()  # every text the worker sent: never run as code here
        self.callbacks = callbacks.Callbacks(self)
        self.classes: dict[tuple[Any, ...], type] = {}  # the proxy classes: one per candidate class (classes.py)
        # This property's: a crash (the plugin reads and clears it), the limits of the boundary it met, and
        # id(exception) → (the candidate's exception, digest of the request it answered): see _answered.
        self.failure: str | None = None
        self.boundary: list[dict[str, Any]] = []
        self.asked: dict[int, tuple[BaseException, str]] = {}
        self.raised_in_callbacks: list[BaseException] = []  # control flow the oracle raised in a callback
        self.random_pending: list[Any] | None = None  # the oracle's seedings and restores the worker follows
        self.via = ""  # what the request in flight asked, for the message of an unnamed handle
        self.oracle_roots: list[str] = []  # the pack's directory: a class defined under it is a test's own
        self.pack_modules: dict[str, Any] = {}  # the pack's modules as candidate code imports them
        # SystemExit, KeyboardInterrupt, GeneratorExit arrive as themselves only inside a test's call, where
        # pytest reports them as the test's failure (the plugin sets this); elsewhere pytest would stop.
        self.as_itself = False
        self.keep: list[Any] = []  # oracle objects the worker's classes use for as long as it runs
        # The state a test changes that the worker follows (docs/design.md §8.1, "State the test changes"): the
        # environment (the gate's own, here at the start, is never sent), the working directory, sys.argv.
        self.env_base = dict(os.environ)
        self.env_seen = dict(os.environ._data)  # type: ignore[attr-defined]
        self.env_sent: dict[str, str | None] = {}
        self.cwd_sent: str | None = None
        self.argv_base, self.argv_seen = list(sys.argv), sys.argv
        self.argv_sent: list[str] | None = None

    # -- the worker's life ----------------------------------------------------------------------------

    def start(self, wait: bool = True) -> None:
        """Start the worker and send it its ``hello`` (with its :class:`.fence.policy.Policy`); with ``wait`` also
        take its fence report (else the first request or :meth:`ready` does, so pytest's collection runs
        while the worker starts).

        Raises:
            IsolationUnavailable: the level cannot be given here, the worker did not start, or its
                report shows a fence the method claims open.
        """
        try:
            name = self.method or host.method(self.level)
            if self._targets is None:
                self._targets = targets.Targets(self.scratch, os.getpid())
            self._tmp = self._worker_tmp(name)
            pol = launch.worker_policy(self.level, name, readonly=[*self.readonly, self.cwd, *self.python_path],
                                       tmp=self._tmp or "/tmp", cwd=self.cwd, limits=self.limits,
                                       bytecode=self.bytecode, probes=self._targets.probes(self.cwd, self.secrets),
                                       userns=self.userns, generation=self.generation + 1, own_uid=self.own_uid,
                                       shared=self.shared,
                                       tmpdir=os.environ.get("TMPDIR", "") if self.shared else "")
            self._uid = pol.uid
            if pol.uid is not None:
                if self._tmp:
                    os.chown(self._tmp, pol.uid, pol.uid)
                for path in (self.cwd, self._tmp or self.cwd):
                    targets.reachable(path, pol.uid)
            how = launch.launch(pol, bytecode=self.bytecode)
        except (Unavailable, OSError) as exc:
            self.unavailable = str(exc)
            raise IsolationUnavailable(self.unavailable) from None
        self.wfd, self.rfd = self._spawn(name, how)
        self.reader = codec.Reader(self.rfd, self.spin_s)
        self.generation += 1
        self.releases.clear()
        self.links.clear()
        if self not in _CLIENTS:
            _CLIENTS.append(self)
        self.local.clear()
        self.local_ids.clear()
        self.shipped.clear()
        self.local[PACK_MODULES] = callbacks._PackModules()
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

    def _spawn(self, name: str, how: launch.Launch) -> tuple[int, int]:
        """Start the worker's process as ``how`` says, on two fresh pipes; the ends this side keeps (to the worker,
        from the worker)."""
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        argv = [*how.argv, sys.executable, "-P", "-s", "-B", WORKER, str(to_worker_r), str(from_worker_w)]
        assert self._targets is not None
        # The worker's stderr goes to a file of the oracle's (capped by its RLIMIT_FSIZE): its last lines
        # say why a worker that never answered died (a Python it cannot run, a fence that failed to apply).
        self._stderr = os.path.join(self._targets.dir, f"worker-{self.generation + 1}.stderr")
        try:
            with open(self._stderr, "wb") as err, children.ours():
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
        return to_worker_w, from_worker_r

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
            assert self._targets is not None
            self.info = targets.judge(pol, answer["ok"], self._targets)
        except (OSError, codec.ProtocolError, KeyError, TypeError, ValueError) as exc:
            self.kill()
            self.unavailable = f"the candidate worker ({pol.method}) did not start: {exc}{self._stderr_tail()}"
            raise IsolationUnavailable(self.unavailable) from None
        except Unavailable as exc:
            self.kill()
            self.unavailable = str(exc)
            raise IsolationUnavailable(self.unavailable) from None

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
            reap.kill_uid(self._uid)
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
        self.callbacks.count = 0
        self.asked = {}

    def crash(self, why: str) -> WorkerCrashed:
        """Record that the worker failed this property (out of band), kill it, and return the exception to raise."""
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

    # -- requests -------------------------------------------------------------------------------------

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        """Write ``message`` and read frames until its answer: a frame with ``op`` is the worker calling
        back into an oracle object while it answers (:meth:`.callbacks.Callbacks.serve`), answered here and
        then waited past."""
        codec.write_frame(self.wfd, message)
        while True:
            if self.answer_timeout is not None and not self.reader.ready(self.answer_timeout):
                raise self.crash(f"the candidate worker did not answer {message.get('op')} "
                                 f"{str(message.get('mod') or message.get('name') or '')[:80]!r} within "
                                 f"{self.answer_timeout:g} s (it hangs?)")
            frame = self.reader.frame(cap=self.cap, timeout=self.answer_timeout)
            if not isinstance(frame, dict):
                raise codec.ProtocolError("a frame of an unknown shape")
            if "op" in frame:
                self._extras(frame)
                answer = self.callbacks.serve(frame)
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
                raise WorkerCrashed(f"the candidate worker crashed earlier in this test: {self.failure}")
            if self.proc is None:
                self.start()
            else:
                self.ready()
            if self.releases:
                message["rel"], self.releases = self.releases, []
            if self.random_pending is not None:
                message["rnd"], self.random_pending = self.random_pending, None
            self._state_out(message)
            self._sync_out(message)
            if self.depth == 0:
                self.raised_in_callbacks = []
            self.depth += 1
            try:
                answer = self._exchange(message)
            except (OSError, codec.ProtocolError) as exc:
                code = self.proc.poll() if self.proc is not None else None
                exited = f" (the worker exited with {code})" if code is not None else ""
                raise self.crash(f"{exc}{exited}") from None
            except ValueError as exc:
                raise self.limit(f"a value cannot be sent to the candidate worker ({exc})") from None
            finally:
                self.depth -= 1
            generation = self.generation
        self._extras(answer)
        return answer, generation

    def _state_out(self, message: dict[str, Any]) -> None:
        """What the test changed of this process's state since the last frame, for the worker to follow
        (docs/design.md §8.1, "State the test changes"): the names of the environment the test set or removed
        (``monkeypatch.setenv``; the gate's own environment is never sent, the worker keeps its own), the working
        directory (``monkeypatch.chdir``) and ``sys.argv`` where the test replaced it (a command line under test
        reads it; pytest's own is never sent)."""
        data = os.environ._data  # type: ignore[attr-defined]
        if data != self.env_seen:
            self.env_seen = dict(data)
            base = self.env_base
            changes: dict[str, str | None] = {k: v for k, v in os.environ.items() if base.get(k) != v}
            changes.update({k: None for k in base if k not in os.environ})
            if changes != self.env_sent:
                message["env"], self.env_sent = changes, changes
        cwd = state.CWD[0]
        if cwd is not None and cwd != self.cwd_sent:
            message["cwd"], self.cwd_sent = cwd, cwd
        argv = sys.argv
        if argv is not self.argv_seen:
            self.argv_seen = argv
            mine = [a for a in argv if type(a) is str] if argv != self.argv_base else None
            if mine != self.argv_sent:
                message["argv"], self.argv_sent = mine, mine

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
            raise self.crash("the worker sent an answer of an unknown shape")
        kind = kinds[0]
        error: BaseException
        try:
            if kind == "ok":
                value = translate.decode(self, answer["ok"], generation)
                self.texts.note_in(value)
                self.swallowed(None)
                return value
            if kind == "raise":
                error = exceptions.exception_from(self, answer["raise"], generation)
            else:
                error = self.limit(f"the candidate worker reports: {str(answer['fail'])[:2000]}")
        except (codec.ProtocolError, KeyError, TypeError, ValueError, IndexError, AttributeError,
                RecursionError) as err:
            raise self.crash(f"the worker sent a malformed answer ({type(err).__name__}: {err})") from None
        self.swallowed(error)
        raise error

    def swallowed(self, error: BaseException | None) -> None:
        """Raise the first control-flow exception (an assertion, a pytest outcome) the oracle raised in a callback of
        this exchange if candidate code swallowed it (``error``: the exception the answer raises, if any): the
        oracle's control flow stays the oracle's, whatever candidate code does (docs/design.md §8.1)."""
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
                self.callbacks.took(frame)
            for rid in frame.get("rel") or ():
                if type(rid) is not int:
                    continue
                self.callbacks.ahead.pop(rid, None)
                obj = self.local.pop(rid, None)
                if obj is not None and self.local_ids.get(id(obj)) == rid:
                    del self.local_ids[id(obj)]
            if "kept" in frame or "sync" in frame or "unlink" in frame:
                self.links.heard(frame, lambda tree: translate.decode(self, tree, self.generation))
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, BufferError, codec.ProtocolError) as bad:
            raise self.crash(f"the worker sent a malformed frame ({type(bad).__name__}: {str(bad)[:200]})") from None
        out, err = frame.get("out"), frame.get("err")
        if isinstance(out, str) and out:
            sys.stdout.write(out)
        if isinstance(err, str) and err:
            sys.stderr.write(err)
        for item in frame.get("w") or ():
            try:
                names, message, filename, lineno = item
                category = exceptions.mirror_exception(names, base=Warning)
                if not issubclass(category, Warning):
                    continue
                text, path, line = str(message), str(filename), int(lineno)
            except (TypeError, ValueError):
                continue
            warnings.warn_explicit(text, category, path, line, module=path.rpartition("/")[2].rpartition(".")[0])

    # -- what the spokes ask of the hub ---------------------------------------------------------------

    def encode(self, value: Any, top: bool = True) -> Any:
        """The tree of ``value`` as the worker will read it (:func:`.translate.encode_local` for what the codec
        cannot carry by value); ``top``: whether ``value`` itself may travel as a link."""
        return codec.encode(value, self._fallback, links=self.links.ids or None, top=top)

    def _fallback(self, obj: Any) -> Any:
        return translate.encode_local(self, obj)

    # The spokes' own functions, as the hub's methods (each takes the client first).
    decode = translate.decode  # (tree, generation) → value
    target = translate.target  # (desc, generation) → what finds a handle's object again
    exception_from = exceptions.exception_from  # (body, generation, op) → the candidate's exception
    exception_body = exceptions.body  # (exc) → an oracle exception as data
    is_plain = staticmethod(translate.plain)
    is_instance = staticmethod(translate.is_instance)
    enum_alias = staticmethod(translate.enum_alias)

    loader = WORKER  # the boundary's loader script: the worker, and a fenced child process (children.py)

    def fences_children(self) -> bool:
        """Whether a child process a test starts is fenced as the worker (a ``sandbox`` level the host gives)."""
        return self.level == "sandbox" and not self.unavailable

    def child_launch(self, cwd: str) -> tuple[Any, Any]:
        """The policy and launch of a test's child process (:mod:`.children`): the worker's, with its fences and
        uid, no probes, the system's programs readable, in ``cwd``.

        Raises:
            OSError: the level cannot be given here (the child is never started unfenced)."""
        try:
            name = self.method or host.method(self.level)
            pol = launch.worker_policy(self.level, name, readonly=[*self.readonly, self.cwd, *self.python_path,
                                                                   *CHILD_PROGRAMS],
                                       tmp=self._tmp or "/tmp", cwd=cwd, limits=self.limits, bytecode=self.bytecode,
                                       userns=self.userns, generation=max(self.generation, 1), own_uid=self.own_uid,
                                       shared=self.shared, tmpdir=os.environ.get("TMPDIR", "") if self.shared else "")
            return pol, launch.launch(pol, bytecode=self.bytecode)
        except Unavailable as exc:
            raise OSError(f"verdict-gate: a child process cannot be fenced here: {exc}") from None

    @staticmethod
    def is_candidate_class(obj: Any) -> bool:
        """Whether ``obj`` is a candidate class as the oracle holds it (a proxy class)."""
        return isinstance(obj, classes.ProxyType) and "_vg_home" in obj.__dict__

    def twin(self, cls: type, desc: dict[str, Any]) -> Any:
        """A new instance of the oracle class ``cls``, the other half of the worker's instance ``desc`` names."""
        return classes.adopt(self, classes.blank(cls), desc, self.generation)

    def note_text(self, *texts: Any) -> None:
        self.texts.note(*texts)

    def is_text(self, value: Any, *, within: bool = False) -> bool:
        return self.texts.is_text(value, within=within)

    # -- linked containers (boundary/links.py) --------------------------------------------------------

    def offer(self, value: Any) -> Any:
        """A call's argument: a list, dict, set or bytearray goes by value with a link id, so that if candidate
        code holds on to it (a cache it stores, a list a lazy iterator reads) the two stay in step."""
        return self.links.share(value, False, self._encode, self._fallback)

    def link_result(self, value: Any) -> Any:
        """A callback's result: a list, dict, set or bytearray of the oracle's (``self.cache`` of a test's own
        instance, read by candidate code) is linked at once, so the candidate's changes reach it; the worker
        lets it go when nothing of the candidate's holds it any more."""
        return self.links.share(value, True, self._encode, self._fallback)

    def _encode(self, value: Any, top: bool) -> Any:
        return self.encode(value, top=top)

    def _sync_out(self, frame: dict[str, Any]) -> None:
        """Attach the new state of every linked container the oracle's code changed since the last frame (and
        the iterators it moved that the worker read ahead)."""
        if self.callbacks.ahead:
            self.callbacks.moved(frame)
        changed, _dropped = self.links.changes(self._encode)
        if changed:
            frame["sync"] = changed

    def call(self, target: dict[str, Any], args: Sequence[Any], kwargs: dict[str, Any], *, name: str | None = None,
             inherited: bool = False) -> Any:
        """Call a candidate callable; lists, dicts, sets and bytearrays passed to it are changed here in
        place as the candidate changed its copies (the oracle sees in-place APIs as they are), and stay in
        step with them while candidate code holds on to them (:meth:`offer`). ``name``: call the target's method of
        that name (one request; ``inherited``: the candidate class's, for ``super()`` from an oracle class)."""
        before = set(self.links.offered)
        message: dict[str, Any] = {"op": CALL, "obj": target, "args": [self.offer(a) for a in args],
                                   "kw": [[k, self.offer(v)] for k, v in kwargs.items()]}
        if name is not None:
            message["name"] = name
            if inherited:
                message["inh"] = True
        try:
            answer, generation = self.roundtrip(message)
        finally:
            self.links.settle(before)  # kept ones are links now; the rest were only arguments
        mutated = answer.get("mut")
        if mutated is not None and "ok" in answer:
            try:
                self._apply_mutations(list(args), kwargs, mutated, generation)
            except (codec.ProtocolError, KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
                raise self.crash(f"the worker sent malformed argument changes ({type(err).__name__}: {err})") from None
        return self._answered(message, answer, generation)

    def _apply_mutations(self, args: list[Any], kwargs: dict[str, Any], mutated: Any, generation: int) -> None:
        for key, tree in mutated:
            local = args[key] if isinstance(key, int) and 0 <= key < len(args) else kwargs.get(key)
            if local is None:
                continue
            new = translate.decode(self, tree, generation)
            if type(local) is not type(new):
                raise TypeError(f"argument {key!r} changed type: {type(local).__name__} → {type(new).__name__}")
            if isinstance(local, (list, bytearray)):
                local[:] = new
            elif isinstance(local, (dict, set)):
                local.clear()
                local.update(new)

    # -- the reference table --------------------------------------------------------------------------

    def reference(self, obj: Any) -> dict[str, Any]:
        """The wire form of an oracle object the worker will hold by reference (kept alive here until the
        worker drops it), with the operations :mod:`.callbacks` answers for it."""
        rid = self.local_ids.get(id(obj))
        if rid is None or self.local.get(rid) is not obj:
            if len(self.local) >= MAX_LOCAL:
                raise self.limit(f"more than {MAX_LOCAL} oracle objects are held by the candidate worker")
            rid = self.next_local
            self.next_local += 1
            self.local[rid] = obj
            self.local_ids[id(obj)] = rid
        desc: dict[str, Any] = {"id": rid, "c": callbacks.caps(obj)}
        if type(obj) is types.FunctionType and rid not in self.shipped:
            copy = ship.body(obj, tuple(self.oracle_roots), translate.stdlib_ref)
            if copy is not None:  # a pure function of the pack's: the worker calls a copy (ship.py says why)
                desc["fn"] = self.encode(copy)
                self.shipped.add(rid)
        names = {}
        for attr in ("__name__", "__qualname__", "__module__", "__doc__"):
            # A function's or class's names are data; any other object's are read statically (what it or
            # its class holds), never through its __getattr__: an oracle subclass of a candidate class
            # would ask the candidate, whose answer (a new instance, tinydb's Query) is sent by reference again.
            try:
                value = getattr(obj, attr, None) if isinstance(obj, _NAMED) else \
                    inspect.getattr_static(obj, attr, None) if callable(obj) else None
            except Exception:
                value = None
            if type(value) is str:
                names[attr] = value[:2000]
        if names:
            desc["n"] = names
        return {"o": desc}


# Objects whose names are their own data (read with getattr); any other's are read statically (Client.reference).
_NAMED = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)

# The boundary package's directory: a frame there is the boundary's, never the oracle's line a limit was met at.
_BOUNDARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _oracle_stack() -> list[list[Any]]:
    """``[[file, line, function], …]`` of the calling stack outside the boundary package (where a limit was met)."""
    import traceback

    return [[f.filename, f.lineno, f.name] for f in traceback.extract_stack()[:-2]
            if not f.filename.startswith(_BOUNDARY)][-20:]


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


# --- installing the oracle side in this process -----------------------------------------------------------
