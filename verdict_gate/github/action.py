"""verdict-gate as a GitHub Docker container action: ``main(argv, environ) -> int``.

Called by the thin ``entrypoint.py`` shell; it runs the pipeline as a library
(:func:`verdict_gate.run.pipeline.run`, then :func:`verdict_gate.report.render_all` and the
evidence writer), as ``verdict-gate run`` does. It reads the action's inputs from ``INPUT_*``
variables exactly as the runner names them (``INPUT_ORACLE-PACK``), picks the base ref from the
event payload at ``GITHUB_EVENT_PATH`` (:func:`verdict_gate.github.event.choose_base`), makes git
usable in the container (``safe.directory`` for this process only, missing history fetched from
``origin`` with the token), runs the gate, and reports through the runner's channels: step outputs in
``GITHUB_OUTPUT``, the verdict table in ``GITHUB_STEP_SUMMARY``, at most 10 annotations, worst
first. Docs: "Creating a Docker container action"
(https://docs.github.com/en/actions/tutorials/use-containerized-services/create-a-docker-container-action)
and "Dockerfile support for GitHub Actions"
(https://docs.github.com/en/actions/reference/workflows-and-actions/dockerfile-support).

Exit codes: 0 when the outcome is not listed in ``fail-on`` (``promoted`` never is), else the
gate's own (1 blocked, 3 void, 4 incomplete); 2 for a usage or configuration error and for any
internal error: never 0 unless the gate ran and its outcome was allowed.

The token (input ``github-token``) reaches the gate only as ``GITHUB_TOKEN`` in the process
environment and reaches git only as an ``http.<server>/.extraheader`` set through
``GIT_CONFIG_*`` variables: never on a command line, never printed.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from verdict_gate.core.evidence import Evidence
    from verdict_gate.github.event import BaseChoice
    from verdict_gate.pack import PackOptions

DEFAULT_WORKSPACE = "/github/workspace"
EVIDENCE_NAME = "verdict-gate"
HOST_PREFIX = "host:"
ERROR_TAIL = 4000  # characters of the gate's error message kept for the summary and annotation


@dataclass(frozen=True)
class Settings:
    """The action's inputs (action.yml documents each with its default)."""

    workspace: Path
    repo: Path
    base: str
    oracle_pack: str
    oracle_pack_sha256: str
    oracle_pack_workflow: str
    oracle_pack_branch: str
    oracle_pack_repository: str
    policy: str
    out: str
    sarif_category: str
    token: str
    fail_on: frozenset[str]
    fetch_history: bool
    host_temp: str
    shard: str = ""  # K/N: run that shard only and write partial evidence (the merge job decides)
    merge_shards: str = ""  # a directory of shard directories: decide from them instead of running


def read_settings(environ: Mapping[str, str]) -> Settings:
    """Inputs from ``environ``. Raises GateError (exit 2) on an invalid ``fail-on`` or boolean."""
    from verdict_gate.github import workflow as gh

    workspace = Path(environ.get("GITHUB_WORKSPACE", "").strip() or DEFAULT_WORKSPACE)
    working_dir = gh.get_input(environ, "working-directory", ".")
    repo = Path(working_dir) if Path(working_dir).is_absolute() else workspace / working_dir
    _check_inputs(environ, workspace, repo, working_dir)
    host_temp = gh.get_input(environ, "runner-temp")
    return Settings(
        workspace=workspace,
        repo=repo,
        base=gh.get_input(environ, "base"),
        oracle_pack=gh.get_input(environ, "oracle-pack"),
        oracle_pack_sha256=gh.get_input(environ, "oracle-pack-sha256"),
        oracle_pack_workflow=gh.get_input(environ, "oracle-pack-workflow"),
        oracle_pack_branch=gh.get_input(environ, "oracle-pack-branch"),
        oracle_pack_repository=gh.get_input(environ, "oracle-pack-repository"),
        policy=gh.get_input(environ, "policy"),
        out=gh.get_input(environ, "out"),
        sarif_category=gh.get_input(environ, "sarif-category", "verdict-gate"),
        token=gh.get_input(environ, "github-token"),
        fail_on=gh.parse_fail_on(gh.get_input(environ, "fail-on")),
        fetch_history=gh.get_bool_input(environ, "fetch-history", True),
        # The default `host:${{ runner.temp }}` carries a prefix so the runner does not rewrite it
        # to the container path: it is where later steps find RUNNER_TEMP.
        host_temp=host_temp.removeprefix(HOST_PREFIX) if host_temp.startswith(HOST_PREFIX) else "",
        shard=gh.get_input(environ, "shard"),
        merge_shards=gh.get_input(environ, "merge-shards"),
    )


