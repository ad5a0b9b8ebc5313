"""Work directories that killed gates left behind are removed by the next gate (verdict_gate.host.workdir)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from verdict_gate.host import workdir

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)


def _dead_owner() -> str:
    """The mark a process that has exited would have left."""
    code = "from verdict_gate.host import workdir; print(workdir.owner_text(), end='')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parent.parent)
    return proc.stdout


def _work_dir(parent: Path, name: str, owner: str | None, read_only: bool = False) -> Path:
    path = parent / name
    (path / "pack" / "properties").mkdir(parents=True)
    (path / "pack" / "properties" / "test_x.py").write_text("def test_x():\n    pass\n")
    if owner is not None:
        (path / workdir.MARK).write_text(owner)
    if read_only:
        os.chmod(path / "pack" / "properties", 0o555)
        os.chmod(path / "pack", 0o555)
    return path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("123 456789 4026531836\n", (123, "456789", "4026531836"), id="a-mark"),
        pytest.param("123 ? 4026531836\n", None, id="unknown-start-time"),
        pytest.param("123 456789 ?\n", None, id="unknown-namespace"),
        pytest.param("abc 1 2", None, id="not-a-pid"),
        pytest.param("", None, id="empty"),
        pytest.param("1 2 3 4", None, id="extra-field"),
    ],
)
def test_parse_mark(text: str, expected: object) -> None:
    assert workdir.parse_mark(text) == expected


@pytest.mark.parametrize(
    ("namespace", "start_time", "expected"),
    [
        pytest.param("ns", None, True, id="no-such-process"),
        pytest.param("ns", "999", True, id="pid-reused-by-another-process"),
        pytest.param("ns", "100", False, id="owner-still-runs"),
        pytest.param("other", None, False, id="another-pid-namespace"),
    ],
)
def test_is_stale(namespace: str, start_time: str | None, expected: bool) -> None:
    assert workdir.is_stale((42, "100", "ns"), namespace, start_time) is expected


def test_sweep_removes_only_the_dirs_of_gone_owners(tmp_path: Path) -> None:
    dead = _work_dir(tmp_path, "verdict-gate-dead", _dead_owner(), read_only=True)
    alive = _work_dir(tmp_path, "verdict-gate-alive", workdir.owner_text())
    unmarked = _work_dir(tmp_path, "verdict-gate-kept", None)
    foreign_ns = _work_dir(tmp_path, "verdict-gate-other-ns", _dead_owner().rsplit(" ", 1)[0] + " 1\n")
    other_name = _work_dir(tmp_path, "not-ours", _dead_owner())
    target = _work_dir(tmp_path, "target", _dead_owner())
    (tmp_path / "verdict-gate-link").symlink_to(target)
    assert workdir.sweep_parent(tmp_path) == [dead]
    assert not dead.exists()
    for kept in (alive, unmarked, foreign_ns, other_name, target, tmp_path / "verdict-gate-link"):
        assert kept.exists() or kept.is_symlink(), kept
    assert workdir.sweep_parent(tmp_path / "missing") == []


def test_a_kept_work_directory_is_unmarked_and_survives_the_next_gate(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VERDICT_GATE_KEEP_WORK", "1")
    with workdir.scratch_dir(tmp_path) as kept:
        assert workdir.parse_mark((kept / workdir.MARK).read_text()) is not None
    assert kept.is_dir() and not (kept / workdir.MARK).exists()
    monkeypatch.delenv("VERDICT_GATE_KEEP_WORK")
    workdir._swept.discard(os.path.realpath(tmp_path))
    with workdir.scratch_dir(tmp_path) as fresh:
        assert fresh.is_dir()
    assert kept.is_dir() and not fresh.exists()


@pytest.mark.slow
def test_the_dirs_of_a_gate_killed_mid_run_go_with_the_next_run(example_repo: Path, tmp_path: Path) -> None:
    """A real gate, SIGKILLed while its worktrees exist, leaves them; the next run removes them."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    cmd = [sys.executable, "-m", "verdict_gate", "run", "--repo", str(example_repo), "--base", "main",
           "--pack", "git:main:oracle", "--today", "2026-11-30"]
    gate = subprocess.Popen([*cmd, "--out", str(tmp_path / "out1")], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(temp.glob("verdict-gate-*/verdict-gate-wt-*/tree")):
        time.sleep(0.02)
    os.killpg(gate.pid, signal.SIGKILL)
    gate.wait()
    left = sorted(temp.glob("verdict-gate-*"))
    assert left, "the gate was killed before it made its work directory"
    second = subprocess.run([*cmd, "--out", str(tmp_path / "out2")], env=env, capture_output=True, text=True,
                            timeout=600)
    assert second.returncode in (0, 1), second.stderr
    assert "of gates that were killed" in second.stderr
    assert not any(path.exists() for path in left)
    assert list(temp.iterdir()) == []


def test_a_swept_work_dir_takes_its_pack_bytecode_from_the_shared_cache(tmp_path: Path, monkeypatch) -> None:
    """What pytest compiled of a killed run's pack (its conftest.py) mirrors the dir in the cache."""
    monkeypatch.setenv("VERDICT_GATE_CACHE", str(tmp_path / "cache"))
    parent = tmp_path / "tmp"
    parent.mkdir()
    dead = _work_dir(parent, "verdict-gate-dead", _dead_owner())
    alive = _work_dir(parent, "verdict-gate-alive", workdir.owner_text())
    mirrors = {d: tmp_path / "cache" / "pycache" / str(d).lstrip("/") / "pack" for d in (dead, alive)}
    for mirror in mirrors.values():
        mirror.mkdir(parents=True)
        (mirror / "conftest.cpython-311-pytest.pyc").write_bytes(b"x")
    workdir.sweep([parent])
    assert not dead.exists() and not mirrors[dead].exists()
    assert alive.exists() and mirrors[alive].exists()


@pytest.mark.parametrize("keep", ["", "1"])
def test_a_work_dir_s_mirror_in_the_bytecode_cache_is_a_file_while_it_lasts(tmp_path: Path, monkeypatch,
                                                                            keep: str) -> None:
    """No bytecode of anything under a work dir can be written into the shared cache (a directory of its
    path there is a plain file), and the file goes with the work dir, kept or not."""
    monkeypatch.setenv("VERDICT_GATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("VERDICT_GATE_KEEP_WORK", keep)
    (tmp_path / "tmp").mkdir()
    with workdir.scratch_dir(tmp_path / "tmp") as work:
        mirror = tmp_path / "cache" / "pycache" / str(work).lstrip("/")
        assert mirror.is_file()
        with pytest.raises(OSError):
            (mirror / "pack" / "__pycache__").mkdir(parents=True)
    assert not mirror.exists() and (work.exists() == bool(keep))
