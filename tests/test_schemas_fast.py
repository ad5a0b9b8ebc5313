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

from verdict_gate.core.errors import GateError
from verdict_gate.core.signature import signature_of
from verdict_gate.host import schemas

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


def test_an_invalid_document_keeps_jsonschemas_message():
    doc = {"version": 1, "freezes": [_freeze(0)]}
    doc["freezes"][0]["reason"] = " "
    with pytest.raises(GateError) as err:
        schemas.check("freeze_ledger", doc, "oracle/freeze_ledger.json")
    assert "oracle/freeze_ledger.json $.freezes[0].reason" in str(err.value)
    assert "must be human-written, non-empty" in str(err.value)


def test_schemas_of_another_draft_use_jsonschema_only():
    assert schemas.fast_validator("sarif-2.1.0") is None
