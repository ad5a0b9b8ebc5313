"""The oracle side's half of the codec (docs/design.md §8.1, "What crosses, and how"): a tree the worker sent
made into the oracle's objects (:func:`decode`: handles, records, enum members, exception classes and values,
the oracle's own references and linked containers again), and an oracle object the codec cannot carry by value
made into its wire form (:func:`encode_local`: a handle sent back, a record by value, the standard library's
functions by name, anything else by reference). The classes it makes and tests are the spokes'
(:mod:`.handles`, :mod:`.records`, :mod:`.exceptions`, :mod:`.importer`).

Part of the oracle side's hub (with :mod:`.client`): it imports the spokes, none of which imports it.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import codec
from . import exceptions
from .callbacks import ByReference
from .classes import BoundCall, ProxyType, adopt, blank, class_target, proxy_class
from .exceptions import exception_from, mirror_exception
from .handles import (
    VALUE_BUILTINS,
    VALUE_CLASSES_SEEN,
    Handle,
    LiveHandle,
    _ValueMirror,
    builtin_value,
    forward,
    mirror_handle,
)
from .importer import Finder, ProxyModule
from .records import EnumMember, RecordMeta, build_record, record_class

if TYPE_CHECKING:
    from .client import Client


def target(client: Client, desc: dict[str, Any], generation: int) -> dict[str, Any]:
    """What the worker needs to find an object again: its id (this worker only) and/or its reference."""
    out: dict[str, Any] = {}
    if desc.get("ref"):
        out["ref"] = desc["ref"]
    if desc.get("id") is not None and generation == client.generation and client.proc is not None:
        out["id"] = desc["id"]
    return out


def plain(value: Any) -> bool:
    """A value the oracle computed (a builtin value, a container of them, a record or enum member the codec
    carries by value), as opposed to an object of a class of its own, which answers its own ``__eq__``."""
    t = type(value)
    if t is object:
        return False  # a bare object() has no value, only identity
    return value is None or t.__module__ in ("builtins", "decimal", "fractions", "datetime", "uuid", "pathlib",
                                             "collections") or isinstance(value, EnumMember) \
        or type(t) is RecordMeta or isinstance(value, _ValueMirror)


def enum_alias(value: Any, name: str, desc: dict[str, Any]) -> bool:
    """Whether ``name``, read from the candidate's enum class of ``desc``, is an alias of another member
    (``HIGH = "low"`` beside ``LOW = "low"``): the oracle means two cases, the candidate collapsed them."""
    return isinstance(value, EnumMember) and value.name != name and name in (desc.get("alias") or ())


_TYPE_MRO = [["builtins", "type"], ["builtins", "object"]]


def mro_of(obj: Any) -> list[list[str]]:
    """The class names of ``type(obj)``'s method resolution order, for ``isinstance`` against a candidate class."""
    if isinstance(obj, Handle):
        return [list(n) for n in obj._vg_desc.get("t") or []]
    home = obj.__dict__.get("_vg_home") if isinstance(obj, ProxyType) else None
    if home is not None:  # a candidate class is an instance of its metaclass, not of itself
        return [list(n) for n in home[1].get("mt") or _TYPE_MRO]
    return [list(n) for n in getattr(type(obj), "_vg_mro", None) or []]


def is_instance(obj: Any, class_desc: dict[str, Any]) -> bool:
    own = list(class_desc["t"][0])
    return own in mro_of(obj)


# --- decoding ----------------------------------------------------------------------------------------------

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
    """The value of ``tree``, a codec tree the worker of ``generation`` sent (each tag of
    :data:`..protocol.TAGS` made by its maker in :data:`_MAKERS`).

    Raises:
        codec.ProtocolError: an unknown tag, or a payload of the wrong shape.
    """
    if tree is None or type(tree) in _PLAIN:
        return tree

    def make(tag: str, p: Any) -> Any:
        maker = _MAKERS.get(tag)
        if maker is None:
            raise codec.ProtocolError(f"unknown tag {tag!r}")
        return maker(client, p, generation)

    return codec.decode(tree, make)


