"""GitHub Actions edge: the runner's output channels and its event payloads.

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
- The base of a run comes from the event payload at ``GITHUB_EVENT_PATH``
  ("Events that trigger workflows": https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows;
  webhook payloads: https://docs.github.com/en/webhooks/webhook-events-and-payloads).

Nothing here runs the gate; ``entrypoint.py`` wires these pieces to :func:`gate.cli.main`.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from gate.errors import GateError

ANNOTATION_LIMIT = 10
SUMMARY_LIMIT = 1024 * 1024  # bytes: GitHub's cap per step; over it the whole summary is dropped
SUMMARY_MARGIN = 64 * 1024  # bytes kept free under the cap (a summary just under it has been seen to vanish)
ZERO_SHA = "0" * 40
OUTCOMES = ("promoted", "blocked", "void", "incomplete")
FAIL_ON_DEFAULT = ("blocked", "void", "incomplete")
TRUE_VALUES = ("true", "True", "TRUE")
FALSE_VALUES = ("false", "False", "FALSE")
_OUTPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


# --- workflow commands -------------------------------------------------------------------------


def escape_data(text: str) -> str:
    """Escape a workflow command's message (data): ``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``.

    The runner unescapes exactly these, so the message shows as written and can never end the
    command line early or start another command. Source: GitHub runner ``ActionCommand``
    escaping, as documented under "Workflow commands" (see the module docstring).
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command property value: as :func:`escape_data`, plus ``:`` → ``%3A``
    and ``,`` → ``%2C`` (they would end the value or the property list)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


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


def annotations_from_sarif(sarif: Mapping[str, Any], path_prefix: str = "") -> list[Annotation]:
    """Annotations for every SARIF result, worst first (errors, then warnings; stable otherwise).

    ``path_prefix`` is the repository's path relative to the workspace (``""`` when the
    repository is the workspace), so file paths stay relative to what GitHub annotates.
    SARIF locations are percent-encoded URIs (``artifactLocation.uri``); they are decoded here.
    """
    out: list[Annotation] = []
    for run in sarif.get("runs") or []:
        for result in run.get("results") or []:
            level = "error" if result.get("level", "error") == "error" else "warning"
            props = result.get("properties") or {}
            text = str((result.get("message") or {}).get("text") or "")
            if props.get("prop_id"):
                title = f"verdict-gate: {props['prop_id']} {props.get('verdict', '')} ({props.get('reason', '')})"
            else:
                title = f"verdict-gate: {result.get('ruleId', 'result')}"
            file, line = "", None
            locations = result.get("locations") or []
            if locations:
                phys = locations[0].get("physicalLocation") or {}
                uri = unquote(str((phys.get("artifactLocation") or {}).get("uri") or ""))
                if uri and uri != ".":
                    file = f"{path_prefix.rstrip('/')}/{uri}" if path_prefix else uri
                    line = int((phys.get("region") or {}).get("startLine") or 1)
            out.append(Annotation(level, text, title, file, line))
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


# --- events and the base ---------------------------------------------------------------------


@dataclass(frozen=True)
class BaseChoice:
    """Where the base ref of a run comes from.

    Attributes:
        refs: refs (commit ids or names) to try in order; the first that names a commit is the
            base ref (the base revision is its merge base with HEAD).
        why: one sentence for the log and the summary naming the event field used.
        fetch: for each entry of ``refs``, what to fetch from ``origin`` when it is missing
            (a commit id or ``refs/heads/NAME``), or ``""`` for nothing.
        pr_head: for pull request events, the pull request's head commit: when HEAD is the
            test merge commit (``refs/pull/N/merge``: parents base, head) its first parent is the
            exact base it was built on, even if the base branch moved since the event.
        oracle_ref: ``(ref, what to fetch)`` to read the default pack from when the base is not
            protected: a push to a branch other than the default reads the default branch's
            oracle (its ``before`` is the pusher's own earlier commit). ``("", "")``: the base.
    """

    refs: tuple[str, ...]
    why: str
    fetch: tuple[str, ...]
    pr_head: str = ""
    oracle_ref: tuple[str, str] = ("", "")


