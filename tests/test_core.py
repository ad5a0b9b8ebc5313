"""Signature, tree-v1 digest, manifest, diff split, catalog and ledger: the pure core."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.core import diffsplit
from verdict_gate.core.digest import compare_manifest
from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.core.signature import canonical_json, differing_parts, make_signature, normalize_message, signature_of
from verdict_gate.host.files import parse_catalog, parse_ledger
from verdict_gate.host.hashing import build_manifest, digest_dir, scan, walk

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

# --- signature ---------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "tmp", "fold", "expected"), [
    ("  expected 3, got 2\n", [], True, "expected <n>, got <n>"),
    ("<object at 0x7f3a2b1c>", [], True, "<object at <addr>>"),
    ("read /tmp/vg-123/tree/x.json", ["/tmp/vg-123/tree"], True, "read <tmp>/x.json"),
    ("error E1234", [], False, "error E1234"),
    ("a 0xDEAD and 12", [], False, "a <addr> and 12"),
], ids=["digits", "address", "tmp-path", "no-folding", "address-without-folding"])
def test_normalize_message(raw, tmp, fold, expected):
    assert normalize_message(raw, tmp, fold) == expected


def test_signature_is_sha256_of_canonical_parts():
    sig = make_signature(prop_id="prop.x", node="p.py::t", seed=1, exc_type="builtins.ValueError",
                         message="bad 42", counterexample={"b": 1, "a": [1, 2]})
    expected = "sha256:" + hashlib.sha256(canonical_json(dict(sig.parts)).encode()).hexdigest()
    assert sig.value == expected == signature_of(sig.parts)
    assert sig.parts["counterexample"] == '{"a":[1,2],"b":1}'
    assert sig.parts["algorithm"] == "sig-v3" and sig.parts["origin"] == "oracle" and sig.parts["site"] is None
    assert len(sig.parts["message_digest"]) == 16


@given(a=st.integers(0, 10**9), b=st.integers(0, 10**9))
def test_signatures_ignore_numbers_in_messages_but_not_counterexamples(a, b):
    def sig(n: int, ce: int) -> str:
        return make_signature(prop_id="p", node="n", seed=1, exc_type="E", message=f"took {n} ms",
                              counterexample={"x": ce}).value

    assert sig(a, 1) == sig(b, 1)
    assert (sig(a, a) == sig(a, b)) == (a == b)


def test_differing_parts_names_each_part():
    one = make_signature(prop_id="p", node="n", seed=1, exc_type="E", message="m", counterexample=None).parts
    two = make_signature(prop_id="p", node="n", seed=2, exc_type="F", message="m", counterexample=None).parts
    assert differing_parts(one, two) == ("seed", "exc_type")


# --- tree-v1 digest and manifest ---------------------------------------------------------


def write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def reference_tree_v1(root: Path) -> str:
    """An independent reading of docs/design.md §4, to check the implementation against."""
    files = sorted((p for p in root.rglob("*") if p.is_file()), key=lambda p: p.relative_to(root).parts)
    h = hashlib.sha256()
    for p in files:
        h.update(os.fsencode(p.relative_to(root).as_posix()) + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def test_tree_v1_orders_by_components_not_strings(tmp_path):
    # "a/b" sorts before "a.txt" by components ("a" < "a.txt"), after it as joined strings ("/" > ".").
    write(tmp_path, {"a/b": b"1", "a.txt": b"2", "a-b/c": b"3", "empty/.keep": b""})
    (tmp_path / "emptydir").mkdir()
    result = digest_dir(tmp_path, format="tree-v1")
    assert result.digest == reference_tree_v1(tmp_path)
    assert list(result.files) == ["a/b", "a-b/c", "a.txt", "empty/.keep"]  # hashed in component order
    by_hand = hashlib.sha256(b"a/b\x001\x00a-b/c\x003\x00a.txt\x002\x00empty/.keep\x00\x00").hexdigest()
    assert result.digest == by_hand


@given(st.dictionaries(st.from_regex(r"[a-c]{1,2}(/[a-c.]{1,2}){0,2}", fullmatch=True).filter(
    lambda p: not any(seg in (".", "..") for seg in p.split("/"))), st.binary(max_size=20), max_size=8))
def test_tree_v1_matches_reference(tmp_path_factory, files):
    root = tmp_path_factory.mktemp("tree")
    try:
        write(root, files)
    except (FileExistsError, NotADirectoryError, IsADirectoryError):
        return  # a path that is both a file and a directory cannot exist
    assert digest_dir(root, format="tree-v1").digest == reference_tree_v1(root)


def test_empty_directories_do_not_count(tmp_path):
    write(tmp_path / "x", {"f": b"1"})
    before = digest_dir(tmp_path / "x").digest
    (tmp_path / "x" / "d" / "e").mkdir(parents=True)
    assert digest_dir(tmp_path / "x").digest == before


def test_symlinks_are_refused_not_followed(tmp_path):
    write(tmp_path, {"f": b"1"})
    (tmp_path / "link").symlink_to("/etc/passwd")
    with pytest.raises(GateError, match="symbolic link"):
        digest_dir(tmp_path)


def test_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(GateError, match="not a regular file"):
        digest_dir(tmp_path)


def test_one_read_serves_digest_and_manifest(tmp_path, monkeypatch):
    write(tmp_path, {"a": b"x" * 10, "b/c": b"y"})
    opened: list[str] = []
    real_open = os.open

    def counting_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("os.open", counting_open)
    result = scan(walk(tmp_path), format="tree-v1")
    assert sorted(opened) == sorted(str(tmp_path / p) for p in ("a", "b/c"))
    assert result.files["a"] == hashlib.sha256(b"x" * 10).hexdigest()


def test_manifest_verify_lists_every_difference(tmp_path):
    write(tmp_path, {"catalog.yaml": b"1", "keep": b"2", "gone": b"3"})
    expected = build_manifest(tmp_path)
    (tmp_path / "gone").unlink()
    (tmp_path / "keep").write_bytes(b"changed")
    write(tmp_path, {"new": b"4", "manifest.sha256": b"{}"})
    diff = compare_manifest(expected, build_manifest(tmp_path))
    assert (diff.missing, diff.extra, diff.changed) == (("gone",), ("new",), ("keep",))
    assert not diff.ok and "missing: gone" in diff.describe()


# --- diff split --------------------------------------------------------------------------

CATALOG = parse_catalog("""
version: 1
properties:
  - {id: prop.a, oracle: properties/test_a.py}
  - {id: prop.b, oracle: properties/test_b.py, node: test_b}
