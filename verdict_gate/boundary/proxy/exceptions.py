"""Exceptions across the boundary (docs/design.md §8.1): the candidate's classes as local mirror classes
named and ranked like theirs (:func:`mirror_exception`: ``pytest.raises(orders.InvalidOrder)`` works), its
raised exceptions rebuilt as data with their frames and what they were raised from (:func:`exception_from`),
and the oracle's own exceptions as data for the worker (:func:`body`).

A spoke of the oracle side: it asks through the client it is given (or, to build a mirror class's instance,
the client of this process); this module imports only the protocol, the codec and the errors.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import codec
from ..protocol import EXCEPTION, GETATTR
from .errors import (
    BoundaryError,
    CandidateBaseException,
    CandidateKeyboardInterrupt,
    CandidateStopIteration,
    named,
)

if TYPE_CHECKING:
    from .client import Client


def _no_client() -> Client | None:
    return None


# The client of this process, for a mirror class called in a property (no client at hand): set by the hub.
current_client: Callable[[], Client | None] = _no_client

_MIRRORS: dict[Any, type] = {}


def _builtin_exception(name: str) -> type | None:
    import builtins

    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None


@named
class _MirrorMeta(type):
    """Metaclass of mirror exception classes: calling one in the oracle (an expected exception built in a test,
    ``TOMLDecodeError(msg, doc, pos)``) runs the candidate's constructor in the worker, so its message, its
    ``args`` and its warnings are the candidate's; ``pytest.raises`` and ``isinstance`` use the local class."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        client = current_client()
        ref = cls.__dict__.get("_vg_ref")
        if client is None or client.proc is None or not ref:
            return type.__call__(cls, *args, **kwargs)
        answer, generation = client.roundtrip({"op": EXCEPTION, "obj": {"ref": list(ref)},
                                               "args": client.encode(list(args)),
                                               "kw": [[k, client.encode(v)] for k, v in kwargs.items()]})
        if "exc" not in answer:
            client.result(answer, generation)  # raises what the constructor raised
            raise client.crash("the worker built no exception")
        exc = exception_from(client, answer["exc"], generation)
        exc.__dict__.pop("__verdict_gate_origin__", None)  # built for the oracle: raised, it is the oracle's
        client.swallowed(None)
        return exc


def _mirror_str(self: BaseException) -> str:
    message = self.__dict__.get("_vg_msg")
    return message if isinstance(message, str) else Exception.__str__(self)


def _mirror_getattr(self: BaseException, name: str) -> Any:
    """A public attribute of the candidate's exception (``excinfo.value.code``), read from the worker."""
    held = self.__dict__.get("__verdict_gate_raised__")
    client = self.__dict__.get("_vg_client")
    if name.startswith("_") or held is None or client is None or self.__dict__.get("_vg_gen") != client.generation:
        raise AttributeError(name)
    return client.request({"op": GETATTR, "obj": {"id": held}, "name": name})


def _stdlib_exception(module: str, qualname: str) -> type | None:
    """The standard library's own exception class ``module.qualname`` (``json.decoder.JSONDecodeError``) as this
    process has it, so ``pytest.raises(json.JSONDecodeError)`` catches what the candidate's ``json.loads`` raised;
    ``None`` for a class of any other module (a candidate's is mirrored)."""
    if module == "builtins" or module.partition(".")[0] not in sys.stdlib_module_names or module not in sys.modules:
        return None
    found: Any = sys.modules[module]
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def mirror_exception(mro: Sequence[Sequence[str]], base: type = Exception, *, ordinary_stop: bool = False) -> type:
    """A local exception class standing for a candidate's, ranked like it: builtin classes are
    themselves (``SystemExit``, ``KeyboardInterrupt`` and ``GeneratorExit`` as themselves, a candidate's
    other ``BaseException``-only classes as :class:`CandidateBaseException`), the standard library's its own
    (:func:`_stdlib_exception`); every other class in the chain is a local class with the candidate's module and
    qualified name, one per candidate class. ``ordinary_stop``: ``StopIteration`` and ``StopAsyncIteration`` (and
    subclasses) become ordinary exceptions (a candidate call other than ``__next__`` must not end the oracle's
    loop)."""
    chain = [(str(m), str(q)) for m, q in mro if not (m == "builtins" and q in ("object", "BaseException"))]
    # One candidate class, one local class: the choice matters only to a class that is a StopIteration.
    ordinary_stop = ordinary_stop and any(n in (("builtins", "StopIteration"), ("builtins", "StopAsyncIteration"))
                                          for n in chain)
    for module, qualname in reversed(chain):
        stdlib = _stdlib_exception(module, qualname)
        if stdlib is not None and issubclass(stdlib, base):
            base = stdlib
            continue
        if module == "builtins":
            found = _builtin_exception(qualname)
            if found is None:
                continue
            if ordinary_stop and found in (StopIteration, StopAsyncIteration):
                found = CandidateStopIteration
            elif found is KeyboardInterrupt:
                found = CandidateKeyboardInterrupt
            elif not issubclass(found, Exception) and found not in (SystemExit, GeneratorExit):
                found = CandidateBaseException
            if issubclass(found, base) or found in (SystemExit, GeneratorExit, CandidateKeyboardInterrupt):
                base = found
            continue
        key = (module, qualname, base, ordinary_stop)
        if key not in _MIRRORS:
            name = qualname.rsplit(".", 1)[-1]
            _MIRRORS[key] = _MirrorMeta(name, (base,), {"__module__": module, "__qualname__": qualname,
                                                        "_vg_mirror": True, "_vg_ref": [module, qualname],
                                                        "__str__": _mirror_str, "__getattr__": _mirror_getattr})
        base = _MIRRORS[key]
    return base


