"""The one reader of a user's text files (UTF-8, every failure a :class:`GateError` naming it), and of
the control files: text parsed, checked against its schema (:mod:`.schemas`), then built by the core.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from verdict_gate.core.catalog import CATALOG_MAX_BYTES, Catalog, catalog_from, parse_yaml
from verdict_gate.core.errors import GateError
from verdict_gate.core.ledger import LEDGER_MAX_BYTES, Ledger, check_size, ledger_from, parse_json
from verdict_gate.host import schemas

# Files refused by size before they are read or parsed (by ``what``, as callers name them).
READ_LIMITS = {"catalog": CATALOG_MAX_BYTES, "freeze ledger": LEDGER_MAX_BYTES}


def read_utf8(path: Path, what: str, fix: str, *, error: type[GateError] = GateError, where: str = "",
              max_bytes: int | None = None) -> str:
    """``path`` as UTF-8 text.

    Args:
        what: the thing read, for the message (``"catalog"``). fix: what to do when it is missing.
        error: :class:`GateError` (exit 2) or :class:`~verdict_gate.core.errors.VoidError` (exit 3).
        where: how the file is named in messages (default: the path).
        max_bytes: refuse a larger file before reading it (default: :data:`READ_LIMITS` for ``what``).
    Raises:
        ``error``: missing, a directory, not UTF-8, too large, or unreadable.
    """
    shown = where or str(path)
    limit = max_bytes if max_bytes is not None else READ_LIMITS.get(what)
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1) if limit is not None else fh.read()
        if limit is not None and len(data) > limit:
            raise error(what, shown, f"is larger than the {limit:,}-byte limit for a {what}",
                        f"keep the {what} under {limit // (1024 * 1024)} MiB")
        return data.decode("utf-8")
    except FileNotFoundError:
        raise error(what, shown, "does not exist", fix) from None
    except IsADirectoryError:
        raise error(what, shown, "is a directory, not a file", fix) from None
    except UnicodeDecodeError as exc:
        raise error(what, shown, f"is not UTF-8 ({exc.reason} at byte {exc.start})", "save the file as UTF-8") from None
    except OSError as exc:
        raise error(what, shown, f"cannot be read ({exc.strerror})", fix) from None


def parse_catalog(text: str, source: str, *, void: bool = False) -> Catalog:
    """Parse ``catalog.yaml`` text, check it against ``schemas/catalog.schema.json`` and build it.

    Args:
        text: the file's contents.
        source: where it was read (a path or ``git:REV:PATH``), used in messages.
        void: errors are :class:`~verdict_gate.core.errors.VoidError` (exit 3, the pack is
            untrustworthy) instead of :class:`GateError` (exit 2).
    Raises:
        GateError | VoidError: on YAML syntax, schema violations (with the JSON path), duplicate
            ids, claimed ids missing from the properties, or unsafe paths.
    """
    data = parse_yaml(text, source, void=void)
    schemas.check("catalog", data, source, void=void)
    return catalog_from(data, source, void=void)


def parse_ledger(text: str, source: str, *, known_ids: Iterable[str] | None = None, void: bool = False) -> Ledger:
    """Parse ``freeze_ledger.json`` text, check it against ``schemas/freeze_ledger.schema.json`` and build it.

    Args:
        text: the file's contents (JSON).
        source: where it was read, for messages.
        known_ids: catalog ids; a freeze for another id is an error (it could never apply).
        void: raise :class:`~verdict_gate.core.errors.VoidError` (exit 3) instead of :class:`GateError` (exit 2).
    Raises:
        GateError | VoidError: on size, JSON syntax, schema violations, impossible dates, a
            ``signature`` that is not the hash of its ``signature_parts``, or a parts
            ``prop_id`` that differs from the record's.
    """
    check_size(text, source, void=void)
    data = parse_json(text, "freeze ledger", source, void=void)
    schemas.check("freeze_ledger", data, source, void=void)
    return ledger_from(data, source, known_ids=known_ids, void=void)
