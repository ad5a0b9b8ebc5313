"""The isolation boundary (docs/design.md §8): the codec, the candidate worker and its sandbox.

Each test starts a real worker process (bubblewrap where the host allows it) over a candidate
package written to a temp dir, and talks to it through the same client the pytest plugin uses.
"""

from __future__ import annotations

import datetime as dt
import decimal
import fractions
import math
import os
import pathlib
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from verdict_gate.boundary import codec, proxy
from verdict_gate.boundary.fence import bwrap, child, host, launch, paths
from verdict_gate.boundary.fence.errors import Unavailable
from verdict_gate.boundary.fence.policy import FENCES, LEVELS, METHODS, Policy
from verdict_gate.boundary.proxy import handles, importer

CANDIDATE = '''
import collections, dataclasses, enum, os, sys

class BadInput(ValueError):
    pass

@dataclasses.dataclass
class Order:
    qty: int
    price: int

    def total(self):
        return self.qty * self.price

Point = collections.namedtuple("Point", "x y")

class Color(enum.Enum):
    RED = 1

class LyingInt(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

class EqualsAll:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__

class Num:
    def __init__(self, n):
        self.n = n
    def __eq__(self, other):
        return other == self.n
    __hash__ = object.__hash__

def equal(a, b):
    return a == b

class Box:
    def __init__(self, items):
        self.items = list(items)
    def __len__(self):
        return len(self.items)
    def __iter__(self):
        return iter(self.items)

def echo(value):
    return value

def apply(f, *args, **kwargs):
    return f(*args, **kwargs)

def lying_int():
    return LyingInt(5)

def equals_all():
    return EqualsAll()

def make_order(qty, price):
    return Order(qty, price)

def total(order):
    return order.total()

def check(x):
    if x < 0:
        raise BadInput(f"negative: {x}")
    return x

def leave():
    raise SystemExit(0)

def die():
    os._exit(3)

def huge(size):
    return "x" * size

def garbage():
    os.write(int(sys.argv[2]), b"\\x00\\x00\\x00\\x05nope!")
    return 1

def flood():
    os.write(int(sys.argv[2]), b"\\xff\\xff\\xff\\xff" + b"x" * 65536)
    return 1

def write_tree(name):
    with open(name, "w") as fh:
        fh.write("x")
    return True

def exists(path):
    return os.path.exists(path)

def bytecode_prefix():
    return sys.pycache_prefix

@dataclasses.dataclass(frozen=True)
class Odd:
    cents: int

    def __init__(self, cents, scale=1):
        object.__setattr__(self, "cents", cents * scale)

def a_module():
    import wave  # a module the oracle process has not imported
    return wave

def connect():
    import socket
    socket.create_connection(("127.0.0.1", 9), timeout=1)
'''


@pytest.fixture
def candidate(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "src" / "calc").mkdir(parents=True)
    (tree / "src" / "calc" / "__init__.py").write_text("")
    (tree / "src" / "calc" / "ops.py").write_text(textwrap.dedent(CANDIDATE))
    return tree


def _skip_unless(level: str) -> None:
    """Skip where the host cannot give ``level`` (doctor's answer); a worker that then fails to start is a
    failure of the test, never a skip."""
    try:
        host.method(level)
    except Unavailable as exc:
        pytest.skip(f"isolation level {level} unavailable here: {exc}")


def _module(client: proxy.Client, name: str) -> Any:
    """A proxy module without installing the import hook in the test process."""
    client.request({"op": "import", "mod": name})
    module = proxy.ProxyModule(name, client)
    return module


@pytest.fixture(params=["sandbox", "process"])
def ops(request: pytest.FixtureRequest, candidate: Path, tmp_path: Path, worker_bytecode: str) -> Any:
    secret = tmp_path / "scratch"
    secret.mkdir()
    (secret / "results.jsonl").write_text("{}")
    client = proxy.Client(request.param, [str(candidate / "src")], str(candidate), scratch=str(secret),
                          secrets=[str(secret / "results.jsonl")], bytecode=worker_bytecode)
    _skip_unless(request.param)
    client.start()
    yield _module(client, "calc.ops")
    client.close()


