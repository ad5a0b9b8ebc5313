"""The candidate worker: the only process that imports and executes candidate code (docs/design.md §8.1).

Part of the boundary package, started as ``python -P -s -B load.py RFD WFD`` (:mod:`.load`; inside the
sandbox the launcher builds, :mod:`.sandbox`), so neither the worker's directory nor the candidate's is on
``sys.path`` until the oracle's ``hello`` puts the candidate's ``python_path`` there, after the
standard library. Frames go both ways on the two pipe descriptors it is given (:mod:`codec`): the oracle
asks (import, getattr, call, an operator, the next items of an iterator, build a subclass) and the worker
answers; while it answers, candidate code may call back into an oracle object it was handed (a key
function, an iterator, a test's own instance: :class:`OracleRef`), and the oracle may call the worker again
from inside that callback. Both sides serve the other's requests while they wait for their own answer, so
the channel is re-entrant, as RPyC's symmetric references are; nesting is capped (:data:`MAX_DEPTH`).

Before any candidate code runs it applies the in-process fences of the policy in its ``hello``
(:func:`.fence.apply.confine`: Landlock, seccomp), then tries each forbidden act the policy names
(:func:`.fence.probe.prove`:
connect to the gate's listeners, read its canaries, write outside its temp dir, signal and trace
the oracle process) and reports what held in its first answer: candidate code, which has not run
yet, cannot forge that answer. Everything after that is candidate-controlled, so the oracle trusts nothing
the worker sends beyond plain values (the codec's by-value types) and exceptions it re-raises as data, and
answers a callback only with its object's protocol (:mod:`.proxy`, ``_Callbacks``).

What plain pytest would see of the candidate's side effects travels with each answer: the warnings it
raised (``w``), what it printed (``out``/``err``), the arguments it changed in place (``mut``), and the oracle
references it dropped (``rel``).
"""

from __future__ import annotations

import collections.abc
import contextlib
import copy
import dataclasses
import enum
import importlib
import importlib.util
import io
import operator
import os
import pickle
import random
import sys
import traceback
import types
import warnings
import weakref
from typing import Any

from . import codec, sources
from .fence import apply, probe
from .fence.policy import Policy

MAX_HANDLES = 1_000_000
MAX_TEXT = 16_384  # characters of a message or repr sent back
MAX_FRAMES = 40
MAX_DEPTH = 64  # calls nested across the boundary (a callback calling candidate code calling back …)
MAX_BATCH = 1024  # items one ``next`` request may take from an iterator
BATCH_BYTES = 1 << 20  # a rough bound on the size of one batch's items
MAX_OUTPUT = 1 << 20  # characters of stdout and of stderr forwarded with one answer
MAX_WARNINGS = 100  # warnings forwarded with one answer
MAX_RAISED = 64  # exceptions kept for the oracle to hand back to a candidate __exit__
MAX_LINKS = 256  # containers kept in step with the oracle's at once
READ_AHEAD_FIRST = 2  # items the first read ahead of an oracle iterator asks for (doubled up to MAX_BATCH)

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
    "__pickle__": lambda o: _dumps(o),
    "__dir__": lambda o: sorted(str(n) for n in dir(o)),
}


class BoundaryFault(Exception):
    """The oracle could not answer a callback (a value it cannot send back, a nesting too deep). The
    oracle records it on its side too, so the candidate swallowing it changes nothing."""


# --- oracle objects, held by reference ------------------------------------------------------------


