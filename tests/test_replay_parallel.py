"""The base replay beside the candidate run (docs/design.md §2 steps 4–5, §11).

End to end on real git repositories with real pytest: the parallel pipeline writes the same evidence as
the sequential one (``VERDICT_GATE_PARALLEL_REPLAY=0``), frozen failures, a regression behind a freeze
and a fresh-example regression included; SIGTERM mid-run leaves no process, worktree or temp dir. Then
the orchestration's rules with stand-ins: the budget, the error that wins, the order of notices.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from test_failure_sets_e2e import project as failure_sets_project

from conftest import cli, commit_all, git, validate_evidence, without_timings
from verdict_gate.core.errors import GateError
from verdict_gate.run import execute, pipeline, runner

RUN_ID = "replay-parallel-test"

CALC = '''
def half_up(n):
    return round(n / 2)  # the known bug: rounds half to even


def double(x):
    return x * 2 + (x == 3)  # the known bug: double(3) is 7


def add(a, b):
    return a + b


def scale(n):
    return 2 * n
'''

PROPERTIES = {
    "test_half.py": '''
        from hypothesis import given, strategies as st
        from calc import half_up

        @given(n=st.integers(min_value=0, max_value=10_000))
        def test_half_up(n):
            assert half_up(n) == (n + 1) // 2, f"half_up({n})"
        ''',
    "test_double.py": "from calc import double\n\ndef test_double():\n    assert double(3) == 6\n",
    "test_add.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "test_scale.py": '''
        from hypothesis import given, strategies as st
        from calc import scale

        @given(n=st.integers(min_value=0, max_value=10_000))
        def test_scale(n):
            assert scale(n) == 2 * n
        ''',
}
CATALOG = [{"id": "prop.half", "oracle": "properties/test_half.py"},
           {"id": "prop.double", "oracle": "properties/test_double.py", "kind": "example"},
           {"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"},
           {"id": "prop.scale", "oracle": "properties/test_scale.py"}]


def project(root: Path, calc: str, properties: dict[str, str], catalog: list[dict], freeze: list[str]) -> Path:
    """``src/calc.py`` and ``properties`` in the pack: the failure-sets builder (real replay and freeze)."""
    files = {"src/calc.py": calc, **{f"oracle/properties/{name}": text for name, text in properties.items()}}
    return failure_sets_project(root, files, catalog, freeze)


def _gate(repo: Path, out: Path, parallel: bool) -> tuple[int, dict, str]:
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               "--today", "2026-11-30", "--jobs", "2",
               env={"VERDICT_GATE_RUN_ID": RUN_ID, pipeline.PARALLEL_ENV: "1" if parallel else "0"})
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, validate_evidence(out), proc.stderr


def test_the_parallel_pipeline_writes_what_the_sequential_one_writes(tmp_path):
    repo = project(tmp_path, CALC, PROPERTIES, CATALOG, ["prop.half", "prop.double"])
    # The candidate keeps both known bugs, hides a new one behind the frozen half_up failure (garbage
    # only for large inputs: held on the base, fails here: V16) and breaks scale for large inputs, which
    # a fresh example finds (a second, short base replay after both runs).
    calc = CALC.replace("return round(n / 2)  # the known bug: rounds half to even",
                        "return round(n / 2) if n < 5_000 else -1")
    calc = calc.replace("return 2 * n", "return 2 * n if n < 2_000 else 0")
    (repo / "src" / "calc.py").write_text(textwrap.dedent(calc))
    commit_all(repo, "candidate")
    seq_code, seq, seq_err = _gate(repo, tmp_path / "seq", parallel=False)
    par_code, par, par_err = _gate(repo, tmp_path / "par", parallel=True)

    assert par_code == seq_code == 1
    for name in ("verdicts.json", "runs.json", "base.sig.json", "fixture.digest", "oracle_edited.json"):
        assert without_timings(par[name]) == without_timings(seq[name]), name
    verdicts = {pid: (v["verdict"], v["reason"]) for pid, v in par["verdicts.json"]["verdicts"].items()}
    assert verdicts["prop.half"] == ("fail", "new_failing_examples")
    assert verdicts["prop.double"] == ("inconclusive", "frozen")
    assert verdicts["prop.add"] == ("pass", "held")
    assert verdicts["prop.scale"][0] == "fail"
    assert {r["prop_id"] for r in par["base.sig.json"]["replays"]} >= {"prop.half", "prop.double"}
    scale = next(r for r in par["base.sig.json"]["replays"] if r["prop_id"] == "prop.scale")
    assert scale["fresh_log"]  # its fresh examples were replayed on the base after both runs

    # Progress: the base replay's lines are prefixed, and every line is whole.
    assert "beside the candidate run" in par_err and "base: [1/2] " in par_err
    assert "beside the candidate run" not in seq_err and "base: " not in seq_err
    for err in (seq_err, par_err):
        assert all(line.startswith("verdict-gate: ") or line.startswith("evidence: ")
                   for line in err.splitlines()), err


SLOW = '''
def delay():
    return {seconds}


def add(a, b):
    return a + b
'''
SLOW_PROP = ("import time\nfrom calc import add, delay\n\n"
             "def test_slow():\n    time.sleep(delay())\n    assert add(1, 1) == 3\n")


def _children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2:].split()[1]) == pid:
                found.append(int(name))
    return found


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmdline:
                found.append(f"{name}: {cmdline}")
    return found


def _alive_after(pids: list[int], guard_s: float = 60.0) -> list[int]:
    """Those of ``pids`` still alive (and not a zombie) once they are gone or ``guard_s`` has passed: a process
    killed a moment ago may take a while to go on a busy machine; the guard only ends a wait for a survivor."""
    def alive() -> list[int]:
        out = []
        for pid in pids:
            try:
                if b"zombie" not in Path(f"/proc/{pid}/status").read_bytes():
                    out.append(pid)
            except OSError:
                pass
        return out

    deadline = time.monotonic() + guard_s
    while (left := alive()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_sigterm_while_both_run_cleans_up_everything(tmp_path):
    # The freeze is recorded while the property fails at once; then main makes it sleep, so the base
    # replay and the candidate run each have an oracle process asleep in it when SIGTERM comes.
    repo = project(tmp_path, SLOW.format(seconds=0), {"test_slow.py": SLOW_PROP},
                   [{"id": "prop.slow", "oracle": "properties/test_slow.py", "kind": "example", "timeout": 7200}],
                   ["prop.slow"])
    git(repo, "checkout", "--quiet", "main")
    (repo / "src" / "calc.py").write_text(SLOW.format(seconds=3600))  # asleep until killed
    commit_all(repo, "slow")
    git(repo, "checkout", "--quiet", "-B", "candidate")
    (repo / "README.md").write_text("docs only\n")
    commit_all(repo, "candidate")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "VERDICT_GATE_RUN_ID": RUN_ID}
    env.pop(pipeline.PARALLEL_ENV, None)
    proc = subprocess.Popen([sys.executable, "-m", "verdict_gate", "run", "--repo", str(repo), "--base", "main",
                             "--pack", "git:main:oracle", "--out", str(tmp_path / "out"), "--jobs", "2"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(600, proc.kill)  # a hang guard only: the gate is killed with exit -9, never 130
    watchdog.start()
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            started = [x for x in seen if "prop.slow …" in x]
            if any(x.startswith("verdict-gate: base: ") for x in started) and any(
                    not x.startswith("verdict-gate: base: ") for x in started):
                break
        else:
            pytest.fail("the run ended before both were running:\n" + "".join(seen))
        gate_children = _children(proc.pid)
        assert len(gate_children) >= 2  # an oracle process of each
        proc.send_signal(signal.SIGTERM)
        rest = proc.stderr.read()
        code = proc.wait(timeout=60)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    # 130 before the watchdog: the properties, asleep for an hour, were killed, not waited for (no clock read).
    assert code == 130, "".join(seen) + rest
    assert "interrupted" in rest
    assert not _alive_after(gate_children)
    assert not _processes_mentioning(str(tmp))  # no oracle process, worker or git left behind
    assert not list(tmp.iterdir())  # every scratch dir and worktree holder removed
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


# --- the orchestration, with stand-ins for the two steps ---------------------------------------------


class _Stubs:
    """Stand-ins for base_replay and candidate_run that record what they were given."""

    def __init__(self, monkeypatch, base=None, candidate=None):
        self.calls: dict[str, dict] = {}
        self.base, self.candidate = base, candidate
        monkeypatch.delenv(pipeline.PARALLEL_ENV, raising=False)
        monkeypatch.setattr(pipeline, "base_replay", self._base)
        monkeypatch.setattr(pipeline, "candidate_run", self._candidate)
        monkeypatch.setattr(pipeline, "replay_ids", lambda p, parts, only=None: ["prop.a"])

    def _base(self, ev, p, parts, scratch, progress, only=None, **kw):
        self.calls["base"] = {"only": only, "thread": threading.current_thread().name, **kw}
        (kw.get("notices") if kw.get("notices") is not None else ev.notices).append("base notice")
        if self.base:
            return self.base(kw)
        return "the base sig"

    def _candidate(self, ev, p, cand, parts, digest, scratch, progress, jobs=None, only=None, **kw):
        self.calls["candidate"] = {"jobs": jobs, "only": only, "thread": threading.current_thread().name, **kw}
        if self.candidate:
            self.candidate(kw)
        ev.notices.append("candidate notice")
        return "the execution"


class _Ev:
    def __init__(self):
        self.notices = ["earlier notice"]
        self.base_sig = None
        self.base_revision = "b" * 40


class _Pack:
    class catalog:  # noqa: N801
        properties = []


def _both(jobs=2, only=None):
    ev = _Ev()
    done = pipeline.base_and_candidate(ev, _Pack(), Path("/nonexistent"), None, None, Path("/nonexistent"),
                                       lambda _line: None, jobs, only)
    return ev, done


def test_side_by_side_with_two_jobs_or_more(monkeypatch):
    stubs = _Stubs(monkeypatch)
    ev, done = _both(jobs=3, only={"prop.a"})
    assert done == "the execution" and ev.base_sig == "the base sig"
    assert stubs.calls["base"]["thread"] == "verdict-gate-base-replay"
    assert stubs.calls["candidate"]["thread"] == threading.current_thread().name
    assert stubs.calls["base"]["jobs"] == stubs.calls["candidate"]["jobs"] == 3
    assert stubs.calls["base"]["only"] == stubs.calls["candidate"]["only"] == {"prop.a"}  # a shard's share
    assert stubs.calls["base"]["slot"] is not None and stubs.calls["candidate"]["slot"] is not None
    # The base replay's notices where the sequential pipeline puts them: before the candidate run's.
    assert ev.notices == ["earlier notice", "base notice", "candidate notice"]


@pytest.mark.parametrize("jobs,env", [(1, None), (4, "0")])
def test_one_job_or_the_switch_off_is_sequential(monkeypatch, jobs, env):
    stubs = _Stubs(monkeypatch)
    if env is not None:
        monkeypatch.setenv(pipeline.PARALLEL_ENV, env)
    ev, _done = _both(jobs=jobs)
    assert stubs.calls["base"]["thread"] == stubs.calls["candidate"]["thread"] == threading.current_thread().name
    assert "slot" not in stubs.calls["base"] and stubs.calls["candidate"]["jobs"] == jobs
    assert ev.notices == ["earlier notice", "base notice", "candidate notice"]


def test_no_frozen_property_is_sequential(monkeypatch):
    stubs = _Stubs(monkeypatch)
    monkeypatch.setattr(pipeline, "replay_ids", lambda p, parts, only=None: [])
    _both(jobs=4)
    assert stubs.calls["base"]["thread"] == threading.current_thread().name


def test_an_error_of_the_base_replay_wins_and_stops_the_candidate_run(monkeypatch):
    def base(kw):
        raise GateError("property id", "prop.a", "is broken", "fix it")

    def candidate(kw):
        assert kw["cancel"].wait(30)  # stopped by the base replay's error
        raise runner.Cancelled("cancelled")

    _Stubs(monkeypatch, base=base, candidate=candidate)
    with pytest.raises(GateError, match="is broken"):
        _both()


def test_an_error_of_the_candidate_run_waits_for_the_base_replay(monkeypatch):
    finished = threading.Event()

    def base(kw):
        time.sleep(0.3)
        finished.set()
        return "sig"

    def candidate(kw):
        raise GateError("catalog", "prop.a", "names a node that does not exist", "fix the catalog")

    _Stubs(monkeypatch, base=base, candidate=candidate)
    with pytest.raises(GateError, match="does not exist"):
        _both()
    assert finished.is_set()  # no thread outlives the call


def test_both_fail_the_base_replay_error_is_raised(monkeypatch):
    def base(kw):
        time.sleep(0.2)
        raise GateError("fixtures", "base", "cannot be digested", "fix them")

    def candidate(kw):
        raise GateError("catalog", "prop.a", "names a node that does not exist", "fix the catalog")

    _Stubs(monkeypatch, base=base, candidate=candidate)
    with pytest.raises(GateError, match="cannot be digested"):
        _both()


def test_an_interrupt_stops_the_base_replay_and_is_raised(monkeypatch):
    stopped = threading.Event()

    def base(kw):
        assert kw["cancel"].wait(30)
        stopped.set()
        raise runner.Cancelled("cancelled")

    def candidate(kw):
        raise KeyboardInterrupt

    _Stubs(monkeypatch, base=base, candidate=candidate)
    with pytest.raises(KeyboardInterrupt):
        _both()
    assert stopped.is_set()


@pytest.mark.fast
@pytest.mark.parametrize(("seconds", "budget", "jobs"), [
    ([], 2, 1),                  # nothing to run: one (the runner starts none for no property)
    ([0.05, 0.07], 2, 1),        # a typical fresh replay: well under a second in all
    ([0.4, 0.7], 2, 2),          # over a second: a second process pays
    ([0.6, 0.6, 0.6, 0.6], 2, 2),  # never more than the budget
    ([5.0], 1, 1),
    ([0.1, None], 4, 4),         # a duration not known: the whole budget, as before
    ([3.5], 8, 4),               # one per second of the sum
])
def test_one_more_oracle_process_per_second_of_expected_work(seconds, budget, jobs):
    assert runner.jobs_for(seconds, budget) == jobs


def test_slots_keep_the_budget_give_distinct_cpus_and_serve_priority_first():
    slots = execute.Slots(2, [10, 11, 12])
    never = threading.Event()
    low, high = slots.slot(1, never), slots.slot(0, never)
    held: list[int | None] = []
    order: list[str] = []
    first, second = low(), low()
    held += [first.__enter__(), second.__enter__()]
    assert sorted(held) == [10, 11]  # two at once, each on its own CPU

    def wait(slot, name):
        with slot() as cpu:
            order.append(name)
            assert cpu in (10, 11)

    def waiting(counts: dict[int, int]) -> None:  # until the slots see these waiters (no sleep decides the order)
        deadline = time.monotonic() + 60  # a hang guard only
        while {p: n for p, n in slots._waiting.items() if n} != counts and time.monotonic() < deadline:
            time.sleep(0.001)
        assert {p: n for p, n in slots._waiting.items() if n} == counts

    waiters = [threading.Thread(target=wait, args=(low, "low")), threading.Thread(target=wait, args=(high, "high"))]
    waiters[0].start()
    waiting({1: 1})
    waiters[1].start()
    waiting({1: 1, 0: 1})
    assert order == []  # the budget is spent
    first.__exit__(None, None, None)
    for t in waiters:
        t.join(5)
    second.__exit__(None, None, None)
    assert order == ["high", "low"]  # the higher priority first, though it came later


def test_a_cancelled_wait_for_a_slot_raises_cancelled():
    slots = execute.Slots(1, [0])
    cancel = threading.Event()
    with slots.slot(0, threading.Event())():
        threading.Timer(0.2, cancel.set).start()
        with pytest.raises(runner.Cancelled), slots.slot(0, cancel)():
            pass


def test_no_sweep_keeps_a_child_process_of_another_thread_alive(tmp_path, monkeypatch):
    """A git process the base replay starts while a candidate oracle process ends (and its sweep runs)."""
    repo = project(tmp_path, "def add(a, b):\n    return a + b\n",
                   {"test_add.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"},
                   [{"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"}], [])
    commit_all(repo, "candidate")
    # The guarded child lives until the run wants to sweep: the test closes its stdin only once another thread
    # asks for the sweep lock (the end of the run's oracle process), so a sweep is due while it is alive whatever
    # the machine's speed; a sweep that did not wait for the lock would kill it (exit status -9).
    read, write = os.pipe()
    started, wanted = threading.Event(), threading.Event()
    codes: list[int] = []
    real_lock = runner._SWEEP_LOCK

    class Watched:
        def __enter__(self):  # type: ignore[no-untyped-def]
            if threading.current_thread() is not child:
                wanted.set()
            return real_lock.__enter__()

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            return real_lock.__exit__(*exc)

    def guarded_child() -> None:
        with runner.no_sweep():
            proc = subprocess.Popen(["cat"], stdin=read, stdout=subprocess.DEVNULL)
            started.set()
            wanted.wait(120)  # a hang guard only
            os.close(write)  # cat reads end of file and exits 0
            codes.append(proc.wait())

    monkeypatch.setattr(runner, "_SWEEP_LOCK", Watched())
    child = threading.Thread(target=guarded_child)
    child.start()
    assert started.wait(60)
    ev = pipeline.run(repo, "main", "git:main:oracle", policy=None, today=pipeline.today("2026-11-30"),
                      progress=lambda _line: None, jobs=1)
    child.join(60)
    os.close(read)
    assert wanted.is_set() and ev.outcome == "promoted"
    assert codes == [0], codes
