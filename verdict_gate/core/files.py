"""The one reader of a user's text file: UTF-8, every failure a :class:`GateError` naming it."""

from __future__ import annotations

from pathlib import Path

from verdict_gate.core.errors import GateError

# Files refused by size before they are read or parsed (by ``what``, as callers name them).
CATALOG_MAX_BYTES = 1024 * 1024  # a catalog lists properties, never data
LEDGER_MAX_BYTES = 32 * 1024 * 1024  # 10,000 freezes are about 10 MB
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
