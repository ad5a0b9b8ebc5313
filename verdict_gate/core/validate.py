"""JSON Schema validation of every file read or written (docs/design.md, "Files").

Schemas live in ``schemas/`` (installed as the ``verdict_gate.schemas`` package data) and refer
to each other by relative ``$ref`` (``common.schema.json#/$defs/…``), resolved from a
local registry: nothing is fetched (jsonschema ≥ 4.18 never fetches remote refs).
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

from verdict_gate.core.errors import GateError, VoidError

BASE_URI = "https://verdict-gate.dev/schemas/"


def schema_dir() -> Traversable:
    """Where the ``*.schema.json`` files are: the installed ``verdict_gate.schemas`` package data,
    else (running from a source checkout, ``verdict_gate`` imported from the work tree) ``schemas/``."""
    try:
        return resources.files("verdict_gate.schemas")
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "schemas"


@lru_cache(maxsize=1)
def _registry() -> Registry:
    registry: Registry = Registry()
    for item in schema_dir().iterdir():
        if item.name.endswith(".schema.json"):
            schema = json.loads(item.read_text(encoding="utf-8"))
            registry = registry.with_resource(BASE_URI + item.name, Resource.from_contents(schema))
    return registry


@cache
def validator(name: str) -> Any:
    """The validator for ``schemas/<name>.schema.json`` (e.g. ``"catalog"``)."""
    schema = _registry().contents(BASE_URI + f"{name}.schema.json")
    cls = validators.validator_for(schema, default=Draft202012Validator)  # the SARIF schema is draft-07
    return cls(schema, registry=_registry())


def json_path(error: ValidationError) -> str:
    """The instance location of ``error`` as a JSONPath string, e.g. ``$.freezes[0].reason``."""
    out = "$"
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _fix(error: ValidationError, source: str) -> str:
    where = json_path(error)
    if error.validator == "type" and "string" in error.validator_value and not isinstance(error.instance, str):
        if hasattr(error.instance, "isoformat"):
            return f"quote the date at {where} so YAML keeps it a string, e.g. '{error.instance.isoformat()}'"
        return f"write {where} as a quoted string"
    if error.validator == "required":
        return f"add the missing field at {where} in {source}"
    if error.validator == "additionalProperties":
        allowed = ", ".join(sorted(error.schema.get("properties", {})))
        return f"remove or rename the unknown key at {where} (allowed keys: {allowed})"
    if error.validator in ("pattern", "minLength") and error.schema.get("description"):
        return f"{where} must be {error.schema['description']}"
    if error.validator == "const":
        return f"set {where} to {error.validator_value!r}"
    if error.validator == "enum":
        return f"use one of {error.validator_value} at {where}"
    return f"correct {where} in {source} to match schemas/{{name}}.schema.json"


def check(name: str, instance: Any, source: str, *, void: bool = False) -> None:
    """Validate ``instance`` against ``schemas/<name>.schema.json``.

    Args:
        name: schema name without suffix (``catalog``, ``freeze_ledger``, ``runs`` …).
        instance: the parsed document.
        source: where it was read from, for the message (a path or ``git:REV:PATH``).
        void: raise :class:`VoidError` (exit 3) instead of :class:`GateError` (exit 2).
    Raises:
        GateError | VoidError: naming the file, the JSON path of the first (best) error,
            what is wrong and the fix.
    """
    errors = sorted(validator(name).iter_errors(instance), key=lambda e: (list(e.absolute_path), e.message))
    if not errors:
        return
    from jsonschema.exceptions import best_match

    error = best_match(errors)
    assert error is not None
    # A misspelt key shows up as "required" plus "additional properties": name the unknown one.
    for other in errors:
        if other.validator == "additionalProperties" and list(other.absolute_path) == list(error.absolute_path):
            error = other
            break
    more = f" ({len(errors) - 1} more error(s) after this one)" if len(errors) > 1 else ""
    cls = VoidError if void else GateError
    raise cls(name.replace("_", " "), f"{source} {json_path(error)}", error.message + more,
              _fix(error, source).replace("{name}", name))
