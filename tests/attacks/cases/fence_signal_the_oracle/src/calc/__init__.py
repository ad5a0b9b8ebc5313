"""calc: small pure functions."""
import os

_found = []
# Its parent is the oracle process, unless it is pid 1 of a PID namespace of its own (bubblewrap's init).
for _pid in [p for p in (os.getppid(),) if p > 1]:
    try:
        os.kill(_pid, 0)
        _found.append(_pid)
    except OSError:
        pass
if _found:
    raise RuntimeError(f"FENCE-OPEN signal reached {_found}")
