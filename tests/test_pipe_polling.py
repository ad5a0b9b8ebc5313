"""The buffered frame reader, polling pipes, CPU placement of the oracle and its worker, and the
codec's fast path for plain argument lists (docs/design.md §8.1, §11)."""

from __future__ import annotations

import contextlib
import math
import os
import struct
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verdict_gate.boundary import codec, proxy
from verdict_gate.run import runner

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)


def _frame(value: object) -> bytes:
    body = codec._DUMPS(value).encode()
    return struct.pack(">I", len(body)) + body


@pytest.fixture
def pipe():
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


@pytest.mark.parametrize("spin_s", [0.0, 0.001], ids=["sleeping", "polling"])
def test_reader_takes_two_frames_from_one_write_and_keeps_the_second(pipe, spin_s: float) -> None:
    read, write = pipe
    reader = codec.Reader(read, spin_s)
    os.write(write, _frame({"ok": 1}) + _frame(["two", None]) + _frame("x")[:3])
    assert reader.frame() == {"ok": 1}
    assert reader.ready(0) is True  # the second frame is buffered: no wait
    assert reader.frame() == ["two", None]
    os.close(write)
    with pytest.raises(codec.ProtocolError, match="mid-frame"):
        reader.frame()


@pytest.mark.parametrize("spin_s", [0.0, 0.001], ids=["sleeping", "polling"])
def test_reader_refuses_malformed_and_oversized_frames(pipe, spin_s: float) -> None:
    read, write = pipe
    reader = codec.Reader(read, spin_s)
    os.write(write, b"\x00\x00\x00\x03{x}")
    with pytest.raises(codec.ProtocolError, match="not valid JSON"):
        reader.frame()
    os.write(write, b"\x7f\xff\xff\xff")
    with pytest.raises(codec.ProtocolError, match="over the 1024-byte cap"):
        reader.frame(cap=1024)


@pytest.mark.parametrize("spin_s", [0.0, 0.001], ids=["sleeping", "polling"])
def test_reader_ready_waits_at_most_the_timeout(pipe, spin_s: float) -> None:
    read, write = pipe
    reader = codec.Reader(read, spin_s)
    start = time.monotonic()
    assert reader.ready(0.05) is False
    assert time.monotonic() - start >= 0.05
    os.write(write, _frame(7))
    assert reader.ready(0.05) is True
    assert reader.frame() == 7
    os.close(write)
    with pytest.raises(codec.ProtocolError, match="gone"):
        reader.ready(0.05)


def test_reader_stops_polling_when_its_budget_is_spent_and_still_reads(pipe) -> None:
    read, write = pipe
    reader = codec.Reader(read, spin_s=0.004, spin_budget_s=0.006)
    assert not os.get_blocking(read)
    for _ in range(2):
        assert reader.ready(0.001) is False
    assert reader.spin_s == 0.0  # 8 ms polled against a 6 ms budget
    os.write(write, _frame("after"))
    assert reader.frame() == "after"  # the descriptor stays non-blocking: select, then read


def test_reader_reads_a_frame_larger_than_the_pipe(pipe) -> None:
    import threading

    read, write = pipe
    big = "x" * (3 << 20)
    writer = threading.Thread(target=codec.write_frame, args=(write, big))
    writer.start()
    try:
        assert codec.Reader(read, 0.001).frame(cap=codec.MAX_MESSAGE) == big
    finally:
        writer.join()


SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(1 << 70), max_value=1 << 70),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5))


@given(st.lists(SCALAR, max_size=8))
def test_the_plain_list_fast_path_encodes_as_the_walk_does(values: list) -> None:
    def refuse(obj: object) -> object:
        raise codec.Unencodable(repr(obj))

    fast = codec.encode(values, refuse)
    walked = codec._enc(values, refuse, None, 0, codec._Budget())
    assert codec._DUMPS(fast) == codec._DUMPS(walked)
    assert fast is not values


def test_the_fast_path_leaves_subclasses_and_big_numbers_to_the_walk() -> None:
    class Sneaky(int):
        pass

    def handle(obj: object) -> object:
        return {"h": {"id": 1}}

    assert codec.encode([Sneaky(3)], handle) == [{"h": {"id": 1}}]
    assert codec.encode([1 << 64, math.inf], handle) == [{"I": hex(1 << 64)}, {"F": "inf"}]


@pytest.mark.parametrize(
    ("cpus", "index", "at_once", "expected"),
    [
        pytest.param([0, 1], 0, 1, (0, 1), id="one-process-two-cpus-pair"),
        pytest.param([0, 1], 0, 2, (0, None), id="two-processes-two-cpus-share"),
        pytest.param([0, 1], 1, 2, (1, None), id="second-share-round-robin"),
        pytest.param([0, 1, 2, 3], 1, 2, (2, 3), id="four-cpus-second-pair"),
        pytest.param([0, 1, 2, 3], 2, 2, (0, 1), id="retry-wraps-round"),
        pytest.param([0, 1, 2], 1, 2, (1, None), id="three-cpus-two-processes-share"),
        pytest.param([4, 7], 0, 0, (4, None), id="slots-side-by-side-never-pair"),
        pytest.param([3], 0, 1, (None, None), id="one-cpu-no-pinning"),
        pytest.param([], 0, 1, (None, None), id="unknown-cpus"),
    ],
)
def test_placement(cpus: list[int], index: int, at_once: int, expected: tuple) -> None:
    assert runner.placement(cpus, index, at_once) == expected


