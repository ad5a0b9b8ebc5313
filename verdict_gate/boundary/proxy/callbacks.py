"""Callbacks: what the worker may do with an oracle object it holds by reference (docs/design.md §8.1,
"Callbacks"): its protocol and nothing else, each verb of :data:`..protocol.VERBS` answered by its handler
in :data:`HANDLERS`; and which oracle iterators the worker may read ahead (below, "Batching").

A spoke of the oracle side: :class:`Callbacks` holds the client it is given and answers the worker's ``cb``
frames through it; this module imports only the protocol, the codec and the errors.

Read ahead (docs/design.md §8.1 "Batching"): candidate code that loops over an oracle iterator
(``cache.update((i, i) for i in range(2000))``) takes one item per round trip unless the items may be read
before it asks for them. That is exact only for an
iterator whose items nothing can change between two of them, and whose reading has no effect of its own:

- a ``range``, ``str``, ``bytes`` or ``tuple`` iterator (a tuple of ``None``, ``bool``, ``int``, ``float``,
  ``complex``, ``str`` or ``bytes`` only), or
- a generator expression over one that reads no name of its own (no global, attribute or call: its code
  has no ``co_names``, no free or cell variables) and has no ``if`` or nested ``for`` (its bytecode is
  made only of :data:`_PLAIN_OPS`), so it yields exactly one item per item of its source.

Items are read from a :func:`shadow` copy, never from the oracle's iterator, which moves only by the
items candidate code took. An expression that raises is read to the exception on the copy, and the oracle's
own raises it too when candidate code has taken that far.
"""

from __future__ import annotations

import collections.abc
import copy
import dis
import operator
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import codec
from ..protocol import CALLBACK, MAX_BATCH, MAX_CALLBACKS, MAX_DEPTH
from .errors import _Refused, control_flow, named

if TYPE_CHECKING:
    from .client import Client

# Modules whose objects never answer attribute callbacks: the judge's own (pytest, pluggy, Hypothesis, this
# package, the plugin), so a fixture object the oracle hands over cannot lead into its machinery.
_INTERNAL = ("_pytest", "pytest", "pluggy", "hypothesis", "_hypothesis", "py", "_verdict_gate_boundary",
             "verdict_gate", "verdict_gate_plugin", "sys", "builtins", "importlib", "gc", "inspect", "types")


