"""tree-v2 (docs/design.md §4): known answers by hand, one read per file, the pool does not change the
answer, tree-v1 still computed, the post-run check by stamps, the normaliser cap."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core import digest
from verdict_gate.core.digest import Normalizer
from verdict_gate.core.errors import GateError
from verdict_gate.host import hashing
from verdict_gate.host.forks import fork_map
from verdict_gate.host.hashing import changed_since, digest_dir, scan, walk

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)


def write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def reference_tree_v2(root: Path) -> str:
    """An independent reading of docs/design.md §4: path NUL sha256-hex NUL per file, in component order."""
    files = sorted((p for p in root.rglob("*") if p.is_file()), key=lambda p: p.relative_to(root).parts)
    h = hashlib.sha256()
    for p in files:
        h.update(os.fsencode(p.relative_to(root).as_posix()) + b"\0"
                 + hashlib.sha256(p.read_bytes()).hexdigest().encode() + b"\0")
    return h.hexdigest()


def test_tree_v2_known_answer_by_hand(tmp_path):
    write(tmp_path, {"a/b": b"1", "a.txt": b"2", "a-b/c": b"3", "empty/.keep": b""})
    (tmp_path / "emptydir").mkdir()
    # sha256 of "1", "3", "2" and of nothing, as `printf 1 | sha256sum` prints them
    one = "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"
    three = "4e07408562bedb8b60ce05c1decfe3ad16b72230967de01f640b7e4729b49fce"
    two = "d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35"
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    by_hand = hashlib.sha256(b"a/b\x00" + one.encode() + b"\x00a-b/c\x00" + three.encode() + b"\x00a.txt\x00"
                             + two.encode() + b"\x00empty/.keep\x00" + empty.encode() + b"\x00").hexdigest()
    result = digest_dir(tmp_path)
    assert result.format == "tree-v2"
    # the same, from a shell: printf 'a/b\0%s\0a-b/c\0%s\0a.txt\0%s\0empty/.keep\0%s\0' \
    #   $(printf 1|sha256sum|cut -c1-64) $(printf 3|sha256sum|cut -c1-64) $(printf 2|sha256sum|cut -c1-64) \
    #   $(printf ''|sha256sum|cut -c1-64) | sha256sum
    assert result.digest == by_hand == "5efaf1bc8fd4d81c63ac29f12561b818025414ad91c9511d773e2043af57ee11"
    assert result.files == {"a/b": one, "a-b/c": three, "a.txt": two, "empty/.keep": empty}  # the manifest view


@given(st.dictionaries(st.from_regex(r"[a-c]{1,2}(/[a-c.]{1,2}){0,2}", fullmatch=True).filter(
    lambda p: not any(seg in (".", "..") for seg in p.split("/"))), st.binary(max_size=20), max_size=8))
def test_tree_v2_matches_reference_whatever_the_pool(tmp_path_factory, files):
    root = tmp_path_factory.mktemp("tree")
    try:
        write(root, files)
    except (FileExistsError, NotADirectoryError, IsADirectoryError):
        return
    expected = reference_tree_v2(root)
    for workers in (1, 2, 5):
        assert scan(walk(root), workers=workers).digest == expected


def test_tree_v2_reads_each_file_once(tmp_path, monkeypatch):
    write(tmp_path, {"a": b"x" * 10, "b/c": b"y" * (3 << 20)})
    opened: list[str] = []
    real_open = os.open

    def counting_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("os.open", counting_open)
    result = scan(walk(tmp_path))
    assert sorted(opened) == sorted(str(tmp_path / p) for p in ("a", "b/c"))
    assert result.files["b/c"] == hashlib.sha256(b"y" * (3 << 20)).hexdigest()
    assert result.total_bytes == 10 + (3 << 20)


def test_continuing_a_state_equals_one_scan(tmp_path):
    write(tmp_path, {"pack/x": b"1", "pack/y/z": b"2", "repo/a": b"3"})
    whole = scan(walk(tmp_path)).digest
    first = scan(e for e in walk(tmp_path) if e.path.startswith("pack/"))
    rest = scan((e for e in walk(tmp_path) if e.path.startswith("repo/")), state=first.state)
    assert rest.digest == whole


def test_normalizers_change_the_tree_hash_not_the_manifest(tmp_path):
    write(tmp_path, {"log.txt": b"at 2026-01-01 ok", "other": b"at 2026-01-01 ok"})
    rule = Normalizer(glob="log.txt", pattern=r"\d{4}-\d\d-\d\d", replacement="<date>")
    result = scan(walk(tmp_path), [rule])
    assert result.files["log.txt"] == hashlib.sha256(b"at 2026-01-01 ok").hexdigest()
    expected = hashlib.sha256(b"log.txt\0" + hashlib.sha256(b"at <date> ok").hexdigest().encode() + b"\0other\0"
                              + hashlib.sha256(b"at 2026-01-01 ok").hexdigest().encode() + b"\0").hexdigest()
    assert result.digest == expected


def test_a_normaliser_refuses_a_file_above_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(hashing, "NORMALIZE_MAX", 1000)
    write(tmp_path, {"big.txt": b"x" * 1001})
    rule = Normalizer(glob="*.txt", pattern="x", replacement="y")
    for fmt in ("tree-v2", "tree-v1"):
        with pytest.raises(GateError, match="narrow the normaliser's glob"):
            scan(walk(tmp_path), [rule], format=fmt)


def test_post_run_check_by_stamps(tmp_path):
    write(tmp_path, {"a": b"1", "d/b": b"2", "d/c": b"3"})
    before = scan(walk(tmp_path))
    assert changed_since(before, walk(tmp_path)) == []
    os.chmod(tmp_path / "a", 0o444)  # metadata only: the stamp moves, the contents do not
    os.utime(tmp_path / "d" / "b", ns=(1, 1))
    assert changed_since(before, walk(tmp_path)) == []
    (tmp_path / "d" / "c").write_bytes(b"4")  # same size, other contents
    (tmp_path / "new").write_bytes(b"")
    (tmp_path / "a").unlink()
    assert changed_since(before, walk(tmp_path)) == ["a", "d/c", "new"]


def test_tree_v1_is_still_computed(tmp_path):
    write(tmp_path, {"a/b": b"1", "a.txt": b"2"})
    v1 = digest_dir(tmp_path, format="tree-v1")
    assert v1.format == "tree-v1"
    assert v1.digest == hashlib.sha256(b"a/b\x001\x00a.txt\x002\x00").hexdigest()
    with pytest.raises(GateError, match="not known"):
        digest_dir(tmp_path, format="tree-v3")


# --- many files: contiguous shares in forked processes (issue 10) ------------------------------

# Thresholds lowered so that a small tree takes the process path: the walk pauses after two files
# with two directories still unlisted, and every task holds one file or one directory.
LOW = {"PARALLEL_MIN_FILES": 2, "PARALLEL_MIN_DIRS": 2, "PARALLEL_TASK_MIN": 1, "PARALLEL_TASKS": 4096}


@pytest.fixture
def low_thresholds(monkeypatch):
    for name, value in LOW.items():
        monkeypatch.setattr(hashing, name, value)


def three_processes(tasks, work):  # type: ignore[no-untyped-def]
    """fork_map with two children whatever the machine's core count (so the test forks on one core too)."""
    return fork_map(tasks, work, workers=3)


