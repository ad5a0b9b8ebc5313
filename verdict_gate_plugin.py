"""The gate's pytest plugin: inert unless ``--verdict-gate-spec`` is given (docs/design.md §8).

Loaded by the runner with ``-p verdict_gate_plugin`` in a subprocess whose plugin
autoload is off. It deliberately imports nothing from the ``verdict_gate`` package: the
oracle's properties may import the candidate's own ``verdict_gate`` package (verdict-gate
gating itself), and that import must find the candidate's code, not ours. The gate's code that
runs here (the results-stream records, the proxy of the candidate worker) is the boundary package
``verdict_gate/boundary/`` (stdlib only), loaded by path from the directory the runner puts in the
run spec (``boundary``) under a private name (its ``load.py``), never by importing the package.

What it does when active:

- puts the candidate's ``python_path`` directories first on ``sys.path``;
- keeps only the catalog's properties, grouped in catalog order;
- makes every Hypothesis run a property's test starts (``@given``, a state machine, ``find``) a seeded trial
  (:func:`_install_trials`): the recorded seed, no example database and no deadline, the catalog's share of
  its ``max_examples`` drawn from the run's fresh seed instead (:func:`fresh_split`), its test wrapped to count
  trials and hits and keep the last (shrunk) example as the counterexample, and example logs;
- provides the ``oracle_fixtures`` fixture (a read-only ``pathlib.Path``);
- appends one JSON line per event to the results file: ``start`` before a property's
  first test, ``result`` after its last, so the parent can enforce timeouts and
  recover from a crash.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import runpy
import sys
import time
from pathlib import Path
from typing import Any

import pytest

_STATE_KEY = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("verdict-gate")
    group.addoption("--verdict-gate-spec", default=None, help="(internal) run spec written by verdict-gate")
    group.addoption("--verdict-gate-results", default=None, help="(internal) JSON-lines results file")


def _state(config: pytest.Config) -> dict[str, Any] | None:
    return config.stash.get(_STATE_KEY, None)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """pytest imports the conftest.py of its argument directories before ``pytest_configure``: set up
    (the import hook first) now, so a pack conftest that imports the candidate's modules finds them
    (docs/design.md §8.5). ``pytest_configure`` then finds the state in place."""
    known = getattr(early_config, "known_args_namespace", None)
    spec_path = getattr(known, "verdict_gate_spec", None)
    if not spec_path:
        return
    early_config.option.verdict_gate_spec = spec_path
    early_config.option.verdict_gate_results = getattr(known, "verdict_gate_results", None)
    pytest_configure(early_config)


def pytest_configure(config: pytest.Config) -> None:
    if _state(config) is not None:
        return  # set up already, before the initial conftests loaded
    spec_path = config.getoption("--verdict-gate-spec")
    if not spec_path:
        return
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    # Hypothesis, where a property uses it or a file of the pack names it (spec "hypothesis"; runner.Workspace), is
    # imported before the candidate joins sys.path, so a candidate `hypothesis.py` cannot shadow it; a pack
    # that never imports it does not pay for it (plain pytest would not either).
    uses_hypothesis = spec.get("hypothesis", True) is not False
    try:
        if uses_hypothesis:
            import hypothesis  # noqa: F401
            import hypothesis.errors  # noqa: F401
    except ImportError:
        pass
    isolation = spec.get("isolation") or {"level": "none"}
    client = None
    if isolation["level"] == "none":
        # Candidate code runs in this process (catalog `isolation: none`). Its directories go after
        # the standard library, so a candidate module named like one (say `statistics.py`) cannot
        # replace what the oracle computes its expectations with.
        sources = _boundary(spec, "sources")
        sources.source_only(spec["python_path"])
        at = sources.after_stdlib(sys.path)
        sys.path[at:at] = list(spec["python_path"])
        # A child process a test starts (the candidate's command line) finds it too, as on plain pytest's path.
        os.environ["PYTHONPATH"] = os.pathsep.join([*spec["python_path"],
                                                    *filter(None, [os.environ.get("PYTHONPATH")])])
    else:
        # Candidate code never runs here: its modules become proxies of a sandboxed worker.
        if isolation.get("cpu") is not None:
            # Before the worker starts, so it inherits the CPU (see runner._isolation_spec); a hint
            # for speed, not a fence.
            with contextlib.suppress(AttributeError, OSError, ValueError):
                os.sched_setaffinity(0, {int(isolation["cpu"])})
        proxy = _boundary(spec, "proxy")
        client = proxy.Client(isolation["level"], spec["python_path"], cwd=isolation["cwd"],
                              readonly=isolation.get("readonly", []), method=isolation.get("method"),
                              userns=isolation.get("userns"), own_uid=isolation.get("own_uid"),
                              scratch=isolation.get("scratch"), secrets=isolation.get("secrets", []),
                              limits=isolation.get("limits"), answer_timeout=isolation.get("answer_timeout"),
                              worker_cpu=isolation.get("worker_cpu"), spin_s=float(isolation.get("spin_s") or 0.0),
                              bytecode=sys.pycache_prefix,  # the gate's cache: only oracle code is compiled into it
                              shared=isolation.get("shared") or [])
    state: dict[str, Any] = {
        "spec": spec,
        "out": open(config.getoption("--verdict-gate-results"), "a", encoding="utf-8"),  # noqa: SIM115
        "item_prop": {},
        "props": {p["id"]: p for p in spec["properties"]},
        "acc": {},
        "collect_errors": {},
        "started": set(),
        "client": client,
        "isolation": {"level": isolation["level"], "method": "in-process" if client is None else "unknown",
                      "fences": {}},
    }
    config.stash[_STATE_KEY] = state
    if client is not None:
        try:
            client.start(wait=False)  # the worker starts while pytest collects; its report is taken later
        except Exception as exc:  # IsolationUnavailable: every property fails closed, none runs unfenced
            state["isolation"] = {"level": isolation["level"], "method": "unavailable", "fences": {},
                                  "why": str(exc)[:2000]}
        proxy.install(client, spec["python_path"], str(config.rootpath), isolation.get("candidate_modules"),
                      isolation.get("reviewed"))
        if client._uid is not None:
            _share_temp_dirs()
    if not uses_hypothesis:
        return
    try:
        from hypothesis import settings

        settings.register_profile("verdict-gate", database=None, deadline=None, print_blob=False)
        settings.load_profile("verdict-gate")
        state["profile"] = settings.default
        _install_trials()
    except ImportError:  # a pack without Hypothesis properties needs no Hypothesis
        pass
    _constants_of_the_pack(str(config.rootpath))


def _share_temp_dirs() -> None:
    """A worker of a uid of its own (the gate is root and fences it by Landlock) reads and writes pytest's
    temporary directories as the test does (docs/design.md §8.1, "Files"): the directories pytest makes (mode
    0700) are opened to every user, and what the test writes is writable by all (umask 0). The worker's sandbox
    confines its writes to the shared directory whatever the modes say; no other user can list the run's
    scratch directory above it."""
    from _pytest.tmpdir import TempPathFactory

    os.umask(0)
    getbasetemp, mktemp = TempPathFactory.getbasetemp, TempPathFactory.mktemp

    def opened(path: Path) -> Path:
        with contextlib.suppress(OSError):
            path.chmod(0o777)
        return path

    TempPathFactory.getbasetemp = lambda self: opened(getbasetemp(self))  # type: ignore[method-assign]
    TempPathFactory.mktemp = lambda self, *a, **k: opened(mktemp(self, *a, **k))  # type: ignore[method-assign]


def _constants_of_the_pack(pack_dir: str) -> None:
    """Let Hypothesis take the literal constants it mixes into its draws from the pack's own modules only.

    Hypothesis adds the constants of every "local" module in ``sys.modules`` to what it draws
    (``hypothesis.internal.conjecture.providers``, read on each new module). In this process that
    would include the candidate's modules (a proxy carries its file's ``__file__``; at isolation
    ``none`` they are the modules themselves) and the gate's own plugin and boundary: the candidate
    could steer the oracle's draws by the constants in its source, the base and the candidate would
    draw different examples (so an example log or a fresh failure would not match across them), and a
    new gate version would change every draw. A Hypothesis without that hook is left as it is.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return
    judge = getattr(providers, "is_local_module_file", None)
    if judge is None or getattr(judge, "_verdict_gate", False):
        return
    inside = os.path.realpath(pack_dir) + os.sep

    def is_local_module_file(path: str) -> bool:
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError, TypeError):
            return False
        return real.startswith(inside) and bool(judge(path))

    is_local_module_file._verdict_gate = True  # type: ignore[attr-defined]
    providers.is_local_module_file = is_local_module_file  # type: ignore[assignment]


