"""The pack is extracted to a RAM file system (``/dev/shm``) when the user opts in
(``workdir.ram_parent``), and the sandboxed worker still sees none of it but its fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import commit_all, git, validate_evidence
from verdict_gate.host import workdir
from verdict_gate.pack.build import write_manifest
from verdict_gate.pack.extract import MAX_BYTES


def _room() -> bool:
    try:
        st = os.statvfs(workdir.RAM_DIR)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize >= 2 * MAX_BYTES and os.access(workdir.RAM_DIR, os.W_OK)


@pytest.mark.parametrize("env,want_ram", [
    ({}, False),  # on disk by default: a suite that lists its directories sees them as plain pytest does
    ({workdir.PACK_RAM_ENV: "1"}, True),  # opted into
    ({workdir.PACK_RAM_ENV: "1", "TMPDIR": "/somewhere"}, False),  # the user named a temp dir
    ({workdir.PACK_RAM_ENV: "0"}, False),
], ids=["default", "on", "tmpdir", "off"])
def test_ram_parent(monkeypatch, env, want_ram):
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.delenv(workdir.PACK_RAM_ENV, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if want_ram and not _room():
        pytest.skip("no RAM file system with room at /dev/shm")
    got = workdir.ram_parent(2 * MAX_BYTES)
    assert got == (workdir.RAM_DIR if want_ram else None)


SPY = '''"""Candidate code that looks for the oracle's sources wherever a RAM or temp dir could hold them."""
import os

PACK_FILES = {"catalog.yaml", "manifest.sha256", "freeze_ledger.json", "test_blind.py", "test_order_total.py"}


def visible_oracle_files():
    found = []
    for top in ("/dev/shm", "/tmp", "/var/tmp"):
        for root, _dirs, files in os.walk(top):
            # The pack's own files, by name: the candidate's tree (read-only under /tmp) leaves the oracle
            # out, and a venv the sandbox binds back (under /tmp in a fresh clone) has test modules of its own.
            found += [os.path.join(root, f) for f in files if f in PACK_FILES]
    return sorted(found)
'''

PROPERTY = '''"""prop.blind: the candidate worker sees no property source and no catalog."""
from orders.spy import visible_oracle_files


def test_blind():
    assert visible_oracle_files() == []
'''


def test_a_pack_in_ram_is_hidden_from_the_worker(example_repo, tmp_path):
    if not _room():
        pytest.skip("no RAM file system with room at /dev/shm")
    repo = example_repo
    git(repo, "checkout", "--quiet", "main")
    (repo / "src" / "orders" / "spy.py").write_text(SPY)
    (repo / "oracle" / "properties" / "test_blind.py").write_text(PROPERTY)
    catalog = repo / "oracle" / "catalog.yaml"
    catalog.write_text(catalog.read_text().replace(
        "properties:\n", "properties:\n  - id: prop.blind\n    oracle: properties/test_blind.py\n    kind: example\n"
        "    claim: the judged cannot read the judge\n", 1))
    write_manifest(repo / "oracle")
    commit_all(repo, "a property the worker must not be able to read")
    git(repo, "checkout", "--quiet", "-B", "candidate")
    env = {**{k: v for k, v in os.environ.items() if k != "TMPDIR"}, workdir.PACK_RAM_ENV: "1"}
    env["VERDICT_GATE_KEEP_WORK"] = "1"  # to learn where the pack was, then remove it below
    proc = subprocess.run([sys.executable, "-m", "verdict_gate", "run", "--repo", str(repo), "--base", "main",
                           "--pack", "git:main:oracle", "--out", str(tmp_path / "out"), "--today", "2026-11-30"],
                          env=env, capture_output=True, text=True, timeout=600)
    kept = [line.split("kept work directory ", 1)[1].strip() for line in proc.stderr.splitlines()
            if "kept work directory " in line]
    try:
        assert any(k.startswith(f"{workdir.RAM_DIR}/") and (Path(k) / "pack" / "catalog.yaml").is_file()
                   for k in kept), proc.stderr
        docs = validate_evidence(tmp_path / "out")
        verdicts = docs["verdicts.json"]["verdicts"]
        assert (verdicts["prop.blind"]["verdict"], verdicts["prop.blind"]["reason"]) == ("pass", "held"), \
            json.dumps(verdicts["prop.blind"])
    finally:
        for k in kept:
            subprocess.run(["chmod", "-R", "u+w", k], check=False)
            subprocess.run(["rm", "-rf", k], check=False)