def shared_with_a_child(work, markers: Path):  # type: ignore[no-untyped-def]
    """``work``, where no process goes past its first task until this process and a forked child have each taken
    one: fork_map hands tasks to whichever process is free first, so on a busy machine one side could take them
    all before the other is scheduled. The order is the test's (a file each side leaves in ``markers``, a fresh
    directory), never a sleep's. Needs three tasks or more (two children may each hold one while they wait)."""
    parent = os.getpid()

    def wrapped(k: int):  # type: ignore[no-untyped-def]
        (markers / ("parent" if os.getpid() == parent else "child")).touch()
        deadline = time.monotonic() + 120  # guards a hang only
        while not ((markers / "parent").exists() and (markers / "child").exists()) and time.monotonic() < deadline:
            time.sleep(0.001)
        return work(k)

    return wrapped


def as_tuple(result: digest.Scan) -> tuple[object, ...]:
    """Everything a Scan holds, dict order included; the hasher state by its digest."""
    return (result.digest, list(result.files.items()), result.total_bytes, result.state.hexdigest(),
            result.tree_files, result.tree_bytes, result.format, list(result.stamps.items()))


def mixed_tree(root: Path) -> None:
    """Nested directories, unicode and odd names, empty files, a cache directory, files bigger than a
    read (CHUNK is lowered by the tests), and files a normaliser matches."""
    files = {f"d{i}/f{j}.txt": f"run at 2026-01-0{j} in dir {i}\n".encode() for i in range(6) for j in range(1, 4)}
    files.update({
        "a.txt": b"top", "a-b/c": b"3", "a/b": b"1", "café/naïve.json": "ü".encode(), "zeta/empty": b"",
        "d2/deep/er/x.bin": bytes(range(256)) * 40, "d3/big.bin": os.urandom(20_000), "d5/ü/日本.txt": b"kanji",
        "d4/__pycache__/skip.pyc": b"never hashed", "m/n/o/p/q/r.txt": b"at 2026-05-05",
        # walked first, depth first: the walk pauses in 0/1/ with entries left on three levels
        "0/1/2/f": b"f", "0/1/2/g": b"g", "0/1/3/h": b"h", "0/1/4/i": b"i", "0/1/j": b"j", "0/5/k": b"k", "0/l": b"l",
    })
    write(root, files)
    (root / "emptydir" / "inner").mkdir(parents=True)


