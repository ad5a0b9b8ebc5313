"""Candidate classes as the oracle holds them, and the oracle's classes that derive from them (docs/design.md §8.1,
"Identity" and "Subclasses").

One candidate class, one local class: its *proxy class* (:func:`proxy_class`), whose metaclass is
:class:`ProxyType`. Every handle to an instance of it is an instance of that class, so ``type(obj) is Class``,
``isinstance`` and ``issubclass`` hold natively; calling the class constructs in the worker; reading, setting and
deleting a class attribute asks the worker. The class carries exactly the special methods the candidate's defines
(``callable()``, ``len()`` and ``collections.abc`` answer as for the object). It does not derive from ``dict``,
``list``, ``set`` or ``bytearray`` when the candidate's class does: C code reads such an object's own storage
directly (``heapq``, ``set.union``, ``type(name, bases, ns)``), which a handle cannot fill, so it would read an
empty one and answer wrongly without a word. ``isinstance(obj, dict)`` is false there (a visible difference, never
a silent one); every operation, method and ``dict(obj)`` answers as the candidate's object does.

A class statement of the oracle's whose base is a proxy class (``class MyStorage(Storage)``) makes an *oracle
class*: an ordinary class of this process, whose methods run here with their closures (``nonlocal``, the test's
locals). Its data (``count = 0``) moves to its *shadow* in the worker (:mod:`..worker.shadows`), a class built
there from the candidate's bases with a stub for each name the oracle class defines; its instances live in the
worker as instances of the shadow, each with the oracle object that is its other half here. ``super()`` from
the oracle class runs the candidate's implementation in the worker, past the stubs (:class:`_Inherited`).

A spoke of the oracle side: a class holds the client it was made for and asks through it; this module imports
only the protocol and the errors.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

from ..protocol import DELATTR, GETATTR, MEMBERS, NEW, SETATTR, SHADOW, SIGNATURE
from .errors import candidate_error, named

if TYPE_CHECKING:
    from .client import Client

# What a class statement's namespace holds that is the class's own make-up, never data to move to the shadow.
_OWN = frozenset({"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__slots__", "__classcell__",
                  "__annotations__", "__init_subclass__", "__class_getitem__", "__orig_bases__", "__new__"})


@named
class ProxyType(type):
    """The metaclass of proxy classes and of the oracle's classes that derive from them."""

    # A proxy class: _vg_home = (client, descriptor); an oracle class: _vg_oracle = True, _vg_over (the names it
    # and the oracle classes it derives from define, with their kinds), _vg_data (what moves to the shadow).

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> Any:
        if "_vg_home" in namespace:  # a proxy class, made by proxy_class
            return super().__new__(mcs, name, bases, namespace)
        data = {k: v for k, v in namespace.items() if k not in _OWN and not k.startswith("_vg_") and _is_data(v)}
        behaviour = {k: v for k, v in namespace.items() if k not in data}
        cls = super().__new__(mcs, name, bases, behaviour)
        # What the oracle's classes in its method resolution order define (not the proxy classes, not the handle
        # classes they derive from): each is a stub on the shadow, calling back here.
        client = _home(cls)[0]
        machinery = set(client.Handle.__mro__)
        over: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            if _is_proxy(klass) or klass in machinery:
                continue
            over.update({k: _kind(v) for k, v in vars(klass).items()
                         if isinstance(k, str) and k not in _OWN and not k.startswith("_vg_")})
        type.__setattr__(cls, "_vg_oracle", True)
        type.__setattr__(cls, "_vg_over", over)
        type.__setattr__(cls, "_vg_data", data)
        type.__setattr__(cls, "_vg_kwargs", dict(kwargs))
        type.__setattr__(cls, "_vg_shadow", None)
        for base in cls.__mro__:
            if _is_proxy(base):
                _inherit(base)  # super() from the oracle's methods finds the candidate's there
        return cls

    def __init__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(name, bases, namespace)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        home = _home(cls)
        if not cls.__dict__.get("_vg_oracle"):
            client, desc = home
            return client.call(_class_target(cls), args, kwargs)
        return _construct(cls, args, kwargs)

    def __getattr__(cls, name: str) -> Any:
        if name == "__signature__" and not cls.__dict__.get("_vg_oracle"):
            # What the worker's inspect.signature() says of the candidate's class (its own __signature__, a
            # property's TypeError included): the oracle's inspect.signature() stops here and returns it.
            client = _home(cls)[0]
            return client.request({"op": SIGNATURE, "obj": _class_target(cls)})
        if name.startswith("_vg_") or (name.startswith("__") and name.endswith("__") and name != "__wrapped__"):
            raise AttributeError(name)
        client, desc = _home(cls)
        value = client.request({"op": GETATTR, "obj": class_target(cls), "name": name})
        if not cls.__dict__.get("_vg_oracle") and client.enum_alias(value, name, desc):
            # HIGH = "low" beside LOW = "low": the oracle means two cases, the candidate collapsed them.
            raise candidate_error(TypeError(
                f"{cls.__qualname__}.{name} is an alias of {cls.__qualname__}.{value.name} in the candidate's enum "
                "(a member whose value repeats another's): the oracle tells them apart"))
        return value

    def __setattr__(cls, name: str, value: Any) -> None:
        if name.startswith("_vg_") or (name.startswith("__") and name.endswith("__")) or \
                (cls.__dict__.get("_vg_oracle") and not _is_data(value)):
            type.__setattr__(cls, name, value)  # the class's make-up, or behaviour the oracle's class keeps
            return
        client = _home(cls)[0]
        target = _class_target(cls) if not cls.__dict__.get("_vg_oracle") else _shadow_target(cls)
        client.request({"op": SETATTR, "obj": target, "name": name, "value": client.encode(value)})

    def __delattr__(cls, name: str) -> None:
        if name.startswith("_vg_") or name in cls.__dict__:
            type.__delattr__(cls, name)
            return
        client = _home(cls)[0]
        target = _class_target(cls) if not cls.__dict__.get("_vg_oracle") else _shadow_target(cls)
        client.request({"op": DELATTR, "obj": target, "name": name})

    def __instancecheck__(cls, obj: Any) -> bool:
        if type.__instancecheck__(cls, obj):
            return True
        home = cls.__dict__.get("_vg_home")  # a record or builtin value of the candidate's class: by its names
        return home is not None and home[0].is_instance(obj, home[1])

    def __subclasscheck__(cls, sub: Any) -> bool:
        if type.__subclasscheck__(cls, sub):
            return True
        home = cls.__dict__.get("_vg_home")
        mro = getattr(sub, "_vg_mro", None) or []
        return home is not None and list(home[1]["t"][0]) in [list(n) for n in mro]


