"""The fences: how far the candidate worker is fenced off, in one room (docs/design.md §8.2).

One typed :class:`.policy.Policy` is handed alike to each part (as Codex CLI's Linux sandbox hands one
policy to its builder and its applier):

- :mod:`.policy` — the levels, fences and methods, and the :class:`~.policy.Policy` (``to_json``/``from_json``);
- :mod:`.host` — the method of each level on this host, chosen once by trying (gate side);
- :mod:`.launch` — a worker's policy and how it is started by its method (oracle side); :mod:`.bwrap` its
  bubblewrap command line, :mod:`.child` its environment and what runs before ``exec``, :mod:`.paths` what it
  may read;
- :mod:`.apply` — the worker fences itself: :mod:`.landlock`, :mod:`.seccomp` (worker side);
- :mod:`.probe` — each fence tried by the worker before any candidate code (worker side); :mod:`.targets`
  what the probes try to reach (the Docker sockets among them) and what their report proves (oracle side);
- :mod:`.reap` — every process the candidate started dies with its worker (gate side);
- :mod:`.errors` — :class:`~.errors.Unavailable`, the one error of the room; :mod:`.libc` the C library.

Nothing is imported here: the worker loads only the parts it applies (a light start).
"""