def test_process_path_gives_the_serial_scan(tmp_path, low_thresholds, monkeypatch, tmp_path_factory):
    monkeypatch.setattr(hashing, "CHUNK", 4096)  # the 10 KiB and 20 KiB files take the chunked read
    mixed_tree(tmp_path)
    rules = [Normalizer(glob="**/*.txt", pattern=r"\d{4}-\d\d-\d\d", replacement="<date>")]
    serial = digest_dir(tmp_path, rules)
    assert serial.files.keys() == {p for p in serial.files if "__pycache__" not in p}
    tasks_run: list[int] = []
    pids: set[int] = set()

    def recording(tasks, work):  # type: ignore[no-untyped-def]
        tasks_run.append(tasks)
        shared = shared_with_a_child(lambda k: (work(k), os.getpid()), tmp_path_factory.mktemp("markers"))
        for result, pid in three_processes(tasks, shared):
            pids.add(pid)
            yield result

    forked = digest_dir(tmp_path, rules, parallel=recording)
    assert tasks_run[0] > 3  # the walk was handed to the tasks (each walks a directory or takes a file)
    assert len(pids) >= 2  # and they ran in this process and in forked children
    assert as_tuple(forked) == as_tuple(serial)
    assert forked.digest == reference_tree_v2_normalised(tmp_path, rules[0])
    # the same through scan() (the walk done first, the hashing in shares), with a prefix and a
    # tree_path that leaves some entries out, continuing a state
    entries = list(walk(tmp_path, prefix="repo"))
    head = scan(walk(tmp_path / "a"))
    keep = lambda path: None if path.endswith(".bin") else path  # noqa: E731
    assert as_tuple(scan(entries, rules, tree_path=keep, state=head.state, parallel=three_processes)) == \
        as_tuple(scan(entries, rules, tree_path=keep, state=head.state))


def reference_tree_v2_normalised(root: Path, rule: Normalizer) -> str:
    from verdict_gate.core.globs import match

    files = sorted((p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts),
                   key=lambda p: p.relative_to(root).parts)
    h = hashlib.sha256()
    for p in files:
        rel = p.relative_to(root).as_posix()
        data = p.read_bytes()
        if match(rel, rule.glob):
            data = re.sub(rule.pattern.encode(), rule.replacement.encode(), data)
        h.update(os.fsencode(rel) + b"\0" + hashlib.sha256(data).hexdigest().encode() + b"\0")
    return h.hexdigest()


def test_process_path_with_the_default_thresholds(tmp_path):
    """Above PARALLEL_MIN_FILES with many directories: the real thresholds take the process path."""
    count = hashing.PARALLEL_MIN_FILES + 200
    write(tmp_path, {f"d{i % 50:02d}/f{i:05d}": i.to_bytes(4, "big") for i in range(count)})
    forked = digest_dir(tmp_path, parallel=three_processes)
    assert as_tuple(forked) == as_tuple(digest_dir(tmp_path))
    assert forked.digest == reference_tree_v2(tmp_path) and len(forked.files) == count


