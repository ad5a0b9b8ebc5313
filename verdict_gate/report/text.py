"""The one home of text escapers: for terminals and logs, Markdown, and GitHub workflow commands. Pure."""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with control and other unprintable characters as ``\\xNN`` escapes: a file name
    from the candidate must not move the cursor or start a fake line in a log."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in text)


def md_cell(text: str) -> str:
    """Text for one Markdown table cell: backslashes and pipes escaped, line breaks as spaces."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def md_code(text: str, *, table: bool = False) -> str:
    """``text`` as a Markdown code span: nothing in it renders (no HTML, link, image, emphasis or autolink),
    so text a run carries from the candidate (a message, a repr, an input, a file name) shows as written.
    Line breaks become spaces, backticks ``'``; ``table``: pipes escaped, for a table cell (GFM)."""
    body = printable(" ".join(text.splitlines())).replace("`", "'")
    if table:
        body = body.replace("|", "\\|")
    return f"`{body}`" if body.strip() else "` `"


def md_line(text: str) -> str:
    """Text for one Markdown line: no line breaks, no table pipes, no code-span backticks."""
    return " ".join(text.split()).replace("|", "\\|").replace("`", "'")


def escape_data(text: str) -> str:
    """Escape a workflow command's message (data): ``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``.

    The runner unescapes exactly these, so the message shows as written and can never end the
    command line early or start another command. Source: GitHub runner ``ActionCommand``
    escaping, as documented under "Workflow commands"
    (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands).
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command property value: as :func:`escape_data`, plus ``:`` → ``%3A``
    and ``,`` → ``%2C`` (they would end the value or the property list)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
