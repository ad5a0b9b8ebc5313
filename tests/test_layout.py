"""The layout keeps its promises (docs/design.md §10): an AST check of what each room imports and calls.

Rules, each a checker over source text (so a planted violation is checked in memory, never
written into the tree):

- ``core/`` only decides: no file I/O, environment, clock, network, threads, processes or
  ``exec``, and nothing of ``verdict_gate`` outside ``core/``;
- ``boundary/`` is loaded by path inside the pytest process and the worker: standard library
  only, and nothing of ``verdict_gate`` outside itself (relative imports);
- the boundary's two sides are a hub and its spokes: a spoke (a module of ``boundary/proxy/`` or
  ``boundary/worker/`` other than the hub's) imports of the boundary only the protocol, the codec and its
  package's errors, and the hub's names only for typing (``if TYPE_CHECKING:``), as RPyC's netref holds
  its connection and never imports its protocol module;
- ``pack/`` and ``host/`` never import ``run/`` (nor the commands, the action or the CLI);
- ``report/`` renders: it never imports ``run/``, ``pack/``, ``github/`` or the commands;
- ``verdict_gate_plugin.py`` imports nothing of ``verdict_gate``;
- no import circles among the package's modules (imports inside functions count too; imports for typing
  only do not), nor among its folders (``host/`` and ``pack/``, say: each of the root's modules stands alone);
- no file of the package over 800 lines, no function over 80;
- pyproject.toml lists every folder of the package, so the wheel ships it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "verdict_gate"

# --- reading imports ---------------------------------------------------------------------------


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _typing_only(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): what it imports, nothing runs."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_nodes(tree: ast.AST, typing: bool = True) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement of ``tree`` and whether it is for typing only (inside ``if TYPE_CHECKING:``);
    with ``typing`` false, only those that run."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []
    todo: list[tuple[ast.AST, bool]] = [(tree, False)]
    while todo:
        node, typed = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append((node, typed))
        for child in ast.iter_child_nodes(node):
            child_typed = typed or (_typing_only(node) and child in node.body)  # type: ignore[attr-defined]
            if typing or not child_typed:
                todo.append((child, child_typed))
    return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))


def _base(node: ast.ImportFrom, package: str) -> str:
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(anchor + ([base] if base else []))
    return base


def imports(source: str, module: str, is_package: bool = False, typing: bool = True) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every import in ``source`` (of module ``module``), relative
    imports resolved; ``from a import b`` yields ``a`` and ``a.b`` (``b`` may be a submodule). With ``typing``
    false, not those inside ``if TYPE_CHECKING:``."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node, _typed in import_nodes(ast.parse(source), typing):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        else:
            base = _base(node, package)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _under(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


# --- the rules ---------------------------------------------------------------------------------

# Modules whose import means the environment, the clock, files, the network, threads or a process.
IMPURE_MODULES = ("time", "socket", "subprocess", "requests", "urllib.request", "http.client", "urllib3", "ssl",
                  "asyncio", "multiprocessing", "threading", "_thread", "concurrent", "shutil", "tempfile", "glob",
                  "importlib.resources", "io", "signal", "fcntl", "mmap", "select", "selectors", "sqlite3")
# Attribute reads and calls that mean the same, on any object (os.environ, datetime.now(), Path.read_text …).
IMPURE_ATTRIBUTES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv",
                     "now", "today", "utcnow", "time_ns", "monotonic", "perf_counter",
                     "read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "rglob", "scandir",
                     "listdir", "mkdir", "makedirs", "unlink", "rmdir", "rename", "replace_file", "exists",
                     "is_file", "is_dir", "is_symlink", "stat", "lstat", "fstat", "chmod", "touch", "walk",
                     "getcwd", "cwd", "home", "expanduser", "resolve", "realpath", "system", "popen", "fork",
                     "kill", "getpid"}
IMPURE_BUILTINS = {"open", "exec", "eval", "compile", "input", "breakpoint", "__import__"}
OS_PURE = {"PathLike", "fspath", "fsencode", "fsdecode", "sep"}  # the only names of `os` the core may use


def core_problems(source: str, where: str, module: str = "verdict_gate.core.x") -> list[str]:
    """Why ``source`` (a module of ``core/``) is not pure; ``[]`` when it is."""
    problems = []
    for line, name in imports(source, module):
        if _under(name, ["verdict_gate"]) and not _under(name, ["verdict_gate.core"]):
            problems.append(f"{where}:{line} imports {name}, outside verdict_gate/core/")
        if _under(name, IMPURE_MODULES):
            problems.append(f"{where}:{line} imports {name} (files, the environment, clock, network, threads "
                            "or a process)")
        if name.startswith("os.") and name[3:] not in OS_PURE:
            problems.append(f"{where}:{line} imports {name} from os")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in IMPURE_ATTRIBUTES:
            problems.append(f"{where}:{node.lineno} uses .{node.attr} (files, the environment or the clock)")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
              and node.attr not in OS_PURE):
            problems.append(f"{where}:{node.lineno} uses os.{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in IMPURE_BUILTINS:
            problems.append(f"{where}:{node.lineno} calls {node.func.id}()")
        elif isinstance(node, ast.ImportFrom) and any(a.name in IMPURE_ATTRIBUTES for a in node.names):
            problems.append(f"{where}:{node.lineno} imports {', '.join(a.name for a in node.names)} "
                            "(files, the environment or the clock)")
    return problems


def boundary_problems(source: str, where: str, module: str = "verdict_gate.boundary.x",
                      is_package: bool = False) -> list[str]:
    """Why ``source`` (a module of ``boundary/``) could not be loaded by path beside candidate code."""
    problems = []
    for line, name in imports(source, module, is_package):
        root = name.split(".")[0]
        if root == "verdict_gate" and not _under(name, ["verdict_gate.boundary"]):
            problems.append(f"{where}:{line} imports {name}: the boundary imports nothing of verdict_gate")
        elif root not in ("verdict_gate", "__future__") and root not in sys.stdlib_module_names:
            problems.append(f"{where}:{line} imports {name}, which is not in the standard library")
    return problems


def no_run_problems(source: str, where: str, module: str) -> list[str]:
    """Why ``source`` (a module of ``pack/`` or ``host/``) reaches up into orchestration or the edges above."""
    above = ("verdict_gate.run", "verdict_gate.commands", "verdict_gate.github", "verdict_gate.cli",
             "verdict_gate.demo")
    return [f"{where}:{line} imports {name}" for line, name in imports(source, module) if _under(name, above)]


def report_problems(source: str, where: str, module: str) -> list[str]:
    edges = ("verdict_gate.run", "verdict_gate.pack", "verdict_gate.github", "verdict_gate.commands",
             "verdict_gate.cli", "verdict_gate.demo")
    return [f"{where}:{line} imports {name}" for line, name in imports(source, module) if _under(name, edges)]


# The hubs of the boundary's two sides (docs/design.md §10): every other module of these packages is a spoke.
HUBS = {"verdict_gate.boundary.proxy": ("__init__", "client", "translate", "hooks"),
        "verdict_gate.boundary.worker": ("__init__", "main", "server", "values")}
SPOKE_IMPORTS = ("verdict_gate.boundary.protocol", "verdict_gate.boundary.codec")  # and the package's errors


def spoke_problems(source: str, where: str, module: str) -> list[str]:
    """Why ``source`` (a spoke of ``HUBS``' packages) reaches past the protocol, the codec and its package's
    errors (at runtime), or past them and the hub (for typing)."""
    package = module.rpartition(".")[0]
    runtime = (*SPOKE_IMPORTS, f"{package}.errors")
    typing = (*runtime, *(f"{package}.{hub}" for hub in HUBS[package] if hub != "__init__"))
    problems = []
    for node, typed in import_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            wanted = [(alias.name, alias.name) for alias in node.names]
        else:
            base = _base(node, package)
            wanted = [(base, f"{base}.{alias.name}") for alias in node.names]
        for base, name in wanted:
            if not _under(base, ["verdict_gate"]):
                continue  # the standard library
            allowed = typing if typed else runtime
            if not (_under(base, allowed) or _under(name, allowed)):
                problems.append(f"{where}:{node.lineno} imports {name}{' (for typing)' if typed else ''}: a spoke "
                                "imports only the protocol, the codec and its package's errors (the hub's names "
                                "only for typing)")
    return problems


def folder_graph(graph: dict[str, set[str]], packages: set[str], root: str = "verdict_gate") -> dict[str, set[str]]:
    """``graph`` between folders: a module stands for its package (one of ``packages``), except a module of
    the ``root`` package itself (``cli``, ``demo``), which stands alone."""
    def folder(module: str) -> str:
        if module in packages:
            return module
        parent = module.rpartition(".")[0]
        return module if parent == root else parent

    found: dict[str, set[str]] = {}
    for module, wanted in graph.items():
        for other in wanted:
            if folder(module) != folder(other):
                found.setdefault(folder(module), set()).add(folder(other))
    return found


MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80


def size_problems(source: str, where: str) -> list[str]:
    """A file over :data:`MAX_FILE_LINES` lines, a function (or method) over :data:`MAX_FUNCTION_LINES`."""
    problems = []
    lines = source.count("\n") + (not source.endswith("\n") and bool(source))
    if lines > MAX_FILE_LINES:
        problems.append(f"{where}: {lines} lines, over {MAX_FILE_LINES}")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{where}:{node.lineno} {node.name} is {length} lines, over {MAX_FUNCTION_LINES}")
    return problems


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle of ``graph`` (module → the package modules it imports), as the modules of each
    strongly connected component of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module → the modules of ``sources`` it imports (``sources``: module → (text, is a package))."""
    graph: dict[str, set[str]] = {}
    for module, (text, is_package) in sources.items():
        wanted = set()
        package = module if is_package else module.rpartition(".")[0]
        for node, _typed in import_nodes(ast.parse(text), typing=False):  # typing only: nothing runs
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                base = _base(node, package)
                # `from a import b` imports the module a.b where there is one, else names of a
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in sources else base for a in node.names]
            for name in names:
                while name and name not in sources:  # a name inside a module: the module
                    name = name.rpartition(".")[0]
                if name and name != module:
                    wanted.add(name)
        graph[module] = wanted
    return graph