@pytest.mark.parametrize("where", ["walked first", "in a task"])
def test_process_path_raises_the_serial_error(tmp_path, low_thresholds, monkeypatch, where):
    """A link, a special file or an unreadable file: the error of the serial scan, the first in order,
    walk errors before read errors (the serial walk ends before the first read)."""
    first = "0/1/2" if where == "walked first" else "d4"  # walked before the pause / by a task
    mixed_tree(tmp_path)
    (tmp_path / first / "link").symlink_to("/etc/passwd")
    os.mkfifo(tmp_path / "d5" / "pipe")

    def message(parallel) -> str:  # type: ignore[no-untyped-def]
        with pytest.raises(GateError) as caught:
            digest_dir(tmp_path, parallel=parallel)
        return str(caught.value)

    assert message(three_processes) == message(None)
    assert f"{first}/link" in message(three_processes) and "symbolic link" in message(three_processes)
    (tmp_path / first / "link").unlink()
    assert message(three_processes) == message(None)
    assert "d5/pipe" in message(three_processes) and "not a regular file" in message(three_processes)
    (tmp_path / "d5" / "pipe").unlink()
    # read errors: a normaliser over its cap in two tasks (the first in order is named) ...
    monkeypatch.setattr(hashing, "NORMALIZE_MAX", 64)
    write(tmp_path, {"d1/huge.log": b"x" * 65, "d4/huge.log": b"y" * 65})
    rule = Normalizer(glob="**/*.log", pattern="x", replacement="y")
    with pytest.raises(GateError, match="narrow the normaliser's glob") as caught:
        digest_dir(tmp_path, [rule], parallel=three_processes)
    assert "d1/huge.log" in str(caught.value)
    # ... and a link after them: the walk's error comes first, as in the serial scan
    (tmp_path / "zeta" / "link").symlink_to("a.txt")
    with pytest.raises(GateError, match="symbolic link"):
        digest_dir(tmp_path, [rule], parallel=three_processes)


def test_process_path_unreadable_file(tmp_path, low_thresholds, monkeypatch):
    """A file that cannot be opened (simulated: root reads through any mode) names that file."""
    mixed_tree(tmp_path)
    real_open = os.open

    def failing_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if os.fspath(path).endswith("d3/f2.txt"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("os.open", failing_open)  # inherited by the forked children
    with pytest.raises(GateError, match=r"d3/f2\.txt.*cannot be read \(Permission denied\)"):
        digest_dir(tmp_path, parallel=three_processes)


def test_fork_map_yields_in_order_and_recomputes_what_a_child_lost(tmp_path):
    parent = os.getpid()
    out = list(fork_map(200, shared_with_a_child(lambda k: (k, os.getpid()), tmp_path), workers=3))
    assert [k for k, _pid in out] == list(range(200))
    assert parent in {pid for _k, pid in out} and len({pid for _k, pid in out}) >= 2

    def dies_in_children(k: int) -> int:
        if os.getpid() != parent and k % 3 == 0:
            os._exit(9)  # a child dies: its tasks are computed again by the parent
        return k * k

    assert list(fork_map(40, dies_in_children, workers=3)) == [k * k for k in range(40)]

    def fails(k: int) -> int:
        if k in (11, 30):
            raise ValueError(f"task {k}")
        return k

    with pytest.raises(ValueError, match="task 11"):  # the first failing task in order, raised here
        list(fork_map(40, fails, workers=3))


def test_fork_map_closed_early_leaves_no_child():
    def slow(k: int) -> int:
        time.sleep(0.01)
        return k

    def children() -> set[int]:
        # This process's live children (other tests may have left some of their own: only new ones count).
        found: set[int] = set()
        for task in Path("/proc/self/task").iterdir():
            with contextlib.suppress(OSError):
                found |= {int(pid) for pid in (task / "children").read_text().split()}
        return found

    before = children()
    it = fork_map(100, slow, workers=3)
    assert next(iter(it)) == 0
    assert children() - before  # the workers are running
    it.close()
    assert children() - before == set()  # every child was killed and reaped


def test_digest_command_output_and_start_up(tmp_path):
    """`verdict-gate digest` prints the serial scan's digest, and its start-up imports no pipeline."""
    write(tmp_path, {f"d{i % 40:02d}/f{i}": b"%d" % i for i in range(hashing.PARALLEL_MIN_FILES + 50)})
    serial = digest_dir(tmp_path)
    probe = ("import sys; from verdict_gate.cli import main; code = main(['digest', sys.argv[1]]); "
             "print(sorted(m for m in sys.modules if m.startswith(('verdict_gate.run', 'verdict_gate.pack')))); "
             "sys.exit(code)")
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, check=True)
    # The host's walk, hashing and fork helper only: never the pipeline, the runner or a pack source.
    assert out.stdout.splitlines() == [
        f"tree-v2 {serial.digest}  {len(serial.files)} files  {serial.total_bytes} bytes", "[]"]
