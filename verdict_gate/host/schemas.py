"""JSON Schema validation of every file read or written (docs/design.md, "Files").

Schemas live in ``schemas/`` (installed as the ``verdict_gate.schemas`` package data) and refer
to each other by relative ``$ref`` (``common.schema.json#/$defs/…``), resolved from a
local registry: nothing is fetched (jsonschema ≥ 4.18 never fetches remote refs).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from functools import cache, lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin

from verdict_gate.core.errors import GateError, VoidError

if TYPE_CHECKING:  # jsonschema is imported when a document is invalid (or a schema is not compiled)
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

BASE_URI = "https://verdict-gate.dev/schemas/"


def schema_dir() -> Traversable:
    """Where the ``*.schema.json`` files are: the installed ``verdict_gate.schemas`` package data,
    else (running from a source checkout, ``verdict_gate`` imported from the work tree) ``schemas/``."""
    try:
        return resources.files("verdict_gate.schemas")
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "schemas"


@lru_cache(maxsize=1)
def _documents() -> dict[str, Any]:
    """Every ``*.schema.json``, parsed once, by URI."""
    return {BASE_URI + item.name: json.loads(item.read_text(encoding="utf-8"))
            for item in schema_dir().iterdir() if item.name.endswith(".schema.json")}


@lru_cache(maxsize=1)
def _registry() -> Registry:
    from referencing import Registry, Resource

    registry: Registry = Registry()
    for uri, schema in _documents().items():
        registry = registry.with_resource(uri, Resource.from_contents(schema))
    return registry


@cache
def validator(name: str) -> Any:
    """The validator for ``schemas/<name>.schema.json`` (e.g. ``"catalog"``)."""
    from jsonschema import Draft202012Validator, validators

    schema = _registry().contents(BASE_URI + f"{name}.schema.json")
    cls = validators.validator_for(schema, default=Draft202012Validator)  # the SARIF schema is draft-04
    return cls(schema, registry=_registry())


# --- the fast path ------------------------------------------------------------------------
#
# Each schema is compiled once into Python source (one function per sub-schema that loops, and
# per ``$ref`` target) that answers only "valid or not", the way fastjsonschema does it, without
# the dependency. A valid document (nearly every one) costs that function; an invalid one is
# validated again by jsonschema, which alone writes the message, so the messages are exactly
# jsonschema's. Two dialects are compiled: draft 2020-12 (ours) and draft-04 (the SARIF schema: its
# `$ref` ignores the keywords beside it, `integer` is not `1.0`, and it knows fewer keywords). A schema
# of another dialect, or using a keyword the compiler does not know, is never compiled: jsonschema
# validates it every time. The SARIF check alone was 40 ms of every run (importing jsonschema).
# tests/test_schemas_fast.py checks the compiled function against jsonschema on generated documents.

Predicate = Callable[[Any], bool]
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples",
                          "format", "deprecated", "readOnly", "writeOnly", "then", "else"})
_SIMPLE = frozenset({"type", "const", "enum", "pattern", "minLength", "maxLength", "minimum", "maximum",
                     "exclusiveMinimum", "exclusiveMaximum", "$ref"}) | _ANNOTATIONS
_TYPE_TESTS = {
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "string": "isinstance({v}, str)",
    "boolean": "isinstance({v}, bool)",
    "null": "{v} is None",
    "number": "(isinstance({v}, (int, float)) and not isinstance({v}, bool))",
    "integer": "((isinstance({v}, int) and not isinstance({v}, bool))"
               " or (isinstance({v}, float) and {v}.is_integer()))",
}
_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_DRAFT_04 = "http://json-schema.org/draft-04/schema"
# Draft-04's keywords (JSON Schema Validation, draft-fge-json-schema-validation-00), those the compiler writes;
# any other keyword of a draft-04 schema (dependencies, patternProperties, exclusiveMinimum's boolean, or one
# draft-04 does not have, which jsonschema would ignore) leaves the schema to jsonschema.
_DRAFT_04_KEYWORDS = frozenset({"$ref", "type", "enum", "required", "properties", "additionalProperties", "items",
                                "minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern",
                                "minimum", "maximum", "allOf", "anyOf", "oneOf", "not"})
_DRAFT_04_ANNOTATIONS = frozenset({"$schema", "id", "definitions", "title", "description", "default", "format"})


class _Unsupported(Exception):
    """A keyword the fast path does not implement: use jsonschema for this schema."""


def _equal(one: Any, two: Any) -> bool:
    """JSON Schema equality, as jsonschema has it: ``true`` is not ``1``, ``1`` is ``1.0``, an object is itself
    (``json.loads`` gives every ``NaN`` one object, which jsonschema then counts as a duplicate)."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return bool(one == two)


