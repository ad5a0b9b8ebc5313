"""What defines a GitHub Actions run (docs/design.md §6): the workflow file being run, and the local
reusable workflows and local actions it uses. Pure: parsed documents in, repository paths out.

A ``pull_request`` run executes the workflow file as the pull request has it, so a patch that edits
that file (or a local action or reusable workflow it uses) can change how the gate runs: such an edit
voids the run. Any other file under ``.github/workflows/`` does not execute in this run; its edit is
bucket ``other`` and listed in the evidence. When the run's workflow is not known (no
``GITHUB_WORKFLOW_REF``: the CLI outside Actions; a workflow of another repository), every workflow
edit voids the run, as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

WORKFLOWS_DIR = ".github/workflows/"
ACTION_FILES = ("action.yml", "action.yaml")


@dataclass(frozen=True)
class Running:
    """What defines this run, in repository coordinates.

    Attributes:
        workflow: the workflow file being run (``.github/workflows/gate.yml``).
        files: every file that defines the run: the workflow, the local reusable workflows it calls
            (transitively), the ``action.yml``/``action.yaml`` of each local action.
        dirs: the directories of the local actions it uses (transitively): every file under one may be
            read or run by that action. ``""`` is the repository's top (``uses: ./``).
    """

    workflow: str
    files: tuple[str, ...]
    dirs: tuple[str, ...] = ()

    def defines(self, path: str) -> bool:
        """Whether an edit of ``path`` may change this run."""
        return path in self.files or any(d == "" or path.startswith(d + "/") for d in self.dirs)

    def to_json(self) -> dict[str, Any]:
        return {"workflow": self.workflow, "files": list(self.files), "action_dirs": list(self.dirs)}


def workflow_path(ref: str, repository: str) -> str | None:
    """The repository path of ``GITHUB_WORKFLOW_REF`` (``OWNER/REPO/.github/workflows/x.yml@REF``) when the
    workflow is ``repository``'s own (``OWNER/REPO``, compared without case, as GitHub does); else ``None``."""
    path, at, _ = ref.rpartition("@")
    prefix = repository.strip("/") + "/"
    if not at or not repository or not path.lower().startswith(prefix.lower()):
        return None
    rel = path[len(prefix):]
    return rel if rel.startswith(WORKFLOWS_DIR) and _clean(rel) == rel else None


def _clean(path: str) -> str | None:
    """``path`` (``./x/y``, ``x/y/``) as a clean repository path (``x/y``; ``""`` for the top), or ``None``
    when it leaves the repository or is not a plain relative path."""
    if path.startswith("/") or "\\" in path:
        return None
    parts = [p for p in PurePosixPath(path).parts if p != "."]
    if ".." in parts:
        return None
    return "/".join(parts)


def _local(uses: Any) -> str | None:
    """A ``uses:`` value that names something in this repository (``./path``, no ``@``), cleaned."""
    if not isinstance(uses, str) or not uses.startswith("./"):
        return None
    return _clean(uses.split("@", 1)[0].strip())


def workflow_uses(doc: Any) -> tuple[list[str], list[str]]:
    """The local reusable workflows (``jobs.<id>.uses: ./.github/workflows/x.yml``) and local action
    directories (``jobs.<id>.steps[*].uses: ./path``) a parsed workflow names, in document order."""
    workflows: list[str] = []
    actions: list[str] = []
    jobs = doc.get("jobs") if isinstance(doc, Mapping) else None
    for job in (jobs.values() if isinstance(jobs, Mapping) else ()):
        if not isinstance(job, Mapping):
            continue
        called = _local(job.get("uses"))
        if called is not None:
            workflows.append(called)
        actions += _step_uses(job.get("steps"))
    return workflows, actions


def action_uses(doc: Any) -> list[str]:
    """The local action directories a composite action's steps name (``runs.steps[*].uses: ./path``)."""
    runs = doc.get("runs") if isinstance(doc, Mapping) else None
    return _step_uses(runs.get("steps")) if isinstance(runs, Mapping) else []


def _step_uses(steps: Any) -> list[str]:
    out = []
    for step in (steps if isinstance(steps, list) else ()):
        if isinstance(step, Mapping):
            local = _local(step.get("uses"))
            if local is not None:
                out.append(local)
    return out


def is_workflow(path: str) -> bool:
    """Whether ``path`` is a file GitHub may run as a workflow (under ``.github/workflows/``)."""
    return path.startswith(WORKFLOWS_DIR)


def closure(workflow: str, read: Any, limit: int = 200) -> Running | None:
    """Everything the workflow file ``workflow`` uses locally, followed through local reusable workflows
    and composite actions. ``read(path)`` returns the parsed documents of ``path`` (one per revision read;
    ``[]`` when it exists in none): the caller reads files, this function only follows names.

    Returns ``None`` (unknown: fail closed) when the workflow itself cannot be read or a named local file
    cannot be parsed, or after ``limit`` files.
    """
    files: list[str] = []
    dirs: list[str] = []
    todo: list[tuple[str, str]] = [("workflow", workflow)]
    seen: set[tuple[str, str]] = set()
    while todo:
        kind, path = todo.pop(0)
        if (kind, path) in seen:
            continue
        seen.add((kind, path))
        if len(seen) > limit:
            return None
        if kind == "workflow":
            files.append(path)
            docs = read(path)
            if docs is None or (path == workflow and not docs):
                return None
            for doc in docs:
                called, actions = workflow_uses(doc)
                todo += [("workflow", w) for w in called] + [("action", a) for a in actions]
        else:
            dirs.append(path)
            for name in ACTION_FILES:
                file = f"{path}/{name}" if path else name
                docs = read(file)
                if docs is None:
                    return None
                if docs:
                    files.append(file)
                for doc in docs:
                    todo += [("action", a) for a in action_uses(doc)]
    return Running(workflow, tuple(sorted(set(files))), tuple(sorted(set(dirs))))

