"""The one reader of a user's text file: UTF-8, every failure a :class:`GateError` naming it."""

from __future__ import annotations

from pathlib import Path

from verdict_gate.core.errors import GateError


def read_utf8(path: Path, what: str, fix: str, *, error: type[GateError] = GateError, where: str = "") -> str:
    """``path`` as UTF-8 text.

    Args:
        what: the thing read, for the message (``"catalog"``). fix: what to do when it is missing.
        error: :class:`GateError` (exit 2) or :class:`~verdict_gate.core.errors.VoidError` (exit 3).
        where: how the file is named in messages (default: the path).
    Raises:
        ``error``: missing, a directory, not UTF-8, or unreadable.
    """
    shown = where or str(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(what, shown, "does not exist", fix) from None
    except IsADirectoryError:
        raise error(what, shown, "is a directory, not a file", fix) from None
    except UnicodeDecodeError as exc:
        raise error(what, shown, f"is not UTF-8 ({exc.reason} at byte {exc.start})", "save the file as UTF-8") from None
    except OSError as exc:
        raise error(what, shown, f"cannot be read ({exc.strerror})", fix) from None