VALUES = [
    None, True, False, 0, -7, 2**200, -(2**70), 1.5, -0.0, math.inf, -math.inf, "", "é\u2028\x00", b"\x00\xff",
    bytearray(b"ab"), [1, [2, (3,)]], (1, "a"), {"a": {1, 2}, 3: frozenset({4})}, set(), complex(1, -2),
    decimal.Decimal("1.10"), fractions.Fraction(1, 3), dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC),
    dt.date(2026, 12, 1), dt.time(12, 30), dt.timedelta(days=1, microseconds=5), uuid.UUID(int=7),
    pathlib.PurePosixPath("a/b"), pathlib.Path("/tmp/x"),
]


@pytest.mark.parametrize("value", VALUES, ids=[f"{type(v).__name__}-{i}" for i, v in enumerate(VALUES)])
def test_plain_values_cross_by_value_with_their_exact_type(ops: Any, value: Any) -> None:
    got = ops.echo(value)
    assert type(got) is type(value)
    assert got == value


def test_nan_crosses_as_a_float_that_equals_nothing(ops: Any) -> None:
    got = ops.echo(math.nan)
    assert type(got) is float and math.isnan(got)


def _judging(ops: Any) -> None:
    """This test file is the oracle's code, as a pack's test file is in a gate run (probes look for it)."""
    client = importer._own(ops)["_vg_client"]
    client.oracle_roots = [str(Path(__file__).resolve().parent) + "/"]


def test_an_int_subclass_crosses_as_its_value_and_answers_its_own_operators(ops: Any) -> None:
    got = ops.lying_int()
    assert type(got) is not int and isinstance(got, int) and type(got).__name__ == "LyingInt"
    assert got != 6 and got < 7 and hash(got) == hash(5)  # int's own, which the class does not override
    assert str(got) == "5" and f"{got}" == "5"
    assert isinstance(got, ops.LyingInt)  # and it is still the candidate's class
    assert ops.equal(got, 6) is True  # its __eq__ is the candidate's answer, as in plain Python ...
    _judging(ops)
    with pytest.raises(handles.LyingEquality, match="lying_equality"):  # ... caught where the oracle judges by it
        assert got == 5


def test_an_object_equal_to_everything_is_caught_where_the_oracle_judges(ops: Any) -> None:
    liar = ops.equals_all()
    assert ops.equal(liar, 1) is True  # the candidate's answer, as in plain Python, where the oracle does not judge
    _judging(ops)
    for compare in (lambda: liar == 1, lambda: liar != "x", lambda: liar == []):
        with pytest.raises(handles.LyingEquality, match="lying_equality") as caught:
            compare()
        assert getattr(caught.value, "__verdict_gate_origin__", None) == "candidate"
    with pytest.raises(TypeError):  # no ordering of its own: as plain Python says
        _ = liar < 3
    honest = ops.Num(5)
    assert honest == 5 and honest != 6 and 5 == honest  # noqa: SIM300 - an honest __eq__ passes its probe, both ways


def test_records_compare_by_value_and_construct_in_the_worker(ops: Any) -> None:
    order = ops.make_order(2, 5)
    assert order == ops.Order(2, 5) and order != ops.Order(2, 6)
    assert isinstance(order, ops.Order)
    assert (order.qty, order.price) == (2, 5)
    assert order.total() == 10 and ops.total(order) == 10  # methods run in the worker
    point = ops.echo(ops.Point(1, 2))
    assert point == (1, 2) and point.x == 1
    assert ops.echo(ops.Color.RED) == ops.Color.RED


def test_exceptions_are_raised_again_as_builtin_or_mirrored_classes(ops: Any) -> None:
    with pytest.raises(ops.BadInput, match="negative: -1"):
        ops.check(-1)
    with pytest.raises(ValueError):
        ops.check(-2)
    with pytest.raises(ZeroDivisionError):
        ops.echo(1) / ops.echo(0)
    with pytest.raises(proxy.CandidateBaseException, match="SystemExit"):
        ops.leave()  # outside a test's call (collection, a fixture) pytest would stop on a SystemExit
    importer._client_of(ops).as_itself = True  # what the plugin sets while a test's function runs
    with pytest.raises(SystemExit) as exit_info:
        ops.leave()  # as itself (pytest reports an uncaught one as the test's failure)
    assert exit_info.value.code == 0 and exit_info.value.__verdict_gate_origin__ == "candidate"


