"""tree-v2 (docs/design.md §4): known answers by hand, one read per file, the pool does not change the
answer, tree-v1 still computed, the post-run check by stamps, the normaliser cap."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core import digest
from verdict_gate.core.digest import Normalizer, changed_since, digest_dir, scan, walk
from verdict_gate.core.errors import GateError


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
    monkeypatch.setattr(digest, "NORMALIZE_MAX", 1000)
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