# --- the tree ----------------------------------------------------------------------------------


def _files(room: str, deep: bool = False) -> list[Path]:
    return sorted((PACKAGE / room).rglob("*.py") if deep else (PACKAGE / room).glob("*.py"))


def _spokes() -> list[Path]:
    return [p for package in HUBS for p in _files(package.removeprefix("verdict_gate.").replace(".", "/"))
            if p.stem not in HUBS[package]]


def _sources() -> dict[str, tuple[str, bool]]:
    return {module_name(p): (p.read_text(encoding="utf-8"), p.name == "__init__.py")
            for p in sorted(PACKAGE.rglob("*.py"))}


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(PACKAGE).as_posix() for p in paths]


def _check(paths: list[Path], checker) -> list[str]:  # type: ignore[no-untyped-def]
    problems = []
    for path in paths:
        problems += checker(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), module_name(path))
    return problems


def test_the_rooms_exist() -> None:
    assert {p.stem for p in _files("core")} >= {"verdict", "signature", "digest", "diffsplit", "catalog", "ledger",
                                                 "promotion", "score"}
    assert {p.stem for p in _files("boundary")} >= {"results", "codec", "protocol", "links", "names", "sources", "ship",
                                                     "load"}
    assert {p.stem for p in _files("boundary/proxy")} >= {"client", "translate", "handles", "records", "exceptions",
                                                           "classes", "callbacks", "importer", "textguard", "children",
                                                           "state", "doctests", "errors"}
    assert {p.stem for p in _files("boundary/worker")} >= {"main", "server", "values", "refs", "shadows"}
    assert {p.stem for p in _files("boundary/fence")} >= {"policy", "host", "launch", "bwrap", "apply", "probe",
                                                           "targets", "landlock", "seccomp", "reap", "errors"}
    assert {p.stem for p in _files("host")} >= {"git", "checkout", "fixtures", "hashing", "forks", "workdir"}
    assert {p.stem for p in _files("run")} >= {"pipeline", "replay", "runner", "execute", "merge"}


