"""calc: small pure functions."""
import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_params = ctypes.create_string_buffer(120)  # struct io_uring_params
_fd = _libc.syscall(425, 4, _params)  # io_uring_setup(entries, params), the same number on x86_64 and aarch64
if _fd >= 0:
    os.close(_fd)
    raise RuntimeError("FENCE-OPEN io_uring_setup succeeded")
