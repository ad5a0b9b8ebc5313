"""Candidate objects as the oracle holds them (docs/design.md §8.1, "by handle"): a :class:`Handle` stays in
the worker, and every operation on it (attribute reads, calls, ``len``, iteration, indexing, ``repr``,
operators) is a request. Its class is a local subclass named like the candidate's (:func:`handle_class`);
a candidate class is a :class:`RemoteClass`, a function a :class:`RemoteFunction`, a list, dict or set read
from a module a :class:`LiveHandle`; a candidate's subclass of an immutable builtin is that builtin's value,
its handle behind it (:class:`_ValueMirror`).

A spoke of the oracle side: a handle holds the client it was given and asks through it (its requests, the
classes the oracle named, decoding an answer); this module imports only the protocol and the errors.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import codec
from ..protocol import DELATTR, DUNDER, GETATTR, MAX_BATCH, NEXT, SETATTR, SIGNATURE, UNPICKLE
from .errors import PACKAGE, NotCrossable, WorkerCrashed, candidate_error, named

if TYPE_CHECKING:
    from .client import Client

# The client of this process, for what no handle carries (unpickling a candidate object): set by the hub.
def _no_client() -> Client | None:
    return None


current_client: Callable[[], Client | None] = _no_client

_REPR_CALLERS = ("reprlib", "_pytest.", "pprint", "hypothesis.", "unittest.", "difflib")


@named
class Handle:
    """A candidate object that stays in the worker; every operation is a request.

    Its class is a local subclass named like the candidate's (``type(h).__name__`` reads as in plain
    Python); ``isinstance`` against the candidate's classes works through :class:`RemoteClass`."""

    __slots__ = ("_vg_client", "_vg_desc", "_vg_gen", "_vg_buffer", "_vg_drain", "_vg_mark", "_vg_asked",
                 "__weakref__")

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
        object.__setattr__(self, "_vg_asked", None)

    def _vg_target(self) -> dict[str, Any]:
        target = self._vg_client.target(self._vg_desc, self._vg_gen)
        if not target:
            raise WorkerCrashed("this candidate object belonged to a worker that has since been restarted")
        return target

    def _vg_op(self, name: str, *arg: Any) -> Any:
        object.__setattr__(self, "_vg_mark", None)
        message: dict[str, Any] = {"op": DUNDER, "obj": self._vg_target(), "name": name}
        if arg:
            message["arg"] = self._vg_client.encode(arg[0])
        if name in _overridden(self):  # reached by super() from an oracle class that defines it: the candidate's
            message["inh"] = True
        return self._vg_client.request(message)

    def _vg_type(self) -> str:
        names = self._vg_desc.get("t") or [["?", "?"]]
        return ".".join(names[0])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_vg_"):
            raise AttributeError(name)
        if name == "__signature__" and self._vg_desc.get("k") in ("fn", "cls"):
            # What the worker's inspect.signature() says of the candidate's callable (toolz's Compose has a
            # __signature__ of its own): the oracle's inspect.signature() stops here and returns it.
            return self._vg_client.request({"op": SIGNATURE, "obj": self._vg_target()})
        if name.startswith("__") and name.endswith("__") and name not in _OPEN and \
                not (name in _FUNCTION_PARTS and self._vg_desc.get("k") == "fn"):
            raise AttributeError(name)
        value = self._vg_client.request({"op": GETATTR, "obj": self._vg_target(), "name": name})
        if self._vg_client.enum_alias(value, name, self._vg_desc):
            # HIGH = "low" beside LOW = "low": the oracle means two cases, the candidate collapsed them.
            raise candidate_error(TypeError(
                f"{self._vg_desc['t'][0][1]}.{name} is an alias of {self._vg_desc['t'][0][1]}.{value.name} in the "
                "candidate's enum (a member whose value repeats another's): the oracle tells them apart"))
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        self._vg_client.request({"op": SETATTR, "obj": self._vg_target(), "name": name,
                                 "value": self._vg_client.encode(value)})

    def __delattr__(self, name: str) -> None:
        self._vg_client.request({"op": DELATTR, "obj": self._vg_target(), "name": name})

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
            raise candidate_error(TypeError(f"{name} of the candidate's {self._vg_type()} returned "
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
            raise candidate_error(TypeError(f"__format__ of the candidate's {self._vg_type()} returned "
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
        truth = self._vg_checked("__bool__", bool)
        asked = self._vg_asked
        if asked is not None and truth:  # the answer of an ==, judged true: the same question with a probe
            object.__setattr__(self, "_vg_asked", None)
            probe_equal(asked[0], asked[1], asked[2], truthy=True)
        return truth

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
        return self._vg_checked("__hash__", int)  # the candidate's own hash

    def __contains__(self, item: Any) -> bool:
        found = self._vg_checked("__contains__", bool, item)
        if found and not isinstance(item, Handle):
            probe_equal(self, "__contains__", item)
        return found

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
        answer, generation = self._vg_client.roundtrip({"op": NEXT, "obj": self._vg_target(), "n": n})
        client = self._vg_client
        if "ok" not in answer:
            return client.result(answer, generation)  # raises the candidate's exception
        try:
            items = [client.decode(t, generation) for t in answer["ok"]]
            client.note_text(*items)
            if answer.get("end"):
                items.append(_End(StopIteration()))
            elif "then" in answer:
                items.append(_End(client.exception_from(answer["then"], generation, op="__next__")))
        except (codec.ProtocolError, KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
            raise client.crash(f"the worker sent a malformed answer ({type(err).__name__}: {err})") from None
        if not items:
            raise client.crash("the worker answered next with nothing")
        client.swallowed(None)  # an assertion of a callback that candidate code swallowed is raised here
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
        message: dict[str, Any] = {"op": DUNDER, "obj": self._vg_target(), "name": "__exit__", "exc": None}
        theirs = exc is not None and getattr(exc, "__verdict_gate_origin__", None) == "candidate"
        if exc is not None:
            message["exc"] = {"h": getattr(exc, "__verdict_gate_raised__", None)} if theirs else \
                self._vg_client.exception_body(exc)
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
            raise candidate_error(TypeError("pickling a candidate object gave no bytes"))
        return (_unpickle, (data,))

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        value = self._vg_op("__vars__")
        if type(value) is not dict:
            raise candidate_error(TypeError(f"vars() of the candidate's {self._vg_type()} is not a dict"))
        return value

    def _vg_peer(self, other: Any) -> bool:
        return isinstance(other, Handle) and other._vg_client is self._vg_client

    def _vg_compare(self, name: str, other: Any) -> Any:
        """The candidate's own answer, as in one process (docs/design.md §8.1, "Operators are the candidate's
        answer"); an equality the oracle's own code judges by is probed (:func:`probe_equal`)."""
        if isinstance(other, Handle) and not self._vg_peer(other):
            return NotImplemented
        answer = self._vg_op(name, other)
        if name in ("__eq__", "__ne__") and not isinstance(other, Handle):
            if answer is (name == "__eq__"):
                probe_equal(self, name, other)
            elif isinstance(answer, Handle):  # its truth decides: probed if the oracle's code asks for it
                object.__setattr__(answer, "_vg_asked", (self, name, other))
        return answer

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


@named
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


@named
class _InstanceAttr:
    """``__doc__`` of a handle class: the class's own for ``type(h).__doc__``, the candidate object's (read from the
    worker) for ``h.__doc__`` (a curry's, a wrapper's)."""

    def __init__(self, name: str, own: Any) -> None:
        self.name, self.own = name, own

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self.own
        return instance._vg_client.request({"op": GETATTR, "obj": instance._vg_target(), "name": self.name})


@named
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


@named
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
    client = current_client()
    if client is None:
        raise NotCrossable("a pickled candidate object can only be unpickled while its worker runs")
    return client.request({"op": UNPICKLE, "arg": client.encode(data)})


# Pickle names a function by its module: a handle's pickle holds _verdict_gate_boundary.proxy._unpickle, as before.
_unpickle.__module__ = PACKAGE


@named
class _ValueMirror:
    """Mixin of the local class of a candidate's subclass of an immutable builtin (``tuple``, ``str``, ``int``,
    ``float``, ``bytes``, ``frozenset``): the instance *is* the builtin value (``isinstance(key, tuple)``,
    hashing and equality by value); what the subclass adds (a method, an attribute, an operator it
    overrides) is asked of the candidate's object, its comparisons probed as any handle's."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_vg_") or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        handle = mirror_handle(self)
        if handle is None:
            raise AttributeError(name)
        return getattr(handle, name)

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        """The candidate object's ``vars()`` (its handle, kept in this instance's own namespace, is the boundary's:
        never shown)."""
        handle = mirror_handle(self)
        return handle.__dict__ if handle is not None else {}

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickled as the candidate's object, in the worker (its class is the candidate's, found there by name);
        with no worker object behind it, as the builtin value."""
        handle = mirror_handle(self)
        if handle is not None:
            return handle.__reduce_ex__(protocol)
        value = builtin_value(self)
        return (type(value), (value,))


def builtin_value(obj: _ValueMirror) -> Any:
    """The plain builtin value of a mirror (read with the builtin's own methods, never the subclass's)."""
    base = next(t for t in VALUE_BUILTINS.values() if isinstance(obj, t))
    return base(obj) if base is not str else str.__str__(obj)


VALUE_BUILTINS = {t.__name__: t for t in (tuple, str, int, float, bytes, frozenset)}
VALUE_CLASSES_SEEN: dict[Any, type] = {}
_COMPARING = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__"})


def mirror_handle(obj: Any) -> Handle | None:
    """The handle of the candidate's own object behind a builtin value (it lives as long as the value does)."""
    try:  # the instance's own namespace, not its __dict__ (the candidate object's)
        held = object.__getattribute__(obj, "_vg_handle")
    except AttributeError:
        return None
    if not isinstance(held, Handle) or held._vg_gen != held._vg_client.generation:
        return None
    return held


def forward(name: str, builtin: type) -> Any:
    fallback = getattr(builtin, name, lambda *_args: NotImplemented)

    def op(self: Any, *args: Any) -> Any:
        handle = mirror_handle(self)
        if handle is None:
            return fallback(self, *args)
        if name == "__hash__":
            return handle._vg_checked("__hash__", int)
        if name in _COMPARING:  # the candidate's answer, probed where the oracle judges by it
            return Handle._vg_compare(handle, name, *args)
        if name in ("__repr__", "__str__"):
            return Handle.__repr__(handle) if name == "__repr__" else Handle.__str__(handle)
        return handle._vg_op(name, *args)

    op.__name__ = name
    return op


# --- lies told in answers (docs/design.md §8.1, "Operators are the candidate's answer") ---------------------


@named
class LyingEquality(AssertionError):
    """A candidate object answered "equal" (or "contains") both for an oracle value and for a fresh value that
    differs from it: a lie the oracle's judgement must not take, raised with origin ``candidate``."""


LyingEquality.__module__, LyingEquality.__qualname__ = "verdict_gate", "LyingEquality"
_PROBE_DEPTH = 12  # frames looked through for the pack's own code


def _judged(client: Client) -> bool:
    """Whether the oracle's own code asked (a frame of the pack's within the last few: an ``assert`` in a test,
    ``assertEqual`` called from one), rather than a library's loop (``sorted``, a dict lookup)."""
    frame: types.FrameType | None = sys._getframe(2)
    roots = tuple(client.oracle_roots)
    for _ in range(_PROBE_DEPTH):
        if frame is None or not roots:
            return False
        if frame.f_code.co_filename.startswith(roots):
            return True
        frame = frame.f_back
    return False


@named
class _Probe:
    """A value no candidate object can honestly equal: an oracle object of its own, unknown to candidate code."""

    __slots__ = ("__weakref__",)

    def __repr__(self) -> str:
        return "<verdict-gate probe>"


def _differing(value: Any) -> Any:
    """A fresh value of ``value``'s type that differs from it, far enough that no honest tolerance equals both."""
    t = type(value)
    if t is bool:
        return not value
    if t is int:
        return value + 1_000_003
    if t is float:
        return -3.0 * value - 1e9 if value == value and abs(value) < 1e300 else 0.5
    if t is str:
        return value + "\u2603vg"
    if t is bytes:
        return value + b"\x00vg\x00"
    if t in (tuple, list):
        return t((*value, _Probe()))
    if t is dict:
        return {**value, _Probe(): 1}
    if t in (set, frozenset):
        return t((*value, _Probe()))
    return _Probe()


def probe_equal(handle: Handle, name: str, value: Any, truthy: bool = False) -> None:
    """Ask ``handle`` the same question about a value that differs from ``value``: an object equal to both (or
    holding both, for ``__contains__``) lies, and the oracle's judgement fails with origin ``candidate``
    (:class:`LyingEquality`). Only where the oracle's own code asks (:func:`_judged`)."""
    if not _judged(handle._vg_client):
        return
    try:
        again = handle._vg_op(name, _differing(value))
    except Exception as exc:  # the question about the fresh value raised (semver's Version(**a_dict)): no answer,
        if getattr(exc, "__verdict_gate_origin__", None) != "candidate":  # no lie; the test goes on as it would
            raise
        return
    lied = bool(again) if truthy or isinstance(again, Handle) else again is (name != "__ne__")
    if lied:
        what = {"__eq__": "equal to", "__ne__": "not unequal to", "__contains__": "holding"}[name]
        raise candidate_error(LyingEquality(
            f"lying_equality: the candidate's {handle._vg_type()} is {what} both {_short(value)} and a fresh value "
            f"that differs from it ({name} answers yes to anything)"))


# Special attributes a handle answers from the worker: names, and what wraps what. Others (``__reduce_ex__``,
# ``__deepcopy__`` …) are protocols Python looks up on the class, answered there or not at all.
_OPEN = frozenset({"__name__", "__qualname__", "__wrapped__", "__self__", "__func__"})
# A candidate function's parts, for introspection (inspect.iscoroutinefunction reads ``__code__.co_flags``): handles
# to the candidate's own objects, never code this process could run (exec of a handle is a TypeError).
_FUNCTION_PARTS = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__annotations__", "__closure__",
                             "__globals__", "__dict__", "__type_params__"})


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:77] + "..."


def _overridden(handle: Any) -> Any:
    """The names the oracle class of ``handle`` (if any) defines itself: a special method of those reached
    through the proxy class is ``super()``'s, the candidate's implementation."""
    for klass in type(handle).__mro__:
        over = klass.__dict__.get("_vg_over")
        if over is not None:
            return over
    return ()


# The special methods a handle's class has only where the candidate's class defines them (the worker's
# ``values.CAPS``): taken off Handle here, put on each proxy class as its descriptor says.
CAP_NAMES = frozenset({
    "__call__", "__iter__", "__next__", "__len__", "__getitem__", "__setitem__", "__delitem__", "__contains__",
    "__enter__", "__exit__", "__get__", "__set_name__", "__bool__", "__index__", "__int__", "__float__",
    "__complex__", "__round__", "__reversed__", "__length_hint__", "__neg__", "__pos__", "__abs__", "__invert__",
    "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__", "__and__",
    "__or__", "__xor__", "__lshift__", "__rshift__", "__divmod__", "__radd__", "__rsub__", "__rmul__",
    "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__", "__rmatmul__", "__rand__", "__ror__", "__rxor__",
    "__rlshift__", "__rrshift__", "__rdivmod__", "__iadd__", "__isub__", "__imul__", "__ior__", "__iand__",
    "__ixor__", "__lt__", "__le__", "__gt__", "__ge__"})
_OWN_METHODS = type.__dict__["__dict__"].__get__(Handle)  # Handle's own namespace (its __dict__ is a handle's)
CAP_METHODS: dict[str, Any] = {name: _OWN_METHODS[name] for name in CAP_NAMES if name in _OWN_METHODS}
for _name in CAP_METHODS:
    if _name not in ("__lt__", "__le__", "__gt__", "__ge__"):
        delattr(Handle, _name)
for _name in ("__len__", "__iter__", "__getitem__", "__setitem__", "__delitem__", "__contains__", "__bool__",
              "__ior__", "__iadd__", "__or__", "__and__", "__sub__", "__add__", "__mul__"):
    setattr(LiveHandle, _name, CAP_METHODS[_name])  # a list, dict or set of the candidate's, held live
for _name in ("__call__", "__get__"):
    setattr(RemoteFunction, _name, CAP_METHODS[_name])
