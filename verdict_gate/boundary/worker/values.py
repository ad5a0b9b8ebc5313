"""Values as the worker sends and receives them (docs/design.md §8.1, "What crosses, and how"): the worker's
half of the codec's fallbacks. A candidate object goes as a handle (an id in the hub's table) or, where it
is a value, by value (a record, an enum member, a builtin's subclass, an exception as data); what the oracle
sends back is rebuilt: its own objects as references (:mod:`.refs`), linked containers (:mod:`..links`), the
candidate's objects from the handle table again.

Part of the worker's hub (:class:`.server.Worker` holds one :class:`Values` and its tables).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import importlib
import sys
import traceback
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import codec, ship
from ..protocol import MAX_FRAMES, MAX_RAISED, MAX_TEXT
from .errors import named
from .refs import OracleRef, ref_class

if TYPE_CHECKING:
    from .server import Worker


@named
class Values:
    """The worker's encoder and decoder; the tables they read are the hub's (``worker``)."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.live = False  # whether a list/dict/set result is held live (an attribute read) or sent by value
        self.linking = False  # decoding a callback's result: a linked container in it is linked at once
        self.described: set[int] = set()  # the classes whose descriptor the oracle has (their handle ids)
        # What each tag of a tree the oracle sent is made into here (protocol.TAGS).
        self._makers: dict[str, Callable[[Any], Any]] = {
            "h": self._handle, "lk": self._link, "o": self._reference, "r": self._record_of, "en": self._enum_member,
            "x": self._exception_class, "xv": self.from_oracle, "mod": importlib.import_module}

    # -- encoding (worker → oracle) ---------------------------------------------------------------

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
        shadows = self.worker.shadows
        if shadows.classes:
            if shadows.is_shadow(value):  # the oracle's class, as the oracle holds it
                return {"o": shadows.classes[id(value)][1]._vg_id}
            if shadows.oracle_class(cls) is not None:  # an instance of it: its oracle twin
                return {"o": shadows.twin(value)._vg_id}
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
                      "f": codec.encode_fields(pairs, self._fallback, self._record), "h": self.worker.hold(value)}}

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
                               "h": self.worker.hold(value), "ov": over}}
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
        """A class descriptor: its names, its record shape (if any), how to reach it again, the special methods its
        classes define (``sp``: the oracle's proxy class has exactly those, so ``callable()``, ``len()`` and the
        abstract classes of ``collections.abc`` answer as for the object), whether it cannot be hashed
        (``uh``), and the mutable builtin it derives from (``b``: a new object of the class is made of that builtin,
so an oracle class deriving from it has the builtin's layout)."""
        desc: dict[str, Any] = {"t": codec.mro_names(cls), "ref": self._ref(cls), "id": self.worker.hold(cls)}
        if isinstance(cls, type):
            mro = type.__dict__["__mro__"].__get__(cls)
            own = {n for klass in mro[:-1] for n in vars(klass)}
            desc["sp"] = sorted(own & CAPS)
            # The plain functions its classes define (not object's, no special method): a method call on one of its
            # instances is one request (the oracle's proxy class knows these names).
            desc["fm"] = sorted(n for klass in mro[:-1] for n, v in vars(klass).items()
                                if type(v) is types.FunctionType and not (n.startswith("__") and n.endswith("__")))
            if type.__getattribute__(cls, "__hash__") is None:
                desc["uh"] = True
            for builtin in (dict, list, set, bytearray):
                if builtin in mro and cls is not builtin:
                    desc["b"] = builtin.__name__
                    break
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
        return {"h": self.describe(obj)}

    def describe(self, obj: Any) -> dict[str, Any]:
        """The descriptor of a handle to ``obj``: its kind, its class (``cid``; the class's own descriptor, ``cls``,
        the first time this worker sends one of its instances) and what the oracle must know of it."""
        desc = self._kind(obj)
        cls = type(obj)
        cid = self.worker.hold(cls)
        desc["cid"] = cid
        if cid not in self.described:
            self.described.add(cid)
            desc["cls"] = self._class(cls)
        return desc

    def _kind(self, obj: Any) -> dict[str, Any]:
        t = type(obj)
        if t in (list, dict, set, bytearray) and self.live:
            return {"k": "live", "t": codec.mro_names(t), "id": self.worker.hold(obj)}
        if hasattr(t, "__next__") and hasattr(t, "__iter__"):
            # An iterator: the oracle may take its items in batches (list(), tuple() …, docs/design.md §8.1).
            desc = {"k": "it", "t": codec.mro_names(t), "id": self.worker.hold(obj)}
            if t.__iter__ in _SELF_ITER:
                desc["si"] = True  # iter() gives the object back: the oracle need not ask
            if not hasattr(t, "__len__"):
                desc["nl"] = True  # nor ask for a length it has not got (list() would, every time)
            return desc
        kind = "fn" if callable(obj) else "obj"
        desc = {"k": kind, "t": codec.mro_names(t), "ref": self._ref(obj) if kind == "fn" else None,
                "id": self.worker.hold(obj)}
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
        return desc

    def encode(self, value: Any, live: bool = False, top: bool = True) -> Any:
        """``value``'s tree; ``live``: a list, dict or set not linked goes as a live handle (an attribute read:
        the oracle's ``mod.TABLE.add(x)`` changes the candidate's own set), else by value; ``top``: whether
        ``value`` itself may travel as a link."""
        links = self.worker.links.ids
        if live and type(value) in (list, dict, set, bytearray) and id(value) not in links:
            self.live = True
            try:
                return self._fallback(value)
            finally:
                self.live = False
        return codec.encode(value, self._fallback, records=self._record, links=links or None, top=top)

    # -- decoding (oracle → worker) ---------------------------------------------------------------

    def _resolve_ref(self, ref: Any) -> Any:
        module, qualname = ref
        obj = importlib.import_module(module)
        for part in [p for p in str(qualname).split(".") if p]:
            obj = getattr(obj, part)
        return obj

    def _make(self, tag: str, p: Any) -> Any:
        maker = self._makers.get(tag)
        if maker is None:
            raise codec.ProtocolError(f"unknown tag {tag!r}")
        return maker(p)

    def decode(self, tree: Any) -> Any:
        return codec.decode(tree, self._make)

    def decode_result(self, tree: Any) -> Any:
        """A callback's result: the oracle linked the containers it handed over at once, so this side does too."""
        self.linking = True
        try:
            return self.decode(tree)
        finally:
            self.linking = False

    def _handle(self, p: Any) -> Any:
        worker = self.worker
        if p.get("id") in worker.handles:
            return worker.handles[p["id"]]
        if p.get("id") in worker.raised:  # an exception the oracle holds (its attributes, its __exit__)
            return worker.raised[p["id"]]
        if p.get("ref"):
            return self._resolve_ref(p["ref"])
        raise codec.ProtocolError("a handle this worker does not hold (it was restarted?)")

    def _link(self, p: Any) -> Any:
        return self.worker.links.receive(p, self.decode, lambda v, top: self.encode(v, top=top), self.linking)

    def _reference(self, p: Any) -> Any:
        worker = self.worker
        rid = int(p["id"]) if isinstance(p, dict) else int(p)
        ref = worker.refs.get(rid)
        if ref is None:
            if not isinstance(p, dict):
                raise codec.ProtocolError("a reference to an oracle object this worker never received")
            ref = ref_class(frozenset(str(c) for c in p.get("c") or ()))(worker, rid, p)
            if "fn" in p:  # a pure function of the oracle's: its calls run here, on a copy (ship.py)
                try:
                    object.__setattr__(ref, "_vg_copy", ship.make(self.decode(p["fn"]), self._resolve_ref))
                except ValueError as exc:
                    raise codec.ProtocolError(str(exc)) from None
            worker.refs[rid] = ref
            if rid in worker.released:  # an earlier proxy of it died, its release not sent yet: keep it
                worker.released.remove(rid)
        return ref

    def _record_of(self, p: Any) -> Any:
        if p.get("h") in self.worker.handles:
            return self.worker.handles[p["h"]]
        cls = self._handle(p["c"])
        fields = {name: self.decode(value) for name, value in p["f"]}
        if p.get("k") == "nt":
            return cls(*fields.values())
        return cls(**fields)

    def _enum_member(self, p: Any) -> Any:
        if "v" in p:  # a member of a standard library enum, by value (a flag may combine several: re.I | re.M)
            return self._handle(p["c"])(self.decode(p["v"]))
        return self._handle(p["c"])[p["n"]]

    def _exception_class(self, p: Any) -> Any:
        return self._resolve_ref(p[0])

    # -- exceptions -------------------------------------------------------------------------------

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
        raised = self.worker.raised
        eid = self.worker.next_id
        self.worker.next_id += 1
        raised[eid] = exc
        if len(raised) > MAX_RAISED:
            del raised[next(iter(raised))]
        body["h"] = eid
        if depth < 3:
            for key, linked in (("cause", exc.__cause__), ("ctx", exc.__context__)):
                if isinstance(linked, BaseException) and linked is not exc:
                    body[key] = self.exception(linked, depth + 1)
            body["sc"] = bool(exc.__suppress_context__)
        return body

    _MIRRORS: dict[tuple[tuple[str, str], ...], type] = {}

    def from_oracle(self, body: dict[str, Any]) -> BaseException:
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


# The special methods a proxy class carries only where the candidate's class defines them (docs/design.md §8.1):
# their presence alone is what callable(), len(), iter(), the operators and collections.abc look for.
CAPS = frozenset({
    "__call__", "__iter__", "__next__", "__len__", "__getitem__", "__setitem__", "__delitem__", "__contains__",
    "__enter__", "__exit__", "__get__", "__set_name__", "__bool__", "__index__", "__int__", "__float__",
    "__complex__", "__round__", "__reversed__", "__length_hint__", "__neg__", "__pos__", "__abs__", "__invert__",
    "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__", "__and__",
    "__or__", "__xor__", "__lshift__", "__rshift__", "__divmod__", "__radd__", "__rsub__", "__rmul__",
    "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__", "__rmatmul__", "__rand__", "__ror__", "__rxor__",
    "__rlshift__", "__rrshift__", "__rdivmod__", "__iadd__", "__isub__", "__imul__", "__ior__", "__iand__",
    "__ixor__", "__lt__", "__le__", "__gt__", "__ge__"})
