"""GitHub Actions edge: the runner's output channels (commands, outputs, annotations, summary) and inputs.

Everything here follows GitHub's documented runner interfaces; each function names its page:

- Step outputs go to the file named by ``GITHUB_OUTPUT`` as multi-line heredocs
  (``name<<DELIMITER``), with a random delimiter checked not to occur in the value
  ("Workflow commands for GitHub Actions", section "Setting an output parameter" and
  "Multiline strings": https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#setting-an-output-parameter).
- The job summary is Markdown appended to ``GITHUB_STEP_SUMMARY``, at most 1 MiB per step
  ("Adding a job summary": https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#adding-a-job-summary).
- Annotations are ``::error``/``::warning``/``::notice`` workflow commands; data and property
  values are escaped as the runner unescapes them (``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``,
  and in properties also ``:`` → ``%3A``, ``,`` → ``%2C``). GitHub shows at most 10 error and
  10 warning annotations per step (community-reported; the rest vanish silently), so at most
  :data:`ANNOTATION_LIMIT` are emitted, worst first, and one notice says how many more there are
  (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#setting-an-error-message).
- ``::stop-commands::TOKEN`` … ``::TOKEN::`` keeps text we do not control (the gate's log, which
  quotes candidate exception messages) from being read as workflow commands
  (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#stopping-and-starting-workflow-commands).
- Docker container actions get their inputs as ``INPUT_<NAME>`` (upper-cased, spaces → ``_``,
  hyphens kept), the workspace at ``/github/workspace`` and run as root over a workspace owned
  by the runner user ("Dockerfile support for GitHub Actions":
  https://docs.github.com/en/actions/reference/workflows-and-actions/dockerfile-support).
- The base of a run comes from the event payload: :mod:`verdict_gate.github.event`.

Nothing here runs the gate; :mod:`verdict_gate.github.action` wires these pieces to the pipeline.
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from verdict_gate.report.sarif import Finding

from verdict_gate.core.errors import GateError
from verdict_gate.report.summary import SUMMARY_LIMIT, SUMMARY_MARGIN
from verdict_gate.report.text import escape_data, escape_property

__all__ = ["SUMMARY_LIMIT", "SUMMARY_MARGIN", "escape_data", "escape_property"]  # re-exported: the runner's rules

ANNOTATION_LIMIT = 10
FAIL_ON_DEFAULT = ("blocked", "void", "incomplete")
TRUE_VALUES = ("true", "True", "TRUE")
FALSE_VALUES = ("false", "False", "FALSE")
_OUTPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


# --- workflow commands -------------------------------------------------------------------------


def command(name: str, message: str, properties: Mapping[str, str | int | None] | None = None) -> str:
    """One workflow command line, without the newline: ``::name k=v,k=v::message``.

    Properties whose value is None or empty are left out; the rest keep their given order.

    Raises:
        ValueError: ``name`` or a property key is not a plain identifier (a programming error).
    """
    if not re.fullmatch(r"[a-z][a-z-]*", name):
        raise ValueError(f"not a workflow command name: {name!r}")
    props = []
    for key, value in (properties or {}).items():
        if not re.fullmatch(r"[A-Za-z][A-Za-z]*", key):
            raise ValueError(f"not a workflow command property: {key!r}")
        if value is None or value == "":
            continue
        props.append(f"{key}={escape_property(str(value))}")
    head = f"::{name} {','.join(props)}" if props else f"::{name}"
    return f"{head}::{escape_data(message)}"


def stop_commands_token() -> str:
    """A fresh random token for ``::stop-commands::TOKEN`` (64 hex characters)."""
    return secrets.token_hex(32)


@dataclass(frozen=True)
class Annotation:
    """One annotation: ``level`` is ``error``, ``warning`` or ``notice``; ``file`` is relative
    to the repository root GitHub annotates (the workspace); ``line`` is 1-based."""

    level: str
    message: str
    title: str = ""
    file: str = ""
    line: int | None = None

    def render(self) -> str:
        return command(self.level, self.message, {"file": self.file, "line": self.line, "title": self.title})


_LEVEL_ORDER = {"error": 0, "warning": 1, "notice": 2}


def annotations_of(findings: Iterable[Finding], path_prefix: str = "") -> list[Annotation]:
    """An annotation for every finding (:func:`verdict_gate.report.sarif.findings`), worst first
    (errors, then warnings; stable otherwise).

    ``path_prefix`` is the repository's path relative to the workspace (``""`` when the
    repository is the workspace), so file paths stay relative to what GitHub annotates.
    """
    out: list[Annotation] = []
    for found in findings:
        if found.prop_id:
            title = f"verdict-gate: {found.prop_id} {found.verdict} ({found.rule})"
        else:
            title = f"verdict-gate: {found.rule}"
        file, line = "", None
        if found.path and found.path != ".":
            file = f"{path_prefix.rstrip('/')}/{found.path}" if path_prefix else found.path
            line = found.line
        out.append(Annotation(found.level, found.text, title, file, line))
    return sorted(out, key=lambda a: _LEVEL_ORDER[a.level])


def render_annotations(annotations: Sequence[Annotation], limit: int = ANNOTATION_LIMIT,
                       where: str = "the job summary and results.sarif") -> list[str]:
    """At most ``limit`` annotation lines (already ordered worst first), plus one ``::notice``
    saying how many more there are and where (``where``) when some were left out."""
    lines = [a.render() for a in annotations[:limit]]
    rest = len(annotations) - limit
    if rest > 0:
        lines.append(command("notice", f"{rest} more verdict-gate finding(s) are not annotated here "
                                       f"(GitHub shows at most {limit} per step): see {where}.",
                             {"title": "verdict-gate"}))
    return lines


# --- GITHUB_OUTPUT and GITHUB_STEP_SUMMARY ---------------------------------------------------


def heredoc_delimiter(value: str) -> str:
    """A random delimiter (``ghadelimiter_<uuid4>``) that does not occur in ``value``.

    Raises:
        RuntimeError: no fresh delimiter avoided ``value`` in 100 tries (never seen in practice).
    """
    for _ in range(100):
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        if delimiter not in value:
            return delimiter
    raise RuntimeError("could not choose a heredoc delimiter absent from an output value")


def format_output(name: str, value: str) -> str:
    """``name<<DELIM\\nvalue\\nDELIM\\n``: one step output in the ``GITHUB_OUTPUT`` file format.

    Raises:
        ValueError: ``name`` is not a valid output id (letters, digits, ``_``, ``-``).
    """
    if not _OUTPUT_NAME.match(name):
        raise ValueError(f"not a valid output name: {name!r}")
    delimiter = heredoc_delimiter(value)
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def write_outputs(path: str | os.PathLike[str] | None, outputs: Mapping[str, str]) -> bool:
    """Append ``outputs`` to the ``GITHUB_OUTPUT`` file at ``path`` (UTF-8). Returns False and
    writes nothing when ``path`` is empty (not running under a GitHub runner)."""
    if not path:
        return False
    text = "".join(format_output(name, value) for name, value in outputs.items())
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return True


def fit_summary(markdown: str, used: int = 0, limit: int = SUMMARY_LIMIT - SUMMARY_MARGIN) -> str:
    """``markdown`` cut (at a line boundary) so that ``used`` + its UTF-8 size stays within
    ``limit`` bytes, ending with a line that says it was cut. ``used`` is what the step's summary
    file already holds."""
    room = limit - used
    data = markdown.encode("utf-8")
    if len(data) <= room:
        return markdown
    note = "\n\n_verdict-gate: the rest of this summary was cut to stay under GitHub's 1 MiB job-summary limit; " \
           "see verdicts.json and results.sarif in the evidence._\n"
    keep = max(0, room - len(note.encode("utf-8")))
    cut = data[:keep].decode("utf-8", errors="ignore")
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else ""
    return cut + note


def append_summary(path: str | os.PathLike[str] | None, markdown: str) -> bool:
    """Append ``markdown`` to the ``GITHUB_STEP_SUMMARY`` file, kept under the 1 MiB cap with a
    margin (:func:`fit_summary`). Returns False when ``path`` is empty."""
    if not path:
        return False
    used = os.path.getsize(path) if os.path.exists(path) else 0
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(fit_summary(markdown, used))
    return True


# --- inputs ------------------------------------------------------------------------------------


def input_env_name(name: str) -> str:
    """The environment variable a Docker action reads input ``name`` from: ``INPUT_`` + the name
    upper-cased with spaces → ``_`` (hyphens kept): ``oracle-pack`` → ``INPUT_ORACLE-PACK``."""
    return "INPUT_" + name.replace(" ", "_").upper()


def get_input(environ: Mapping[str, str], name: str, default: str = "") -> str:
    """Input ``name`` from ``environ``, whitespace-trimmed (as ``@actions/core`` does); ``default``
    when unset or empty."""
    value = environ.get(input_env_name(name), "").strip()
    return value or default


def get_bool_input(environ: Mapping[str, str], name: str, default: bool) -> bool:
    """A boolean input given as a string (YAML 1.2 core schema: ``true``/``True``/``TRUE``,
    ``false``/``False``/``FALSE``), as ``@actions/core.getBooleanInput`` reads it.

    Raises:
        GateError: any other non-empty value.
    """
    value = get_input(environ, name)
    if not value:
        return default
    if value in TRUE_VALUES:
        return True
    if value in FALSE_VALUES:
        return False
    raise GateError(f"input {name}", input_env_name(name), f"{value!r} is not a boolean",
                    f"write `{name}: true` or `{name}: false`")


def parse_fail_on(value: str) -> frozenset[str]:
    """The ``fail-on`` input: outcomes that fail the step, separated by commas, spaces or new
    lines; ``none`` for none. Empty means the default (blocked, void, incomplete).

    Raises:
        GateError: an unknown outcome, ``promoted``, or ``none`` mixed with outcomes.
    """
    words = [w for w in re.split(r"[\s,]+", value.strip()) if w]
    if not words:
        return frozenset(FAIL_ON_DEFAULT)
    if words == ["none"]:
        return frozenset()
    bad = [w for w in words if w not in FAIL_ON_DEFAULT]
    if bad:
        raise GateError("input fail-on", input_env_name("fail-on"), f"{', '.join(map(repr, bad))} is not an outcome "
                        "that can fail the step", "use a list of blocked, void, incomplete (or `none`)")
    return frozenset(words)


# --- git in the container ----------------------------------------------------------------------


def git_config_env(environ: Mapping[str, str], pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` entries that add
    ``pairs`` after any already in ``environ``: configuration for this process and its children
    only, never written to a config file (git ≥ 2.31, "git config", ENVIRONMENT).

    Raises:
        GateError: ``GIT_CONFIG_COUNT`` in ``environ`` is not a number.
    """
    raw = environ.get("GIT_CONFIG_COUNT", "").strip() or "0"
    if not raw.isdigit():
        raise GateError("environment", "GIT_CONFIG_COUNT", f"{raw!r} is not a number", "unset it or fix it")
    n = int(raw)
    out: dict[str, str] = {}
    for key, value in pairs:
        out[f"GIT_CONFIG_KEY_{n}"] = key
        out[f"GIT_CONFIG_VALUE_{n}"] = value
        n += 1
    out["GIT_CONFIG_COUNT"] = str(n)
    return out


