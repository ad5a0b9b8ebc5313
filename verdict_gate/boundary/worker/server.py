"""The candidate worker's hub: the request loop, the handle table (candidate objects the oracle holds by id),
the oracle's objects this side holds by reference, and the callbacks it makes (docs/design.md §8.1).

Frames go both ways on the two pipe descriptors it was given (:mod:`..codec`): the oracle asks (the
operations of :data:`..protocol.OPS`, each answered by its handler in :data:`HANDLERS`) and the worker
answers; while it answers, candidate code may call back into an oracle object it was handed (a key function,
an iterator, a test's own instance: :class:`.refs.OracleRef`), and the oracle may call the worker again from
inside that callback. Both sides serve the other's requests while they wait for their own answer, so the
channel is re-entrant, as RPyC's symmetric references are; nesting is capped (:data:`..protocol.MAX_DEPTH`).

Everything the worker sends after its fence report is candidate-controlled: the oracle trusts nothing of it
beyond plain values and exceptions it re-raises as data, and answers a callback only with its object's
protocol (the oracle's ``callbacks``). What plain pytest would see of the candidate's side effects travels
with each answer: the warnings it raised (``w``), what it printed (``out``/``err``), the arguments it changed
in place (``mut``), and the oracle references it dropped (``rel``).
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import io
import operator
import os
import random
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any

from .. import codec
from ..links import Links
from ..protocol import (
    BATCH_BYTES,
    CALL,
    CALLBACK,
    DELATTR,
    DIR,
    DOCTEST,
    DUNDER,
    EVAL,
    EXCEPTION,
    GETATTR,
    IMPORT,
    MAX_BATCH,
    MAX_DEPTH,
    MAX_HANDLES,
    MAX_OUTPUT,
    MAX_TEXT,
    MAX_WARNINGS,
    MEMBERS,
    NEW,
    NEXT,
    PING,
    SETATTR,
    SHADOW,
    SIGNATURE,
    UNPICKLE,
    VARS,
)
from .errors import BoundaryFault, named
from .refs import KEPT_BY_PICKLE, OracleRef, _Unpickler, dumps
from .shadows import Shadows, inherited
from .values import Values, _by_value


@named
class _Output:
    """``sys.stdout``/``sys.stderr`` of the worker: what candidate code prints, forwarded with the next answer
    (the oracle writes it to its own, where pytest's ``capsys``/``capfd`` see it)."""

    def __init__(self, name: str) -> None:
        self.name, self.size, self.dropped = name, 0, 0
        self.parts: list[str] = []
        self.encoding, self.errors = "utf-8", "replace"

    def write(self, text: Any) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.size + len(text) > MAX_OUTPUT:
            self.dropped += len(text)
        else:
            self.parts.append(text)
            self.size += len(text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def take(self) -> str:
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n[verdict-gate: {self.dropped} more characters of the candidate's {self.name} were dropped]\n"
        self.parts, self.size, self.dropped = [], 0, 0
        return text


@named
class Worker:
    """The request loop, the handle table (candidate objects the oracle holds by id) and the oracle objects
    this side holds by reference."""

    encode: Callable[..., Any]  # Values.encode: value → tree (live=, top=)
    decode: Callable[[Any], Any]  # Values.decode: tree → value

    def __init__(self, reader: Any, wfd: int) -> None:
        self.reader, self.wfd = reader, wfd  # frames come through reader (a codec.Reader), go to wfd
        self.handles: dict[int, Any] = {}
        self.ids: dict[int, int] = {}  # id(object) → its handle id: one object, one handle, one identity
        self.next_id = 1
        self.refs: weakref.WeakValueDictionary[int, OracleRef] = weakref.WeakValueDictionary()
        self.released: list[int] = []
        self.took: dict[int, int] = {}  # oracle iterator id → items taken from what it read ahead, not yet said
        self.depth = 0
        self.serving = 0  # requests being served (candidate code runs only inside one)
        self.called: tuple[list[Any], dict[str, Any]] | None = None
        self.warned: list[list[Any]] = []
        self.raised: dict[int, BaseException] = {}  # the last exceptions sent, by id (Values.exception)
        # Linked containers: a list, dict, set or bytearray the oracle handed over that candidate code held on
        # to (a cache it stores, a list a lazy iterator reads): this copy and the oracle's own are kept in step.
        self.links = Links()
        self.out, self.err = _Output("stdout"), _Output("stderr")
        self.random_saved: list[Any] = []  # this process's random states before the oracle's seedings
        self.shadows = Shadows(self)  # the oracle's classes that derive from candidate classes, and their instances
        # What the test changes of its process, followed here (docs/design.md §8.1): this process's own state
        # before any change, and the environment names changed so far.
        self.env_own = dict(os.environ)
        self.env_changed: dict[str, Any] = {}
        self.home, self.argv_own = os.getcwd(), list(sys.argv)
        self.values = Values(self)
        self.encode, self.decode = self.values.encode, self.values.decode

    # -- the handle table -------------------------------------------------------------------------

    def hold(self, obj: Any) -> int:
        """The handle id of a candidate object the oracle will hold (one object, one id)."""
        hid = self.ids.get(id(obj))
        if hid is not None and self.handles.get(hid) is obj:
            return hid
        if len(self.handles) >= MAX_HANDLES:
            raise codec.Unencodable(f"more than {MAX_HANDLES} live handles")
        hid = self.next_id
        self.next_id += 1
        self.handles[hid] = obj
        self.ids[id(obj)] = hid
        return hid

    def _release(self, hid: Any) -> None:
        obj = self.handles.pop(hid, None)
        if obj is not None and self.ids.get(id(obj)) == hid:
            del self.ids[id(obj)]

    # -- riders: what travels with every frame ----------------------------------------------------

    def _sync_out(self, frame: dict[str, Any]) -> None:
        """Attach the new state of every linked container candidate code changed, and drop those it let go."""
        links = self.links
        if links.kept:
            frame["kept"], links.kept = links.kept, []
        if not links.values:
            return
        changed, dropped = links.changes(lambda value, top: self.encode(value, top=top), drop=True)
        if changed:
            frame["sync"] = changed
        if dropped:
            frame["unlink"] = dropped

    def _sync_in(self, frame: dict[str, Any]) -> None:
        """Apply the oracle's changes to the containers it shares with this side (its code changed them), and
        forget what was read ahead of an oracle iterator that the oracle's own code has moved since."""
        for rid in frame.get("drop") or ():
            ref = self.refs.get(rid) if type(rid) is int else None
            if ref is not None:
                ref._vg_forget()
        self.links.apply(frame.get("sync"), self.decode)

    def _follow(self, req: dict[str, Any]) -> None:
        """The test's changes to the oracle process's state (docs/design.md §8.1, "State the test changes"):
        ``env``, name → value or ``None`` for a name it removed (a name changed before and not listed now is this
        process's own again: the test undid it); ``cwd``, its working directory, entered where this process can
        (else the candidate tree, its own); ``argv``, the list a test put in ``sys.argv`` (``None``: its own)."""
        changes = req.get("env")
        if type(changes) is dict:
            for name in set(self.env_changed) | set(changes):
                value = changes.get(name, self.env_own.get(name))
                if type(name) is not str or (value is not None and type(value) is not str):
                    continue
                with contextlib.suppress(ValueError, OSError):
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value
            self.env_changed = dict(changes)
        if "cwd" in req:
            try:
                os.chdir(str(req["cwd"]))
            except (OSError, ValueError):
                with contextlib.suppress(OSError):
                    os.chdir(self.home)
        if "argv" in req:
            argv = req["argv"]
            sys.argv = [str(a) for a in argv] if type(argv) is list else list(self.argv_own)

    def _random(self, rnd: Any) -> None:
        """The oracle seeded its ``random`` (a test's ``random.seed(...)``, Hypothesis's seeding of each example):
        seed this process's the same way, so candidate code that draws from ``random`` draws what it would have;
        this process's state before is kept, and put back when the oracle puts its own back (``restore``: never
        the oracle's state itself, which would tell candidate code what the oracle draws next)."""
        kind = rnd[0]
        if kind == "restore":
            if self.random_saved:
                random.setstate(self.random_saved.pop())
            return
        if len(self.random_saved) < 64:
            self.random_saved.append(random.getstate())
        value = self.decode(rnd[1])
        if kind == "seed":
            random.seed(value)
        elif kind == "state":
            random.setstate(value)

    def _warning(self, message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                 line: Any = None) -> None:
        """``warnings.showwarning`` of the worker: every warning is kept for the oracle, which raises it again
        through its own filters (``pytest.warns``, ``-W error``)."""
        if len(self.warned) < MAX_WARNINGS:
            with contextlib.suppress(Exception):
                self.warned.append([codec.mro_names(category), str(message)[:MAX_TEXT], str(filename), int(lineno)])

    def _attach(self, answer: dict[str, Any]) -> None:
        """What plain pytest would have seen of the candidate's side effects since the last frame."""
        if self.warned:
            answer["w"], self.warned = self.warned, []
        if self.out.parts or self.out.dropped:
            answer["out"] = self.out.take()
        if self.err.parts or self.err.dropped:
            answer["err"] = self.err.take()

    # -- callbacks (worker → oracle) --------------------------------------------------------------

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` to the oracle and serve its requests until its answer comes."""
        if self.depth >= MAX_DEPTH:
            raise BoundaryFault(f"calls nested more than {MAX_DEPTH} deep across the isolation boundary")
        if self.released:
            message["rel"], self.released = self.released, []
        if self.took:
            message["took"], self.took = [[rid, n] for rid, n in self.took.items()], {}
        self._attach(message)
        self._sync_out(message)
        codec.write_frame(self.wfd, message)
        while True:
            frame = self.reader.frame(cap=codec.MAX_MESSAGE)
            if isinstance(frame, dict) and "op" in frame:
                self.depth += 1
                try:
                    self.serve_one(frame)
                finally:
                    self.depth -= 1
                continue
            if not isinstance(frame, dict):
                raise codec.ProtocolError("the oracle sent an answer of an unknown shape")
            self._sync_in(frame)
            return frame

    def callback(self, rid: int, do: str, args: list[Any], extra: dict[str, Any]) -> Any:
        """Ask the oracle to apply ``do`` to its object ``rid`` (re-entrant); its answer, or its exception. A list,
        dict, set or bytearray argument the oracle's code changed in place is changed here too, as one process
        would have it (the answer's ``mut``)."""
        message: dict[str, Any] = {"op": CALLBACK, "obj": rid, "do": do, "args": self.encode(args)}
        kwargs = extra.get("kw") or {}
        if "kw" in extra:
            message["kw"] = [[k, self.encode(v)] for k, v in kwargs.items()]
        if "name" in extra:
            message["name"] = str(extra["name"])
        answer = self._exchange(message)
        for key, tree in answer.get("mut") or ():
            target = args[key] if type(key) is int and 0 <= key < len(args) else kwargs.get(key)
            if type(target) in (list, dict, set, bytearray):
                with contextlib.suppress(TypeError, ValueError, AttributeError, codec.ProtocolError):
                    codec.replace_in_place(target, self.decode(tree))
        return self._outcome(answer)

    def next_batch(self, rid: int, n: int) -> tuple[list[Any], BaseException | None]:
        """Up to ``n`` items of the oracle iterator ``rid`` and how it ended (``StopIteration`` or its
        exception) when it ended within them."""
        return self._items_of(self._exchange({"op": CALLBACK, "obj": rid, "do": "next", "args": [], "n": n}))

    def _items_of(self, answer: dict[str, Any]) -> tuple[list[Any], BaseException | None]:
        if "fail" in answer:
            raise BoundaryFault(str(answer["fail"])[:MAX_TEXT])
        if "raise" in answer and "ok" not in answer:
            return [], self.values.from_oracle(answer["raise"])
        items = list(self.decode(answer.get("ok") or []))
        end: BaseException | None = None
        if answer.get("end"):
            end = StopIteration()
        elif "then" in answer:
            end = self.values.from_oracle(answer["then"])
        return items, end

    def read_ahead(self, rid: int, n: int) -> tuple[list[Any], BaseException | None, bool]:
        """Up to ``n`` items of the oracle iterator ``rid`` read ahead, where the oracle can (docs/design.md
        §8.1 "Batching"), how it ended within them, and whether they were read ahead; else one item, as
        :meth:`next_batch` gives it."""
        answer = self._exchange({"op": CALLBACK, "obj": rid, "do": "next", "args": [], "n": n, "ra": True})
        items, end = self._items_of(answer)
        return items, end, bool(answer.get("ra"))

    def _outcome(self, answer: dict[str, Any]) -> Any:
        if "ok" in answer:
            return self.values.decode_result(answer["ok"])
        if "raise" in answer:
            raise self.values.from_oracle(answer["raise"])
        raise BoundaryFault(str(answer.get("fail", "the oracle sent an answer of an unknown shape"))[:MAX_TEXT])

    # -- requests (oracle → worker) ---------------------------------------------------------------

    def _target(self, req: dict[str, Any]) -> Any:
        return self.values._handle(req["obj"])

    def handle(self, req: dict[str, Any]) -> Any:
        for hid in req.get("rel") or ():
            self._release(hid)
        self._sync_in(req)
        for event in req.get("rnd") or ():
            self._random(event)
        if "env" in req or "cwd" in req or "argv" in req:
            self._follow(req)
        op = req.get("op")
        handler = HANDLERS.get(op) if isinstance(op, str) else None
        if handler is None:
            raise codec.ProtocolError(f"unknown op {op!r}")
        return handler(self, req)

    def serve_one(self, req: dict[str, Any]) -> None:
        outer, self.called = self.called, None  # a request served inside a callback has its own arguments
        self.serving += 1
        try:
            self._serve_one(req)
        finally:
            self.called = outer
            self.serving -= 1

    def _serve_one(self, req: dict[str, Any]) -> None:
        answer: dict[str, Any]
        try:
            value = self.handle(req)
            if isinstance(value, _Exception):
                answer = {"ok": None, "exc": self.values.exception(value.exc)}
            elif isinstance(value, _Batch):
                answer = {"ok": [self.encode(v) for v in value.items]}
                if value.end:
                    answer["end"] = True
                elif value.exc is not None:
                    answer["then"] = self.values.exception(value.exc)
            else:
                answer = {"ok": self.encode(value.value, live=True) if isinstance(value, _Live)
                          else self.encode(value)}
            if self.called is not None:  # arguments changed in place travel back (lists, dicts, sets …)
                changed = self._mutables(*self.called)
                if changed:
                    answer["mut"] = changed
        except codec.ProtocolError as exc:
            answer = {"fail": str(exc)}
        except codec.Unencodable as exc:
            answer = {"fail": f"the result cannot cross the isolation boundary: {exc}"}
        except BaseException as exc:  # the candidate's exception, SystemExit included
            answer = {"raise": self.values.exception(exc)}
        if self.released:
            answer["rel"], self.released = self.released, []
        if self.took:
            answer["took"], self.took = [[rid, n] for rid, n in self.took.items()], {}
        self._attach(answer)
        self._sync_out(answer)
        try:
            codec.write_frame(self.wfd, answer)
        except (TypeError, ValueError) as exc:
            codec.write_frame(self.wfd, {"fail": f"the result cannot be encoded ({exc})"})

    def serve(self) -> None:
        while True:
            try:
                req = self.reader.frame(cap=codec.MAX_MESSAGE)
            except codec.ProtocolError:
                return  # the oracle is gone, or spoke nonsense: nothing to answer
            if not isinstance(req, dict):
                return
            self.serve_one(req)

    # -- the operations (HANDLERS) ----------------------------------------------------------------

    def _import(self, req: dict[str, Any]) -> Any:
        module = importlib.import_module(req["mod"])
        doc = getattr(module, "__doc__", None)
        return {"pkg": hasattr(module, "__path__"), "file": str(getattr(module, "__file__", "") or ""),
                "doc": doc[:MAX_TEXT] if type(doc) is str else None}

    def _getattr(self, req: dict[str, Any]) -> Any:
        if req.get("inh"):
            return _Live(inherited(self._target(req), req["name"], self.shadows))
        return _Live(getattr(self._target(req), req["name"]))

    def _setattr(self, req: dict[str, Any]) -> Any:
        setattr(self._target(req), req["name"], self.decode(req["value"]))
        return None

    def _delattr(self, req: dict[str, Any]) -> Any:
        delattr(self._target(req), req["name"])
        return None

    def _call_op(self, req: dict[str, Any]) -> Any:
        links = self.links
        outer, links.offered = links.offered, {}  # a call inside a callback hands over its own containers
        try:
            return self._call(req)
        finally:
            links.offered = outer

    def _call(self, req: dict[str, Any]) -> Any:
        args = self.decode(req.get("args") or [])
        kwargs = {k: self.decode(v) for k, v in req.get("kw") or []}
        # Only what came by value can have changed in place for the oracle (a handle is the worker's own).
        self.called = ([a if _by_value(t) else None for a, t in zip(args, req.get("args") or [], strict=False)],
                       {k: v for (k, t), v in zip(req.get("kw") or [], kwargs.values(), strict=False)
                        if _by_value(t)})
        base = self.links.counts()
        try:
            target = self._target(req)
            name = req.get("name")
            if type(name) is str:  # obj.method(...) in one request: the method as the object answers it
                target = inherited(target, name, self.shadows) if req.get("inh") else getattr(target, name)
            return target(*args, **kwargs)
        finally:
            self.links.keep(base)

    def _next(self, req: dict[str, Any]) -> Any:
        return self._batch(self._target(req), min(max(int(req.get("n") or 1), 1), MAX_BATCH))

    def _dunder(self, req: dict[str, Any]) -> Any:
        name = req["name"]
        obj = self._target(req)
        if req.get("inh"):  # super().__eq__(other) from the oracle's class: the candidate's, past the stubs
            method = inherited(obj, name, self.shadows)
            return method(self.decode(req["arg"])) if "arg" in req else method()
        if name in _UNARY:
            return _UNARY[name](obj)
        if name == "__getitem__" and type(obj) in (list, dict):
            # An item of a container held live is live too: ``sl._lists[-1].append(x)`` changes the candidate's
            # own inner list, as in one process.
            key = self.decode(req["arg"])
            return obj[key] if isinstance(key, slice) else _Live(obj[key])  # a slice is a new list, as in Python
        if name in _BINARY:
            return _BINARY[name](obj, self.decode(req["arg"]))
        special = _SPECIAL.get(name)
        if special is None:
            raise codec.ProtocolError(f"unsupported operation {name!r}")
        return special(self, obj, req)

    def _unpickle(self, req: dict[str, Any]) -> Any:
        return _Unpickler(io.BytesIO(self.decode(req["arg"]))).load()

    def _eval(self, req: dict[str, Any]) -> Any:  # the candidate's text, evaluated here rather than in the oracle
        namespace = self.decode(req["globals"])
        if type(namespace) is not dict:
            raise codec.ProtocolError("eval needs a dict of globals")
        return eval(self.decode(req["src"]), namespace)

    def _exception(self, req: dict[str, Any]) -> Any:  # the oracle calls a candidate exception class: built here
        args = self.decode(req.get("args") or [])
        kwargs = {k: self.decode(v) for k, v in req.get("kw") or []}
        return _Exception(self._target(req)(*args, **kwargs))

    def _signature(self, req: dict[str, Any]) -> Any:  # the oracle's inspect.signature() of a candidate callable
        import inspect

        return inspect.signature(self._target(req))

    def _dir(self, req: dict[str, Any]) -> Any:
        return sorted(str(n) for n in dir(self._target(req)))

    def _vars(self, req: dict[str, Any]) -> Any:  # a module's namespace, for the oracle's vars(module)
        return {str(k): v for k, v in vars(self._target(req)).items() if isinstance(k, str)
                and (not k.startswith("_") or k in ("__name__", "__doc__", "__all__", "__file__"))}

    def _doctest(self, req: dict[str, Any]) -> Any:
        """The oracle's doctest.testmod of a candidate module, or testfile of a file outside the pack (the
        candidate's README): the candidate's text runs here, never there."""
        import doctest

        options = {k: v for k, v in (req.get("opts") or {}).items()
                   if k in ("name", "verbose", "report", "optionflags", "exclude_empty", "encoding")}
        if "path" in req:
            found = doctest.testfile(str(req["path"]), module_relative=False, **options)
        else:
            found = doctest.testmod(importlib.import_module(str(req["mod"])), **options)
        return [int(found.failed), int(found.attempted)]

    def _ping(self, req: dict[str, Any]) -> Any:
        return None

    def _exit(self, obj: Any, exc: Any) -> Any:
        """``obj.__exit__`` with the exception the oracle's ``with`` body raised (``None``: it ended normally):
        a candidate exception goes back as itself, the oracle's own as a mirror. The oracle decides what the
        answer may do (it never lets it suppress an exception its own code raised)."""
        if exc is None:
            return obj.__exit__(None, None, None)
        error = self.raised.get(exc["h"]) if isinstance(exc, dict) and type(exc.get("h")) is int else None
        if not isinstance(error, BaseException):
            error = self.values.from_oracle(exc)
        return obj.__exit__(type(error), error, error.__traceback__)

    def _batch(self, it: Any, n: int) -> _Batch:
        items: list[Any] = []
        size = 0
        for _ in range(n):
            try:
                item = next(it)
            except StopIteration:
                return _Batch(items, end=True)
            except BaseException as exc:  # after the items before it, as plain iteration would
                return _Batch(items, exc=exc)
            items.append(item)
            t = type(item)
            size += len(item) if t is str or t is bytes else 64
            if size > BATCH_BYTES:
                break
        return _Batch(items)

    def _shadow(self, req: dict[str, Any]) -> Any:
        """Build the shadow of an oracle class that derives from candidate classes (:mod:`.shadows`)."""
        bases = tuple(self.decode(b) for b in req.get("bases") or [])
        if not bases or not all(isinstance(b, type) for b in bases):
            raise codec.ProtocolError("a shadow's bases are classes")
        over = [[str(n), str(k)] for n, k in req.get("over") or []]
        data = {str(n): self.decode(v) for n, v in req.get("data") or []}
        kwargs = {str(k): self.decode(v) for k, v in req.get("kw") or []}
        shadow = self.shadows.build(str(req["name"]), str(req["qualname"]), str(req["module"]), bases, over, data,
                                    self.decode(req["oracle"]), kwargs)
        KEPT_BY_PICKLE[id(shadow)] = shadow  # pickled by reference: no module holds it under its name
        return {"hid": self.hold(shadow)}

    def _new(self, req: dict[str, Any]) -> Any:
        """A new instance of a shadow whose ``__init__`` the oracle runs next, with its oracle ``twin``."""
        cls = self._target(req)
        if not self.shadows.is_shadow(cls):
            raise codec.ProtocolError("only a shadow's instances are made this way")
        args = self.decode(req.get("args") or [])
        kwargs = {k: self.decode(v) for k, v in req.get("kw") or []}
        new = cls.__new__
        instance = object.__new__(cls) if new is object.__new__ else new(cls, *args, **kwargs)
        self.shadows.adopt(instance, self.decode(req["twin"]))
        return {"hid": self.hold(instance), "t": codec.mro_names(type(instance))}

    def _members(self, req: dict[str, Any]) -> Any:
        """What a candidate class's own classes define (not ``object``, not a shadow): ``[[name, kind], …]``, kind
        ``m`` a function or method, ``p`` another descriptor, ``d`` data."""
        cls = self._target(req)
        found: dict[str, str] = {}
        for klass in reversed(getattr(cls, "__mro__", ())[:-1]):
            if self.shadows.is_shadow(klass):
                continue
            for name, value in vars(klass).items():
                if isinstance(name, str):
                    kind = "m" if isinstance(value, (types.FunctionType, classmethod, staticmethod)) else \
                        "p" if hasattr(type(value), "__get__") else "d"
                    found[name] = kind
        return sorted([n, k] for n, k in found.items())

    def _mutables(self, args: list[Any], kwargs: dict[str, Any]) -> list[list[Any]]:
        """``[[position or name, value], …]`` of the mutable by-value arguments of the last call: the
        oracle passed copies, so their state after the call is sent back and applied in place."""
        out = []
        for key, value in [*enumerate(args), *kwargs.items()]:
            if type(value) in (list, dict, set, bytearray):
                out.append([key, self.encode(value, top=False)])
        return out


# The oracle's operations (protocol.OPS), each answered by one method of the worker.
HANDLERS: dict[str, Callable[[Worker, dict[str, Any]], Any]] = {
    IMPORT: Worker._import, GETATTR: Worker._getattr, SETATTR: Worker._setattr, DELATTR: Worker._delattr,
    CALL: Worker._call_op, NEXT: Worker._next, DUNDER: Worker._dunder, SIGNATURE: Worker._signature,
    DIR: Worker._dir, VARS: Worker._vars, EXCEPTION: Worker._exception, SHADOW: Worker._shadow, NEW: Worker._new,
    MEMBERS: Worker._members,
    UNPICKLE: Worker._unpickle, EVAL: Worker._eval, DOCTEST: Worker._doctest, PING: Worker._ping,
}


# --- the special methods DUNDER answers --------------------------------------------------------------------

def _dunder(name: str) -> Any:
    """``type(a).NAME(a, b)``: the object's own answer, ``NotImplemented`` included, so that the asking side
    (the oracle) tries the reflected operation itself, as Python would with both objects in one process."""

    def call(a: Any, b: Any) -> Any:
        method = getattr(type(a), name, None)
        return NotImplemented if method is None else method(a, b)

    return call


_REFLECTABLE = ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__",
                "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__divmod__",
                "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__",
                "__rmatmul__", "__rand__", "__ror__", "__rxor__", "__rlshift__", "__rrshift__", "__rdivmod__",
                "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
_BINARY: dict[str, Any] = {name: _dunder(name) for name in _REFLECTABLE}
_BINARY.update({
    "__getitem__": operator.getitem, "__delitem__": operator.delitem, "__contains__": operator.contains,
    "__iadd__": operator.iadd, "__isub__": operator.isub, "__imul__": operator.imul, "__ior__": operator.ior,
    "__iand__": operator.iand, "__ixor__": operator.ixor,
    "__deepcopy__": lambda a, _memo: copy.deepcopy(a), "__round2__": round,
    "__get__": lambda a, io: type(a).__get__(a, io[0], io[1]) if hasattr(type(a), "__get__") else a,
    "__set_name__": lambda a, on: type(a).__set_name__(a, on[0], on[1]) if hasattr(type(a), "__set_name__") else None,
})
_UNARY: dict[str, Any] = {
    "__len__": len, "__iter__": iter, "__repr__": repr, "__str__": str, "__bool__": bool,
    "__int__": int, "__float__": float, "__index__": operator.index, "__neg__": operator.neg,
    "__pos__": operator.pos, "__abs__": abs, "__invert__": operator.invert, "__hash__": hash,
    "__enter__": lambda o: o.__enter__(), "__reversed__": reversed, "__length_hint__": operator.length_hint,
    "__complex__": complex, "__round__": round, "__copy__": copy.copy, "__vars__": lambda o: dict(vars(o)),
    "__pickle__": lambda o: dumps(o),
    "__dir__": lambda o: sorted(str(n) for n in dir(o)),
}


def _setitem(worker: Worker, obj: Any, req: dict[str, Any]) -> None:
    key, value = worker.decode(req["arg"])
    obj[key] = value


# Special methods with an answer of their own shape (a key and a value, a with-body's exception, a format spec).
_SPECIAL: dict[str, Callable[[Worker, Any, dict[str, Any]], Any]] = {
    "__setitem__": _setitem,
    "__exit__": lambda worker, obj, req: worker._exit(obj, req.get("exc")),
    "__format__": lambda worker, obj, req: format(obj, worker.decode(req["arg"])),
}


@named
class _Live:
    """An attribute's value: a list, dict or set read from a module or an object is held live (the oracle's
    ``mod.TABLE.add(x)`` changes the candidate's own set), anything else crosses as usual."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


@named
class _Exception:
    __slots__ = ("exc",)

    def __init__(self, exc: Any) -> None:
        if not isinstance(exc, BaseException):
            raise TypeError(f"calling the exception class gave a {type(exc).__name__}, not an exception")
        self.exc = exc


@named
class _Batch:
    __slots__ = ("items", "end", "exc")

    def __init__(self, items: list[Any], end: bool = False, exc: BaseException | None = None) -> None:
        self.items, self.end, self.exc = items, end, exc
