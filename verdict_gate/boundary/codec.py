"""The plain-data codec between the oracle process and the candidate worker (docs/design.md §8.1).

Part of the boundary package: standard library only, loaded by path in the oracle process and the
worker (:mod:`.load`), so a candidate that *is* verdict-gate never shadows it and it never shadows
the candidate.

Wire format: a frame is a 4-byte big-endian length, then that many bytes of UTF-8 JSON.
Never ``pickle``, ``marshal`` or ``eval``: what the worker sends is untrusted input. A frame
longer than the reader's cap, a truncated frame, or bytes that are not JSON raise
:class:`ProtocolError`; the oracle side turns that into a ``crashed`` property, never a pass.

Values (both directions) are JSON trees:

- ``None``, ``bool``, ``int``, ``float`` (finite), ``str`` and ``list`` of *exactly* those
  types travel as plain JSON. A subclass of any builtin never travels as that builtin.
- Everything else is a one-key object whose key is a tag (see :func:`decode`): tuples, dicts, sets,
  bytes, special floats, ``complex``, ``Decimal``, ``Fraction``, ``datetime`` types, ``UUID``,
  paths, big ints, ``range``, ``slice``, ``Ellipsis``, ``NotImplemented``, ``OrderedDict``, ``Counter``,
  ``defaultdict``, ``deque``, ``SimpleNamespace``, ``argparse.Namespace``, ``inspect.Signature`` (each rebuilt
  as exactly that type; a signature's defaults and annotations are values like any other); records
  (dataclass, named tuple, attrs instance, enum member) as their class name plus fields; exception classes
  by their method resolution order; a list, dict, set or bytearray both sides keep in step as a link (``lk``: its id, or
  its id and value when it is first handed over); a candidate object as a handle (``h``: an id in the
  worker's table, optionally with a re-resolvable reference ``[module, qualname]``); an oracle object as a
  reference (``o``: an id in the oracle's table, with the operations it answers).

:func:`encode` is used by both sides with a ``fallback`` for objects it cannot carry by value
(the worker makes handles; the oracle sends its handles back or refuses). :func:`decode` takes a
``make`` callback that builds the local object for each non-plain tag, so this module holds no
oracle-side classes.
"""

from __future__ import annotations

import base64
import collections
import datetime as _dt
import decimal
import fractions
import json
import math
import os
import pathlib
import select
import struct
import sys
import time
import types
import uuid
from collections.abc import Callable
from typing import Any

MAX_MESSAGE = 16 * 1024 * 1024  # bytes a frame may carry (oracle ← worker); larger is a crash
MAX_DEPTH = 1000  # nesting a value may have (a parser's nested arrays: tomli's tests nest 470 deep)
_ROOM = 4 * MAX_DEPTH + 200  # frames a value at the depth cap may take to encode, decode, dump or parse
MAX_NODES = 1_000_000  # JSON nodes one encoded value may have
_HEADER = struct.Struct(">I")
# One encoder for every frame: json.dumps with options builds a new one per call.
_DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
_BIG = 1 << 63  # ints at or beyond this travel as hex ({"I": …}): JSON ints past 4300 digits fail to parse


class ProtocolError(Exception):
    """A frame or value the other side sent is malformed, truncated or over a cap."""


class Unencodable(TypeError):
    """A value that cannot cross the boundary (the fallback refused it)."""


# --- framing --------------------------------------------------------------------------------------


