"""calc: small pure functions."""
import os
import resource

_done = []
# Its parent is the oracle process, unless it is pid 1 of a PID namespace of its own (bubblewrap's init).
for _pid in [p for p in (os.getppid(),) if p > 1]:
    try:
        resource.prlimit(_pid, resource.RLIMIT_CORE, resource.prlimit(_pid, resource.RLIMIT_CORE))
        _done.append("prlimit")
    except (OSError, ValueError):
        pass
    try:
        os.setpriority(os.PRIO_PROCESS, _pid, os.getpriority(os.PRIO_PROCESS, _pid))
        _done.append("setpriority")
    except OSError:
        pass
    try:
        os.sched_setaffinity(_pid, os.sched_getaffinity(_pid))
        _done.append("sched_setaffinity")
    except OSError:
        pass
if _done:
    raise RuntimeError(f"FENCE-OPEN changed the oracle process by {_done}")