def test_handles_forward_len_iteration_and_attributes(ops: Any) -> None:
    box = ops.Box([3, 1, 2])
    assert len(box) == 3 and sorted(box) == [1, 2, 3] and box.items == [3, 1, 2]


def test_an_oracle_function_crosses_by_reference(ops: Any) -> None:
    def double(x: int) -> int:
        return 2 * x

    assert ops.echo(double) is double  # held by reference in the worker, the same object when it comes back
    assert ops.apply(double, 21) == 42  # called back in the oracle process


@pytest.mark.parametrize("attack", ["die", "garbage", "flood"])
def test_a_worker_that_dies_or_sends_garbage_is_a_recorded_crash(ops: Any, attack: str) -> None:
    client = importer._client_of(ops)
    with pytest.raises(proxy.WorkerCrashed):
        getattr(ops, attack)()
    assert client.failure  # recorded out of band: catching the exception cannot hide it
    with pytest.raises(proxy.WorkerCrashed):
        ops.echo(1)  # the rest of the property fails fast
    client.new_property()
    assert _module(client, "calc.ops").echo(41) == 41  # the next property gets a fresh worker


def test_an_oversized_answer_is_a_crash_not_a_read(ops: Any) -> None:
    client = importer._client_of(ops)
    with pytest.raises((proxy.WorkerCrashed, MemoryError)):
        ops.huge(codec.MAX_MESSAGE + 1)
    client.new_property()
    with pytest.raises((proxy.WorkerCrashed, MemoryError)):
        ops.huge(1 << 30)  # 1 GiB: the worker's memory limit or the frame cap stops it


def test_stale_handles_after_a_restart_fail_closed(ops: Any) -> None:
    client = importer._client_of(ops)
    box = ops.Box([1])
    with pytest.raises(proxy.WorkerCrashed):
        ops.die()
    client.new_property()
    with pytest.raises(proxy.WorkerCrashed, match="restarted"):
        len(box)


def test_the_sandbox_fences_hold(candidate: Path, tmp_path: Path) -> None:
    secret = tmp_path / "scratch"
    secret.mkdir()
    (secret / "results.jsonl").write_text("{}")
    client = proxy.Client("sandbox", [str(candidate / "src")], str(candidate), scratch=str(secret),
                          secrets=[str(secret / "results.jsonl")])
    _skip_unless("sandbox")
    client.start()
    try:
        ops = _module(client, "calc.ops")
        assert client.info["level"] == "sandbox" and client.info["method"] in METHODS["sandbox"]
        assert client.info["fences"] == {f: True for f in FENCES}
        assert all(p["held"] for p in client.info["probes"].values()), client.info["probes"]
        assert not ops.exists(str(secret / "results.jsonl"))
        with pytest.raises(OSError):
            ops.connect()
        with pytest.raises(OSError):
            ops.write_tree(str(candidate / "planted.py"))
        assert not (candidate / "planted.py").exists()
    finally:
        client.close()


def test_codec_refuses_malformed_frames() -> None:
    read, write = os.pipe()
    try:
        os.write(write, b"\x00\x00\x00\x03{x}")
        with pytest.raises(codec.ProtocolError, match="not valid JSON"):
            codec.Reader(read).frame()
        os.write(write, b"\x7f\xff\xff\xff")
        with pytest.raises(codec.ProtocolError, match="over the"):
            codec.Reader(read).frame(cap=1024)
    finally:
        os.close(read)
        os.close(write)
    with pytest.raises(codec.ProtocolError):
        codec.decode({"zz": 1}, lambda tag, p: None)
    with pytest.raises(codec.ProtocolError):
        codec.decode({"d": [[[1], 2]]}, lambda tag, p: None)  # an unhashable key


