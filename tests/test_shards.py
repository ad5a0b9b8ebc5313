"""Shards across runners: ``run --shard K/N`` + ``merge`` decide exactly as one run does, and
refuse to decide from shards that are missing, duplicated or gated something else."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import cli, commit_all, validate_evidence, without_timings
from verdict_gate.core.errors import GateError
from verdict_gate.core.shard import ShardSpec, parse_shard, problems, share
from verdict_gate.demo import _apply, examples_dir

SPEC = yaml.safe_load((examples_dir() / "candidates.yaml").read_text())
CANDIDATES = {c["name"]: c for c in SPEC["candidates"]}
EXIT = {"promoted": 0, "blocked": 1, "void": 3, "incomplete": 4}
RUN_ID = {"VERDICT_GATE_RUN_ID": "shards-test-1"}
COMMON = ("--base", "main", "--pack", "git:main:oracle", "--today", "2026-11-30")


# --- the pure part: spec, share, problems ----------------------------------------------------------


@pytest.mark.parametrize("text,want", [("1/1", (1, 1)), ("2/3", (2, 3)), (" 3/3 ", (3, 3)), ("256/256", (256, 256))])
def test_parse_shard(text, want):
    spec = parse_shard(text)
    assert (spec.index, spec.count) == want


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "1/257", "a/b", "1/", "/3", "1-3", "", "1/3/5", "-1/3"])
def test_parse_shard_refuses(text):
    with pytest.raises(GateError) as err:
        parse_shard(text)
    assert "--shard 1/3" in err.value.fix


def test_shares_partition_the_catalog_in_order():
    ids = [f"p{i}" for i in range(10)]
    parts = [share(ids, ShardSpec(k, 3)) for k in (1, 2, 3)]
    assert parts == [["p0", "p3", "p6", "p9"], ["p1", "p4", "p7"], ["p2", "p5", "p8"]]
    assert sorted(sum(parts, [])) == sorted(ids)
    assert share(ids, ShardSpec(1, 1)) == ids
    assert share(["only"], ShardSpec(2, 2)) == []  # more shards than properties: an empty share


def _header(index, count, props, **over):
    return {"index": index, "count": count, "head_revision": "h" * 40, "base_revision": "b" * 40,
            "pack_sha256": "a" * 64, "fixture_digest": "f" * 64, "run_id": "r", "properties": props, **over}


EXPECTED = {"head_revision": "h" * 40, "base_revision": "b" * 40, "pack_sha256": "a" * 64}
IDS = ["p0", "p1", "p2"]


@pytest.mark.parametrize("headers,needle", [
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 2, ["p1"]))], None),
    ([("d1", _header(1, 2, ["p0", "p2"]))], "shard 2/2 is missing"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 2, ["p1"])), ("d3", _header(2, 2, ["p1"]))],
     "shard 2/2 was given twice: d2 and d3"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 2, ["p1"], pack_sha256="c" * 64))],
     "shard 2/2 (d2): pack sha256 'cccc"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 2, ["p1"], fixture_digest="e" * 64))],
     "fixture digest"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 2, ["p1"], head_revision="x" * 40))], "head revision"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 2, ["p1"], base_revision="x" * 40))], "base revision"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 2, ["p1"], run_id="other"))], "run id"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 3, ["p1"]))], "shard count"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 2, ["p1", "p2"]))], "p2 is also covered by shard 1/2"),
    ([("d1", _header(1, 2, ["p0"])), ("d2", _header(2, 2, ["p1"]))], "1 property is covered by no shard: p2"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(2, 2, ["p1", "zz"]))], "zz is not one this run scores"),
    ([("d1", _header(1, 2, ["p0", "p2"])), ("d2", _header(3, 2, ["p1"]))], "outside 1..2"),
    ([], "no shard was given"),
], ids=["ok", "missing", "duplicate", "pack", "fixtures", "head", "base", "run-id", "count", "overlap", "gap",
        "foreign", "index", "none"])
def test_problems(headers, needle):
    got = problems(headers, EXPECTED, IDS)
    if needle is None:
        assert got == []
    else:
        assert any(needle in line for line in got), got


# --- end to end on the example repository -----------------------------------------------------------


def _shards(repo: Path, tmp: Path, count: int, env=RUN_ID) -> list[Path]:
    dirs = []
    for k in range(1, count + 1):
        out = tmp / f"shard{k}"
        proc = cli("run", "--repo", str(repo), *COMMON, "--out", str(out), "--shard", f"{k}/{count}", env=env)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        assert json.loads((out / "shard.json").read_text())["index"] == k
        assert not (out / "verdicts.json").exists()  # a shard does not decide
        validate_evidence(out)
        audited = cli("audit", str(out))  # a shard's directory re-checks from its files alone
        assert audited.returncode == 0 and "one shard of a sharded run" in audited.stdout, audited.stdout
        dirs.append(out)
    return dirs


def _merge(repo: Path, dirs: list[Path], out: Path):
    proc = cli("merge", *map(str, dirs), "--repo", str(repo), *COMMON, "--out", str(out))
    assert "Traceback" not in proc.stderr, proc.stderr
    if (out / "verdicts.json").is_file():  # merged evidence re-checks too, an incomplete merge included
        audited = cli("audit", str(out))
        assert audited.returncode == 0, audited.stdout + audited.stderr
    return proc


@pytest.mark.parametrize("name", ["good-refactor", "hidden-behind-freeze", "new-failure"])
def test_three_shards_decide_as_one_run(example_repo, tmp_path, name):
    _apply(example_repo, CANDIDATES[name]["edits"])
    commit_all(example_repo, name)
    whole = cli("run", "--repo", str(example_repo), *COMMON, "--out", str(tmp_path / "whole"), env=RUN_ID)
    merged = _merge(example_repo, _shards(example_repo, tmp_path, 3), tmp_path / "merged")
    assert merged.returncode == whole.returncode == EXIT[CANDIDATES[name]["expect"]["outcome"]], merged.stderr
    one = validate_evidence(tmp_path / "whole")
    three = validate_evidence(tmp_path / "merged")
    for name_ in ("verdicts.json", "runs.json", "base.sig.json", "fixture.digest", "oracle_edited.json"):
        assert without_timings(three[name_]) == without_timings(one[name_]), name_
    assert merged.stdout == whole.stdout  # the same verdict table


def test_missing_duplicate_and_foreign_shards_are_incomplete(example_repo, tmp_path):
    (example_repo / "README.md").write_text("docs only\n")
    commit_all(example_repo, "docs")
    dirs = _shards(example_repo, tmp_path, 3)

    missing = _merge(example_repo, [dirs[0], dirs[2]], tmp_path / "m1")
    doc = json.loads((tmp_path / "m1" / "verdicts.json").read_text())
    assert missing.returncode == EXIT["incomplete"] and doc["outcome"] == "incomplete"
    assert "shard 2/3 is missing" in doc["promotion"]

    twice = _merge(example_repo, [dirs[0], dirs[1], dirs[2], dirs[1]], tmp_path / "m2")
    doc = json.loads((tmp_path / "m2" / "verdicts.json").read_text())
    assert twice.returncode == EXIT["incomplete"] and "shard 2/3 was given twice" in doc["promotion"]

    # The base branch moves between the shard jobs: shard 2 gates another pack than the others.
    later = tmp_path / "later"
    shutil.copytree(example_repo, later)
    from conftest import git

    git(later, "checkout", "--quiet", "main")
    catalog = later / "oracle" / "catalog.yaml"
    catalog.write_text(catalog.read_text() + "# reviewed again\n")
    proc = cli("manifest", "write", str(later / "oracle"))
    assert proc.returncode == 0, proc.stderr
    commit_all(later, "oracle: catalog comment")
    git(later, "checkout", "--quiet", "candidate")
    other = tmp_path / "other2"
    proc = cli("run", "--repo", str(later), *COMMON, "--out", str(other), "--shard", "2/3", env=RUN_ID)
    assert proc.returncode == 0, proc.stderr
    foreign = _merge(example_repo, [dirs[0], other, dirs[2]], tmp_path / "m3")
    doc = json.loads((tmp_path / "m3" / "verdicts.json").read_text())
    assert foreign.returncode == EXIT["incomplete"]
    assert "pack sha256" in doc["promotion"] and "differs from this merge's" in doc["promotion"]
    assert any("shard 2/3" in n and "pack sha256" in n for n in doc["notices"])


def test_shard_needs_a_shared_run_id_and_merge_a_readable_shard(example_repo, tmp_path):
    env = {"VERDICT_GATE_RUN_ID": "", "GITHUB_RUN_ID": ""}
    proc = cli("run", "--repo", str(example_repo), *COMMON, "--out", str(tmp_path / "s"), "--shard", "1/2", env=env)
    assert proc.returncode == 2 and "VERDICT_GATE_RUN_ID" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "s").exists()
    bogus = tmp_path / "bogus"
    bogus.mkdir()
    (bogus / "shard.json").write_text("{}")
    proc = _merge(example_repo, [bogus], tmp_path / "m")
    assert proc.returncode == 2 and "shard.json" in proc.stderr and "fix:" in proc.stderr
    proc = _merge(example_repo, [tmp_path / "nowhere"], tmp_path / "m")
    assert proc.returncode == 2 and "is not a directory" in proc.stderr


def test_an_edited_signature_in_a_shard_is_refused(example_repo, tmp_path):
    _apply(example_repo, CANDIDATES["new-failure"]["edits"])
    commit_all(example_repo, "new-failure")
    dirs = _shards(example_repo, tmp_path, 2)
    for d in dirs:  # rewrite every failure's signature to the frozen one's shape: the merge recomputes it
        runs = json.loads((d / "runs.json").read_text())
        for rec in runs["runs"].values():
            for f in rec.get("failures") or []:
                f["signature"] = "sha256:" + "0" * 64
        (d / "runs.json").write_text(json.dumps(runs))
    proc = _merge(example_repo, dirs, tmp_path / "m")
    assert proc.returncode == 2 and "signature" in proc.stderr and "Traceback" not in proc.stderr


def test_a_shard_whose_files_disagree_with_its_header_is_incomplete(example_repo, tmp_path):
    """Found by a red-team pass: a real runs.json of another head, or a record's fixture digest edited
    alone, under an honest shard.json; and shard.json files whose indices were swapped."""
    (example_repo / "README.md").write_text("docs only\n")
    commit_all(example_repo, "docs")
    old = _shards(example_repo, tmp_path / "old", 2)
    _apply(example_repo, CANDIDATES["new-failure"]["edits"])
    commit_all(example_repo, "new-failure")
    new = _shards(example_repo, tmp_path / "new", 2)
    mixed = tmp_path / "mixed"
    shutil.copytree(new[0], mixed)
    shutil.copy(old[0] / "runs.json", mixed / "runs.json")  # unedited, from the docs-only head
    proc = _merge(example_repo, [mixed, new[1]], tmp_path / "m1")
    doc = json.loads((tmp_path / "m1" / "verdicts.json").read_text())
    assert proc.returncode == EXIT["incomplete"] and "runs.json revision" in doc["promotion"], doc["promotion"]

    edited = tmp_path / "edited"
    shutil.copytree(new[1], edited)
    runs = json.loads((edited / "runs.json").read_text())
    for rec in runs["runs"].values():
        rec["fixture_digest"] = "e" * 64
    (edited / "runs.json").write_text(json.dumps(runs))
    proc = _merge(example_repo, [new[0], edited], tmp_path / "m2")
    doc = json.loads((tmp_path / "m2" / "verdicts.json").read_text())
    assert proc.returncode == EXIT["incomplete"] and "fixture_digest" in doc["promotion"], doc["promotion"]

    swapped = []
    for d, other in ((new[0], 2), (new[1], 1)):
        s = tmp_path / f"swap{other}"
        shutil.copytree(d, s)
        header = json.loads((s / "shard.json").read_text())
        header["index"] = other
        (s / "shard.json").write_text(json.dumps(header))
        swapped.append(s)
    proc = _merge(example_repo, swapped, tmp_path / "m3")
    doc = json.loads((tmp_path / "m3" / "verdicts.json").read_text())
    assert proc.returncode == EXIT["incomplete"] and "lists other properties" in doc["promotion"], doc["promotion"]


def test_a_shard_file_that_is_a_fifo_or_too_deep_is_refused(example_repo, tmp_path):
    (example_repo / "README.md").write_text("docs only\n")
    commit_all(example_repo, "docs")
    dirs = _shards(example_repo, tmp_path, 2)
    (dirs[0] / "runs.json").unlink()
    os.mkfifo(dirs[0] / "runs.json")  # would block a plain open() for ever
    proc = _merge(example_repo, dirs, tmp_path / "m1")
    assert proc.returncode == 2 and "not a regular file" in proc.stderr, proc.stderr
    (dirs[0] / "runs.json").unlink()
    (dirs[0] / "runs.json").write_text("[" * 100_000)
    proc = _merge(example_repo, dirs, tmp_path / "m2")
    assert proc.returncode == 2 and "cannot be read as JSON" in proc.stderr and "internal error" not in proc.stderr


def test_a_void_shard_says_so_and_makes_the_merge_void(example_repo, tmp_path):
    _apply(example_repo, CANDIDATES["edit-ledger"]["edits"])
    commit_all(example_repo, "edit-ledger")
    dirs = []
    for k in (1, 2):
        out = tmp_path / f"shard{k}"
        proc = cli("run", "--repo", str(example_repo), *COMMON, "--out", str(out), "--shard", f"{k}/2", env=RUN_ID)
        assert proc.returncode == EXIT["void"] and "Traceback" not in proc.stderr, proc.stderr
        header = validate_evidence(out)["shard.json"]
        assert (header["outcome"], header["index"], header["count"]) == ("void", k, 2) and header["void_reason"]
        dirs.append(out)
    proc = _merge(example_repo, dirs, tmp_path / "merged")
    assert proc.returncode == EXIT["void"], proc.stderr
    assert json.loads((tmp_path / "merged" / "verdicts.json").read_text())["outcome"] == "void"
