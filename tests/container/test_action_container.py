"""The Docker container action end to end: the shipped Dockerfile built and run on a real Docker
engine exactly as GitHub's runner runs it (/work/shared/reference/container-action-runtime.md,
tests/container/README.md).

Run by tests/container/run.sh (``make container-test``), which provides the engine and the base
image; conftest.py keeps this module out of a plain ``pytest`` run.

Each case builds what a pull_request job gives the action: a workspace as actions/checkout leaves
it (the example repository, base on ``main``, the candidate on a branch, ``refs/pull/7/merge``
checked out, full history, the job token persisted in ``.git/config``), the runner's directories
owned by uid 1001 with the event payload and the file-command files, every ``INPUT_*`` with its
action.yml default, and runs ``docker run`` with the runner's flags, mounts and environment. It
then checks the step's exit code, its outputs in the GITHUB_OUTPUT file, the job summary, the
evidence (verdicts.json, runs.json), what changed in every mounted directory, file ownership, and
that no secret reached any output. Every check is the correct behaviour; a case reports every
problem it found at once, with the evidence.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from verdict_gate.demo import GIT_ENV, _apply, build_base, examples_dir

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
WORK = Path(os.environ.get("VG_CT_WORK") or "/tmp/verdict-gate-container")
WORK.mkdir(parents=True, exist_ok=True)
RUNNER_UID = RUNNER_GID = 1001  # the runner user on GitHub-hosted runners
PR_NUMBER = 7
REPOSITORY = "acme/orders"
SPEC = yaml.safe_load((examples_dir() / "candidates.yaml").read_text(encoding="utf-8"))
CANDIDATES = {c["name"]: c for c in SPEC["candidates"]}
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))

# Secrets of the simulated job: none may appear in any output, the summary, the log or the evidence.
TOKEN = "ghs_" + secrets.token_urlsafe(27).replace("-", "x").replace("_", "y")[:36]
RUNTIME_TOKEN = "eyJ0eXAiOiJKV1QifQ." + secrets.token_urlsafe(32)  # ACTIONS_RUNTIME_TOKEN
HOME_CANARY = "vg-home-canary-" + secrets.token_hex(16)
NETRC_CANARY = "vg-netrc-canary-" + secrets.token_hex(16)
TOKEN_HEADER = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
SECRETS = {"job token": TOKEN, "job token (basic auth)": TOKEN_HEADER, "ACTIONS_RUNTIME_TOKEN": RUNTIME_TOKEN,
           "canary in /github/home": HOME_CANARY, "canary in /github/home/.netrc": NETRC_CANARY}

# What the gate itself may write (docs: README "GitHub Action"); anything else is a finding.
GATE_OUTPUT_FILES = ("set_output_", "step_summary_")
REQUIRED_FENCES = ("network", "filesystem")  # at least these; every fence reported must hold


# --- timings and the report ----------------------------------------------------------------------

TIMINGS: list[tuple[str, float, str]] = []


def record(what: str, seconds: float, note: str = "") -> None:
    TIMINGS.append((what, seconds, note))
    lines = ["", "container-test timings:"]
    base = os.environ.get("VG_CT_BASE_SECONDS")
    if base:
        lines.append(f"  {'base image (debootstrap + docker import, or cached)':<58} {float(base):7.1f} s")
    lines += [f"  {w:<58} {s:7.1f} s{'  ' + n if n else ''}" for w, s, n in TIMINGS]
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "timings.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def progress(message: str) -> None:
    print(f"container-test: {message}", file=sys.stderr, flush=True)


# --- helpers -------------------------------------------------------------------------------------


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, **kwargs)


def git(repo: Path, *args: str, date: str = "2026-11-05T12:00:00+00:00") -> str:
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    proc = run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "gc.auto=0",
                "-C", str(repo), *args], env=env)
    assert proc.returncode == 0, f"git {' '.join(args)} in {repo} failed: {proc.stderr}"
    return proc.stdout.strip()


def docker(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    proc = run(["docker", *args], timeout=timeout)
    if check and proc.returncode != 0:
        pytest.fail(f"docker {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def pip_index() -> tuple[str, list[str]]:
    """The package index pip on this machine reaches PyPI through (PIP_INDEX_URL, else pip's
    configured index-url, else PyPI itself), and notes on what of pip's configuration cannot
    reach into a build (file:// indexes, local find-links)."""
    notes = []
    index = os.environ.get("PIP_INDEX_URL", "")
    proc = run([sys.executable, "-m", "pip", "config", "list"])
    config = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    for key, value in config.items():
        value = value.strip("'\"")
        if key.endswith(".index-url") and not index:
            index = value
        elif key.endswith((".extra-index-url", ".find-links")):
            notes.append(f"pip's {key}={value} is local to this machine and not passed to the build")
    if not index.startswith(("https://", "http://")):
        if index:
            notes.append(f"pip's index {index} is not a URL a build can reach; PyPI is used")
        index = "https://pypi.org/simple"
    return index, notes


def tree(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``root``: relative path -> (kind, mode, uid, gid, sha256 or link target)."""
    out: dict[str, tuple[Any, ...]] = {}
    if not root.exists():
        return out
    for path in sorted([root, *root.rglob("*")]):
        st = path.lstat()
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = ("link", st.st_mode & 0o7777, st.st_uid, st.st_gid, os.readlink(path))
        elif path.is_dir():
            out[rel] = ("dir", st.st_mode & 0o7777, st.st_uid, st.st_gid, None)
        else:
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
            out[rel] = ("file", st.st_mode & 0o7777, st.st_uid, st.st_gid, digest)
    return out


def collapse(paths: list[str], limit: int = 6) -> list[str]:
    """``paths`` for a message: a directory shown once with the count of the entries listed under it.
    An entry may carry a suffix after two spaces (``path  (0:0)``), kept for the directory shown."""
    items = sorted((p.split("  ", 1)[0], p[len(p.split("  ", 1)[0]):]) for p in paths)
    if len(items) <= limit:
        return [p + suffix for p, suffix in items]
    groups: list[list[Any]] = []  # [path, suffix, entries below it]
    for path, suffix in items:
        if groups and path.startswith(groups[-1][0] + "/"):
            groups[-1][2] += 1
        else:
            groups.append([path, suffix, 0])
    shown = [f"{p}{suffix}" + (f" (+{n} entries below)" if n else "") for p, suffix, n in groups]
    return shown if len(shown) <= 3 * limit else [*shown[: 3 * limit], f"… {len(shown) - 3 * limit} more"]


def changes(before: dict[str, tuple[Any, ...]], after: dict[str, tuple[Any, ...]]) -> dict[str, list[str]]:
    new = sorted(set(after) - set(before))
    gone = sorted(set(before) - set(after))
    changed = sorted(p for p in set(before) & set(after) if before[p][4] != after[p][4] or before[p][0] != after[p][0])
    return {"new": new, "removed": gone, "changed": changed}


def parse_output_file(text: str) -> tuple[dict[str, list[str]], list[str]]:
    """The GITHUB_OUTPUT file as the runner reads it (``name=value`` and ``name<<DELIM`` … ``DELIM``):
    every value of every name, in order, and the lines the runner could not read."""
    values: dict[str, list[str]] = {}
    bad: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body: list[str] = []
            while i < len(lines) and lines[i] != delim:
                body.append(lines[i])
                i += 1
            if i >= len(lines):
                bad.append(line + " (heredoc never closed)")
            i += 1
            values.setdefault(name, []).append("\n".join(body))
        elif "=" in line:
            name, value = line.split("=", 1)
            values.setdefault(name, []).append(value)
        else:
            bad.append(line)
    return values, bad


class Listener:
    """A TCP listener on the host loopback that records every connection and what it was sent."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[tuple[str, bytes]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(2)
                data = b""
                with contextlib.suppress(OSError):
                    while chunk := conn.recv(65536):
                        data += chunk
                self.received.append((f"{peer[0]}:{peer[1]}", data))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


# --- the image -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def image() -> str:
    """The action image, built from the shipped Dockerfile as the runner builds it (``docker build
    -t TAG -f Dockerfile .``, no build args), plus what this machine needs: ``--network host``
    (the engine has no bridge), ``BASE_IMAGE`` (the debootstrapped bookworm, no Docker Hub here)
    and ``PIP_INDEX_URL`` (the index pip here uses)."""
    prebuilt = os.environ.get("VG_CT_IMAGE", "")
    if prebuilt:  # an image built elsewhere (e.g. a branch's), used as it is
        docker("image", "inspect", prebuilt)
        progress(f"using the prebuilt image {prebuilt} (VG_CT_IMAGE); the Dockerfile is not built")
        return prebuilt
    base = os.environ.get("VG_CT_BASE_IMAGE", "")
    if not base:
        pytest.fail("VG_CT_BASE_IMAGE is not set: run make container-test (tests/container/run.sh)")
    index, notes = pip_index()
    for note in notes:
        progress(note)
    tag = "verdict-gate-ct/action:test"
    docker("image", "prune", "--force", "--filter", "label=verdict-gate-ct=1", check=False)
    argv = ["docker", "build", "--network", "host", "--label", "verdict-gate-ct=1",
            "--build-arg", f"BASE_IMAGE={base}", "--build-arg", f"PIP_INDEX_URL={index}",
            "-t", tag, "-f", str(ROOT / "Dockerfile"), str(ROOT)]
    if os.environ.get("VG_CT_NO_CACHE") == "1":
        argv.insert(2, "--no-cache")
    progress(f"building the action image: {' '.join(argv[1:])}")
    start = time.monotonic()
    proc = run(argv, timeout=1800, env={**os.environ, "DOCKER_BUILDKIT": os.environ.get("DOCKER_BUILDKIT", "0")})
    seconds = time.monotonic() - start
    (WORK / "build.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if proc.returncode != 0:
        pytest.fail(f"docker build failed ({proc.returncode}); the end of {WORK / 'build.log'}:\n"
                    + (proc.stdout + proc.stderr)[-4000:])
    cached = (proc.stdout + proc.stderr).count("Using cache")
    record("action image build (docker build)", seconds,
           "from scratch" if os.environ.get("VG_CT_NO_CACHE") == "1" else f"{cached} cached steps")
    size = docker("image", "inspect", "--format", "{{.Size}}", tag).stdout.strip()
    progress(f"built {tag} in {seconds:.1f} s ({int(size) / 1e6:.0f} MB)")
    return tag


@pytest.fixture(scope="session")
def container_facts(image: str) -> dict[str, Any]:
    """What the sandbox can use in the action's container on this engine (container_facts.py), run
    as the action runs (root, default seccomp profile and capabilities, --network none) but with
    --entrypoint: printed once and put at the top of the report."""
    proc = docker("run", "--rm", "--network", "none", "-v", f"{HERE / 'container_facts.py'}:/facts.py:ro",
                  "--entrypoint", "/opt/verdict-gate/bin/python", image, "-I", "/facts.py", check=False)
    try:
        facts: dict[str, Any] = json.loads(proc.stdout)
    except ValueError:
        facts = {"error": (proc.stdout + proc.stderr)[-500:]}
    engine = docker("version", "--format", "{{.Server.Version}}", check=False).stdout.strip()
    facts = {"engine": engine, **facts}
    text = "=== inside the action's container on this engine: " + json.dumps(facts) + "\n"
    with (WORK / "report.txt").open("a", encoding="utf-8") as fh:
        fh.write(text + "\n")
    print(text)
    return facts


@pytest.fixture(scope="session")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example order service with its replayed freeze committed on ``main``, as `verdict-gate
    demo` builds it (the ledger comes from a real base replay, on this host)."""
    start = time.monotonic()
    repo, _ledger = build_base(tmp_path_factory.mktemp("example"), SPEC)
    record("example base repository (host replay)", time.monotonic() - start)
    return repo


# --- one step of a job ---------------------------------------------------------------------------


def hostile_edits(nonce: str, port: int) -> list[dict[str, Any]]:
    """The broken patch of candidate new-failure, plus telemetry that tries every forbidden act."""
    source = (HERE / "hostile_telemetry.py").read_text(encoding="utf-8")
    source = source.replace("__NONCE__", nonce).replace("__PORT__", str(port))
    return [
        *CANDIDATES["new-failure"]["edits"],
        {"path": "src/orders/_telemetry.py", "write": source},
        {"path": "src/orders/__init__.py",
         "replace": ['"""A small order service: line totals and tax in integer cents."""',
                     '"""A small order service: line totals and tax in integer cents."""\n\n'
                     "from orders import _telemetry  # noqa: F401  (usage telemetry)"]},
        {"path": "src/orders/total.py",
         "replace": ["    subtotal = subtotal_cents(lines)",
                     "    from orders import _telemetry\n\n    _telemetry.report(\"order_total_cents\")\n"
                     "    subtotal = subtotal_cents(lines)"]},
    ]


@dataclass
class Result:
    code: int
    log: str
    seconds: float
    outputs: dict[str, list[str]]
    output_garbage: list[str]
    summary: str
    evidence: dict[str, Any]
    evidence_files: dict[str, str]
    changes: dict[str, dict[str, list[str]]]
    ownership: dict[str, list[str]]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Step:
    """The host side of one `uses: verdict-gate/verdict-gate@…` step of a pull_request job."""

    root: Path
    name: str
    edits: list[dict[str, Any]]
    description: str

    def __post_init__(self) -> None:
        self.work = self.root / "work"  # /home/runner/work
        self.temp = self.work / "_temp"  # runner.temp
        self.home = self.temp / "_github_home"
        self.workflow = self.temp / "_github_workflow"
        self.file_commands = self.temp / "_runner_file_commands"
        self.workspace = self.work / "orders" / "orders"
        self.origin = self.root / "origin"
        self.guid = str(uuid.uuid4())
        self.files = {prefix: self.file_commands / f"{prefix}{self.guid}"
                      for prefix in ("add_path_", "set_env_", "set_output_", "save_state_", "step_summary_")}

    # -- what exists before the step --

    def prepare(self, base_repo: Path) -> None:
        old = os.umask(0o022)
        try:
            self._origin(base_repo)
            self._checkout()
            for d in (self.home, self.workflow, self.file_commands):
                d.mkdir(parents=True, exist_ok=True)
            for path in self.files.values():
                path.write_text("", encoding="utf-8")
            (self.home / ".canary-secret").write_text(f"{HOME_CANARY}\n", encoding="utf-8")
            netrc = self.home / ".netrc"
            netrc.write_text(f"machine github.com login x-access-token password {NETRC_CANARY}\n", encoding="utf-8")
            netrc.chmod(0o600)
            (self.workflow / "event.json").write_text(json.dumps(self.event(), indent=2), encoding="utf-8")
        finally:
            os.umask(old)
        for path in [self.work, *self.work.rglob("*")]:
            os.lchown(path, RUNNER_UID, RUNNER_GID)

    def _origin(self, base_repo: Path) -> None:
        """The repository on GitHub: main, the candidate branch, and refs/pull/N/{head,merge}."""
        shutil.copytree(base_repo, self.origin)
        git(self.origin, "checkout", "--quiet", "-b", "candidate")
        _apply(self.origin, self.edits)
        git(self.origin, "add", "--all")
        git(self.origin, "commit", "--quiet", "-m", self.description, date="2026-11-20T10:00:00+00:00")
        self.base_sha = git(self.origin, "rev-parse", "main")
        self.head_sha = git(self.origin, "rev-parse", "candidate")
        git(self.origin, "checkout", "--quiet", "--detach", "main")
        git(self.origin, "merge", "--quiet", "--no-ff", "-m", f"Merge {self.head_sha} into {self.base_sha}",
            self.head_sha, date="2026-11-20T10:05:00+00:00")
        self.merge_sha = git(self.origin, "rev-parse", "HEAD")
        git(self.origin, "update-ref", f"refs/pull/{PR_NUMBER}/head", self.head_sha)
        git(self.origin, "update-ref", f"refs/pull/{PR_NUMBER}/merge", self.merge_sha)
        git(self.origin, "checkout", "--quiet", "main")

    def _checkout(self) -> None:
        """What actions/checkout (v4, fetch-depth: 0, persist-credentials: true) leaves: a fresh
        repository with origin on github.com, the job token as an extraheader in .git/config,
        every branch fetched with history, refs/remotes/pull/N/merge checked out (detached)."""
        ws = self.workspace
        ws.mkdir(parents=True)
        git(ws, "init", "--quiet")
        git(ws, "remote", "add", "origin", f"https://github.com/{REPOSITORY}")
        git(ws, "config", "--local", "gc.auto", "0")
        git(ws, "config", "--local", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN_HEADER}")
        # (fetched from the local origin: the URL above is the one the runner would use)
        git(ws, "-c", "protocol.version=2", "fetch", "--quiet", "--prune", "--no-recurse-submodules", str(self.origin),
            "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")
        git(ws, "fetch", "--quiet", str(self.origin), f"+{self.merge_sha}:refs/remotes/pull/{PR_NUMBER}/merge")
        git(ws, "checkout", "--quiet", "--force", f"refs/remotes/pull/{PR_NUMBER}/merge")

    def event(self) -> dict[str, Any]:
        repo = {"full_name": REPOSITORY, "name": "orders", "owner": {"login": "acme"}, "default_branch": "main",
                "clone_url": f"https://github.com/{REPOSITORY}.git"}
        return {
            "action": "synchronize", "number": PR_NUMBER,
            "pull_request": {
                "number": PR_NUMBER, "state": "open", "title": self.description,
                "base": {"ref": "main", "sha": self.base_sha, "repo": repo},
                "head": {"ref": "candidate", "sha": self.head_sha, "repo": repo},
                "merge_commit_sha": self.merge_sha, "user": {"login": "coding-agent[bot]"},
            },
            "repository": repo, "sender": {"login": "coding-agent[bot]"},
        }

    # -- the step --

    def environment(self) -> dict[str, str]:
        """The container's variables as the runner passes them (host paths under a mount
        rewritten to the container's), with every input at its action.yml default."""
        env = {
            "HOME": "/github/home",
            "GITHUB_JOB": "gate", "GITHUB_REF": f"refs/pull/{PR_NUMBER}/merge", "GITHUB_SHA": self.merge_sha,
            "GITHUB_REPOSITORY": REPOSITORY, "GITHUB_REPOSITORY_OWNER": "acme", "GITHUB_REPOSITORY_OWNER_ID": "4242",
            "GITHUB_REPOSITORY_ID": "424242", "GITHUB_RUN_ID": "1234567890", "GITHUB_RUN_NUMBER": "17",
            "GITHUB_RETENTION_DAYS": "90", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_ACTOR": "coding-agent[bot]",
            "GITHUB_ACTOR_ID": "31337", "GITHUB_TRIGGERING_ACTOR": "coding-agent[bot]",
            "GITHUB_WORKFLOW": "verdict-gate",
            "GITHUB_WORKFLOW_REF": f"{REPOSITORY}/.github/workflows/verdict-gate.yml@refs/pull/{PR_NUMBER}/merge",
            "GITHUB_WORKFLOW_SHA": self.merge_sha, "GITHUB_HEAD_REF": "candidate", "GITHUB_BASE_REF": "main",
            "GITHUB_EVENT_NAME": "pull_request", "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_API_URL": "https://api.github.com", "GITHUB_GRAPHQL_URL": "https://api.github.com/graphql",
            "GITHUB_REF_NAME": f"{PR_NUMBER}/merge", "GITHUB_REF_PROTECTED": "false", "GITHUB_REF_TYPE": "branch",
            "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_ACTION": "gate",
            "GITHUB_ACTION_REPOSITORY": "verdict-gate/verdict-gate", "GITHUB_ACTION_REF": "0" * 40,
            "GITHUB_EVENT_PATH": "/github/workflow/event.json",
            "GITHUB_PATH": f"/github/file_commands/add_path_{self.guid}",
            "GITHUB_ENV": f"/github/file_commands/set_env_{self.guid}",
            "GITHUB_STEP_SUMMARY": f"/github/file_commands/step_summary_{self.guid}",
            "GITHUB_STATE": f"/github/file_commands/save_state_{self.guid}",
            "GITHUB_OUTPUT": f"/github/file_commands/set_output_{self.guid}",
            "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "RUNNER_NAME": "GitHub Actions 1000000001",
            "RUNNER_ENVIRONMENT": "github-hosted", "RUNNER_TOOL_CACHE": "/opt/hostedtoolcache",
            "RUNNER_TEMP": "/github/runner_temp", "RUNNER_WORKSPACE": "/home/runner/work/orders",
            "ACTIONS_RUNTIME_URL": "https://pipelines.actions.githubusercontent.com/vgct/",
            "ACTIONS_RUNTIME_TOKEN": RUNTIME_TOKEN,
            "ACTIONS_RESULTS_URL": "https://results-receiver.actions.githubusercontent.com/",
        }
        for name, spec in ACTION["inputs"].items():
            value = str(spec.get("default", ""))
            value = value.replace("${{ github.token }}", TOKEN).replace("${{ runner.temp }}", str(self.temp))
            assert "${{" not in value, f"action.yml input {name}: default {value!r} needs an expression the test lacks"
            env["INPUT_" + name.replace(" ", "_").upper()] = value
        return env

    def docker_run(self, image: str, network: str) -> tuple[int, str, float]:
        env = self.environment()
        name = f"verdict-gate-ct_{secrets.token_hex(3)}"
        argv = ["docker", "run", "--name", name, "--label", "verdict-gate-ct", "--workdir", "/github/workspace",
                "--rm"]
        for key in env:
            argv += ["-e", key]  # the value travels in the docker CLI's own environment, as the runner does
        argv += ["-e", "GITHUB_ACTIONS=true", "-e", "CI=true"]
        argv += ["--network", network]  # the one flag the runner would not pass (it uses the default bridge)
        for host, container in ((Path("/var/run/docker.sock"), "/var/run/docker.sock"),
                                (self.home, "/github/home"), (self.workflow, "/github/workflow"),
                                (self.file_commands, "/github/file_commands"), (self.temp, "/github/runner_temp"),
                                (self.workspace, "/github/workspace")):
            argv += ["-v", f"{host}:{container}"]
        argv.append(image)
        (self.root / "docker-run.txt").write_text(" ".join(argv) + "\n", encoding="utf-8")
        cli_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DOCKER_CONFIG": str(self.root / "docker-cli"),
                   **env}
        start = time.monotonic()
        try:
            proc = run(argv, env=cli_env, timeout=900)
        except subprocess.TimeoutExpired as exc:
            docker("kill", name, check=False)
            out = exc.stdout or ""
            return 124, (out.decode(errors="replace") if isinstance(out, bytes) else out) + "\n(timed out)", \
                time.monotonic() - start
        seconds = time.monotonic() - start
        log = proc.stdout + proc.stderr
        (self.root / "step.log").write_text(log, encoding="utf-8")
        return proc.returncode, log, seconds

    def execute(self, image: str, network: str = "none") -> Result:
        dirs = {"workspace": self.workspace, "runner_temp": self.temp, "home": self.home,
                "workflow": self.workflow, "file_commands": self.file_commands}
        before = {k: tree(v) for k, v in dirs.items()}
        code, log, seconds = self.docker_run(image, network)
        after = {k: tree(v) for k, v in dirs.items()}
        # runner_temp holds the other directories: each is compared on its own
        nested = ("_github_home", "_github_workflow", "_runner_file_commands")
        diff = {}
        for key in dirs:
            b, a = before[key], after[key]
            if key == "runner_temp":
                b = {p: v for p, v in b.items() if not p.startswith(nested)}
                a = {p: v for p, v in a.items() if not p.startswith(nested)}
            diff[key] = changes(b, a)
        ownership = {key: collapse([f"{p}  ({v[2]}:{v[3]})" for p, v in after[key].items()
                                    if (v[2], v[3]) != (RUNNER_UID, RUNNER_GID)
                                    and not (key == "runner_temp" and p.startswith(nested))]) for key in dirs}
        outputs, garbage = parse_output_file(self.files["set_output_"].read_text(encoding="utf-8"))
        evidence_dir = self.temp / "verdict-gate"
        evidence: dict[str, Any] = {}
        texts: dict[str, str] = {}
        if evidence_dir.is_dir():
            for path in sorted(evidence_dir.rglob("*")):
                if path.is_file():
                    text = path.read_text(encoding="utf-8", errors="replace")
                    texts[path.relative_to(evidence_dir).as_posix()] = text
                    if path.suffix in (".json", ".sarif", ".digest"):
                        with contextlib.suppress(ValueError):
                            evidence[path.name] = json.loads(text)
        return Result(code, log, seconds, outputs, garbage,
                      self.files["step_summary_"].read_text(encoding="utf-8"), evidence, texts, diff, ownership)


@pytest.fixture
def make_step(tmp_path: Path, base_repo: Path) -> Iterator[Any]:
    steps: list[Step] = []

    def make(name: str, edits: list[dict[str, Any]], description: str) -> Step:
        root = WORK / name if os.environ.get("VG_CT_KEEP") == "1" else tmp_path / name
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        step = Step(root, name, edits, description)
        step.prepare(base_repo)
        steps.append(step)
        return step

    yield make


# --- the checks ----------------------------------------------------------------------------------


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "(empty)"


def error_annotations(log: str) -> list[str]:
    return [line for line in log.splitlines() if line.startswith("::error")]


def describe(case: str, res: Result, step: Step) -> str:
    """A readable account of what the step did, for the report and every failure message."""
    lines = [f"=== {case}: exit {res.code} in {res.seconds:.1f} s"]
    shown = {k: (v[0] if len(v) == 1 else v) for k, v in res.outputs.items()}
    lines.append(f"outputs: {json.dumps(shown)}")
    if res.output_garbage:
        lines.append(f"GITHUB_OUTPUT lines the runner cannot read: {res.output_garbage}")
    lines.append(f"summary: {first_line(res.summary)}")
    for err in error_annotations(res.log)[:3]:
        lines.append(f"annotation: {err[:600]}")
    verdicts = res.evidence.get("verdicts.json")
    if verdicts:
        lines.append(f"verdicts.json: outcome {verdicts.get('outcome')}; " + "; ".join(
            f"{pid} {v.get('verdict')}/{v.get('reason')}" for pid, v in sorted(verdicts.get("verdicts", {}).items())))
    else:
        lines.append("verdicts.json: missing")
    runs = res.evidence.get("runs.json")
    if runs:
        for pid, r in sorted(runs.get("runs", {}).items()):
            iso = r.get("isolation", {})
            held = [f for f, ok in iso.get("fences", {}).items() if ok]
            open_ = [f for f, ok in iso.get("fences", {}).items() if not ok]
            lines.append(f"runs.json {pid}: status {r.get('status')}; "
                         f"isolation {iso.get('level')}/{iso.get('method')}; held {held or 'none'}; "
                         f"not held {open_ or 'none'}"
                         + (f"; why {iso['why']!r}" if iso.get("why") else ""))
            if r.get("status") in ("crash", "timeout") or r.get("exc_type"):
                lines.append(f"  {r.get('exc_type')}: {str(r.get('message'))[:700]}")
            if r.get("output_tail"):
                lines.append("  output_tail: " + " | ".join(str(r["output_tail"]).strip().splitlines()[-8:])[:1500])
    else:
        lines.append("runs.json: missing")
    for key, diff in res.changes.items():
        if any(diff.values()):
            lines.append(f"{key}: " + "; ".join(f"{k} {collapse(v)}" for k, v in diff.items() if v))
    for key, owned in res.ownership.items():
        if owned:
            lines.append(f"{key} not owned by {RUNNER_UID}: {owned}")
    for key, value in res.extra.items():
        lines.append(f"{key}: {value}")
    lines.append(f"(log: {step.root / 'step.log'}; docker run: {step.root / 'docker-run.txt'})")
    return "\n".join(lines)


def common_problems(res: Result, step: Step, expect_outcome: str, expect_code: int,
                    expect_verdicts: dict[str, Any]) -> list[str]:
    """Everything every case must satisfy; returns the problems (empty when all hold)."""
    problems: list[str] = []
    declared = set(ACTION["outputs"])
    if set(res.outputs) != declared:
        problems.append(f"GITHUB_OUTPUT names {sorted(res.outputs)}, action.yml declares {sorted(declared)}")
    repeated = {k: v for k, v in res.outputs.items() if len(v) != 1}
    if repeated:
        problems.append(f"GITHUB_OUTPUT sets these outputs more than once (something else wrote the file): {repeated}")
    if res.output_garbage:
        problems.append(f"GITHUB_OUTPUT holds lines the gate did not write: {res.output_garbage}")
    out = {k: v[-1] for k, v in res.outputs.items()}
    if res.code != expect_code:
        problems.append(f"exit code {res.code}, expected {expect_code}")
    if out.get("outcome") != expect_outcome:
        problems.append(f"output outcome {out.get('outcome')!r}, expected {expect_outcome!r}")
    if out.get("promoted") != ("true" if expect_outcome == "promoted" else "false"):
        problems.append(f"output promoted {out.get('promoted')!r}")
    shown = f"{step.temp}/verdict-gate"
    if out.get("evidence-dir") != shown:
        problems.append(f"output evidence-dir {out.get('evidence-dir')!r}, expected {shown!r} "
                        "(runner.temp on the host)")
    if out.get("sarif-file") != f"{shown}/results.sarif":
        problems.append(f"output sarif-file {out.get('sarif-file')!r}")
    if out.get("base-revision") != step.base_sha:
        problems.append(f"output base-revision {out.get('base-revision')!r}, expected main {step.base_sha}")
    if not res.summary.startswith(f"## verdict-gate: **{expect_outcome}**"):
        problems.append(f"job summary starts {first_line(res.summary)!r}, "
                        f"expected '## verdict-gate: **{expect_outcome}**'")
    verdicts = res.evidence.get("verdicts.json")
    if not verdicts:
        problems.append("evidence: verdicts.json is missing")
    else:
        if verdicts.get("outcome") != expect_outcome:
            problems.append(f"verdicts.json outcome {verdicts.get('outcome')!r}, expected {expect_outcome!r}")
        for pid, (verdict, reasons) in expect_verdicts.items():
            got = verdicts.get("verdicts", {}).get(pid, {})
            allowed = reasons if isinstance(reasons, list) else [reasons]
            if got.get("verdict") != verdict or (allowed != ["*"] and got.get("reason") not in allowed):
                problems.append(f"verdicts.json {pid}: {got.get('verdict')}/{got.get('reason')}, "
                                f"expected {verdict}/{'|'.join(allowed)}")
    runs = res.evidence.get("runs.json")
    if not runs:
        problems.append("evidence: runs.json is missing")
    else:
        for pid in sorted(set(expect_verdicts) | set(runs.get("runs", {}))):
            r = runs.get("runs", {}).get(pid)
            if r is None:
                problems.append(f"runs.json has no run of {pid}")
                continue
            iso = r.get("isolation", {})
            fences = iso.get("fences", {})
            if r.get("status") in ("crash", "timeout"):
                problems.append(f"runs.json {pid}: status {r.get('status')}: {r.get('exc_type')}: "
                                f"{str(r.get('message'))[:400]}")
            if iso.get("level") != "sandbox" or iso.get("method") in (None, "", "unknown", "process", "in-process",
                                                                     "unavailable"):
                why = f" (why: {iso['why']})" if iso.get("why") else ""
                problems.append(f"runs.json {pid}: isolation {iso.get('level')}/{iso.get('method')}, expected level "
                                f"sandbox with a sandboxing method{why}")
            missing = [f for f in REQUIRED_FENCES if f not in fences]
            open_ = sorted(f for f, ok in fences.items() if not ok)
            if missing or open_ or not fences:
                problems.append(f"runs.json {pid}: fences not held: {open_ or 'none'}; "
                                f"not reported: {missing or 'none'} (method {iso.get('method')})")
    # what the gate may write: its evidence, its two runner files; nothing else anywhere
    for key, diff in res.changes.items():
        allowed: set[str] = set()
        if key == "runner_temp":
            allowed = {p for p in diff["new"] + diff["changed"] if p == "verdict-gate" or p.startswith("verdict-gate/")}
        if key == "file_commands":
            allowed = {p for p in diff["changed"] if p.startswith(GATE_OUTPUT_FILES)}
        if key == "workspace":  # git's own refresh of the index is not a write of content
            allowed = {p for p in diff["changed"] if p == ".git/index"}
        foreign = {k: collapse([p for p in v if p not in allowed]) for k, v in diff.items()}
        foreign = {k: v for k, v in foreign.items() if v}
        if foreign:
            problems.append(f"{key} (mounted at /github/{key}): entries the gate does not write: {foreign}")
    for key, owned in res.ownership.items():
        if owned:
            problems.append(f"{key}: entries not owned by the runner user {RUNNER_UID} after the step (later steps "
                            f"and actions/checkout's cleanup cannot remove them): {owned}")
    everything = {"the step's log": res.log, "GITHUB_OUTPUT": step.files["set_output_"].read_text(encoding="utf-8"),
                  "the job summary": res.summary,
                  **{f"evidence {name}": text for name, text in res.evidence_files.items()}}
    for what, secret in SECRETS.items():
        leaked = [where for where, text in everything.items() if secret in text]
        if leaked:
            problems.append(f"the {what} appears in: {', '.join(leaked)}")
    return problems


def check(case: str, res: Result, step: Step, problems: list[str]) -> None:
    account = describe(case, res, step)
    report = account + ("\nPROBLEMS:\n- " + "\n- ".join(problems) if problems else "\nall checks hold") + "\n"
    with (WORK / "report.txt").open("a", encoding="utf-8") as fh:
        fh.write(report + "\n")
    print(report)
    record(f"case {case} (docker run)", res.seconds, f"exit {res.code}")
    assert not problems, f"{case}: {len(problems)} problem(s) (the full report is above):\n- " + "\n- ".join(problems)


# --- the cases -----------------------------------------------------------------------------------


def test_honest_patch_is_promoted(image: str, container_facts: dict[str, Any], make_step: Any) -> None:
    cand = CANDIDATES["good-refactor"]
    step = make_step("honest", cand["edits"], cand["description"])
    progress(f"case honest: {cand['description']}")
    res = step.execute(image)
    check("honest (good-refactor)", res, step, common_problems(res, step, "promoted", 0, cand["expect"]["verdicts"]))


def test_broken_patch_is_blocked(image: str, container_facts: dict[str, Any], make_step: Any) -> None:
    cand = CANDIDATES["new-failure"]
    step = make_step("broken", cand["edits"], cand["description"])
    progress(f"case broken: {cand['description']}")
    res = step.execute(image)
    check("broken (new-failure)", res, step, common_problems(res, step, "blocked", 1, cand["expect"]["verdicts"]))


def test_hostile_patch_is_fenced_and_not_promoted(image: str, container_facts: dict[str, Any], make_step: Any) -> None:
    nonce = secrets.token_hex(8)
    tag = f"HOSTILE-{nonce}"
    listener = Listener()
    dockerd_log = Path(os.environ.get("VG_CT_DOCKERD_LOG") or "/nonexistent")
    log_start = dockerd_log.stat().st_size if dockerd_log.is_file() else 0
    try:
        step = make_step("hostile", hostile_edits(nonce, listener.port),
                         "drop the quantity from the subtotal, and add usage telemetry")
        progress(f"case hostile: a broken patch whose code tries every forbidden act (listener on "
                 f"127.0.0.1:{listener.port}, --network host)")
        res = step.execute(image, network="host")
        time.sleep(1)  # a last connection in flight
    finally:
        listener.close()
    # no_freeze, not crashed: order_total_cents ran (its broken total failed the property), so the
    # telemetry it calls first ran too and every act it tried was refused (it raises when one works)
    problems = common_problems(res, step, "blocked", 1, {"prop.order_total": ["fail", ["no_freeze"]]})

    # the host side of every channel the hostile code tried
    if listener.received:
        phases: dict[str, int] = {}
        for _peer, data in listener.received:
            words = data.split(b" ", 2)
            phase = words[1].decode(errors="replace") if len(words) > 1 and words[0] == tag.encode() else "?"
            phases[phase] = phases.get(phase, 0) + 1
        problems.append(f"the host loopback listener got {len(listener.received)} connection(s) from the container "
                        f"(by moment: {phases}; 'late' ones come from a process that outlived the worker); the "
                        f"first sent: {listener.received[0][1][:400]!r}")
    if dockerd_log.is_file():
        with dockerd_log.open("rb") as fh:
            fh.seek(log_start)
            seen = [line.decode(errors="replace").strip() for line in fh if tag.encode() in line]
        if seen:
            problems.append(f"the Docker daemon served requests from the container: {seen[:4]}")
        res.extra["docker daemon log"] = f"{len(seen)} request(s) with the hostile tag"
    else:
        res.extra["docker daemon log"] = "not available (the engine was not started by run.sh); volumes checked only"
    volume = f"vg-hostile-{nonce}"
    if docker("volume", "ls", "--quiet", "--filter", f"name={volume}").stdout.strip():
        problems.append(f"the container created Docker volume {volume} through /var/run/docker.sock")
        docker("volume", "rm", "--force", volume, check=False)
    # what the hostile code itself reports having done, wherever it got the report out
    reports: dict[str, list[str]] = {}
    texts = {"the step's log": res.log, "the job summary": res.summary,
             **{f"evidence {n}": t for n, t in res.evidence_files.items()}}
    for where, text in texts.items():
        for m in re.finditer(rf"{tag} succeeded: (\[[^\]]*\])", text):
            reports.setdefault(where, []).append(m.group(1))
    for path in [*step.work.rglob(f"{tag}*")]:
        reports.setdefault("files", []).append(str(path.relative_to(step.work)))
    if reports:
        res.extra["what the hostile code got out"] = json.dumps(reports)[:3000]
        problems.append(f"the hostile code reports acts that succeeded: {json.dumps(reports)[:2000]}")
    check("hostile (new-failure + telemetry, --network host)", res, step, problems)
