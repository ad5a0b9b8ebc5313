"""Orchestration only (docs/design.md §10): :mod:`.pipeline` (the §2 steps of one run), :mod:`.execute` (one run
of properties on one tree), :mod:`.runner` (the oracle processes), :mod:`.replay` (the base replay),
:mod:`.merge` (shards into one decision), :mod:`.freeze` (``verdict-gate freeze``) and :mod:`.collected` (what
collection found). Git, fixtures and work dirs are ``host/``'s; the results stream is ``boundary/results.py``."""