def auth_header(server_url: str, token: str) -> tuple[str, str]:
    """The ``http.<server>/.extraheader`` config pair that authenticates git over HTTPS to
    ``server_url`` only, as ``actions/checkout`` does (``x-access-token`` basic auth)."""
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return f"http.{server_url.rstrip('/')}/.extraheader", f"AUTHORIZATION: basic {basic}"


def same_origin(url: str, server_url: str) -> bool:
    """True when git remote ``url`` is an HTTPS URL on ``server_url``'s scheme and host (the
    token is never sent anywhere else)."""
    a, b = urlsplit(url), urlsplit(server_url)
    return a.scheme == "https" and b.scheme == "https" and a.hostname == b.hostname and a.port == b.port


# --- ownership of what the container writes ---------------------------------------------------


def chown_tree(root: Path, uid: int, gid: int) -> int:
    """Give every file and directory under ``root`` (and ``root``) that is not owned by
    ``uid:gid`` to it, without following links. Returns how many entries changed.

    A Docker action runs as root over a workspace owned by the runner user; files it leaves
    owned by root break later steps (``actions/checkout`` cleanup, ``git fetch``).
    """
    changed = 0
    if not root.exists():
        return 0
    paths = [root]
    if root.is_dir() and not root.is_symlink():
        for dirpath, dirnames, filenames in os.walk(root):
            paths.extend(Path(dirpath) / n for n in dirnames + filenames)
    for path in paths:
        st = path.lstat()
        if (st.st_uid, st.st_gid) != (uid, gid):
            os.lchown(path, uid, gid)
            changed += 1
    return changed
