"""What defines a GitHub Actions run (docs/design.md §6, "What defines the run"). Pure: what the revisions
hold comes in through ``look`` (:mod:`verdict_gate.host.workflows` reads it), repository paths come out.

A ``pull_request`` run executes the workflow file as the pull request has it, and with it every file its
steps run or read from the checkout, so a patch that edits one of them can change how the gate runs: such an
edit voids the run. What defines the run: the workflow being run, the local reusable workflows it calls and
the local actions it uses (every file under their directories), followed through composite actions; every
repository file a ``run:`` step executes or reads by path (:mod:`verdict_gate.core.shell`: ``./x.sh``,
``bash x.sh``, ``python x.py``, ``source x`` …, and the shell scripts those run in turn); the files a step's
action is given by path (an input named ``path``, ``…-path``, ``…-file``, ``…-files``, the gate's
``oracle-pack`` and ``merge-shards``); and every symbolic link on the way to any of these in either revision,
with what it leads to. When the gate cannot tell which file a step runs, every edit is control
(:attr:`Running.unsure`). Any other file under ``.github/workflows/`` does not execute in this run; its edit
is bucket ``other``. When the run's workflow is not known (no ``GITHUB_WORKFLOW_REF``: the CLI outside
Actions; a workflow of another repository; the workflow itself cannot be read), every workflow edit voids
the run (``None``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from verdict_gate.core import shell
from verdict_gate.core.globs import match_any

WORKFLOWS_DIR = ".github/workflows/"
ACTION_FILES = ("action.yml", "action.yaml")
PATH_INPUT = re.compile(r"(^|[-_])(paths?|files?)$")  # an action input that names files by path
GATE_INPUTS = frozenset({"oracle-pack", "merge-shards"})  # the gate action's own inputs that do
# The runner's variables and expressions whose values lie outside the checkout (or are it: the workspace).
RUNNER_ENV = {"GITHUB_WORKSPACE": shell.WORKSPACE, "RUNNER_TEMP": "/runner/temp", "RUNNER_TOOL_CACHE": "/runner/tool",
              "HOME": "/home/runner", "pythonLocation": "/runner/tool/python", "GITHUB_ENV": "/runner/env",
              "GITHUB_OUTPUT": "/runner/output", "GITHUB_PATH": "/runner/path", "GITHUB_STATE": "/runner/state",
              "GITHUB_STEP_SUMMARY": "/runner/summary", "GITHUB_EVENT_PATH": "/runner/event.json"}
EXPRESSIONS = {"github.workspace": shell.WORKSPACE, "runner.temp": "/runner/temp", "runner.tool_cache": "/runner/tool"}
_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
MAX_LOOKS = 500  # files read for one run; past that, what defines it is not told


@dataclass(frozen=True)
class Seen:
    """One repository path as the revisions read have it, symbolic links followed as a checkout lays them out.

    Attributes:
        files: paths whose edit changes what the path names: itself, each symbolic link on the way (in either
            revision), and the file it leads to.
        dirs: directories every file of which counts: what the path leads to when it is a directory, and where
            a symbolic link inside one leads.
        texts: the file's contents (UTF-8, bad bytes replaced), one per revision where it is a file.
        docs: the same parsed as YAML (only when asked for), one per revision.
        unknown: why what it names cannot be told (``""`` when it can): a link that leaves the checkout or
            loops, a file too large to read, YAML that does not parse.
    """

    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    docs: tuple[Any, ...] = ()
    unknown: str = ""


Look = Callable[[str, bool], Seen]  # look(path, yaml) → what the revisions hold there


@dataclass(frozen=True)
class Running:
    """What defines this run, in repository coordinates.

    Attributes:
        workflow: the workflow file being run (``.github/workflows/gate.yml``).
        files: every file that defines the run: the workflow, the local reusable workflows it calls, the
            ``action.yml`` of each local action, the scripts its steps run and the files they read by path, the
            symbolic links on the way to any of them and what those lead to.
        dirs: directories every file of which defines it: each local action's (``""``, the repository's top,
            for ``uses: ./``), a directory an action is given by path, the literal part of a path the run
            computes.
        globs: globs (:mod:`verdict_gate.core.globs`) of the files it reads (an action's ``path: dist/*.whl``).
        unsure: why the gate cannot tell what some step runs; then every edit defines the run.
    """

    workflow: str
    files: tuple[str, ...]
    dirs: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    unsure: tuple[str, ...] = ()

    def defines(self, path: str) -> bool:
        """Whether an edit of ``path`` may change this run."""
        return (bool(self.unsure) or path in self.files
                or any(d == "" or path == d or path.startswith(d + "/") for d in self.dirs)
                or match_any(path, self.globs))

    def to_json(self) -> dict[str, Any]:
        return {"workflow": self.workflow, "files": list(self.files), "action_dirs": list(self.dirs),
                "globs": list(self.globs), "unsure": list(self.unsure)}


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


def is_workflow(path: str) -> bool:
    """Whether ``path`` is a file GitHub may run as a workflow (under ``.github/workflows/``)."""
    return path.startswith(WORKFLOWS_DIR)


def closure(workflow: str, look: Look, limit: int = MAX_LOOKS) -> Running | None:
    """Everything that defines a run of the workflow file ``workflow``, followed through local reusable
    workflows, composite actions and the scripts their steps run. ``look(path, yaml)`` says what the revisions
    hold at ``path`` (:class:`Seen`): the caller reads files, this function only follows names.

    Returns ``None`` (unknown: every workflow edit voids the run) when the workflow itself cannot be read; what
    else cannot be read or told makes every edit control (:attr:`Running.unsure`).
    """
    walk = _Walk(look, limit)
    if not walk.workflow(workflow, top=True):
        return None
    while walk.todo:
        kind, path, where = walk.todo.pop(0)
        if kind == "workflow":
            walk.workflow(path, top=False, where=where)
        else:
            walk.action(path, where)
    return Running(workflow, tuple(sorted(set(walk.files))), tuple(sorted(set(walk.dirs))),
                   tuple(sorted(set(walk.globs))), tuple(dict.fromkeys(walk.unsure)))


@dataclass
class _Step:
    """Where a step runs: its environment (values known before it runs), working directory and shell defaults,
    and the local action it belongs to (for ``github.action_path``)."""

    env: dict[str, str]
    defaults: Mapping[str, Any]
    action_dir: str | None = None


@dataclass
class _Walk:
    look: Look
    limit: int
    files: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    globs: list[str] = field(default_factory=list)
    unsure: list[str] = field(default_factory=list)
    todo: list[tuple[str, str, str]] = field(default_factory=list)
    done: set[tuple[str, ...]] = field(default_factory=set)
    looks: int = 0

    def see(self, path: str, yaml: bool = False) -> Seen | None:
        """What ``path`` is, its files and directories recorded as defining the run; ``None`` past the limit."""
        self.looks += 1
        if self.looks > self.limit:
            self.unsure.append(f"more than {self.limit} files define this run")
            return None
        seen = self.look(path, yaml)
        self.files += seen.files  # a path in neither revision is in no diff of them
        self.dirs += seen.dirs
        return seen

    def once(self, *key: str) -> bool:
        if key in self.done:
            return False
        self.done.add(key)
        return True

    def workflow(self, path: str, top: bool, where: str = "") -> bool:
        """Read a workflow file (the one being run, or a local reusable one it calls); False when the one
        being run cannot be read."""
        if not self.once("workflow", path):
            return True
        seen = self.see(path, yaml=True)
        if seen is None:
            return not top
        if seen.unknown or (top and not seen.docs):
            if top:
                return False
            self.unsure.append(f"{where}: {path}: {seen.unknown}")
        for doc in seen.docs:
            if not isinstance(doc, Mapping):
                continue
            env = _env(doc.get("env"), dict(RUNNER_ENV))
            defaults = _defaults(doc.get("defaults"), {})
            jobs = doc.get("jobs")
            for job_id, job in (jobs.items() if isinstance(jobs, Mapping) else ()):
                if not isinstance(job, Mapping):
                    continue
                called = _local(job.get("uses"))
                if called is not None:
                    self.todo.append(("workflow", called, f"{path}: job {job_id}"))
                step = _Step(_env(job.get("env"), env), _defaults(job.get("defaults"), defaults))
                self.steps(job.get("steps"), f"{path}: job {job_id}", step)
        return True

    def action(self, path: str, where: str) -> None:
        """A local action (``uses: ./path``): every file under its directory, and what its ``action.yml``
        runs (a composite action's steps, a JavaScript or Docker action's files outside the directory)."""
        if not self.once("action", path):
            return
        self.dirs.append(path)
        seen = self.see(path)
        if seen is not None and seen.unknown:
            self.unsure.append(f"{where}: the local action {path}: {seen.unknown}")
        for name in ACTION_FILES:
            file = f"{path}/{name}" if path else name
            found = self.see(file, yaml=True)
            if found is None:
                return
            if found.unknown:
                self.unsure.append(f"{where}: {file}: {found.unknown}")
            for doc in found.docs:
                runs = doc.get("runs") if isinstance(doc, Mapping) else None
                if not isinstance(runs, Mapping):
                    continue
                for key in ("main", "pre", "post", "image"):  # relative to the action's directory
                    value = runs.get(key)
                    if isinstance(value, str) and value and not value.startswith("docker://"):
                        target = _clean(posixpath.normpath(posixpath.join(path, value)))
                        if target:
                            self.see(target)
                env = {**RUNNER_ENV, "GITHUB_ACTION_PATH": f"{shell.WORKSPACE}/{path}".rstrip("/")}
                self.steps(runs.get("steps"), file, _Step(env, {}, action_dir=path))

    def steps(self, steps: Any, where: str, ctx: _Step) -> None:
        for n, step in enumerate(steps if isinstance(steps, list) else (), 1):
            if not isinstance(step, Mapping):
                continue
            named = step.get("name") or step.get("id")
            here = f"{where}, step {n}" + (f" ({named})" if isinstance(named, str) else "")
            local = _local(step.get("uses"))
            if local is not None:
                self.todo.append(("action", local, here))
            uses = step.get("uses")
            if isinstance(uses, str) and not uses.startswith("actions/checkout@"):  # checkout's `path` is written
                self.inputs(step.get("with"), here, ctx)
            if isinstance(step.get("run"), str):
                self.run(step, here, _Step(_env(step.get("env"), ctx.env), ctx.defaults, ctx.action_dir))

    def inputs(self, given: Any, where: str, ctx: _Step) -> None:
        """The files an action step is given by path (inputs named like ``path``, ``cache-dependency-path``,
        ``python-version-file``, ``sarif_file``): each line a path or a glob, relative to the workspace. A value
        the run computes (an expression other than ``github.workspace``) names no file the gate can see."""
        for name, value in (given.items() if isinstance(given, Mapping) else ()):
            if not isinstance(name, str) or not isinstance(value, str):
                continue
            if not (PATH_INPUT.search(name) or name in GATE_INPUTS):
                continue
            for line in _expand(value, ctx).splitlines():
                item = line.strip()
                if item.startswith(shell.WORKSPACE):
                    item = item[len(shell.WORKSPACE):].lstrip("/") or "."
                if not item or item.startswith(("!", "/", "~")) or shell.UNKNOWN in item:
                    continue
                path = _clean(item)
                if path is None:
                    continue
                if any(c in path for c in "*?["):
                    self.globs.append(path)
                elif path == "":
                    self.dirs.append("")
                else:
                    self.see(path)

    def run(self, step: Mapping[str, Any], where: str, ctx: _Step) -> None:
        """A ``run:`` step: the files its script runs or reads by path, followed into the shell scripts."""
        program = str(step.get("shell") or ctx.defaults.get("shell") or "bash").split()
        name = posixpath.basename(program[0]) if program else "bash"
        if name not in ("bash", "sh"):
            # Python or JavaScript inline is code, not a file named by path (like `python -c`); any other shell
            # (pwsh, cmd, a custom one) runs commands the gate does not read.
            if not (shell.PYTHON.fullmatch(name) or name == "node"):
                self.unsure.append(f"{where}: a `shell: {' '.join(program)}` step (the gate reads bash and sh)")
            return
        cwd = _workdir(step.get("working-directory") or ctx.defaults.get("working-directory") or "", ctx)
        found = shell.refs(_expand(str(step["run"]), ctx), cwd, ctx.env, where)
        self.take(found, ctx.env, where)

    def take(self, found: shell.Refs, env: Mapping[str, str], where: str) -> None:
        self.dirs += found.dirs
        for directory in found.dirs:
            self.see(directory)  # where it leads, when it is a link
        self.globs += found.globs
        self.unsure += found.unsure
        for path, how, cwd in found.files:
            seen = self.see(path)
            if seen is None:
                return
            if seen.unknown:
                self.unsure.append(f"{where}: {path}: {seen.unknown}")
            if how == "file":
                continue
            for text in seen.texts:
                if (how == "shell" or shell.is_shell_script(text)) and self.once("script", path, cwd or "", text):
                    self.take(shell.refs(text, cwd, env, path, script=path), env, path)


def _env(given: Any, outer: Mapping[str, str]) -> dict[str, str]:
    """``outer`` with the ``env:`` mapping ``given`` over it: each value as a string, an expression in it
    replaced by what the gate knows of it (else :data:`verdict_gate.core.shell.UNKNOWN`)."""
    env = dict(outer)
    for name, value in (given.items() if isinstance(given, Mapping) else ()):
        if isinstance(name, str) and isinstance(value, (str, int, float, bool)):
            env[name] = _expand(str(value).lower() if isinstance(value, bool) else str(value), _Step(env, {}))
        elif isinstance(name, str):
            env[name] = shell.UNKNOWN
    return env


def _defaults(given: Any, outer: Mapping[str, Any]) -> dict[str, Any]:
    """``defaults.run`` (``shell``, ``working-directory``) over ``outer``."""
    run = given.get("run") if isinstance(given, Mapping) else None
    return {**outer, **(run if isinstance(run, Mapping) else {})}


def _expand(text: str, ctx: _Step) -> str:
    """``text`` with each ``${{ … }}`` replaced as the runner would where the gate knows the value
    (``github.workspace``, ``github.action_path``, ``runner.temp``, ``env.NAME``), else by ``UNKNOWN``."""
    def value(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        if expr == "github.action_path":
            return shell.WORKSPACE + "/" + ctx.action_dir if ctx.action_dir is not None else "/runner/action"
        if expr.startswith("env.") and expr[4:] in ctx.env:
            return ctx.env[expr[4:]]
        return EXPRESSIONS.get(expr, shell.UNKNOWN)
    return _EXPRESSION.sub(value, text)


def _workdir(given: Any, ctx: _Step) -> str | None:
    """A step's working directory as a repository path (``""`` the top), :data:`shell.OUTSIDE` outside the
    checkout, ``None`` when the run computes it."""
    text = _expand(str(given), ctx)
    if shell.UNKNOWN in text:
        return None
    if text.startswith(shell.WORKSPACE):
        text = text[len(shell.WORKSPACE):].lstrip("/") or "."
    if text.startswith(("/", "~")):
        return shell.OUTSIDE
    path = _clean(text)
    return shell.OUTSIDE if path is None else path
