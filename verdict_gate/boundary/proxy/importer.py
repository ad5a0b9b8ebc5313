"""The import hook (docs/design.md §8.1): candidate modules as the oracle imports them.

:class:`Finder` is first on ``sys.meta_path`` for the top-level names the candidate's ``python_path``
provides (:mod:`..names`): a property's ``from orders.tax import tax_cents`` gets a :class:`ProxyModule`
whose attributes come from the worker (setting one sets it there; ``vars(module)`` is the candidate
module's namespace). A star import binds no builtin's name and no name the importer already bound.

A spoke of the oracle side: a proxy module holds the client it was made for and asks through it; this
module imports only the protocol and the errors.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..protocol import DELATTR, DIR, GETATTR, IMPORT, SETATTR, VARS
from .errors import BoundaryWarning, named

if TYPE_CHECKING:
    from .client import Client

_LOCAL_MODULE_ATTRS = frozenset({"__spec__", "__loader__", "__path__", "__package__", "__file__", "__cached__",
                                 "__builtins__", "__name__", "__doc__"})


@named
class ProxyModule(types.ModuleType):
    """A candidate module seen from the oracle: attributes are read from the worker; setting one sets it in
    the worker (``monkeypatch.setattr(module, "NAME", value)``); a list, dict or set read from it is the
    candidate's own, live; ``vars(module)`` and ``module.__dict__`` are the candidate module's namespace."""

    def __init__(self, name: str, client: Client | None = None) -> None:
        super().__init__(name)
        _own(self)["_vg_client"] = client

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__") and \
                name not in ("__all__", "__version__", "__file__", "__test__"):
            raise AttributeError(name)
        client = _client_of(self)
        if name == "__all__":
            return _star_names(self, client)
        value = client.request({"op": GETATTR, "obj": {"ref": [self.__name__, ""]}, "name": name})
        if isinstance(value, (type, ProxyModule)) or \
                (isinstance(value, client.Handle) and value._vg_desc.get("k") == "fn"):
            _own(self)[name] = value  # functions and classes are stable; values are read afresh
        return value

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        """The candidate module's namespace (its public names and ``__name__``, ``__doc__``, ``__all__``,
        ``__file__``), as the worker holds it now: a copy."""
        client = _client_of(self)
        found = client.request({"op": VARS, "obj": {"ref": [self.__name__, ""]}})
        if isinstance(found, dict):
            client.note_text(*found.values())
        return found if isinstance(found, dict) else {}

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LOCAL_MODULE_ATTRS or name.startswith("_vg_") or isinstance(value, ProxyModule):
            super().__setattr__(name, value)  # the import system's own attributes, a submodule
            return
        client = _client_of(self)
        client.request({"op": SETATTR, "obj": {"ref": [self.__name__, ""]}, "name": name,
                        "value": client.encode(value)})
        _own(self).pop(name, None)

    def __delattr__(self, name: str) -> None:
        if name in _LOCAL_MODULE_ATTRS or name.startswith("_vg_"):
            super().__delattr__(name)
            return
        client = _client_of(self)
        client.request({"op": DELATTR, "obj": {"ref": [self.__name__, ""]}, "name": name})
        _own(self).pop(name, None)

    def __dir__(self) -> list[str]:
        client = _client_of(self)
        names = client.request({"op": DIR, "obj": {"ref": [self.__name__, ""]}})
        return sorted((set(names) | set(_own(self))) - {"_vg_client"})


def _own(module: types.ModuleType) -> dict[str, Any]:
    """A module's own attribute dict (a :class:`ProxyModule` answers ``__dict__`` with the candidate's)."""
    found = vars(types.ModuleType)["__dict__"].__get__(module)
    assert isinstance(found, dict)
    return found


def _client_of(module: types.ModuleType) -> Client:
    client = _own(module).get("_vg_client")
    if client is None:
        raise AttributeError(f"{module.__name__} is not connected to a candidate worker")
    return client


_IMPORT_STAR = 84  # dis.opmap["IMPORT_STAR"] (3.11, 3.12)


def _star_names(module: ProxyModule, client: Client) -> list[str]:
    """``module.__all__``: the candidate's, or (without one) its public names, as a star import would bind
    them; in a star import, never a builtin's name or a name the importer already bound (docs/design.md §8.1:
    ``from candidate import *`` must not replace the ``sum`` an expected value is computed with)."""
    import builtins
    import dis

    try:
        names = client.request({"op": GETATTR, "obj": {"ref": [module.__name__, ""]}, "name": "__all__"})
        names = list(names) if not isinstance(names, client.Handle) else [str(n) for n in names]
    except AttributeError:
        names = [n for n in client.request({"op": DIR, "obj": {"ref": [module.__name__, ""]}})
                 if isinstance(n, str) and not n.startswith("_")]
    frame = sys._getframe(2)
    star = frame.f_code.co_code[frame.f_lasti] == dis.opmap.get("IMPORT_STAR", _IMPORT_STAR)
    if not star:
        return names
    bound = frame.f_globals
    kept = [n for n in names if isinstance(n, str) and not hasattr(builtins, n) and n not in bound]
    dropped = [n for n in names if n not in kept]
    if dropped:
        warnings.warn(f"from {module.__name__} import *: not bound (a builtin's name, or a name the importer "
                      f"already bound): {', '.join(map(str, dropped[:20]))}", BoundaryWarning, stacklevel=3)
    return kept


@named
class _Loader(importlib.abc.Loader):
    def __init__(self, client: Client) -> None:
        self.client = client

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = ProxyModule(spec.name, self.client)
        doc = spec.loader_state
        if type(doc) is str:
            # The candidate module's docstring, as it was imported: text, like a function's __doc__. A doctest
            # of it never runs here (_fence_doctest: testmod runs in the worker, anything else is refused).
            _own(module)["__doc__"] = doc
            self.client.note_text(doc)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


@named
class Finder(importlib.abc.MetaPathFinder):
    """Import hook: the names in ``names`` (top-level) are candidate modules, imported as proxies."""

    def __init__(self, client: Client, names: Iterable[str]) -> None:
        self.client, self.names = client, frozenset(names)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname.partition(".")[0]
        if top not in self.names:
            return None
        try:
            found = self.client.request({"op": IMPORT, "mod": fullname})
        except ModuleNotFoundError as exc:
            # A submodule the candidate's package does not have: not found, as Python says it, so
            # `from pkg import name` reports "cannot import name" (a proxy package has no search
            # path, so no other finder can serve it). A top-level module stays an error here.
            if "." in fullname and str(exc) == f"No module named {fullname!r}":
                return None
            raise
        spec = importlib.machinery.ModuleSpec(fullname, _Loader(self.client), origin="verdict-gate-worker",
                                              is_package=bool(found.get("pkg")), loader_state=found.get("doc"))
        if found.get("pkg"):
            spec.submodule_search_locations = []
        return spec




# --- a candidate module the judge imported too --------------------------------------------------------------

# The judge's own top-level modules: never the candidate's, whatever its directories hold (a candidate
# `hypothesis.py` changes nothing of the judge's).
JUDGE = frozenset({"pytest", "_pytest", "pluggy", "hypothesis", "py", "_verdict_gate_boundary", "verdict_gate",
                   "verdict_gate_plugin"})
_SAVED: dict[str, types.ModuleType] = {}  # the judge's copies of the shadowed modules, by full name
_SHADOWED: set[str] = set()  # their top-level names
_JUDGE_GLOBALS: dict[int, dict[str, Any]] = {}  # id → the namespace of every module loaded before the hook
_SWAP = threading.RLock()


def installed(name: str) -> bool:
    """Whether the oracle process's own ``sys.path`` has a top-level module ``name`` (beside the gate)."""
    return importlib.machinery.PathFinder.find_spec(name, sys.path) is not None


