#!/usr/bin/env bash
# The attack corpus as an ordinary user, at both sandbox methods (bubblewrap with a user namespace, and
# Landlock + seccomp without namespaces, where no uid of its own is possible): run as root, it makes the
# user (default vg-attacks), a clone of this checkout in the user's home, a venv of Debian's python3 (the
# machine's own Python may live in root's private home), and runs `pytest tests/attacks` as that user
# twice. Usage: sudo tests/attacks/run-as-user.sh [USER]. Exit status: non-zero when either run fails.
set -euo pipefail
user=${1:-vg-attacks}
here=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "run-as-user.sh: run it as root (it creates the user $user)" >&2; exit 2; }
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
work="$home/verdict-gate"
rm -rf "$work"
git clone --quiet "$here" "$work"
# The change being tested, uncommitted files included (what a fresh clone of the next commit holds).
(cd "$here" && git ls-files --cached --others --exclude-standard -z) | (cd "$here" && xargs -0 tar cf - --) \
    | tar xf - -C "$work"
chown -R "$user:$user" "$work"
run() { su "$user" -s /bin/bash -c "cd '$work' && $1"; }
run "make install PYTHON=/usr/bin/python3 >/dev/null"
status=0
echo "== as $(id -u "$user") ($user), the default method (bubblewrap where user namespaces work)"
run ".venv/bin/python -m pytest -q -n auto --dist worksteal tests/attacks tests/test_fences.py" || status=1
echo "== as $(id -u "$user") ($user), the landlock method (bubblewrap hidden)"
run "VG_ATTACKS_METHOD=landlock .venv/bin/python -m pytest -q -n auto --dist worksteal tests/attacks tests/test_fences.py" \
    || status=1
exit $status
