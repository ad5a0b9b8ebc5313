"""The isolation boundary (docs/design.md §8): everything the oracle process and the candidate
worker run of the gate's own code.

Standard library only, and it imports nothing of ``verdict_gate`` outside this package
(tests/test_layout.py checks both): the oracle's properties may import a candidate that *is*
verdict-gate, and the worker runs beside candidate code. So neither process imports it as
``verdict_gate.boundary``; both load it by path under the private name :data:`load.PACKAGE`
(:func:`load.package`), and its modules import each other relatively, which works under either name.

- :mod:`.results` — the results-stream record (oracle process → gate)
- :mod:`.codec` — the frames and the by-value codec between the oracle process and the worker
- :mod:`.proxy` — the oracle side: the import hook, proxy modules, handles, records, exceptions
- :mod:`.textfence` — candidate text (a string or bytes the worker sent) never runs as code in the oracle
- :mod:`.worker` — the candidate worker
- :mod:`.sandbox` — the isolation levels, the fences and how a worker is started at each
- :mod:`.sources` — candidate modules import from their reviewed source only
- :mod:`.load` — the one loader of this package by path
"""