def judges(name: str) -> bool:
    """Whether ``name`` is one of the judge's modules (pytest's, Hypothesis's, the gate's)."""
    top = name.partition(".")[0]
    return top in JUDGE or top.startswith("_hypothesis")


def shadow(tops: Iterable[str]) -> None:
    """Serve the candidate's modules ``tops`` to the pack, although the judge imported a module of the same name
    first (pytest's ``packaging``, Hypothesis's ``attrs`` or ``sortedcontainers``): as plain pytest with the
    candidate's directories on ``PYTHONPATH``, the candidate's wins for the tests (docs/design.md §8.1).

    The judge's copies (and their submodules) leave ``sys.modules``, so the import hook serves the candidate's to
    the pack and to whatever the pack imports (``mock.patch("packaging.version.X")`` too); the modules loaded
    before now (the judge: pytest, Hypothesis, what they use, the standard library), and pytest's and Hypothesis's
    modules loaded later, get the judge's copies when they import one of these names again
    (:func:`_guarded_import`), so candidate code never answers for the judge."""
    import builtins

    tops = set(tops) - _SHADOWED
    if not tops:
        return
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType):
            _JUDGE_GLOBALS.setdefault(id(module.__dict__), module.__dict__)
        if name.partition(".")[0] in tops:
            _SAVED[name] = sys.modules.pop(name)
    _SHADOWED.update(tops)
    if getattr(builtins.__import__, "_vg_original", None) is None:
        original = builtins.__import__

        def guarded(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
            if globals is not None and _SHADOWED and _judges(globals):
                package = globals.get("__package__") or ""
                full = importlib.util.resolve_name("." * level + name, package) if level else name
                if full.partition(".")[0] in _SHADOWED:
                    return _judge_import(original, name, globals, locals, fromlist, level)
            return original(name, globals, locals, fromlist, level)

        guarded._vg_original = original  # type: ignore[attr-defined]
        builtins.__import__ = guarded


def _judges(namespace: Any) -> bool:
    """Whether an ``import`` comes from the judge: a module loaded before the hook, or one of pytest's or
    Hypothesis's loaded later."""
    if _JUDGE_GLOBALS.get(id(namespace)) is namespace:
        return True
    name = namespace.get("__name__") if type(namespace) is dict else None
    return type(name) is str and judges(name)


def _judge_import(original: Any, name: str, globals: Any, locals: Any, fromlist: Any, level: int) -> Any:
    """``import`` with the judge's copies of the shadowed modules in ``sys.modules`` (the proxies out) meanwhile."""
    with _SWAP:
        proxies = {n: m for n, m in sys.modules.items() if n.partition(".")[0] in _SHADOWED}
        for n in proxies:
            del sys.modules[n]
        sys.modules.update(_SAVED)
        try:
            return original(name, globals, locals, fromlist, level)
        finally:
            for n in [n for n in sys.modules if n.partition(".")[0] in _SHADOWED]:
                module = sys.modules.pop(n)
                _SAVED[n] = module
                if isinstance(module, types.ModuleType):
                    _JUDGE_GLOBALS.setdefault(id(module.__dict__), module.__dict__)
            sys.modules.update(proxies)
