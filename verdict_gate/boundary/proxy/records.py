"""Candidate values the oracle compares by value (docs/design.md §8.1, "by record"): a dataclass, named tuple
or attrs instance arrives as a frozen record of a local mirror class (:func:`record_class`), equal by value
over the fields the class compares and every field the oracle gave; an enum member as an :class:`EnumMember`.
Calling a mirror class constructs in the worker and gives a record holding the oracle's own arguments.

A spoke of the oracle side: a record class holds the client it was built for and asks through it; this
module imports only the codec and the errors.
"""

from __future__ import annotations

import collections
import dataclasses
import keyword
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import codec
from .errors import PACKAGE, candidate_error, named

if TYPE_CHECKING:
    from .client import Client

_RECORDS: dict[Any, type] = {}  # the mirror classes made, by client, name and fields


@named
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
        target = client.target(cls._vg_desc, cls._vg_gen) or {"ref": cls._vg_desc.get("ref")}
        built = client.call(target, args, kwargs)
        if type(built) is not cls:
            raise candidate_error(TypeError(
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
        return build_record(cls, values, held[0] if held else None, held[1] if held else client.generation,
                             given)

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or cls._vg_client.is_instance(obj, cls._vg_desc)

    def __repr__(cls) -> str:
        return f"<candidate record class {'.'.join(cls._vg_desc['t'][0])}>"


RecordMeta = _RecordMeta  # its name in the evidence stays `_RecordMeta` (a type's repr in a message)


@named
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


def record_class(client: Client, desc: dict[str, Any], generation: int) -> type:
    """The mirror class of a candidate dataclass, named tuple or attrs class (cached by name and fields).
    It compares by value on the fields the class compares, and on every field the oracle gave when it built
    either record (:func:`_record_eq`)."""
    kind, fields = desc.get("rk"), [str(f) for f in desc.get("f") or []]
    uncompared = frozenset(str(f) for f in desc.get("nc") or [] if f in fields)
    module, qualname = (str(x) for x in desc["t"][0])
    _check_record_names(qualname.rsplit(".", 1)[-1], fields)
    key = ("record", id(client), module, qualname, kind, tuple(fields), tuple(sorted(uncompared)))
    cls = _RECORDS.get(key)
    if cls is None:
        name = qualname.rsplit(".", 1)[-1]
        # Built under a module name of its own: dataclasses reads the class's module's namespace, which for a
        # candidate module would be a request to the worker (and its records, and so on); renamed after.
        ns: dict[str, Any] = {"__module__": PACKAGE, "__qualname__": qualname, "_vg_kind": kind,
                              "_vg_uncompared": uncompared, "__getattr__": _record_getattr}
        if kind == "nt":
            base = collections.namedtuple(name, fields, rename=True, module=PACKAGE)  # type: ignore[misc]
            cls = RecordMeta(name, (base,), ns)
        else:
            ns["__annotations__"] = {f: Any for f in fields}
            ns["__eq__"], ns["__hash__"] = _record_eq, _record_hash
            cls = dataclasses.dataclass(frozen=True, eq=False, repr=True)(RecordMeta(name, (), ns))  # type: ignore[arg-type]
        cls.__module__ = module
        _RECORDS[key] = cls
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


def build_record(cls: type, values: list[Any], handle: int | None, generation: int,
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

