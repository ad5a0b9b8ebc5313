"""The compiled schema check (the fast path of verdict_gate.host.schemas) agrees with jsonschema.

The fast path only answers "valid"; an invalid document is validated again by jsonschema for the
message. So the one thing it must never do is call valid what jsonschema calls invalid: these
tests mutate valid documents of every schema and compare the two answers.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sarif_and_summary import _blocked

from verdict_gate.core.errors import GateError
from verdict_gate.core.signature import signature_of
from verdict_gate.host import schemas
from verdict_gate.report.sarif import sarif

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

ROOT = Path(__file__).resolve().parents[1]
HEX64 = "0123456789abcdef" * 4


def _freeze(i: int) -> dict[str, Any]:
    parts = {"algorithm": "sig-v1", "prop_id": f"prop.p{i}", "node": "properties/test_p.py::test_p", "seed": None,
             "exc_type": "builtins.AssertionError", "message_digest": f"{i:016x}", "counterexample": None}
    return {"prop_id": f"prop.p{i}", "signature": signature_of(parts), "signature_parts": parts,
            "fixture_digest": HEX64, "base_revision": "b" * 40, "reason": "known flaky", "first_seen": "2026-11-01",
            "expires_on": "2026-12-31"}


SEEDS: dict[str, list[Any]] = {
    "catalog": [yaml.safe_load((ROOT / "oracle" / "catalog.yaml").read_text()),
                yaml.safe_load((ROOT / "examples" / "orders" / "repo" / "oracle" / "catalog.yaml").read_text())
                if (ROOT / "examples" / "orders" / "repo" / "oracle" / "catalog.yaml").exists() else
                {"version": 1, "properties": [{"id": "prop.a", "oracle": "properties/test_a.py"}]}],
    "freeze_ledger": [{"version": 1, "freezes": [_freeze(0), _freeze(1)]},
                      json.loads((ROOT / "examples" / "orders" / "freeze_ledger.json").read_text())],
    "manifest": [{"catalog.yaml": HEX64, "fixtures/a b.json": HEX64}],
    "fixture_digest": [{"version": 1, "format": "tree-v2", "digest": HEX64, "revision": "a" * 40,
                        "roots": {"pack": "fixtures/", "repo": ["fixtures/**"]}, "files": 3, "bytes": 10,
                        "compat": {"tree-v1": HEX64},
                        "normalizers": [{"glob": "*.log", "pattern": "\\d+", "replacement": "<n>"}]}],
    "sarif-2.1.0": [sarif(_blocked())],  # draft-04: `integer` is not 2.0, a $ref's siblings are ignored
}

ODD = [None, True, False, 0, 1, -1, 1.5, 2.0, "", " ", "x", "2026-01-01", "prop.ok", HEX64, "sha256:" + HEX64,
       "a" * 40, [], [1], ["x"], {}, {"x": 1}, "tree-v1", "tree-v2", "example", "property"]


def _paths(doc: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*here, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*here, i))
    return out


def _mutate(doc: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    doc = copy.deepcopy(doc)
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "add" and isinstance(parent, dict):
        parent[f"extra_{last}"] = value
    elif action == "add" and isinstance(parent, list):
        parent.append(value)
    elif action == "dup" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    else:
        parent[last] = value
    return doc


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_every_seed_is_valid_both_ways(name):
    for doc in SEEDS[name]:
        assert schemas.validator(name).is_valid(doc)
        check = schemas.fast_validator(name)
        assert check is not None and check(doc)


@pytest.mark.parametrize("name", sorted(SEEDS))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_path_agrees_with_jsonschema(name, data):
    doc = data.draw(st.sampled_from(SEEDS[name]))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)))
        action = data.draw(st.sampled_from(["set", "delete", "add", "dup"] if path else ["set"]))
        doc = _mutate(doc, path, action, data.draw(st.sampled_from(ODD)))
    check = schemas.fast_validator(name)
    assert check is not None
    assert check(doc) == schemas.validator(name).is_valid(doc), doc


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_every_single_change_of_a_seed_gets_jsonschemas_answer(name):
    """Each place of each seed deleted, or set to another type (an integral float, a bool, a string, null):
    every change the dialects tell apart (draft-04's ``integer`` is not ``2.0``) is tried, not drawn."""
    check = schemas.fast_validator(name)
    assert check is not None
    for seed in SEEDS[name]:
        for path in _paths(seed):
            here: Any = seed
            for step in path:
                here = here[step]
            values = [True, "x", None, [], float(here) if type(here) is int else 2.0]
            for doc in [*(_mutate(seed, path, "set", v) for v in values),
                        *([_mutate(seed, path, "delete", None)] if path else [])]:
                assert check(doc) == schemas.validator(name).is_valid(doc), (path, doc)


def test_the_same_object_twice_is_a_duplicate_as_jsonschema_has_it():
    """``json.loads`` returns one ``NaN`` object for every ``NaN``: two rules holding it are duplicates to
    jsonschema (an object equals itself), so the compiled check must not call the log valid (red team)."""
    log = json.loads(json.dumps(sarif(_blocked())).replace('"name": "verdict-gate"', '"name": "verdict-gate", '
                                                                                     '"properties": {"n": NaN}', 1))
    driver = log["runs"][0]["tool"]["driver"]
    driver["rules"] = [driver["rules"][0], json.loads(json.dumps(driver["rules"][0]))]
    driver["rules"][1]["properties"] = driver["properties"]  # the same dict (and NaN) in both places
    driver["rules"][0]["properties"] = driver["properties"]
    check = schemas.fast_validator("sarif-2.1.0")
    assert check is not None and not schemas.validator("sarif-2.1.0").is_valid(log)
    assert not check(log)


def test_an_invalid_document_keeps_jsonschemas_message():
    doc = {"version": 1, "freezes": [_freeze(0)]}
    doc["freezes"][0]["reason"] = " "
    with pytest.raises(GateError) as err:
        schemas.check("freeze_ledger", doc, "oracle/freeze_ledger.json")
    assert "oracle/freeze_ledger.json $.freezes[0].reason" in str(err.value)
    assert "must be human-written, non-empty" in str(err.value)


def test_a_schema_the_compiler_cannot_write_is_left_to_jsonschema(monkeypatch):
    """Another dialect is never compiled; a draft-04 keyword the compiler does not write (``dependencies``)
    is found when a document first reaches it, and jsonschema answers that document."""
    docs = {**schemas._documents(),
            schemas.BASE_URI + "seven.schema.json": {"$schema": "http://json-schema.org/draft-07/schema#",
                                                     "type": "object"},
            schemas.BASE_URI + "four.schema.json": {
                "$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
                "properties": {"a": {"$ref": "#/definitions/a"}, "n": {"type": "integer"},
                               "b": {"$ref": "#/definitions/n", "type": "string"}},  # the sibling is ignored
                "definitions": {"a": {"type": "object", "dependencies": {"x": ["y"]}}, "n": {"type": "integer"}}}}
    for cached in (schemas._documents, schemas._registry, schemas.validator, schemas.fast_validator):
        cached.cache_clear()
    monkeypatch.setattr(schemas, "_documents", lambda: docs)
    try:
        assert schemas.fast_validator("seven") is None
        check = schemas.fast_validator("four")
        assert check is not None and check({"n": 1}) and not check({"n": 2.0})  # 2.0 is no draft-04 integer
        assert check({"b": 1}) and not check({"b": "1"})
        schemas.check("four", {"n": 1}, "four.json")
        defined: list[str] = []
        define = schemas._Compiler.define
        monkeypatch.setattr(schemas._Compiler, "define",
                            lambda self, uri, fn: (defined.append(uri), define(self, uri, fn))[1])
        for _ in range(2):  # compiled once: the second document is left to jsonschema at once
            with pytest.raises(schemas._Unsupported):
                check({"a": {"x": 1}})
        assert [u.rpartition("#")[2] for u in defined] == ["/definitions/a"]
        with pytest.raises(GateError, match=r"four.json \$.a.*'y' is a dependency of 'x'"):
            schemas.check("four", {"a": {"x": 1}}, "four.json")
        schemas.check("four", {"a": {"x": 1, "y": 2}}, "four.json")
    finally:
        for cached in (schemas._registry, schemas.validator, schemas.fast_validator):
            cached.cache_clear()