def read_event(environ: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """``(GITHUB_EVENT_NAME, payload)``; the payload is ``{}`` when ``GITHUB_EVENT_PATH`` is unset.

    Raises:
        GateError: the payload file is set but missing or not a JSON object.
    """
    name = environ.get("GITHUB_EVENT_NAME", "").strip()
    path = environ.get("GITHUB_EVENT_PATH", "").strip()
    if not path:
        return name, {}
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GateError("event payload", path, f"cannot be read as JSON ({exc.__class__.__name__}: {exc})",
                        "run the action inside a GitHub Actions job (GITHUB_EVENT_PATH is set by the runner)") from None
    if not isinstance(payload, dict):
        raise GateError("event payload", path, "is not a JSON object", "run the action inside a GitHub Actions job")
    return name, payload


def _dig(payload: Mapping[str, Any], *keys: str) -> str:
    node: Any = payload
    for key in keys:
        if not isinstance(node, Mapping):
            return ""
        node = node.get(key)
    return node.strip() if isinstance(node, str) else ""


def _sha(value: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]{40}([0-9a-f]{24})?", value))


def choose_base(event_name: str, payload: Mapping[str, Any], base_input: str) -> BaseChoice:
    """The base ref for ``event_name`` (DESIGN.md §1: the base revision is the merge base of
    the base ref and HEAD). The ``base`` input, when set, wins for every event.

    - ``pull_request``, ``pull_request_target`` (and other ``pull_request*`` events):
      ``pull_request.base.sha``.
    - ``merge_group``: ``merge_group.base_sha``.
    - ``push`` to a branch other than the default: the default branch,
      ``refs/remotes/origin/<repository.default_branch>`` (the pusher wrote ``before`` too, so
      it protects nothing), and the default pack is read from there as well.
    - ``push`` to the default branch: ``before``; when the branch is new (``before`` = 40
      zeros), the parent commit ``HEAD^``.
    - ``workflow_dispatch`` and every other event: the ``base`` input, required.

    Raises:
        GateError (exit 2): no base can be derived (``workflow_dispatch`` without ``base``, an
            unsupported event, a payload missing its field, a push that deleted the branch).
    """
    if base_input:
        why = f"the base input ({base_input})"
        if _sha(base_input):
            return BaseChoice((base_input,), why, (base_input,))
        branch = f"refs/heads/{base_input.removeprefix('origin/')}"
        if base_input.startswith(("origin/", "refs/")):
            return BaseChoice((base_input,), why, (branch if base_input.startswith("origin/") else "",))
        # A branch name: a checkout usually has only the remote-tracking origin/NAME.
        return BaseChoice((base_input, f"origin/{base_input}"), why, ("", branch))
    where = f"event {event_name or '(none)'}"
    if event_name.startswith("pull_request"):
        sha = _dig(payload, "pull_request", "base", "sha")
        if not _sha(sha):
            raise GateError("event payload", f"{where}: pull_request.base.sha", "is missing",
                            "set the action's `base` input, e.g. base: ${{ github.event.pull_request.base.sha }}")
        ref = _dig(payload, "pull_request", "base", "ref")
        head = _dig(payload, "pull_request", "head", "sha")
        return BaseChoice((sha,), f"{event_name}: the pull request's base {ref or 'branch'} at {sha[:12]}", (sha,),
                          head if _sha(head) else "")
    if event_name == "merge_group":
        sha = _dig(payload, "merge_group", "base_sha")
        if not _sha(sha):
            raise GateError("event payload", f"{where}: merge_group.base_sha", "is missing",
                            "set the action's `base` input")
        return BaseChoice((sha,), f"merge_group: the merge queue's base {_dig(payload, 'merge_group', 'base_ref')} "
                                  f"at {sha[:12]}".replace("  ", " "), (sha,))
    if event_name == "push":
        if payload.get("deleted") is True or _dig(payload, "after") == ZERO_SHA:
            raise GateError("event payload", f"{where}", "deletes a branch: there is no commit to gate",
                            "run the gate only on pushes that create or update a branch "
                            "(e.g. `if: ${{ !github.event.deleted }}`)")
        before = _dig(payload, "before")
        default = _dig(payload, "repository", "default_branch")
        pushed = _dig(payload, "ref").removeprefix("refs/heads/")
        # The pusher wrote `before` too (an earlier push to this branch): its oracle is not
        # protected. Unless this is the default branch, read the oracle from the default branch.
        remote = f"refs/remotes/origin/{default}"  # full names: a tag `origin/main` cannot stand in
        oracle = (remote, f"refs/heads/{default}:{remote}") if default and pushed != default else ("", "")
        if default and pushed != default:
            # A feature branch: its `before` is the pusher's own earlier push, so neither its
            # oracle nor its history is protected. Compare with the default branch instead.
            return BaseChoice((remote,), f"push to {pushed}: compared with the default branch {remote}",
                              (f"refs/heads/{default}:{remote}",), oracle_ref=oracle)
        if _sha(before) and before != ZERO_SHA:
            return BaseChoice((before,), f"push: the branch's previous tip (before) {before[:12]}", (before,),
                              oracle_ref=oracle)
        if before != ZERO_SHA:
            raise GateError("event payload", f"{where}: before", "is missing", "set the action's `base` input")
        return BaseChoice(("HEAD^",), f"push: new branch {pushed or '(unknown)'} (before is all zeros) and it is "
                                      "the default branch: compared with the parent commit HEAD^", ("",))
    if event_name == "workflow_dispatch":
        raise GateError("input base", input_env_name("base"), "is required for workflow_dispatch",
                        "add a `base` input to the workflow and pass it: with: base: ${{ inputs.base }}")
    raise GateError("input base", input_env_name("base"), f"is required for event {event_name or '(none)'}: "
                    "only pull_request, pull_request_target, merge_group and push carry a base",
                    "set the action's `base` input to a branch or commit id")


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