@pytest.mark.parametrize("path", _files("core"), ids=_ids(_files("core")))
def test_core_only_decides(path: Path) -> None:
    problems = _check([path], core_problems)
    assert not problems, "the core must stay pure:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", _files("boundary", deep=True), ids=_ids(_files("boundary", deep=True)))
def test_boundary_is_standard_library_only(path: Path) -> None:
    problems = boundary_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), module_name(path),
                                 path.name == "__init__.py")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("room", ["pack", "host"])
def test_pack_and_host_never_import_run(room: str) -> None:
    assert _check(_files(room), no_run_problems) == []


def test_report_never_imports_the_edges() -> None:
    assert _check(_files("report"), report_problems) == []


def test_the_plugin_imports_nothing_of_the_package() -> None:
    source = (ROOT / "verdict_gate_plugin.py").read_text(encoding="utf-8")
    assert [n for _, n in imports(source, "verdict_gate_plugin") if n.split(".")[0] == "verdict_gate"] == []


@pytest.mark.parametrize("path", _spokes(), ids=_ids(_spokes()))
def test_a_spoke_imports_only_the_protocol_the_codec_and_the_errors(path: Path) -> None:
    problems = spoke_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), module_name(path))
    assert not problems, "\n".join(problems)


def test_no_import_circles() -> None:
    assert circles(import_graph(_sources())) == []