""", "catalog.yaml")


@pytest.mark.parametrize(("raw", "bucket_of", "moved", "void"), [
    (b"M\0src/app.py\0", {"src/app.py": "src"}, (), False),
    (b"M\0oracle/properties/test_a.py\0", {"oracle/properties/test_a.py": "oracle"}, ("prop.a",), False),
    (b"R090\0oracle/properties/test_b.py\0tests/x.py\0",
     {"oracle/properties/test_b.py": "oracle", "tests/x.py": "other"}, ("prop.b",), False),
    (b"R100\0src/x.py\0oracle/properties/test_a.py\0", {"src/x.py": "src"}, ("prop.a",), False),
    (b"M\0oracle/freeze_ledger.json\0", {"oracle/freeze_ledger.json": "control"}, (), True),
    (b"A\0oracle/fixtures/new.json\0", {"oracle/fixtures/new.json": "control"}, (), True),
    (b"M\0.github/workflows/ci.yml\0", {".github/workflows/ci.yml": "control"}, (), True),
    (b"A\0oracle/properties/helpers.py\0", {"oracle/properties/helpers.py": "oracle"}, (), True),
    (b"M\0fixtures/rates.json\0D\0tests/generated/test_x.py\0", {"fixtures/rates.json": "fixtures",
                                                                 "tests/generated/test_x.py": "generated"}, (), False),
    (b"M\0src/\xff\nname.py\0", {os.fsdecode(b"src/\xff\nname.py"): "src"}, (), False),
], ids=["src", "property-edit", "rename-away", "rename-onto", "ledger", "pack-fixture", "workflow",
        "unowned-oracle-file", "fixtures-and-generated", "odd-bytes"])
def test_diff_split(raw, bucket_of, moved, void):
    parts = diffsplit.split(diffsplit.parse_name_status(raw), CATALOG)
    for path, bucket in bucket_of.items():
        assert path in parts.buckets[bucket]
    assert parts.oracle_edited == moved
    assert parts.void is void


@pytest.mark.parametrize("raw", [b"M\0", b"R100\0only-one\0", b"Z\0x\0"],
                         ids=["truncated", "half-rename", "bad-status"])
def test_diff_parse_errors(raw):
    with pytest.raises(diffsplit.DiffParseError):
        diffsplit.parse_name_status(raw)


@given(st.lists(st.tuples(st.sampled_from(["M", "A", "D", "R100"]),
                          st.lists(st.sampled_from(["src/a.py", "oracle/properties/test_a.py", "oracle/catalog.yaml",
                                                    "fixtures/x", "docs/y", "tests/generated/z"]), min_size=2,
                                   max_size=2)), max_size=6))
def test_every_path_lands_in_exactly_one_bucket(records):
    raw = b"".join(
        (s.encode() + b"\0" + b"\0".join(p.encode() for p in (paths if s.startswith("R") else paths[:1])) + b"\0")
        for s, paths in records)
    parts = diffsplit.split(diffsplit.parse_name_status(raw), CATALOG)
    seen = [p for paths in parts.buckets.values() for p in paths]
    assert len(seen) == len(set(seen))
    assert set(seen) == {p for c in parts.changes for p in c.paths}
    if "oracle/catalog.yaml" in seen:
        assert parts.void


# --- catalog and ledger ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "where", "needle"), [
    ("version: 1\nproperties: [}", "catalog.yaml:2", "not valid YAML"),
    ("version: 2\nproperties: [{id: a, oracle: x.py}]", "$.version", "1 was expected"),
    ("version: 1\nproperties: [{id: a}]", "$.properties[0]", "'oracle' is a required property"),
    ("version: 1\nproperties: [{id: a, oracle: x.py, colour: red}]", "$.properties[0]", "colour"),
    ("version: 1\nproperties: [{id: a, oracle: ../x.py}]", "$.properties[0].oracle", "not a relative path"),
    ("version: 1\nproperties: [{id: a, oracle: x.py}, {id: a, oracle: y.py}]", "$.properties[1].id", "duplicate"),
    ("version: 1\nproperties: [{id: a, oracle: x.py}]\nclaimed: [b]", "$.claimed", "no property defines"),
    ("version: 1\nproperties: [{id: a, oracle: x.py, claim: 2026-01-01}]", "$.properties[0].claim", "not of type"),
], ids=["yaml-syntax", "version", "missing-field", "unknown-key", "escaping-path", "duplicate-id",
        "unknown-claim", "yaml-date"])
def test_catalog_errors_name_file_path_and_fix(text, where, needle):
    with pytest.raises(GateError) as info:
        parse_catalog(text, "catalog.yaml")
    message = str(info.value)
    assert where in message and needle in message and "fix:" in message


def test_catalog_errors_in_a_pack_are_void():
    with pytest.raises(VoidError):
        parse_catalog("version: 1\nproperties: []", "pack/catalog.yaml", void=True)


def ledger_text(**overrides: object) -> str:
    sig = make_signature(prop_id="prop.a", node="n", seed=1, exc_type="E", message="m", counterexample=None)
    record: dict[str, object] = {"prop_id": "prop.a", "signature": sig.value, "signature_parts": dict(sig.parts),
                                 "fixture_digest": "d" * 64, "base_revision": "a" * 40, "reason": "known",
                                 "first_seen": "2026-11-01"}
    record.update(overrides)
    return json.dumps({"version": 1, "freezes": [record]})


def test_ledger_loads():
    ledger = parse_ledger(ledger_text(expires_on="2026-12-31"), "freeze_ledger.json", known_ids=["prop.a"])
    assert ledger.for_id("prop.a")[0].expires_on.isoformat() == "2026-12-31"


@pytest.mark.parametrize(("overrides", "needle"), [
    ({"reason": "  "}, "must be human-written, non-empty"),
    ({"reason": ""}, "must be human-written, non-empty"),
    ({"first_seen": "2026-02-30"}, "not a calendar date"),
    ({"signature": "sha256:" + "0" * 64}, "not the sha256 of its signature_parts"),
    ({"prop_id": "prop.zzz"}, "differs from signature_parts.prop_id"),
    ({"base_revision": "HEAD"}, "does not match"),
], ids=["blank-reason", "empty-reason", "impossible-date", "forged-signature", "other-prop", "symbolic-revision"])
def test_ledger_errors(overrides, needle):
    with pytest.raises(GateError, match="fix:") as info:
        parse_ledger(ledger_text(**overrides), "freeze_ledger.json", known_ids=["prop.a"])
    assert needle in str(info.value)


def test_ledger_json_syntax_error_names_line():
    with pytest.raises(GateError, match=r"freeze_ledger.json:2:"):
        parse_ledger('{"version": 1,\n  "freezes": [,]}', "freeze_ledger.json")
