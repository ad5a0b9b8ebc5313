"""Symmetric references across the isolation boundary (docs/design.md §8.1, "Who answers what").

Each test starts a real candidate worker (bubblewrap where the host allows it) over a candidate module
written to a temp dir and talks to it through the client the pytest plugin uses: oracle objects go to
the worker by reference and are called back, candidate iterators come back in batches where nothing of
the oracle runs between two items, what plain pytest sees of the candidate (warnings, output, seeded
``random``, ``SystemExit``) arrives as itself, and the oracle keeps its own control flow.
"""

from __future__ import annotations

import collections
import copy
import itertools
import pickle
import random
import sys
import textwrap
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from verdict_gate.boundary import codec, proxy
from verdict_gate.boundary.fence import host
from verdict_gate.boundary.fence.errors import Unavailable
from verdict_gate.boundary.proxy import doctests, hooks, records, textguard

CANDIDATE = '''"""The candidate's helpers (a module docstring: text, like a function's)."""
import contextlib, dataclasses, enum, random, sys, warnings

def echo(value):
    return value

def apply(f, *args, **kwargs):
    return f(*args, **kwargs)

def wrapped(f):
    import functools
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return functools.update_wrapper(wrapper, f)

def sort_by(items, key):
    return sorted(items, key=key)

def take(iterator, n):
    return [next(iterator) for _ in range(n)]

def consume(iterable):
    return list(iterable)

def each(iterator):
    out = []
    for item in iterator:  # candidate code runs between two items: not list()'s drain
        out.append(item)
    return out

def between(iterator, f):
    first = next(iterator)
    f()
    return [first, next(iterator)]

def upto_error(iterator):
    out = []
    try:
        for item in iterator:
            out.append(item)
    except ZeroDivisionError:
        out.append("ZeroDivisionError")
    return out

def count_up(n):
    yield from range(n)

def count_then_raise(n):
    yield from range(n)
    raise ValueError(f"after {n}")

def nested(outer, inner):
    return outer(lambda x: inner(x) + 1)

def swallow(f):
    try:
        f()
    except BaseException:
        return "swallowed"

class Guard:
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return True  # suppresses whatever the body raised

def fails():
    raise KeyError("the candidate's")

def warn(message):
    warnings.warn(message, DeprecationWarning, stacklevel=2)
    return 1

class CustomWarning(UserWarning):
    pass

def warn_custom():
    warnings.warn("custom", CustomWarning)
    return 2

def shout(text):
    print(text)
    print("err:" + text, file=sys.stderr)
    return len(text)

def draw():
    return random.random()

def stop():
    raise StopIteration("not from __next__")

def leave(code):
    sys.exit(code)

def interrupt():
    raise KeyboardInterrupt("stop")

class Coded(Exception):
    def __init__(self, code):
        super().__init__(f"code {code}")
        self.code = code

def raise_coded(code):
    raise Coded(code)

class Base:
    @classmethod
    def make(cls, x):
        return cls(x)
    def __init__(self, x):
        self.x = x
    def double(self):
        return 2 * self.x
    def hook(self):
        return "base"
    def call_hook(self):
        return self.hook()

class Path:
    """tinydb's Query: every attribute name is a step of a path, a new instance of the same class."""
    def __init__(self):
        self.steps = ()
    def __getattr__(self, name):
        step = type(self)()
        step.steps = self.steps + (name,)
        return step
    def __call__(self, doc):
        for name in self.steps:
            doc = doc[name]
        return doc

class Keyed:
    """python-semver's Version: equal to a dict it can be built from (``Version(**other)``)."""
    def __eq__(self, other):
        return isinstance(other, dict) and Keyed.build(**other)
    @staticmethod
    def build(**fields):
        return fields == {"a": 1}

class Level(enum.Enum):
    LOW = "low"
    HIGH = "low"
    MID = "mid"

class Size(enum.IntEnum):
    SMALL = 1

@dataclasses.dataclass(frozen=True)
class Money:
    cents: int
    currency: str = dataclasses.field(compare=False)

def make_money(cents, currency):
    return Money(cents, currency)

class _Cheap:
    pass

@dataclasses.dataclass(frozen=True)
class Price:
    cents: int
    def __new__(cls, *args, **kwargs):
        return object.__new__(_Counterfeit)

@dataclasses.dataclass(frozen=True)
class _Counterfeit(Price):
    def __eq__(self, other):
        return True

TABLE = {"a": 1}
NAMES = {"x"}

NESTED = [[1], [2]]

def nested_repr():
    return repr(NESTED)

def table():
    return dict(TABLE)

def hook_value():
    return 1

def call_hook_value():
    return hook_value()

class Thing:
    pass

THING = Thing()

def the_thing():
    return THING

def peek(obj, name):
    return getattr(obj, name)

def store_via(get, key):
    get()[key] = key * 10

def stash(obj, name, value):
    return obj.__dict__.setdefault(name, value)  # writes the instance's own dict, as cachetools' descriptors do

def put(obj, name, value):
    setattr(obj, name, value)

def is_class(obj):
    return isinstance(obj, type)

def is_mapping(obj):
    import collections.abc
    return isinstance(obj, collections.abc.Mapping)

def signature_of(f):
    import inspect
    try:
        return str(inspect.signature(f))
    except (TypeError, ValueError) as exc:
        return type(exc).__name__

def signature_is_a_descriptor(f):
    return hasattr(f, "__signature__") and hasattr(f.__signature__, "__get__")

class Composed:
    """Answers class attributes as toolz's Compose does."""
    LIMIT = 3
    __wrapped__ = None

    @classmethod
    def make(cls):
        return cls()

def local_class_instance():
    class Local:
        LIMIT = 4
    return Local()

class Registry(type):
    """A metaclass of the candidate's."""

class Registered(metaclass=Registry):
    pass

class Documented:
    """A class whose docstring a doctest would run.

    >>> raise SystemExit("a doctest of the candidate's ran in the oracle")
    """

def documented():
    """>>> raise SystemExit("a doctest of the candidate's ran in the oracle")"""

def doc_text(n):
    return f">>> {n}\\n{n}\\n"

class Payload:
    """A repr that is code: eval(repr(obj)) in the oracle would run it there."""
    def __repr__(self):
        return "  __import__('sys').exit('candidate text ran in the worker')  "

class Bag(dict):
    def total(self):
        return sum(self.values())

class Stack(list):
    def top(self):
        return self[-1]

class Cur(str):
    """A str whose repr is code (found by a red-team run): a record's repr, built in the oracle, holds it."""
    def __repr__(self):
        return "__import__('os').getpid()"

@dataclasses.dataclass(frozen=True)
class Rec:
    cur: str
    def __post_init__(self):
        object.__setattr__(self, "cur", Cur(self.cur))

def make_rec(cur):
    return Rec(cur)

class Blob(bytes):
    pass

class HashedKey(tuple):
    """cachetools' _HashedTuple: a tuple that caches its hash in its __dict__, which pickling leaves out."""
    def __hash__(self):
        try:
            return self.__hashvalue
        except AttributeError:
            self.__hashvalue = tuple.__hash__(self)
            return self.__hashvalue
    def __getstate__(self):
        return {}

def hashed_key(*args):
    return HashedKey(args)

def blob(n):
    import pickle
    return Blob(pickle.dumps(Curried(n)))

class Point:
    def __init__(self, x):
        self.x = x
    def __eq__(self, other):
        return isinstance(other, Point) and self.x == other.x
    def __repr__(self):
        return f"Point({self.x!r})"

def code_lines():
    yield "x = 1"
    yield "raise SystemExit('candidate text ran in the oracle')"

def pickled(n):
    import pickle
    return pickle.dumps(Curried(n))

_CALLS = []

def calls():
    """How many times this worker was asked (a fresh worker starts from one)."""
    _CALLS.append(1)
    return len(_CALLS)

def annotated(a: int, b: "__import__('os').getpid()" = 2, *rest, key=None) -> str:
    return "a"

class SignedCall:
    """A callable with a __signature__ of its own (toolz's Compose)."""
    def __call__(self, *args, **kwargs):
        return None
    @property
    def __signature__(self):
        import inspect
        return inspect.Signature([inspect.Parameter("first", inspect.Parameter.POSITIONAL_ONLY)],
                                 return_annotation=float)

def module_attr(module, name):
    """What candidate code finds importing ``module`` by name and reading ``name`` (toolz's curry, pickled)."""
    import importlib
    try:
        value = getattr(importlib.import_module(module), name)
    except (AttributeError, ImportError) as exc:
        return ["missing", type(exc).__name__]
    return ["found", value is echo]

def chunk_sums(n, map=map):
    """Sums of chunks of 0..n-1 through the given map (toolz's fold): a generator of chunks and a partial."""
    import functools
    chunks = (list(range(i, min(i + 3, n))) for i in range(0, n, 3))
    return list(map(functools.partial(_total, 100), chunks))

def _total(start, xs):
    return start + sum(xs)

class Curried:
    """Takes its function's __module__ as its own, as toolz's curry does."""
    def __init__(self, func):
        self.func = func
        self.__module__ = getattr(func, "__module__", None)

def swallow_then_forge(f, key, value):
    """A hostile worker: swallows the oracle's assertion, then adds ``key`` to the frame it answers with."""
    worker = f._vg_worker
    try:
        f()
    except BaseException:
        pass
    send = worker._sync_out
    def forged(frame):
        del worker._sync_out
        send(frame)
        frame[key] = value
    worker._sync_out = forged
    return "returned normally"

def grab_ahead(ref, n):
    """A hostile worker asking the oracle to read any iterator ahead."""
    items, end, ahead = ref._vg_worker.read_ahead(ref._vg_id, n)
    return [len(items), ahead]

def forge(ref, do, name):
    """What a hostile worker can ask about an oracle object it holds: anything the worker-side
    proxy would refuse, asked of the oracle directly."""
    try:
        return ["answered", repr(ref._vg_worker.callback(ref._vg_id, do, [], {"name": name}))[:200]]
    except BaseException as exc:
        return ["refused", type(exc).__name__]
'''

