"""Safe extraction of pack archives: hostile tar and zip archives built here, each refused with
the offending member named, nothing written outside the destination, nothing left inside it."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from verdict_gate import pack
from verdict_gate.core.errors import VoidError
from verdict_gate.pack import extract

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)


def tar_bytes(members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def reg(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    return info, None


def zip_file(files: list[tuple[str | zipfile.ZipInfo, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files:
            zf.writestr(name, data)
    return buf.getvalue()


def zip_symlink(name: str, target: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3  # unix: the high 16 bits of external_attr are st_mode
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def refused(tmp_path: Path, archive: Path, needle: str, **caps: int) -> VoidError:
    """Extract ``archive`` into ``tmp_path/dest`` expecting a refusal mentioning ``needle``;
    check nothing remains in ``dest`` and nothing escaped into ``tmp_path``."""
    before = {p.name for p in tmp_path.iterdir()}
    dest = tmp_path / "dest"
    with pytest.raises(VoidError) as info:
        extract.safe_extract(archive, dest, source="hostile", **caps)
    assert needle in str(info.value), str(info.value)
    assert info.value.exit_code == 3 and "fix:" in str(info.value)
    assert not dest.exists(), "a refused archive must leave no partial extraction"
    assert {p.name for p in tmp_path.iterdir()} == before, "nothing may be written outside dest"
    return info.value


# --- names ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "needle"), [
    ("../escape.txt", "'..'"),
    ("fixtures/../../escape.txt", "'..'"),
    ("/tmp/absolute-escape.txt", "absolute"),
    ("C:/windows.txt", "absolute"),
    ("dir\\..\\escape.txt", "backslash"),
    ("bad\nname.txt", "control character"),
])
def test_tar_refuses_unsafe_names(tmp_path, name, needle):
    archive = write(tmp_path, "a.tar.gz", tar_bytes([reg("catalog.yaml"), reg(name)]))
    err = refused(tmp_path, archive, needle)
    assert repr(name) in err.where  # the offending member is named


@pytest.mark.parametrize(("name", "needle"), [
    ("../escape.txt", "'..'"),
    ("/abs.txt", "absolute"),
    ("a\\..\\..\\escape.txt", "backslash"),
])
def test_zip_refuses_unsafe_names(tmp_path, name, needle):
    archive = write(tmp_path, "a.zip", zip_file([("catalog.yaml", b"x"), (name, b"evil")]))
    err = refused(tmp_path, archive, needle)
    assert repr(name) in err.where


def test_absolute_member_is_not_written_where_it_points(tmp_path):
    target = tmp_path / "outside" / "planted.txt"
    archive = write(tmp_path, "a.tar", tar_bytes([reg(str(target), b"planted")], mode="w"))
    refused(tmp_path, archive, "absolute")
    assert not target.exists()


# --- member types -----------------------------------------------------------------------


@pytest.mark.parametrize(("member", "needle"), [
    (special("etc", tarfile.SYMTYPE, "/etc"), "symbolic link"),
    (special("fixtures/passwd", tarfile.SYMTYPE, "../../../../etc/passwd"), "symbolic link"),
    (special("catalog-copy.yaml", tarfile.LNKTYPE, "catalog.yaml"), "hard link"),
    (special("dev-null", tarfile.CHRTYPE), "device"),
    (special("disk", tarfile.BLKTYPE), "device"),
    (special("pipe", tarfile.FIFOTYPE), "FIFO"),
], ids=["symlink-to-etc", "symlink-relative", "hard-link", "char-device", "block-device", "fifo"])
def test_tar_refuses_links_and_special_files(tmp_path, member, needle):
    archive = write(tmp_path, "a.tar.gz", tar_bytes([reg("catalog.yaml"), member]))
    refused(tmp_path, archive, needle)


def test_symlink_then_write_through_it_is_refused_before_anything_is_written(tmp_path):
    # The classic: a link to a directory outside, then a file "through" it.
    archive = write(tmp_path, "a.tar.gz", tar_bytes([special("out", tarfile.SYMTYPE, str(tmp_path)),
                                                     reg("out/planted.txt", b"planted")]))
    refused(tmp_path, archive, "symbolic link")
    assert not (tmp_path / "planted.txt").exists()


def test_zip_refuses_symlink(tmp_path):
    archive = write(tmp_path, "a.zip", zip_file([("catalog.yaml", b"x"), (zip_symlink("etc", "/etc"), b"/etc")]))
    refused(tmp_path, archive, "symbolic link")


# --- collisions -------------------------------------------------------------------------


@pytest.mark.parametrize(("names", "needle"), [
    (["fixtures/a.json", "fixtures/a.json"], "duplicated"),
    (["fixtures/README", "fixtures/readme"], "collides by case"),
    (["fixtures/caf\u00e9.json", "fixtures/cafe\u0301.json"], "collides"),  # NFC vs NFD
    (["fixtures", "fixtures/a.json"], "which is a file"),
])
def test_tar_refuses_colliding_names(tmp_path, names, needle):
    archive = write(tmp_path, "a.tar.gz", tar_bytes([reg(n) for n in names]))
    refused(tmp_path, archive, needle)


def test_zip_refuses_duplicate_names(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("catalog.yaml", b"one")
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("catalog.yaml", b"two")
    refused(tmp_path, write(tmp_path, "a.zip", buf.getvalue()), "duplicated")


def test_zip_refuses_a_file_where_a_directory_entry_is(tmp_path):
    archive = write(tmp_path, "a.zip", zip_file([("fixtures/", b""), ("FIXTURES", b"x")]))
    refused(tmp_path, archive, "collides")


# --- bombs ------------------------------------------------------------------------------


@pytest.mark.slow
def test_tar_with_100000_tiny_members_is_refused_at_the_member_cap(tmp_path, monkeypatch):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo("x")
        for i in range(100_000):
            info.name = f"f/{i}"
            tar.addfile(info, io.BytesIO(b""))
    archive = write(tmp_path, "many.tar.gz", buf.getvalue())
    real_next, read = tarfile.TarFile.next, []

    def counted(tar: tarfile.TarFile) -> tarfile.TarInfo | None:
        read.append(1)
        return real_next(tar)

    monkeypatch.setattr(tarfile.TarFile, "next", counted)
    refused(tmp_path, archive, "more than 1000 members", max_members=1_000)
    assert len(read) <= 1_002  # the first, read at open, to the 1,001st: never the whole archive (counted, no clock)


@pytest.mark.slow
def test_zip_with_100000_tiny_members_is_refused_with_the_default_cap(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for i in range(100_000):
            zf.writestr(f"f/{i}", b"")
    archive = write(tmp_path, "many.zip", buf.getvalue())
    refused(tmp_path, archive, f"more than {extract.MAX_MEMBERS} members")


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_a_member_expanding_past_the_byte_cap_is_refused(tmp_path, fmt):
    huge = bytes(2 * 1024 * 1024)  # 2 MiB of zeros: compresses to a few KiB
    if fmt == "tar":
        archive = write(tmp_path, "bomb.tar.gz", tar_bytes([reg("catalog.yaml"), reg("fixtures/zeros", huge)]))
    else:
        archive = write(tmp_path, "bomb.zip", zip_file([("catalog.yaml", b"x"), ("fixtures/zeros", huge)]))
    assert archive.stat().st_size < 64 * 1024
    err = refused(tmp_path, archive, "past 1048576 bytes", max_bytes=1024 * 1024)
    assert "fixtures/zeros" in err.where


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_many_members_together_past_the_byte_cap_are_refused(tmp_path, fmt):
    chunk = bytes(300 * 1024)
    files = [(f"fixtures/{i}.bin", chunk) for i in range(4)]  # each under the cap, together over it
    if fmt == "tar":
        archive = write(tmp_path, "b.tar.gz", tar_bytes([reg(n, d) for n, d in files]))
    else:
        archive = write(tmp_path, "b.zip", zip_file(list(files)))
    refused(tmp_path, archive, "past 1048576 bytes", max_bytes=1024 * 1024)


def test_a_zip_that_understates_its_sizes_cannot_write_past_them(tmp_path):
    # Patch the local and central headers to claim 10 bytes: zipfile then reads at most that and
    # the CRC check fails, so the lie ends in a refusal, never in more bytes than declared.
    data = zip_file([("fixtures/zeros", bytes(1024 * 1024))])
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.infolist()[0]
    real = info.file_size.to_bytes(4, "little")
    assert data.count(real) == 2
    archive = write(tmp_path, "lie.zip", data.replace(real, (10).to_bytes(4, "little")))
    refused(tmp_path, archive, "cannot be read or extracted")


# --- not archives, and good ones ---------------------------------------------------------


def test_garbage_and_truncated_archives_are_refused(tmp_path):
    refused(tmp_path, write(tmp_path, "junk.tar.gz", b"\x1f\x8b not really gzip"), "cannot be read")
    good = tar_bytes([reg("catalog.yaml", b"x" * 10_000), reg("b", b"y" * 10_000)])
    refused(tmp_path, write(tmp_path, "cut.tar.gz", good[: len(good) // 2]), "cannot be read")
    refused(tmp_path, write(tmp_path, "cut.zip", zip_file([("a", b"x")])[:30]), "cannot be read")


@pytest.mark.parametrize("fmt", ["tar", "tar.gz", "zip"])
def test_a_safe_archive_extracts_exactly(tmp_path, fmt):
    files = {"catalog.yaml": b"version: 1\n", "fixtures/orders.json": b"[]", "properties/test_x.py": b"pass\n"}
    if fmt == "zip":
        archive = write(tmp_path, "ok.zip", zip_file([("properties/", b""), *files.items()]))
    else:
        mode = "w:gz" if fmt == "tar.gz" else "w"
        dirinfo = tarfile.TarInfo("properties")
        dirinfo.type = tarfile.DIRTYPE
        archive = write(tmp_path, f"ok.{fmt}", tar_bytes([(dirinfo, None), *(reg(n, d) for n, d in files.items())],
                                                         mode=mode))
    dest = tmp_path / "dest"
    got = extract.safe_extract(archive, dest, source="ok")
    assert got == extract.Extracted(files=3, bytes=sum(len(d) for d in files.values()))
    assert {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("*") if p.is_file()} == files


def test_dest_must_be_fresh(tmp_path):
    archive = write(tmp_path, "ok.tar", tar_bytes([reg("a")], mode="w"))
    (tmp_path / "dest").mkdir()
    (tmp_path / "dest" / "keep").write_text("user data")
    with pytest.raises(FileExistsError):
        extract.safe_extract(archive, tmp_path / "dest", source="ok")
    assert (tmp_path / "dest" / "keep").read_text() == "user data"


def test_a_hostile_pack_archive_is_void_and_leaves_no_pack_to_score(tmp_path):
    archive = write(tmp_path, "pack.tar.gz", tar_bytes([reg("catalog.yaml"), reg("../evil.py", b"import os")]))
    work = tmp_path / "work"
    work.mkdir()
    origin: dict[str, object] = {}
    with pytest.raises(VoidError) as info:
        pack.load(str(archive), tmp_path, work, origin=origin)
    assert "'../evil.py'" in str(info.value)
    assert not (work / "pack").exists() and not (tmp_path / "evil.py").exists()
    assert origin["kind"] == "archive" and len(str(origin["sha256"])) == 64  # evidence names the bytes refused