def _local_exception(cls: type, *args: Any) -> BaseException:
    """An instance of a (mirror) exception class built here, never by the candidate's constructor; a class of the
    standard library whose constructor takes other arguments than its ``args`` (``JSONDecodeError(msg, doc,
    pos)`` keeps only ``msg``) is made without it, holding those ``args``."""
    try:
        exc = type.__call__(cls, *args)
    except Exception:
        exc = cls.__new__(cls, *args)
        exc.args = args
    assert isinstance(exc, BaseException)
    return exc


def exception_from(client: Client, body: dict[str, Any], generation: int, op: str = "",
                   depth: int = 0) -> BaseException:
    """The candidate's exception, raised again here as data (builtin or mirrored class), marked as raised by
    the candidate (its signature's ``origin``) with the worker's frames and what it was raised from; an
    oracle exception that came back through candidate code is the oracle's own object again."""
    oracle = body.get("o")
    if type(oracle) is int and isinstance(client.local.get(oracle), BaseException):
        return client.local[oracle]
    cls = mirror_exception(body["t"], ordinary_stop=op != "__next__")
    message = str(body.get("msg", ""))
    exc: BaseException | None = None
    if body.get("args") is not None:
        try:
            args = client.decode(body["args"], generation)
            exc = _local_exception(cls, *args) if isinstance(args, tuple) else None
        except Exception:
            exc = None
    if exc is None or (message and str(exc) != message and cls.__module__ == "builtins"
                       and cls is not CandidateStopIteration):
        try:
            exc = _local_exception(cls, message)
        except Exception:
            exc = _local_exception(mirror_exception([[cls.__module__, cls.__qualname__], ["builtins", "Exception"]]),
                                   message)
    if cls is CandidateBaseException or (not client.as_itself and issubclass(cls, (SystemExit, KeyboardInterrupt,
                                                                                  GeneratorExit))):
        # Outside a test's call (at collection, in a fixture) pytest would stop on these: an ordinary exception.
        names = ".".join(body["t"][0])
        exc = CandidateBaseException(f"{names}: {message}")
    with contextlib.suppress(Exception):  # an exception class with __slots__ cannot carry them
        setattr(exc, "__verdict_gate_frames__", [list(f) for f in body.get("tb") or []])  # noqa: B010
        setattr(exc, "__verdict_gate_origin__", "candidate")  # noqa: B010
        if type(body.get("h")) is int:
            setattr(exc, "__verdict_gate_raised__", body["h"])  # noqa: B010
        if getattr(type(exc), "_vg_mirror", False):
            exc.__dict__.update({"_vg_msg": message, "_vg_client": client, "_vg_gen": generation})
    if depth < 3:  # raised from: pytest's report and `raise ... from` checks read these
        with contextlib.suppress(Exception):
            for key, attr in (("cause", "__cause__"), ("ctx", "__context__")):
                if isinstance(body.get(key), dict):
                    setattr(exc, attr, exception_from(client, body[key], generation, depth=depth + 1))
            exc.__suppress_context__ = bool(body.get("sc"))
    return exc


def body(client: Client, exc: BaseException) -> dict[str, Any]:
    """An exception of the oracle's as data for the worker; its id comes back with it if candidate code
    lets it propagate, and the oracle then raises its own object."""
    try:
        args = client.encode(tuple(exc.args))
    except Exception:
        args = None
    try:
        message = str(exc)[:16_384]
    except Exception:
        message = type(exc).__name__
    found = {"t": codec.mro_names(type(exc)), "args": args, "msg": message}
    with contextlib.suppress(BoundaryError):
        found["o"] = client.reference(exc)["o"]["id"]
    return found