def _roomy(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, again with room on the stack if a deeply nested value ran out of it (the recursion
    limit raised by :data:`_ROOM` for that call only): the common case pays nothing."""
    try:
        return fn(*args)
    except RecursionError:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(old + _ROOM)
        try:
            return fn(*args)
        finally:
            sys.setrecursionlimit(old)


def dumps(tree: Any) -> str:
    """The JSON text of an encoded value, as a frame would carry it (to tell whether a state changed)."""
    return str(_roomy(_DUMPS, tree))


def write_frame(fd: int, message: Any) -> None:
    """Write one frame holding ``message`` (a JSON value) to the file descriptor ``fd``.

    Raises:
        OSError: the pipe is closed (the other side is gone).
        ValueError: ``message`` is not JSON (a NaN slipped through: a bug of the encoder).
    """
    data = dumps(message).encode("utf-8", "surrogatepass")
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class Reader:
    """Frames from one pipe, read with as few system calls as the pipe allows.

    One ``os.read`` of up to 64 KiB usually takes a whole small frame, header and body, where reading
    the header and then the body takes two. What is read past a frame stays buffered for the next.

    Args:
        fd: a readable file descriptor (a pipe).
        spin_s: seconds to poll the pipe before sleeping on it, in every wait. On a core of its own,
            a process that polls sees the other side's frame microseconds after it is written, where
            waking a sleeping one takes tens (docs/design.md §11); ``0`` sleeps at once. Polling sets
            the descriptor non-blocking.
        spin_budget_s: seconds of polling in all, after which every wait sleeps (polling is CPU time,
            which a worker's ``RLIMIT_CPU`` counts); ``None``: no bound.
    """

    __slots__ = ("fd", "spin_s", "buf", "budget", "nonblocking")

    def __init__(self, fd: int, spin_s: float = 0.0, spin_budget_s: float | None = None) -> None:
        self.fd, self.buf = fd, bytearray()
        self.spin_s, self.nonblocking = 0.0, False
        self.budget: float | None = None
        self.poll(spin_s, spin_budget_s)

    def poll(self, spin_s: float, spin_budget_s: float | None = None) -> None:
        """From now on, poll for ``spin_s`` seconds before each sleep, ``spin_budget_s`` in all (see the class)."""
        self.spin_s, self.budget = max(0.0, spin_s), spin_budget_s
        if self.spin_s and not self.nonblocking:
            os.set_blocking(self.fd, False)
            self.nonblocking = True

    def _read(self, size: int, timeout: float | None = None) -> bytes | None:
        """At most ``size`` bytes (``b""`` at end of file); ``None`` when ``timeout`` seconds passed first."""
        if self.spin_s:
            start = now = time.perf_counter()
            deadline = start + self.spin_s
            try:
                while now < deadline:
                    try:
                        return os.read(self.fd, size)
                    except BlockingIOError:
                        now = time.perf_counter()
            finally:
                if self.budget is not None:
                    self.budget -= time.perf_counter() - start
                    if self.budget <= 0:
                        self.spin_s = 0.0
        while True:
            if (timeout is not None or self.nonblocking) and not select.select([self.fd], [], [], timeout)[0]:
                return None
            try:
                return os.read(self.fd, size)
            except BlockingIOError:  # woken without data: wait again
                continue

    def ready(self, timeout: float | None) -> bool:
        """Whether a frame's first bytes are here within ``timeout`` seconds (``None``: wait for ever).

        Raises:
            ProtocolError: the other side closed the pipe.
        """
        if self.buf:
            return True
        chunk = self._read(1 << 16, timeout)
        if chunk is None:
            return False
        if not chunk:
            raise ProtocolError("the other side is gone")
        self.buf += chunk
        return True

    def _fill(self, size: int, deadline: float | None) -> None:
        while len(self.buf) < size:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            chunk = self._read(min(max(size - len(self.buf), 1 << 16), 1 << 20), left)
            if chunk is None:
                raise ProtocolError(f"a frame stopped after {len(self.buf)} of its bytes")
            if not chunk:
                raise ProtocolError("the other side closed the pipe mid-frame" if self.buf else
                                    "the other side is gone")
            self.buf += chunk

    def frame(self, cap: int = MAX_MESSAGE, timeout: float | None = None) -> Any:
        """Read one frame and parse its JSON.

        Args:
            cap: the largest frame accepted, in bytes.
            timeout: seconds the whole frame may take to arrive (``None``: no bound), so a sender
                that writes part of a frame and stops cannot hold the reader.
        Raises:
            ProtocolError: end of file, the timeout, a frame longer than ``cap``, or bytes that are
                not UTF-8 JSON.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        self._fill(_HEADER.size, deadline)
        (size,) = _HEADER.unpack_from(self.buf)
        if size > cap:
            raise ProtocolError(f"a message of {size} bytes is over the {cap}-byte cap")
        end = _HEADER.size + size
        self._fill(end, deadline)
        body = bytes(self.buf[_HEADER.size:end])
        del self.buf[:end]
        return parse(body)


def parse(body: bytes) -> Any:
    """The JSON value of one frame's body.

    Raises:
        ProtocolError: bytes that are not UTF-8 JSON.
    """
    try:
        return _roomy(json.loads, body.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"a message is not valid JSON ({type(exc).__name__})") from None


# --- encoding -------------------------------------------------------------------------------------


def qualified(cls: type) -> list[str]:
    """``[module, qualname]`` of a class, read with ``type.__dict__`` (a metaclass cannot lie)."""
    module = type.__dict__["__module__"].__get__(cls)
    qualname = type.__dict__["__qualname__"].__get__(cls)
    return [module if isinstance(module, str) else "?", qualname if isinstance(qualname, str) else "?"]


def mro_names(cls: type, limit: int = 32) -> list[list[str]]:
    """The class and its bases in method resolution order, as ``[module, qualname]`` pairs."""
    return [qualified(c) for c in type.__dict__["__mro__"].__get__(cls)[:limit]]


def _float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"F": "nan" if value != value else ("inf" if value > 0 else "-inf")}


class _Budget:
    __slots__ = ("nodes", "links", "top", "shared", "labels", "opening", "fresh", "unfolding")

    def __init__(self, links: dict[int, int] | None = None, top: bool = True,
                 shared: set[int] | None = None, fresh: set[int] | None = None) -> None:
        self.nodes = 0
        self.links, self.top = links, top  # linked containers (id → link id); whether the top value may be one
        self.fresh = fresh  # ids of linked containers the other side does not hold yet: sent with their state
        self.unfolding: int | None = None  # the id of the fresh link whose items are encoded next
        self.shared = shared  # ids of containers that occur more than once in the value (or in a cycle)
        self.labels: dict[int, int] = {}  # id → label, for those already encoded
        self.opening: int | None = None  # the id of the shared object whose items are encoded next


_CONTAINERS = (list, tuple, dict, set, frozenset)


def _sharing(value: Any) -> set[int]:
    """The ids of the containers that occur more than once in ``value`` (the same list twice in a list, a
    list that holds itself): they travel once, labelled, so the other side gets one object too (Python
    semantics: ``xs * 3`` repeats the same objects; ``id``, ``is`` and in-place changes see that)."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [value]
    walked = 0
    while stack and walked < MAX_NODES:
        v = stack.pop()
        walked += 1
        t = type(v)
        if t not in _CONTAINERS:
            continue
        if id(v) in seen:
            shared.add(id(v))
            continue
        seen.add(id(v))
        if t is dict:
            stack.extend(v.keys())
            stack.extend(v.values())
        else:
            stack.extend(v)
    return shared


Fallback = Callable[[Any], Any]


def encode(value: Any, fallback: Fallback, *, records: Callable[[Any], Any] | None = None,
           links: dict[int, int] | None = None, top: bool = True, fresh: set[int] | None = None) -> Any:
    """Encode ``value`` as a JSON tree (see the module docstring for the tags).

    Args:
        value: any object.
        fallback: called for an object that is not carried by value; returns its JSON form
            (a handle) or raises :class:`Unencodable`.
        records: called first for non-builtin objects; returns a JSON form for a record
            (dataclass, named tuple, attrs, enum, exception class) or ``None`` to use ``fallback``.
        links: ``id(container) → link id`` of the lists, dicts, sets and bytearrays both sides keep in step
            (a container the candidate holds on to): each travels as ``{"lk": link id}``, not by value.
        top: whether ``value`` itself may travel as a link (not when its state is what is sent).
        fresh: ids of containers in ``links`` the other side does not hold yet: the first occurrence of each
            travels as ``{"lk": [link id, state]}`` (and the id is taken out of the set), later ones as
            ``{"lk": link id}``.
    Raises:
        Unencodable: from ``fallback``, or a value nested deeper than :data:`MAX_DEPTH` or with
            more than :data:`MAX_NODES` nodes.
    """
    t = type(value)
    if t is list and len(value) < MAX_NODES and not links and _scalars(value):
        return value[:]  # the common case (a call's arguments), without a walk of its own
    shared = _sharing(value) if t in _CONTAINERS else None
    return _roomy(lambda: _enc(value, fallback, records, 0,
                               _Budget(links, top, set(shared) if shared else None, fresh)))


def _scalars(values: list[Any]) -> bool:
    """Whether every item travels as itself: ``None``, ``bool``, ``str``, an ``int`` within JSON's safe
    range or a finite ``float`` (exact types, as in :func:`_enc`)."""
    for v in values:
        t = type(v)
        if t is int:
            if not -_BIG < v < _BIG:
                return False
        elif t is float:
            if not math.isfinite(v):
                return False
        elif not (t is str or t is bool or v is None):
            return False
    return True


def _enc(v: Any, fb: Fallback, rec: Callable[[Any], Any] | None, depth: int, budget: _Budget) -> Any:
    budget.nodes += 1
    if budget.nodes > MAX_NODES or depth > MAX_DEPTH:
        raise Unencodable(f"a value nested deeper than {MAX_DEPTH} or larger than {MAX_NODES} items")
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v if -_BIG < v < _BIG else {"I": hex(v)}
    if t is float:
        return _float(v)
    if budget.links and (t is list or t is dict or t is set or t is bytearray) and id(v) in budget.links \
            and (depth or budget.top):
        linked = _as_link(v, fb, rec, depth, budget)
        if linked is not _ITEMS:
            return linked
    if budget.shared is not None:
        labelled = _as_label(v, fb, rec, depth, budget)
        if labelled is not _ITEMS:
            return labelled
    d = depth + 1
    if t is list:
        return [_enc(x, fb, rec, d, budget) for x in v]
    if t is tuple:
        return {"t": [_enc(x, fb, rec, d, budget) for x in v]}
    if t is dict:
        return {"d": [[_enc(k, fb, rec, d, budget), _enc(x, fb, rec, d, budget)] for k, x in v.items()]}
    encoder = _ENCODER_OF.get(id(t))  # by identity: a metaclass's own __hash__ or __eq__ never runs
    if encoder is not None:
        return encoder(v, fb, rec, d, budget)
    if t.__name__ == "Namespace" and t.__module__ == "argparse":
        return {"ans": [[_enc(k, fb, rec, d, budget), _enc(x, fb, rec, d, budget)] for k, x in vars(v).items()]}
    if t.__name__ == "Signature" and t.__module__ == "inspect" and t is _inspect_type("Signature"):
        return {"sg": [[[p.name, int(p.kind), _maybe(p.default, p.empty, fb, rec, d, budget),
                         _maybe(p.annotation, p.empty, fb, rec, d, budget)] for p in v.parameters.values()],
                       _maybe(v.return_annotation, v.empty, fb, rec, d, budget)]}
    if rec is not None:
        got = rec(v)
        if got is not None:
            return got
    return fb(v)


_ITEMS = object()  # what :func:`_as_link` and :func:`_as_label` say when the value's own items are encoded next


def _as_link(v: Any, fb: Fallback, rec: Callable[[Any], Any] | None, depth: int, budget: _Budget) -> Any:
    """A linked container (``v``, in ``budget.links``): its link id, or the first time the other side gets it,
    its id and state; :data:`_ITEMS` when it is that state being encoded now."""
    if budget.unfolding == id(v):
        budget.unfolding = None  # the fresh link itself: its items follow
        return _ITEMS
    if budget.fresh and id(v) in budget.fresh:
        budget.fresh.discard(id(v))
        if budget.shared is not None:
            budget.shared.discard(id(v))  # a later occurrence is the link, never a label
        budget.unfolding = id(v)
        return {"lk": [budget.links[id(v)], _enc(v, fb, rec, depth, budget)]}  # type: ignore[index]
    return {"lk": budget.links[id(v)]}  # type: ignore[index]


def _as_label(v: Any, fb: Fallback, rec: Callable[[Any], Any] | None, depth: int, budget: _Budget) -> Any:
    """``v`` where containers occur more than once in the value: a reference to its label when it was encoded
    already (or is being encoded: a cycle), labelled the first time; :data:`_ITEMS` when its items are encoded
    next (or it occurs once)."""
    assert budget.shared is not None
    if budget.opening == id(v):
        budget.opening = None  # the labelled object itself: its items follow
        return _ITEMS
    if id(v) in budget.labels:
        return {"@": budget.labels[id(v)]}  # the same object again (or the one being encoded: a cycle)
    if id(v) in budget.shared:
        label = budget.labels[id(v)] = len(budget.labels)
        budget.opening = id(v)
        return {"=": [label, _enc(v, fb, rec, depth, budget)]}
    return _ITEMS


def _pairs(tag: str) -> Callable[..., Any]:
    def encode(v: Any, fb: Fallback, rec: Callable[[Any], Any] | None, d: int, budget: _Budget) -> Any:
        return {tag: [[_enc(k, fb, rec, d, budget), _enc(x, fb, rec, d, budget)] for k, x in v.items()]}

    return encode


def _items(tag: str) -> Callable[..., Any]:
    def encode(v: Any, fb: Fallback, rec: Callable[[Any], Any] | None, d: int, budget: _Budget) -> Any:
        return {tag: [_enc(x, fb, rec, d, budget) for x in v]}

    return encode


def _defaultdict(v: Any, fb: Fallback, rec: Callable[[Any], Any] | None, d: int, budget: _Budget) -> Any:
    factory = v.default_factory
    return {"dd": [None if factory is None else _enc(factory, fb, rec, d, budget),
                   [[_enc(k, fb, rec, d, budget), _enc(x, fb, rec, d, budget)] for k, x in v.items()]]}


# Every other exact type carried by value (besides the scalars, list, tuple and dict), and its tag.
_ENCODERS: dict[type, Callable[..., Any]] = {
    set: _items("s"), frozenset: _items("fs"),
    bytes: lambda v, *_: {"b": base64.b64encode(v).decode("ascii")},
    bytearray: lambda v, *_: {"ba": base64.b64encode(v).decode("ascii")},
    complex: lambda v, *_: {"c": [_float(v.real), _float(v.imag)]},
    decimal.Decimal: lambda v, *_: {"D": str(v)},
    fractions.Fraction: lambda v, fb, rec, d, budget: {"Q": [_enc(v.numerator, fb, rec, d, budget),
                                                             _enc(v.denominator, fb, rec, d, budget)]},
    _dt.datetime: lambda v, *_: {"dt": v.isoformat()}, _dt.date: lambda v, *_: {"da": v.isoformat()},
    _dt.time: lambda v, *_: {"ti": v.isoformat()},
    _dt.timedelta: lambda v, *_: {"td": [v.days, v.seconds, v.microseconds]},
    uuid.UUID: lambda v, *_: {"u": v.hex},
    pathlib.PurePosixPath: lambda v, *_: {"p": str(v)}, pathlib.PosixPath: lambda v, *_: {"P": str(v)},
    range: lambda v, *_: {"rg": [v.start, v.stop, v.step]},
    slice: lambda v, fb, rec, d, budget: {"sl": [_enc(v.start, fb, rec, d, budget), _enc(v.stop, fb, rec, d, budget),
                                                 _enc(v.step, fb, rec, d, budget)]},
    type(Ellipsis): lambda v, *_: {"E": None},
    # an operator's "I cannot answer": the other side then tries the reflected one
    type(NotImplemented): lambda v, *_: {"NI": None},
    collections.OrderedDict: _pairs("od"), collections.Counter: _pairs("ct"),
    collections.defaultdict: _defaultdict,
    collections.deque: lambda v, fb, rec, d, budget: {"dq": [[_enc(x, fb, rec, d, budget) for x in v], v.maxlen]},
    types.SimpleNamespace: lambda v, fb, rec, d, budget: _pairs("ns")(vars(v), fb, rec, d, budget),
}
_ENCODER_OF = {id(t): encoder for t, encoder in _ENCODERS.items()}


def _inspect_type(name: str) -> Any:
    """``inspect.<name>`` where ``inspect`` is imported already (a ``Signature`` exists only then)."""
    return getattr(sys.modules.get("inspect"), name, None)


def _maybe(value: Any, empty: Any, fb: Fallback, rec: Callable[[Any], Any] | None, depth: int,
           budget: _Budget) -> list[Any]:
    """``[]`` for ``inspect``'s "empty" marker (no default, no annotation), else ``[encoded value]``."""
    return [] if value is empty else [_enc(value, fb, rec, depth, budget)]


def encode_fields(pairs: list[tuple[str, Any]], fallback: Fallback, records: Callable[[Any], Any] | None) -> Any:
    """``[[name, encoded value], …]`` for a record's fields (shares the node budget rules of :func:`encode`)."""
    budget = _Budget()
    return [[name, _enc(value, fallback, records, 1, budget)] for name, value in pairs]


# --- decoding -------------------------------------------------------------------------------------

Make = Callable[[str, Any], Any]


def _str(x: Any) -> str:
    if type(x) is not str:
        raise ProtocolError("expected a string")
    return x


def _int(x: Any) -> int:
    if type(x) is not int:
        raise ProtocolError("expected an int")
    return x


def _special_float(x: Any) -> float:
    if isinstance(x, dict) and set(x) == {"F"} and x["F"] in ("nan", "inf", "-inf"):
        return float(x["F"])
    if type(x) in (int, float):
        return float(x)
    raise ProtocolError("expected a float")


def decode(tree: Any, make: Make) -> Any:
    """Rebuild a value from its JSON tree; ``make(tag, payload)`` builds records, handles and
    exception classes (the caller's local objects).

    Raises:
        ProtocolError: an unknown tag, or a payload of the wrong shape.
    """
    return _roomy(lambda: _dec(tree, make, {}))


def _labelled(p: Any, make: Make, labels: dict[int, Any]) -> Any:
    """A container that occurs more than once: a list, dict or set is made empty and registered before its
    items (so that a cycle comes back as one), a tuple or frozenset after them."""
    label, inner = p
    if type(label) is not int or label in labels:
        raise ProtocolError("a malformed label")
    if type(inner) is list:
        out: Any = []
        labels[label] = out
        out.extend(_dec(i, make, labels) for i in inner)
        return out
    if type(inner) is dict and len(inner) == 1 and next(iter(inner)) in ("d", "s"):
        ((tag, items),) = inner.items()
        out = {} if tag == "d" else set()
        labels[label] = out
        if tag == "d":
            out.update((_dec(k, make, labels), _dec(v, make, labels)) for k, v in items)
        else:
            out.update(_dec(i, make, labels) for i in items)
        return out
    labels[label] = _UNFINISHED
    value = _dec(inner, make, labels)
    labels[label] = value
    return value


_UNFINISHED = object()


def _dec(x: Any, make: Make, labels: dict[int, Any]) -> Any:
    t = type(x)
    if x is None or t is bool or t is int or t is float or t is str:
        return x
    if t is list:
        return [_dec(i, make, labels) for i in x]
    if t is not dict or len(x) != 1:
        raise ProtocolError("a value of an unknown shape")
    ((tag, p),) = x.items()
    if tag == "=" or tag == "@":
        if tag == "=" and type(p) is list and len(p) == 2:
            return _labelled(p, make, labels)
        found = labels.get(p) if type(p) is int else None
        if found is None or found is _UNFINISHED:
            raise ProtocolError("a reference to a value not yet (or never) sent")
        return found
    decoder = _DECODERS.get(tag)
    if decoder is not None:
        try:
            return decoder(p, make, labels)
        except ProtocolError:
            raise
        except (TypeError, ValueError, IndexError, KeyError, decimal.DecimalException, ArithmeticError) as exc:
            raise ProtocolError(f"a malformed {tag!r} value ({type(exc).__name__})") from None
    if tag in ("r", "en", "x", "xv", "h", "mod", "o", "lk", "bv"):
        return make(tag, p)
    raise ProtocolError(f"an unknown tag {tag[:20]!r}")


def _pairs_of(p: Any, make: Make, labels: dict[int, Any]) -> Any:
    return ((_dec(k, make, labels), _dec(v, make, labels)) for k, v in p)


def _only_none(tag: str, value: Any) -> Callable[[Any, Make, dict[int, Any]], Any]:
    def decode(p: Any, make: Make, labels: dict[int, Any]) -> Any:
        if p is not None:
            raise ProtocolError(f"an unknown tag {tag[:20]!r}")
        return value

    return decode


def _namespace(tag: str) -> Callable[[Any, Make, dict[int, Any]], Any]:
    def decode(p: Any, make: Make, labels: dict[int, Any]) -> Any:
        import argparse

        cls = types.SimpleNamespace if tag == "ns" else argparse.Namespace
        return cls(**{_str(_dec(k, make, labels)): _dec(v, make, labels) for k, v in p})

    return decode


# The tags of the values carried by value (besides lists and the scalars), each with its decoder; a malformed
# payload (a TypeError, a ValueError …) is a ProtocolError naming the tag.
_DECODERS: dict[str, Callable[[Any, Make, dict[int, Any]], Any]] = {
    "t": lambda p, make, labels: tuple(_dec(i, make, labels) for i in p),
    "d": lambda p, make, labels: dict(_pairs_of(p, make, labels)),
    "s": lambda p, make, labels: {_dec(i, make, labels) for i in p},
    "fs": lambda p, make, labels: frozenset(_dec(i, make, labels) for i in p),
    "b": lambda p, make, labels: base64.b64decode(_str(p), validate=True),
    "ba": lambda p, make, labels: bytearray(base64.b64decode(_str(p), validate=True)),
    "F": lambda p, make, labels: _special_float({"F": p}),
    "I": lambda p, make, labels: int(_str(p), 16),
    "c": lambda p, make, labels: complex(_special_float(p[0]), _special_float(p[1])),
    "D": lambda p, make, labels: decimal.Decimal(_str(p)),
    "Q": lambda p, make, labels: fractions.Fraction(_dec(p[0], make, labels), _dec(p[1], make, labels)),
    "dt": lambda p, make, labels: _dt.datetime.fromisoformat(_str(p)),
    "da": lambda p, make, labels: _dt.date.fromisoformat(_str(p)),
    "ti": lambda p, make, labels: _dt.time.fromisoformat(_str(p)),
    "td": lambda p, make, labels: _dt.timedelta(days=p[0], seconds=p[1], microseconds=p[2]),
    "u": lambda p, make, labels: uuid.UUID(hex=_str(p)),
    "p": lambda p, make, labels: pathlib.PurePosixPath(_str(p)),
    "P": lambda p, make, labels: pathlib.Path(_str(p)),
    "rg": lambda p, make, labels: range(*(_int(i) for i in p)),
    "sl": lambda p, make, labels: slice(*(_dec(i, make, labels) for i in p)),
    "E": _only_none("E", Ellipsis), "NI": _only_none("NI", NotImplemented),
    "od": lambda p, make, labels: collections.OrderedDict(_pairs_of(p, make, labels)),
    "ct": lambda p, make, labels: collections.Counter(dict(_pairs_of(p, make, labels))),
    "dd": lambda p, make, labels: collections.defaultdict(None if p[0] is None else _dec(p[0], make, labels),
                                                          _pairs_of(p[1], make, labels)),
    "dq": lambda p, make, labels: collections.deque((_dec(i, make, labels) for i in p[0]),
                                                    None if p[1] is None else _int(p[1])),
    "ns": _namespace("ns"), "ans": _namespace("ans"),
    "sg": lambda p, make, labels: _signature(p, make, labels),
}


def _signature(p: Any, make: Make, labels: dict[int, Any]) -> Any:
    """An ``inspect.Signature`` from ``[[[name, kind, [default]?, [annotation]?], …], [return annotation]?]``;
    ``inspect`` checks the names and the order of kinds (a ``ValueError`` here is a malformed value)."""
    import inspect

    params, ret = p
    if type(params) is not list or type(ret) is not list or len(params) > MAX_NODES:
        raise ProtocolError("a malformed 'sg' value")

    def opt(box: Any) -> Any:
        if type(box) is not list or len(box) > 1:
            raise ProtocolError("a malformed 'sg' value")
        return _dec(box[0], make, labels) if box else inspect.Parameter.empty

    return inspect.Signature([inspect.Parameter(_str(name), inspect._ParameterKind(_int(kind)), default=opt(default),
                                                annotation=opt(note)) for name, kind, default, note in params],
                             return_annotation=opt(ret))


# Exact types whose encoded form an object's identity decides: immutable, encoded by value.
_SCALAR_TYPES = frozenset({int, float, str, bool, type(None), bytes})


def scalar_items(container: Any) -> list[Any] | None:
    """The items of a linked ``dict`` (keys and values, in order), ``list`` or ``set`` (in iteration order),
    when every one is an immutable scalar of an exact builtin type (``int``, ``float``, ``str``, ``bool``,
    ``None``, ``bytes``); ``None`` for anything else. While :func:`same_items` holds between two such lists, the
    container's encoded state has not changed: a side need not encode it again to find out."""
    t = type(container)
    if t is not dict and t is not list and t is not set:
        return None
    items: list[Any] = []
    for x in (x for pair in container.items() for x in pair) if t is dict else container:
        if type(x) not in _SCALAR_TYPES:
            return None  # at the first other item: a container of objects costs no copy of itself first
        items.append(x)
    return items


def same_items(now: list[Any], before: list[Any]) -> bool:
    """Whether two :func:`scalar_items` lists hold the same objects (or equal ``int``s) in the same order."""
    return len(now) == len(before) and all(x is y or (type(x) is int and type(y) is int and x == y)
                                           for x, y in zip(now, before, strict=True))


def replace_in_place(container: Any, value: Any) -> None:
    """Make ``container`` (a list, dict, set or bytearray) hold what ``value`` of the same type holds, in
    place: a linked container's new state from the other side.

    Raises:
        ProtocolError: ``value`` is of another type.
    """
    if type(container) is not type(value):
        raise ProtocolError("a linked container changed type")
    if isinstance(container, (list, bytearray)):
        container[:] = value
    else:
        container.clear()
        container.update(value)
