"""The isolation boundary (docs/design.md §8): everything the oracle process and the candidate worker run of
the gate's own code (README.md in this directory: each part, the side it runs on, the protocol's verbs).

Standard library only, and it imports nothing of ``verdict_gate`` outside this package
(tests/test_layout.py checks both): the oracle's properties may import a candidate that *is*
verdict-gate, and the worker runs beside candidate code. So neither process imports it as
``verdict_gate.boundary``; both load it by path under the private name :data:`load.PACKAGE`
(:func:`load.package`), and its modules import each other relatively, which works under either name.

- :mod:`.protocol` — the one table of operations, callback verbs, frame keys and limits both sides import
- :mod:`.codec` — the frames and the by-value codec between the oracle process and the worker
- :mod:`.links` — linked containers, both sides
- :mod:`.proxy` — the oracle side: the client (hub) and its spokes (handles, records, exceptions, the import
  hook, subclasses, callbacks, the text and doctest fences)
- :mod:`.worker` — the candidate worker: its start, its request loop (hub), its values, its references
- :mod:`.fence` — the isolation levels, the one typed policy, how a worker is started and fenced, the probes
- :mod:`.results` — the results-stream record (oracle process → gate)
- :mod:`.names` — which module names are the candidate's and the pack's
- :mod:`.sources` — candidate modules import from their reviewed source only
- :mod:`.load` — the one loader of this package by path
"""
