"""Which workflow files define this GitHub Actions run (docs/design.md §6): an edge that reads the
environment and the repository; the names are followed by :mod:`verdict_gate.core.workflows`.

``GITHUB_WORKFLOW_REF`` (``OWNER/REPO/.github/workflows/x.yml@REF``; for a reusable workflow, its
caller's) names the workflow file being run; the runner passes it to a Docker container action too (it
is in the runner's allowlist of ``github`` context variables). Each file is read from the candidate and
from the base revision, never from the work tree, and what either names counts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from verdict_gate.core.workflows import Running, closure, workflow_path
from verdict_gate.host import git

MAX_BYTES = 1024 * 1024  # a workflow or action file larger than this is not read: the run's workflows stay unknown
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def running(repo: Path, revisions: Sequence[str], environ: Mapping[str, str]) -> tuple[Running | None, str]:
    """What defines this run, read at ``revisions`` of ``repo`` (the candidate's and the base's), or
    ``None`` and why it is unknown (then every workflow edit voids the run).

    Unknown: outside GitHub Actions (no ``GITHUB_WORKFLOW_REF``); a workflow of another repository (a
    workflow a ruleset requires); a gated repository that is not the workflow's checkout
    (``GITHUB_WORKSPACE``, where ``uses: ./path`` is resolved); a file that cannot be read or parsed.
    """
    ref = environ.get("GITHUB_WORKFLOW_REF", "").strip()
    if not ref:
        return None, "this run names no workflow (GITHUB_WORKFLOW_REF is not set: not a GitHub Actions run)"
    repository = environ.get("GITHUB_REPOSITORY", "").strip()
    path = workflow_path(ref, repository)
    if path is None:
        return None, f"the workflow being run ({ref}) is not a workflow file of this repository ({repository})"
    workspace = environ.get("GITHUB_WORKSPACE", "").strip()
    if not workspace or os.path.realpath(repo) != os.path.realpath(workspace):
        return None, (f"the gated repository ({repo}) is not the workflow's checkout (GITHUB_WORKSPACE "
                      f"{workspace or 'unset'}), where its local actions are")

    def read(rel: str) -> list[Any] | None:
        docs = []
        for rev in dict.fromkeys(revisions):
            kind = git.git(repo, "cat-file", "-t", f"{rev}:{rel}", check=False)
            if kind.returncode != 0 or kind.stdout.strip() != b"blob":
                continue  # not a file of that revision
            if int(git.git(repo, "cat-file", "-s", f"{rev}:{rel}").stdout.strip() or 0) > MAX_BYTES:
                return None
            text = git.git(repo, "cat-file", "blob", f"{rev}:{rel}").stdout
            try:
                docs.append(yaml.load(text.decode("utf-8"), Loader=_Loader))  # a safe loader: plain data only
            except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError):
                return None
        return docs

    found = closure(path, read)
    if found is None:
        return None, f"{path}, or a local workflow or action it uses, could not be read and parsed"
    return found, ""