def _handle(client: Client, p: Any, generation: int) -> Any:
    ref = p.get("ref")
    if p.get("k") == "cls" and ref and (str(ref[0]), str(ref[1])) in _VALUE_CLASSES \
            and str(ref[0]) in sys.modules:
        return _local(str(ref[0]), str(ref[1]))
    if p.get("k") == "fn" and ref and _pure_function(str(ref[0]), str(ref[1])):
        with contextlib.suppress(AttributeError, KeyError):
            return _local(str(ref[0]), str(ref[1]))  # random.choice, str.lower: the oracle's own
    if p.get("k") == "cls":
        if "f" in p:
            return record_class(client, p, generation)
        return proxy_class(client, p, generation)  # the candidate's class itself: one local class for it
    key = (generation, p.get("id"))
    known = client.handles.get(key) if p.get("id") is not None else None
    if known is not None:
        return known
    if client.via and "via" not in p:
        p["via"] = client.via
    handle = adopt(client, blank(_instance_class(client, p, generation)), p, generation)
    if p.get("id") is not None and p["id"] in client.releases:  # an earlier handle of it died, not told yet
        client.releases.remove(p["id"])
    return handle


def _instance_class(client: Client, p: dict[str, Any], generation: int) -> type:
    """The local class of a handle to an instance: a list, dict or set held live, or the proxy class of its
    class (described the first time the worker sends one of its instances, ``cls``; known by ``cid`` after)."""
    if p.get("k") == "live":
        return LiveHandle
    described = p.get("cls")
    if isinstance(described, dict):
        return proxy_class(client, described, generation)
    known = client.classes.get(("id", generation, p.get("cid")))
    if known is None:
        raise codec.ProtocolError("a handle of a class the worker never described")
    return known


def _link(client: Client, p: Any, generation: int) -> Any:
    value = client.links.find(p)
    if value is None:
        raise codec.ProtocolError("the worker named a linked container it was never given")
    return value


def _reference(client: Client, p: Any, generation: int) -> Any:
    rid = p if type(p) is int else None
    if rid is None or rid not in client.local:
        raise codec.ProtocolError("the worker named an oracle object it was never given")
    return client.local[rid]


def _record(client: Client, p: Any, generation: int) -> Any:
    cls = record_class(client, p["c"], generation)
    fields = [decode(client, value, generation) for _name, value in p["f"]]
    return build_record(cls, fields, p.get("h"), generation)


def _enum_member(client: Client, p: Any, generation: int) -> Any:
    names = p["c"]["t"]
    by_value = any(list(n) in (["builtins", "int"], ["builtins", "str"], ["builtins", "float"]) for n in names)
    return EnumMember((str(names[0][0]), str(names[0][1])), str(p["n"]), decode(client, p["v"], generation),
                      by_value)


def _exception_class(client: Client, p: Any, generation: int) -> Any:
    return mirror_exception(p, ordinary_stop=True)  # as a call would raise it (pytest.raises)


def _exception_value(client: Client, p: Any, generation: int) -> Any:
    return exception_from(client, p, generation)  # an exception object handed over as a value (not raised)


def _module(client: Client, p: Any, generation: int) -> Any:
    # Only a module this process has, or one of the candidate's (a proxy): the worker never gets to make the
    # oracle import, and run, a module of its choosing.
    name = str(p)
    if name in sys.modules:
        return sys.modules[name]
    if any(isinstance(f, Finder) and name.partition(".")[0] in f.names for f in sys.meta_path):
        return importlib.import_module(name)
    raise codec.ProtocolError(f"the worker named the module {name[:80]!r}, which the oracle has not imported")


def _builtin_value(client: Client, p: Any, generation: int) -> Any:
    builtin = VALUE_BUILTINS.get(str(p["b"]))
    if builtin is None:
        raise codec.ProtocolError("a builtin value of an unknown type")
    desc = p["c"]
    names = tuple(str(x) for x in desc["t"][0])
    over = tuple(sorted(str(n) for n in p.get("ov") or () if hasattr(builtin, str(n)) or str(n).startswith("__r")))
    key = (names, builtin, over)
    cls = VALUE_CLASSES_SEEN.get(key)
    if cls is None:
        ns: dict[str, Any] = {"__module__": names[0], "__qualname__": names[1], "_vg_names": names,
                              "_vg_mro": [list(n) for n in desc["t"]],
                              # the candidate object's vars(): type() would give the instance's own namespace
                              "__dict__": vars(_ValueMirror)["__dict__"]}
        ns.update({n: forward(n, builtin) for n in over})
        if "__eq__" in over and "__hash__" not in over:
            ns["__hash__"] = forward("__hash__", builtin)
        cls = type(names[1].rpartition(".")[2], (builtin, _ValueMirror), ns)
        if len(VALUE_CLASSES_SEEN) < 10_000:
            VALUE_CLASSES_SEEN[key] = cls
    value = decode(client, p["v"], generation)
    if type(value) is not builtin:
        raise codec.ProtocolError("a builtin value of the wrong type")
    obj: Any = builtin.__new__(cls, value)
    if type(p.get("h")) is int:
        held = {"k": "obj", "t": desc["t"], "id": p["h"]}
        where = (generation, p["h"])
        object.__setattr__(obj, "_vg_handle", client.handles.get(where) or
                           adopt(client, blank(proxy_class(client, desc, generation)), held, generation))
    return obj


