"""`verdict-gate pack build`: validated, manifest written, byte-reproducible, loadable by the gate."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from conftest import cli
from verdict_gate import pack
from verdict_gate.core.errors import GateError
from verdict_gate.demo import examples_dir
from verdict_gate.pack import build as packbuild

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    """A copy of the example oracle pack directory (catalog, ledger, properties, fixtures)."""
    path = tmp_path / "oracle"
    shutil.copytree(examples_dir() / "repo" / "oracle", path)
    (path / "manifest.sha256").unlink()  # pack build writes it
    return path


def build(src: Path, out: Path) -> tuple[int, str, str]:
    proc = cli("pack", "build", str(src), "--out", str(out))
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def test_build_prints_the_sha256_of_a_byte_reproducible_archive(src, tmp_path):
    code, stdout, stderr = build(src, tmp_path / "a.tar.gz")
    assert code == 0, stderr
    sha = hashlib.sha256((tmp_path / "a.tar.gz").read_bytes()).hexdigest()
    assert stdout == f"{sha}  {tmp_path / 'a.tar.gz'}\n"  # sha256sum format: `sha256sum -c` checks it

    # The same inputs elsewhere, with other mtimes, permissions and umask, give the same bytes.
    other = tmp_path / "elsewhere" / "pack-src"
    shutil.copytree(src, other)
    for path in other.rglob("*"):
        os.utime(path, (1_900_000_000, 1_900_000_000))
        if path.is_file():
            path.chmod(0o600)
    old_umask = os.umask(0o077)
    try:
        again = packbuild.build(other, tmp_path / "b.tar.gz")
    finally:
        os.umask(old_umask)
    assert again.sha256 == sha
    assert (tmp_path / "b.tar.gz").read_bytes() == (tmp_path / "a.tar.gz").read_bytes()

    # And a one-byte change in a fixture changes it.
    (other / "fixtures" / "orders.json").write_bytes((other / "fixtures" / "orders.json").read_bytes() + b" ")
    assert packbuild.build(other, tmp_path / "c.tar.gz").sha256 != sha


def test_archive_members_and_headers_are_fixed(src, tmp_path):
    built = packbuild.build(src, tmp_path / "p.tgz")
    raw = built.path.read_bytes()
    assert raw[:3] == b"\x1f\x8b\x08" and raw[3] == 0  # gzip, no FNAME/FCOMMENT/FEXTRA flags
    assert raw[4:8] == b"\0\0\0\0"  # gzip header mtime 0
    with tarfile.open(built.path) as tar:
        members = tar.getmembers()
        assert tar.pax_headers == {}
    names = [m.name for m in members]
    assert names == sorted(names, key=lambda n: n.split("/"))
    assert "manifest.sha256" in names and all(m.isreg() for m in members)
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname, m.mode) for m in members} == {(0, 0, 0, "", "", 0o644)}
    assert built.files == len(members) == 6


def test_component_order_not_string_order(tmp_path, src):
    # "a-b" < "a/b" as strings ('-' < '/'), but by components "a" < "a-b".
    (src / "fixtures" / "a").mkdir()
    (src / "fixtures" / "a" / "b.json").write_text("{}")
    (src / "fixtures" / "a-b.json").write_text("{}")
    built = packbuild.build(src, tmp_path / "p.tar.gz")
    with tarfile.open(built.path) as tar:
        names = [m.name for m in tar.getmembers()]
    assert names.index("fixtures/a/b.json") < names.index("fixtures/a-b.json")


def test_manifest_is_written_and_matches_the_archive(src, tmp_path):
    built = packbuild.build(src, tmp_path / "p.tar.gz")
    manifest = json.loads((src / "manifest.sha256").read_text())
    assert set(manifest) == {"catalog.yaml", "freeze_ledger.json", "fixtures/orders.json",
                             "properties/test_order_total.py", "properties/test_tax_round.py"}
    with tarfile.open(built.path) as tar:
        fh = tar.extractfile("manifest.sha256")
        assert fh is not None and json.loads(fh.read()) == manifest
    assert cli("manifest", "verify", str(src)).returncode == 0
    work = tmp_path / "work"
    work.mkdir()
    loaded = pack.load(str(built.path), tmp_path, work)
    assert loaded.manifest == manifest and loaded.sha256 == built.sha256


def test_a_stale_manifest_is_rewritten_and_reported(src, tmp_path):
    assert build(src, tmp_path / "a.tar.gz")[0] == 0
    (src / "fixtures" / "orders.json").write_text("[]")
    code, _, stderr = build(src, tmp_path / "b.tar.gz")
    assert code == 0 and "changed: fixtures/orders.json" in stderr


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda d: (d / "catalog.yaml").write_text("version: 1\nproperties: [}"), "not valid YAML"),
    (lambda d: (d / "catalog.yaml").write_text("version: 1\nproperties: []\nbogus: 1\n"), "bogus"),
    (lambda d: (d / "freeze_ledger.json").write_text('{"version": 1}'), "'freezes' is a required property"),
    (lambda d: (d / "catalog.yaml").unlink(), "catalog.yaml: is missing"),
    (lambda d: (d / "properties" / "test_tax_round.py").unlink(), "not a file in"),
    (lambda d: (d / "fixtures" / "link.json").symlink_to("/etc/hostname"), "symbolic link"),
], ids=["yaml", "schema", "ledger-schema", "catalog-missing", "oracle-file-missing", "symlink"])
def test_an_invalid_pack_is_refused_and_nothing_is_written(src, tmp_path, edit, needle):
    edit(src)
    out = tmp_path / "p.tar.gz"
    with pytest.raises(GateError) as info:
        packbuild.build(src, out)
    assert info.value.exit_code == 2 and needle in str(info.value) and "fix:" in str(info.value)
    assert not out.exists() and not (src / "manifest.sha256").exists()


def test_the_cli_exits_2_on_an_invalid_pack_and_prints_no_sha(src, tmp_path):
    (src / "catalog.yaml").write_text("version: 1\nproperties: [}")
    code, stdout, stderr = build(src, tmp_path / "p.tar.gz")
    assert code == 2 and stdout == "" and "not valid YAML" in stderr and "fix:" in stderr


def test_names_the_gate_would_refuse_are_refused_at_build(src, tmp_path):
    (src / "fixtures" / "Orders.json").write_text("[]")  # collides by case with orders.json
    with pytest.raises(GateError) as info:
        packbuild.build(src, tmp_path / "p.tar.gz")
    assert info.value.exit_code == 2 and "would be refused by the gate" in str(info.value)
    assert "collides by case" in str(info.value)
    assert not (tmp_path / "p.tar.gz").exists()


@pytest.mark.parametrize("out", ["oracle/p.tar.gz", "p.zip", "p"])
def test_bad_out_paths(src, tmp_path, out):
    code, _, stderr = build(src, tmp_path / out)
    assert code == 2 and "--out" in stderr
    assert not (tmp_path / out).exists()


def test_gzip_stream_decompresses_to_the_same_tar_each_time(src, tmp_path):
    a = packbuild.build(src, tmp_path / "a.tar.gz")
    b = packbuild.build(src, tmp_path / "b.tar.gz")
    assert gzip.decompress(a.path.read_bytes()) == gzip.decompress(b.path.read_bytes())
