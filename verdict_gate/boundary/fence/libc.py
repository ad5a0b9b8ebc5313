"""The C library, loaded once per process, with the return types the fences read (``syscall`` and ``ptrace``
return a ``long``, ``prctl`` an ``int``)."""

from __future__ import annotations

import ctypes
import functools


@functools.cache
def libc() -> ctypes.CDLL:
    """This process's C library (``errno`` kept: :func:`ctypes.get_errno` reads it after a failed call)."""
    lib = ctypes.CDLL(None, use_errno=True)
    lib.syscall.restype = ctypes.c_long
    lib.ptrace.restype = ctypes.c_long
    lib.prctl.restype = ctypes.c_int
    return lib