STAR = '''
__all__ = ["sum", "len", "apply", "answer"]

def sum(xs):
    return 42

def len(xs):
    return 42

def apply(f):
    return "candidate"

answer = 7
'''


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("refs") / "tree"
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text("")
    (root / "src" / "calc" / "lib.py").write_text(textwrap.dedent(CANDIDATE))
    (root / "src" / "calc" / "star.py").write_text(textwrap.dedent(STAR))
    (root / "README.md").write_text(">>> from calc.lib import echo\n>>> echo(2)\n3\n")  # one example of two fails
    return root


def client_tree(client: proxy.Client) -> Path:
    return Path(client.cwd)


def _module(client: proxy.Client, name: str) -> Any:
    client.request({"op": "import", "mod": name})
    module = proxy.ProxyModule(name, client)
    return module


@pytest.fixture
def client(tree: Path, tmp_path: Path, worker_bytecode: str) -> Any:
    try:
        host.method("sandbox")
    except Unavailable as exc:  # the host cannot give it; a worker that fails to start is a failure
        pytest.skip(f"no sandbox here: {exc}")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    client = proxy.Client("sandbox", [str(tree / "src")], str(tree), scratch=str(scratch), bytecode=worker_bytecode)
    client.oracle_roots = [str(Path(__file__).parent) + "/"]  # this file plays the pack
    client.start()
    client.as_itself = True  # what the plugin sets while a test's function runs
    seed, setstate = hooks._follow_random(client)
    yield client
    random.seed, random.setstate = seed, setstate
    client.close()


@pytest.fixture
def lib(client: proxy.Client) -> Any:
    return _module(client, "calc.lib")


class _CountingReader:
    """The oracle's reader of the worker's pipe, counting the frames it reads (answers and callbacks)."""

    def __init__(self, reader: Any, counter: list[int]) -> None:
        self.reader, self.counter = reader, counter

    def frame(self, *args: Any, **kwargs: Any) -> Any:
        self.counter[0] += 1
        return self.reader.frame(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reader, name)


def _count_round_trips(client: proxy.Client) -> list[int]:
    """Count the frames the oracle reads from the worker: one per round trip, either way."""
    counter = [0]
    client.ready()
    client.reader = _CountingReader(client.reader, counter)  # type: ignore[assignment]
    return counter


# --- callbacks -------------------------------------------------------------------------------------------


def test_oracle_callables_are_called_back_in_the_oracle_process(lib: Any) -> None:
    seen: list[int] = []

    def record(x: int) -> int:
        seen.append(x)  # runs here: the oracle's own list changes
        return x * 2

    assert lib.apply(record, 21) == 42 and seen == [21]
    assert lib.sort_by([3, 1, 2], key=lambda v: -v) == [3, 2, 1]
    assert lib.sort_by(["b", "A", "c"], key=str.lower) == ["A", "b", "c"]  # the standard library's: by name
    assert lib.echo(record) is record  # the same object comes back


def test_the_same_oracle_object_passed_again_and_again_stays_reachable(lib: Any) -> None:
    # Each call drops the worker's reference of the last one while the next one hands it over again: the
    # release must never win over the new reference (or the callback finds nothing).
    def triple(x: int) -> int:
        return 3 * x

    assert [lib.apply(triple, i) for i in range(20)] == [3 * i for i in range(20)]
    box = lib.Base(1)
    assert [lib.peek(box, "x") for _ in range(20)] == [1] * 20  # and a candidate object, the other way


def test_callbacks_are_re_entrant(lib: Any) -> None:
    # oracle → candidate → oracle callback → candidate again → oracle callback
    def inner(x):
        return (lib.apply(lambda y: y + 100, x))
    assert lib.nested(lambda cb: cb(1) * 10, inner) == 1020


def test_an_exception_an_oracle_callback_raises_comes_back_as_itself(lib: Any) -> None:
    error = ZeroDivisionError("the oracle's")

    def boom() -> None:
        raise error

    with pytest.raises(ZeroDivisionError) as info:
        lib.apply(boom)
    assert info.value is error


def test_an_assertion_the_candidate_swallows_is_raised_at_the_call(lib: Any) -> None:
    def check() -> None:
        raise AssertionError("the oracle says no")

    with pytest.raises(AssertionError, match="the oracle says no"):
        lib.swallow(check)  # candidate code caught it; the oracle's judgement stands


def _recorded(pulled: list[int]) -> Any:
    """0 to 9, each recorded in ``pulled`` as it is made: an oracle iterator whose reading has effects."""
    for i in range(10):
        pulled.append(i)
        yield i


def test_an_oracle_iterator_is_taken_one_item_at_a_time(lib: Any) -> None:
    it = iter([1, 2, 3, 4])
    assert lib.take(it, 2) == [1, 2]
    assert next(it) == 3  # the candidate took exactly two
    pulled: list[int] = []
    gen = _recorded(pulled)
    assert lib.take(gen, 3) == [0, 1, 2] and pulled == [0, 1, 2]


def test_list_of_an_oracle_iterator_in_the_worker_takes_it_in_batches(lib: Any, client: proxy.Client) -> None:
    trips = _count_round_trips(client)
    assert lib.consume(iter(range(5000))) == list(range(5000))
    assert trips[0] < 20, trips[0]


