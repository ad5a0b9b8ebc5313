"""Configuration errors are errors (exit 2, naming the setting and the fix), never verdicts: a catalog
`manifest write` would seal though `run` refuses it, a pack file whose name holds a newline. And what is not
one: a candidate module the gate's own environment also has."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cli, commit_all, git


def _repo(tmp: Path, catalog_extra: str = "") -> Path:
    """A candidate that provides a module named ``yaml`` (the gate's own runtime has PyYAML), and a
    property that imports it."""
    repo = tmp / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "oracle" / "properties").mkdir(parents=True)
    git(repo, "init", "--quiet")
    (repo / "src" / "yaml.py").write_text("def safe_load(text):\n    return {'candidate': text}\n")
    (repo / "oracle" / "properties" / "test_load.py").write_text(
        "import yaml\n\n\ndef test_load():\n    assert yaml.safe_load('a') == {'candidate': 'a'}\n")
    (repo / "oracle" / "catalog.yaml").write_text(
        "version: 1\npython_path: [src]\nproperties:\n  - id: prop.load\n    oracle: properties/test_load.py\n"
        "    kind: example\n" + catalog_extra)
    (repo / "oracle" / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}')
    assert cli("manifest", "write", str(repo / "oracle")).returncode == 0
    commit_all(repo, "base")
    git(repo, "checkout", "--quiet", "-b", "candidate")
    (repo / "src" / "yaml.py").write_text("def safe_load(text):\n    return {'candidate': text}  # reformatted\n")
    commit_all(repo, "candidate")
    return repo


@pytest.mark.parametrize("listed", [False, True])
def test_a_module_the_gate_also_has_is_the_candidates_for_the_pack(tmp_path: Path, listed: bool) -> None:
    """As plain pytest with the candidate's directories on PYTHONPATH: the candidate's ``yaml``, which the base
    revision provides too, wins over the PyYAML installed beside the gate, with or without `modules:`
    (docs/design.md §8.1)."""
    repo = _repo(tmp_path, "modules: [yaml]\n" if listed else "")
    out = tmp_path / "ev"
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_manifest_write_refuses_a_catalog_run_would_refuse(tmp_path: Path) -> None:
    pack = tmp_path / "oracle"
    (pack / "properties").mkdir(parents=True)
    (pack / "properties" / "test_x.py").write_text("def test_x():\n    pass\n")
    (pack / "catalog.yaml").write_text("version: 1\nproperties:\n  - id: prop.render|ce\n"
                                       "    oracle: properties/test_x.py\n    kind: example\n")
    proc = cli("manifest", "write", str(pack))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "prop.render|ce" in proc.stderr and "$.properties[0].id" in proc.stderr and "fix:" in proc.stderr
    assert not (pack / "manifest.sha256").exists()  # nothing sealed


def test_a_pack_file_named_with_a_newline_is_named_as_it_is(tmp_path: Path) -> None:
    """The message names the real file (escaped), never the manifest the user did not write, and never
    prints a raw newline that would look like a second file."""
    pack = tmp_path / "oracle"
    (pack / "properties").mkdir(parents=True)
    (pack / "fixtures").mkdir()
    (pack / "properties" / "test_x.py").write_text("def test_x():\n    pass\n")
    (pack / "catalog.yaml").write_text("version: 1\nproperties:\n  - id: prop.x\n    oracle: properties/test_x.py\n"
                                       "    kind: example\n")
    assert cli("manifest", "write", str(pack)).returncode == 0
    (pack / "fixtures" / "bad\nname.json").write_text("{}")
    write = cli("manifest", "write", str(pack))
    assert write.returncode == 2
    assert "fixtures/bad\\nname.json" in write.stderr and "rename" in write.stderr, write.stderr
    assert "manifest.sha256" not in write.stderr.splitlines()[0]
    verify = cli("manifest", "verify", str(pack))
    assert verify.returncode == 1
    assert "'fixtures/bad\\nname.json'" in verify.stdout and "\nname.json" not in verify.stdout, verify.stdout