def test_codec_carries_a_signature_and_refuses_a_malformed_one() -> None:
    import inspect

    def f(a: int, /, b: Money = 2, *rest: str, key: float = 0.5, **extra: bool) -> str:  # noqa: F821
        return ""

    def no_fallback(obj: object) -> None:
        raise codec.Unencodable(repr(obj))

    def builtin_class(tag: str, p: Any) -> Any:  # what a side's make does with a class it names: here, builtins
        return {"int": int, "str": str, "float": float, "bool": bool}[p]

    def classes(obj: object) -> Any:
        return {"h": obj.__name__} if isinstance(obj, type) else no_fallback(obj)

    sig = inspect.signature(f)
    again = codec.decode(codec.parse(codec.dumps(codec.encode(sig, classes)).encode()), builtin_class)
    assert type(again) is inspect.Signature and again == sig and str(again) == str(sig)
    plain = inspect.Signature([inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    assert codec.decode(codec.encode(plain, no_fallback), builtin_class) == plain
    for bad in ([[["x", 9, [], []]], []],  # no such kind
                [[["not a name", 1, [], []]], []],
                [[["b", 1, [], []], ["a", 0, [], []]], []],  # positional-only after positional-or-keyword
                [[["x", 1, [1, 2], []]], []],  # a default box of two
                [[["x", 1, [], []]], "str"],
                [[["x", 1, []]], []]):
        with pytest.raises(codec.ProtocolError):
            codec.decode({"sg": bad}, builtin_class)


def test_codec_sends_a_fresh_link_with_its_state_once() -> None:
    inner: list[int] = [1]
    outer = {"a": inner, "b": inner, "c": [2]}
    links = {id(outer): 1, id(inner): 2}
    fresh = {id(inner)}

    def no_fallback(obj: object) -> None:
        raise codec.Unencodable(repr(obj))

    tree = codec.encode(outer, no_fallback, links=links, top=False, fresh=fresh)
    # The outer container's own state; the inner link with its state the first time, by id after; an
    # unlinked list by value.
    assert tree == {"d": [["a", {"lk": [2, [1]]}], ["b", {"lk": 2}], ["c", [2]]]} and fresh == set()
    assert codec.encode(outer, no_fallback, links=links, top=False) == \
        {"d": [["a", {"lk": 2}], ["b", {"lk": 2}], ["c", [2]]]}


def test_describe_host_names_every_level() -> None:
    found = host.describe_host()
    assert set(found["levels"]) == set(LEVELS)
    assert found["levels"]["process"] == {"available": True, "method": "process",
                                          "claims": {"network": False, "filesystem": False, "processes": False,
                                                     "limits": True}}


def test_doctor_reports_every_level_as_text_and_json() -> None:
    import json

    from conftest import cli

    text = cli("doctor")
    assert text.returncode in (0, 4) and "sandbox" in text.stdout and "Traceback" not in text.stderr
    doc = json.loads(cli("doctor", "--format", "json").stdout)
    assert set(doc["levels"]) == {"sandbox", "process", "none"}
    assert (text.returncode == 0) == doc["levels"]["sandbox"]["available"]


def test_the_interpreter_is_bound_back_under_every_tmpfs(tmp_path: Path) -> None:
    """A gate installed in a clone under /tmp (or a hidden dir) must still find its interpreter and
    its worker inside the sandbox, whose /tmp is a private tmpfs."""
    pol = Policy("sandbox", "bwrap", {}, userns=True, limits={"tmp_bytes": 1 << 20})
    argv = bwrap.command(pol, "bwrap", readonly=[str(tmp_path)])
    binds = {argv[i + 1] for i, arg in enumerate(argv) if arg == "--ro-bind"}
    system = tuple("/" + d for d in paths.SYSTEM_DIRS)
    needed = [*paths.interpreter_dirs(), paths.BOUNDARY, str(tmp_path)]
    for path in needed:
        real = os.path.realpath(path)
        assert real in binds or real.startswith(tuple(s + "/" for s in system)), f"{path} is not in the sandbox"
    # Nothing of a socket directory, a home, the host's /tmp or the root itself
    assert not binds & {"/", "/run", "/var", "/var/run", "/tmp", "/home", "/root", "/opt", "/mnt"}


def test_a_record_built_in_a_property_holds_the_oracle_values(ops: Any) -> None:
    assert ops.Odd(5).cents == 5
    with pytest.raises(proxy.NotCrossable, match="not its fields"):
        ops.Odd(5, 10)  # what its constructor makes of `scale` is the candidate's data


def test_the_worker_cannot_make_the_oracle_import_a_module(ops: Any) -> None:
    assert "wave" not in sys.modules
    with pytest.raises(proxy.WorkerCrashed, match="has not imported"):
        ops.a_module()
    assert "wave" not in sys.modules


@pytest.mark.parametrize("level", ["sandbox", "process"])
def test_the_worker_reads_the_oracles_bytecode_of_the_interpreter_and_no_other(candidate: Path, tmp_path: Path,
                                                                               level: str) -> None:
    """The oracle process's cache spares each bubblewrap worker compiling the standard library, and
    shows it only the interpreter's and the worker's part, never a pack's bytecode (earlier runs
    leave their conftest.py's there) nor bytecode for a candidate module. A worker that could write
    the cache (level `process`) or a shared /tmp (`uid`) reads no bytecode at all."""
    cache = tmp_path / "cache"
    shown = cache / sys.base_prefix.lstrip("/") / "marker.cpython-311.pyc"
    pack = cache / "dev" / "shm" / "verdict-gate-x" / "pack" / "conftest.cpython-311-pytest.pyc"
    planted = cache / str(candidate / "src" / "calc").lstrip("/") / "ops.cpython-311.pyc"
    for path in (shown, pack, planted):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"not bytecode")
    dirs = paths.bytecode_dirs(str(cache))
    assert any(os.path.realpath(shown).startswith(d + "/") for d in dirs)
    assert not any(os.path.realpath(p).startswith(d + "/") for d in dirs for p in (pack, planted))
    assert paths.bytecode_dirs(None) == [] and paths.bytecode_dirs("relative/cache") == []
    client = proxy.Client(level, [str(candidate / "src")], str(candidate), bytecode=str(cache))
    _skip_unless(level)
    client.start()
    try:
        ops = _module(client, "calc.ops")  # a planted ops.pyc that loaded would have raised here
        if client.info["method"] in METHODS["sandbox"]:
            assert ops.bytecode_prefix() == str(cache)
            assert ops.exists(str(shown))
            assert client.info["fences"]["filesystem"] is True
            assert not ops.exists(str(pack)) and not ops.exists(str(planted))
        else:  # the host's /tmp and the gate's cache are writable there: no bytecode is read at all
            assert ops.bytecode_prefix() == child.NO_BYTECODE
    finally:
        client.close()


def test_the_oracle_compiles_the_workers_own_modules_into_its_cache_once(tmp_path: Path) -> None:
    """A fenced worker reads the oracle's bytecode cache but never writes it: the oracle process compiles what
    only the worker imports (its own code, pickle …) there, so no worker start compiles them afresh; a stale
    entry (its source changed) is compiled again, and a process that writes no bytecode writes none."""
    cache = tmp_path / "cache"
    code = ("import sys; from verdict_gate.boundary.fence import launch; launch.warm_bytecode(sys.pycache_prefix); "
            "launch.warm_bytecode(sys.pycache_prefix)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, env={**env, "PYTHONPYCACHEPREFIX": str(cache)})
    for name in launch.WORKER_MODULES:
        src = os.path.join(paths.BOUNDARY, f"{name}.py")
        pyc = cache / src.lstrip("/").replace(".py", f".{sys.implementation.cache_tag}.pyc")
        assert launch._fresh(str(pyc), src), name
    pickle_pyc = next(cache.rglob(f"pickle.{sys.implementation.cache_tag}.pyc"))
    assert launch._fresh(str(pickle_pyc), str(pickle_pyc).replace(str(cache), "", 1)
                          .replace(f".{sys.implementation.cache_tag}.pyc", ".py"))
    worker_src = os.path.join(paths.BOUNDARY, f"{launch.WORKER_MODULES[0]}.py")  # the worker's own code
    worker_pyc = cache / worker_src.lstrip("/")
    worker_pyc = worker_pyc.with_name(f"{worker_pyc.stem}.{sys.implementation.cache_tag}.pyc")
    worker_pyc.write_bytes(worker_pyc.read_bytes()[:8] + bytes(8))  # as if its source had changed since
    assert not launch._fresh(str(worker_pyc), worker_src)
    subprocess.run([sys.executable, "-c", code], check=True, env={**env, "PYTHONPYCACHEPREFIX": str(cache)})
    assert launch._fresh(str(worker_pyc), worker_src)
    other = tmp_path / "other"
    subprocess.run([sys.executable, "-B", "-c", code], check=True, env={**env, "PYTHONPYCACHEPREFIX": str(other)})
    assert not other.exists()