def test_a_candidate_loop_reads_a_plain_oracle_iterator_ahead(lib: Any, client: proxy.Client) -> None:
    # cachetools' update((i, i) for i in range(2000)): candidate code between two items, yet a handful of
    # round trips, for a generator expression over a range and for the iterators it may read ahead.
    trips = _count_round_trips(client)
    assert lib.each((i, i) for i in range(2000)) == [(i, i) for i in range(2000)]
    assert lib.each(iter(range(3000))) == list(range(3000))
    assert lib.each(iter("abcdef" * 300)) == list("abcdef" * 300)
    assert trips[0] < 50, trips[0]
    trips[0] = 0
    doubled = 2

    def double(i: int) -> int:
        return doubled * i

    assert lib.each(double(i) for i in range(50)) == [2 * i for i in range(50)]  # it reads names: one by one
    assert trips[0] > 50, trips[0]


def test_reading_ahead_moves_the_oracle_s_iterator_only_by_what_candidate_code_took(lib: Any) -> None:
    squares = (i * i for i in range(10))
    assert lib.take(squares, 3) == [0, 1, 4]
    assert next(squares) == 9  # the oracle's own next item: nothing was lost to the read ahead
    assert lib.take(squares, 2) == [16, 25]
    assert list(squares) == [36, 49, 64, 81]
    numbers = iter(range(10))
    # The oracle's code takes an item while the worker holds what it read ahead: the worker forgets it.
    assert lib.between(numbers, lambda: next(numbers)) == [0, 2]
    assert next(numbers) == 3


def test_a_worker_cannot_make_the_oracle_read_ahead_what_has_effects(lib: Any) -> None:
    pulled: list[int] = []
    gen = _recorded(pulled)
    assert lib.grab_ahead(gen, 500) == [1, False] and pulled == [0]  # one item, as a plain next() takes
    plain = (i + 1 for i in range(10))
    assert lib.grab_ahead(plain, 500) == [10, True]
    assert next(plain) == 1  # read from a copy: the oracle's own has not moved


@pytest.mark.parametrize(("key", "value"), [("took", [[1, 2, 3]]), ("took", 5), ("rel", 5), ("sync", 5),
                                            ("kept", 5)])
def test_a_malformed_frame_is_a_crash_not_an_exception_of_the_oracle_s(lib: Any, client: proxy.Client, key: str,
                                                                      value: Any) -> None:
    # The forged part must neither hide the oracle's swallowed assertion behind an exception a test could
    # expect (pytest.raises(TypeError)) nor go unrecorded: the worker is crashed, out of band.
    def check() -> None:
        raise AssertionError("the oracle says no")

    with pytest.raises(proxy.WorkerCrashed, match="malformed"):
        lib.swallow_then_forge(check, key, value)
    assert client.failure is not None


def test_a_forked_child_of_the_oracle_gets_a_worker_of_its_own(lib: Any) -> None:
    # A child of the oracle's (a multiprocessing pool's, forked) holds a copy of its pipes: it never writes a
    # frame on the parent's channel (it would race the parent's) nor kills the parent's worker; it starts a
    # worker of its own. A handle of the parent's worker is stale there.
    import os

    stale = lib.Curried(5)
    before = lib.calls()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what calls did, and leave without running anything of pytest's
        said = []
        for call in (lambda: lib.echo(1), lambda: lib.calls(), lambda: stale.func):
            try:
                said.append(repr(call()))
            except BaseException as exc:
                said.append(type(exc).__name__)
        os.write(write, " ".join(said).encode()[:500])
        os._exit(0)
    os.close(write)
    said = os.read(read, 600)
    os.close(read)
    os.waitpid(pid, 0)
    assert said.split() == [b"1", b"1", b"WorkerCrashed"], said  # a fresh worker: its first call
    assert lib.echo(2) == 2 and lib.calls() == before + 1  # the oracle's own channel and worker, intact
    assert stale.func == 5