def _unique(items: list[Any]) -> bool:
    return not any(_equal(a, b) for i, a in enumerate(items) for b in items[i + 1:])


class _Compiler:
    """Writes one Python function per compiled sub-schema into ``lines``; constants go to ``env``.
    ``draft4``: the schemas are draft-04 (``root``: the document, the only one that may carry an ``id``)."""

    def __init__(self, draft4: bool = False, root: Any = None) -> None:
        self.lines: list[str] = []
        self.env: dict[str, Any] = {"_equal": _equal, "_unique": _unique}
        self.by_ref: dict[str, str] = {}
        self.count = 0
        self.draft4 = draft4
        self.root = root
        self.types = {**_TYPE_TESTS, "integer": "(isinstance({v}, int) and not isinstance({v}, bool))"} \
            if draft4 else _TYPE_TESTS

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, value: Any) -> str:
        key = self.name("K")
        self.env[key] = value
        return key

    def ref(self, uri: str) -> str:
        """The name of the function that checks ``$ref`` target ``uri``: pending (compiled when first called,
        :class:`_Pending`), as a document reaches few of a large schema's definitions (ours of SARIF's)."""
        if uri not in self.by_ref:
            self.by_ref[uri] = fn = self.name("r")
            self.env[fn] = _Pending(self, uri, fn)
        return self.by_ref[uri]

    def define(self, uri: str, fn: str) -> Predicate:
        """Compile the target of ``uri`` as ``fn`` into ``env`` (the refs it reaches stay pending).

        Raises:
            _Unsupported: a keyword, dialect feature or reference the compiler does not write.
        """
        try:
            doc_uri, fragment = urldefrag(uri)
            node = _documents().get(doc_uri)
            if node is None:
                raise _Unsupported(uri)
            for part in [p for p in fragment.split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                node = node[int(part)] if isinstance(node, list) else node[part]
            start = len(self.lines)
            self.function(node, doc_uri, fn)
            exec(compile("\n".join(self.lines[start:]), f"<schema {uri}>", "exec"), self.env)  # noqa: S102 - ours
        except (KeyError, IndexError, ValueError, TypeError, re.error, SyntaxError, RecursionError) as exc:
            raise _Unsupported(f"{uri}: {exc}") from None
        finally:
            self.lines.clear()  # what was compiled lives in env; a half-written function is dropped
        check: Predicate = self.env[fn]
        return check

    def function(self, schema: Any, base: str, fn: str | None = None) -> str:
        fn = fn or self.name("f")
        body: list[str] = []
        self.emit(schema, base, "x", body, 1)
        self.lines += [f"def {fn}(x):", *body, "    return True", ""]
        return fn

    def sub(self, schema: Any, base: str, var: str, out: list[str], pad: str, depth: int) -> None:
        """Check ``var`` against ``schema``: inline when simple, else through a function of its own."""
        if isinstance(schema, dict) and set(schema) <= _SIMPLE:
            self.emit(schema, base, var, out, depth)
        elif schema is not True:
            out.append(f"{pad}if not {self.function(schema, base)}({var}): return False")

    def emit(self, schema: Any, base: str, v: str, out: list[str], depth: int) -> None:
        """Append to ``out`` the lines (indented ``depth`` levels) that ``return False`` when the value named ``v``
        fails ``schema`` (its ``$ref`` resolved against ``base``), keyword by keyword in a fixed order.

        Raises:
            _Unsupported: a keyword this compiler does not write (the document then goes to jsonschema).
        """
        pad = "    " * depth
        if schema is True:
            return
        if schema is False:
            out.append(f"{pad}return False")
            return
        if not isinstance(schema, dict):
            raise _Unsupported(repr(schema))
        if self.draft4 and self._draft4_ref(schema, base, v, out, pad):
            return
        base = urljoin(base, schema["$id"]) if "$id" in schema else base
        unknown = set() if self.draft4 else set(schema) - _ANNOTATIONS - {
            "$ref", "type", "const", "enum", "required", "properties", "additionalProperties", "propertyNames",
            "items", "minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern", "minimum",
            "maximum", "exclusiveMinimum", "exclusiveMaximum", "allOf", "anyOf", "oneOf", "not", "if"}
        if unknown or "patternProperties" in schema or "prefixItems" in schema:
            raise _Unsupported(", ".join(sorted(unknown)))
        if "$ref" in schema:
            out.append(f"{pad}if not {self.ref(urljoin(base, schema['$ref']))}({v}): return False")
        self._emit_value(schema, v, out, pad)
        inner = "    " * (depth + 1)
        self._emit_object(schema, base, v, out, pad, inner, depth)
        self._emit_array(schema, base, v, out, pad, inner)
        self._emit_string(schema, v, out, pad, inner)
        self._emit_combined(schema, base, v, out, pad, depth)

    def _draft4_ref(self, schema: dict[str, Any], base: str, v: str, out: list[str], pad: str) -> bool:
        """Check a draft-04 schema's keywords; a ``$ref`` there ignores its siblings (jsonschema's too): its line
        is appended and ``True`` returned."""
        unknown = set(schema) - _DRAFT_04_KEYWORDS - _DRAFT_04_ANNOTATIONS
        if unknown or isinstance(schema.get("items"), list) or ("id" in schema and schema is not self.root):
            raise _Unsupported(", ".join(sorted(unknown)) or "items as a list, or an id below the root")
        if "$ref" not in schema:
            return False
        ref = str(schema["$ref"])
        if not ref.startswith("#"):  # resolved against the document's own id, which is not its URI here
            raise _Unsupported(ref)
        out.append(f"{pad}if not {self.ref(urljoin(base, ref))}({v}): return False")
        return True

    def _emit_value(self, schema: dict[str, Any], v: str, out: list[str], pad: str) -> None:
        """``type``, ``const``, ``enum``."""
        if "type" in schema:
            names = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
            if any(n not in self.types for n in names):
                raise _Unsupported(f"type {names}")
            out.append(f"{pad}if not ({' or '.join(self.types[n].format(v=v) for n in names)}): return False")
        if "const" in schema:
            value = schema["const"]
            test = f"{v} != {self.const(value)}" if isinstance(value, str) else \
                f"not _equal({v}, {self.const(value)})"
            out.append(f"{pad}if {test}: return False")
        if "enum" in schema:
            values = schema["enum"]
            if all(isinstance(e, str) for e in values):
                out.append(f"{pad}if not (isinstance({v}, str) and {v} in {self.const(frozenset(values))}): "
                           "return False")
            else:
                out.append(f"{pad}if not any(_equal({v}, e) for e in {self.const(list(values))}): return False")

    def _emit_object(self, schema: dict[str, Any], base: str, v: str, out: list[str], pad: str, inner: str,
                     depth: int) -> None:
        """``required``, ``properties``, ``additionalProperties``, ``propertyNames`` (on a dict only)."""
        obj_keys = ("required", "properties", "additionalProperties", "propertyNames")
        if not any(k in schema for k in obj_keys):
            return
        out.append(f"{pad}if isinstance({v}, dict):")
        for req in schema.get("required", []):
            out.append(f"{inner}if {self.const(req)} not in {v}: return False")
        for key, sub in schema.get("properties", {}).items():
            var = self.name("v")
            out.append(f"{inner}{var} = {v}.get({self.const(key)}, {v})")  # the dict itself: absent
            block: list[str] = []
            self.sub(sub, base, var, block, inner + "    ", depth + 2)
            if block:
                out.append(f"{inner}if {var} is not {v}:")
                out += block
        if "additionalProperties" in schema:
            known = self.const(frozenset(schema.get("properties", {})))
            extra = schema["additionalProperties"]
            if extra is False:
                out.append(f"{inner}if not {known}.issuperset({v}): return False")
            elif extra is not True:
                var = self.name("v")
                out.append(f"{inner}for k, {var} in {v}.items():")
                out.append(f"{inner}    if k in {known}: continue")
                out.append(f"{inner}    if not {self.function(extra, base)}({var}): return False")
        if "propertyNames" in schema:
            fn = self.function(schema["propertyNames"], base)
            out.append(f"{inner}if not all({fn}(k) for k in {v}): return False")

    def _emit_array(self, schema: dict[str, Any], base: str, v: str, out: list[str], pad: str, inner: str) -> None:
        """``items``, ``minItems``, ``maxItems``, ``uniqueItems`` (on a list only)."""
        arr_keys = ("items", "minItems", "maxItems", "uniqueItems")
        if not any(k in schema for k in arr_keys):
            return
        out.append(f"{pad}if isinstance({v}, list):")
        if "minItems" in schema:
            out.append(f"{inner}if len({v}) < {int(schema['minItems'])}: return False")
        if "maxItems" in schema:
            out.append(f"{inner}if len({v}) > {int(schema['maxItems'])}: return False")
        if schema.get("uniqueItems"):
            out.append(f"{inner}if not _unique({v}): return False")
        if "items" in schema and schema["items"] is not True:
            var = self.name("v")
            out.append(f"{inner}for {var} in {v}:")
            out.append(f"{inner}    if not {self.function(schema['items'], base)}({var}): return False")

    def _emit_string(self, schema: dict[str, Any], v: str, out: list[str], pad: str, inner: str) -> None:
        """``minLength``, ``maxLength``, ``pattern`` (on a string) and the bounds (on a number)."""
        if any(k in schema for k in ("minLength", "maxLength", "pattern")):
            out.append(f"{pad}if isinstance({v}, str):")
            if "minLength" in schema:
                out.append(f"{inner}if len({v}) < {int(schema['minLength'])}: return False")
            if "maxLength" in schema:
                out.append(f"{inner}if len({v}) > {int(schema['maxLength'])}: return False")
            if "pattern" in schema:
                out.append(f"{inner}if {self.const(re.compile(schema['pattern']))}.search({v}) is None: return False")
        bounds = [(k, op) for k, op in (("minimum", "<"), ("maximum", ">"), ("exclusiveMinimum", "<="),
                                        ("exclusiveMaximum", ">=")) if k in schema]
        if bounds:
            out.append(f"{pad}if isinstance({v}, (int, float)) and not isinstance({v}, bool):")
            for key, op in bounds:
                out.append(f"{inner}if {v} {op} {self.const(schema[key])}: return False")

    def _emit_combined(self, schema: dict[str, Any], base: str, v: str, out: list[str], pad: str,
                       depth: int) -> None:
        """``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``."""
        for sub in schema.get("allOf", []):
            self.sub(sub, base, v, out, pad, depth)
        if "anyOf" in schema:
            fns = [self.function(s, base) for s in schema["anyOf"]]
            out.append(f"{pad}if not ({' or '.join(f'{fn}({v})' for fn in fns)}): return False")
        if "oneOf" in schema:
            fns = [self.function(s, base) for s in schema["oneOf"]]
            out.append(f"{pad}if ({' + '.join(f'bool({fn}({v}))' for fn in fns)}) != 1: return False")
        if "not" in schema:
            out.append(f"{pad}if {self.function(schema['not'], base)}({v}): return False")
        if "if" in schema:
            cond = self.function(schema["if"], base)
            then = self.function(schema.get("then", True), base)
            other = self.function(schema.get("else", True), base)
            out.append(f"{pad}if not ({then}({v}) if {cond}({v}) else {other}({v})): return False")


class _Pending:
    """A ``$ref`` target not compiled yet: its first call compiles it (under a lock: validation may run on
    several threads) and puts the compiled function in its place, which later calls reach directly. A target
    the compiler cannot write raises :class:`_Unsupported` at every call, compiled only the first time."""

    __slots__ = ("compiler", "fn", "uri", "unsupported")
    _lock = threading.Lock()

    def __init__(self, compiler: _Compiler, uri: str, fn: str) -> None:
        self.compiler, self.uri, self.fn = compiler, uri, fn
        self.unsupported: _Unsupported | None = None

    def __call__(self, instance: Any) -> bool:
        with self._lock:
            if self.unsupported is not None:
                raise self.unsupported
            target = self.compiler.env[self.fn]
            if target is self:
                try:
                    target = self.compiler.define(self.uri, self.fn)
                except _Unsupported as exc:
                    self.unsupported = exc
                    raise
        return bool(target(instance))


@cache
def fast_validator(name: str) -> Predicate | None:
    """The compiled check of ``schemas/<name>.schema.json`` (``True``: valid), or ``None`` where
    jsonschema must do it all (another dialect). It raises :class:`_Unsupported` where a part of the
    schema it reaches uses a keyword the compiler does not know (:func:`check` then asks jsonschema)."""
    uri = BASE_URI + f"{name}.schema.json"
    doc = _documents().get(uri)
    dialect = doc.get("$schema", "").rstrip("#") if isinstance(doc, dict) else None
    if dialect not in (_DRAFT_2020_12, _DRAFT_04):
        return None
    compiler = _Compiler(draft4=dialect == _DRAFT_04, root=doc)
    check: Predicate = compiler.env[compiler.ref(uri)]
    return check


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
    fast = fast_validator(name)
    if fast is not None:
        try:
            if fast(instance):
                return  # valid: jsonschema would find nothing to say
        except (RecursionError, _Unsupported):
            pass  # let jsonschema answer
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
