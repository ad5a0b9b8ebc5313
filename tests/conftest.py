"""Shared test helpers: real git repositories in temp dirs and the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from verdict_gate.demo import GIT_ENV, build_base, examples_dir
from verdict_gate.host import schemas
from verdict_gate.report.verdicts import SCHEMA_OF

ROOT = Path(__file__).resolve().parent.parent

# No test may depend on the machine's speed or load (tests/README.md, "Timing"). Hypothesis's own clock is
# the one left: its default deadline (200 ms an example) and its too_slow health check fail a property
# of this suite when the machine is busy, and nothing the tests check is a duration.
settings.register_profile("verdict-gate-tests", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("verdict-gate-tests")


SHARED_SARIF = ROOT.parent / "shared" / "reference" / "sarif-schema-2.1.0.json"


def git(repo: Path, *args: str, date: str = "2026-11-05T12:00:00+00:00") -> str:
    """Run git in ``repo`` with a fixed identity and date; return stdout."""
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    # gc.auto=0: no `git gc` left running in the background after a commit of many files.
    cmd = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "gc.auto=0",
           "-C", str(repo), *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr}"
    return proc.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
        python: str | None = None) -> subprocess.CompletedProcess[str]:
    """``verdict-gate ARGS`` as a subprocess (``python -m verdict_gate``; ``python``: another interpreter
    with this checkout installed, e.g. :func:`shared_python`)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([python or sys.executable, "-m", "verdict_gate", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=600)


NO_BWRAP = {"VERDICT_GATE_BWRAP": "/nonexistent/bwrap"}  # the gate then fences workers by Landlock and seccomp


def others_can_run(python: str) -> bool:
    """Whether a process of another uid can execute ``python`` (every directory on its real path is
    searchable by others, and the file is executable by them)."""
    real = Path(os.path.realpath(python))
    return all(os.stat(d).st_mode & 0o001 for d in real.parents) and bool(os.stat(real).st_mode & 0o001)


def shared_python() -> str | None:
    """An interpreter with this checkout installed that a worker of its own uid can run (the ``landlock``
    method as root): ``sys.executable`` when others can run it; else, as root, a virtualenv of Debian's
    ``/usr/bin/python3`` with the hashed runtime lock and this checkout (editable), made once under
    ``/var/tmp`` and kept by the lock's hash; ``None`` where none can be made (no /usr/bin/python3)."""
    if others_can_run(sys.executable):
        return sys.executable
    system = "/usr/bin/python3"
    if os.geteuid() != 0 or not os.path.exists(system) or not others_can_run(system) or \
            not all(os.stat(d).st_mode & 0o001 for d in [ROOT, *ROOT.parents]):
        return None
    import hashlib

    lock = (ROOT / "requirements" / "runtime.txt").read_bytes() + (ROOT / "requirements" / "dev.txt").read_bytes()
    key = hashlib.sha256(lock + str(ROOT).encode()).hexdigest()[:12]
    venv = Path("/var/tmp") / f"verdict-gate-test-venv-{key}"
    python = venv / "bin" / "python"
    stamp = venv / ".ready"
    if stamp.exists():
        return str(python)
    import fcntl

    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{venv}.lock", "w") as held:  # xdist workers build it once
        fcntl.flock(held, fcntl.LOCK_EX)
        if not stamp.exists():
            build = [(system, "-m", "venv", "--clear", str(venv)),
                     (str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--require-hashes",
                      "-r", str(ROOT / "requirements" / "dev.txt")),
                     (str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                      "--no-build-isolation", "-e", str(ROOT))]
            for cmd in build:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
                if proc.returncode != 0:
                    return None
            stamp.touch()
    return str(python)


def validate_evidence(out: Path) -> dict[str, object]:
    """Validate every evidence file in ``out`` against ``schemas/`` (SARIF also against the
    shared OASIS copy when present); return the parsed documents by name."""
    docs: dict[str, object] = {}
    for name, schema in SCHEMA_OF.items():
        path = out / name
        if not path.exists():
            continue
        doc = json.loads(path.read_text())
        schemas.check(schema, doc, str(path))
        docs[name] = doc
    if "results.sarif" in docs and SHARED_SARIF.exists():
        import jsonschema

        jsonschema.validate(docs["results.sarif"], json.loads(SHARED_SARIF.read_text()))
    return docs


def without_timings(doc: object) -> object:
    """An evidence document minus what differs between two runs of the same inputs: timings
    (``duration_s``), the sha256 digests of the files that hold them (``evidence``), and what names
    one oracle process (the worker's ``uid``, the fence probes' details: its pid and temp paths)."""
    if isinstance(doc, dict):
        return {k: ({label: {"held": p.get("held")} for label, p in v.items()} if k == "probes" else without_timings(v))
                for k, v in doc.items() if k not in ("duration_s", "evidence", "uid")}
    if isinstance(doc, list):
        return [without_timings(v) for v in doc]
    return doc


@pytest.fixture(scope="session")
def example_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example order service with its replayed freeze committed on ``main`` (built once)."""
    import yaml

    work = tmp_path_factory.mktemp("example")
    spec = yaml.safe_load((examples_dir() / "candidates.yaml").read_text())
    repo, _ = build_base(work, spec)
    return repo


@pytest.fixture
def example_repo(example_base: Path, tmp_path: Path) -> Path:
    """A private copy of the example repository, on a fresh branch ``candidate``."""
    repo = tmp_path / "orders"
    shutil.copytree(example_base, repo)
    git(repo, "checkout", "--quiet", "-b", "candidate")
    return repo


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """tests/test_fidelity.py's per-project table at the end of the run (rows travel from xdist workers as
    ``user_properties``)."""
    rows = sorted({value for reports in terminalreporter.stats.values() for r in reports
                   for name, value in getattr(r, "user_properties", ()) if name == "fidelity"})
    if rows:
        terminalreporter.section("fidelity: plain pytest's nodes with the same outcome under the gate")
        terminalreporter.write_line(f"{'project':<12} {'nodes':>6} {'agree':>6} {'%':>6}  disagreements by cause")
        for row in rows:
            terminalreporter.write_line(str(row))


@pytest.fixture(scope="session")
def worker_bytecode(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A bytecode cache as an oracle process leaves it (``sys.pycache_prefix``): the worker's modules and the
    standard library they import, compiled once per session. A test's own fenced worker reads it, as the
    gate's workers read the shared cache, instead of compiling them at every start (220 ms against 55 ms,
    ``fence.paths.bytecode_dirs``)."""
    cache = tmp_path_factory.mktemp("worker-bytecode")
    code = ("import sys\nfrom verdict_gate.boundary import codec, sources\n"
            "from verdict_gate.boundary.worker import main\n"
            "from verdict_gate.boundary.fence import apply, launch, probe\n"
            "launch.warm_bytecode(sys.pycache_prefix)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, env={**env, "PYTHONPYCACHEPREFIX": str(cache)},
                   timeout=120)
    return str(cache)