def _check_inputs(environ: Mapping[str, str], workspace: Path, repo: Path, working_dir: str) -> None:
    """Inputs checked before any git or pack work: each error names the input and the fix (exit 2)."""
    from verdict_gate.core.errors import GateError
    from verdict_gate.github import workflow as gh

    policy = gh.get_input(environ, "policy")
    if policy and policy not in ("lenient", "strict"):
        raise GateError("input policy", repr(policy), "is not a promotion policy",
                        "set `policy: lenient` or `policy: strict`, or leave it empty for the catalog's")
    top, here = Path(os.path.abspath(workspace)), Path(os.path.abspath(repo))
    if here != top and top not in here.parents:
        raise GateError("input working-directory", repr(working_dir), f"is outside the workspace {top}",
                        "give a directory relative to the workspace, e.g. the `path:` of actions/checkout")
    if not here.is_dir():
        raise GateError("input working-directory", repr(working_dir), "does not exist in the workspace as a directory",
                        "give the `path:` actions/checkout used, or leave it at `.`")
    shard, merge_shards = gh.get_input(environ, "shard"), gh.get_input(environ, "merge-shards")
    if shard and merge_shards:
        raise GateError("inputs shard and merge-shards", f"{shard!r} and {merge_shards!r}", "are both set",
                        "set `shard` in the matrix jobs that run the properties and `merge-shards` only in the "
                        "one job that decides")
    if shard:
        from verdict_gate.core.shard import parse_shard

        parse_shard(shard, "input shard")
    if merge_shards and not (workspace / merge_shards).is_dir():
        raise GateError("input merge-shards", repr(merge_shards), "is not a directory in the workspace",
                        "download every shard's evidence artifact into it first (actions/download-artifact "
                        "with `pattern:` and `path:`), one subdirectory per shard")
    pin = gh.get_input(environ, "oracle-pack-sha256")
    if pin and not re.fullmatch(r"[0-9a-fA-F]{64}", pin):
        raise GateError("input oracle-pack-sha256", repr(pin[:80]), "is not a sha256 (64 hex digits)",
                        "paste the sha256 `verdict-gate pack build` printed, or leave it empty")