@pytest.mark.parametrize("jobs", [1, 2, 3, 7])
@pytest.mark.parametrize("pattern", ["HEE", "EEHEEEHEEH", "HHHHEEEEEE", "E", "HE" * 5])
def test_shares_spread_each_kind_evenly_in_catalog_order(pattern: str, jobs: int) -> None:
    from verdict_gate.core.catalog import Property

    props = [Property(f"p{i:03d}", f"properties/test_{i}.py", None, "property" if c == "H" else "example", False,
                      None, 60.0, False)
             for i, c in enumerate(pattern * 7)]
    got = runner.shares(props, jobs)
    assert len(got) == min(jobs, len(props))
    assert sorted(p.id for share in got for p in share) == [p.id for p in props]  # each once
    assert all([p.id for p in share] == sorted(p.id for p in share) for share in got)  # catalog order
    for kind in ("property", "example"):
        counts = [sum(p.kind == kind for p in share) for share in got]
        assert max(counts) - min(counts) <= 1, (kind, counts)
    assert runner.shares(props, jobs) == got  # the same split on every run


def test_a_polling_worker_pins_itself_to_its_own_cpu_and_answers(tmp_path: Path) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    src = tmp_path / "src"
    (src / "polled").mkdir(parents=True)
    (src / "polled" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    client = proxy.Client("process", [str(src)], str(tmp_path), worker_cpu=cpus[0], spin_s=0.002)
    try:
        client.start()
        client.request({"op": "import", "mod": "polled"})
        module = proxy.ProxyModule("polled", client)
        assert [module.add(i, 1) for i in range(200)] == [i + 1 for i in range(200)]
        assert client.proc is not None
        assert os.sched_getaffinity(client.proc.pid) == {cpus[0]}
        assert not os.get_blocking(client.rfd)
    finally:
        client.close()


def test_a_handle_answers_pytests_mock_probe_without_a_round_trip(tmp_path: Path) -> None:
    client = proxy.Client("process", [], str(tmp_path))  # never started: a request would start it
    handle = proxy.Handle(client, {"k": "fn", "t": [["m", "f"]], "id": 1}, 1)
    assert getattr(handle, "_mock_name", "missing") is None
    assert client.proc is None


@pytest.mark.parametrize("spin_s", [0.0, 0.001], ids=["sleeping", "polling"])
def test_a_frame_that_stops_half_way_ends_at_the_timeout(pipe, spin_s: float) -> None:
    read, write = pipe
    reader = codec.Reader(read, spin_s)
    os.write(write, _frame({"ok": "a long answer"})[:9])
    start = time.monotonic()
    with pytest.raises(codec.ProtocolError, match="stopped after 9 of its bytes"):
        reader.frame(timeout=0.2)
    # At least the timeout (a wait never ends early); the upper bound only tells an end from a hang (the
    # writer never sends the rest): it holds on any machine, however busy.
    assert 0.2 <= time.monotonic() - start < 120


STALL = '''import gc, os, time


def stall():
    """Write the first bytes of an answer on the worker's own pipe, then hang."""
    worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker" and hasattr(o, "wfd"))
    os.write(worker.wfd, b"\\x00\\x00\\x01\\x00{")
    time.sleep(3600)
'''


def test_a_worker_that_sends_half_an_answer_and_hangs_is_a_crash(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "stalls").mkdir(parents=True)
    (src / "stalls" / "__init__.py").write_text(STALL)
    # The worker's start and its import answer within a bound no busy machine reaches; only then is the bound
    # the stalled answer meets made short (an honest answer never has to beat it).
    client = proxy.Client("process", [str(src)], str(tmp_path), answer_timeout=120.0)
    try:
        client.start()
        client.request({"op": "import", "mod": "stalls"})
        module = proxy.ProxyModule("stalls", client)
        client.answer_timeout = 1.0
        start = time.monotonic()
        with pytest.raises(proxy.WorkerCrashed, match="stopped after 5 of its bytes"):
            module.stall()
        assert time.monotonic() - start < 600  # ended by the timeout, not by the stall's (an hour) own end
        assert client.failure is not None and client.proc is None  # recorded out of band, worker killed
    finally:
        client.close()


@pytest.mark.parametrize(("cpus", "pid", "expected"), [
    ([0, 1], 4242, [0, 1]), ([0, 1], 4243, [1, 0]), ([2, 5, 7], 7, [5, 7, 2]), ([3], 99, [3]), ([], 5, []),
])
def test_gates_side_by_side_start_at_different_cpus(cpus: list[int], pid: int, expected: list[int]) -> None:
    assert runner.rotated(cpus, pid) == expected