# What each tag of a tree the worker sent is made into here (protocol.TAGS).
_MAKERS: dict[str, Callable[[Client, Any, int], Any]] = {
    "h": _handle, "lk": _link, "o": _reference, "r": _record, "bv": _builtin_value, "en": _enum_member,
    "x": _exception_class, "xv": _exception_value, "mod": _module}


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


# --- encoding ----------------------------------------------------------------------------------------------


def stdlib_ref(obj: Any) -> list[str] | None:
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
    other oracle object by reference (:meth:`.client.Client.reference`)."""
    if isinstance(obj, ByReference):  # an oracle twin the worker keeps by reference (callbacks.twin)
        return client.reference(obj.obj)
    if isinstance(obj, BoundCall):  # obj.method handed on: the worker's bound method itself
        return client.encode(obj._vg_get(), top=False)
    if isinstance(obj, ProxyType):  # a candidate class: itself; an oracle class deriving from one: its shadow
        return {"h": class_target(obj)}
    if isinstance(obj, Handle):
        return {"h": obj._vg_target()}
    if isinstance(obj, RecordMeta):
        return {"h": target(client, obj._vg_desc, obj._vg_gen) or {"ref": obj._vg_desc.get("ref")}}
    record_meta = type(type(obj))
    if record_meta is RecordMeta:
        cls = type(obj)
        held = obj.__dict__.get("_vg_handle")
        fields = list(obj) if cls._vg_kind == "nt" else [getattr(obj, f) for f in cls.__dataclass_fields__]
        names = list(cls._fields) if cls._vg_kind == "nt" else list(cls.__dataclass_fields__)
        return {"r": {"c": target(client, cls._vg_desc, cls._vg_gen) or {"ref": cls._vg_desc.get("ref")},
                      "k": cls._vg_kind, "f": [[n, client.encode(v)] for n, v in zip(names, fields, strict=True)],
                      "h": held[0] if held and held[1] == client.generation else None}}
    if isinstance(obj, EnumMember):
        return {"en": {"c": {"ref": list(obj.cls)}, "n": obj.name}}
    if isinstance(obj, _ValueMirror):
        handle = mirror_handle(obj)
        if handle is not None:
            return {"h": handle._vg_target()}  # the candidate's own object again
        return client.encode(builtin_value(obj))
    if isinstance(obj, ProxyModule):
        return {"mod": obj.__name__}
    if isinstance(obj, type) and issubclass(obj, BaseException) and getattr(obj, "_vg_mirror", False):
        return {"x": [[obj.__module__, obj.__qualname__]]}
    if isinstance(obj, BaseException):  # an exception as a value: as data (it comes back as itself)
        return {"xv": exceptions.body(client, obj)}
    if isinstance(obj, types.ModuleType):
        name = obj.__name__
        if name.partition(".")[0] in sys.stdlib_module_names:
            return {"mod": name}
        raise client.limit(f"the oracle's module {name!r} cannot be passed to candidate code across the isolation "
                           "boundary (a module of the standard library or of the candidate can)")
    ref = stdlib_ref(obj)
    if ref is not None:
        return {"h": {"ref": ref}}
    if isinstance(obj, enum.Enum):
        home = stdlib_ref(type(obj))
        if home is not None:  # re.IGNORECASE, re.I | re.M: the worker's own member, from its value
            return {"en": {"c": {"ref": home}, "v": client.encode(obj.value)}}
    return client.reference(obj)