def test_no_import_circles_between_folders() -> None:
    sources = _sources()
    packages = {module for module, (_text, is_package) in sources.items() if is_package}
    assert circles(folder_graph(import_graph(sources), packages)) == []


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=_ids(sorted(PACKAGE.rglob("*.py"))))
def test_small_modules_and_functions(path: Path) -> None:
    problems = size_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not problems, "\n".join(problems)


# --- each rule fails on a planted violation ------------------------------------------------------

PLANTED_IMPURE = [
    "from verdict_gate.run import pipeline\n",  # a floor above
    "from ..host import git\n",  # the same, relatively
    "import os\nos.environ.get('X')\n",  # the environment
    "import os\nx = os.getcwd()\n",
    "import datetime as dt\ndt.date.today()\n",  # the clock
    "from time import monotonic\n",
    "import requests\n",  # the network
    "import subprocess\n",  # a process
    "import threading\n",  # threads
    "from concurrent.futures import ThreadPoolExecutor\n",
    "with open('x') as fh:\n    pass\n",  # file I/O
    "from pathlib import Path\nPath('x').read_text()\n",
    "import os\nos.scandir('.')\n",
    "from os import listdir\n",
    "from importlib import resources\n",  # package data
    "exec('x = 1')\n",  # generated code
]


@pytest.mark.parametrize("source", PLANTED_IMPURE)
def test_the_core_rule_fails_on_a_planted_violation(source: str) -> None:
    assert core_problems(source, "core/_planted.py"), source


def test_the_core_rule_passes_pure_code() -> None:
    source = ("import hashlib\nimport os\nfrom verdict_gate.core.errors import GateError\n"
              "def f(p: os.PathLike[str]) -> str:\n    return hashlib.sha256(os.fsencode(p)).hexdigest()\n")
    assert core_problems(source, "core/_planted.py") == []


@pytest.mark.parametrize("source", ["import verdict_gate.core.errors\n", "from verdict_gate.host import git\n",
                                    "from ..core import signature\n", "import yaml\n", "import pytest\n",
                                    "from hypothesis import given\n"])
def test_the_boundary_rule_fails_on_a_planted_violation(source: str) -> None:
    assert boundary_problems(source, "boundary/_planted.py"), source


