"""The oracle side of the isolation boundary: proxy modules, handles, records, mirrored exceptions, and the
oracle objects the candidate holds by reference (docs/design.md §8.1, "Who answers what").

Part of the boundary package: standard library only, loaded by path by the pytest plugin (:mod:`..load`),
which uses :class:`Client` and :func:`install`. The hub is :mod:`.client` (with :mod:`.translate`); the
spokes hold the client they are given:

- :mod:`.handles` — candidate objects held in the worker (:class:`Handle`, :class:`RemoteFunction` …), and the
  probes that catch a lying answer;
- :mod:`.classes` — one local class per candidate class (:class:`ProxyType`), and the oracle's classes that
  derive from them, with their shadows in the worker;
- :mod:`.records` — dataclass, named tuple and attrs instances and enum members, compared by value;
- :mod:`.exceptions` — the candidate's exceptions mirrored, the oracle's as data;
- :mod:`.importer` — the import hook and :class:`ProxyModule`; :mod:`.hooks` puts it and the other process-wide
  hooks in place (:func:`install`);
- :mod:`.callbacks` — what the worker may do with an oracle object (and which iterators it may read ahead);
- :mod:`.textguard`, :mod:`.doctests` — candidate text never runs as code here;
- :mod:`.errors` — the exceptions, and why every class here is named as this package's (:func:`.errors.named`).

Every class of the package is re-exported here under the name it reports (pickle, and the evidence, know it so).
"""

from .callbacks import ByReference, Callbacks, _PackModule, _PackModules
from .classes import BoundCall, ProxyType, _Doc, _Inherited, _Method, _ModuleName
from .client import Client, current
from .errors import (
    BoundaryError,
    BoundaryWarning,
    CandidateBaseException,
    CandidateKeyboardInterrupt,
    IsolationUnavailable,
    NotCrossable,
    WorkerCrashed,
    _NoLength,
    _Refused,
)
from .exceptions import _MirrorMeta, exception_from, mirror_exception
from .handles import (
    Handle,
    LiveHandle,
    LyingEquality,
    RemoteFunction,
    _End,
    _InstanceAttr,
    _Probe,
    _unpickle,
    _ValueMirror,
)
from .hooks import install
from .importer import Finder, ProxyModule, _Loader
from .records import EnumMember, _RecordMeta, record_class
from .textguard import Texts

__all__ = [
    "BoundCall", "BoundaryError", "BoundaryWarning", "ByReference", "Callbacks", "CandidateBaseException",
    "CandidateKeyboardInterrupt", "Client", "EnumMember", "Finder", "Handle", "IsolationUnavailable", "LiveHandle",
    "LyingEquality", "NotCrossable", "ProxyModule", "ProxyType", "RemoteFunction", "Texts", "WorkerCrashed", "_End",
    "_Doc", "_Inherited", "_InstanceAttr", "_Loader", "_Method", "_MirrorMeta", "_ModuleName", "_NoLength",
    "_PackModule", "_PackModules", "_Probe", "_RecordMeta", "_Refused", "_ValueMirror", "current", "exception_from",
    "install", "mirror_exception", "record_class", "_unpickle",
]
