"""The base of a run, from the GitHub event payload at ``GITHUB_EVENT_PATH``.

"Events that trigger workflows": https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows;
webhook payloads: https://docs.github.com/en/webhooks/webhook-events-and-payloads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verdict_gate.core.errors import GateError
from verdict_gate.github.workflow import input_env_name

ZERO_SHA = "0" * 40


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
    """The base ref for ``event_name`` (docs/design.md §1: the base revision is the merge base of
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
