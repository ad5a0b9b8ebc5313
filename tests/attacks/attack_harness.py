"""The attack corpus's harness: one base project, a private copy per case, the gate as a subprocess.

(A module of its own, not conftest.py: tests/conftest.py is imported as ``conftest`` too.)

Nothing here imports the gate: it is run as ``<python> -m <module>`` (see :func:`gate_argv`), the
one place that knows its name. Every hostile patch runs inside temp dirs; the few files a case
may create outside them carry the case's unique token and are removed by the ``arena`` fixture's
teardown (and swept again at the end of the session), as are processes the gate run left behind.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import py_compile
import re
import shutil
import signal
import site
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import NO_BWRAP

HERE = Path(__file__).resolve().parent
BASE = HERE / "base"  # the base project: src/calc and the oracle pack
BROKEN = HERE / "broken"  # the standard bugs (tax truncates, format drops a zero), no trick
BROKEN_PROP = HERE / "broken_prop"  # the same bugs for large amounts only: only the properties find them
OVERLAYS = {"broken": BROKEN, "broken_prop": BROKEN_PROP, "none": None}
KIT = HERE / "kit"  # helpers a case can include (kit: true): finding and forging the results stream
CASES_DIR = HERE / "cases"
CONTROLS_DIR = HERE / "controls"
GATE_TIMEOUT_S = 150
EXIT = {"promoted": 0, "blocked": 1, "void": 3, "incomplete": 4}

def gate_module() -> str:
    """The gate's module for ``python -m``: ``verdict_gate`` once the package is renamed, else ``gate.cli``
    (``$VG_ATTACKS_GATE_MODULE`` overrides, e.g. to gate with another checkout on PYTHONPATH)."""
    if os.environ.get("VG_ATTACKS_GATE_MODULE"):
        return os.environ["VG_ATTACKS_GATE_MODULE"]
    if importlib.util.find_spec("verdict_gate") is not None:
        return "verdict_gate" if importlib.util.find_spec("verdict_gate.__main__") is not None else "verdict_gate.cli"
    return "gate.cli"


def gate_argv(*args: str) -> list[str]:
    return [gate_python(), "-m", gate_module(), *args]


GIT_ENV = {"GIT_AUTHOR_NAME": "attack", "GIT_AUTHOR_EMAIL": "attack@example.invalid",
           "GIT_COMMITTER_NAME": "attack", "GIT_COMMITTER_EMAIL": "attack@example.invalid",
           "GIT_AUTHOR_DATE": "2026-11-05T12:00:00+00:00", "GIT_COMMITTER_DATE": "2026-11-05T12:00:00+00:00",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-C", str(repo),
                           *args], env={**os.environ, **GIT_ENV}, capture_output=True, text=True)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout.strip()


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", message)


EDIT_SUFFIX = ".edit.yaml"
META_FILES = ("attack.yaml", "expect.yaml", "control.yaml")  # what a case or control says of itself: never written


def edit_file(target: Path, edits: list[dict[str, str]], where: str) -> None:
    """Apply ``edits`` (``old`` → ``new``, each ``old`` exactly once in the file) to ``target`` in place."""
    text = target.read_text()
    for edit in edits:
        count = text.count(edit["old"])
        assert count == 1, f"{where}: {edit['old'][:60]!r} occurs {count} times in {target.name}, not once"
        text = text.replace(edit["old"], edit["new"])
    target.write_text(text)


def method() -> str:
    """The sandbox method the corpus runs at: ``$VG_ATTACKS_METHOD`` (``landlock``: bubblewrap hidden, the
    worker fenced by Landlock, seccomp and, as root, a uid of its own; ``make attacks-landlock``), else the
    host's default (bubblewrap where it runs)."""
    return os.environ.get("VG_ATTACKS_METHOD", "default")


def gate_python() -> str:
    """The interpreter the gate runs with: this one, or at the ``landlock`` method as root one a worker of
    its own uid can run (tests/conftest.py ``shared_python``)."""
    if method() != "landlock":
        return sys.executable
    from conftest import shared_python

    python = shared_python()
    if python is None:
        pytest.skip("the landlock method needs an interpreter a worker of its own uid can run")
    return python


