"""Signals of the gate's own process."""

from __future__ import annotations

import signal
import threading


def interrupt_on_sigterm() -> None:
    """SIGTERM (a cancelled CI job) unwinds like Ctrl-C: worktrees, temp dirs and the property
    process group are cleaned up by the same ``finally`` blocks. Main thread only (elsewhere a no-op).
    Set by the CLI and the action, not by the pipeline, which a library caller may run in a thread."""

    def _raise(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise)
