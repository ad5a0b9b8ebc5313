"""The candidate worker's entry point (docs/design.md §8.1, §8.2).

Started as ``python -P -s -B load.py RFD WFD`` (:mod:`..load`; inside the sandbox the launcher builds,
:mod:`..fence.launch`), so neither the worker's directory nor the candidate's is on ``sys.path`` until the
oracle's ``hello`` (:data:`..protocol.HELLO`) puts the candidate's ``python_path`` there, after the standard
library. Before any candidate code runs it applies the in-process fences of the policy in its ``hello``
(:func:`..fence.apply.confine`: Landlock, seccomp), then tries each forbidden act the policy names
(:func:`..fence.probe.prove`: connect to the gate's listeners, read its canaries, write outside its temp dir,
signal and trace the oracle process) and reports what held in its first answer: candidate code, which has not
run yet, cannot forge that answer. Then it serves the oracle's requests (:class:`.server.Worker`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

from .. import codec, sources
from ..fence import apply, probe
from ..fence.policy import Policy
from .refs import _PackImporter
from .server import Worker


def _spin_budget() -> float | None:
    """Seconds of polling this worker may spend: a quarter of its CPU time limit, so that polling
    never brings a worker near ``RLIMIT_CPU`` that its own work would not have."""
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_CPU)
    return None if soft == resource.RLIM_INFINITY else soft / 4


def main(argv: list[str]) -> int:
    rfd, wfd = int(argv[1]), int(argv[2])
    reader = codec.Reader(rfd)
    try:
        hello = reader.frame()
    except codec.ProtocolError:
        return 2
    if hello.get("cpu") is not None:  # a hint for speed (docs/design.md §11), set before candidate code runs
        with contextlib.suppress(AttributeError, OSError, ValueError, TypeError):
            os.sched_setaffinity(0, {int(hello["cpu"])})
    spin = hello.get("spin_s")
    reader.poll(float(spin) if type(spin) in (int, float) else 0.0, _spin_budget())
    worker = Worker(reader, wfd)
    policy = Policy.from_json(hello.get("policy") or {})
    confined = apply.confine(policy)
    report = {**probe.prove(policy), "confined": confined}
    python_path = [str(p) for p in hello.get("python_path", [])]
    sources.source_only(python_path)  # never compiled code in place of a reviewed source
    at = sources.after_stdlib(sys.path)
    sys.path[at:at] = python_path
    if hello.get("cwd"):
        os.chdir(hello["cwd"])
    # What candidate code prints and warns goes to the oracle with each answer (pytest's capsys, pytest.warns).
    sys.stdout, sys.stderr = worker.out, worker.err
    warnings.simplefilter("always")
    warnings.showwarning = worker._warning
    codec.write_frame(wfd, {"ok": {"pid": os.getpid(), **report}})
    sys.meta_path.append(_PackImporter(worker))  # after the candidate's and the standard library's finders
    worker.serve()
    return 0