# --- files and processes a case may leave outside its temp dirs -----------------------------


def outside_roots() -> list[Path]:
    """Where a case may plant uniquely named files outside its temp dirs: site-packages (the
    venv's and the interpreter's), the gate's own install, the system temp dir, the cache."""
    roots = {Path(p) for p in site.getsitepackages()}
    roots |= {Path(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
    with contextlib.suppress(Exception):
        roots.add(Path(site.getusersitepackages()))
    for name in ("verdict_gate", "gate", "verdict_gate_plugin"):
        with contextlib.suppress(Exception):
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.origin:
                origin = Path(spec.origin).parent
                roots |= {origin, origin.parent}
    if gate_python() != sys.executable:  # the gate's own interpreter (the landlock method as root)
        with contextlib.suppress(OSError, subprocess.SubprocessError, ValueError):
            found = subprocess.run([gate_python(), "-c", "import json, site, sysconfig; print(json.dumps("
                                    "[*site.getsitepackages(), sysconfig.get_paths()['purelib']]))"],
                                   capture_output=True, text=True, timeout=60).stdout
            roots |= {Path(p) for p in json.loads(found)}
    roots.add(Path("/tmp"))
    roots.add(Path("/dev/shm"))
    roots.add(Path(os.path.expanduser("~/.cache")))
    return sorted(r for r in roots if r.is_dir())


def foreign_files(token: str) -> list[Path]:
    """Files or dirs whose name holds ``token``, directly in (or one level under) the outside roots."""
    found: list[Path] = []
    for root in outside_roots():
        with contextlib.suppress(OSError):
            for child in root.iterdir():
                if token in child.name:
                    found.append(child)
                elif child.is_dir() and not child.is_symlink() and root != Path("/tmp"):
                    with contextlib.suppress(OSError):
                        found += [g for g in child.iterdir() if token in g.name]
    return sorted(set(found))


def remove_paths(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink()


def remove_ipc(token: str) -> None:
    """Remove the System V semaphore set, message queue and shared memory segment a case may have made
    under the key ``crc32(token)`` (cases/sysv_ipc_crosses_workers): they outlive every process."""
    import ctypes
    import zlib

    key = zlib.crc32(token.encode()) & 0x7FFFFFFF
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        removers = ((libc.semget, lambda i: libc.semctl(i, 0, 0)), (libc.msgget, lambda i: libc.msgctl(i, 0, None)),
                    (libc.shmget, lambda i: libc.shmctl(i, 0, None)))  # IPC_RMID is 0 for all three
        for get, remove in removers:
            ident = get(key, 0, 0)
            if ident >= 0:
                remove(ident)


def processes_under(markers: list[str]) -> list[int]:
    """Pids (not ours) whose command line holds a marker or whose cwd is under one."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            cwd = ""
        if any(m in cmd + " " or (cwd + "/").startswith(m) for m in markers):
            pids.append(int(entry.name))
    return sorted(pids)


def kill_pids(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# --- a loopback server a case may try to reach -----------------------------------------------


class LoopbackServer:
    """Listeners a fenced worker must never reach, each recording what reached it (and the first bytes
    sent): TCP and UDP on 127.0.0.1 (``port``), and a Unix socket at ``unix_path`` (``None``: none), a
    stand-in for ``/var/run/docker.sock`` that answers like the Docker API's ``/_ping``."""

    def __init__(self, unix_path: str | None = None) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.unix_path = unix_path
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) if unix_path else None
        if self.unix is not None and unix_path:
            self.unix.bind(unix_path)
        self.connections: list[bytes] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._serve, args=(srv,), daemon=True)
                         for srv in (self.sock, self.unix) if srv is not None]
        self._threads.append(threading.Thread(target=self._datagrams, daemon=True))
        for srv in (self.sock, self.unix):
            if srv is not None:
                srv.listen(16)
                srv.settimeout(0.2)
        self.udp.settimeout(0.2)
        for thread in self._threads:
            thread.start()

    def _serve(self, srv: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            if self._stop.is_set():
                conn.close()
                break
            with conn:
                conn.settimeout(1.0)
                data = b""
                with contextlib.suppress(OSError):
                    data = conn.recv(4096)
                    conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nOK")
                self.connections.append(data)

    def _datagrams(self) -> None:
        while not self._stop.is_set():
            try:
                data, _ = self.udp.recvfrom(4096)
            except OSError:
                continue
            if self._stop.is_set():
                break
            self.connections.append(data)

    def close(self) -> None:
        self._stop.set()
        # Wake each listener now rather than at its next timeout (a test's teardown waited for them): a
        # connection or an empty datagram, which a stopped listener drops unrecorded.
        wakers = [(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", self.port)),
                  (socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", self.port))]
        if self.unix is not None and self.unix_path:
            wakers.append((socket.AF_UNIX, socket.SOCK_STREAM, self.unix_path))
        for family, kind, address in wakers:
            with contextlib.suppress(OSError), socket.socket(family, kind) as wake:
                wake.settimeout(0.5)
                wake.connect(address)
                wake.send(b"")
        for thread in self._threads:
            thread.join(timeout=2)
        for srv in (self.sock, self.udp, self.unix):
            if srv is not None:
                srv.close()


# --- the base project ---------------------------------------------------------------------------


def build_base(repo: Path, extra: Path | None = None, freeze: tuple[str, ...] = ()) -> Path:
    """The base project committed on `main` with the oracle pack's manifest; ``extra`` overlays more
    files and appends its ``catalog.append.yaml`` entries to the catalog's properties; ``freeze`` names
    properties whose failure on the base is frozen in the ledger by a real base replay (committed too)."""
    shutil.copytree(BASE, repo)
    if extra is not None:
        shutil.copytree(extra, repo, dirs_exist_ok=True, ignore=shutil.ignore_patterns("catalog.append.yaml"))
        catalog = repo / "oracle" / "catalog.yaml"
        text = catalog.read_text()
        at = text.index("\npolicy:")
        catalog.write_text(text[:at] + "\n" + (extra / "catalog.append.yaml").read_text().rstrip("\n") + text[at:])
    (repo / "README.md").write_text("calc: the attack corpus's base project\n")
    git(repo, "init", "--quiet")
    proc = subprocess.run(gate_argv("manifest", "write", str(repo / "oracle")), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    commit_all(repo, "base: calc and its oracle")
    if freeze:
        sig = repo.parent / "base.sig.json"
        _gate_ok("replay", "--repo", str(repo), "--rev", "main", "--pack", "git:main:oracle", "--out", str(sig),
                 *[arg for pid in freeze for arg in ("--only-id", pid)])
        for pid in freeze:
            _gate_ok("freeze", "--base-sig", str(sig), "--id", pid, "--reason", f"known failure of the base ({pid})",
                     "--ledger", str(repo / "oracle" / "freeze_ledger.json"), "--first-seen", "2026-11-01")
        _gate_ok("manifest", "write", str(repo / "oracle"))
        commit_all(repo, "freeze the base's known failures")
    return repo


def _gate_ok(*args: str) -> None:
    proc = subprocess.run(gate_argv(*args), capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(NO_BWRAP if method() == "landlock" else {})})
    assert proc.returncode == 0, f"{args[0]}: {proc.stdout}{proc.stderr}"


@pytest.fixture(scope="session")
def attack_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base project committed on `main`, with the oracle pack's manifest (built once)."""
    return build_base(tmp_path_factory.mktemp("attack-base") / "calc")


@pytest.fixture(scope="session")
def inplace_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base project plus an in-place API and its property (``base_inplace/``): kept out of the
    shared base so that, while the isolation cannot carry in-place changes back, the corpus still
    tells its cases apart."""
    return build_base(tmp_path_factory.mktemp("inplace-base") / "calc", HERE / "base_inplace")


@pytest.fixture(scope="session")
def text_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base project plus properties that read the candidate's text (``base_text/``): doctests, a repr
    read back with eval, bytes a candidate function returned read back with pickle.loads (as real suites
    do): the base of the cases whose payload is text the pack reads."""
    return build_base(tmp_path_factory.mktemp("text-base") / "calc", HERE / "base_text")


@pytest.fixture(scope="session")
def mixed_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base project plus one property at ``isolation: none`` (``base_mixed/``): a catalog of mixed levels."""
    return build_base(tmp_path_factory.mktemp("mixed-base") / "calc", HERE / "base_mixed")


@pytest.fixture(scope="session")
def hypothesis_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base project plus Hypothesis at isolation ``none`` and a drawn Random handed to candidate code
    (``base_hypothesis/``): the base of the cases whose candidate discards the examples it gets wrong."""
    return build_base(tmp_path_factory.mktemp("hypothesis-base") / "calc", HERE / "base_hypothesis")


FROZEN_IDS = ("prop.round_known", "ex.band_table", "ex.parse_known")
SHARED_FROZEN_IDS = ("ex.units_rows",)


@pytest.fixture(scope="session")
def frozen_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base project plus known failures and control-flow shapes (``base_frozen/``), its known failures
    frozen in the ledger by a real base replay: the base of the cases that try to be forgiven as frozen."""
    return build_base(tmp_path_factory.mktemp("frozen-base") / "calc", HERE / "base_frozen", FROZEN_IDS)


@pytest.fixture(scope="session")
def shared_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base project plus properties that hand candidate code the oracle's own objects (``base_shared/``):
    subclasses of candidate classes, a ``Mock``, a test's instances, a sink a generator posts to, an iterator
    read partly, ``random`` seeded by the test or not; its known failure (``ex.units_rows``: the pack's own
    ``int()`` cannot read a thousands separator) frozen in the ledger by a real base replay."""
    return build_base(tmp_path_factory.mktemp("shared-base") / "calc", HERE / "base_shared", SHARED_FROZEN_IDS)


@pytest.fixture(scope="session")
def gate_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bytecode cache for the gate's property processes, private to this session (a case that
    poisons a cache gets its own, see `private_cache`)."""
    return tmp_path_factory.mktemp("gate-cache")


@dataclass
class GateRun:
    code: int
    stdout: str
    stderr: str
    out: Path
    seconds: float
    verdicts: dict | None = None
    audit: subprocess.CompletedProcess[str] | None = None  # `verdict-gate audit OUT` of a decided run

    @property
    def outcome(self) -> str | None:
        return None if self.verdicts is None else self.verdicts.get("outcome")

    def failing(self) -> dict[str, str]:
        if not self.verdicts:
            return {}
        return {pid: f"{v.get('verdict')}/{v.get('reason')}" for pid, v in self.verdicts.get("verdicts", {}).items()
                if v.get("verdict") != "pass"}


@dataclass
class Arena:
    """One test's temp world: repo copies, the gate's TMPDIR, a loopback server, a unique token."""

    base: Path
    tmp: Path
    cache: Path
    token: str = field(default_factory=lambda: "vgattack" + uuid.uuid4().hex[:12])
    runs: list[GateRun] = field(default_factory=list)

    def __post_init__(self) -> None:
        # The gate's temp dir: under /tmp (searchable by all) rather than pytest's private basetemp, so a
        # worker of its own uid (the landlock method as root) can reach its tree; removed in cleanup.
        self.gate_tmp = Path(tempfile.mkdtemp(prefix="vg-attack-", dir="/tmp"))  # no token: not a "foreign" file
        os.chmod(self.gate_tmp, 0o711)
        self.server = LoopbackServer(str(self.gate_tmp / "docker.sock"))
        # The gate's $HOME, holding a credential as a runner's home may (~/.netrc): the worker must not read it.
        self.home = self.tmp / "home"
        self.home.mkdir()
        (self.home / ".netrc").write_text(f"machine github.com login x-access-token password {self.canary}\n")
        self.github_output = self.tmp / "github_output"
        self.github_output.write_text("")

    @property
    def canary(self) -> str:
        return f"ghs_{self.token}canary"

    @property
    def canary_basic(self) -> str:
        """The canary as actions/checkout writes the token into ``.git/config`` (HTTP basic, base64)."""
        import base64

        return base64.b64encode(f"x-access-token:{self.canary}".encode()).decode()

    def substitutions(self) -> dict[str, str]:
        return {"@@TOKEN@@": self.token, "@@PORT@@": str(self.server.port), "@@CANARY@@": self.canary,
                "@@UNIX@@": self.server.unix_path or "", "@@HOME@@": str(self.home)}

    def repo(self, name: str) -> Path:
        """A copy of the base repository on branch ``name``, with the canary in its ``.git/config`` as
        actions/checkout's default ``persist-credentials: true`` leaves the job token there."""
        repo = self.tmp / name
        shutil.copytree(self.base, repo)
        git(repo, "checkout", "--quiet", "-b", name)
        git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {self.canary_basic}")
        return repo

    def write_tree(self, repo: Path, source: Path, skip: tuple[str, ...] = META_FILES) -> list[str]:
        """Copy the files of ``source`` into ``repo`` (placeholders substituted); return their paths. A file
        ``NAME.edit.yaml`` is not copied: its ``[{old, new}, ...]`` edit the file ``NAME`` already in ``repo``
        (each ``old`` must occur exactly once), so a case that changes a few lines of a base file says only those."""
        written = []
        for path in sorted(source.rglob("*")):
            rel = path.relative_to(source)
            if path.is_dir() or rel.as_posix() in skip or "__pycache__" in rel.parts:
                continue
            data = path.read_bytes()
            for key, value in self.substitutions().items():
                data = data.replace(key.encode(), value.encode())
            if rel.name.endswith(EDIT_SUFFIX):
                rel = rel.with_name(rel.name[:-len(EDIT_SUFFIX)])
                edit_file(repo / rel, yaml.safe_load(data), f"{source.name}/{path.relative_to(source)}")
                written.append(rel.as_posix())
                continue
            target = repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(rel.as_posix())
        return written

    def apply(self, repo: Path, case: Path, meta: dict) -> None:
        """The patch: an overlay of bugs (``overlay:`` broken, the default, broken_prop or none), the kit
        (``kit: true``), the case's own files, then bytecode compiled from base files (``compile:``)."""
        overlay = OVERLAYS[meta.get("overlay", "broken")]
        if overlay is not None:
            self.write_tree(repo, overlay)
        if meta.get("kit"):
            data = (KIT / "vgkit.py").read_text()
            (repo / "src" / "calc" / "_vgkit.py").write_text(data)
        self.write_tree(repo, case)
        for target, source in (meta.get("compile") or {}).items():
            # Sourceless bytecode of a base project file, made by this interpreter: a .pyc kept in the
            # corpus would only load under the Python version that wrote it.
            (repo / target).parent.mkdir(parents=True, exist_ok=True)
            py_compile.compile(str(BASE / source), cfile=str(repo / target), dfile=source, doraise=True)
        for rel in meta.get("delete", []):
            (repo / rel).unlink()
        commit_all(repo, meta.get("description", case.name))

    def gate(self, repo: Path, out: Path, *, private_cache: bool = False, extra_env: dict | None = None,
             jobs: int | None = None) -> GateRun:
        cache = self.tmp / "private-cache" if private_cache else self.cache
        env = {**os.environ, **(NO_BWRAP if method() == "landlock" else {}), "TMPDIR": str(self.gate_tmp),
               "HOME": str(self.home),
               "VERDICT_GATE_CACHE": str(cache),
               "GITHUB_TOKEN": self.canary, "GITHUB_OUTPUT": str(self.github_output), **(extra_env or {})}
        env.pop("VERDICT_GATE_KEEP_WORK", None)
        argv = gate_argv("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle",
                         "--out", str(out), "--today", "2026-11-30", *(["--jobs", str(jobs)] if jobs else []))
        start = time.monotonic()
        # Its own session: a case that kills its process group must not reach this test process.
        proc = subprocess.Popen(argv, cwd=self.tmp, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=GATE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            stderr += f"\n[attack harness] the gate ran over {GATE_TIMEOUT_S} s and was killed"
        verdicts = None
        with contextlib.suppress(OSError, ValueError):
            verdicts = json.loads((out / "verdicts.json").read_text())
        run = GateRun(proc.returncode, stdout, stderr, out, time.monotonic() - start, verdicts)
        self.runs.append(run)
        audit_evidence(run)
        if os.environ.get("VG_ATTACKS_VERBOSE"):  # with -s: what the gate printed, for debugging a case
            print(f"\n--- gate exit {run.code} in {run.seconds:.1f} s\n{stdout[-4000:]}\n{stderr[-6000:]}")
        return run

    def survivors(self) -> list[int]:
        return processes_under([str(self.tmp) + "/", self.token])

    def foreign(self) -> list[Path]:
        return foreign_files(self.token)

    def cleanup(self) -> None:
        for _ in range(3):  # a daemon may fork again while it is being killed
            pids = self.survivors()
            if not pids:
                break
            kill_pids(pids)
            time.sleep(0.1)
        remove_paths(self.foreign())
        remove_ipc(self.token)
        shutil.rmtree(self.gate_tmp, ignore_errors=True)
        self.server.close()


_TOKENS: list[str] = []


@pytest.fixture
def arena(attack_base: Path, gate_cache: Path, tmp_path: Path) -> Iterator[Arena]:
    yield from _arena(attack_base, tmp_path, gate_cache)


@pytest.fixture
def frozen_arena(frozen_base: Path, gate_cache: Path, tmp_path: Path) -> Iterator[Arena]:
    yield from _arena(frozen_base, tmp_path, gate_cache)


@pytest.fixture
def inplace_arena(inplace_base: Path, gate_cache: Path, tmp_path: Path) -> Iterator[Arena]:
    yield from _arena(inplace_base, tmp_path, gate_cache)


@pytest.fixture
def text_arena(text_base: Path, gate_cache: Path, tmp_path: Path) -> Iterator[Arena]:
    yield from _arena(text_base, tmp_path, gate_cache)


@pytest.fixture
def shared_arena(shared_base: Path, gate_cache: Path, tmp_path: Path) -> Iterator[Arena]:
    yield from _arena(shared_base, tmp_path, gate_cache)


@pytest.fixture
def mixed_arena(mixed_base: Path, gate_cache: Path, tmp_path: Path) -> Iterator[Arena]:
    yield from _arena(mixed_base, tmp_path, gate_cache)


@pytest.fixture
def hypothesis_arena(hypothesis_base: Path, gate_cache: Path, tmp_path: Path) -> Iterator[Arena]:
    yield from _arena(hypothesis_base, tmp_path, gate_cache)


# A case's base (its attack.yaml's ``base``) → the fixture of its arena.
ARENAS = {"calc": "arena", "frozen": "frozen_arena", "text": "text_arena", "mixed": "mixed_arena",
          "shared": "shared_arena", "hypothesis": "hypothesis_arena"}
# A base's known failures, frozen in its ledger: an honest patch on it is promoted with exactly these forgiven.
FROZEN_OF = {"frozen": FROZEN_IDS, "shared": SHARED_FROZEN_IDS}


def _arena(base: Path, tmp_path: Path, gate_cache: Path) -> Iterator[Arena]:
    world = Arena(base, tmp_path, gate_cache)
    _TOKENS.append(world.token)
    try:
        yield world
    finally:
        world.cleanup()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A last sweep: nothing a case planted outside its temp dirs survives the session."""
    for token in _TOKENS:
        kill_pids(processes_under([token]))
        remove_paths(foreign_files(token))


# --- what the gate must never do, for every case ---------------------------------------------


def audit_evidence(run: GateRun) -> None:
    """Every decided run's evidence re-checks from its files alone (``verdict-gate audit OUT`` exits 0): whatever
    the case tried, the directory holds what the gate wrote and the decision it records is the one its files
    give (docs/design.md §9.1). A run that ended without a decision (a usage error, a gate killed) is not."""
    if run.code not in EXIT.values() or not (run.out / "verdicts.json").is_file():
        return
    run.audit = subprocess.run(gate_argv("audit", str(run.out)), capture_output=True, text=True, timeout=120,
                               stdin=subprocess.DEVNULL)
    assert run.audit.returncode == 0, f"verdict-gate audit {run.out}: exit {run.audit.returncode}\n" \
        f"{run.audit.stdout[-3000:]}{run.audit.stderr[-2000:]}"

TRACEBACK = re.compile(r"Traceback \(most recent call last\)")


def user_state(repo: Path) -> dict[str, object]:
    """What the user owns in the repository: work tree status, refs, hooks, config, worktrees."""
    hooks = sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) if (repo / ".git" / "hooks").is_dir() else []
    return {
        "status": git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "head": git(repo, "rev-parse", "HEAD"),
        "hooks": hooks,
        "config": (repo / ".git" / "config").read_text(),
        "worktrees": git(repo, "worktree", "list", "--porcelain").count("worktree "),
        "info": sorted(p.name for p in (repo / ".git" / "info").iterdir()) if (repo / ".git" / "info").is_dir() else [],
    }


def assert_not_promoted(run: GateRun, label: str = "") -> None:
    detail = (f"{label} exit {run.code}, outcome {run.outcome}\n--- stdout\n{run.stdout[-3000:]}"
              f"\n--- stderr\n{run.stderr[-3000:]}")
    assert run.outcome != "promoted", "PROMOTED: " + detail
    assert run.code != 0, "exit 0: " + detail
    assert not TRACEBACK.search(run.stdout + run.stderr), "a traceback was printed: " + detail
    assert_method(run, detail)


def methods_of(run: GateRun) -> set[str]:
    """The isolation methods the sandboxed properties of ``run`` ran by (runs.json), e.g. ``{"landlock"}``."""
    try:
        runs = json.loads((run.out / "runs.json").read_text())["runs"]
    except (OSError, ValueError, KeyError):
        return set()
    return {r["isolation"]["method"] for r in runs.values() if r["isolation"]["level"] == "sandbox"}


def assert_method(run: GateRun, detail: str = "") -> None:
    """At the landlock method the sandboxed properties must really have run by it (a case that made the
    worker unavailable is a gate fault, `incomplete`, and proves nothing about the fence)."""
    if method() == "landlock":
        assert methods_of(run) <= {"landlock", "unknown"}, f"ran by {methods_of(run)}: " + detail


# --- a per-case line in the terminal summary (for the report) -------------------------------

RESULTS: list[dict[str, Any]] = []


def record(name: str, runs: list[GateRun], **extra: object) -> None:
    RESULTS.append({"case": name, "runs": [{"exit": r.code, "outcome": r.outcome, "failing": r.failing(),
                                            "seconds": round(r.seconds, 1), "methods": sorted(methods_of(r))}
                                           for r in runs], **extra})


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not RESULTS:
        return
    terminalreporter.section("attack corpus: what the gate said")
    for row in RESULTS:
        runs = "; ".join(f"exit {r['exit']} {r['outcome']}" + (f" ({','.join(r['methods'])})" if r["methods"] else "")
                         for r in row["runs"])
        notes = ", ".join(f"{k}={v}" for k, v in row.items() if k not in ("case", "runs") and v)
        terminalreporter.write_line(f"{row['case']:<34} {runs}" + (f"  [{notes}]" if notes else ""))
    dump = os.environ.get("VG_ATTACKS_REPORT")
    if dump:
        Path(dump).write_text(json.dumps(RESULTS, indent=1))