@contextlib.contextmanager
def scoped_environ(env: Mapping[str, str]) -> Iterator[None]:
    """Make ``os.environ`` equal to ``env`` for the block (the gate and git read it), then restore it."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _scrub(text: str, token: str) -> str:
    return text.replace(token, "***") if token else text


# --- git ---------------------------------------------------------------------------------------


def _git_ok(repo: Path, *args: str) -> tuple[bool, str]:
    from verdict_gate.host import git

    proc = git.git(repo, *args, check=False)
    return proc.returncode == 0, (proc.stdout if proc.returncode == 0 else proc.stderr).decode(errors="replace").strip()


def _commit(repo: Path, ref: str) -> str:
    ok, out = _git_ok(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    return out if ok else ""


def _fetch(repo: Path, log: TextIO, *args: str) -> bool:
    ok, err = _git_ok(repo, "fetch", "--no-tags", "--no-recurse-submodules", "--quiet", *args)
    if not ok:
        last = re.sub(r"://[^/@\s]+@", "://***@", err.splitlines()[-1] if err else "no message")  # no credentials
        print(f"verdict-gate: git fetch {' '.join(args)} failed: {last}", file=log)
    return ok


def prepare_history(repo: Path, choice: BaseChoice, fetch_history: bool, log: TextIO,
                    warnings: list[str]) -> tuple[str, str]:
    """Resolve the base ref to a commit, fetching what a shallow or partial clone lacks.

    Returns ``(base commit, how it was chosen)``; appends warnings for the annotations to ``warnings``.

    Raises:
        GateError (exit 2): the base cannot be found, or the clone stays shallow without the
            merge base of the base and HEAD, with the exact fix (``fetch-depth: 0``).
    """
    from verdict_gate.core.errors import GateError
    from verdict_gate.host import git

    shallow = git.is_shallow(repo)
    has_origin = _git_ok(repo, "remote", "get-url", "origin")[0]
    if shallow and fetch_history and has_origin:
        print("verdict-gate: the clone is shallow; fetching the full history from origin", file=log)
        if _fetch(repo, log, "--unshallow", "origin"):
            shallow = git.is_shallow(repo)
    base, why = "", choice.why
    for i, ref in enumerate(choice.refs):
        base = _commit(repo, ref)
        if not base and fetch_history and has_origin and choice.fetch[i]:
            print(f"verdict-gate: {ref} is not in the clone; fetching {choice.fetch[i]} from origin", file=log)
            if _fetch(repo, log, "origin", choice.fetch[i]):
                base = _commit(repo, ref)
        if base:
            if i > 0:
                why = f"{choice.why}; {choice.refs[0]} is not available, so the fallback {ref} is used"
            break
    fix = git.FETCH_DEPTH_FIX if shallow or not fetch_history else \
        ("check the base, or fetch it: with actions/checkout set `fetch-depth: 0` so every branch and its "
         "history is fetched; a `before` that was force-pushed away may be gone: then set the `base` input")
    if not base:
        raise GateError("base ref", " or ".join(choice.refs), f"does not name a commit in {repo}"
                        + (" (the clone is shallow)" if shallow else ""), fix)
    head = _commit(repo, "HEAD")
    if choice.pr_head:
        parents = _git_ok(repo, "rev-list", "--parents", "-n", "1", "HEAD")[1].split()
        if len(parents) == 3 and parents[2] == choice.pr_head:
            if parents[1] != base:
                why += (f"; the base branch moved since, so the test merge commit's first parent "
                        f"{parents[1][:12]} is the base")
                base = parents[1]
        elif head != choice.pr_head:
            warnings.append(f"HEAD {head[:12]} is neither the pull request's head {choice.pr_head[:12]} nor its "
                            "merge commit: the gate scores what is checked out")
    if shallow and not _git_ok(repo, "merge-base", base, head)[0]:
        raise GateError("git history", str(repo), f"is a shallow clone without the merge base of {base[:12]} and "
                        f"HEAD {head[:12]}" + ("" if fetch_history else " (input fetch-history is false)"),
                        git.FETCH_DEPTH_FIX)
    return base, why


def oracle_commit(repo: Path, choice: BaseChoice, base: str, fetch_history: bool, log: TextIO) -> str:
    """The commit the default pack (``git:COMMIT:oracle``) is read from: the base, or for a
    push to a non-default branch the default branch's tip (see ``BaseChoice.oracle_ref``).

    Raises:
        GateError (exit 2): that branch is not in the clone and cannot be fetched.
    """
    from verdict_gate.core.errors import GateError

    ref, fetch = choice.oracle_ref
    if not ref:
        return base
    commit = _commit(repo, ref)
    if not commit and fetch_history and _fetch(repo, log, "origin", fetch):
        commit = _commit(repo, ref)
    if not commit:
        raise GateError("oracle pack", ref, "is not in the clone: the oracle of a push to a feature branch is "
                        "read from the default branch", "with actions/checkout set `fetch-depth: 0`, or set "
                        "the `oracle-pack` input (e.g. git:origin/main:oracle)")
    print(f"verdict-gate: oracle read from {ref} ({commit[:12]}), not from the pushed branch", file=log)
    return commit


def git_environment(settings: Settings, environ: Mapping[str, str], log: TextIO) -> dict[str, str]:
    """The environment for the gate: ``environ`` plus ``GITHUB_TOKEN`` from the input, no git
    prompts, and git configuration for this process only: ``safe.directory`` for the workspace
    and the repository, and the token as an auth header for ``origin`` on the GitHub server when
    the clone has none (``actions/checkout`` with ``persist-credentials: false``)."""
    from verdict_gate.github import workflow as gh

    env = dict(environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    if settings.token:
        env["GITHUB_TOKEN"] = settings.token
    safe = []
    for path in (settings.workspace, settings.repo):
        for variant in (str(path), os.path.realpath(path)):
            if variant not in safe:
                safe.append(variant)
    pairs = [("safe.directory", s) for s in safe]
    env.update(gh.git_config_env(environ, pairs))
    if settings.token:
        server = environ.get("GITHUB_SERVER_URL", "").strip() or "https://github.com"
        with scoped_environ(env):
            ok, url = _git_ok(settings.repo, "remote", "get-url", "origin")
            has_header = _git_ok(settings.repo, "config", "--get-regexp", r"^http\..*\.extraheader$")[0]
        if ok and gh.same_origin(url, server) and not has_header:
            pairs.append(gh.auth_header(server, settings.token))
            env.update(gh.git_config_env(environ, pairs))
            print("verdict-gate: git fetches from origin use the github-token input", file=log)
    return env


# --- evidence location -------------------------------------------------------------------------


def evidence_location(settings: Settings, environ: Mapping[str, str]) -> tuple[Path, str]:
    """``(directory to write, the same directory as later steps of the job see it)``.

    Default: ``verdict-gate`` under ``RUNNER_TEMP`` when that directory is mounted in the
    container; else ``.verdict-gate`` in the workspace. Paths in the workspace are given to
    later steps relative to it (``actions/upload-artifact`` and ``upload-sarif`` read them so);
    paths under the container's ``RUNNER_TEMP`` are given under the host's ``runner.temp``.
    """
    temp = environ.get("RUNNER_TEMP", "").strip()
    if settings.out:
        path = Path(settings.out) if Path(settings.out).is_absolute() else settings.workspace / settings.out
    elif temp and Path(temp).is_dir():
        path = Path(temp) / EVIDENCE_NAME
    else:
        path = settings.workspace / f".{EVIDENCE_NAME}"
    path = Path(os.path.normpath(path))
    return path, host_view(path, settings, temp)


def host_view(path: Path, settings: Settings, temp: str) -> str:
    """``path`` as later steps (outside the container) see it."""
    workspace = Path(os.path.normpath(settings.workspace))
    if path == workspace or workspace in path.parents:
        return path.relative_to(workspace).as_posix() or "."
    if temp and settings.host_temp and settings.host_temp != temp:
        root = Path(os.path.normpath(temp))
        if path == root or root in path.parents:
            return (Path(settings.host_temp) / path.relative_to(root)).as_posix()
    return path.as_posix()


def pack_source(value: str, workspace: Path) -> str:
    """The ``oracle-pack`` input for ``--pack``: a relative local path is made relative to the
    workspace (as every path in a workflow is); ``git:``, ``artifact:`` and URL sources pass as given."""
    if not value or value.startswith(("git:", "artifact:", "https://", "http://")) or Path(value).is_absolute():
        return value
    return str(workspace / value)


# --- reporting -----------------------------------------------------------------------------------


def _emit(stdout: TextIO, lines: Sequence[str]) -> None:
    for line in lines:
        stdout.write(line + "\n")
    stdout.flush()


def report_error(message: str, settings: Settings | None, environ: Mapping[str, str], stdout: TextIO,
                 title: str = "verdict-gate configuration error") -> None:
    """Outputs (no outcome, not promoted), one error annotation and a summary for a run that
    stopped before an outcome."""
    from verdict_gate.github import workflow as gh

    token = settings.token if settings else ""
    message = _scrub(message, token).strip()[-ERROR_TAIL:]
    outputs = {"outcome": "", "promoted": "false", "pass-count": "", "fail-count": "", "inconclusive-count": "",
               "sarif-file": "", "evidence-dir": "", "base-revision": ""}
    with contextlib.suppress(OSError):
        gh.write_outputs(environ.get("GITHUB_OUTPUT"), outputs)
    _emit(stdout, [gh.command("error", message, {"title": title})])
    heading = title.removeprefix("verdict-gate ")  # "## verdict-gate: **configuration error**", not doubled
    summary = f"## verdict-gate: **{heading}**\n\nThe gate stopped before an outcome; the step fails.\n\n```text\n" \
              f"{message.replace('```', '` ` `')}\n```\n"
    with contextlib.suppress(OSError):
        gh.append_summary(environ.get("GITHUB_STEP_SUMMARY"), summary)


def report_outcome(ev: Evidence, files: Mapping[str, str], shown: str,
                   settings: Settings, why: str, base: str, environ: Mapping[str, str], stdout: TextIO,
                   warnings: Sequence[str] = ()) -> int:
    """Outputs, annotations and the job summary of a run with an outcome; returns the step's exit
    code under ``fail-on`` (the gate's own code from the one table, or 0 when the outcome is allowed)."""
    from verdict_gate.core.errors import EXIT_CODES
    from verdict_gate.github import workflow as gh
    from verdict_gate.report.rows import counts as count_verdicts
    from verdict_gate.report.sarif import MAX_RESULTS, findings
    from verdict_gate.report.text import md_code, md_line

    assert ev.outcome is not None
    code = EXIT_CODES[ev.outcome]
    counts = count_verdicts(ev)
    sarif_shown = f"{shown.rstrip('/')}/results.sarif"
    gh.write_outputs(environ.get("GITHUB_OUTPUT"), {
        "outcome": ev.outcome, "promoted": "true" if ev.promoted else "false",
        "pass-count": str(counts["pass"]), "fail-count": str(counts["fail"]),
        "inconclusive-count": str(counts["inconclusive"]),
        "sarif-file": sarif_shown, "evidence-dir": shown, "base-revision": ev.base_revision,
    })
    prefix = ""
    repo, workspace = Path(os.path.normpath(settings.repo)), Path(os.path.normpath(settings.workspace))
    if workspace in repo.parents:
        prefix = repo.relative_to(workspace).as_posix()
    found = [] if ev.shard is not None else gh.annotations_of(findings(ev)[:MAX_RESULTS], prefix)
    own = [gh.Annotation("warning", w, "verdict-gate") for w in warnings]
    errors = [a for a in found if a.level == "error"]
    _emit(stdout, gh.render_annotations(errors + own + [a for a in found if a.level != "error"]))

    fails = ev.outcome in settings.fail_on
    listed = ", ".join(sorted(settings.fail_on)) or "none"
    summary = files.get("summary.md", "")
    summary += (f"\n### Action step\n\n"
                f"- base ref `{base[:12]}`: {md_code(why)}\n"
                f"- evidence `{md_line(shown)}`, SARIF `{md_line(sarif_shown)}`\n"
                f"- outcome `{ev.outcome}` {'fails' if fails else 'does not fail'} the step (fail-on: {listed})\n")
    gh.append_summary(environ.get("GITHUB_STEP_SUMMARY"), summary)
    return code if fails else 0


# --- main ---------------------------------------------------------------------------------------


def pack_options(settings: Settings) -> PackOptions:
    """The pack source options from the ``oracle-pack-*`` inputs."""
    from verdict_gate.pack import PackOptions

    return PackOptions(sha256=settings.oracle_pack_sha256 or None, workflow=settings.oracle_pack_workflow or None,
                       branch=settings.oracle_pack_branch or None,
                       repository=settings.oracle_pack_repository or None)


def run_gate(settings: Settings, base: str, pack: str, out_dir: Path,
             stdout: TextIO) -> tuple[Evidence, dict[str, str]]:
    """The pipeline as a library, with workflow commands stopped around it (its progress quotes
    candidate text) and stderr merged into ``stdout`` in order: the evidence, the rendered files
    (written to ``out_dir``). The terminal table goes to ``stdout`` as well.

    Raises:
        GateError: a usage or configuration error (exit 2) before anything was scored.
    """
    from verdict_gate.github import workflow as gh
    from verdict_gate.host.process import interrupt_on_sigterm, keep_secrets
    from verdict_gate.report.publish import printer, publish
    from verdict_gate.report.writer import check_out_dir, clear_stale
    from verdict_gate.run import pipeline

    progress = printer(stdout)

    token = gh.stop_commands_token()
    _emit(stdout, [f"::stop-commands::{token}"])
    try:
        with contextlib.redirect_stderr(stdout):
            interrupt_on_sigterm()
            keep_secrets()  # before any process is started: the oracle's cannot read the token out of ours
            check_out_dir(out_dir, settings.repo)
            clear_stale(out_dir)
            if settings.merge_shards:
                from verdict_gate.run.merge import merge

                ev = merge(shard_dirs(settings.workspace / settings.merge_shards), settings.repo, base, pack,
                           policy=settings.policy or None, today=pipeline.today(), progress=progress,
                           pack_options=pack_options(settings))
            else:
                ev = pipeline.run(settings.repo, base, pack, policy=settings.policy or None, today=pipeline.today(),
                                  progress=progress, pack_options=pack_options(settings), shard=shard_spec(settings))
            files = publish(ev, out_dir, stdout=stdout, log=stdout, sarif_category=settings.sarif_category)
    finally:
        stdout.flush()
        _emit(stdout, [f"::{token}::"])
    return ev, files


def shard_spec(settings: Settings) -> Any:
    """The ``shard`` input as a :class:`~verdict_gate.core.shard.ShardSpec` (``None`` when unset)."""
    if not settings.shard:
        return None
    from verdict_gate.core.shard import parse_shard

    return parse_shard(settings.shard, "input shard")


def shard_dirs(root: Path) -> list[Path]:
    """The shard directories under ``root`` (the ``merge-shards`` input): every directory holding a
    ``shard.json``, ``root`` itself or one level down (actions/download-artifact puts each artifact in
    a subdirectory named after it), sorted by name. Raises GateError when there is none."""
    from verdict_gate.core.errors import GateError

    found = sorted(d for d in [root, *root.iterdir()] if d.is_dir() and (d / "shard.json").is_file())
    if not found:
        raise GateError("input merge-shards", str(root), "holds no shard evidence (no shard.json one level down)",
                        "download the artifacts the shard jobs uploaded into it (actions/download-artifact with "
                        "`pattern: verdict-gate-shard-*` and `path:` this directory)")
    return found


def report_shard(ev: Evidence, shown: str, settings: Settings, environ: Mapping[str, str], stdout: TextIO) -> int:
    """Outputs and the job summary of one shard: no outcome (the merge job decides); 0 once its partial
    evidence is written, the void exit code when this shard found the run void."""
    from verdict_gate.core.errors import EXIT_CODES
    from verdict_gate.github import workflow as gh
    from verdict_gate.report.text import md_code, md_line

    assert ev.shard is not None
    void = ev.outcome == "void"
    gh.write_outputs(environ.get("GITHUB_OUTPUT"), {
        "outcome": "void" if void else "", "promoted": "false", "pass-count": "", "fail-count": "",
        "inconclusive-count": "", "sarif-file": "", "evidence-dir": shown, "base-revision": ev.base_revision,
    })
    label = f"shard {ev.shard['index']}/{ev.shard['count']}"
    if void:
        _emit(stdout, [gh.command("error", f"{label}: void: {ev.void_reason}", {"title": "verdict-gate void"})])
        text = f"## verdict-gate {label}: **void**\n\n{md_code(ev.void_reason)}\n"
    else:
        ran = len(ev.shard["properties"])
        text = (f"## verdict-gate {label}\n\n{ran} propert{'y' if ran == 1 else 'ies'} run on "
                f"`{ev.head_revision[:12]}`; the evidence is in `{md_line(shown)}`. The merge job decides.\n")
    gh.append_summary(environ.get("GITHUB_STEP_SUMMARY"), text)
    return EXIT_CODES["void"] if void and "void" in settings.fail_on else 0


def execute(settings: Settings, environ: Mapping[str, str], stdout: TextIO) -> int:
    """Choose the base, prepare git, run the gate and report. Raises GateError on configuration errors."""
    from verdict_gate.github import event
    from verdict_gate.github import workflow as gh

    event_name, payload = event.read_event(environ)
    choice = event.choose_base(event_name, payload, settings.base)
    if not settings.repo.is_dir():
        from verdict_gate.core.errors import GateError

        raise GateError("input working-directory", str(settings.repo), "does not exist",
                        "check out the repository first (actions/checkout with fetch-depth: 0) and point "
                        "working-directory at it")
    owner = settings.workspace.stat() if settings.workspace.is_dir() else settings.repo.stat()
    env = git_environment(settings, environ, stdout)
    out_dir, shown = evidence_location(settings, environ)
    warnings: list[str] = []
    try:
        with scoped_environ(env):
            base, why = prepare_history(settings.repo, choice, settings.fetch_history, stdout, warnings)
            print(f"verdict-gate: base {base[:12]} — {why}", file=stdout)
            pack = pack_source(settings.oracle_pack, settings.workspace) or \
                f"git:{oracle_commit(settings.repo, choice, base, settings.fetch_history, stdout)}:oracle"
            try:
                ev, files = run_gate(settings, base, pack, out_dir, stdout)
            except Exception:
                _emit(stdout, [gh.command("warning", w, {"title": "verdict-gate"}) for w in warnings])
                raise
    finally:
        if os.geteuid() == 0:  # give what the container wrote back to the workspace owner
            for path in (out_dir, settings.repo / ".git"):
                with contextlib.suppress(OSError):
                    gh.chown_tree(path, owner.st_uid, owner.st_gid)
    if ev.shard is not None:
        return report_shard(ev, shown, settings, environ, stdout)
    return report_outcome(ev, files, shown, settings, why, base, environ, stdout, warnings)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None,
         stdout: TextIO | None = None) -> int:
    """Run the action. ``argv`` must be empty (the action passes no arguments); ``environ`` is
    the runner's environment (default ``os.environ``); ``stdout`` receives the log and the
    workflow commands (default ``sys.stdout``). Returns the exit code; never raises."""
    environ = dict(os.environ if environ is None else environ)
    stdout = sys.stdout if stdout is None else stdout
    settings: Settings | None = None
    try:
        from verdict_gate.core.errors import EXIT_INTERRUPTED, EXIT_USAGE, GateError
    except Exception as exc:  # the image is broken: fail closed (2: the usage/configuration exit code)
        print(f"::error title=verdict-gate internal error::cannot import the gate: {exc!r}", file=stdout)
        return 2  # EXIT_USAGE, spelled out: the table itself could not be imported
    try:
        if argv:
            raise GateError("arguments", " ".join(argv), "are not accepted", "configure the action with inputs (with:)")
        settings = read_settings(environ)
        return execute(settings, environ, stdout)
    except GateError as exc:
        report_error(str(exc), settings, environ, stdout)
        return exc.exit_code if exc.exit_code != 0 else EXIT_USAGE
    except KeyboardInterrupt:
        report_error("interrupted: the run was cancelled before an outcome", settings, environ, stdout)
        return EXIT_INTERRUPTED
    except Exception as exc:  # fail closed: never exit 0 on an internal error
        import traceback

        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        if environ.get("VERDICT_GATE_DEBUG"):
            traceback.print_exc(file=stdout)
        report_error(f"internal error: {detail}\nthis is a bug in verdict-gate; the run is not promoted. "
                     "Set VERDICT_GATE_DEBUG=1 for the traceback.", settings, environ, stdout,
                     "verdict-gate internal error")
        return EXIT_USAGE

