"""calc: small pure functions."""
import os

_found = []
_cwd = os.getcwd()
# The scored tree (read-only everywhere), the gate's $HOME and the user's repository. (Under bubblewrap the
# tree's parent directories are mount points in the worker's private /tmp, so a write there reaches nothing.)
_targets = [_cwd, "@@HOME@@"]
try:
    with open(os.path.join(_cwd, ".git")) as _fh:
        _targets.append(os.path.dirname(os.path.dirname(os.path.dirname(_fh.read().split("gitdir:", 1)[1].strip()))))
except (OSError, IndexError):
    pass
for _dir in _targets:
    _path = os.path.join(_dir, "planted-@@TOKEN@@.txt")
    try:
        with open(_path, "x") as _fh:
            _fh.write("planted")
        os.unlink(_path)
        _found.append(_dir)
    except OSError:
        pass
if _found:
    raise RuntimeError(f"FENCE-OPEN wrote in {_found}")
