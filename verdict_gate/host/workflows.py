"""Which files define this GitHub Actions run (docs/design.md §6): an edge that reads the environment and the
repository; the names are followed by :mod:`verdict_gate.core.workflows`.

``GITHUB_WORKFLOW_REF`` (``OWNER/REPO/.github/workflows/x.yml@REF``; for a reusable workflow, its
caller's) names the workflow file being run; the runner passes it to a Docker container action too (it
is in the runner's allowlist of ``github`` context variables). Each file is read from the candidate and
from the base revision, never from the work tree, and what either names counts. Paths are resolved as a
checkout of each revision lays them out: a symbolic link (a blob of mode ``120000`` whose contents are its
target) is followed component by component, as the kernel would in the checked-out tree, and both the link
and what it leads to count.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from verdict_gate.core.workflows import Running, Seen, closure, workflow_path
from verdict_gate.host import git

MAX_BYTES = 1024 * 1024  # a workflow, action or script file larger than this is not read: what it runs is unknown
MAX_HOPS = 40  # symbolic links followed for one path, as Linux's SYMLOOP_MAX
MAX_LINKS = 1000  # symbolic links inside one directory that counts whole
LINK, TREE, SUBMODULE = "120000", "040000", "160000"
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Tree:
    """One revision's tree as a checkout lays it out, read through git (each directory listed once)."""

    def __init__(self, repo: Path, rev: str) -> None:
        self.repo, self.rev = repo, rev
        self.listings: dict[str, dict[str, tuple[str, str, int]]] = {}

    def listing(self, directory: str) -> dict[str, tuple[str, str, int]]:
        """name → (mode, object id, size) of the entries of ``directory`` (a tree of this revision; ``""``
        the top)."""
        if directory not in self.listings:
            spec = ["--", directory + "/"] if directory else []
            out = git.git(self.repo, *git.LOW_MEMORY, "--literal-pathspecs", "ls-tree", "-l", "-z", "--full-tree",
                          "--end-of-options", self.rev, *spec).stdout
            entries = {}
            for line in out.split(b"\0"):
                meta, _, path = line.partition(b"\t")
                fields = meta.split()
                if len(fields) == 4:
                    size = -1 if fields[3] == b"-" else int(fields[3])
                    entries[os.fsdecode(path).rpartition("/")[2]] = (fields[0].decode(), fields[2].decode(), size)
            self.listings[directory] = entries
        return self.listings[directory]

    def entry(self, path: str) -> tuple[str, str, int] | None:
        parent, _, name = path.rpartition("/")
        return self.listing(parent).get(name)

    def blob(self, oid: str) -> bytes:
        return git.git(self.repo, "cat-file", "blob", oid).stdout

    def resolve(self, path: str) -> tuple[str | None, list[str], str]:
        """``(real, links, why)``: the path ``path`` leads to (``None`` when nothing is there), the symbolic
        links passed on the way, and why it cannot be told (a link out of the checkout, a loop)."""
        todo = [p for p in path.split("/") if p]
        done: list[str] = []
        links: list[str] = []
        while todo:
            name = todo.pop(0)
            if name in (".", ".."):
                if name == ".." and not done:
                    return None, links, f"{links[-1] if links else path} leads outside the checkout"
                if name == "..":
                    done.pop()
                continue
            here = "/".join([*done, name])
            found = self.entry(here)
            if found is not None and found[0] == SUBMODULE:  # its files are pinned by its entry, a file here
                return here, links, ""
            if found is None or (found[0] not in (LINK, TREE) and todo):
                return None, links, ""  # not in this revision (or a file used as a directory)
            if found[0] == LINK:
                links.append(here)
                if len(links) > MAX_HOPS:
                    return None, links, f"{here}: symbolic links in a loop"
                target = os.fsdecode(self.blob(found[1]))
                if target.startswith("/"):
                    return None, links, f"{here} leads outside the checkout ({target})"
                todo = [p for p in target.split("/") if p] + todo
                continue
            done.append(name)
        return "/".join(done), links, ""

    def links_under(self, directory: str) -> list[str]:
        """The symbolic links anywhere under ``directory`` (at most :data:`MAX_LINKS` + 1)."""
        out = git.git(self.repo, *git.LOW_MEMORY, "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree",
                      "--end-of-options", self.rev, "--", directory + "/").stdout
        found = []
        for line in out.split(b"\0"):
            meta, _, path = line.partition(b"\t")
            if meta.startswith(LINK.encode()):
                found.append(os.fsdecode(path))
                if len(found) > MAX_LINKS:
                    break
        return found