def test_the_boundary_rule_passes_relative_and_stdlib_imports() -> None:
    assert boundary_problems("from . import codec\nimport ctypes\nimport json\n", "boundary/_planted.py") == []


@pytest.mark.parametrize("source", ["from verdict_gate.run import runner\n", "from ..run.pipeline import run\n",
                                    "import verdict_gate.commands.common\n"])
def test_the_no_run_rule_fails_on_a_planted_violation(source: str) -> None:
    assert no_run_problems(source, "host/_planted.py", "verdict_gate.host._planted"), source


def test_the_report_rule_fails_on_a_planted_violation() -> None:
    assert report_problems("from verdict_gate.pack import load\n", "report/_planted.py", "verdict_gate.report._p")


def test_the_circle_rule_fails_on_a_planted_circle() -> None:
    sources = {"verdict_gate.run.pipeline": ("from verdict_gate.run.replay import replay\n", False),
               "verdict_gate.run.replay": ("def f():\n    from verdict_gate.run.pipeline import scratch_dir\n", False),
               "verdict_gate.run.merge": ("from verdict_gate.run import pipeline\n", False)}
    assert circles(import_graph(sources)) == [["verdict_gate.run.pipeline", "verdict_gate.run.replay"]]
    del sources["verdict_gate.run.replay"]
    assert circles(import_graph(sources)) == []


@pytest.mark.parametrize("source", [
    "from . import handles\n",  # another spoke
    "from .client import Client\n",  # the hub, at runtime
    "from .. import links\n",  # the boundary beyond the protocol and the codec
    "from ..fence import host\n",
    "import verdict_gate.boundary.proxy.records\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .handles import Handle\n",  # typing: the hub only
])
def test_the_spoke_rule_fails_on_a_planted_violation(source: str) -> None:
    assert spoke_problems(source, "boundary/proxy/_planted.py", "verdict_gate.boundary.proxy._planted"), source


def test_the_spoke_rule_passes_the_protocol_the_codec_the_errors_and_the_hub_for_typing() -> None:
    source = ("import sys\nfrom typing import TYPE_CHECKING\nfrom .. import codec\nfrom ..protocol import CALL\n"
              "from .errors import named\nif TYPE_CHECKING:\n    from .client import Client\n")
    assert spoke_problems(source, "boundary/proxy/_planted.py", "verdict_gate.boundary.proxy._planted") == []
    assert spoke_problems("from .server import Worker\n", "boundary/worker/_planted.py",
                          "verdict_gate.boundary.worker._planted")


def test_the_folder_circle_rule_fails_on_a_planted_circle() -> None:
    # host/ imports pack/ while pack/ imports host/: no two modules import each other, the folders do
    sources = {"verdict_gate.host": ("", True), "verdict_gate.pack": ("", True),
               "verdict_gate.host.fixtures": ("from verdict_gate.pack.verify import Pack\n", False),
               "verdict_gate.host.hashing": ("import os\n", False),
               "verdict_gate.pack.verify": ("import os\n", False),
               "verdict_gate.pack.archive": ("from verdict_gate.host import hashing\n", False),
               "verdict_gate.cli": ("from verdict_gate.pack import verify\n", False),
               "verdict_gate.demo": ("from verdict_gate import cli\n", False)}
    packages = {"verdict_gate.host", "verdict_gate.pack"}
    graph = import_graph(sources)
    assert circles(graph) == []
    assert circles(folder_graph(graph, packages)) == [["verdict_gate.host", "verdict_gate.pack"]]
    del sources["verdict_gate.pack.archive"]
    assert circles(folder_graph(import_graph(sources), packages)) == []


def test_a_typing_only_import_makes_no_circle() -> None:
    sources = {"verdict_gate.boundary.proxy.client": ("from . import handles\n", False),
               "verdict_gate.boundary.proxy.handles": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                       "    from .client import Client\n", False)}
    assert circles(import_graph(sources)) == []
    sources["verdict_gate.boundary.proxy.handles"] = ("from .client import Client\n", False)
    assert circles(import_graph(sources)) == [["verdict_gate.boundary.proxy.client",
                                                "verdict_gate.boundary.proxy.handles"]]