@named
class Callbacks:
    """The oracle's side of the callbacks of one client: it answers the worker's ``cb`` frames and keeps the
    iterators it read ahead."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.count = 0  # callbacks answered in this property (capped: MAX_CALLBACKS)
        # reference id → (iterator read ahead, its position then, items sent ahead that the worker has not taken)
        self.ahead: dict[int, tuple[Any, Any, int]] = {}

    def serve(self, req: dict[str, Any]) -> dict[str, Any]:
        """Answer one callback (the worker's ``cb`` frame) about an oracle object: its value, or the
        exception the oracle's code raised (which candidate code then sees, as in plain Python)."""
        client = self.client
        self.count += 1
        if self.count > MAX_CALLBACKS:
            client.limit(f"more than {MAX_CALLBACKS} callbacks into the oracle in one property")
            return {"fail": f"more than {MAX_CALLBACKS} callbacks into the oracle in one property"}
        if client.depth >= MAX_DEPTH:
            client.limit(f"calls nested more than {MAX_DEPTH} deep across the isolation boundary")
            return {"fail": f"calls nested more than {MAX_DEPTH} deep across the isolation boundary"}
        generation = client.generation
        if req.get("op") != CALLBACK or type(req.get("obj")) is not int or req["obj"] not in client.local:
            return {"raise": {"t": [["builtins", "AttributeError"]],
                              "msg": "the worker asked about an oracle object it does not hold"}}
        try:  # the request itself: a part of a shape no worker of ours sends is the candidate's crash, never an
            # exception of the oracle's the worker could then hold and raise back as the oracle's own
            obj = client.local[req["obj"]]
            do = req["do"] if type(req.get("do")) is str else str(req.get("do"))
            args = client.decode(req.get("args") or [], generation)
            n = min(max(int(req.get("n") or 1), 1), MAX_BATCH) if do == "next" else 0
            kwargs = {str(k): client.decode(v, generation) for k, v in req.get("kw") or []} if do != "next" else {}
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
                codec.ProtocolError) as bad:
            raise client.crash(f"the worker sent a malformed callback ({type(bad).__name__}: {str(bad)[:200]})") \
                from None
        client.depth += 1
        try:
            if do == "next":
                if req.get("ra") is True:
                    return self.read_ahead(req["obj"], obj, n)
                return self.next_batch(obj, n)
            # While the oracle's code runs, the channel is idle (the worker waits for this answer and serves
            # requests nested in it): the oracle's other threads may use it meanwhile (a pool's threads
            # calling the candidate, its task thread pickling a handle). Only the oracle's code runs without
            # the lock: decoding the arguments and encoding the result touch the client's tables, and every
            # exchange holds it from its request to its answer, so frames stay strictly nested.
            held = client.lock._release_save()  # type: ignore[attr-defined]
            try:
                value = apply(client, obj, do, args, kwargs, req.get("name"))
            finally:
                client.lock._acquire_restore(held)  # type: ignore[attr-defined]
            answer = {"ok": client.link_result(value)}
            changed = self._changed_arguments(req, args, kwargs)
            if changed:
                answer["mut"] = changed
            return answer
        except (KeyboardInterrupt, SystemExit) as exc:
            if getattr(exc, "__verdict_gate_origin__", None) != "candidate":
                raise  # the oracle process's own (Ctrl-C): never handed to candidate code
            return {"raise": client.exception_body(exc)}
        except codec.Unencodable as exc:
            message = f"an oracle callback's result cannot cross the isolation boundary: {exc}"
            client.limit(message)
            return {"fail": message}
        except (codec.ProtocolError, _Refused) as exc:
            return {"raise": {"t": [["builtins", "AttributeError"]], "msg": str(exc)[:2000]}}
        except BaseException as exc:  # the oracle's code raised: candidate code sees it, as in plain Python
            if control_flow(exc):
                client.raised_in_callbacks.append(exc)
            return {"raise": client.exception_body(exc)}
        finally:
            client.depth -= 1

    def _changed_arguments(self, req: dict[str, Any], args: Any, kwargs: dict[str, Any]) -> list[list[Any]]:
        """``[[position or name, new state], …]`` of the list, dict, set and bytearray arguments of a callback the
        oracle's code changed in place (a transform a test hands to tinydb's ``update`` adds to the document it
        is given): they came by value, and the worker changes its own the same way, as one process would."""
        out: list[list[Any]] = []
        sent: list[tuple[Any, Any]] = [*enumerate(req.get("args") or []), *(tuple(kv) for kv in req.get("kw") or [])]
        given: dict[Any, Any] = dict(enumerate(args if isinstance(args, list) else []))
        given.update(kwargs)
        for key, tree in sent:
            value = given.get(key)
            if type(value) in (list, dict, set, bytearray):
                now = self.client.encode(value, top=False)
                if now != tree:
                    out.append([key, now])
        return out

    def next_batch(self, it: Any, n: int) -> dict[str, Any]:
        """Up to ``n`` items of the oracle's iterator ``it``, and how it ended if it did (``end``, ``then``)."""
        client = self.client
        items: list[Any] = []
        for _ in range(n):
            try:
                items.append(next(it))
            except StopIteration:
                return {"ok": [client.encode(i) for i in items], "end": True}
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:
                if control_flow(exc):
                    client.raised_in_callbacks.append(exc)
                if not items:
                    return {"raise": client.exception_body(exc)}
                return {"ok": [client.encode(i) for i in items], "then": client.exception_body(exc)}
        return {"ok": [client.encode(i) for i in items]}

    # Read ahead (docs/design.md §8.1 "Batching"): a candidate loop over an oracle iterator whose items
    # nothing can change (a range, str, bytes or tuple iterator of plain values, or a generator expression
    # with no names of its own over one) gets its items in batches although candidate code runs between two
    # of them. They are read from a copy (:func:`shadow`); the oracle's own iterator moves only by the
    # items candidate code took (``took``, before any of the oracle's code runs), and the worker forgets
    # what it holds once the oracle's code has moved the iterator itself (``drop``).

    def read_ahead(self, rid: int, it: Any, n: int) -> dict[str, Any]:
        read = shadow(it)
        if read is None:
            return self.next_batch(it, 1)
        answer = self.next_batch(read, n)
        answer["ra"] = True
        _it, _where, left = self.ahead.get(rid, (it, None, 0))
        # Each item sent counts, and so does how the copy ended (its end, or its exception): the worker takes
        # that too, and the oracle's own iterator then ends the same way.
        sent = len(answer.get("ok") or ()) + ("end" in answer or "then" in answer or "raise" in answer)
        self.ahead[rid] = (it, position(it), left + sent)
        return answer

    def took(self, frame: dict[str, Any]) -> None:
        """Move the oracle's iterators by the items candidate code took of what was read ahead (``took``): never by
        more than this side sent and the worker has not said it took already (the oracle counts its own
        iterators; a worker that says more moves nothing more)."""
        for rid, n in frame.get("took") or ():
            state = self.ahead.get(rid) if type(rid) is int and type(n) is int else None
            if state is None:
                continue
            it, _where, left = state
            taken = 0
            for _ in range(max(0, min(n, left))):
                try:
                    next(it)
                except Exception:  # the copy ended so too: candidate code has had that end already
                    break
                taken += 1
            self.ahead[rid] = (it, position(it), left - taken)

    def moved(self, frame: dict[str, Any]) -> None:
        """Tell the worker which iterators the oracle's own code moved since it read them ahead."""
        moved = [rid for rid, (it, where, _left) in self.ahead.items() if position(it) != where]
        if moved:
            for rid in moved:
                del self.ahead[rid]
            frame["drop"] = moved


