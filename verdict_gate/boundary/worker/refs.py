"""The oracle's objects as the worker holds them, by reference (docs/design.md §8.1, "Callbacks"): a callable,
an iterator, a test's own instance handed to candidate code stays in the oracle process, and each operation
on it here is a callback the oracle answers with that object's protocol only.

A spoke of the worker (:mod:`.server` is its hub): a reference holds the worker it was given and calls back
through it (``worker.callback``); this module imports only the protocol. Also here: what pickling a candidate
object does with what inside it is the oracle's, and the importer of the pack's own modules.
"""

from __future__ import annotations

import collections.abc
import contextlib
import importlib.util
import io
import operator
import pickle
import types
from typing import TYPE_CHECKING, Any

from ..protocol import MAX_BATCH, PACK_MODULES, READ_AHEAD_FIRST
from .errors import named

if TYPE_CHECKING:
    from .server import Worker


@named
class OracleRef:
    """An object of the oracle process (a callable, an iterator, a test's own instance …) handed to candidate
    code. Each operation is a callback the oracle answers with its object's protocol only: a call for a
    callable, ``next`` for an iterator, ``len``/``[]``/``in``/``iter`` for a container, the public
    attributes of a test's own instance. The class of a reference (:func:`ref_class`) has exactly the
    special methods its object has, so ``callable()`` and ``isinstance(x, collections.abc.Iterator)``
    answer as they would for the object itself."""

    __slots__ = ("_vg_id", "_vg_worker", "_vg_info", "_vg_buffer", "_vg_drain", "_vg_iterated", "_vg_ahead",
                 "_vg_ra", "_vg_copy", "__weakref__")

    def __init__(self, worker: Worker, rid: int, info: dict[str, Any]) -> None:
        object.__setattr__(self, "_vg_id", rid)
        object.__setattr__(self, "_vg_worker", worker)
        object.__setattr__(self, "_vg_info", info)
        object.__setattr__(self, "_vg_buffer", None)
        object.__setattr__(self, "_vg_drain", False)
        object.__setattr__(self, "_vg_iterated", False)
        object.__setattr__(self, "_vg_ahead", False)  # whether the buffer was read ahead (see _next)
        object.__setattr__(self, "_vg_ra", READ_AHEAD_FIRST)  # items the next read ahead asks for; 0: never
        object.__setattr__(self, "_vg_copy", None)  # a pure oracle function's copy, called here (ship.py)

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
            if name == "__dict__":  # the instance's own dict: its public names (cachetools' descriptors write it)
                return _InstanceDict(self)
            raise AttributeError(f"an oracle object exposes no {name!r} across the isolation boundary")
        return self._vg("getattr", name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") and name not in ("__name__", "__qualname__", "__doc__", "__module__"):
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

    def _vg_forget(self) -> None:
        """The oracle's own code moved its iterator since it was read ahead: what was read ahead is stale."""
        if self._vg_ahead:
            object.__setattr__(self, "_vg_buffer", None)
            object.__setattr__(self, "_vg_ahead", False)
            object.__setattr__(self, "_vg_ra", READ_AHEAD_FIRST)


def _signature(sig: Any) -> Any:
    """The ``inspect.Signature`` of an oracle callable (see the oracle's ``callbacks.signature``); where the oracle's
    ``inspect.signature`` raised, ``inspect.signature`` raises the same here."""
    if sig is None:
        raise AttributeError("__signature__")
    if sig == "TypeError":  # a __signature__ that is not a Signature (a property read on its class)
        return _NotASignature()
    if isinstance(sig, str):  # the oracle could not tell a signature: say so as it said it
        raise ValueError("no signature found for an oracle callable")
    return sig


@named
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
    copy = self._vg_copy
    if copy is not None and not any(isinstance(a, OracleRef) for a in args) and \
            not any(isinstance(v, OracleRef) for v in kwargs.values()):
        return copy(*args, **kwargs)  # a pure function's copy: what the oracle's would return (ship.py)
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


@named
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


@named
class _Named:
    """``__doc__`` and ``__module__`` of an oracle reference: its object's (``functools.wraps`` copies them)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return None
        return (object.__getattribute__(instance, "_vg_info").get("n") or {}).get(self.name)


def ref_class(caps: frozenset[str]) -> type:
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
# A candidate object the oracle pickles is pickled here, and unpickled here again (the oracle's handles). What
# inside it is the oracle's (an oracle object it holds, a test's subclass built by the SUBCLASS operation, whose
# module this process cannot import) is pickled by reference to this process's table: unpickled, it is the
# same object again, not a copy (docs/design.md §8.1).
KEPT_BY_PICKLE: dict[int, Any] = {}  # id → an oracle reference or a class built here, for as long as the worker runs
MAX_KEPT_BY_PICKLE = 100_000


@named
class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, OracleRef):
            if id(obj) not in KEPT_BY_PICKLE:
                if len(KEPT_BY_PICKLE) >= MAX_KEPT_BY_PICKLE:
                    raise pickle.PicklingError(f"more than {MAX_KEPT_BY_PICKLE} oracle objects pickled")
                KEPT_BY_PICKLE[id(obj)] = obj  # first: pickling it may come back here (a cycle through it)
                try:
                    # What plain pickle says of the oracle's object raises here as it would (a class its module
                    # does not hold under its name, a lock, a lambda); the oracle's bytes are never sent.
                    obj._vg("pickle")
                except BaseException:
                    del KEPT_BY_PICKLE[id(obj)]
                    raise
            return id(obj)
        kept = KEPT_BY_PICKLE.get(id(obj), KEPT_BY_PICKLE)  # (None is an object too)
        return id(obj) if kept is obj else None


@named
class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        if type(pid) is not int or pid not in KEPT_BY_PICKLE:
            raise pickle.UnpicklingError("a pickle names an oracle object this worker does not hold")
        return KEPT_BY_PICKLE[pid]


@named
class _PackImporter:
    """A finder, last on ``sys.meta_path``, for a module of the oracle's own (a test module of the pack):
    candidate code that imports an object's ``__module__`` (toolz's curry when pickled, as ``pickle`` does for a
    class) gets a module whose attributes are only what the worker holds already: candidate objects and oracle
    objects handed to it (the oracle's callbacks); any other name is missing. Never the oracle module's
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


def dumps(obj: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


@named
class _InstanceDict(collections.abc.MutableMapping):
    """``__dict__`` of an oracle object, as candidate code sees it: its public names, read and written in the
    oracle's own dict by callbacks (``dict``: cachetools' ``cachedmethod`` keeps what it made there, a
    ``functools.cached_property`` too), never its private state, and never behaviour bound over a method of its
    class (docs/design.md §8.1, "Data, never behaviour": the oracle checks each write)."""

    __slots__ = ("_ref",)

    def __init__(self, ref: OracleRef) -> None:
        self._ref = ref

    def __getitem__(self, key: Any) -> Any:
        return self._ref._vg("dict", "get", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._ref._vg("dict", "set", key, value)

    def __delitem__(self, key: Any) -> None:
        self._ref._vg("dict", "del", key)

    def __iter__(self) -> Any:
        return iter(self._ref._vg("dict", "keys"))

    def __len__(self) -> int:
        return len(self._ref._vg("dict", "keys"))

    def __contains__(self, key: Any) -> bool:
        return bool(self._ref._vg("dict", "has", key))
