"""calc: small pure functions."""
import os

_found = []
_pids = {os.getppid()}
try:
    with open(f"/proc/{os.getppid()}/stat") as _fh:
        _pids.add(int(_fh.read().rsplit(")", 1)[1].split()[1]))
except (OSError, ValueError, IndexError):
    pass
for _pid in sorted(_pids):
    if _pid <= 1:
        continue
    for _what in ("environ", "cmdline", "maps"):
        try:
            with open(f"/proc/{_pid}/{_what}", "rb") as _fh:
                _found.append(f"{_pid}/{_what}: {_fh.read(200)!r}")
        except OSError:
            pass
    try:
        with open(f"/proc/{_pid}/mem", "rb") as _fh:
            _found.append(f"{_pid}/mem opened")
    except OSError:
        pass
if _found:
    raise RuntimeError(f"FENCE-OPEN /proc read: {_found}")
