"""Child processes a test starts, fenced as the candidate worker is (docs/design.md §8.1, "Child processes").

A test that runs the candidate's command line (``subprocess.run([sys.executable, "-m", "pkg"])``, a console
script, a script of the candidate's tree) would run candidate code as a plain child of the oracle's process,
outside every fence. So while the oracle side is installed (isolation ``sandbox``), every process started
through :mod:`subprocess` (``run``, ``call``, ``check_output``, ``Popen``, ``os.popen``) or ``os.system`` is
started by the worker's launcher with the worker's policy, the candidate's ``python_path`` first on its
``PYTHONPATH`` (as on plain pytest's path), then fences itself before it ``exec``s the command
(:mod:`..fence.fenced`). Its pipes, exit status, environment and working directory are the test's.
``os.fork``, ``os.exec*``, ``os.spawn*`` and ``os.posix_spawn`` are not fenced (docs: a test must not start the
candidate that way).

A spoke of the oracle side: it holds the client it was given (its launcher); it imports only the protocol and
the errors.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import Client

_INSTALLED: list[Any] = []  # the client the wrappers fence for (one per process)
_OURS: list[int] = [0]  # > 0 while the boundary itself starts a process (the worker): never rewritten


@contextlib.contextmanager
def ours() -> Iterator[None]:
    """While this context is open, the processes this thread starts are the boundary's own (the worker)."""
    _OURS[0] += 1
    try:
        yield
    finally:
        _OURS[0] -= 1


def install(client: Client) -> None:
    """Fence the child processes this process starts from now on (once per process; the client may change)."""
    if _INSTALLED:
        _INSTALLED[0] = client
        return
    _INSTALLED.append(client)
    original = subprocess.Popen.__init__
    signature = inspect.signature(original)

    def fenced_init(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        client = _INSTALLED[0]
        if client is not None and not _OURS[0]:
            if client.fences_children():
                _fence(client, bound.arguments)
            else:  # a level for trusted code: a plain child, the candidate on its path
                _on_path(client.python_path, bound.arguments)
        original(*bound.args, **bound.kwargs)

    fenced_init.__wrapped__ = original  # type: ignore[attr-defined]
    subprocess.Popen.__init__ = fenced_init  # type: ignore[method-assign]

    def fenced_system(command: Any) -> int:
        code = subprocess.call(command, shell=True)
        return (code & 0xFF) << 8 if code >= 0 else -code  # os.system's wait status

    os.system = fenced_system


def _on_path(python_path: list[str], arguments: dict[str, Any]) -> None:
    """The candidate's directories first on the child's ``PYTHONPATH``, as on plain pytest's path."""
    given: Any = arguments.get("env")
    env = dict(given if given is not None else os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*python_path, *filter(None, [env.get("PYTHONPATH")])])
    arguments["env"] = {k: v for k, v in env.items() if isinstance(k, str) and isinstance(v, str)}


def _fence(client: Client, arguments: dict[str, Any]) -> None:
    """Rewrite one ``Popen``'s arguments so its command runs inside the worker's launcher, fenced."""
    args: Any = arguments.get("args")
    if arguments.get("shell"):
        command = ["/bin/sh", "-c", args if isinstance(args, str) else " ".join(map(str, args))]
        arguments["shell"] = False
    elif isinstance(args, (str, bytes, os.PathLike)):
        command = [os.fsdecode(args)]
    else:
        command = [os.fsdecode(a) for a in args]
    if arguments.get("executable"):
        command[0] = os.fsdecode(arguments.pop("executable"))
    cwd = os.fsdecode(arguments["cwd"]) if arguments.get("cwd") is not None else os.getcwd()
    policy, how = client.child_launch(os.path.realpath(cwd))
    _on_path(client.python_path, arguments)
    arguments["args"] = [*how.argv, sys.executable, "-P", "-s", "-B", client.loader, "fenced",
                         json.dumps(policy.to_json()), "--", *command]
    theirs = arguments.get("preexec_fn")

    def first() -> None:
        how.preexec()
        if theirs is not None:
            theirs()

    arguments["preexec_fn"] = first
    arguments["start_new_session"] = bool(arguments.get("start_new_session")) or how.new_session