def class_target(cls: type) -> dict[str, Any]:
    """What finds ``cls`` in the worker: a proxy class's candidate class, or an oracle class's shadow."""
    return _shadow_target(cls) if cls.__dict__.get("_vg_oracle") else _class_target(cls)


def _is_proxy(cls: Any) -> bool:
    return isinstance(cls, ProxyType) and "_vg_home" in cls.__dict__


def _is_data(value: Any) -> bool:
    """A class statement's value that is data (moves to the shadow), not behaviour (stays here): no function,
    class or descriptor."""
    return not (isinstance(value, (types.FunctionType, type, staticmethod, classmethod, property))
                or hasattr(type(value), "__get__") or callable(value))


def _kind(value: Any) -> str:
    """How the shadow reaches a name the oracle's class defines: ``m`` a method, ``c``/``s`` a class or static
    method, ``p`` anything else (a property, a descriptor, a nested class)."""
    if isinstance(value, types.FunctionType):
        return "m"
    if isinstance(value, classmethod):
        return "c"
    if isinstance(value, staticmethod):
        return "s"
    return "p"


def _home(cls: type) -> Any:
    """The client and descriptor of ``cls``'s proxy class (itself, or the first in its method resolution order)."""
    for klass in cls.__mro__:
        home = klass.__dict__.get("_vg_home")
        if home is not None:
            return home
    raise TypeError(f"{cls.__qualname__} holds no candidate class")


