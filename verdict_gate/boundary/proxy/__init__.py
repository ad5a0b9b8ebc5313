"""The oracle side of the isolation boundary: proxy modules, handles, records, mirrored exceptions, and the
oracle objects the candidate holds by reference (docs/design.md §8.1, "Who answers what").

Part of the boundary package: standard library only, loaded by path by the pytest plugin (:mod:`..load`),
which uses :class:`Client` and :func:`install`. The hub is :mod:`.client` (with :mod:`.translate`); the
spokes hold the client they are given:

- :mod:`.handles` — candidate objects held in the worker (:class:`Handle`, :class:`RemoteClass` …);
- :mod:`.records` — dataclass, named tuple and attrs instances and enum members, compared by value;
- :mod:`.exceptions` — the candidate's exceptions mirrored, the oracle's as data;
- :mod:`.importer` — the import hook and :class:`ProxyModule`;
- :mod:`.subclass` — a test's class statement whose base is a candidate class, built in the worker;
- :mod:`.callbacks` — what the worker may do with an oracle object (and which iterators it may read ahead);
- :mod:`.textguard`, :mod:`.doctests` — candidate text never runs as code here;
- :mod:`.errors` — the exceptions, and why every class here is named as this package's (:func:`.errors.named`).

Every class of the package is re-exported here under the name it reports (pickle, and the evidence, know it so).
"""

from .callbacks import Callbacks, _ModuleGlobals, _PackModule, _PackModules
from .client import Client, current, install
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
    RemoteClass,
    RemoteFunction,
    _End,
    _HandleType,
    _InstanceAttr,
    _OwnModule,
    _unpickle,
    _Unsized,
    _ValueMirror,
)
from .importer import Finder, ProxyModule, _Loader
from .records import EnumMember, _RecordMeta, record_class
from .textguard import Texts

__all__ = [
    "BoundaryError", "BoundaryWarning", "Callbacks", "CandidateBaseException", "CandidateKeyboardInterrupt",
    "Client", "EnumMember", "Finder", "Handle", "IsolationUnavailable", "LiveHandle", "NotCrossable", "ProxyModule",
    "RemoteClass", "RemoteFunction", "Texts", "WorkerCrashed", "_End", "_HandleType", "_InstanceAttr", "_Loader",
    "_MirrorMeta", "_ModuleGlobals", "_NoLength", "_OwnModule", "_PackModule", "_PackModules", "_RecordMeta",
    "_Refused", "_Unsized", "_ValueMirror", "current", "exception_from", "install", "mirror_exception",
    "record_class", "_unpickle",
]