class OracleRef:
    """An object of the oracle process (a callable, an iterator, a test's own instance …) handed to candidate
    code. Each operation is a callback the oracle answers with its object's protocol only: a call for a
    callable, ``next`` for an iterator, ``len``/``[]``/``in``/``iter`` for a container, the public
    attributes of a test's own instance. The class of a reference (:func:`_ref_class`) has exactly the
    special methods its object has, so ``callable()`` and ``isinstance(x, collections.abc.Iterator)``
    answer as they would for the object itself."""

    __slots__ = ("_vg_id", "_vg_worker", "_vg_info", "_vg_buffer", "_vg_drain", "_vg_iterated", "_vg_ahead",
                 "_vg_ra", "__weakref__")

    def __init__(self, worker: Worker, rid: int, info: dict[str, Any]) -> None:
        object.__setattr__(self, "_vg_id", rid)
        object.__setattr__(self, "_vg_worker", worker)
        object.__setattr__(self, "_vg_info", info)
        object.__setattr__(self, "_vg_buffer", None)
        object.__setattr__(self, "_vg_drain", False)
        object.__setattr__(self, "_vg_iterated", False)
        object.__setattr__(self, "_vg_ahead", False)  # whether the buffer was read ahead (see _next)
        object.__setattr__(self, "_vg_ra", READ_AHEAD_FIRST)  # items the next read ahead asks for; 0: never

    def _vg(self, do: str, *args: Any, **extra: Any) -> Any:
        object.__setattr__(self, "_vg_iterated", False)
        return self._vg_worker.callback(self._vg_id, do, list(args), extra)

    def __repr__(self) -> str:
        return str(self._vg("repr"))

    def __str__(self) -> str:
        return str(self._vg("str"))

    def __eq__(self, other: Any) -> Any:
        return self._vg("eq", other)

    def __ne__(self, other: Any) -> Any:
        return self._vg("ne", other)

    def __lt__(self, other: Any) -> Any:
        return self._vg("lt", other)

    def __le__(self, other: Any) -> Any:
        return self._vg("le", other)

    def __gt__(self, other: Any) -> Any:
        return self._vg("gt", other)

    def __ge__(self, other: Any) -> Any:
        return self._vg("ge", other)

    def __hash__(self) -> int:
        value = self._vg("hash")
        if type(value) is not int:
            raise TypeError("__hash__ of an oracle object did not return an int")
        return value

    def __bool__(self) -> bool:
        return bool(self._vg("bool"))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            # Never a private or special attribute (no __globals__, __code__, __self__, __class__ …):
            # nothing of the oracle's modules, pytest or the plugin is reachable from here.
            if name in ("__name__", "__qualname__", "__module__", "__doc__") and name in self._vg_info.get("n", {}):
                return self._vg_info["n"][name]
            if name == "__signature__" and "call" in (self._vg_info.get("c") or ()):
                return _signature(self._vg("signature"))  # inspect.signature() of a callback
            if name == "__dict__":  # the instance's own dict, linked (functools.cached_property writes it)
                return self._vg("vars")
            raise AttributeError(f"an oracle object exposes no {name!r} across the isolation boundary")
        return self._vg("getattr", name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            raise AttributeError(f"an oracle object's {name!r} cannot be set across the isolation boundary")
        self._vg("setattr", value, name=name)

    def __delattr__(self, name: str) -> None:
        if name.startswith("_"):
            raise AttributeError(f"an oracle object's {name!r} cannot be deleted across the isolation boundary")
        self._vg("delattr", name=name)

    def __dir__(self) -> list[str]:
        return list(self._vg("dir"))

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._vg_worker.released.append(self._vg_id)


def _signature(sig: Any) -> Any:
    """The ``inspect.Signature`` of an oracle callable (see ``proxy._signature``); where the oracle's
    ``inspect.signature`` raised, ``inspect.signature`` raises the same here."""
    if sig is None:
        raise AttributeError("__signature__")
    if sig == "TypeError":  # a __signature__ that is not a Signature (a property read on its class)
        return _NotASignature()
    if isinstance(sig, str):  # the oracle could not tell a signature: say so as it said it
        raise ValueError("no signature found for an oracle callable")
    return sig


class _NotASignature:
    """``__signature__`` of an oracle callable whose own is no ``Signature`` (a property, read on its class):
    ``inspect.signature`` raises ``TypeError`` on it, as on the oracle's, and it is a descriptor like that
    property (toolz checks ``hasattr(func.__signature__, "__get__")``)."""

    __slots__ = ()

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self

    def __repr__(self) -> str:
        return "<the __signature__ of an oracle callable, not a Signature>"


def _call(self: OracleRef, *args: Any, **kwargs: Any) -> Any:
    return self._vg_worker.callback(self._vg_id, "call", list(args), {"kw": kwargs})


def _iter(self: OracleRef) -> Any:
    result = self._vg("iter")
    if result is self:
        object.__setattr__(self, "_vg_iterated", True)  # a length hint right after: list() or tuple() drains
    return result


def _next(self: OracleRef) -> Any:
    buffer = self._vg_buffer
    if buffer:
        item = buffer.pop()
        if self._vg_ahead:  # read ahead: the oracle's own iterator moves only by what is taken
            took = self._vg_worker.took
            took[self._vg_id] = took.get(self._vg_id, 0) + 1
        if isinstance(item, _End):
            raise item.exc
        return item
    worker, drain, ahead = self._vg_worker, self._vg_drain, self._vg_ra
    if drain or not ahead:
        items, end = worker.next_batch(self._vg_id, MAX_BATCH if drain else 1)
        read_ahead = False
    else:
        items, end, read_ahead = worker.read_ahead(self._vg_id, ahead)
        # Doubled while the oracle reads this iterator ahead; one at a time, as before, where it will not.
        object.__setattr__(self, "_vg_ra", min(2 * ahead, MAX_BATCH) if read_ahead else 0)
    if end is not None:
        items.append(_End(end))
    if not items:
        raise StopIteration
    items.reverse()
    object.__setattr__(self, "_vg_buffer", items)
    object.__setattr__(self, "_vg_ahead", read_ahead)
    return _next(self)


class _End:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _length_hint(self: OracleRef) -> int:
    # list(), tuple(), sorted(), str.join() and list.extend() ask for a length hint right after iter() and
    # then take every item; nothing of the oracle runs between two of them, so the items may come in batches.
    if self._vg_iterated:
        object.__setattr__(self, "_vg_drain", True)
    object.__setattr__(self, "_vg_iterated", False)
    return 0


_SPECIAL: dict[str, dict[str, Any]] = {
    "call": {"__call__": _call},
    "iter": {"__iter__": _iter},
    "next": {"__next__": _next, "__length_hint__": _length_hint},
    "len": {"__len__": lambda self: operator.index(self._vg("len"))},
    "getitem": {"__getitem__": lambda self, key: self._vg("getitem", key)},
    "setitem": {"__setitem__": lambda self, key, value: self._vg("setitem", key, value)},
    "delitem": {"__delitem__": lambda self, key: self._vg("delitem", key)},
    "contains": {"__contains__": lambda self, item: bool(self._vg("contains", item))},
    "index": {"__index__": lambda self: operator.index(self._vg("index"))},
    "int": {"__int__": lambda self: int(self._vg("int"))},
    "float": {"__float__": lambda self: float(self._vg("float"))},
    "enter": {"__enter__": lambda self: self._vg("enter"),
              "__exit__": lambda self, *exc: self._vg("exit", exc[1] if len(exc) > 1 else None)},
    # An oracle class: ``isinstance(ref, type)`` holds, as of the class itself (cachetools warns when a
    # method cache is bound to a class); ``type(ref)`` stays this class, and nothing of the class is read.
    "type": {"__class__": property(lambda self: type)},
}
_REF_CLASSES: dict[frozenset[str], type] = {}


class _Named:
    """``__doc__`` and ``__module__`` of an oracle reference: its object's (``functools.wraps`` copies them)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return None
        return (object.__getattribute__(instance, "_vg_info").get("n") or {}).get(self.name)


def _ref_class(caps: frozenset[str]) -> type:
    """The :class:`OracleRef` class with the special methods of ``caps`` (cached)."""
    cls = _REF_CLASSES.get(caps)
    if cls is None:
        ns: dict[str, Any] = {"__slots__": (), "__doc__": _Named("__doc__"), "__module__": _Named("__module__")}
        for cap in sorted(caps):
            ns.update(_SPECIAL.get(cap, {}))
        cls = _REF_CLASSES[caps] = type("OracleRef", (OracleRef,), ns)
        for cap in caps:  # a test's own Mapping is a Mapping here too (toolz's merge_with asks)
            if cap in _ABCS:
                _ABCS[cap].register(cls)
    return cls


_ABCS = {c.__name__: c for c in (collections.abc.Mapping, collections.abc.MutableMapping, collections.abc.Sequence,
                                 collections.abc.MutableSequence, collections.abc.Set, collections.abc.MutableSet)}


# --- pickling candidate objects ---------------------------------------------------------------------
# A candidate object the oracle pickles is pickled here, and unpickled here again (proxy._unpickle). What
# inside it is the oracle's (an oracle object it holds, a test's subclass built by Worker._subclass, whose
# module this process cannot import) is pickled by reference to this process's table: unpickled, it is the
# same object again, not a copy (docs/design.md §8.1).
_KEPT_BY_PICKLE: dict[int, Any] = {}  # id → an oracle reference or a class built here, for as long as the worker runs
MAX_KEPT_BY_PICKLE = 100_000


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, OracleRef):
            if id(obj) not in _KEPT_BY_PICKLE:
                if len(_KEPT_BY_PICKLE) >= MAX_KEPT_BY_PICKLE:
                    raise pickle.PicklingError(f"more than {MAX_KEPT_BY_PICKLE} oracle objects pickled")
                _KEPT_BY_PICKLE[id(obj)] = obj  # first: pickling it may come back here (a cycle through it)
                try:
                    # What plain pickle says of the oracle's object raises here as it would (a class its module
                    # does not hold under its name, a lock, a lambda); the oracle's bytes are never sent.
                    obj._vg("pickle")
                except BaseException:
                    del _KEPT_BY_PICKLE[id(obj)]
                    raise
            return id(obj)
        kept = _KEPT_BY_PICKLE.get(id(obj), _KEPT_BY_PICKLE)  # (None is an object too)
        return id(obj) if kept is obj else None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        if type(pid) is not int or pid not in _KEPT_BY_PICKLE:
            raise pickle.UnpicklingError("a pickle names an oracle object this worker does not hold")
        return _KEPT_BY_PICKLE[pid]


class _PackImporter:
    """A finder, last on ``sys.meta_path``, for a module of the oracle's own (a test module of the pack):
    candidate code that imports an object's ``__module__`` (toolz's curry when pickled, as ``pickle`` does for a
    class) gets a module whose attributes are only what the worker holds already: candidate objects and oracle
    objects handed to it (the oracle's ``_Callbacks``); any other name is missing. Never the oracle module's
    code, its other values or its imports."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.refs: dict[str, Any] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not self.worker.serving:
            return None  # only candidate code run for a request imports; none runs before the first
        ref = self.worker.callback(PACK_MODULES, "module", [], {"name": fullname})
        if ref is None:
            return None
        self.refs[fullname] = ref
        return importlib.util.spec_from_loader(fullname, self, is_package=True)  # type: ignore[arg-type]

    def create_module(self, spec: Any) -> Any:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        ref = self.refs.pop(module.__name__)

        def __getattr__(name: str) -> Any:  # noqa: N807 - a module's own (PEP 562)
            if name.startswith("_"):
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
            return getattr(ref, name)

        module.__getattr__ = __getattr__  # type: ignore[method-assign]


PACK_MODULES = 0  # the oracle's object that answers "module" (proxy.PACK_MODULES)


def _dumps(obj: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


class _Globals(dict[str, Any]):
    """The globals of a class the oracle subclassed from a candidate class, built here from the oracle's
    source: a name the class's source uses is fetched from the oracle's module when first read."""

    def __init__(self, worker: Worker, rid: int, names: list[str], module: str) -> None:
        super().__init__({"__name__": module, "__builtins__": __builtins__})
        self.worker, self.rid, self.names = worker, rid, frozenset(names)

    def __missing__(self, name: str) -> Any:
        if name not in self.names:
            raise KeyError(name)
        try:
            value = self.worker.callback(self.rid, "global", [], {"name": name})
        except NameError:
            raise KeyError(name) from None
        self[name] = value
        return value


# --- the worker ----------------------------------------------------------------------------------


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


class Worker:
    """The request loop, the handle table (candidate objects the oracle holds by id) and the oracle objects
    this side holds by reference."""

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
        self.raised: dict[int, BaseException] = {}  # the last exceptions sent, by id (see exception())
        # Linked containers: a list, dict, set or bytearray the oracle handed over that candidate code held on
        # to (a cache it stores, a list a lazy iterator reads): this copy and the oracle's own are kept in step.
        self.links: dict[int, Any] = {}  # link id → this side's copy
        self.link_of: dict[int, int] = {}  # id(copy) → link id
        self.link_state: dict[int, str] = {}  # link id → the JSON both sides last agreed on
        # link id → its scalar items (codec.scalar_items) when its state was last agreed, and that state's text
        self.link_seen: dict[int, tuple[list[Any], str]] = {}
        self.pending: dict[int, Any] = {}  # link id → a copy handed over by the request being served
        self.kept: list[int] = []
        self.out, self.err = _Output("stdout"), _Output("stderr")

    # -- encoding (worker → oracle) ---------------------------------------------------------------

    def _handle(self, obj: Any) -> int:
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

    def _ref(self, obj: Any) -> list[str] | None:
        """``[module, qualname]`` when importing ``module`` and walking ``qualname`` gives ``obj`` back."""
        module = getattr(obj, "__module__", None)
        if module is None:  # a method descriptor (str.lower): its class's module
            module = getattr(getattr(obj, "__objclass__", None), "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        if type(module) is not str or type(qualname) is not str or "<" in qualname:
            return None
        home = sys.modules.get(module) if module != "builtins" else __import__("builtins")
        found = home
        try:
            for part in qualname.split("."):
                found = getattr(found, part)
        except Exception:
            found = None
        if found is obj:
            return [module, qualname]
        name = getattr(obj, "__name__", None)  # a module-level alias of a bound method: random.choice
        if type(name) is str and name.isidentifier() and getattr(home, name, None) is obj:
            return [module, name]
        return None

    def _record(self, value: Any) -> Any:
        cls = type(value)
        if isinstance(value, OracleRef):
            return {"o": value._vg_id}
        if isinstance(value, BaseException):  # an exception as a value (a handler's argument): as data
            return {"xv": self.exception(value)}
        if isinstance(value, type):
            if issubclass(value, BaseException):
                return {"x": codec.mro_names(value)}
            return None
        if isinstance(value, enum.Enum):
            return {"en": {"c": self._class(cls), "n": value.name,
                           "v": codec.encode(value.value, self._fallback, records=self._record)}}
        if isinstance(value, types.ModuleType) and isinstance(value.__name__, str):
            return {"mod": value.__name__}
        kind = self._record_kind(cls)
        if kind is None:
            return self._builtin_value(value)
        fields = self._field_names(cls, kind)
        pairs = [(name, getattr(value, name)) for name in fields]
        return {"r": {"c": self._class(cls), "k": kind,
                      "f": codec.encode_fields(pairs, self._fallback, self._record), "h": self._handle(value)}}

    def _builtin_value(self, value: Any) -> Any:
        """An instance of a subclass of an immutable builtin (a ``tuple`` subclass such as cachetools'
        ``_HashedTuple``, an ``int`` or ``str`` subclass): its builtin value, read with the builtin's own
        methods (never the subclass's), plus a handle for what the subclass adds."""
        for base, value_of in _VALUE_BASES:
            if isinstance(value, base) and type(value) is not base and not isinstance(value, bool):
                cls = type(value)
                mro = type.__dict__["__mro__"].__get__(cls)
                own = [c for c in mro[:mro.index(base)]]
                over = sorted({n for c in own for n in vars(c) if n in _FORWARDABLE})
                return {"bv": {"c": self._class(cls), "b": base.__name__,
                               "v": codec.encode(value_of(value), self._fallback, records=self._record),
                               "h": self._handle(value), "ov": over}}
        return None

    @staticmethod
    def _record_kind(cls: type) -> str | None:
        if dataclasses.is_dataclass(cls):
            return "dc"
        if issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple):
            return "nt"
        if hasattr(cls, "__attrs_attrs__"):
            return "at"
        return None

    @staticmethod
    def _field_names(cls: type, kind: str) -> list[str]:
        if kind == "dc":
            return [f.name for f in dataclasses.fields(cls)]
        if kind == "nt":
            return [str(n) for n in cls._fields]  # type: ignore[attr-defined]
        return [str(a.name) for a in cls.__attrs_attrs__]  # type: ignore[attr-defined]

    def _class(self, cls: type) -> dict[str, Any]:
        """A class descriptor: its names, its record shape (if any) and how to reach it again."""
        desc: dict[str, Any] = {"t": codec.mro_names(cls), "ref": self._ref(cls), "id": self._handle(cls)}
        if type(cls) is not type:  # a metaclass of its own (ABCMeta, EnumMeta …): what isinstance(cls, M) reads
            desc["mt"] = codec.mro_names(type(cls))
        kind = self._record_kind(cls) if isinstance(cls, type) else None
        if kind is not None:
            desc["rk"] = kind
            desc["f"] = self._field_names(cls, kind)
            desc["init"] = self._init_fields(cls, kind, desc["f"])
            desc["nc"] = self._uncompared(cls, kind)
        if isinstance(cls, type) and issubclass(cls, enum.Enum):
            # Names that are aliases of another member (HIGH = "low" beside LOW = "low"): the oracle flags
            # them, a candidate must not collapse cases the oracle tells apart.
            desc["alias"] = sorted(n for n, m in cls.__members__.items() if m.name != n)[:1000]
        return desc

    @staticmethod
    def _uncompared(cls: type, kind: str) -> list[str]:
        """The fields the class leaves out of its equality (``field(compare=False)``, attrs' ``eq=False``)."""
        if kind == "dc":
            return [f.name for f in dataclasses.fields(cls) if not f.compare]
        if kind == "at":
            return [str(a.name) for a in cls.__attrs_attrs__ if not a.eq]  # type: ignore[attr-defined]
        return []

    @staticmethod
    def _init_fields(cls: type, kind: str, names: list[str]) -> list[str]:
        """The fields ``__init__`` takes, in order."""
        if kind == "dc":
            return [f.name for f in dataclasses.fields(cls) if f.init]
        if kind == "at":
            return [str(a.name) for a in cls.__attrs_attrs__ if a.init]  # type: ignore[attr-defined]
        return list(names)

    def _fallback(self, obj: Any) -> Any:
        if isinstance(obj, type):
            return {"h": {"k": "cls", **self._class(obj)}}
        t = type(obj)
        if t in (list, dict, set, bytearray) and self.live:
            return {"h": {"k": "live", "t": codec.mro_names(t), "id": self._handle(obj)}}
        if hasattr(t, "__next__") and hasattr(t, "__iter__"):
            # An iterator: the oracle may take its items in batches (list(), tuple() …, docs/design.md §8.1).
            desc = {"k": "it", "t": codec.mro_names(t), "id": self._handle(obj)}
            if t.__iter__ in _SELF_ITER:
                desc["si"] = True  # iter() gives the object back: the oracle need not ask
            if not hasattr(t, "__len__"):
                desc["nl"] = True  # nor ask for a length it has not got (list() would, every time)
            return {"h": desc}
        kind = "fn" if callable(obj) else "obj"
        desc = {"k": kind, "t": codec.mro_names(t), "ref": self._ref(obj) if kind == "fn" else None,
                "id": self._handle(obj)}
        if hasattr(t, "__get__"):
            desc["dg"] = True  # a descriptor (a function, cachedmethod …): an oracle class binds it as a method
        if hasattr(t, "__set_name__"):
            desc["sn"] = True  # told its owner and name when an oracle class body holds it
        if kind == "fn":
            names = {}
            for attr in ("__name__", "__qualname__", "__module__"):
                value = getattr(obj, attr, None)
                if type(value) is str:
                    names[attr] = value[:500]
            desc["n"] = names
        try:
            own = object.__getattribute__(obj, "__dict__")
        except Exception:  # no __dict__, or a property of the candidate's that raises
            own = None
        if type(own) is dict and "__module__" in own:
            desc["om"] = True  # it answers its own __module__ (toolz's curry): the oracle asks for it
        return {"h": desc}

    live = False  # whether a list/dict/set result is held live (an attribute read) or sent by value (a call)

    def encode(self, value: Any, live: bool = False, top: bool = True) -> Any:
        if live and type(value) in (list, dict, set, bytearray) and id(value) not in self.link_of:
            self.live = True
            try:
                return self._fallback(value)
            finally:
                self.live = False
        return codec.encode(value, self._fallback, records=self._record, links=self.link_of or None, top=top)

    # -- linked containers ------------------------------------------------------------------------

    def _linked(self, p: Any) -> Any:
        if type(p) is int:
            found = self.links.get(p, self.pending.get(p))
            if found is None:
                raise codec.ProtocolError("a linked container this worker does not hold")
            return found
        lid, tree = int(p[0]), p[1]
        before = len(self.links)
        copy_ = self.decode(tree)
        nested = len(self.links) > before  # links inside it, sent with their states
        if type(copy_) not in (list, dict, set, bytearray):
            raise codec.ProtocolError("a link to something that is not a container")
        if self.linking:  # a callback's result: linked at once (the oracle did so too)
            self.links[lid], self.link_of[id(copy_)] = copy_, lid
        else:
            self.pending[lid] = copy_
        # With links nested inside, the state both sides agree on names them by id.
        self.link_state[lid] = codec.dumps(self.encode(copy_, top=False) if nested else tree)
        return copy_

    def _keep(self, base: dict[int, int]) -> None:
        """After a call: the containers it was handed that candidate code now holds more references to
        (it stored one, returned it, a lazy iterator reads it) stay linked; the rest were only arguments."""
        for lid, copy_ in self.pending.items():
            if sys.getrefcount(copy_) > base[lid] and len(self.links) < MAX_LINKS:
                self.links[lid], self.link_of[id(copy_)] = copy_, lid
                self.kept.append(lid)
            elif lid not in self.links:
                self.link_state.pop(lid, None)
        self.pending = {}

    def _sync_out(self, frame: dict[str, Any]) -> None:
        """Attach the new state of every linked container candidate code changed, and drop those it let go."""
        if self.kept:
            frame["kept"], self.kept = self.kept, []
        if not self.links:
            return
        changed, dropped = [], []
        for lid in list(self.links):
            copy_ = self.links[lid]
            items, text = codec.scalar_items(copy_), self.link_state.get(lid)
            seen = self.link_seen.get(lid)
            if not (items is not None and seen is not None and text is not None and seen[1] is text
                    and codec.same_items(items, seen[0])):  # else the same scalars as last agreed: unchanged
                tree = self.encode(copy_, top=False)
                new = codec.dumps(tree)
                if new != text:  # its last changes go first, even if it is let go now
                    changed.append([lid, tree])
                    self.link_state[lid] = text = new
                if items is None:
                    self.link_seen.pop(lid, None)
                else:
                    self.link_seen[lid] = (items, str(text))
            if sys.getrefcount(copy_) <= 3:  # the table, this name, the call: nothing of the candidate's
                del self.links[lid], self.link_of[id(copy_)], self.link_state[lid]
                self.link_seen.pop(lid, None)
                dropped.append(lid)
        if changed:
            frame["sync"] = changed
        if dropped:
            frame["unlink"] = dropped

    def _sync_in(self, frame: dict[str, Any]) -> None:
        """Apply the oracle's changes to the containers it shares with this side (its code changed them), and
        forget what was read ahead of an oracle iterator that the oracle's own code has moved since."""
        for rid in frame.get("drop") or ():
            ref = self.refs.get(rid) if type(rid) is int else None
            if ref is not None and ref._vg_ahead:
                object.__setattr__(ref, "_vg_buffer", None)
                object.__setattr__(ref, "_vg_ahead", False)
                object.__setattr__(ref, "_vg_ra", READ_AHEAD_FIRST)
        for lid, tree in frame.get("sync") or ():
            copy_ = self.links.get(lid)
            if copy_ is not None:
                codec.replace_in_place(copy_, self.decode(tree))
                self.link_state[lid] = codec.dumps(tree)

    # -- decoding (oracle → worker) ---------------------------------------------------------------

    def _resolve_ref(self, ref: Any) -> Any:
        module, qualname = ref
        obj = importlib.import_module(module)
        for part in [p for p in str(qualname).split(".") if p]:
            obj = getattr(obj, part)
        return obj

    def _make(self, tag: str, p: Any) -> Any:
        if tag == "h":
            if p.get("id") in self.handles:
                return self.handles[p["id"]]
            if p.get("id") in self.raised:  # an exception the oracle holds (its attributes, its __exit__)
                return self.raised[p["id"]]
            if p.get("ref"):
                return self._resolve_ref(p["ref"])
            raise codec.ProtocolError("a handle this worker does not hold (it was restarted?)")
        if tag == "lk":
            return self._linked(p)
        if tag == "o":
            rid = int(p["id"]) if isinstance(p, dict) else int(p)
            ref = self.refs.get(rid)
            if ref is None:
                if not isinstance(p, dict):
                    raise codec.ProtocolError("a reference to an oracle object this worker never received")
                ref = _ref_class(frozenset(str(c) for c in p.get("c") or ()))(self, rid, p)
                self.refs[rid] = ref
                if rid in self.released:  # an earlier proxy of it died, its release not sent yet: keep it
                    self.released.remove(rid)
            return ref
        if tag == "r":
            if p.get("h") in self.handles:
                return self.handles[p["h"]]
            cls = self._make("h", p["c"])
            fields = {name: self.decode(value) for name, value in p["f"]}
            if p.get("k") == "nt":
                return cls(*fields.values())
            return cls(**fields)
        if tag == "en":
            return self._make("h", p["c"])[p["n"]]
        if tag == "x":
            return self._resolve_ref(p[0])
        if tag == "xv":
            return self._exception(p)
        if tag == "mod":
            return importlib.import_module(p)
        raise codec.ProtocolError(f"unknown tag {tag!r}")

    def decode(self, tree: Any) -> Any:
        return codec.decode(tree, self._make)

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
        """Ask the oracle to apply ``do`` to its object ``rid`` (re-entrant); its answer, or its exception."""
        message: dict[str, Any] = {"op": "cb", "obj": rid, "do": do, "args": self.encode(args)}
        if "kw" in extra:
            message["kw"] = [[k, self.encode(v)] for k, v in extra["kw"].items()]
        if "name" in extra:
            message["name"] = str(extra["name"])
        answer = self._exchange(message)
        return self._outcome(answer)

    def next_batch(self, rid: int, n: int) -> tuple[list[Any], BaseException | None]:
        """Up to ``n`` items of the oracle iterator ``rid`` and how it ended (``StopIteration`` or its
        exception) when it ended within them."""
        return self._items_of(self._exchange({"op": "cb", "obj": rid, "do": "next", "args": [], "n": n}))

    def _items_of(self, answer: dict[str, Any]) -> tuple[list[Any], BaseException | None]:
        if "fail" in answer:
            raise BoundaryFault(str(answer["fail"])[:MAX_TEXT])
        if "raise" in answer and "ok" not in answer:
            return [], self._exception(answer["raise"])
        items = list(self.decode(answer.get("ok") or []))
        end: BaseException | None = None
        if answer.get("end"):
            end = StopIteration()
        elif "then" in answer:
            end = self._exception(answer["then"])
        return items, end

    def read_ahead(self, rid: int, n: int) -> tuple[list[Any], BaseException | None, bool]:
        """Up to ``n`` items of the oracle iterator ``rid`` read ahead, where the oracle can (docs/design.md
        §8.1 "Batching"), how it ended within them, and whether they were read ahead; else one item, as
        :meth:`next_batch` gives it."""
        answer = self._exchange({"op": "cb", "obj": rid, "do": "next", "args": [], "n": n, "ra": True})
        items, end = self._items_of(answer)
        return items, end, bool(answer.get("ra"))

    linking = False  # decoding a callback's result (see _linked)

    def _outcome(self, answer: dict[str, Any]) -> Any:
        if "ok" in answer:
            self.linking = True
            try:
                return self.decode(answer["ok"])
            finally:
                self.linking = False
        if "raise" in answer:
            raise self._exception(answer["raise"])
        raise BoundaryFault(str(answer.get("fail", "the oracle sent an answer of an unknown shape"))[:MAX_TEXT])

    _MIRRORS: dict[tuple[tuple[str, str], ...], type] = {}

    def _exception(self, body: dict[str, Any]) -> BaseException:
        """The oracle's exception (raised by a callback) as an exception of this process: a builtin class as
        itself, any other class as a local class named and ranked like the oracle's; it carries the oracle
        object's id, so that if it propagates back out of candidate code the oracle raises its own object."""
        names = tuple((str(m), str(q)) for m, q in body.get("t") or [["builtins", "Exception"]])
        cls = self._mirror(names)
        args = body.get("args")
        try:
            exc = cls(*self.decode(args)) if isinstance(args, dict) else cls(str(body.get("msg", "")))
        except Exception:
            exc = cls(str(body.get("msg", "")))
        with contextlib.suppress(Exception):
            exc._vg_oracle = body.get("o")
        return exc

    def _mirror(self, names: tuple[tuple[str, str], ...]) -> type:
        import builtins

        for module, qualname in names:
            if module == "builtins":
                found = getattr(builtins, qualname, None)
                if isinstance(found, type) and issubclass(found, BaseException) and (module, qualname) == names[0]:
                    return found
        module, qualname = names[0] if names else ("", "")
        if module in sys.modules and module.partition(".")[0] in sys.stdlib_module_names:
            # The standard library's own class (pickle.PicklingError, json.JSONDecodeError), as the candidate
            # imports it: an ``except`` of the candidate's catches it as in one process.
            home: Any = sys.modules[module]
            for part in qualname.split("."):
                home = getattr(home, part, None)
            if isinstance(home, type) and issubclass(home, BaseException):
                return home
        key = names[:8]
        cls = self._MIRRORS.get(key)
        if cls is None:
            base: type = Exception
            for module, qualname in reversed(names):
                found = getattr(builtins, qualname, None) if module == "builtins" else None
                if isinstance(found, type) and issubclass(found, BaseException):
                    base = found if issubclass(found, base) else base
            module, qualname = names[0]
            cls = type(qualname.rsplit(".", 1)[-1], (base,), {"__module__": module, "__qualname__": qualname})
            self._MIRRORS[key] = cls
        return cls

    # -- requests (oracle → worker) ---------------------------------------------------------------

    def _target(self, req: dict[str, Any]) -> Any:
        return self._make("h", req["obj"])

    def handle(self, req: dict[str, Any]) -> Any:
        for hid in req.get("rel") or ():
            self._release(hid)
        self._sync_in(req)
        rnd = req.get("rnd")
        if rnd is not None:
            self._random(rnd)
        op = req.get("op")
        if op == "import":
            module = importlib.import_module(req["mod"])
            doc = getattr(module, "__doc__", None)
            return {"pkg": hasattr(module, "__path__"), "file": str(getattr(module, "__file__", "") or ""),
                    "doc": doc[:MAX_TEXT] if type(doc) is str else None}
        if op == "getattr":
            return _Live(getattr(self._target(req), req["name"]))
        if op == "setattr":
            setattr(self._target(req), req["name"], self.decode(req["value"]))
            return None
        if op == "delattr":
            delattr(self._target(req), req["name"])
            return None
        if op == "call":
            outer, self.pending = self.pending, {}  # a call inside a callback hands over its own containers
            try:
                return self._call(req)
            finally:
                self.pending = outer
        return self._other(req, op)

    def _call(self, req: dict[str, Any]) -> Any:
        args = self.decode(req.get("args") or [])
        kwargs = {k: self.decode(v) for k, v in req.get("kw") or []}
        # Only what came by value can have changed in place for the oracle (a handle is the worker's own).
        self.called = ([a if _by_value(t) else None for a, t in zip(args, req.get("args") or [], strict=False)],
                       {k: v for (k, t), v in zip(req.get("kw") or [], kwargs.values(), strict=False)
                        if _by_value(t)})
        base = {lid: sys.getrefcount(c) for lid, c in self.pending.items()}
        try:
            return self._target(req)(*args, **kwargs)
        finally:
            self._keep(base)

    def _other(self, req: dict[str, Any], op: Any) -> Any:
        if op == "next":
            return self._batch(self._target(req), min(max(int(req.get("n") or 1), 1), MAX_BATCH))
        if op == "dunder":
            name = req["name"]
            obj = self._target(req)
            if name in _UNARY:
                return _UNARY[name](obj)
            if name in _BINARY:
                return _BINARY[name](obj, self.decode(req["arg"]))
            if name == "__setitem__":
                key, value = self.decode(req["arg"])
                obj[key] = value
                return None
            if name == "__exit__":
                return self._exit(obj, req.get("exc"))
            if name == "__format__":
                return format(obj, self.decode(req["arg"]))
            raise codec.ProtocolError(f"unsupported operation {name!r}")
        if op == "unpickle":
            return _Unpickler(io.BytesIO(self.decode(req["arg"]))).load()
        if op == "eval":  # the candidate's text, evaluated here rather than in the oracle (textfence)
            namespace = self.decode(req["globals"])
            if type(namespace) is not dict:
                raise codec.ProtocolError("eval needs a dict of globals")
            return eval(self.decode(req["src"]), namespace)
        if op == "subclass":
            return self._subclass(req)
        if op == "exception":  # the oracle calls a candidate exception class: built here, sent as data
            args = self.decode(req.get("args") or [])
            kwargs = {k: self.decode(v) for k, v in req.get("kw") or []}
            return _Exception(self._target(req)(*args, **kwargs))
        if op == "signature":  # the oracle's inspect.signature() of a candidate callable
            import inspect

            return inspect.signature(self._target(req))
        if op == "dir":
            return sorted(str(n) for n in dir(self._target(req)))
        if op == "vars":  # a module's namespace, for the oracle's vars(module)
            return {str(k): v for k, v in vars(self._target(req)).items() if isinstance(k, str)
                    and (not k.startswith("_") or k in ("__name__", "__doc__", "__all__", "__file__"))}
        if op == "doctest":  # the oracle's doctest.testmod of a candidate module, or testfile of a file outside
            import doctest  # the pack (the candidate's README): the candidate's text runs here, never there

            options = {k: v for k, v in (req.get("opts") or {}).items()
                       if k in ("name", "verbose", "report", "optionflags", "exclude_empty", "encoding")}
            if "path" in req:
                found = doctest.testfile(str(req["path"]), module_relative=False, **options)
            else:
                found = doctest.testmod(importlib.import_module(str(req["mod"])), **options)
            return [int(found.failed), int(found.attempted)]
        if op == "ping":
            return None
        raise codec.ProtocolError(f"unknown op {op!r}")

    def _exit(self, obj: Any, exc: Any) -> Any:
        """``obj.__exit__`` with the exception the oracle's ``with`` body raised (``None``: it ended normally):
        a candidate exception goes back as itself, the oracle's own as a mirror. The oracle decides what the
        answer may do (it never lets it suppress an exception its own code raised)."""
        if exc is None:
            return obj.__exit__(None, None, None)
        error = self.raised.get(exc["h"]) if isinstance(exc, dict) and type(exc.get("h")) is int else None
        if not isinstance(error, BaseException):
            error = self._exception(exc)
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

    def _subclass(self, req: dict[str, Any]) -> type:
        """Build the oracle's subclass of a candidate class here, from the oracle's source (docs/design.md
        §8.1 "Subclasses"): its instances live beside their base class; the oracle holds handles."""
        name, qualname, module = str(req["name"]), str(req["qualname"]), str(req["module"])
        namespace = _Globals(self, int(req["globals"]), [str(n) for n in req.get("names") or []], module)
        for key, value in req.get("values") or []:
            namespace[str(key)] = self.decode(value)
        code = compile(str(req["src"]), str(req["file"]), "exec")
        exec(code, namespace)  # noqa: S102 - the oracle's own class statement, run in the sandbox
        cls = namespace[name]
        if not isinstance(cls, type):
            raise TypeError(f"the class statement of {qualname} did not make a class")
        _KEPT_BY_PICKLE[id(cls)] = cls  # pickled by reference: its module is the oracle's (see _Pickler)
        with contextlib.suppress(AttributeError, TypeError):
            cls.__qualname__ = qualname
        return cls

    def _random(self, rnd: Any) -> None:
        """The oracle seeded its ``random`` (a test's ``random.seed(...)``, Hypothesis's seeding): seed this
        process's the same way, so candidate code that draws from ``random`` draws what it would have."""
        kind, value = rnd[0], self.decode(rnd[1])
        if kind == "seed":
            random.seed(value)
        elif kind == "state":
            random.setstate(value)

    def _mutables(self, args: list[Any], kwargs: dict[str, Any]) -> list[list[Any]]:
        """``[[position or name, value], …]`` of the mutable by-value arguments of the last call: the
        oracle passed copies, so their state after the call is sent back and applied in place."""
        out = []
        for key, value in [*enumerate(args), *kwargs.items()]:
            if type(value) in (list, dict, set, bytearray):
                out.append([key, self.encode(value, top=False)])
        return out

    def exception(self, exc: BaseException, depth: int = 0) -> dict[str, Any]:
        """An exception as data: its class's names, ``args``, message, frames, and (three deep) what it was
        raised from (``__cause__``, ``__context__``, ``__suppress_context__``)."""
        frames = []
        for frame, line in traceback.walk_tb(exc.__traceback__):
            frames.append([frame.f_code.co_filename, line, frame.f_code.co_name])
        try:
            args = self.encode(tuple(exc.args))
        except Exception:
            args = None
        try:
            message = str(exc)[:MAX_TEXT]
        except Exception as inner:
            message = f"<str() of the exception raised {type(inner).__name__}>"
        body = {"t": codec.mro_names(type(exc)), "args": args, "msg": message, "tb": frames[-MAX_FRAMES:]}
        oracle = getattr(exc, "_vg_oracle", None)
        if type(oracle) is int:
            body["o"] = oracle
        # The oracle may hand it back (a `with` body's exception, to a candidate __exit__): the last few
        # are kept (exceptions cannot be weakly referenced, so no finalizer could release them).
        eid = self.next_id
        self.next_id += 1
        self.raised[eid] = exc
        if len(self.raised) > MAX_RAISED:
            del self.raised[next(iter(self.raised))]
        body["h"] = eid
        if depth < 3:
            for key, linked in (("cause", exc.__cause__), ("ctx", exc.__context__)):
                if isinstance(linked, BaseException) and linked is not exc:
                    body[key] = self.exception(linked, depth + 1)
            body["sc"] = bool(exc.__suppress_context__)
        return body

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
                answer = {"ok": None, "exc": self.exception(value.exc)}
            elif isinstance(value, _Batch):
                answer = {"ok": [self.encode(v) for v in value.items]}
                if value.end:
                    answer["end"] = True
                elif value.exc is not None:
                    answer["then"] = self.exception(value.exc)
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
            answer = {"raise": self.exception(exc)}
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


def _by_value(tree: Any) -> bool:
    """Whether an argument's wire form is a list, dict, set or bytearray sent by value (or newly linked)."""
    if type(tree) is list:
        return True
    if type(tree) is dict and len(tree) == 1:
        ((tag, p),) = tree.items()
        return tag in ("d", "s", "ba", "=") or (tag == "lk" and type(p) is list)
    return False


# Immutable builtins whose subclasses cross by value, and how their true value is read (the builtin's own
# method, which a subclass cannot override).
_VALUE_BASES: tuple[tuple[type, Any], ...] = (
    (tuple, lambda v: tuple.__getitem__(v, slice(None))), (str, str.__str__), (int, int.__int__),
    (float, float.__float__), (bytes, lambda v: bytes(memoryview(v))), (frozenset, frozenset.copy))
# What a subclass may override that the oracle asks it (the rest is the builtin's).
_FORWARDABLE = frozenset({
    "__repr__", "__str__", "__format__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__floordiv__", "__mod__",
    "__pow__", "__and__", "__or__", "__xor__", "__neg__", "__abs__", "__len__", "__getitem__", "__contains__",
    "__iter__", "__bool__"})


class _Live:
    """An attribute's value: a list, dict or set read from a module or an object is held live (the oracle's
    ``mod.TABLE.add(x)`` changes the candidate's own set), anything else crosses as usual."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _Exception:
    __slots__ = ("exc",)

    def __init__(self, exc: Any) -> None:
        if not isinstance(exc, BaseException):
            raise TypeError(f"calling the exception class gave a {type(exc).__name__}, not an exception")
        self.exc = exc


class _Batch:
    __slots__ = ("items", "end", "exc")

    def __init__(self, items: list[Any], end: bool = False, exc: BaseException | None = None) -> None:
        self.items, self.end, self.exc = items, end, exc


def _self_iters() -> frozenset[Any]:
    """``__iter__`` of the iterator types whose ``iter()`` is the object itself (generators, the builtins')."""

    def gen() -> Any:
        yield 1

    kinds: list[Any] = [
        type(gen()), type(iter([])), type(iter(())), type(iter(range(1))), type(iter("")), type(iter({})),
        type(iter(set())), type(iter({}.values())), type(iter({}.items())), type(iter(b"")), type(map(len, [])),
        type(filter(None, [])), type(zip()), type(enumerate([])), type(reversed([]))]
    import itertools

    kinds += [itertools.count, itertools.islice, itertools.chain, itertools.cycle, itertools.repeat,
              itertools.accumulate, itertools.groupby, itertools.starmap, itertools.takewhile,
              itertools.dropwhile, itertools.zip_longest, itertools.product, itertools.permutations,
              itertools.combinations, itertools.compress, itertools.filterfalse, itertools.pairwise,
              type(itertools.tee(())[0])]
    return frozenset(k.__iter__ for k in kinds)


_SELF_ITER = _self_iters()


def _spin_budget() -> float | None:
    """Seconds of polling this worker may spend: a quarter of its CPU time limit, so that polling
    never brings a worker near ``RLIMIT_CPU`` that its own work would not have."""
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_CPU)
    return None if soft == resource.RLIM_INFINITY else soft / 4


def main(argv: list[str]) -> int:
    rfd, wfd = int(argv[1]), int(argv[2])
    reader = codec.Reader(rfd)
    try:
        hello = reader.frame()
    except codec.ProtocolError:
        return 2
    if hello.get("cpu") is not None:  # a hint for speed (docs/design.md §11), set before candidate code runs
        with contextlib.suppress(AttributeError, OSError, ValueError, TypeError):
            os.sched_setaffinity(0, {int(hello["cpu"])})
    spin = hello.get("spin_s")
    reader.poll(float(spin) if type(spin) in (int, float) else 0.0, _spin_budget())
    worker = Worker(reader, wfd)
    policy = Policy.from_json(hello.get("policy") or {})
    confined = apply.confine(policy)
    report = {**probe.prove(policy), "confined": confined}
    python_path = [str(p) for p in hello.get("python_path", [])]
    sources.source_only(python_path)  # never compiled code in place of a reviewed source
    at = sources.after_stdlib(sys.path)
    sys.path[at:at] = python_path
    if hello.get("cwd"):
        os.chdir(hello["cwd"])
    # What candidate code prints and warns goes to the oracle with each answer (pytest's capsys, pytest.warns).
    sys.stdout, sys.stderr = worker.out, worker.err
    warnings.simplefilter("always")
    warnings.showwarning = worker._warning
    codec.write_frame(wfd, {"ok": {"pid": os.getpid(), **report}})
    sys.meta_path.append(_PackImporter(worker))  # after the candidate's and the standard library's finders
    worker.serve()
    return 0