def _class_target(cls: type) -> dict[str, Any]:
    client, desc = cls.__dict__["_vg_home"]
    target = client.target(desc, cls.__dict__["_vg_class_gen"])
    if not target:
        from .errors import WorkerCrashed

        raise WorkerCrashed("this candidate class belonged to a worker that has since been restarted")
    return target


# --- the oracle's classes ------------------------------------------------------------------------------------


def _shadow_target(cls: type) -> dict[str, Any]:
    """The target of ``cls``'s shadow in the running worker (built now if this worker has none yet)."""
    client = _home(cls)[0]
    made = cls.__dict__.get("_vg_shadow")
    if made is not None and made[0] == client.generation and client.proc is not None:
        return {"id": made[1]}
    bases = []
    for base in cls.__bases__:
        if _is_proxy(base):
            bases.append({"h": _class_target(base)})
        elif isinstance(base, ProxyType) and base.__dict__.get("_vg_oracle"):
            bases.append({"h": _shadow_target(base)})
    over = [[name, kind] for name, kind in sorted(cls.__dict__["_vg_over"].items())]
    data = [[name, client.encode(value)] for name, value in cls.__dict__["_vg_data"].items()]
    kwargs = [[k, client.encode(v)] for k, v in cls.__dict__["_vg_kwargs"].items()]
    answer = client.request({"op": SHADOW, "name": cls.__name__, "qualname": cls.__qualname__,
                             "module": cls.__module__, "bases": bases, "over": over, "data": data,
                             "oracle": client.reference(cls), "kw": kwargs})
    type.__setattr__(cls, "_vg_shadow", (client.generation, int(answer["hid"])))
    return {"id": int(answer["hid"])}


