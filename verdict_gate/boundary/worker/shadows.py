"""The oracle's classes that derive from candidate classes, as the worker holds them (docs/design.md §8.1,
"Subclasses"): a test's ``class MyStorage(Storage)`` is the oracle's class, whose methods run in the oracle
process with their closures; its instances live here as instances of a *shadow*, a class built here whose
bases are the candidate's and whose every attribute the oracle's class defines (a method, a property, a
class or static method) is a stub that calls the oracle back. So candidate code that calls ``self.read()``
on the instance runs the test's ``read`` (in the oracle), and what the test's class inherits (``super()``
included) runs here, in the candidate's classes. The data the class statement sets (``count = 0``) lives on the
shadow, with the instances' own attributes, so both sides read and write one state.

Nothing of the oracle's source, globals or methods is built or run here: a stub holds the oracle object it
calls, a reference. The candidate may rewrite a stub (its ``__init_subclass__`` runs on the shadow); that
changes only what candidate code calls, never what the oracle's code runs.

A spoke of the worker: it holds the worker it was given; it imports only the protocol and the worker's errors.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

from .errors import named

if TYPE_CHECKING:
    from .server import Worker

# How a name the oracle's class defines is reached from here (the oracle sends the kind with each name).
METHOD, PROPERTY, CLASSMETHOD, STATICMETHOD = "m", "p", "c", "s"


@named
class Shadows:
    """The shadow classes built here (each with the reference of its oracle class) and the oracle twin of each of
    their instances."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.classes: dict[int, tuple[type, Any]] = {}  # id(shadow) → (the shadow, its oracle class's reference)
        self.twins: dict[int, tuple[Any, Any]] = {}  # id(instance) → (the instance, its oracle twin's reference)

    def build(self, name: str, qualname: str, module: str, bases: tuple[type, ...], over: list[list[str]],
              data: dict[str, Any], oracle: Any, kwargs: dict[str, Any]) -> type:
        """The shadow of an oracle class: ``bases`` (the candidate's classes, or the shadows of the oracle's),
        a stub for each ``[name, kind]`` of ``over``, ``data`` as class attributes, ``oracle`` the oracle class's
        reference. The candidate's metaclass and ``__init_subclass__`` run (with ``kwargs``), as in one process."""
        namespace: dict[str, Any] = {"__module__": module, "__qualname__": qualname, **data}
        for attr, kind in over:
            namespace[attr] = self._stub(attr, kind, oracle)
        shadow = types.new_class(name, bases, dict(kwargs), lambda ns: ns.update(namespace))
        self.classes[id(shadow)] = (shadow, oracle)
        return shadow

    def _stub(self, attr: str, kind: str, oracle: Any) -> Any:
        shadows = self

        if kind in (CLASSMETHOD, STATICMETHOD):
            def on_class(*args: Any, **kwargs: Any) -> Any:
                return oracle._vg("invoke", *args, name=attr, kw=kwargs)

            on_class.__name__ = on_class.__qualname__ = attr
            return staticmethod(on_class)
        if kind == PROPERTY:
            return property(lambda self: shadows.twin(self)._vg("getattr", name=attr),
                            lambda self, value: shadows.twin(self)._vg("setattr", value, name=attr),
                            lambda self: shadows.twin(self)._vg("delattr", name=attr))

        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            return shadows.twin(self)._vg("invoke", *args, name=attr, kw=kwargs)

        method.__name__ = method.__qualname__ = attr
        return method

    def is_shadow(self, cls: Any) -> bool:
        found = self.classes.get(id(cls))
        return found is not None and found[0] is cls

    def oracle_class(self, cls: Any) -> Any:
        """The oracle class's reference of the first shadow in ``cls``'s method resolution order, or ``None``."""
        for klass in getattr(cls, "__mro__", ()):
            found = self.classes.get(id(klass))
            if found is not None and found[0] is klass:
                return found[1]
        return None

    def adopt(self, instance: Any, twin: Any) -> None:
        """``instance`` (made for the oracle's class) has ``twin``, the oracle's object, as its other half."""
        self.twins[id(instance)] = (instance, twin)

    def twin(self, instance: Any) -> Any:
        """The oracle twin of an instance of a shadow; made now (the oracle makes its object) for one candidate
        code made itself (``type(self)(...)``, ``copy.copy``)."""
        found = self.twins.get(id(instance))
        if found is not None and found[0] is instance:
            return found[1]
        oracle = self.oracle_class(type(instance))
        if oracle is None:
            raise TypeError(f"{type(instance).__qualname__!r} is no class of the oracle's")
        from .. import codec

        twin = oracle._vg("twin", self.worker.hold(instance), codec.mro_names(type(instance)))
        self.adopt(instance, twin)
        return twin


def inherited(obj: Any, name: str, shadows: Shadows) -> Any:
    """``name`` of ``obj`` (an instance, or a class) as its first class that is not a shadow defines it
    (``super()`` from the oracle's class: the candidate's implementation, never the stub that would call the oracle
    back), bound to ``obj``.

    Raises:
        AttributeError: no such class defines it."""
    owner = obj if isinstance(obj, type) else type(obj)  # a class: super().parse(…) from a classmethod
    for klass in owner.__mro__:
        if shadows.is_shadow(klass):
            continue
        found = vars(klass).get(name, _MISSING)
        if found is not _MISSING:
            get = getattr(type(found), "__get__", None)
            if get is None:
                return found
            return get(found, None, obj) if obj is owner else get(found, obj, owner)
    raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")


_MISSING = object()