def _boundary(spec: dict[str, Any], name: str) -> Any:
    """A module of the boundary package (``results``, ``proxy`` …), loaded by path from the spec's
    ``boundary`` directory by that package's own loader, under a private name: importing the
    ``verdict_gate`` package here would shadow a candidate that is verdict-gate."""
    return runpy.run_path(os.path.join(spec["boundary"], "load.py"))["module"](name, spec["boundary"])


MAX_TEXT = 16_384  # characters of a message or an example's repr kept: the evidence stays small


def _cap(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"… [{len(text) - MAX_TEXT} more characters]"


def _results(state: dict[str, Any]) -> Any:
    """The results-stream module (``verdict_gate/boundary/results.py``), loaded by path, once."""
    if "results" not in state:
        state["results"] = _boundary(state["spec"], "results")
    return state["results"]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    state = _state(session.config)
    if state is not None:
        _results(state)  # loaded before any test module (and the candidate code it imports) runs
        # pytest, Hypothesis and the plugin are imported by now. In the shared cache, bytecode goes on
        # being written for what tests import late (unittest.mock's asyncio), but none for the pack: a
        # fresh copy at a fresh path in every run, whose mirror there is a file (host/workdir.py,
        # _block_bytecode). A cache of this run alone would never be read again: nothing more is written.
        if not state["spec"].get("keep_bytecode"):
            sys.dont_write_bytecode = True
        _settle()


def _settle() -> None:
    """Move every object alive now out of the cyclic collector's reach (``gc.freeze``).

    pytest, Hypothesis and (after collection) the test modules stay alive to the end of the
    process, yet each full (generation 2) collection would rescan them all: with 2,000 property
    files that is about 160,000 objects and 50–130 ms a collection, 1.6 s of a run (docs/design.md
    §11). Garbage among them is never collected, which costs at most the few objects of the young
    generations at that moment; objects made later are collected as usual.
    """
    gc.freeze()


def _emit(state: dict[str, Any], record: dict[str, Any]) -> None:
    _results(state).write(state["out"], record)


def _prop_for(nodeid: str, props: list[dict[str, Any]], index: dict[str, tuple[int, str]] | None = None) -> str | None:
    """The first property (catalog order) whose selector is ``nodeid`` or a prefix of it ending at
    ``::`` or ``[``. ``index`` (selector → (catalog position, id)) makes it a few dict lookups."""
    if index is None:
        index = {}
        for i, prop in enumerate(props):
            index.setdefault(prop["selector"], (i, prop["id"]))
    found: list[tuple[int, str]] = []
    parts = nodeid.split("::")
    for k in range(1, len(parts) + 1):
        prefix = "::".join(parts[:k])
        if prefix in index:
            found.append(index[prefix])
        bracket = prefix.find("[", len("::".join(parts[:k - 1])))
        while bracket > 0:  # a parametrized id: the selector may stop before its "["
            if prefix[:bracket] in index and k == len(parts):
                found.append(index[prefix[:bracket]])
            bracket = prefix.find("[", bracket + 1)
    return min(found)[1] if found else None


def _jsonable(value: Any) -> Any:
    """A JSON value for a drawn example: plain JSON as is, anything else by ``repr``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else repr(value)  # JSON numbers beyond that lose digits
    if isinstance(value, str):
        return _cap(value)
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _jsonable(v) for k, v in value.items()}
    return _cap(repr(value))


# --- Seeded trials: every Hypothesis run a property's test starts (docs/design.md §8.3) ------------------------

# The property whose test node runs now (set by pytest_runtest_protocol, cleared after it): each Hypothesis run
# the node starts, whatever starts it, is a seeded trial of that property (:func:`_install_trials`).
_TRIAL: dict[str, Any] | None = None


def _install_trials() -> None:
    """Make every Hypothesis run a property's test starts a seeded trial of it (docs/design.md §8.3).

    Hypothesis runs a test, whatever started it (``@given``, a ``RuleBasedStateMachine``'s ``TestCase`` or
    ``run_state_machine_as_test``, ``find``, a ``@given`` test called inside another test), through one object:
    ``hypothesis.core.StateForActualGivenExecution``, built from the test, its settings and its random generator
    just before the run. The subclass put in its place here, while a property's test node runs
    (:data:`_TRIAL`), gives the run the property's seed and settings (no database, no deadline, the recorded
    seed's share of ``max_examples``: :func:`fresh_split`), wraps the test to count and log each example
    (:func:`_counted`) and first makes the example-log and fresh-seed passes (:func:`_passes`). Anywhere else
    (collection, the pack's conftest) it is Hypothesis's own."""
    import hypothesis.core as core

    base = core.StateForActualGivenExecution
    if getattr(base, "_verdict_gate", False):
        return

    class Trial(base):  # type: ignore[misc,valid-type]
        _verdict_gate = True

        def __init__(self, stuff: Any, test: Any, settings: Any, random: Any, wrapped_test: Any,
                     **kwargs: Any) -> None:
            trial = _TRIAL
            if trial is not None and trial["inside"]:
                # A run started inside an example of the property's (find() in a @given test's body): part of
                # that example, so neither counted nor logged nor given passes of its own; seeded all the same.
                super().__init__(stuff, test, *_nested(trial, settings, random), wrapped_test, **kwargs)
                return
            run = _start_run(trial, test, settings, random, wrapped_test) if trial is not None else None
            if run is None:
                super().__init__(stuff, test, settings, random, wrapped_test, **kwargs)
                return
            super().__init__(stuff, _counted(test, run), run["settings"], run["random"], wrapped_test, **kwargs)
            _passes(run, lambda holder, settings, random: base(
                stuff, _counted(test, holder), settings, random, wrapped_test, **kwargs))

    core.StateForActualGivenExecution = Trial  # type: ignore[misc]  # read by name at each run (hypothesis/core.py)


def _start_run(trial: dict[str, Any], test: Any, settings: Any, random: Any, wrapped_test: Any) -> dict[str, Any]:
    """The record of one Hypothesis run of the property in ``trial``: its settings and random generator for the
    normal pass, and what :func:`_counted` keeps its examples in."""
    from random import Random

    from hypothesis import settings as Settings

    prop, acc = trial["prop"], trial["acc"]
    acc["hypothesis"] = True
    current = Settings(settings, database=None, deadline=None)
    # The fresh examples are part of the property's own budget (docs/design.md §8.3): the recorded seed draws
    # the rest, in every run of the property (run, replay, freeze), so base and candidate agree.
    recorded, fresh = fresh_split(prop.get("fresh"), current.max_examples)
    seed = prop.get("seed")
    if seed is not None:
        acc["seed"] = seed
    if getattr(wrapped_test, "_hypothesis_internal_database_key", None) is None:
        # No database, so no key: Hypothesis would otherwise take one from a digest of the test it runs (the
        # wrapper below), tokenizing this plugin's source once per run.
        with contextlib.suppress(AttributeError, TypeError):
            wrapped_test._hypothesis_internal_database_key = None
    k = trial["runs"]
    trial["runs"] = k + 1
    return {"acc": acc, "prop": prop, "log": None, "fresh": fresh, "trial": trial, "find": _is_find(test),
            "node": trial["node"] if k == 0 else f"{trial['node']}#{k}",  # a second run of one node (two finds)
            "settings": Settings(current, max_examples=recorded) if fresh else current,
            "random": Random(seed) if seed is not None else random, "seed": seed,
            # The normal pass's examples, explicit and shrinking ones included, join the example log (§8.3): a
            # bug that shows only after the logging passes (a call counter) still meets the base's record.
            "normal_log": acc.setdefault("example_log", []) if prop.get("example_log") else None}


def _nested(trial: dict[str, Any], settings: Any, random: Any) -> tuple[Any, Any]:
    """The settings and random generator of a run started inside an example: no database, no deadline, the
    property's seed."""
    from random import Random

    from hypothesis import settings as Settings

    seed = trial["prop"].get("seed")
    return Settings(settings, database=None, deadline=None), Random(seed) if seed is not None else random


def _passes(run: dict[str, Any], make: Any) -> None:
    """Before the normal pass of a run: the example-log pass (a property with a freeze: the same seed and
    settings, every example logged, none ending the pass) and the fresh-seed pass (every seeded property),
    docs/design.md §8.3. ``make(holder, settings, random)`` builds Hypothesis's runner of one pass."""
    from random import Random

    from hypothesis import Phase
    from hypothesis import settings as Settings

    prop, acc, settings = run["prop"], run["acc"], run["settings"]
    if Phase.generate not in settings.phases:  # a run of explicit examples only: nothing is drawn
        return
    if prop.get("example_log"):
        random = Random(run["seed"]) if run["seed"] is not None else Random()
        if run["seed"] is None:
            random.setstate(run["random"].getstate())
        _one_pass(make, run, acc["example_log"], settings, random)
    if prop.get("fresh_seed") is not None and run["fresh"]:
        _one_pass(make, run, acc.setdefault("fresh_log", []),
                  Settings(settings, max_examples=run["fresh"], phases=[Phase.generate]), Random(prop["fresh_seed"]))


def _one_pass(make: Any, run: dict[str, Any], log: list[dict[str, Any]], settings: Any, random: Any) -> None:
    """One logging pass: every failure recorded in ``log`` and swallowed, so the draws do not stop at the first."""
    holder = {**run, "log": log, "normal_log": None}
    try:
        make(holder, settings, random).run_engine()
    except Exception as exc:
        if run["find"] and type(exc) is _hypothesis_class("hypothesis.errors", "Found"):
            return  # find() found its example: the end of its search, as in its normal pass
        # E.g. a health check: the log is kept as far as it got, and says so.
        log.append({"digest": STOPPED, "held": False,
                    "input": f"the logging pass stopped early ({type(exc).__name__}): later examples were not logged"})


def _hypothesis_class(module: str, name: str) -> type | None:
    """A class of Hypothesis's as this process loaded it (``None`` if it has none by that name)."""
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def _is_find(test: Any) -> bool:
    """Whether ``test`` is the one ``hypothesis.find`` runs (its ``Found`` says "this example satisfies the
    condition", never a failure): by code object, never by name."""
    find = getattr(sys.modules.get("hypothesis.core"), "find", None)
    code = getattr(test, "__code__", None)
    return code is not None and any(c is code for c in getattr(getattr(find, "__code__", None), "co_consts", ()))


def _discards() -> tuple[type[BaseException], ...]:
    """Hypothesis's ways to drop an example, the real classes of this process (a class of the candidate's named
    like one is an ordinary exception, which Hypothesis counts as a failure)."""
    found = [_hypothesis_class("hypothesis.errors", "UnsatisfiedAssumption"),
             _hypothesis_class("hypothesis.errors", "StopTest"),
             _hypothesis_class("hypothesis.errors", "Frozen")]
    return tuple(c for c in found if c is not None and issubclass(c, BaseException))


def _discarded_by(exc: BaseException, run: dict[str, Any]) -> str | None:
    """Where candidate code discarded an example (``exc``, one of :func:`_discards`), or ``None`` for Hypothesis's
    own control flow.

    Told by where the exception came from in the oracle's stack, never by a frame's file name (a code object
    says any name it likes; Hypothesis's own generated code says ``<string>``). The frames from the test to the
    raise point are walked for the last one of candidate code: at isolation ``none`` a frame whose namespace
    is a module imported from the candidate's ``python_path``, or no module at all but those Hypothesis makes
    from its own source (code made by ``exec``: fail closed); at a fenced level, where candidate code runs
    in the worker and what it raises arrives as a class of its own, the boundary serving a call the
    candidate made back into the oracle (:func:`_callback_codes`). None: the oracle's. After it, a draw of
    Hypothesis's (a ``Random`` or ``data`` the property handed over running out of data, as it does when
    Hypothesis replays a shorter example) is Hypothesis's own, as in plain pytest; anything else (the candidate
    raising the class, calling ``reject()``, ``assume()`` or the data's ``mark_invalid()``, an oracle callback
    calling them on its behalf) is the candidate's."""
    trial = run["trial"]
    none = trial.get("level") == "none"
    roots = tuple(os.path.realpath(p) + os.sep for p in trial.get("python_path") or ())
    callbacks = trial.get("callbacks") or frozenset()
    generated = _generated_namespaces() if none else frozenset()
    draws = _draw_codes()
    last: str | None = None
    tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None  # skip the wrapper (_counted)
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code in draws:
            last = None  # what the candidate asked for is a draw: its end is Hypothesis's to decide
        elif frame.f_code in callbacks:
            last = f"{type(exc).__name__} from a call the candidate made back into the oracle"
        elif none:
            last = _candidate_frame(frame, tb.tb_lineno, roots, generated, f"{type(exc).__name__} from") or last
        tb = tb.tb_next
    return last


def _candidate_frame(frame: Any, line: int, roots: tuple[str, ...], generated: frozenset[int], what: str) -> str | None:
    """``what`` and where, when ``frame`` (isolation ``none``) runs candidate code: by the module whose namespace
    it runs in (its code's file name is only reported, never believed)."""
    names = frame.f_globals
    if id(names) in generated:
        return None
    module = sys.modules.get(str(names.get("__name__")))
    path = getattr(module, "__file__", None) if module is not None and module.__dict__ is names else None
    where = f"{frame.f_code.co_filename}:{line}"
    if not isinstance(path, str):
        return f"{what} code of no module (made by exec; its code says {where})"
    return f"{what} {where}" if os.path.realpath(path).startswith(roots) else None


def _draw_codes() -> frozenset[Any]:
    """The code of Hypothesis's draws (``ConjectureData``'s ``draw`` methods): a discard raised inside one is the
    example running out of data, or being drawn from after it ended."""
    data = _hypothesis_class("hypothesis.internal.conjecture.data", "ConjectureData")
    if _DRAWS.get("of") is not data:
        _DRAWS.update(of=data, codes=frozenset(f.__code__ for n, f in vars(data or object).items()
                                                if "draw" in n and hasattr(f, "__code__")))
    codes: frozenset[Any] = _DRAWS["codes"]
    return codes


_DRAWS: dict[str, Any] = {}  # _draw_codes's, for the class it read


def _callback_codes(client: Any) -> frozenset[Any]:
    """The code of the boundary's callback server (``Callbacks.serve`` of the client's package): its frame runs
    oracle code the candidate called back, so it stands for the candidate's code on a path at a fenced level."""
    package = sys.modules.get(type(client).__module__) if client is not None else None
    serve = getattr(getattr(package, "Callbacks", None), "serve", None)
    code = getattr(serve, "__code__", None)
    return frozenset([code]) if code is not None else frozenset()


def _generated_namespaces() -> frozenset[int]:
    """The ids of the namespaces of the modules Hypothesis makes from source it writes itself (the signature-
    keeping wrappers of ``hypothesis.internal.reflection``, whose code says ``<string>``)."""
    cache = getattr(sys.modules.get("hypothesis.internal.reflection"), "eval_cache", None)
    return frozenset(id(m.__dict__) for m in (cache or {}).values())


class _BodyDraws:
    """What a test draws while it runs (``data.draw`` of ``st.data()``, a state machine's steps, a drawn
    ``Random``'s numbers), for the evidence and the example log (docs/design.md §8.3).

    Each value drawn at the top level is snapshotted as it is drawn, before the test's code (or the
    candidate's) can touch it, into the drawn example under the name of the test's ``st.data()`` argument: a
    state machine's counterexample is its step sequence. Such an example stops where it fails, so its identity
    is where it got to: after each top-level draw, the digest of the example so far (its arguments, then each
    draw's value and the choices Hypothesis made up to it, in order) is a *state*. A failing example is its
    state when it failed; one that held went past every state it reached; one that failed went past every
    state but its last. The same example failing at a state the base went past is a new failure, though the
    base drew further (:func:`_log_example`)."""

    __slots__ = ("data", "mark", "into", "inside", "head", "hash", "states")

    def __init__(self, node: str, kwargs: dict[str, Any], drawn: dict[str, Any]) -> None:
        self.data: Any = None
        self.into: list[Any] | None = None
        self.inside = False
        self.states: list[str] = []
        try:
            from hypothesis.control import current_build_context

            self.data = current_build_context().data
            self.mark = len(self.data.choices)
        except Exception:  # no build context, or a Hypothesis without these: the example as its arguments say
            self.data = None
            return
        kind = getattr(sys.modules.get("hypothesis.strategies"), "DataObject", None)
        name = next((k for k, v in kwargs.items() if kind is not None and type(v) is kind), None)
        self.head = (node, {k: v for k, v in drawn.items() if k != name})  # digested at the first state only
        self.hash: Any = None
        if name is not None:
            self.into = drawn[name] = []
        real = self.data.draw

        def draw(*args: Any, **kw: Any) -> Any:
            if self.inside:  # a draw inside a draw (a composite strategy's): part of the outer value
                return real(*args, **kw)
            self.inside = True
            try:
                value = real(*args, **kw)
            finally:
                self.inside = False
            step = _step(value)
            if self.into is not None and len(self.into) < MAX_DRAWS:
                self.into.append(step)
            self.states.append(self._state(step))
            return value

        self.data.draw = draw

    def _state(self, value: Any) -> str:
        """The digest of the example so far: the choices made since the last state, then ``value``."""
        import hashlib

        try:
            made = self.data.choices[self.mark:]
            self.mark += len(made)
        except Exception:
            made = ()
        if self.hash is None:
            node, arguments = self.head
            self.hash = hashlib.sha256(f"{node}\0{_canonical(arguments)}".encode("utf-8", "surrogatepass"))
        self.hash.update(f"\0{_canonical([[_jsonable(c) for c in made], value])}".encode("utf-8", "surrogatepass"))
        return self.hash.copy().hexdigest()[:32]

    def done(self, held: bool) -> tuple[list[str], str | None] | None:
        """Stop watching: ``(the states the example went past, the state it failed at or None)``; ``None`` when
        the test drew nothing while it ran (its arguments are its identity: :func:`example_digest`)."""
        if self.data is None:
            return None
        with contextlib.suppress(AttributeError):
            del self.data.draw
        try:
            trailing = len(self.data.choices) > self.mark
        except Exception:
            trailing = False
        if not self.states and not trailing:
            return None
        end = self._state(None) if trailing else None  # choices made after the last draw (a drawn Random's)
        if held:
            return self.states + ([end] if end is not None else []), None
        return self.states[:-1], end if end is not None else self.states[-1]


MAX_DRAWS = 1_000  # values drawn in a test's body kept in its example (its states still cover every draw)


def _canonical(value: Any) -> str:
    """Canonical JSON of a drawn value for a digest, memory addresses folded."""
    import re

    return re.sub(r"0x[0-9a-fA-F]+", "<addr>", json.dumps(value, sort_keys=True, default=repr))


def _step(value: Any) -> Any:
    """A drawn value as evidence: a state machine's step (its rule and arguments, a bundle's value by its name,
    as Hypothesis prints the steps) as ``{"rule": NAME, ARG: VALUE, …}``, anything else as :func:`_jsonable`."""
    stateful = sys.modules.get("hypothesis.stateful")
    rule_type = getattr(stateful, "Rule", None)
    if rule_type is not None and type(value) is tuple and len(value) == 2 and isinstance(value[0], rule_type) \
            and isinstance(value[1], dict):
        ref = getattr(stateful, "VarReference", None)

        def arg(v: Any) -> Any:
            if ref is not None and isinstance(v, ref):
                return v.name
            if isinstance(v, list) and ref is not None and v and all(isinstance(x, ref) for x in v):
                return [x.name for x in v]
            return _jsonable(v)

        step = {"rule": str(getattr(value[0].function, "__name__", "?"))}
        step.update({str(k): arg(v) for k, v in value[1].items()})
        return step
    return _jsonable(value)


def _counted(test: Any, run: dict[str, Any]) -> Any:
    """``test`` counting trials and hits, keeping each example as drawn (the counterexample of a failure), and
    logging examples into ``run["log"]`` (a logging pass: a failure is recorded and swallowed) or
    ``run["normal_log"]`` (the normal pass of a frozen property)."""
    acc = run["acc"]
    pack_dir, roots = run["trial"]["pack_dir"], run["trial"]["roots"]

    def counted(*args: Any, **kwargs: Any) -> Any:
        logging = run["log"] is not None
        # The drawn values as they were drawn, before any candidate call can change them in place
        # (docs/design.md §8.1 "Evidence comes from before the call"): the example log, the logged
        # input and the counterexample are all read from this snapshot, never from kwargs afterwards.
        drawn = {k: _jsonable(v) for k, v in kwargs.items()}
        mutable = any(type(v) in _MUTABLE for v in kwargs.values())
        body = _BodyDraws(run["node"], kwargs, drawn)
        if not logging:
            acc["trials"] += 1
            acc["last_example"] = drawn
        run["trial"]["inside"] += 1
        try:
            result = test(*args, **kwargs)
        except BaseException as exc:
            run["trial"]["inside"] -= 1
            if mutable:
                _note_changed(acc, drawn, kwargs)
            if run["find"] and type(exc) is _hypothesis_class("hypothesis.errors", "Found"):
                # find()'s condition held: its search ends here (in every pass), no failure of the property.
                _held(run, acc, drawn, body.done(True), logging)
                raise
            if isinstance(exc, _discards()):
                body.done(False)
                # assume()/reject()/an invalid draw belong to the oracle. Reached through the candidate's
                # code they would discard exactly the examples that fail: a failure. Hypothesis has already
                # marked the example invalid, so the verdict is decided at the end of the property.
                origin = _discarded_by(exc, run)
                if origin is not None:
                    acc.setdefault("discarded_by", origin)
                raise
            states = body.done(False)
            if logging:
                if isinstance(exc, _control_flow()) and getattr(exc, "__verdict_gate_origin__", None) != "candidate":
                    raise  # Hypothesis's, pytest's or the interpreter's own (the real classes, never a look-alike)
                # A logging pass (docs/design.md §8.3): record the failure and carry on, so Hypothesis
                # draws the same sequence on the base and on the candidate. Anything else (a look-alike
                # of a control-flow exception the candidate raised included) is a failing example:
                # raised, it would end the pass early and hide the examples after it.
                _log_example(run, drawn, False, exc, _failure_print(exc, pack_dir, roots), states=states)
                return None
            acc["hits"] += 1
            # Which example raised which exception: Hypothesis's final replay of each distinct
            # bug raises the exception it reports, so each failure gets its own counterexample.
            raised = acc.setdefault("raised", {})
            raised[id(exc)] = (exc, drawn)
            while len(raised) > 256:
                raised.pop(next(iter(raised)))
            if run["normal_log"] is not None:  # the normal pass of a frozen property is logged too
                _log_example(run, drawn, False, exc, _failure_print(exc, pack_dir, roots), log=run["normal_log"],
                             states=states)
            raise
        run["trial"]["inside"] -= 1
        if mutable:
            _note_changed(acc, drawn, kwargs)
        _held(run, acc, drawn, body.done(True), logging)
        return result

    counted.__name__ = getattr(test, "__name__", "counted")  # Hypothesis names the test in its messages
    counted.__qualname__ = getattr(test, "__qualname__", "counted")
    return counted


def _held(run: dict[str, Any], acc: dict[str, Any], drawn: dict[str, Any],
          states: tuple[list[str], str | None] | None, logging: bool) -> None:
    if logging:
        _log_example(run, drawn, True, states=states)
        return
    acc["hits"] += 1
    if run["normal_log"] is not None:
        _log_example(run, drawn, True, log=run["normal_log"], states=states)


def fresh_split(fresh: int | str | None, budget: int) -> tuple[int, int]:
    """``(recorded, fresh)``: how many of a property's ``budget`` examples (its Hypothesis
    ``max_examples``) the recorded seed draws and how many the run's fresh seed draws.

    ``fresh`` is the catalog's ``fresh_examples`` (docs/design.md §7): a count, or a percentage of the
    budget as ``"20%"`` (rounded up); ``None`` or ``0`` draws none. The fresh share is at most half
    the budget, so the recorded seed, whose failures are the ones scored outright, keeps the larger part.
    """
    percent = isinstance(fresh, str) and fresh.endswith("%")
    wanted = -(-budget * int(str(fresh)[:-1]) // 100) if percent else int(fresh or 0)
    share = max(0, min(wanted, budget // 2))
    return budget - share, share


MAX_LOG = 10_000  # examples kept per log; the results record and the evidence stay bounded
MAX_LOG_INPUT = 2_000  # characters of a failing example's input kept in a log
MAX_LOG_INPUTS = 50  # failing examples per log whose input is kept
STOPPED = "f" * 32  # the digest of the entry that says a logging pass stopped early


def _control_flow() -> tuple[type[BaseException], ...]:
    """The exception classes a logging pass lets through: Hypothesis's own control flow, pytest's
    outcomes other than a failure, and the interpreter's. The real classes of this process only."""
    from _pytest.outcomes import Exit, Skipped
    from hypothesis.errors import UnsatisfiedAssumption

    found: list[type[BaseException]] = [UnsatisfiedAssumption, Exit, Skipped, KeyboardInterrupt, SystemExit,
                                        GeneratorExit]
    try:
        from hypothesis.internal.conjecture.data import StopTest

        found.append(StopTest)
    except ImportError:  # pragma: no cover - an older Hypothesis
        pass
    return tuple(found)


def example_digest(node: str, drawn: dict[str, Any]) -> str:
    """The digest of one drawn example (docs/design.md §8.3): its test node and its value as drawn
    (``_jsonable`` of each argument, taken before any candidate call), canonical JSON, memory addresses
    folded, sha256, 32 hex digits. (A test that draws while it runs has a digest per state: :class:`_BodyDraws`.)"""
    import hashlib

    return hashlib.sha256(f"{node}\0{_canonical(drawn)}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


_MUTABLE = (list, dict, set, bytearray)  # argument types a candidate call may change in place


def _note_changed(acc: dict[str, Any], drawn: dict[str, Any], kwargs: dict[str, Any]) -> None:
    """Count a call that changed a drawn value in place (recorded as ``inputs_changed``; the evidence
    keeps the values as drawn)."""
    if any(_jsonable(v) != drawn[k] for k, v in kwargs.items() if type(v) in _MUTABLE):
        acc["inputs_changed"] = acc.get("inputs_changed", 0) + 1


def _failure_print(exc: BaseException, pack_dir: str, roots: list[str]) -> str:
    """16 hex digits of how an example failed (docs/design.md §8.3): the exception's type, its message (this
    run's paths and ``0x`` addresses replaced, digits kept) and the pack line it came through, so the same
    example failing the same way on the base and on the candidate prints alike, and another bug on an example
    that already failed on the base does not; never raises."""
    import hashlib
    import re

    try:
        text = str(exc)
    except Exception:  # a candidate exception whose __str__ fails
        text = "(its message could not be read)"
    for root in sorted(roots, key=len, reverse=True):
        text = text.replace(root.rstrip("/"), "<root>")
    text = re.sub(r"0x[0-9a-fA-F]+", "<addr>", text)
    line = _pack_line(exc, pack_dir) or ""
    kind = type(exc)
    return hashlib.sha256(f"{kind.__module__}.{kind.__qualname__}\0{text}\0{line}".encode(
        "utf-8", "surrogatepass")).hexdigest()[:16]


def _pack_line(exc: BaseException, pack_dir: str) -> str | None:
    """``PATH:LINE`` (relative to the pack, like a node id's path) of the innermost frame under ``pack_dir``
    (ending in a separator) in ``exc``'s traceback: the oracle process's real frames only, never the frames
    the worker sent as data."""
    line, tb = None, exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(pack_dir):
            line = f"{filename[len(pack_dir):]}:{tb.tb_lineno}"
        tb = tb.tb_next
    return line


def _log_example(run: dict[str, Any], drawn: dict[str, Any], held: bool,
                 exc: BaseException | None = None, fails: str | None = None,
                 log: list[dict[str, Any]] | None = None,
                 states: tuple[list[str], str | None] | None = None) -> None:
    """Log one example: one entry by its digest (:func:`example_digest`), or, for a test that drew while it ran,
    one held entry per state it went past and a failing one for the state it failed at (:class:`_BodyDraws`)."""
    log = run["log"] if log is None else log
    if log is None:
        return
    if states is not None:
        for digest in states[0]:
            _log_entry(run, log, digest, drawn, True)
        if states[1] is not None:
            _log_entry(run, log, states[1], drawn, False, exc, fails)
        return
    _log_entry(run, log, example_digest(run["node"], drawn), drawn, held, exc, fails)


def _log_entry(run: dict[str, Any], log: list[dict[str, Any]], digest: str, drawn: dict[str, Any], held: bool,
               exc: BaseException | None = None, fails: str | None = None) -> None:
    if len(log) >= MAX_LOG:
        return
    entry: dict[str, Any] = {"digest": digest, "held": held}
    if fails is not None:
        entry["fails"] = fails
    kept = run["acc"].setdefault("inputs_kept", {})
    if not held and kept.get(id(log), 0) < MAX_LOG_INPUTS:
        kept[id(log)] = kept.get(id(log), 0) + 1
        text = json.dumps(drawn, sort_keys=True, default=repr)
        entry["input"] = drawn if len(text) <= MAX_LOG_INPUT else text[:MAX_LOG_INPUT] + "…"
        if exc is not None:  # what failed on this example, for the report of a new failing example (V16)
            entry["error"] = _error_line(exc)
    log.append(entry)


def _error_line(exc: BaseException) -> str:
    """``ExcType: the first line of its message`` (at most :data:`MAX_LOG_INPUT` characters); never raises."""
    try:
        lines = str(exc).strip().splitlines()
    except Exception:  # a candidate exception whose __str__ fails
        lines = ["(its message could not be read)"]
    text = f"{type(exc).__qualname__}: {lines[0]}" if lines else type(exc).__qualname__
    return text if len(text) <= MAX_LOG_INPUT else text[:MAX_LOG_INPUT] + "…"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Inside a test's call, of any kind (a function, a unittest ``TestCase``'s method), ``SystemExit`` and
    ``KeyboardInterrupt`` from the candidate arrive as themselves (``pytest.raises(SystemExit)``,
    ``assertRaises(SystemExit)``); one that reaches pytest is the test's failure, never the end of the run."""
    state = _state(item.config)
    client = state["client"] if state is not None else None
    if client is not None:
        client.as_itself = True
    try:
        return (yield)
    except KeyboardInterrupt as exc:
        if getattr(exc, "__verdict_gate_origin__", None) != "candidate":
            raise  # a real Ctrl-C stops the run
        failure = _CandidateInterrupt(f"the candidate raised KeyboardInterrupt: {exc}")
        failure.__verdict_gate_origin__ = "candidate"  # type: ignore[attr-defined]
        failure.__verdict_gate_frames__ = getattr(exc, "__verdict_gate_frames__", [])  # type: ignore[attr-defined]
        raise failure from exc
    finally:
        if client is not None:
            client.as_itself = False


class _CandidateInterrupt(Exception):
    """A ``KeyboardInterrupt`` the candidate raised that reached pytest: the test fails (pytest would stop)."""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = _state(config)
    if state is None:
        return
    props = state["spec"]["properties"]
    order = {p["id"]: i for i, p in enumerate(props)}
    kept, dropped = [], []
    index: dict[str, tuple[int, str]] = {}
    for position, prop in enumerate(props):
        index.setdefault(prop["selector"], (position, prop["id"]))
    for item in items:
        pid = _prop_for(item.nodeid, props, index)
        if pid is None:
            dropped.append(item)
            continue
        state["item_prop"][item.nodeid] = pid
        kept.append(item)
    kept.sort(key=lambda it: order[state["item_prop"][it.nodeid]])  # stable: file order inside a property
    # Test modules (and the candidate code they import) have run by now. Hypothesis settings
    # decorators resolved their defaults against the current profile while they ran: if
    # anything replaced ours, every Hypothesis property of this process is untrustworthy.
    if "profile" in state:
        from hypothesis import settings

        if settings.default is not state["profile"]:
            state["settings_tampered"] = True
    matched = set(state["item_prop"].values())
    failed_files = {nodeid.split("::")[0] for nodeid in state["collect_errors"]}
    for prop in props:
        if prop["id"] not in matched and prop["selector"].split("::")[0] not in failed_files:
            _emit(state, _results(state).uncollected(prop["id"], prop["selector"]))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
    _emit(state, _results(state).collected(len(kept)))


def pytest_collection_finish(session: pytest.Session) -> None:
    if _state(session.config) is not None:
        _settle()


def _spec_files(state: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """The catalog's oracle files and every directory above them (absolute paths)."""
    if "files" not in state:
        files = frozenset(os.path.normpath(f) for f in state["spec"].get("files") or [])
        dirs = {os.path.dirname(f) for f in files}
        for d in list(dirs):
            while d and d != os.path.dirname(d):
                d = os.path.dirname(d)
                dirs.add(d)
        state["files"] = (files, frozenset(dirs))
    return state["files"]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The runner passes directories (collection stays linear in the number of files); only the
    catalog's oracle files are collected from them, so nothing else of the pack is imported."""
    state = _state(config)
    if state is None or not state["spec"].get("files"):
        return None
    files, dirs = _spec_files(state)
    path = os.path.normpath(str(collection_path))
    if path in files or path in dirs:
        return None
    if collection_path.name in ("__init__.py", "conftest.py"):
        return None
    return True


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """A catalog oracle file whose name pytest would not collect (not ``test_*.py``) is collected too."""
    state = _state(parent.config)
    if state is None or file_path.suffix != ".py":
        return None
    files, _dirs = _spec_files(state)
    if os.path.normpath(str(file_path)) not in files:
        return None
    import fnmatch

    if any(fnmatch.fnmatch(file_path.name, pattern) for pattern in parent.config.getini("python_files")):
        return None  # pytest's own python plugin collects it
    module: pytest.Module = pytest.Module.from_parent(parent, path=file_path)
    return module


@pytest.fixture(scope="session")
def oracle_fixtures(request: pytest.FixtureRequest) -> Path:
    """The pack's ``fixtures/`` directory, read-only (also in ``$VERDICT_GATE_FIXTURES``).

    Under plain ``pytest`` (no gate), the ``fixtures/`` beside the nearest ``catalog.yaml`` above the
    first collected test file."""
    configured = os.environ.get("VERDICT_GATE_FIXTURES")
    if configured:
        return Path(configured)
    items = getattr(request.session, "items", None) or []
    start = Path(str(items[0].path)).parent if items else Path(str(request.config.rootpath))
    for directory in (start, *start.parents):
        if (directory / "catalog.yaml").is_file():
            return directory / "fixtures"
    raise pytest.UsageError("oracle_fixtures: no catalog.yaml above the tests and VERDICT_GATE_FIXTURES is not set; "
                            "run the properties from inside an oracle pack, or set VERDICT_GATE_FIXTURES")


def _isolation_ready(state: dict[str, Any]) -> None:
    """Take the worker's fence report (started at configure time) before a property runs; a level the
    host cannot give marks every property of this process ``isolation_unavailable``."""
    client = state["client"]
    if state["isolation"].get("method") == "unavailable":
        return
    with contextlib.suppress(Exception):  # IsolationUnavailable: recorded just below
        client.ready()
    if client.unavailable:
        state["isolation"] = {"level": state["isolation"]["level"], "method": "unavailable", "fences": {},
                              "why": str(client.unavailable)[:2000]}
    elif client.info.get("method") != "unknown":
        state["isolation"] = dict(client.info)


def _watch_each(state: dict[str, Any]) -> bool:
    """Per-property fixture snapshots only where candidate code can write the fixtures (level none);
    elsewhere the gate's post-run check (docs/design.md §4) covers the run and blames every property
    that may not mutate them (the worker sees them read-only)."""
    return state["isolation"].get("level", "none") == "none"


def _snapshot(dirs: list[str]) -> list[tuple[str, int, int, int]]:
    snap = []
    for top in dirs:
        for root, subdirs, files in os.walk(top):
            subdirs.sort()
            for name in sorted(files) + sorted(d + "/" for d in subdirs):
                path = os.path.join(root, name.rstrip("/"))
                st = os.lstat(path)
                snap.append((path, st.st_size, st.st_mtime_ns, st.st_mode))
    return snap


def _new_acc() -> dict[str, Any]:
    return {"trials": 0, "hits": 0, "items": 0, "skipped_items": 0, "status": None, "failure": None, "seed": None,
            "hypothesis": False, "last_example": None, "t0": time.monotonic(), "failures": [], "nodes": {},
            "crashed": [],
            "nodes_more": 0}


def _record_node(item: pytest.Item, report: pytest.TestReport, acc: dict[str, Any], known: tuple[str, ...],
                 limit: int) -> None:
    """Keep the node's outcome as plain pytest reports it (runs.json ``nodes``; the fidelity test compares
    them with plain pytest's). The category is pytest's own (``pytest_report_teststatus``: the skipping
    plugin's xfailed/xpassed, ``error`` for a failed setup or teardown); the setup's or the call's
    outcome stands, a failed call (a unittest subtest's included) makes it ``failed``, and a teardown
    error turns any outcome but ``failed`` into ``error``."""
    nodes, nodeid = acc["nodes"], item.nodeid
    if nodeid not in nodes:
        if report.when != "setup" or len(nodes) >= limit:
            acc["nodes_more"] += report.when == "setup"  # each node once: every node has a setup report
            return
        nodes[nodeid] = ""
    status = item.config.hook.pytest_report_teststatus(report=report, config=item.config)
    category = status[0] if isinstance(status, tuple) and status else ""
    if category not in known:  # a passing setup or teardown (""), or a word of another plugin's own
        category = report.outcome if report.when == "call" or report.skipped else (
            "" if report.passed else "error")
    before = nodes[nodeid]
    if not before or (report.when == "call" and category == "failed") or (
            report.when == "teardown" and category == "error" and before != "failed"):
        nodes[nodeid] = category


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    state = _state(item.config)
    if state is None:
        return (yield)
    pid = state["item_prop"][item.nodeid]
    prop = state["props"][pid]
    if pid not in state["started"]:
        state["started"].add(pid)
        if state["client"] is not None:
            _isolation_ready(state)
            state["client"].new_property()
        state["acc"][pid] = _new_acc()
        state["snapshot"] = _snapshot(state["spec"]["watch"]) if _watch_each(state) else None
        _emit(state, _results(state).start(pid, time.time()))
    acc = state["acc"][pid]
    acc["items"] += 1
    if "profile" in state:
        from hypothesis import settings

        settings.load_profile("verdict-gate") if settings.get_profile("verdict-gate") is state["profile"] \
            else state.__setitem__("settings_tampered", True)
    global _TRIAL
    acc["last_example"] = None  # a failure of this node never shows another node's example
    spec = state["spec"]
    _TRIAL = {"prop": prop, "acc": acc, "node": item.nodeid, "runs": 0, "inside": 0,
              "pack_dir": str(item.config.rootpath) + os.sep,
              "roots": [str(r[0]) for r in spec.get("roots", [])], "python_path": spec.get("python_path", []),
              "level": state["isolation"].get("level", "none"), "callbacks": _callback_codes(state["client"])}
    try:
        # pytest.exit() or KeyboardInterrupt propagate out of the yield, so no result is written
        # for a property cut short: the runner records it crashed (the process ends mid-property).
        result = yield
    finally:
        _TRIAL = None
    outcome = acc["nodes"].get(item.nodeid)
    if outcome:  # kept if the property is lost later (a timeout, a crash): the runner holds the nodes so far
        _emit(state, _results(state).node(pid, item.nodeid, outcome))
    if nextitem is None or state["item_prop"].get(nextitem.nodeid) != pid:
        _finish(state, pid)
    return result


def _contain_crash(client: Any, nodeid: str, acc: dict[str, Any]) -> None:
    """A worker that died or answered malformed data while a test node ran fails that node (recorded out of band:
    the node fails even if its code caught the exception) and only that node: the next one starts a fresh worker
    (docs/design.md §8.1, "Faults are contained")."""
    if client is None or not client.failure:
        return
    crash: dict[str, Any] = {"node": nodeid, "exc_type": "verdict_gate.WorkerCrashed",
                             "message": f"the candidate worker failed: {client.failure}", "counterexample": None,
                             "traceback": [], "origin": "candidate"}
    acc["crashed"].append(crash)
    acc["failures"].append(crash)
    if nodeid in acc["nodes"]:
        acc["nodes"][nodeid] = "failed"
    client.failure = None  # the crash killed the worker: the next request starts a fresh one


def _finish(state: dict[str, Any], pid: str) -> None:
    acc = state["acc"][pid]
    mutated = _watch_each(state) and _snapshot(state["spec"]["watch"]) != state.get("snapshot")
    status = acc["status"] or "skipped"
    if status == "pass" and acc["skipped_items"]:
        status = "skipped"  # some case was skipped: not every case was checked (vacuous)
    client = state["client"]
    restart_failed = bool(client is not None and client.unavailable
                          and state["isolation"].get("method") != "unavailable")
    charged = restart_failed and client.crashes > 0
    if restart_failed and not charged:
        # The worker could not be started at this level: a fault of the host, recorded as the isolation.
        state["isolation"] = {"level": state["isolation"]["level"], "method": "unavailable", "fences": {},
                              "why": str(client.unavailable)[:2000]}
    if charged:
        # The candidate's code crashed a worker of this process before: a worker that then cannot start
        # again is charged to the candidate (its leftovers may be why), never to the host.
        status = "crash"
        acc["failure"] = {"node": pid, "exc_type": "verdict_gate.WorkerCrashed",
                          "message": "the candidate worker could not be started again after the candidate's code "
                                     f"crashed an earlier one: {client.unavailable}", "counterexample": None,
                          "traceback": []}
    elif state["isolation"].get("method") == "unavailable":
        status = "fail"
        acc["failure"] = {"node": pid, "exc_type": "verdict_gate.IsolationUnavailable",
                          "message": state["isolation"]["why"], "counterexample": None, "traceback": []}
    elif acc["crashed"]:
        # Out of band: an oracle that caught the worker's crash cannot have turned it into a pass; the nodes after
        # it ran on a fresh worker, each with its own outcome (_contain_crash).
        status = "crash"
        acc["failure"] = acc["crashed"][0]
    elif acc.get("discarded_by"):
        status = "fail"
        acc["failure"] = {"node": pid, "exc_type": "verdict_gate.DiscardedExample",
                          "message": "an example was discarded (assume/reject/invalid draw) by code outside the "
                                     f"oracle: {acc['discarded_by']}", "counterexample": None, "traceback": []}
    elif acc["hypothesis"] and state.get("settings_tampered") and status != "fail":
        status = "fail"
        acc["failure"] = {"node": pid, "exc_type": "verdict_gate.SettingsTampered",
                          "message": "Hypothesis's settings profile was replaced while the tests ran "
                                     "(by code the properties import?)", "counterexample": None, "traceback": []}
    # The failure set: the override above (a run that cannot be trusted) stands alone; otherwise
    # every failure the test nodes reported.
    failures = acc["failures"] if acc["failure"] is not None and acc["failure"] in acc["failures"] else (
        [acc["failure"]] if acc["failure"] is not None else [])
    prop = state["props"][pid]
    _emit(state, _results(state).result(
        pid, status, seed=acc["seed"], hypothesis=acc["hypothesis"], trials=acc["trials"], hits=acc["hits"],
        items=acc["items"], duration_s=round(time.monotonic() - acc["t0"], 6), fixture_mutated=mutated,
        isolation=dict(state["isolation"]) if state["isolation"].get("method") == "unavailable"
        or state["client"] is None or state["client"].info.get("method") == "unknown"
        else dict(state["client"].info), **(acc["failure"] or {}),
        failures=failures if status in ("fail", "crash") else [],
        example_log=acc.get("example_log") if prop.get("example_log") and acc["hypothesis"] else None,
        fresh_seed=prop.get("fresh_seed") if "fresh_log" in acc else None, fresh_log=acc.get("fresh_log"),
        inputs_changed=acc.get("inputs_changed", 0),
        boundary=_limits(client, state["spec"]["roots"]),
        nodes={n: o for n, o in acc["nodes"].items() if o}, nodes_more=acc["nodes_more"]))


def _limits(client: Any, roots: list[list[str]]) -> list[dict[str, str]]:
    """The limits of the isolation boundary this property met (recorded by the proxy out of band, so an
    oracle that caught the exception still cannot pass), each with the oracle line it was met at."""
    found = []
    for limit in (client.boundary if client is not None else [])[:50]:
        where = ""
        for path, line, _function in reversed(limit.get("stack") or []):
            for root, prefix in roots:
                if prefix and str(path).startswith(root.rstrip("/") + "/"):
                    where = f"{prefix}/{str(path)[len(root.rstrip('/')) + 1:]}:{line}"
                    break
            if where:
                break
        found.append({"message": str(limit.get("message", ""))[:2000], "where": where})
    return found


def _frames(excinfo: Any, roots: list[list[str]]) -> list[dict[str, Any]]:
    """Repository-relative frames: the oracle's, then the candidate worker's (data the worker sent)."""
    raw = [(str(entry.path), entry.lineno + 1, entry.name) for entry in excinfo.traceback]
    remote = getattr(excinfo.value, "__verdict_gate_frames__", None)
    if isinstance(remote, list):
        raw += [(str(f[0]), f[1], str(f[2])) for f in remote[-40:]
                if isinstance(f, list) and len(f) == 3 and type(f[1]) is int]
    frames = []
    for path, line, function in raw:
        for root, prefix in roots:
            if path.startswith(root.rstrip("/") + "/"):
                rel = path[len(root.rstrip("/")) + 1:]
                frames.append({"path": f"{prefix}/{rel}" if prefix else rel, "line": line, "function": function})
                break
    return frames


def _origin(exc: BaseException, frames: list[dict[str, Any]], roots: list[list[str]]) -> str:
    """Where ``exc`` was raised (docs/design.md §5, the signature's ``origin``): ``boundary`` for the
    gate's own boundary errors; ``candidate:PATH:FUNCTION`` (the deepest frame of the candidate's tree)
    for an exception the candidate worker raised, or candidate code at level ``none``; else ``oracle``.
    The tag is set by the boundary's proxy on the oracle's side, so candidate code cannot forge it."""
    tag = getattr(exc, "__verdict_gate_origin__", None)
    if tag == "boundary":
        return "boundary"
    tree = [prefix for _root, prefix in roots if not prefix]
    packs = [prefix.rstrip("/") + "/" for _root, prefix in roots if prefix]
    deepest = frames[-1] if frames else None  # the raise point (frames outside the roots are left out)
    if tree and deepest is not None and not any(deepest["path"].startswith(p) for p in packs):
        return f"candidate:{deepest['path']}:{deepest['function']}"
    return "candidate" if tag == "candidate" else "oracle"


def _site(excinfo: Any, roots: list[list[str]], client: Any = None) -> str | None:
    """``PATH:LINE`` of the innermost frame of the pack's own code the failure came through (docs/design.md §5,
    the signature's ``site``), the path relative to the pack's root like a node id's (so the same wherever the
    pack was fetched to): the oracle process's real frames only, never the frames the worker sent. For an
    exception the candidate raised, ``#`` and the digest of what the oracle asked it (the proxy's ``asked``):
    the same line in a loop over cases asks a different question for each."""
    asked = client.asked.get(id(excinfo.value)) if client is not None else None
    mark = f"#{asked[1]}" if asked is not None and asked[0] is excinfo.value else ""
    packs = [root.rstrip("/") + "/" for root, prefix in roots if prefix]
    line = _pack_line(excinfo.value, packs[0]) if packs else None
    return f"{line}{mark}" if line is not None else None


def _failure(excinfo: Any, nodeid: str, acc: dict[str, Any] | None, roots: list[list[str]],
             client: Any = None) -> dict[str, Any]:
    exc = excinfo.value
    cause = exc.__cause__ if type(exc).__name__ == "CollectError" and exc.__cause__ is not None else exc
    if cause is not exc:  # a collection error: its frames and pack line are the import's (the pack's own line)
        excinfo = pytest.ExceptionInfo.from_exception(cause)
    etype = type(cause)
    has_example = bool(acc and acc.get("hypothesis") and acc.get("last_example") is not None)
    frames = _frames(excinfo, roots)
    message, site = _cap(str(cause)), _site(excinfo, roots, client)
    if isinstance(cause, pytest.FixtureLookupError):
        message, site = _missing_fixture(cause, roots) or (message, site)
    return {
        "node": nodeid,
        "exc_type": f"{etype.__module__}.{etype.__qualname__}",
        "message": message,
        "counterexample": acc["last_example"] if has_example and acc else None,
        "traceback": frames,
        "origin": _origin(cause, frames, roots),
        "site": site,
    }


def _missing_fixture(exc: Any, roots: list[list[str]]) -> tuple[str, str | None] | None:
    """pytest's own words for a fixture it cannot find (``fixture 'db' not found``) and the pack line of the
    test or fixture that asks for it (``PATH:LINE``, pack-relative), instead of the exception's bare repr."""
    try:
        shown = exc.formatrepr()
        first = next((line for line in str(shown.errorstring).splitlines() if line.strip()), "")
        filename, line = str(shown.filename), int(shown.firstlineno) + 1
    except Exception:  # pytest's internals moved: keep the exception's own text
        return None
    site = None
    for root, prefix in roots:
        if prefix and filename.startswith(root.rstrip("/") + "/"):
            site = f"{filename[len(root.rstrip('/')) + 1:]}:{line}"
    return _cap(first.strip()), site


def _failures(excinfo: Any, nodeid: str, acc: dict[str, Any] | None, roots: list[list[str]],
              client: Any = None) -> list[dict[str, Any]]:
    """Every failure one exception stands for: itself, or, for the group Hypothesis raises when it
    found several distinct bugs (``report_multiple_bugs``), each of them with its own example."""
    exc = excinfo.value
    group = getattr(exc, "exceptions", None)
    if not (acc and acc.get("hypothesis") and isinstance(exc, BaseExceptionGroup) and group):
        one = _failure(excinfo, nodeid, acc, roots, client)
        known = (acc or {}).get("raised", {}).get(id(exc))
        if known is not None and known[0] is exc and one["counterexample"] is not None:
            one["counterexample"] = known[1]
        return [one]
    found = []
    for sub in group:
        info = pytest.ExceptionInfo.from_exception(sub)
        one = _failure(info, nodeid, acc, roots, client)
        known = acc.get("raised", {}).get(id(sub))
        one["counterexample"] = known[1] if known is not None and known[0] is sub else None
        found.append(one)
    return found


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    state = _state(item.config)
    if state is None:
        return report
    acc = state["acc"][state["item_prop"][item.nodeid]]
    results = _results(state)
    _record_node(item, report, acc, results.NODE_OUTCOMES, results.MAX_NODES)
    if report.when == "teardown":
        _contain_crash(state["client"], item.nodeid, acc)
    if report.when == "call" and not acc["hypothesis"] and report.outcome != "skipped":
        acc["trials"] += 1  # a plain (example) test is one trial, one hit when its body ran
        acc["hits"] += 1
    xfailed = report.skipped and hasattr(report, "wasxfail")
    if report.failed or xfailed:
        if call.excinfo is not None:
            # Every failing test node, and every distinct bug in it, is a failure of its own (§5).
            found = _failures(call.excinfo, item.nodeid, acc, state["spec"]["roots"], state["client"])
            if acc["status"] != "fail":
                acc["failure"] = dict(found[0])
            acc["failures"] += found
        acc["status"] = "fail"
    elif report.skipped and report.when in ("setup", "call"):
        acc["skipped_items"] += 1  # a skipped case checked nothing: the property cannot pass
    elif report.when == "call" and report.passed and acc["status"] is None:
        acc["status"] = "pass"
    return report


def pytest_exception_interact(node: pytest.Item | pytest.Collector, call: pytest.CallInfo[Any], report: Any) -> None:
    state = _state(node.config)
    if state is None or isinstance(node, pytest.Item) or call.excinfo is None:
        return
    state["collect_errors"][node.nodeid] = _failure(call.excinfo, node.nodeid, None, state["spec"]["roots"])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = _state(session.config)
    if state is None:
        return
    # A property whose module failed to import never started: report the import error as its failure.
    for prop in state["spec"]["properties"]:
        if prop["id"] in state["started"]:
            continue
        path = prop["selector"].split("::")[0]
        for nodeid, failure in state["collect_errors"].items():
            if nodeid == path or path.startswith(nodeid.rstrip("/") + "/") or nodeid == "":
                # The seed is recorded as the one the property would have run with: it never
                # ran, so it cannot have run unseeded.
                results = _results(state)
                _emit(state, results.start(prop["id"], time.time()))
                _emit(state, results.result(prop["id"], "fail", seed=prop.get("seed"), hypothesis=False, trials=0,
                                            hits=0, items=0, duration_s=0.0, fixture_mutated=False,
                                            **{**failure, "node": prop["selector"]},
                                            failures=[{**failure, "node": prop["selector"]}],
                                            nodes={nodeid: "error"}, nodes_more=0))  # as pytest: the file errs
                break
    # The closing record: a process that ends without it (os._exit, a crash after the last
    # result) has its results discarded by the runner.
    _emit(state, _results(state).end())
    state["out"].close()
    if state["client"] is not None:
        state["client"].close()  # the worker, its temp dir and the fence probes' targets