def look(trees: Sequence[_Tree], path: str, as_yaml: bool) -> Seen:
    """What ``trees`` (the revisions read) hold at ``path``, links followed (:class:`Seen`)."""
    files: list[str] = []
    dirs: list[str] = []
    texts: list[str] = []
    docs: list[Any] = []
    unknown = ""
    for tree in trees:
        real, links, why = tree.resolve(path)
        files += links
        unknown = unknown or why
        if real is None:
            continue
        found = tree.entry(real) if real else (TREE, "", -1)
        assert found is not None  # resolve() found it
        mode, oid, size = found
        if mode == TREE:
            dirs.append(real)
            more, why = _inside(tree, real)
            files += more[0]
            dirs += more[1]
            unknown = unknown or why
            continue
        files.append(real)
        if mode == SUBMODULE:
            continue
        if size > MAX_BYTES:
            unknown = unknown or f"{real} is larger than {MAX_BYTES} bytes: not read"
            continue
        data = tree.blob(oid)
        texts.append(data.decode("utf-8", "replace"))
        if as_yaml:
            try:
                docs.append(yaml.load(data.decode("utf-8"), Loader=_Loader))  # a safe loader: plain data only
            except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError) as exc:
                unknown = unknown or f"{real} does not parse as YAML ({type(exc).__name__})"
    return Seen(tuple(dict.fromkeys(files)), tuple(dict.fromkeys(dirs)), tuple(texts), tuple(docs), unknown)


def _inside(tree: _Tree, directory: str) -> tuple[tuple[list[str], list[str]], str]:
    """Where the symbolic links under ``directory`` (and under the directories they lead to) lead: the files
    and directories that count with it, and why not all could be told."""
    files: list[str] = []
    dirs: list[str] = []
    todo, seen, unknown = [directory], {directory}, ""
    while todo and directory:  # the top (uses: ./) holds everything already
        for link in tree.links_under(todo.pop()):
            if len(files) + len(dirs) > MAX_LINKS:
                return (files, dirs), f"more than {MAX_LINKS} symbolic links under {directory}"
            real, links, why = tree.resolve(link)
            files += links
            unknown = unknown or why
            found = tree.entry(real) if real else None
            if real is None or found is None:
                continue
            if found[0] == TREE:
                dirs.append(real)
                if real not in seen:
                    seen.add(real)
                    todo.append(real)
            else:
                files.append(real)
    return (files, dirs), unknown


def running(repo: Path, revisions: Sequence[str], environ: Mapping[str, str]) -> tuple[Running | None, str]:
    """What defines this run, read at ``revisions`` of ``repo`` (the candidate's and the base's), or
    ``None`` and why it is unknown (then every workflow edit voids the run).

    Unknown: outside GitHub Actions (no ``GITHUB_WORKFLOW_REF``); a workflow of another repository (a
    workflow a ruleset requires); a gated repository that is not the workflow's checkout
    (``GITHUB_WORKSPACE``, where ``uses: ./path`` is resolved); the workflow file cannot be read or parsed.
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
    trees = [_Tree(repo, rev) for rev in dict.fromkeys(revisions)]
    found = closure(path, lambda rel, as_yaml: look(trees, rel, as_yaml))
    if found is None:
        return None, f"{path}, the workflow being run, could not be read and parsed"
    return found, ""
