"""calc: small pure functions."""
import os
import stat

_changed = []
for _path in ("/dev/full",):
    try:
        _before = stat.S_IMODE(os.stat(_path).st_mode)
        os.chmod(_path, _before ^ 0o002)  # take away (or give) others' write bit ...
        _after = stat.S_IMODE(os.stat(_path).st_mode)
        os.chmod(_path, _before)  # ... and put it back at once
        if _after != _before:
            _changed.append(f"{_path} {_before:o}->{_after:o} (st_dev {os.stat(_path).st_dev}, "
                            f"ino {os.stat(_path).st_ino})")
    except OSError:
        pass
# The gate's $HOME (its mode set to what it is): a worker of the gate's own uid (the landlock method as an
# ordinary user) may chmod every file that user owns, wherever it is.
try:
    _home = stat.S_IMODE(os.stat("@@HOME@@").st_mode)
    os.chmod("@@HOME@@", _home)
    _changed.append("the gate's $HOME (chmod to its own mode allowed)")
except OSError:
    pass
try:
    _mode = stat.S_IMODE(os.fstat(2).st_mode)
    os.fchmod(2, 0o4755)
    if stat.S_IMODE(os.fstat(2).st_mode) & stat.S_ISUID:
        _changed.append(f"stderr file {os.readlink('/proc/self/fd/2') if os.path.exists('/proc/self') else 'fd 2'} "
                        "setuid")
    os.fchmod(2, _mode)
except OSError:
    pass
if _changed:
    raise RuntimeError(f"FENCE-OPEN changed host inodes: {_changed}")
