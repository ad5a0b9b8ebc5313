"""The bubblewrap command line of a worker's policy, argument by argument (verdict_gate/boundary/fence/bwrap.py,
docs/design.md §8.2): what a worker at method ``bwrap`` sees is exactly what these lists say."""

from __future__ import annotations

import pytest

from verdict_gate.boundary.fence import bwrap
from verdict_gate.boundary.fence.policy import DEFAULT_LIMITS, Policy, claims_of

pytestmark = pytest.mark.fast

# A merged-/usr root as Debian and Ubuntu have it: the system directories as links into /usr, /etc a directory.
MERGED = [("bin", "usr/bin"), ("etc", None), ("lib", "usr/lib"), ("lib64", "usr/lib64"), ("sbin", "usr/sbin"),
          ("usr", None)]


def policy(userns: bool | None, tmp_bytes: int = 1 << 20) -> Policy:
    return Policy("sandbox", "bwrap", claims_of("bwrap"), userns=userns,
                  limits={**DEFAULT_LIMITS, "tmp_bytes": tmp_bytes})


def test_a_worker_in_a_user_namespace_sees_the_system_dirs_and_its_binds_only() -> None:
    binds = ["/work/tree", "/usr/lib/python3.11", "/opt/venv", "/opt/venv/lib/python3.11/site-packages",
             "/srv/gate", "/etc/ssl"]
    assert bwrap.argv(policy(True), "/usr/bin/bwrap", root=MERGED, binds=binds, cwd="/work/tree") == [
        "/usr/bin/bwrap", "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
        "--cap-drop", "ALL", "--die-with-parent", "--new-session",
        "--symlink", "usr/bin", "/bin", "--ro-bind", "/etc", "/etc", "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/usr", "/usr",
        "--dev", "/dev", "--proc", "/proc", "--size", "1048576", "--tmpfs", "/tmp",
        # shortest first, ties by name; what the system directories hold already is not bound again
        "--ro-bind", "/opt/venv", "/opt/venv", "--ro-bind", "/srv/gate", "/srv/gate",
        "--ro-bind", "/work/tree", "/work/tree",
        "--ro-bind", "/opt/venv/lib/python3.11/site-packages", "/opt/venv/lib/python3.11/site-packages",
        "--chdir", "/work/tree"]


def test_as_root_without_a_user_namespace_no_user_is_mapped() -> None:
    root = [("bin", None), ("etc", None), ("lib", None), ("lib32", None), ("sbin", None), ("usr", None)]
    assert bwrap.argv(policy(False, 256 * 1024**2), "bwrap", root=root, binds=["/usr", "/root/venv"],
                      cwd="/") == [
        "bwrap", "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
        "--ro-bind", "/bin", "/bin", "--ro-bind", "/etc", "/etc", "--ro-bind", "/lib", "/lib",
        "--ro-bind", "/lib32", "/lib32", "--ro-bind", "/sbin", "/sbin", "--ro-bind", "/usr", "/usr",
        "--dev", "/dev", "--proc", "/proc", "--size", "268435456", "--tmpfs", "/tmp",
        "--ro-bind", "/root/venv", "/root/venv", "--chdir", "/"]


def test_the_same_binds_in_any_order_give_the_same_command_line() -> None:
    binds = ["/b/x", "/a/y", "/c", "/a/y/z", "/b/x"]
    first = bwrap.argv(policy(True), "bwrap", root=[], binds=binds, cwd="/c")
    assert first == bwrap.argv(policy(True), "bwrap", root=[], binds=list(reversed(binds)), cwd="/c")
    assert first[first.index("/tmp") + 1:] == ["--ro-bind", "/c", "/c", "--ro-bind", "/a/y", "/a/y",
                                               "--ro-bind", "/b/x", "/b/x", "--ro-bind", "/a/y/z", "/a/y/z",
                                               "--chdir", "/c"]


def test_this_host_s_root_shows_only_system_directories() -> None:
    view = bwrap.root_view()
    assert view and all(name in bwrap.SYSTEM_DIRS for name, _link in view)
    assert [name for name, _link in view] == sorted(name for name, _link in view)
