"""Failure signatures, ``sig-v3`` (docs/design.md §5). Pure: no environment, clock or I/O.

A signature is ``"sha256:" + hex(sha256(canonical_json(parts)))``. The parts are kept
beside it so that a mismatch can name which part differs.

``sig-v2`` adds ``origin``, where the exception was raised: ``oracle`` (the property's own code,
e.g. its ``assert``), ``candidate:PATH:FUNCTION`` (the candidate's code, by its deepest frame in the
repository), ``candidate`` (the candidate's code, no frame in the repository), ``boundary`` (the gate's
isolation boundary: never a candidate failure) or ``runner`` (a lost process). Under ``sig-v1`` an
exception the candidate raised with an oracle assertion's type and message signed exactly like the
oracle's own failed ``assert``; a ``sig-v1`` freeze matches no ``sig-v2`` failure, so it forgives nothing
until it is recorded again.

``sig-v3`` adds ``site``, the line of the pack's own code the failure came through (``PATH:LINE``, the
innermost frame of the oracle's traceback under the pack; ``None`` when it has none, as for a lost
process), and for an exception the candidate raised ``#`` and 16 hex digits of what the oracle asked it
(the request's operation and values: a loop over cases asks each case at one line). The pack is
the same on the base and on the candidate (an edit of it voids freezes), so a known failure recorded on
the base comes through the same line; under ``sig-v2`` a candidate function that raised the frozen
exception and message for an earlier input of the same example test, one that held on the base, signed
like the known failure. A ``sig-v2`` freeze matches no ``sig-v3`` failure.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ALGORITHM = "sig-v3"
PART_NAMES = ("algorithm", "prop_id", "node", "seed", "exc_type", "message_digest", "counterexample", "origin",
              "site")

_ADDR = re.compile(r"0x[0-9a-fA-F]+")
_DIGITS = re.compile(r"[0-9]+")


def canonical_json(value: Any) -> str:
    """Serialise ``value`` as canonical JSON: sorted keys, no whitespace, UTF-8 kept.

    Raises:
        TypeError: when ``value`` holds something JSON cannot represent.
        ValueError: for NaN or infinite floats (not valid JSON, RFC 8259 §6).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def normalize_message(message: str, tmp_paths: Iterable[str] = (), fold_digits: bool = True) -> str:
    """Normalise an exception message so that the same failure reads the same in every run.

    Order matters and differs from the list in docs/design.md on purpose: temporary paths go first
    (they contain digits), then ``0x`` addresses (their hex digits would otherwise be
    folded one by one), then decimal digits.

    Args:
        message: the raw ``str(exception)``.
        tmp_paths: absolute paths of the run's temporary directories; each becomes ``<tmp>``.
        fold_digits: replace each run of digits with ``<n>`` (off when digits carry identity).
    Returns:
        the stripped, normalised message.
    """
    text = message.strip()
    for path in sorted({p for p in tmp_paths if p}, key=len, reverse=True):
        text = text.replace(path, "<tmp>")
    text = _ADDR.sub("<addr>", text)
    if fold_digits:
        text = _DIGITS.sub("<n>", text)
    return text


def message_digest(normalized: str) -> str:
    """First 16 hex digits of sha256 over the UTF-8 normalised message."""
    return hashlib.sha256(normalized.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class Signature:
    """One failure's identity: ``value`` (``sha256:<64 hex>``) and the ``parts`` it hashes."""

    value: str
    parts: Mapping[str, Any]


def make_signature(
    *,
    prop_id: str,
    node: str,
    seed: int | None,
    exc_type: str,
    message: str,
    counterexample: Any,
    origin: str = "oracle",
    site: str | None = None,
    tmp_paths: Iterable[str] = (),
    fold_digits: bool = True,
) -> Signature:
    """Build the ``sig-v3`` signature of one failure.

    Args:
        prop_id: catalog id, e.g. ``prop.order_total``.
        node: oracle path and test name, e.g. ``properties/test_total.py::test_total``.
        seed: the Hypothesis seed the run used (``None`` for ``example`` properties).
        exc_type: qualified exception type, e.g. ``builtins.AssertionError``.
        message: the raw message; normalised with :func:`normalize_message`.
        counterexample: the minimised input as a JSON value, or ``None``.
        origin: where the exception was raised (see the module docstring).
        site: ``PATH:LINE`` of the pack's code the failure came through, or ``None`` (module docstring).
    Raises:
        TypeError, ValueError: when ``counterexample`` is not a JSON value.
    """
    parts = {
        "algorithm": ALGORITHM,
        "prop_id": prop_id,
        "node": node,
        "seed": seed,
        "exc_type": exc_type,
        "message_digest": message_digest(normalize_message(message, tmp_paths, fold_digits)),
        "counterexample": None if counterexample is None else canonical_json(counterexample),
        "origin": origin,
        "site": site,
    }
    return Signature(value=signature_of(parts), parts=parts)


def signature_of(parts: Mapping[str, Any]) -> str:
    """``"sha256:" + hex(sha256(canonical_json(parts)))`` over the given parts."""
    return "sha256:" + hashlib.sha256(canonical_json(dict(parts)).encode("utf-8")).hexdigest()


def set_signature(signatures: Iterable[str]) -> str | None:
    """The property-level signature of a failure set (docs/design.md §5): ``None`` for no failure;
    a set of one is that failure's own signature (so a ledger written before failure sets still
    matches); otherwise ``"sha256:" + hex(sha256(canonical_json(sorted signatures)))``."""
    sigs = sorted(set(signatures))
    if not sigs:
        return None
    if len(sigs) == 1:
        return sigs[0]
    return "sha256:" + hashlib.sha256(canonical_json(sigs).encode("utf-8")).hexdigest()


def describe_failure(parts: Mapping[str, Any]) -> str:
    """One failure in words, from its signature parts: ``node: exc_type on counterexample``."""
    text = f"{parts.get('node') or '?'}: {parts.get('exc_type') or '?'}"
    if parts.get("counterexample") is not None:
        example = str(parts["counterexample"])
        text += " on " + (example if len(example) <= 200 else example[:200] + "…")
    return text


def differing_parts(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[str, ...]:
    """Names of the parts that differ between two part maps, in :data:`PART_NAMES` order."""
    names = list(PART_NAMES) + sorted((set(a) | set(b)) - set(PART_NAMES))
    return tuple(n for n in names if a.get(n) != b.get(n))