def test_reading_ahead_stops_where_the_oracle_s_generator_raises(lib: Any) -> None:
    quotients = (12 // (i - 3) for i in range(6))
    assert lib.upto_error(quotients) == [-4, -6, -12, "ZeroDivisionError"]
    with pytest.raises(StopIteration):  # the oracle's generator raised too, so it is finished, as in one process
        next(quotients)


# --- iteration of candidate objects ----------------------------------------------------------------------


def test_list_of_a_candidate_generator_is_a_handful_of_round_trips(lib: Any, client: proxy.Client) -> None:
    trips = _count_round_trips(client)
    assert list(lib.count_up(10_000)) == list(range(10_000))
    assert trips[0] < 30, trips[0]
    trips[0] = 0
    assert sorted(lib.count_up(3000), reverse=True)[:2] == [2999, 2998]
    assert "".join(str(i) for i in lib.count_up(5)) == "01234"  # a generator expression: item by item
    assert trips[0] < 30, trips[0]


def test_partial_iteration_of_a_candidate_generator_stays_lazy(lib: Any) -> None:
    gen = lib.count_up(10)
    assert list(itertools.islice(gen, 2)) == [0, 1]
    assert next(gen) == 2  # nothing was taken ahead
    for item in gen:
        if item == 5:
            break
    assert next(gen) == 6


def test_an_exception_mid_iteration_comes_after_the_items_before_it(lib: Any) -> None:
    got = []
    with pytest.raises(ValueError, match="after 3"):
        for item in lib.count_then_raise(3):
            got.append(item)
    assert got == [0, 1, 2]
    with pytest.raises(ValueError, match="after 4"):
        list(lib.count_then_raise(4))  # in a batch, too


# --- subclasses, records, enums ----------------------------------------------------------------------------


def test_an_oracle_subclass_of_a_candidate_class_is_the_oracle_s(lib: Any) -> None:
    calls: list[str] = []

    class Mine(lib.Base):
        def hook(self) -> str:
            calls.append("hook")  # the test's own closure: the method runs here, in the oracle
            return "mine"

    mine = Mine(4)
    assert mine.double() == 8 and mine.call_hook() == "mine"  # the base's method calls the override back
    assert calls == ["hook"]
    assert isinstance(mine, lib.Base) and isinstance(mine, Mine) and type(mine) is Mine
    assert issubclass(Mine, lib.Base) and type(mine).__name__ == "Mine"


def test_an_oracle_subclass_of_a_class_that_answers_every_name_crosses(lib: Any) -> None:
    class Mine(lib.Path):  # tinydb's test_subclass: a callable whose __getattr__ makes a new instance
        def twice(self, doc: dict[str, Any]) -> Any:
            return self(doc) * 2

    step = Mine().a.b
    assert type(step) is Mine and step.steps == ("a", "b") and step.twice({"a": {"b": 21}}) == 42


def test_an_oracle_subclass_calls_its_candidate_base_s_init_by_name(lib: Any) -> None:
    class Mine(lib.Base):  # cachetools' TLRUTestCache: TLRUCache.__init__(self, ...)
        def __init__(self, x: int) -> None:
            lib.Base.__init__(self, x * 2)

    assert Mine(2).double() == 8


def test_super_from_a_classmethod_of_an_oracle_subclass_is_the_candidate_s(lib: Any) -> None:
    class Mine(lib.Base):  # python-semver's test_subclass: super().parse(version[1:])
        @classmethod
        def make(cls, x: int) -> Any:
            return super().make(x + 1)

    made = Mine.make(1)
    assert type(made) is Mine and made.double() == 4


def test_a_probe_the_candidate_cannot_answer_is_no_lie(lib: Any) -> None:
    # The probe's fresh dict has a key no keyword can be: Keyed.build(**it) raises, which says nothing of a lie.
    assert lib.Keyed() == {"a": 1}
    assert not (lib.Keyed() != {"a": 1})  # noqa: SIM202 (the candidate's __ne__, as Python derives it)
    assert lib.Keyed() != {"b": 1}


class _Holder:
    rate = 3

    def __init__(self) -> None:
        self._secret = "s"

    def get(self, n: int) -> int:
        return n + self.rate


def test_a_pack_function_reads_oracle_objects_in_the_oracle(lib: Any) -> None:
    # A copy run in the worker would meet the boundary's refusals (a class's attribute, a private one): such a
    # call is the original's, in the oracle, as plain Python runs it (cachetools' ``lambda cls: cls.cache``).
    assert lib.apply(lambda cls: cls.rate, _Holder) == 3
    assert lib.apply(lambda obj: obj._secret, _Holder()) == "s"
    assert lib.apply(lambda n: n * 2, 21) == 42


def test_a_candidate_function_can_be_introspected_and_patched(lib: Any) -> None:
    import inspect
    from unittest import mock

    assert not inspect.iscoroutinefunction(lib.echo)  # reads __code__.co_flags (python-semver's cli test)
    assert lib.echo.__code__.co_name == "echo" and lib.apply.__defaults__ is None
    with pytest.raises(TypeError):
        exec(lib.echo.__code__)  # a handle to the candidate's code, never code this process runs
    with mock.patch.object(lib, "echo") as mocked:
        lib.apply(lib.echo, 1)
    mocked.assert_called_once_with(1)


FACTOR = 2


def test_a_pack_function_sees_its_variables_as_they_are_when_it_is_called(lib: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    mutable = 5
    # The candidate holds the function (tinydb's query in its cache: test_query_cache_with_mutable_callable).
    increase = lib.wrapped(lambda x: x + mutable)
    assert increase(1) == 6
    mutable = 10
    assert increase(1) == 11  # the enclosing function rebound it: a copy would still see 5
    scale = lib.wrapped(lambda x: x * FACTOR)
    assert scale(3) == 6
    monkeypatch.setattr(sys.modules[__name__], "FACTOR", 3)
    assert scale(3) == 9  # the module's constant, rebound


def test_a_candidate_decorator_wraps_an_oracle_method(lib: Any) -> None:
    holder = _Holder()
    holder.get.__func__.tag = "mine"  # type: ignore[attr-defined]
    wrapped = lib.wrapped(holder.get)  # cachetools.cached(cache)(self.func): functools.update_wrapper
    assert wrapped(1) == 4 and wrapped.__name__ == "get" and wrapped.tag == "mine"


def test_two_subclasses_in_one_file_are_each_their_own(lib: Any) -> None:
    class Mine(lib.Base):
        def hook(self) -> str:
            return "mine"

    class Mine2(lib.Base):
        def hook(self) -> str:
            return "mine2"

    assert Mine(1).call_hook() == "mine" and Mine2(1).call_hook() == "mine2"


def test_records_compare_on_the_class_fields_and_every_field_the_oracle_gave(lib: Any) -> None:
    assert lib.Money(5, "EUR") == lib.Money(5, "EUR")
    # The oracle gave the currency: the candidate's field(compare=False) does not reach the oracle.
    assert lib.Money(5, "EUR") != lib.Money(5, "USD")
    assert lib.make_money(5, "USD") != lib.Money(5, "EUR") and lib.Money(5, "EUR") != lib.make_money(5, "USD")
    assert lib.make_money(5, "EUR") == lib.Money(5, "EUR")
    # Records the oracle did not build compare as the class says (plain Python's answer).
    assert lib.make_money(5, "USD") == lib.make_money(5, "EUR")
    assert hash(lib.make_money(5, "USD")) == hash(lib.Money(5, "EUR"))


def test_a_record_constructor_that_returns_another_class_fails(lib: Any) -> None:
    with pytest.raises(TypeError, match="not a Price"):
        lib.Price(5)


def test_an_enum_alias_is_flagged(lib: Any) -> None:
    assert lib.Level.LOW != lib.Level.MID
    with pytest.raises(TypeError, match="HIGH is an alias of Level.LOW"):
        _ = lib.Level.HIGH
    assert lib.Size.SMALL == 1  # an IntEnum member equals its value, as in plain Python


# --- what plain pytest sees --------------------------------------------------------------------------------


def test_warnings_raised_in_the_worker_are_raised_again_here(lib: Any) -> None:
    with pytest.warns(DeprecationWarning, match="old"):
        assert lib.warn("old") == 1
    with pytest.warns(UserWarning) as record:
        lib.warn_custom()
    assert record[0].category.__name__ == "CustomWarning"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DeprecationWarning):
            lib.warn("as an error")  # -W error works


def test_what_the_candidate_prints_is_captured(lib: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert lib.shout("hi") == 2
    out, err = capsys.readouterr()
    assert out == "hi\n" and err == "err:hi\n"


def test_the_oracles_random_seed_reaches_the_worker(lib: Any) -> None:
    random.seed(1234)
    expected = random.random()
    random.seed(1234)
    assert lib.draw() == expected


def test_systemexit_and_keyboardinterrupt_arrive_as_themselves(lib: Any) -> None:
    with pytest.raises(SystemExit) as info:
        lib.leave(3)
    assert info.value.code == 3
    with pytest.raises(KeyboardInterrupt) as interrupted:
        lib.interrupt()
    assert isinstance(interrupted.value, proxy.CandidateKeyboardInterrupt)  # the plugin stops it at the test


def test_exceptions_keep_their_args_message_and_attributes(lib: Any) -> None:
    with pytest.raises(lib.Coded, match="code 7") as info:
        lib.raise_coded(7)
    assert info.value.args == ("code 7",) and str(info.value) == "code 7"
    assert info.value.code == 7  # read from the worker's exception


def test_a_pickled_candidate_object_keeps_what_is_the_oracle_s_by_reference(lib: Any) -> None:
    # A test's subclass of a candidate class (built in the worker, whose module the worker cannot import)
    # holding an oracle function, and a None: unpickled in the worker, the same class and function again.
    class Kept(lib.Base):
        pass

    kept = Kept(timer)
    kept.nothing = None
    again = pickle.loads(pickle.dumps(kept))
    assert type(again).__name__ == "Kept" and again.x is timer and again.nothing is None
    assert isinstance(again, lib.Base) and isinstance(again, Kept)
    assert pickle.loads(pickle.dumps(lib.Base([None, 1]))).x == [None, 1]


def test_a_candidate_object_s_own_module_is_its_own(lib: Any) -> None:
    curried = lib.Curried(lib.echo)
    assert curried.__module__ == "calc.lib" and type(curried).__module__ == "calc.lib"
    curried.__module__ = "elsewhere"  # toolz's test writes it and reads it back
    assert curried.__module__ == "elsewhere"
    assert lib.Curried(len).__module__ == "builtins"


def test_a_doctest_of_candidate_code_runs_in_the_worker_or_is_refused(client: proxy.Client, lib: Any,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # A docstring of the candidate's is the candidate's text: a doctest would run it as code in the oracle's
    # process. doctest.testmod(module) runs in the worker (toolz's own suite does it); any other doctest of
    # candidate code is refused as a limit of the boundary (recorded out of band), never run here.
    import doctest

    monkeypatch.setattr(doctest.DocTestFinder, "find", doctest.DocTestFinder.find)  # undone after the test
    monkeypatch.setattr(doctest.DocTestFinder, "_find", doctest.DocTestFinder._find)
    for name in ("testmod", "testfile", "_load_testfile"):
        monkeypatch.setattr(doctest, name, getattr(doctest, name))
    monkeypatch.setattr(doctest.DocTestParser, "parse", doctest.DocTestParser.parse)
    doctests.install(client)
    for target in (lib.Documented, lib.documented, lib.Documented()):
        with pytest.raises(proxy.NotCrossable, match="doctest"):
            doctest.run_docstring_examples(target, {})
    with pytest.raises(proxy.NotCrossable, match="doctest"):
        doctest.testmod(lib, globs={})  # the oracle's globals cannot go with it
    assert len(client.boundary) == 4
    # Both docstrings' examples ran, in the worker: each raised SystemExit there, which doctest reports.
    assert doctest.testmod(lib) == doctest.TestResults(failed=2, attempted=2)
    assert "a doctest of the candidate's ran in the oracle" in capsys.readouterr().out  # its report, forwarded
    lib.__test__ = {}  # toolz's suite adds entries to a module's __test__ before testmod
    lib.__test__["extra"] = ">>> 1 + 1\n2\n"
    assert doctest.testmod(lib, report=False) == doctest.TestResults(failed=2, attempted=3)
    del lib.__test__
    assert len(client.boundary) == 4
    doctest.run_docstring_examples(_recorded, {})  # the oracle's own docstrings still run
    # A docstring read as a string and parsed by the pack: its examples are the candidate's, refused.
    text = lib.documented.__doc__
    with pytest.raises(proxy.NotCrossable, match="a text the candidate's code sent"):
        doctest.DocTestParser().get_doctest(text, {}, "documented", None, 0)
    with pytest.raises(proxy.NotCrossable, match="a text the candidate's code sent"):
        doctest.run_docstring_examples(text, {})
    # A text file of the candidate's (its README): testfile runs it in the worker; read any other way, refused.
    readme = client_tree(client) / "README.md"
    assert doctest.testfile(str(readme), module_relative=False, report=False) == doctest.TestResults(1, 2)
    with pytest.raises(proxy.NotCrossable, match="outside the pack"):
        doctest.testfile(str(readme), module_relative=False, globs={})
    with pytest.raises(proxy.NotCrossable, match="outside the pack"):
        doctest.DocFileSuite(str(readme), module_relative=False)
    assert len(client.boundary) == 8


def test_a_worker_that_floods_doctest_texts_makes_every_doctest_a_limit(client: proxy.Client, lib: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The texts kept are capped; past the cap a later one could not be told from the oracle's own, so every
    # parse with examples is refused (fail closed), never run.
    import doctest

    monkeypatch.setattr(doctest.DocTestParser, "parse", doctest.DocTestParser.parse)  # undone after the test
    for name in ("testmod", "testfile", "_load_testfile"):
        monkeypatch.setattr(doctest, name, getattr(doctest, name))
    monkeypatch.setattr(doctest.DocTestFinder, "find", doctest.DocTestFinder.find)
    monkeypatch.setattr(doctest.DocTestFinder, "_find", doctest.DocTestFinder._find)
    monkeypatch.setattr(textguard, "MAX_DOC_TEXTS", 2)
    doctests.install(client)
    assert doctest.DocTestParser().get_examples(">>> 1 + 1\n2\n")  # the oracle's own text: parsed
    for n in range(2):
        assert lib.doc_text(n) == f">>> {n}\n{n}\n"
    assert lib.doc_text(0) and not client.texts.doc_texts_full  # a text already kept is not kept twice
    lib.doc_text(2)
    with pytest.raises(proxy.NotCrossable, match="more than 2 texts"):
        doctest.DocTestParser().get_examples(">>> 1 + 1\n2\n")


@pytest.fixture
def text_fence(client: proxy.Client) -> Iterator[proxy.Client]:
    """``client`` with textguard installed in this process, undone after the test."""
    import builtins
    import pickle

    originals = textguard.install(client)
    try:
        yield client
    finally:
        for name in ("eval", "exec", "compile"):
            setattr(builtins, name, originals[name])
        pickle.loads = originals["loads"]


def test_candidate_text_never_runs_as_code_in_the_oracle(text_fence: proxy.Client, lib: Any) -> None:
    # eval(repr(obj)) is a common round-trip check: the repr is the candidate's text, and run here it would be
    # the candidate's code beside pytest and the results. With a namespace of the pack's it is evaluated in the
    # worker; any other eval, exec or compile of a text the worker sent is refused (a boundary limit), stripped
    # or not, as str or bytes; an AST (literal_eval) is only data.
    import ast

    client = text_fence
    assert eval(repr(lib.Point(3)), {"Point": lib.Point}) == lib.Point(3)
    text = repr(lib.Payload())
    with pytest.raises(SystemExit, match="ran in the worker"):
        eval(text.strip(), {})
    for run in (lambda: eval(text), lambda: eval(text, {}, {}), lambda: eval(text, globals()), lambda: exec(text, {}),
                lambda: compile(text, "<t>", "eval"), lambda: eval(text.strip().encode())):
        with pytest.raises(proxy.NotCrossable, match="a text the candidate's code sent"):
            run()
    lines = list(lib.code_lines())  # an iterator's items are the worker's texts too
    with pytest.raises(proxy.NotCrossable, match="exec of a text"):
        exec(lines[1], {})
    assert len(client.boundary) == 7
    with pytest.raises(ValueError, match="malformed node"):
        ast.literal_eval(text)  # parsed to data, never run
    assert ast.parse(lines[0]).body[0].targets[0].id == "x"


def test_the_oracles_own_eval_exec_and_compile_behave_as_the_builtins(text_fence: proxy.Client) -> None:
    # The wrappers are this process's builtins for every caller (pytest, Hypothesis, dataclasses): the caller's
    # namespace and future flags, eval's stripping of leading blanks, code objects.
    local = 40  # noqa: F841  (read by the eval below, through the caller's namespace)
    assert eval("  local + 2") == 42 and eval(b"\tlocal + 1", {"local": 1}) == 2
    namespace: dict[str, Any] = {}
    exec("def f(x: Undefined): return x", namespace)  # this file has `from __future__ import annotations`
    assert namespace["f"].__annotations__ == {"x": "Undefined"}
    assert compile("y = 1", "<t>", "exec", dont_inherit=True).co_flags & textguard.FUTURE_FLAGS == 0
    assert compile("1", "<t>", "eval").co_flags & textguard.FUTURE_FLAGS != 0
    assert eval(compile("local", "<t>", "eval")) == 40
    assert not text_fence.boundary


def test_candidate_text_inside_a_text_built_here_never_runs_as_code(text_fence: proxy.Client, lib: Any) -> None:
    # Found by a red-team run: a record's repr is built in the oracle, around its fields' reprs, which a
    # candidate str subclass answers from the worker; a list's repr around a candidate object's. In a property's
    # own eval such a text runs in the worker (the namespace given) or is refused, never here.
    import os

    import pytest as here

    rec = lib.make_rec("EUR")  # built by candidate code (a record the oracle builds holds the oracle's values)
    assert rec.cur == "EUR" and type(rec).__name__ == "Rec"
    back = eval(repr(rec), {"Rec": lib.Rec})
    assert back.cur != os.getpid()  # the repr's code ran in the worker, a process of its own
    for run in (lambda: eval(repr(rec)), lambda: eval(repr([lib.Payload()])), lambda: exec(f"x = {rec!r}", {})):
        with here.raises(proxy.NotCrossable, match="a text the candidate's code sent"):
            run()
    assert eval(repr(lib.Point(3)) + " == 0", {"Point": lib.Point}) is False  # in the worker too


def test_pickle_loads_of_candidate_bytes_unpickles_in_the_worker(text_fence: proxy.Client, lib: Any) -> None:
    # Bytes a candidate function returned are its pickle: unpickled here they would run its reduce calls. They
    # unpickle in the worker, as one process would load them, and the value comes back as a handle.
    import pickle

    data = lib.pickled(3)
    obj = pickle.loads(data)
    assert isinstance(obj, proxy.Handle) and obj.func == 3
    blob = lib.blob(4)  # a bytes subclass (found by a red-team run): its value is the candidate's bytes too
    assert isinstance(blob, bytes) and type(blob) is not bytes
    assert pickle.loads(blob).func == 4 and pickle.loads(b"" + blob).func == 4
    assert pickle.loads(pickle.dumps([obj]))[0].func == 3  # the oracle's pickle holding the candidate's
    assert pickle.loads(pickle.dumps([1, "a"])) == [1, "a"]  # the oracle's own pickles load here
    with pytest.raises(proxy.NotCrossable, match="with the defaults only"):
        pickle.loads(data, encoding="latin1")


def test_a_worker_that_floods_texts_makes_every_text_the_candidates(text_fence: proxy.Client, lib: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Past the cap a text could not be told from the oracle's own: every eval of a string is refused.
    monkeypatch.setattr(textguard, "MAX_TEXTS", len(text_fence.texts.seen) + 2)
    assert eval("1 + 1 + 1") == 3
    lib.doc_text(7)
    lib.doc_text(8)
    assert not text_fence.texts.full and lib.doc_text(7)  # a text kept once
    lib.doc_text(9)
    assert eval("1 + 1") == 2  # under six characters: no code worth running, never counted
    with pytest.raises(proxy.NotCrossable, match="a text the candidate's code sent"):
        eval("1 + 1 + 1")


@pytest.mark.parametrize(("name", "fields"), [
    ("Money", ["z=(__import__('os').getpid())):\n '''\n#"]),  # found by a red-team run: code in dataclasses' exec
    ("Money", ["cents", "class"]), ("Money", ["cents", "cents"]), ("Money", ["__init__"]), ("Money", ["_vg_kind"]),
    ("Money(x=1)", ["cents"]), ("Money", ["a b"]),
])
def test_a_record_whose_names_are_no_python_names_is_a_crash(name: str, fields: list[str]) -> None:
    # The standard library writes a dataclass's __init__ and __repr__ as source from its field names and runs
    # it in the oracle: a name that is not an identifier never reaches it.
    with pytest.raises(codec.ProtocolError):
        records._check_record_names(name, fields)
    records._check_record_names("Money", ["cents", "currency", "_note", "über"])


def test_a_candidate_class_is_an_instance_of_its_metaclass_not_of_itself(lib: Any) -> None:
    # toolz's suite picks the curried functions of a module with isinstance(value, curry): the class curry
    # itself must not be one of them.
    assert not isinstance(lib.Documented, lib.Documented) and isinstance(lib.Documented(), lib.Documented)
    assert isinstance(lib.Registered, lib.Registry) and not isinstance(lib.Registered, lib.Registered)
    assert not isinstance(lib.Documented, lib.Registry) and isinstance(lib.Registered(), lib.Registered)


def test_class_attributes_of_a_candidate_object_s_class_are_the_candidate_class_s(lib: Any) -> None:
    composed = lib.Composed()
    assert type(composed).LIMIT == 3 and composed.__class__.__wrapped__ is None  # toolz's test_compose_metadata
    assert type(type(composed).make()).__name__ == "Composed"  # a classmethod, called through the class
    for name in ("missing", "__globals__", "_vg_nothing"):
        with pytest.raises(AttributeError):
            getattr(type(composed), name)
    assert type(lib.local_class_instance()).LIMIT == 4  # a class the worker holds by id, not by name, too


def test_a_candidate_module_s_docstring_crosses_as_text(client: proxy.Client) -> None:
    import importlib.util

    spec = proxy.Finder(client, {"calc"}).find_spec("calc.lib")  # as the import hook imports it
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    assert module.__doc__ == "The candidate's helpers (a module docstring: text, like a function's)."


def test_names_identity_copy_and_pickle(lib: Any) -> None:
    assert lib.apply.__name__ == "apply"  # parametrize ids read __name__
    assert lib.the_thing() is lib.the_thing()  # one candidate object, one handle
    base = lib.Base(3)
    assert copy.copy(base).x == 3 and copy.deepcopy(base).x == 3
    assert pickle.loads(pickle.dumps(base)).x == 3  # pickled and unpickled in the worker
    assert base.__dict__ == {"x": 3}


def test_standard_library_containers_cross_by_value(lib: Any) -> None:
    for value in (collections.OrderedDict(a=1), collections.Counter("aab"), collections.deque([1, 2], 5),
                  collections.defaultdict(list, {1: [2]}), range(2, 9, 3), slice(1, None), types.SimpleNamespace(a=1)):
        got = lib.echo(value)
        assert type(got) is type(value) and got == value
    assert lib.echo(collections.defaultdict(list)).default_factory is list


def test_module_containers_are_live_and_module_attributes_can_be_patched(lib: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    lib.TABLE["b"] = 2
    assert lib.table() == {"a": 1, "b": 2}  # the candidate's own dict changed
    lib.NAMES.add("y")
    assert {"x", "y"} == lib.NAMES and "y" in lib.NAMES
    lib.NESTED[-1].append(lib.NESTED)  # sortedcontainers' test_repr_recursion: an item of a live list is live
    assert lib.nested_repr() == "[[1], [2, [...]]]"
    monkeypatch.setattr(lib, "hook_value", lambda: 99)
    assert lib.call_hook_value() == 99  # candidate code calls the oracle's replacement back
    monkeypatch.undo()
    assert lib.call_hook_value() == 1


# --- the oracle's own control flow ------------------------------------------------------------------------


def test_a_candidate_exit_never_suppresses_the_oracles_own_exception(lib: Any) -> None:
    with pytest.raises(AssertionError), lib.Guard():
        raise AssertionError("the oracle's assertion")
    with lib.Guard():
        lib.fails()  # the candidate's own exception: its __exit__ may suppress it


def test_stopiteration_from_a_candidate_call_is_an_ordinary_exception(lib: Any) -> None:
    with pytest.raises(Exception) as info:
        lib.stop()
    assert type(info.value).__name__ == "StopIteration" and not isinstance(info.value, StopIteration)
    with pytest.raises(Exception, match="not from __next__"):
        all(map(lambda _: lib.stop(), [1, 2]))  # would end all() early, and pass, as a real StopIteration


def test_a_star_import_binds_no_builtin_and_no_bound_name(client: proxy.Client,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    star = _module(client, "calc.star")
    monkeypatch.setitem(sys.modules, "calc", _module(client, "calc"))
    monkeypatch.setitem(sys.modules, "calc.star", star)
    namespace: dict[str, Any] = {"apply": "the oracle's"}
    with pytest.warns(proxy.BoundaryWarning, match="sum, len, apply"):
        exec("from calc.star import *", namespace)  # noqa: S102
    assert namespace["answer"] == 7 and namespace["apply"] == "the oracle's"
    assert "sum" not in namespace and "len" not in namespace
    assert star.__all__ == ["sum", "len", "apply", "answer"]  # read, not star-imported: as written


# --- what a hostile worker can do with a reference -------------------------------------------------------

SECRET = "the oracle's module global"


class Holder:
    """A test's own class: its public attributes answer callbacks."""

    def __init__(self) -> None:
        self.public = 1
        self._private = 2


@pytest.mark.parametrize(("name", "do"), [
    ("__globals__", "getattr"), ("__code__", "getattr"), ("__closure__", "getattr"), ("__class__", "getattr"),
    ("__self__", "getattr"), ("__dict__", "getattr"), ("__module__", "getattr"), ("SECRET", "global"),
    ("__subclasses__", "getattr"), ("f_back", "getattr"),
])
def test_a_hostile_worker_gets_only_the_protocol_of_an_oracle_function(lib: Any, name: str, do: str) -> None:
    def f() -> int:
        return 1

    verdict, _detail = lib.forge(f, do, name)
    assert verdict == "refused", _detail


def test_candidate_code_sets_an_attribute_of_an_oracle_function_the_function_type_lacks(lib: Any) -> None:
    def f() -> int:
        return 1

    lib.put(f, "signature", ["number"])  # jmespath's @signature(...) on a test's function: data
    assert f.signature == ["number"]  # type: ignore[attr-defined]
    # A callable under a name no function has is the candidate's own addition (nothing of the oracle's runs it
    # believing it its own); over a name the object's class defines it is refused (the attack corpus's cases).
    lib.put(f, "helper", lib.echo)
    assert f.helper(5) == 5  # type: ignore[attr-defined]


def test_a_hostile_worker_reads_only_public_attributes_of_a_tests_own_instance(lib: Any) -> None:
    holder = Holder()
    assert lib.forge(holder, "getattr", "public") == ["answered", "1"]
    assert lib.forge(holder, "getattr", "_private")[0] == "refused"
    assert lib.forge(holder, "getattr", "__class__")[0] == "refused"
    assert lib.forge(pytest.MonkeyPatch(), "getattr", "setattr")[0] == "refused"  # not a test's own class
    assert lib.peek(holder, "public") == 1


# --- containers the candidate holds on to ------------------------------------------------------------------

HOLDER = '''
class Keeper:
    def __init__(self, store):
        self.store = store

    def put(self, key, value):
        self.store[key] = value

    def read(self, key):
        return [type(self.store[key]).__name__, repr(self.store[key])]

def keep(store):
    return Keeper(store)

def lazy_sum(xs):
    return (sum(xs) for _ in range(2))
'''


def test_a_container_the_candidate_holds_on_to_stays_one_container(tree: Path, client: proxy.Client) -> None:
    (tree / "src" / "calc" / "holder.py").write_text(textwrap.dedent(HOLDER))
    holder = _module(client, "calc.holder")
    store: dict[str, int] = {}
    keeper = holder.keep(store)
    keeper.put("a", 1)
    assert store == {"a": 1}  # the candidate's change reached the oracle's dict
    store["b"] = 2
    keeper.put("c", 3)
    assert store == {"a": 1, "b": 2, "c": 3}  # and the oracle's reached the candidate's
    assert keeper.store is store  # the same object, as in plain Python
    xs = [1, 2]
    sums = holder.lazy_sum(xs)
    assert next(sums) == 3
    xs.append(10)
    assert next(sums) == 13  # a lazy iterator over the oracle's list sees the oracle's change


def test_vars_of_a_candidate_module_is_its_namespace(lib: Any) -> None:
    names = vars(lib)
    assert {"apply", "Base", "TABLE"} <= set(names) and "_vg_client" not in names
    assert names["TABLE"] == {"a": 1} and "_vg_client" not in dir(lib)


def test_shared_values_stay_shared_and_cycles_cross(lib: Any) -> None:
    inner: list[int] = []
    got = lib.echo([inner, inner, (inner,)])
    assert got[0] is got[1] is got[2][0]  # one object, as sent
    loop: list[Any] = [1]
    loop.append(loop)
    back = lib.echo(loop)
    assert back[1] is back


def test_candidate_exception_classes_are_built_by_the_candidate(lib: Any) -> None:
    built = lib.Coded(9)  # the candidate's __init__ ran: its message and attribute
    assert str(built) == "code 9" and built.args == ("code 9",) and isinstance(built, lib.Coded)


def test_in_place_changes_of_a_call_inside_a_callback_stay_with_that_call(lib: Any) -> None:
    # The outer call's arguments and the inner call's are different lists: each gets its own changes back.
    outer: list[int] = [1]

    def inner_call(_x: Any) -> Any:
        mine = [5, 6]
        lib.apply(list.append, mine, 7)
        assert mine == [5, 6, 7]
        return None

    lib.apply(inner_call, outer)
    assert outer == [1]


class Owner:
    """A test's own class whose instance holds a dict the candidate changes through it."""

    def __init__(self) -> None:
        self.cache: dict[str, int] = {}


def test_a_linked_container_s_changes_of_the_same_size_cross_both_ways(tree: Path, client: proxy.Client) -> None:
    # Each side encodes a linked container of scalars again only when its items are other objects than at the
    # last agreed state (codec.scalar_items): an equal value of another type or sign still crosses.
    (tree / "src" / "calc" / "holder.py").write_text(textwrap.dedent(HOLDER))
    holder = _module(client, "calc.holder")
    store: dict[str, Any] = {"a": 1, "b": 0.0, "c": "x"}
    keeper = holder.keep(store)
    assert keeper.read("a") == ["int", "1"] and keeper.read("b") == ["float", "0.0"]
    store["a"], store["b"] = True, -0.0  # equal to what the worker holds, and not the same
    assert keeper.read("a") == ["bool", "True"] and keeper.read("b") == ["float", "-0.0"]
    store["a"] = 10**20
    assert keeper.read("a") == ["int", repr(10**20)]
    store["a"] = 10**20 + 1
    assert keeper.read("a") == ["int", repr(10**20 + 1)]
    keeper.put("c", "y")  # the candidate's change, of the same size
    assert store == {"a": 10**20 + 1, "b": -0.0, "c": "y"}
    keeper.put("a", 1.0)
    keeper.put("b", 0.0)
    assert type(store["a"]) is float and str(store["b"]) == "0.0"
    keeper.put("a", 1)
    assert type(store["a"]) is int and keeper.read("a") == ["int", "1"]


def test_a_container_read_from_an_oracle_object_stays_one_container(lib: Any) -> None:
    owner = Owner()
    got = lib.peek(owner, "cache")
    assert got is owner.cache  # the same dict, not a copy
    lib.apply(lambda: lib.peek(owner, "cache").update(a=1))
    keeper_dict = lib.peek(owner, "cache")
    assert keeper_dict is owner.cache


def test_a_container_inside_a_linked_one_stays_one_container(lib: Any) -> None:
    # cachetools' cachedmethod: the candidate writes the test's instance's own dict (a descriptor caching
    # itself), then reads self.cache through a callback on every call. The instance's dict and the cache
    # inside it are each one object on both sides: the test's own reference sees the candidate's writes.
    owner = Owner()
    cache = owner.cache
    assert lib.stash(owner, "tag", [1]) == [1]
    lib.store_via(lambda: owner.cache, 2)
    assert owner.cache is cache and cache == {2: 20} and owner.tag == [1]
    lib.stash(owner, "more", 1)  # a new state of the outer dict leaves the inner one as it is
    assert owner.cache is cache and cache == {2: 20}


def test_an_oracle_class_is_a_class_to_candidate_code(lib: Any) -> None:
    assert lib.is_class(Owner) is True and lib.is_class(Owner()) is False


class Table(collections.abc.Mapping[str, int]):
    """A test's own Mapping (toolz's merge_with asks isinstance(d, Mapping) of it)."""

    def __getitem__(self, key: str) -> int:
        return {"a": 1}[key]

    def __iter__(self) -> Any:
        return iter(["a"])

    def __len__(self) -> int:
        return 1


def test_a_test_s_own_mapping_is_a_mapping_to_candidate_code(lib: Any) -> None:
    assert lib.is_mapping(Table()) is True and lib.is_mapping(Owner()) is False
    assert lib.consume(Table().items()) == [("a", 1)]


class SignedByProperty:
    """A class whose __signature__ is a property: inspect.signature of the class raises TypeError."""

    @property
    def __signature__(self) -> Any:
        return None


def test_an_oracle_signature_that_is_no_signature_is_what_plain_python_sees(lib: Any) -> None:
    import inspect

    with pytest.raises(TypeError):
        inspect.signature(SignedByProperty)
    assert lib.signature_of(SignedByProperty) == "TypeError"
    assert lib.signature_is_a_descriptor(SignedByProperty) is True  # as the property read on its class
    assert lib.signature_of(lambda x, y=2: x) == "(x, y=2)"


def test_functions_are_functions_and_stdlib_functions_come_back_as_themselves(lib: Any) -> None:
    import inspect

    assert inspect.isfunction(lib.apply) and lib.apply.__module__ == "calc.lib"
    assert lib.echo(random.choice) is random.choice and lib.echo(str.lower) is str.lower


def test_records_of_an_imported_candidate_module(client: proxy.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # As the import hook leaves it: the proxy module in sys.modules. dataclasses reads the namespace of a
    # class's module; a record's mirror class must not turn that into requests that build it again.
    imported = _module(client, "calc.lib")
    monkeypatch.setitem(sys.modules, "calc.lib", imported)
    assert imported.Money(5, "EUR") == imported.Money(5, "EUR")
    assert type(imported.Money(1, "X")).__module__ == "calc.lib"


class Shelf:
    """A test's own class handing its dict to candidate code through a callback, call after call."""

    def __init__(self) -> None:
        self.store: dict[int, int] = {}


def test_a_container_a_callback_returns_keeps_the_candidates_changes(lib: Any) -> None:
    shelf = Shelf()
    for k in range(3):  # each call: the candidate reads the dict through the callback, writes it, lets go
        lib.store_via(lambda: shelf.store, k)
    assert shelf.store == {0: 0, 1: 10, 2: 20}


def test_an_oracle_object_answers_only_what_its_type_defines(lib: Any) -> None:
    def numbers() -> Any:
        yield from range(3)

    gen = numbers()
    # a generator is not callable (every class is, through type: that must not make its instances so)
    assert lib.apply(callable, gen) is False
    assert lib.consume(gen) == [0, 1, 2]


def test_a_callback_result_that_cannot_cross_leaves_no_link_behind(lib: Any) -> None:
    # A dict whose value is nested past the codec's depth cap: refused once, and the calls after it work
    # (it was never linked, so no later frame tries to send it again).
    deep: Any = ()
    for _ in range(1100):
        deep = (deep,)
    held = {"deep": deep}
    with pytest.raises(BaseException):  # noqa: B017 - which limit it is does not matter here
        lib.apply(lambda: held)
    assert lib.echo(1) == 1
    assert lib.apply(lambda: {"ok": [1]}) == {"ok": [1]}


def test_a_candidate_generator_is_unsized_as_itself(lib: Any) -> None:
    gen = lib.count_up(3)
    assert not hasattr(gen, "__len__")  # multiprocessing's Pool.map asks, then takes list(gen)
    with pytest.raises(TypeError, match="has no len"):
        len(gen)
    assert list(gen) == [0, 1, 2]
    assert hasattr(lib.table(), "__len__")


def test_an_oracle_thread_pool_maps_a_candidate_function_over_a_candidate_generator(lib: Any) -> None:
    from multiprocessing.pool import ThreadPool

    with ThreadPool(2) as pool:  # its threads call the candidate while the oracle serves the worker's call
        assert lib.chunk_sums(7, map=pool.map) == [103, 112, 106]


def test_an_oracle_process_pool_maps_a_candidate_function(lib: Any) -> None:
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert lib.chunk_sums(7, map=pool.map) == [103, 112, 106]


def test_a_pack_module_imported_by_candidate_code_holds_only_what_the_worker_holds(lib: Any) -> None:
    # This file plays the pack (client.oracle_roots); candidate code imports it by name, as toolz's curry does
    # when pickled: the names whose values the worker holds answer, nothing else does.
    here = __name__
    globals()["lib_echo_for_import"] = lib.echo  # a candidate function: the worker's own
    try:
        assert lib.module_attr(here, "lib_echo_for_import") == ["found", True]
    finally:
        globals()["lib_echo_for_import"] = None
    assert lib.module_attr(here, "CANDIDATE") == ["missing", "AttributeError"]  # an oracle value it never held
    assert lib.module_attr(here, "pytest") == ["missing", "AttributeError"]  # nor the oracle's imports
    assert lib.module_attr(here, "_module") == ["missing", "AttributeError"]
    assert lib.module_attr("verdict_gate.boundary.proxy", "Client") == ["missing", "ModuleNotFoundError"]
    assert lib.module_attr("no_module_of_the_oracle", "x") == ["missing", "ModuleNotFoundError"]


lib_echo_for_import: Any = None


def timer() -> int:
    """An oracle function a candidate object holds (pickled by name, as plain pickle does)."""
    return 7


@pytest.fixture(autouse=True)
def _candidate_in_module(request: pytest.FixtureRequest) -> Iterator[None]:
    if "pack_module" in request.node.name:
        lib = request.getfixturevalue("lib")
        globals()["lib_echo_for_import"] = lib.echo
    yield
    globals()["lib_echo_for_import"] = None


def test_pickling_a_candidate_object_that_holds_an_oracle_object_says_what_plain_pickle_says(lib: Any) -> None:
    again = pickle.loads(pickle.dumps(lib.Curried(timer)))  # an oracle function: kept by reference
    assert again.func is timer
    with pytest.raises(Exception) as plain:  # plain pickle refuses a local lambda ...
        pickle.dumps(lambda: 1)
    with pytest.raises(Exception) as gated:  # ... and so a candidate object holding one, with the same error
        pickle.dumps(lib.Curried(lambda: 1))
    assert type(gated.value) is type(plain.value) and "Can't pickle local object" in str(gated.value)


def test_inspect_signature_of_a_candidate_callable_is_what_plain_python_gives(text_fence: proxy.Client,
                                                                              lib: Any) -> None:
    import inspect

    plain = "(a: int, b: \"__import__('os').getpid()\" = 2, *rest, key=None) -> str"
    sig = inspect.signature(lib.annotated)
    assert str(sig) == plain and sig.parameters["a"].annotation is int and sig.return_annotation is str
    assert str(inspect.signature(lib.SignedCall())) == "(first, /) -> float"  # its own __signature__
    with pytest.raises(TypeError, match="in __signature__ attribute"):  # the class: its property, as plain
        inspect.signature(lib.SignedCall)
    with pytest.raises(proxy.NotCrossable, match="a text the candidate's code sent"):  # an annotation is text
        compile(sig.parameters["b"].annotation, "<annotation>", "eval")


def test_an_instance_of_a_candidate_class_deriving_from_a_mutable_builtin_answers_as_it(lib: Any) -> None:
    # isinstance(bag, dict) is false (the proxy class cannot carry dict's storage: C code would read it empty)
    bag, stack = lib.Bag(a=1, b=2), lib.Stack([1, 2])
    assert bag.total() == 3 and bag["a"] == 1 and len(bag) == 2 and sorted(bag) == ["a", "b"]
    assert dict(bag) == {"a": 1, "b": 2} and bag == {"a": 1, "b": 2} and {**bag} == {"a": 1, "b": 2}
    stack.append(5)
    assert stack.top() == 5 and stack == [1, 2, 5] and list(stack) == [1, 2, 5] and type(stack) is lib.Stack


def test_a_candidate_subclass_of_an_immutable_builtin_shows_the_candidate_object_s_vars(lib: Any) -> None:
    # cachetools' test_pickle: the cached hash is in the candidate object's __dict__, and pickling leaves it out
    key = lib.hashed_key("abc", 123)
    assert isinstance(key, tuple) and key == ("abc", 123) and len(key.__dict__) == 0 and vars(key) == {}
    h = hash(key)
    assert len(key.__dict__) == 1 and "_vg_handle" not in str(vars(key))
    again = pickle.loads(pickle.dumps(key))
    assert len(again.__dict__) == 0 and again == key and hash(again) == h and type(again) is type(key)


def test_a_candidate_class_s_docstring_reads_as_its_own(lib: Any) -> None:
    # toolz's excepts: the class's __doc__ is a descriptor whose class value is the docstring
    assert lib.Documented.__doc__.startswith("A class whose docstring") and type(lib.Documented.__doc__) is str
    doc = lib.Documented.__doc__
    assert type(lib.Documented()).__doc__ == doc and lib.Documented().__doc__ == doc
