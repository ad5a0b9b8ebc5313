"""The candidate worker: the only process that imports and executes candidate code (docs/design.md §8.1).

- :mod:`.main` — its entry point: the ``hello``, the fences applied and proven, then the request loop;
- :mod:`.server` — the hub: the request loop and its handlers, the handle table, the callbacks it makes;
- :mod:`.values` — what it sends and receives: handles, records, exceptions as data, references, links;
- :mod:`.refs` — the oracle's objects it holds by reference, pickling, the pack's modules (a spoke);
- :mod:`.errors` — :class:`BoundaryFault`, and why every class here is named as this package's.

The oracle never imports this package; the worker runs :mod:`.main` (:mod:`..load`). Every class of the package
is re-exported here under the name it reports (see :mod:`.errors`).
"""

from .errors import BoundaryFault
from .refs import OracleRef, _End, _InstanceDict, _Named, _NotASignature, _PackImporter, _Pickler, _Unpickler
from .server import Worker, _Batch, _Exception, _Live, _Output
from .shadows import Shadows
from .values import Values

__all__ = ["BoundaryFault", "OracleRef", "Shadows", "Values", "Worker", "_Batch", "_End", "_Exception", "_InstanceDict",
           "_Live",
           "_Named", "_NotASignature", "_Output", "_PackImporter", "_Pickler", "_Unpickler"]