# --- the verbs: what the worker may do with an oracle object (docs/design.md §8.1) -------------------------
#
# Never a private or special attribute (``__globals__``, ``__code__``, ``__closure__``, frames, ``__self__``,
# ``__class__``, ``__subclasses__`` …), never an attribute of a module, a function or a class, never a module:
# only what a plain value of that protocol offers, and the public attributes of a test's own instance.
# Callbacks run the oracle's code in this process; their results cross by the same codec (an oracle object by
# reference again). Each handler takes ``(client, obj, do, args, kwargs, name)``.

Handler = Callable[["Client", Any, str, list[Any], dict[str, Any], Any], Any]


def apply(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    """What verb ``do`` of the worker gives of the oracle's ``obj`` (the pack's modules answer their own).

    Raises:
        what the oracle's code raised (candidate code sees it, as in plain Python); ``_Refused`` for a verb
        the object does not answer.
    """
    if isinstance(obj, (_PackModules, _PackModule)):
        return obj.answer(client, do, name)
    handler = HANDLERS.get(do)
    if handler is None:
        raise _refusal(obj, do, name)
    return handler(client, obj, do, args, kwargs, name)


def _refusal(obj: Any, do: str, name: Any) -> _Refused:
    return _Refused(f"an oracle {type(obj).__name__} answers no {do} {name or ''} across the isolation boundary"
                    .rstrip())


def _one(args: list[Any]) -> Any:
    return args[0] if args else None


def _public(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and not name.startswith("_")


def _pickle(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    # What plain pickle says of this object, for candidate code pickling a value that holds it (the worker
    # keeps it by reference: the bytes are dropped). Never of the judge's own objects.
    import pickle

    if type.__dict__["__module__"].__get__(type(obj)).partition(".")[0] in _INTERNAL and \
            not isinstance(obj, (type, types.FunctionType)):
        raise _Refused("an object of the judge's own machinery is never pickled for candidate code")
    pickle.dumps(obj)
    return None


def _call(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    if not callable(obj):
        raise _Refused(f"a {type(obj).__name__} of the oracle is not callable")
    return obj(*args, **kwargs)


def _invoke(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    # A stub of a shadow (worker/shadows.py): a method the oracle's class defines itself, run here with its
    # closures; never any other attribute of the object or the class.
    if not (isinstance(name, str) and name in _overrides(obj)):
        raise _refusal(obj, do, name)
    return getattr(obj, name)(*args, **kwargs)


def _twin(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    # An instance of a shadow candidate code made itself: its other half here, an instance of the oracle class.
    if not (isinstance(obj, client.ProxyType) and obj.__dict__.get("_vg_oracle") and len(args) == 2
            and type(args[0]) is int and isinstance(args[1], list)):
        raise _refusal(obj, do, name)
    return ByReference(client.twin(obj, {"k": "obj", "t": args[1], "id": args[0]}))


def _overrides(obj: Any) -> Any:
    """What the oracle class of ``obj`` (an instance of it, or the class) defines itself; empty for anything else."""
    for klass in (obj if isinstance(obj, type) else type(obj)).__mro__:
        over = klass.__dict__.get("_vg_over")
        if over is not None:
            return over
    return ()


@named
class ByReference:
    """A callback's result the worker must hold by reference, though it is a handle (an oracle twin)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj


def _simple(fn: Callable[[Any], Any]) -> Handler:
    def handler(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
        return fn(obj)

    return handler


def _compare(method_name: str) -> Handler:
    def handler(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
        # the object's own answer; NotImplemented lets the worker reflect it there
        method = getattr(type(obj), method_name, None)
        return NotImplemented if method is None else method(obj, _one(args))

    return handler


def _enter(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    if not hasattr(type(obj), "__enter__"):
        raise _refusal(obj, do, name)
    return obj.__enter__()


def _exit(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    if not hasattr(type(obj), "__exit__"):
        raise _refusal(obj, do, name)
    one = _one(args)
    return bool(obj.__exit__(None, None, None) if one is None else obj.__exit__(type(one), one, None))


def _signature_of(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    if not callable(obj):
        raise _refusal(obj, do, name)
    return signature(obj)


def _dict(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    # The instance's own __dict__, its public names only (worker refs._InstanceDict): cachetools' descriptors keep
    # what they made there; a write that would bind behaviour over the class's own is refused (_data_only).
    own = getattr(obj, "__dict__", None) if (_pack_class(obj, client) or _oracle_function(obj)) else None
    what, key = (args + [None, None])[:2]
    if not isinstance(own, dict) or what not in ("get", "set", "del", "keys", "has") or \
            (what != "keys" and not _public(key)):
        raise _refusal(obj, do, name)
    if what == "keys":
        return [k for k in own if _public(k)]
    if what == "has":
        return key in own
    if what == "get":
        return own[key]
    if what == "del":
        del own[key]
        return None
    _data_only(client, obj, key, args[2] if len(args) > 2 else None)
    own[key] = args[2] if len(args) > 2 else None
    return None


def _vars(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    # The public data only, as a copy: never the private state of a test's object, and never a way to bind
    # behaviour onto it (docs/design.md §8.1, "Data, never behaviour"); setattr is the way to change its data.
    if not ((_pack_class(obj, client) or _oracle_function(obj)) and isinstance(getattr(obj, "__dict__", None), dict)):
        raise _refusal(obj, do, name)
    return {k: v for k, v in obj.__dict__.items() if _public(k)}


def _check(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    if not isinstance(obj, type):
        raise _Refused("not a class")
    one = _one(args)
    return isinstance(one, obj) if do == "instancecheck" else isinstance(one, type) and issubclass(one, obj)


def _getattr(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    if not ((_public(name) and (_pack_class(obj, client) or _oracle_function(obj))) or name in _overrides(obj)):
        raise _refusal(obj, do, name)
    return getattr(obj, name)


def _setattr(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    function_data = _oracle_function(obj) and name in _FUNCTION_DATA
    if not ((_public(name) and (_pack_class(obj, client) or _oracle_function(obj))) or function_data
            or name in _overrides(obj)):
        raise _refusal(obj, do, name)
    _data_only(client, obj, name, _one(args))
    setattr(obj, name, _one(args))
    return None


def _delattr(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    if not (_public(name) and (_pack_class(obj, client) or _oracle_function(obj))):
        raise _refusal(obj, do, name)
    delattr(obj, name)
    return None


def _oracle_function(obj: Any) -> bool:
    """A function of the oracle's (a test's helper, a lambda): its attributes are data candidate code may read
    and set, as a decorator does (jmespath's ``@signature(...)`` sets ``func.signature``); its code, globals,
    closure and defaults never cross. A method bound to an object is its function's (``functools.update_wrapper``
    of ``self.func`` reads the function's ``__dict__``, as Python's method does)."""
    return type(obj) is types.FunctionType or (type(obj) is types.MethodType and
                                               type(obj.__func__) is types.FunctionType)


# A function's data besides its __dict__ that functools.update_wrapper sets (its name, its docstring).
_FUNCTION_DATA = frozenset({"__name__", "__qualname__", "__doc__", "__module__"})


def _data_only(client: Client, obj: Any, name: str, value: Any) -> None:
    """Refuse binding behaviour onto an oracle object (docs/design.md §8.1, "Data, never behaviour"): a callable, a
    class or a descriptor (a candidate function, an object with ``__call__``), which the oracle's own code would
    run believing it its own (a ``Mock``'s ``assert_called_once_with``, a test's method); a function's name or
    docstring that is not a string."""
    if name in _FUNCTION_DATA:
        if value is not None and type(value) is not str:
            raise _Refused(f"an oracle function's {name} is a string")
        return
    if isinstance(value, client.Handle):
        behaviour = value._vg_desc.get("k") in ("fn", "cls") or bool(value._vg_desc.get("dg"))
    else:
        behaviour = callable(value) or isinstance(value, type) or hasattr(type(value), "__get__")
    if not behaviour:
        return
    # Behaviour over what the object's class defines itself (a Mock's assert_called_once_with, a test's method) is
    # refused; over a candidate's descriptor on the class (cachetools' cachedmethod), or a name the class lacks,
    # it is the candidate's own already.
    import inspect

    owner = inspect.getattr_static(type(obj), name, _MISSING)
    if owner is not _MISSING and not (isinstance(owner, client.Handle) or client.is_candidate_class(owner)):
        raise _Refused(f"candidate code may set data on an oracle {type(obj).__name__}, never behaviour: {name!r} "
                       f"would be bound over its class's own {type(owner).__name__}")


def _setitem(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    if not _pack_class(obj, client):
        raise _refusal(obj, do, name)
    obj[_one(args)] = args[1]
    return None


def _delitem(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    if not _pack_class(obj, client):
        raise _refusal(obj, do, name)
    del obj[_one(args)]
    return None


def _dir(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    return sorted(n for n in dir(obj) if not n.startswith("_")) if _pack_class(obj, client) else []


def _refuse(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    raise _refusal(obj, do, name)


def _contains(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    return _one(args) in obj


def _getitem(client: Client, obj: Any, do: str, args: list[Any], kwargs: dict[str, Any], name: Any) -> Any:
    return obj[_one(args)]


# The verbs of protocol.VERBS, each answered by one handler. ``next`` is answered in batches by
# :meth:`Callbacks.next_batch` (it takes ``n`` and ``ra``); ``module`` only by the pack's modules (above).
HANDLERS: dict[str, Handler] = {
    "pickle": _pickle, "call": _call, "invoke": _invoke, "twin": _twin,
    "iter": _simple(iter), "len": _simple(len), "bool": _simple(bool), "hash": _simple(hash),
    "index": _simple(operator.index), "int": _simple(int), "float": _simple(float),
    "repr": _simple(lambda obj: repr(obj)[:16_384]), "str": _simple(lambda obj: str(obj)[:1 << 20]),
    "getitem": _getitem, "contains": _contains,
    "eq": _compare("__eq__"), "ne": _compare("__ne__"), "lt": _compare("__lt__"), "le": _compare("__le__"),
    "gt": _compare("__gt__"), "ge": _compare("__ge__"),
    "enter": _enter, "exit": _exit, "signature": _signature_of, "vars": _vars, "dict": _dict,
    "instancecheck": _check, "subclasscheck": _check,
    "getattr": _getattr, "setattr": _setattr, "delattr": _delattr, "setitem": _setitem, "delitem": _delitem,
    "dir": _dir, "next": _refuse, "module": _refuse,
}


@named
class _PackModules:
    """What the worker's importer of the oracle's modules asks (``worker.refs._PackImporter``): a module of the pack
    that this process imported, by its name, as a :class:`_PackModule`; ``None`` for any other name."""

    def answer(self, client: Client, do: str, name: Any) -> Any:
        if do != "module" or type(name) is not str:
            raise _Refused("the oracle's modules answer only which of them is the pack's")
        module = sys.modules.get(name)
        if not isinstance(module, types.ModuleType) or isinstance(module, client.ProxyModule):
            return None
        where = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or ())]
        if not any(type(path) is str and any(path.startswith(root) for root in client.oracle_roots)
                   for path in where):
            return None  # the standard library's, a library's, pytest's, the gate's: never
        found = client.pack_modules.get(name)
        if found is None or found.module is not module:
            found = client.pack_modules[name] = _PackModule(module)
        return found


@named
class _PackModule:
    """A test module of the pack as candidate code sees it when it imports the module by name (toolz's curry
    finds a decorated function by its ``__module__`` and ``__qualname__``): a public name whose value the
    worker holds already (a candidate object, or an oracle object it was handed) and nothing else; every other
    name is missing, so neither the module's other values (a test's expected answers) nor its imports (pytest,
    the plugin) are reachable."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module

    def answer(self, client: Client, do: str, name: Any) -> Any:
        if do == "getattr" and type(name) is str and name.isidentifier() and not name.startswith("_"):
            value = self.module.__dict__.get(name, _PackModule)
            if isinstance(value, (client.Handle, client.ProxyModule)) or type(value) is client.RecordMeta or \
                    client.is_candidate_class(value) or \
                    (id(value) in client.local_ids and client.local.get(client.local_ids[id(value)]) is value):
                return value
            raise AttributeError(f"module {self.module.__name__!r} has no attribute {name!r} that candidate code "
                                 "may read (only what it holds already)")
        raise _Refused(f"a module of the pack answers no {do} across the isolation boundary")


def _pack_class(obj: Any, client: Client) -> bool:
    """An object whose public attributes a callback may read and set: an instance of a test's own class, of a
    library's or of the standard library's (a file, a lock, an ``argparse.Namespace`` the test handed over),
    never a module, a class, a function or method, a frame, nor an object of the judge's own machinery
    (:data:`_INTERNAL`)."""
    if isinstance(obj, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                        types.CodeType, types.FrameType, types.TracebackType, types.GeneratorType,
                        types.CoroutineType, types.MethodWrapperType, types.WrapperDescriptorType,
                        types.MappingProxyType)):
        return False
    module = type.__dict__["__module__"].__get__(type(obj))
    return isinstance(module, str) and module.partition(".")[0] not in _INTERNAL


def caps(obj: Any) -> list[str]:
    """The operations an oracle object answers: the special methods its type defines (looked up in the type's
    own method resolution order: ``hasattr(type(obj), "__call__")`` is true of every class, through ``type``)."""
    defined = {name for c in type.__dict__["__mro__"].__get__(type(obj)) for name in vars(c)}
    caps = [cap for cap, name in (("call", "__call__"), ("iter", "__iter__"), ("next", "__next__"),
                                  ("len", "__len__"), ("getitem", "__getitem__"), ("setitem", "__setitem__"),
                                  ("delitem", "__delitem__"), ("contains", "__contains__"),
                                  ("index", "__index__"), ("int", "__int__"), ("float", "__float__"),
                                  ("enter", "__enter__"))
            if name in defined]
    if isinstance(obj, type):
        caps.append("type")
    else:  # the abstract classes candidate code tests with isinstance that no special method implies
        caps.extend(name for name, abc in _REGISTERED_ABCS if isinstance(obj, abc))
    return caps


_REGISTERED_ABCS = tuple((c.__name__, c) for c in (
    collections.abc.Mapping, collections.abc.MutableMapping, collections.abc.Sequence,
    collections.abc.MutableSequence, collections.abc.Set, collections.abc.MutableSet))


def signature(obj: Any) -> Any:
    """``inspect.signature`` of an oracle callable (the codec carries an ``inspect.Signature``: its defaults and
    annotations go as any value does), or the name of the exception ``inspect.signature`` raised, so candidate
    code introspecting a callback (toolz's curry and compose, ``functools``) sees what plain Python would."""
    import inspect

    try:
        return inspect.signature(obj)
    except (TypeError, ValueError) as exc:
        return type(exc).__name__


# --- read ahead --------------------------------------------------------------------------------------------

_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_PURE_SOURCES = frozenset(type(it) for it in (
    iter(range(0)), iter(range(1 << 100)), iter(""), iter("\u20ac"), iter(b""), iter(())))
_TUPLE_ITERATOR = type(iter(()))
# Loading and storing its own locals, constants, building values of them and the loop itself; versions
# 3.11 to 3.13. Anything else (a jump of an `if`, GET_ITER of a nested `for`, a call) is refused.
_PLAIN_OPS = frozenset({
    "RESUME", "RETURN_GENERATOR", "POP_TOP", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST",
    "LOAD_FAST_AND_CLEAR", "STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST", "LOAD_CONST",
    "RETURN_CONST", "RETURN_VALUE", "FOR_ITER", "END_FOR", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
    "YIELD_VALUE", "BUILD_TUPLE", "BUILD_LIST", "BINARY_OP", "UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_NOT",
    "UNPACK_SEQUENCE", "SWAP", "COPY", "CALL_INTRINSIC_1", "RERAISE", "CLEANUP_THROW", "END_SEND", "NOP",
    "CACHE", "EXTENDED_ARG", "PRECALL", "LIST_APPEND", "LIST_TO_TUPLE", "COMPARE_OP", "IS_OP",
})
_PLAIN_CODES: dict[types.CodeType, bool] = {}


def _pure_source(it: Any) -> bool:
    if type(it) not in _PURE_SOURCES:
        return False
    if type(it) is _TUPLE_ITERATOR:
        rest = it.__reduce__()[1][0]
        return all(type(x) in _SCALARS for x in rest)
    return True


def _plain_genexpr(code: types.CodeType) -> bool:
    known = _PLAIN_CODES.get(code)
    if known is None:
        known = (code.co_name == "<genexpr>" and not code.co_names and not code.co_freevars
                 and not code.co_cellvars and code.co_argcount == 1
                 and all(i.opname in _PLAIN_OPS for i in dis.get_instructions(code)))
        if len(_PLAIN_CODES) < 10_000:
            _PLAIN_CODES[code] = known
    return known


def _source(gen: types.GeneratorType) -> Any:
    """The iterator a suspended generator expression reads (its argument ``.0``), or ``None``."""
    frame = gen.gi_frame
    if frame is None or gen.gi_running or gen.gi_yieldfrom is not None:
        return None
    return frame.f_locals.get(".0")


def shadow(it: Any) -> Any:
    """A copy of ``it`` that yields what ``it`` would yield from here, read without moving ``it``; ``None``
    when ``it`` is not one of the iterators this module reads ahead."""
    if type(it) is types.GeneratorType:
        if not _plain_genexpr(it.gi_code):
            return None
        source = _source(it)
        if source is None or not _pure_source(source):
            return None
        body = types.FunctionType(it.gi_code, {"__builtins__": {}})
        return body(copy.copy(source))
    if _pure_source(it):
        return copy.copy(it)
    return None


def position(it: Any) -> Any:
    """Where ``it`` is: a value that changes when anything takes an item of it (its source's items left,
    or ``None`` once a generator has ended)."""
    if type(it) is types.GeneratorType:
        source = _source(it)
        return None if source is None else operator.length_hint(source)
    return operator.length_hint(it)


_MISSING = object()
