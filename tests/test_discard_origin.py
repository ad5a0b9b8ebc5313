"""Whose discard is it (issue 42, docs/design.md §8.1 "The oracle's control flow stays the oracle's"): the plugin
tells Hypothesis's own control flow from the candidate's by whose code each frame between the test and the raise
point runs, never by a file name; the boundary lets only Hypothesis's real classes through as its control flow.

Real exceptions with real tracebacks: through Hypothesis's generated code (its file name is ``<string>``), and
through a candidate module on disk that raises ``StopTest``, ``UnsatisfiedAssumption`` or ``Frozen`` itself,
calls ``reject()``, runs code it made with ``exec``, or wears a Hypothesis file name on its code."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis.errors import Frozen, StopTest, UnsatisfiedAssumption
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.reflection import define_function_signature

import verdict_gate_plugin as plugin
from verdict_gate.boundary import proxy
from verdict_gate.boundary.proxy.errors import control_flow

pytestmark = [pytest.mark.fast, pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")]

CANDIDATE = '''
import hypothesis
import hypothesis.control
from hypothesis.errors import Frozen, StopTest, UnsatisfiedAssumption


def rejects():
    hypothesis.reject()


def assumes():
    hypothesis.assume(False)


def stops():
    raise StopTest(0)


def freezes():
    raise Frozen("frozen by the candidate")


def unsatisfied():
    raise UnsatisfiedAssumption()


def made_by_exec():
    space = {}
    exec(compile("import hypothesis\\ndef made():\\n    hypothesis.reject()\\n", "<string>", "exec"), space)
    return space["made"]


def draws(data):
    return data.draw_integer(0, 10)


def ends(data):
    data.mark_invalid("the candidate's own")


def _disguised():
    hypothesis.reject()


# Its code says it is Hypothesis's own file; it still runs in this module's namespace.
_disguised.__code__ = _disguised.__code__.replace(co_filename=hypothesis.control.__file__)
disguised = _disguised
'''


@pytest.fixture
def candidate(tmp_path: Path) -> Iterator[ModuleType]:
    """A candidate module imported from a ``python_path`` directory, as at isolation ``none``."""
    root = tmp_path / "src"
    root.mkdir()
    (root / "vg_discarding_candidate.py").write_text(CANDIDATE)
    spec = importlib.util.spec_from_file_location("vg_discarding_candidate", root / "vg_discarding_candidate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def raised(call: Callable[[], object]) -> BaseException:
    """What ``call`` raised, caught one frame above it (where the plugin's wrapper of a test catches it)."""
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - StopTest is a BaseException
        return exc
    raise AssertionError(f"{call} raised nothing")


def run_at(level: str, python_path: list[str], callbacks: frozenset[object] = frozenset()) -> dict[str, object]:
    return {"trial": {"level": level, "python_path": python_path, "callbacks": callbacks}}


def spent() -> ConjectureData:
    """An example with no choices left: its next draw runs out of data (StopTest), as when Hypothesis replays a
    shorter example."""
    return ConjectureData.for_choices([])


def test_hypothesis_s_generated_code_is_hypothesis_s_own(candidate, tmp_path):
    def overrun() -> None:  # as a drawn Random's method runs out of data: StopTest, through generated code
        raise StopTest(0)

    generated = define_function_signature("randint", None, inspect.signature(overrun))(overrun)
    assert generated.__code__.co_filename == "<string>"  # what the check used to take for the candidate's
    exc = raised(generated)
    assert isinstance(exc, plugin._discards())
    assert plugin._discarded_by(exc, run_at("none", [str(tmp_path / "src")])) is None


@pytest.mark.parametrize("name", ["rejects", "assumes", "stops", "freezes", "unsatisfied"])
def test_a_candidate_that_discards_itself_is_caught(candidate, tmp_path, name):
    exc = raised(getattr(candidate, name))
    assert isinstance(exc, plugin._discards()), type(exc)
    origin = plugin._discarded_by(exc, run_at("none", [str(tmp_path / "src")]))
    assert origin is not None and "vg_discarding_candidate.py" in origin, origin


def test_code_the_candidate_made_with_exec_is_the_candidate_s(candidate, tmp_path):
    made = candidate.made_by_exec()  # called by the oracle directly: no candidate module frame on the way
    assert made.__code__.co_filename == "<string>"
    origin = plugin._discarded_by(raised(made), run_at("none", [str(tmp_path / "src")]))
    assert origin is not None and "<string>" in origin


def test_a_file_name_the_candidate_gives_its_code_fools_nobody(candidate, tmp_path):
    assert candidate.disguised.__code__.co_filename.endswith("hypothesis/control.py")
    origin = plugin._discarded_by(raised(candidate.disguised), run_at("none", [str(tmp_path / "src")]))
    assert origin is not None


def test_a_draw_the_candidate_asks_for_ends_as_hypothesis_decides(candidate, tmp_path):
    # A Random or data object the property hands to candidate code: running out of data is Hypothesis's own
    # control flow, as under plain pytest (it happens on one call in ten when Hypothesis replays shorter examples).
    exc = raised(lambda: candidate.draws(spent()))
    assert isinstance(exc, StopTest)
    assert plugin._discarded_by(exc, run_at("none", [str(tmp_path / "src")])) is None
    # Ending the example itself is not a draw.
    origin = plugin._discarded_by(raised(lambda: candidate.ends(spent())), run_at("none", [str(tmp_path / "src")]))
    assert origin is not None and "vg_discarding_candidate.py" in origin


def test_at_a_fenced_level_only_a_call_the_candidate_made_back_leads_to_its_discard(candidate, tmp_path):
    def serve(call: Callable[[], object]) -> object:  # stands for the boundary's callback server
        return call()

    def reject() -> None:
        import hypothesis

        hypothesis.reject()

    fenced = run_at("sandbox", [str(tmp_path / "src")], frozenset([serve.__code__]))
    # Candidate code runs in the worker there: a frame of a candidate module here is not the candidate's.
    assert plugin._discarded_by(raised(candidate.rejects), fenced) is None
    assert plugin._discarded_by(raised(reject), fenced) is None  # the oracle's own reject()
    origin = plugin._discarded_by(raised(lambda: serve(reject)), fenced)  # reached through the candidate's call
    assert origin is not None and "back into the oracle" in origin
    assert plugin._discarded_by(raised(lambda: serve(lambda: spent().draw_integer(0, 9))), fenced) is None


def test_the_callback_server_the_plugin_names_is_the_boundary_s():
    assert plugin._callback_codes(object.__new__(proxy.Client)) == frozenset([proxy.Callbacks.serve.__code__])


def test_only_hypothesis_s_real_classes_are_its_discards_and_its_control_flow():
    class StopTestLookAlike(Exception):
        pass

    StopTestLookAlike.__name__ = StopTestLookAlike.__qualname__ = "StopTest"
    look_alikes = [type(name, (Exception,), {}) for name in ("UnsatisfiedAssumption", "Frozen")]
    for cls in [StopTestLookAlike, *look_alikes]:
        assert not isinstance(cls(), plugin._discards())
        assert not control_flow(cls())
    for exc in (StopTest(0), UnsatisfiedAssumption(), Frozen("x")):
        assert isinstance(exc, plugin._discards()) and control_flow(exc)
    # The candidate's own, mirrored by the boundary, is one of those look-alikes.
    mirrored = proxy.mirror_exception([["hypothesis.errors", "UnsatisfiedAssumption"], ["builtins", "Exception"]])
    assert not control_flow(mirrored()) and not isinstance(mirrored(), plugin._discards())