def _construct(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``cls(*args, **kwargs)`` of an oracle class: its instance in the worker (an instance of the shadow, made
    without ``__init__``), its other half here, then ``__init__`` as Python runs it (the oracle's own, or the
    candidate's through the shadow)."""
    client = _home(cls)[0]
    target = _shadow_target(cls)
    obj = blank(cls)
    answer = client.request({"op": NEW, "obj": target, "twin": client.reference(obj),
                             "args": [client.encode(a) for a in args],
                             "kw": [[k, client.encode(v)] for k, v in kwargs.items()]})
    adopt(client, obj, {"k": "obj", "t": answer["t"], "id": int(answer["hid"])}, client.generation)
    if "__init__" in cls.__dict__["_vg_over"]:
        # the oracle's own __init__ (its super().__init__ runs the candidate's)
        type.__getattribute__(cls, "__init__")(obj, *args, **kwargs)
    else:
        init = client.request({"op": GETATTR, "obj": obj._vg_target(), "name": "__init__"})
        init(*args, **kwargs)
    return obj


def blank(cls: type) -> Any:
    """An instance of a handle class made without its ``__init__`` (a proxy class's ``__call__`` constructs in the
    worker): of the builtin it derives from, empty, or a plain object."""
    for builtin in (dict, list, set, bytearray):
        if issubclass(cls, builtin):
            return builtin.__new__(cls)  # type: ignore[type-var]
    return object.__new__(cls)


def adopt(client: Client, obj: Any, desc: dict[str, Any], generation: int) -> Any:
    """Make ``obj`` (from :func:`blank`) the handle of the worker's object ``desc`` names."""
    object.__setattr__(obj, "_vg_client", client)
    object.__setattr__(obj, "_vg_desc", desc)
    object.__setattr__(obj, "_vg_gen", generation)
    for slot in ("_vg_buffer", "_vg_mark", "_vg_asked"):
        object.__setattr__(obj, slot, None)
    object.__setattr__(obj, "_vg_drain", False)
    if desc.get("id") is not None:
        client.handles[(generation, desc["id"])] = obj
    return obj


@named
class _Inherited:
    """An attribute of a candidate class on its proxy class, for ``super()`` from an oracle class: bound to an
    instance of an oracle class that defines the name itself, it is the candidate's implementation (the worker
    skips the shadow's stub that would call the oracle back); otherwise the worker's attribute of the object."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            if owner is not None and owner.__dict__.get("_vg_oracle") and self.name in _over_of(owner):
                # super().parse(…) from a classmethod of the oracle's class: the candidate's, bound to its shadow
                return _home(owner)[0].request({"op": GETATTR, "obj": class_target(owner), "name": self.name,
                                                "inh": True})
            return _class_attribute(owner, self.name)
        client = instance._vg_client
        inherited = self.name in _overrides_of(instance)
        return client.request({"op": GETATTR, "obj": instance._vg_target(), "name": self.name,
                               **({"inh": True} if inherited else {})})


def _class_attribute(owner: type, name: str) -> Any:
    """``Class.name`` of a name the candidate's class defines itself (``TLRUCache.__init__(self, …)`` from a test's
    subclass): the worker's, special names included; :meth:`ProxyType.__getattr__` answers the rest."""
    if not (name.startswith("__") and name.endswith("__")):
        return ProxyType.__getattr__(owner, name)  # type: ignore[arg-type]
    return _home(owner)[0].request({"op": GETATTR, "obj": class_target(owner), "name": name})


def _overrides_of(instance: Any) -> Any:
    return _over_of(type(instance))


def _over_of(cls: type) -> Any:
    """The names the oracle classes in ``cls``'s method resolution order define (``_vg_over``), or none."""
    for klass in cls.__mro__:
        over = klass.__dict__.get("_vg_over")
        if over is not None:
            return over
    return ()


@named
class _Method:
    """A method of a candidate class on its proxy class: ``obj.method`` is a :class:`BoundCall`, so ``obj.method(x)``
    is one request, not an attribute read and then a call (the object's own attribute of that name still answers
    in the worker). On an instance of an oracle class that defines the name itself, it is ``super()``'s: the
    candidate's implementation, past the shadow's stub."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return _class_attribute(owner, self.name)
        return BoundCall(instance, self.name, self.name in _overrides_of(instance))


@named
class BoundCall:
    """``obj.method`` of a candidate object: called, one request (``call`` with the method's name); used any other
    way (its ``__name__``, compared, handed on), the worker's attribute itself, read once."""

    __slots__ = ("_vg_self", "_vg_name", "_vg_inh", "_vg_value")

    def __init__(self, handle: Any, name: str, inherited: bool) -> None:
        self._vg_self, self._vg_name, self._vg_inh, self._vg_value = handle, name, inherited, _MISSING

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        handle = self._vg_self
        client = handle._vg_client
        client.via = f"{type(handle).__qualname__}.{self._vg_name}(...)"
        try:
            return client.call(handle._vg_target(), args, kwargs, name=self._vg_name, inherited=self._vg_inh)
        finally:
            client.via = ""

    def _vg_get(self) -> Any:
        if self._vg_value is _MISSING:
            handle = self._vg_self
            self._vg_value = handle._vg_client.request(
                {"op": GETATTR, "obj": handle._vg_target(), "name": self._vg_name,
                 **({"inh": True} if self._vg_inh else {})})
        return self._vg_value

    def __getattr__(self, name: str) -> Any:
        return getattr(self._vg_get(), name)

    def __eq__(self, other: Any) -> Any:
        if isinstance(other, BoundCall):
            return other._vg_self is self._vg_self and other._vg_name == self._vg_name
        return self._vg_get() == other

    def __ne__(self, other: Any) -> Any:
        return not self == other

    def __hash__(self) -> int:
        return hash((id(self._vg_self), self._vg_name))

    def __repr__(self) -> str:
        return repr(self._vg_get())

    def __str__(self) -> str:
        return str(self._vg_get())

    def __bool__(self) -> bool:
        return bool(self._vg_get())


_MISSING = object()


def _inherit(cls: type) -> None:
    """Put the candidate's methods on its proxy class ``cls`` (once), for ``super()``: Python looks a name up in
    the classes' own namespaces there, never through ``__getattr__``."""
    if cls.__dict__.get("_vg_members"):
        return
    client, desc = cls.__dict__["_vg_home"]
    for name, kind in client.request({"op": MEMBERS, "obj": _class_target(cls)}):
        if kind in ("m", "p") and (name == "__init__" or not (name.startswith("__") and name.endswith("__"))) \
                and name not in cls.__dict__:
            type.__setattr__(cls, name, _Inherited(name))
    type.__setattr__(cls, "_vg_members", True)


@named
class _ModuleName(str):
    """``__module__`` of a proxy class: the candidate class's module (``type(obj).__module__``, a string, as
    ``type`` reads it from the class's namespace), and for an instance that sets its own (toolz's ``curry`` takes
    its function's: the handle's ``om``), that instance's, read from the worker."""

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None or not instance._vg_desc.get("om"):
            return str(self)
        module = instance._vg_client.request({"op": GETATTR, "obj": instance._vg_target(), "name": "__module__"})
        return module if module is None or type(module) is str else str(self)


_UNREAD = object()


@named
class _Doc:
    """``__doc__`` of a proxy class: the candidate class's for ``Class.__doc__`` (read from the worker once, a
    descriptor's class value included: toolz's ``excepts``), the candidate object's for ``obj.__doc__`` (a
    curry's, a wrapper's)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value: Any = _UNREAD

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is not None:
            return instance._vg_client.request({"op": GETATTR, "obj": instance._vg_target(), "name": "__doc__"})
        if self.value is _UNREAD:
            self.value = _home(owner)[0].request({"op": GETATTR, "obj": class_target(owner), "name": "__doc__"})
        return self.value


def proxy_class(client: Client, desc: dict[str, Any], generation: int) -> type:
    """The proxy class of the candidate's class ``desc`` (a class descriptor the worker of ``generation`` sent),
    made once and kept: by the class's name where it has one the worker can find again (so a class read after a
    restarted worker is the same object), else by its handle id."""
    names = desc.get("t") or [["?", "?"]]
    module, qualname = str(names[0][0]), str(names[0][1])
    ref = desc.get("ref")
    key: tuple[Any, ...] = ("ref", str(ref[0]), str(ref[1])) if ref else ("id", generation, desc.get("id"))
    cls = client.classes.get(key)
    if cls is None:
        base = client.RemoteFunction if (module, qualname) == ("builtins", "function") else client.Handle
        namespace: dict[str, Any] = {"__slots__": (), "__module__": _ModuleName(module), "__qualname__": qualname,
                                     "_vg_home": (client, desc), "_vg_class_gen": generation,
                                     "_vg_mro": [list(n) for n in names]}
        caps = set(desc.get("sp") or ())
        if "__next__" in caps:  # an iterator: list() asks its length hint, which is how its items come in batches
            caps.add("__length_hint__")
        namespace.update({cap: client.cap_methods[cap] for cap in caps if cap in client.cap_methods})
        namespace.update({name: _Method(name) for name in desc.get("fm") or ()
                          if name.isidentifier() and not name.startswith("_vg_") and name not in namespace})
        if desc.get("uh"):
            namespace["__hash__"] = None
        cls = ProxyType(qualname.rpartition(".")[2] or "Handle", (base,), namespace)
        type.__setattr__(cls, "__doc__", _Doc())
        client.classes[key] = cls
    elif cls.__dict__["_vg_class_gen"] != generation:  # the same class, from a worker started since
        type.__setattr__(cls, "_vg_home", (client, desc))
        type.__setattr__(cls, "_vg_class_gen", generation)
    if desc.get("id") is not None:
        client.classes[("id", generation, desc["id"])] = cls
    return cls