def test_the_size_rule_fails_on_a_planted_violation() -> None:
    long_function = "def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES
    assert size_problems(long_function, "x.py") == [f"x.py:1 f is {MAX_FUNCTION_LINES + 1} lines, over 80"]
    assert size_problems("def f():\n" + "    x = 1\n" * (MAX_FUNCTION_LINES - 1), "x.py") == []
    assert size_problems("x = 1\n" * (MAX_FILE_LINES + 1), "x.py") == [f"x.py: {MAX_FILE_LINES + 1} lines, over 800"]
    assert size_problems("x = 1\n" * MAX_FILE_LINES, "x.py") == []


def test_cli_only_parses_and_dispatches() -> None:
    """Every command is a module of verdict_gate/commands/ with add_parser and run."""
    from verdict_gate.commands import COMMANDS

    names = {m.__name__.rsplit(".", 1)[1] for m in COMMANDS}
    assert names >= {"run", "replay", "freeze", "digest", "manifest", "pack", "demo"}
    assert all(callable(m.add_parser) and callable(m.run) for m in COMMANDS)
    allowed = ("verdict_gate", "verdict_gate.commands", "verdict_gate.core.errors", "verdict_gate.host.process")
    cli = PACKAGE / "cli.py"
    cli_imports = {name for _, name in imports(cli.read_text(encoding="utf-8"), "verdict_gate.cli")
                   if name.split(".")[0] == "verdict_gate"}
    assert all(_under(n, allowed) for n in cli_imports), cli_imports


def test_one_level_list_and_one_fence_list() -> None:
    """The isolation levels, methods and fences are written once (boundary/fence/policy.py); the schemas and
    the core's rank of the levels are kept equal to them here."""
    import json

    from verdict_gate.boundary import results
    from verdict_gate.boundary.fence import policy
    from verdict_gate.core.verdict import ISOLATION_RANK

    catalog = json.loads((ROOT / "schemas" / "catalog.schema.json").read_text())
    runs = json.loads((ROOT / "schemas" / "runs.schema.json").read_text())
    isolation = _find(runs, "isolation")["properties"]
    assert catalog["$defs"]["isolation"]["enum"] == list(policy.LEVELS)
    assert isolation["level"]["enum"] == list(policy.LEVELS)
    assert isolation["method"]["enum"] == list(results.ISOLATION_METHODS)
    assert list(isolation["fences"]["properties"]) == list(policy.FENCES)
    assert sorted(ISOLATION_RANK, key=ISOLATION_RANK.__getitem__, reverse=True) == list(policy.LEVELS)
    assert set(policy.FENCE_PROBES) == set(policy.FENCES) and set(policy.METHODS) == set(policy.LEVELS)


def _find(doc: object, key: str) -> dict:
    """The first value under ``key`` anywhere in a JSON document (a dict)."""
    if isinstance(doc, dict):
        if key in doc and isinstance(doc[key], dict):
            return doc[key]
        for value in doc.values():
            found = _find(value, key)
            if found:
                return found
    elif isinstance(doc, list):
        for value in doc:
            found = _find(value, key)
            if found:
                return found
    return {}


# --- what the wheel ships --------------------------------------------------------------------------


def unshipped_packages(listed: Iterable[str], root: Path = PACKAGE) -> list[str]:
    """The package's folders with an ``__init__.py`` that pyproject.toml's ``packages`` leaves out: setuptools
    ships only the packages listed, so the installed gate (the pip CLI, the action's image) would lack them."""
    found = sorted(module_name(init.parent / "x.py").rpartition(".")[0] for init in root.rglob("__init__.py")
                   if "__pycache__" not in init.parts)
    return [name for name in found if name not in set(listed)]


def test_the_wheel_ships_every_package() -> None:
    import tomllib

    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert unshipped_packages(listed) == []
    # planted: the list without the fences' folder
    fence = "verdict_gate.boundary.fence"
    assert unshipped_packages([p for p in listed if p != fence]) == [fence]
