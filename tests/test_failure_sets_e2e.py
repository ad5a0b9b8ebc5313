"""End to end on real git repositories: a freeze forgives exactly the failures a human reviewed
(docs/design.md §3 V3/V15/V16, §5, §8.3, §8.5). Each base is frozen by a real replay and a real
`verdict-gate freeze`, then a candidate is gated with `verdict-gate run`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import yaml

from conftest import cli, commit_all, git, validate_evidence

HALF = '''
from hypothesis import given, strategies as st
from calc import half_up

@given(n=st.integers(min_value=0, max_value=10_000))
def test_half_up(n):
    assert half_up(n) == (n + 1) // 2, f"half_up({n})"
'''
# Rounds half to even: the known, frozen bug (fails on n = 1, 5, 9, …; holds on n = 3, 7, …).
HALF_EVEN = "def half_up(n):\n    return round(n / 2)\n"
OK = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
ADD = "def add(a, b):\n    return a + b\n"


def project(root: Path, files: dict[str, str], catalog: list[dict], freeze: list[str]) -> Path:
    """``main``: ``src/`` and the pack in ``oracle/``, with ``freeze`` frozen by a real base replay;
    then a branch ``candidate``."""
    repo = root / "repo"
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    pack = repo / "oracle"
    (pack / "fixtures").mkdir(parents=True, exist_ok=True)
    (pack / "fixtures" / "data.json").write_text("{}\n")
    (pack / "catalog.yaml").write_text(yaml.safe_dump({"version": 1, "seed": 5, "python_path": ["src"],
                                                      "properties": catalog}))
    (pack / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}\n')
    assert cli("manifest", "write", str(pack)).returncode == 0
    git(repo, "init", "--quiet")
    commit_all(repo, "base")
    for pid in freeze:
        sig = root / f"{pid}.sig.json"
        proc = cli("replay", "--repo", str(repo), "--rev", "main", "--pack", "git:main:oracle", "--out", str(sig),
                   "--only-id", pid)
        assert proc.returncode == 0, proc.stderr
        proc = cli("freeze", "--base-sig", str(sig), "--id", pid, "--reason", "known, reviewed",
                   "--ledger", str(pack / "freeze_ledger.json"), "--first-seen", "2026-11-01")
        assert proc.returncode == 0, proc.stderr
    assert cli("manifest", "write", str(pack)).returncode == 0
    commit_all(repo, "freeze the known failures")
    git(repo, "checkout", "--quiet", "-b", "candidate")
    return repo


def gate(repo: Path, out: Path, src: dict[str, str]) -> tuple[int, dict]:
    for rel, text in src.items():
        (repo / rel).write_text(textwrap.dedent(text))
    commit_all(repo, "candidate")
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               "--today", "2026-11-30")
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, validate_evidence(out)


def verdict(docs: dict, pid: str) -> tuple[str, str]:
    v = docs["verdicts.json"]["verdicts"][pid]
    return v["verdict"], v["reason"]


HALF_PROPS = [{"id": "prop.half", "oracle": "properties/test_half.py"},
              {"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"}]
HALF_FILES = {"src/calc.py": HALF_EVEN + ADD, "oracle/properties/test_half.py": HALF,
              "oracle/properties/test_add.py": OK}


def test_the_frozen_failure_alone_is_still_frozen(tmp_path):
    repo = project(tmp_path, HALF_FILES, HALF_PROPS, ["prop.half"])
    code, docs = gate(repo, tmp_path / "out", {"README.md": "docs only\n"})
    assert verdict(docs, "prop.half") == ("inconclusive", "frozen") and code == 0
    run = docs["runs.json"]["runs"]["prop.half"]
    assert run["example_log"] and all(len(e["digest"]) == 32 for e in run["example_log"])
    assert run["fresh_seed"] is not None and run["fresh_log"]
    replay = docs["base.sig.json"]["replays"][0]
    assert replay["example_log"] and replay["failures"][0]["signature"] == run["signature"]
    assert docs["runs.json"]["run_id"]


def test_a_new_rounding_bug_with_the_same_shrunk_counterexample_is_blocked(tmp_path):
    repo = project(tmp_path, HALF_FILES, HALF_PROPS, ["prop.half"])
    # Floors: fails on n = 1 exactly like the frozen bug (same message, same counterexample), and on
    # n = 3, 7, … where the base held.
    code, docs = gate(repo, tmp_path / "out", {"src/calc.py": "def half_up(n):\n    return n // 2\n" + ADD})
    run = docs["runs.json"]["runs"]["prop.half"]
    assert run["signature"] == docs["base.sig.json"]["replays"][0]["signature"]  # the freeze alone would match
    assert verdict(docs, "prop.half") == ("fail", "new_failing_examples") and code == 1
    assert "held on the base revision" in docs["verdicts.json"]["verdicts"]["prop.half"]["detail"]


def test_garbage_only_for_large_inputs_behind_a_frozen_small_failure_is_blocked(tmp_path):
    repo = project(tmp_path, HALF_FILES, HALF_PROPS, ["prop.half"])
    code, docs = gate(repo, tmp_path / "out",
                      {"src/calc.py": "def half_up(n):\n    return round(n / 2) if n < 5_000 else -1\n" + ADD})
    assert verdict(docs, "prop.half") == ("fail", "new_failing_examples") and code == 1
    assert docs["runs.json"]["runs"]["prop.half"]["counterexample"] == {"n": 1}  # shrinking still shows the known one


TWO_TESTS = '''
from calc import double, square

def test_double():
    assert double(3) == 6

def test_square():
    assert square(3) == 9
'''


def test_a_second_failing_test_in_a_frozen_file_is_blocked(tmp_path):
    files = {"src/calc.py": "def double(x):\n    return x * 2 + (x == 3)\n\ndef square(x):\n    return x * x\n" + ADD,
             "oracle/properties/test_two.py": TWO_TESTS, "oracle/properties/test_add.py": OK}
    props = [{"id": "prop.two", "oracle": "properties/test_two.py", "kind": "example"},
             {"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"}]
    repo = project(tmp_path, files, props, ["prop.two"])
    code, docs = gate(repo, tmp_path / "out", {
        "src/calc.py": "def double(x):\n    return x * 2 + (x == 3)\n\ndef square(x):\n    return x + x + 1\n" + ADD})
    assert verdict(docs, "prop.two") == ("fail", "unfrozen_failure") and code == 1
    detail = docs["verdicts.json"]["verdicts"]["prop.two"]["detail"]
    assert "test_two.py::test_square" in detail and "test_two.py::test_double" not in detail
    failures = docs["runs.json"]["runs"]["prop.two"]["failures"]
    assert sorted(f["node"].split("::")[1] for f in failures) == ["test_double", "test_square"]


def test_fixing_one_of_two_frozen_failures_is_promoted_with_freeze_stale(tmp_path):
    broken_square = "def double(x):\n    return x * 2 + (x == 3)\n\ndef square(x):\n    return x * x + 1\n"
    files = {"src/calc.py": broken_square + ADD,
             "oracle/properties/test_two.py": TWO_TESTS, "oracle/properties/test_add.py": OK}
    props = [{"id": "prop.two", "oracle": "properties/test_two.py", "kind": "example"},
             {"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"}]
    repo = project(tmp_path, files, props, ["prop.two"])
    ledger = json.loads((repo / "oracle" / "freeze_ledger.json").read_text())
    assert len(ledger["freezes"][0]["failures"]) == 2  # `freeze` wrote the failure set
    code, docs = gate(repo, tmp_path / "out", {
        "src/calc.py": "def double(x):\n    return x * 2 + (x == 3)\n\ndef square(x):\n    return x * x\n" + ADD})
    v = docs["verdicts.json"]["verdicts"]["prop.two"]
    assert (v["verdict"], v["reason"], v["notes"]) == ("inconclusive", "frozen", ["freeze_stale"])
    assert "test_two.py::test_square" in v["detail"]
    assert docs["verdicts.json"]["outcome"] == "promoted" and code == 0


def test_a_pack_conftest_importing_the_project_works(tmp_path):
    conftest = '''
    import pytest
    from calc import add

    @pytest.fixture
    def adder():
        return add
    '''
    prop = "def test_with_fixture(adder):\n    assert adder(2, 2) == 4\n"
    files = {"src/calc.py": ADD, "oracle/properties/conftest.py": conftest,
             "oracle/properties/test_fixture.py": prop}
    repo = project(tmp_path, files, [{"id": "prop.fx", "oracle": "properties/test_fixture.py", "kind": "example"}], [])
    code, docs = gate(repo, tmp_path / "out", {"README.md": "x\n"})
    assert verdict(docs, "prop.fx") == ("pass", "held") and code == 0, docs["runs.json"]["runs"]["prop.fx"]


def test_freeze_refuses_a_fixture_lookup_failure(tmp_path):
    prop = "def test_needs(no_such_fixture):\n    assert no_such_fixture\n"
    files = {"src/calc.py": ADD, "oracle/properties/test_needs.py": prop, "oracle/properties/test_add.py": OK}
    props = [{"id": "prop.needs", "oracle": "properties/test_needs.py", "kind": "example"},
             {"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"}]
    repo = project(tmp_path, files, props, [])
    sig = tmp_path / "needs.sig.json"
    assert cli("replay", "--repo", str(repo), "--rev", "main", "--pack", "git:main:oracle", "--out", str(sig),
               "--only-id", "prop.needs").returncode == 0
    replayed = json.loads(sig.read_text())["replays"][0]
    assert replayed["status"] == "fail" and replayed["failures"][0]["exc_type"].endswith("FixtureLookupError")
    ledger = repo / "oracle" / "freeze_ledger.json"
    before = ledger.read_text()
    proc = cli("freeze", "--base-sig", str(sig), "--id", "prop.needs", "--reason", "known",
               "--ledger", str(ledger))
    assert proc.returncode == 2 and "cannot be frozen" in proc.stderr and "fixture" in proc.stderr
    assert "the pack's properties/test_needs.py:1" in proc.stderr and "pack's own conftest.py" in proc.stderr
    assert ledger.read_text() == before  # nothing written
    code, docs = gate(repo, tmp_path / "out", {"README.md": "x\n"})
    # It fails so on the base too: the oracle's fault, never the patch's (docs/design.md §3).
    assert verdict(docs, "prop.needs") == ("fail", "oracle_error") and code == 4


def test_check_prints_what_would_be_frozen(tmp_path):
    prop = "def test_needs(no_such_fixture):\n    assert no_such_fixture\n"
    files = {"src/calc.py": HALF_EVEN + ADD, "oracle/properties/test_half.py": HALF,
             "oracle/properties/test_add.py": OK, "oracle/properties/test_needs.py": prop}
    props = HALF_PROPS + [{"id": "prop.needs", "oracle": "properties/test_needs.py", "kind": "example"}]
    repo = project(tmp_path, files, props, [])
    proc = cli("check", str(repo / "oracle"), "--repo", str(repo))
    assert proc.returncode == 1, proc.stderr  # prop.needs cannot run as it is
    out = proc.stdout
    assert "prop.add: held" in out
    assert "prop.half: fails; a freeze would forgive 1 failure(s)" in out and "verdict-gate freeze" in out
    assert "prop.needs: fail, cannot be frozen" in out and "fixture" in out
    assert "FixtureLookupError" in out and "no_such_fixture" in out  # what broke it, as `run` shows it (new-user trial)
    proc = cli("check", "git:main:oracle", "--repo", str(repo), "--rev", "main")
    assert "prop.half: fails" in proc.stdout, proc.stderr


def test_each_distinct_bug_hypothesis_reports_is_a_failure_with_its_own_example(tmp_path):
    prop = '''
    from hypothesis import given, strategies as st
    from calc import check

    @given(a=st.integers(0, 1000), b=st.integers(0, 1000))
    def test_check(a, b):
        check(a, b)
    '''
    src = ("def check(a, b):\n    if a > 500 and b < 300:\n        raise ValueError('big a')\n"
           "    if b > 700:\n        raise KeyError('big b')\n")
    files = {"src/calc.py": src + ADD, "oracle/properties/test_check.py": prop}
    repo = project(tmp_path, files, [{"id": "prop.check", "oracle": "properties/test_check.py",
                                      "fresh_examples": 0}], [])
    code, docs = gate(repo, tmp_path / "out", {"README.md": "x\n"})
    run = docs["runs.json"]["runs"]["prop.check"]
    got = {f["exc_type"]: f["counterexample"] for f in run["failures"]}
    assert got == {"builtins.ValueError": {"a": 501, "b": 0}, "builtins.KeyError": {"a": 0, "b": 701}}
    assert len({f["signature"] for f in run["failures"]}) == 2 and run["fresh_log"] is None
    assert verdict(docs, "prop.check") == ("fail", "no_freeze") and code == 1


def test_a_look_alike_discard_on_large_inputs_cannot_cut_the_example_log_short(tmp_path):
    # The candidate rejects exactly the large inputs it gets wrong, hoping the logging pass stops
    # there (or skips them) and the frozen small-input failure hides the rest.
    repo = project(tmp_path, HALF_FILES, HALF_PROPS, ["prop.half"])
    code, docs = gate(repo, tmp_path / "out", {"src/calc.py": (
        "import hypothesis\n\ndef half_up(n):\n    if n >= 5_000:\n        hypothesis.reject()\n"
        "    return round(n / 2)\n" + ADD)})
    assert verdict(docs, "prop.half")[0] == "fail" and code == 1
    assert verdict(docs, "prop.half")[1] in ("unfrozen_failure", "new_failing_examples")


def test_fresh_examples_are_drawn_out_of_the_property_budget_not_beside_it(tmp_path):
    # docs/design.md §8.3: of max_examples 50, the default 20 % (10) come from the fresh seed and 40
    # from the recorded one; a count works the same way; 0 leaves all 50 to the recorded seed.
    prop = ("from hypothesis import given, settings, strategies as st\nfrom calc import add\n\n"
            "@settings(max_examples=50)\n@given(a=st.integers(), b=st.integers())\n"
            "def test_add(a, b):\n    assert add(a, b) == a + b\n")
    files = {"src/calc.py": ADD, **{f"oracle/properties/test_{name}.py": prop for name in ("default", "count", "off")}}
    props = [{"id": "prop.default", "oracle": "properties/test_default.py"},
             {"id": "prop.count", "oracle": "properties/test_count.py", "fresh_examples": 5},
             {"id": "prop.off", "oracle": "properties/test_off.py", "fresh_examples": 0}]
    repo = project(tmp_path, files, props, [])
    code, docs = gate(repo, tmp_path / "out", {"README.md": "docs only\n"})
    runs = docs["runs.json"]["runs"]
    drawn = {pid: (r["trials"], len(r["fresh_log"] or ())) for pid, r in runs.items()}
    assert drawn == {"prop.default": (40, 10), "prop.count": (45, 5), "prop.off": (50, 0)}
    assert runs["prop.off"]["fresh_seed"] is None and code == 0


POOL = """
import calc
import reference
from hypothesis import given, strategies as st
from hypothesis.internal.conjecture import providers

@given(st.integers())
def test_pool(n):
    calc.add(1, 2)
    ints = set(providers._get_local_constants().set_for_type("integer"))
    assert reference.KNOWN in ints, "the pack's own constants are drawn from"
    assert calc.TABLE[0] not in ints, "the candidate's constants steer the draws"
"""


def test_the_candidate_s_source_constants_do_not_steer_the_oracle_s_draws(tmp_path):
    # Hypothesis mixes the literal constants of local modules into its draws. Only the pack's modules
    # count: a patch's constants would bias what the oracle draws, and the base and the candidate would
    # draw different examples (the differential check compares them by digest). At every isolation level.
    files = {"src/calc.py": "TABLE = (987654, 876543)\n" + ADD, "oracle/properties/test_pool.py": POOL,
             "oracle/properties/reference.py": "KNOWN = 314159\n"}
    repo = project(tmp_path, files, [{"id": "prop.sandbox", "oracle": "properties/test_pool.py"}], [])
    code, docs = gate(repo, tmp_path / "out", {"README.md": "docs only\n"})
    assert verdict(docs, "prop.sandbox") == ("pass", "held") and code == 0
    proc = cli("check", str(repo / "oracle"), "--repo", str(repo))  # with its run at isolation none
    assert proc.returncode == 0 and "prop.sandbox: held" in proc.stdout, proc.stdout


PARSE_TABLE = '''
from calc import parse_amount

def test_parse_table():
    for text in ["12", "7", "+5"]:
        assert parse_amount(text) == int(text)
'''
# The known bug: a leading "+" is refused (fails on "+5" only).
PARSE = '''
def parse_amount(text):
    if not text.isdigit():
        raise ValueError(f"bad amount: {text!r}")
    return int(text)
'''


def test_the_frozen_exception_for_an_earlier_case_of_the_same_loop_is_blocked(tmp_path):
    # The site of a failure (sig-v3) is the pack line it came through and, for an exception the candidate
    # raised, what the oracle asked it: "12" is not "+5", though the line, type, message and function agree.
    files = {"src/calc.py": PARSE + ADD, "oracle/properties/test_parse.py": PARSE_TABLE,
             "oracle/properties/test_add.py": OK}
    props = [{"id": "ex.parse", "oracle": "properties/test_parse.py", "kind": "example"},
             {"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"}]
    repo = project(tmp_path, files, props, ["ex.parse"])
    code, docs = gate(repo, tmp_path / "same", {"README.md": "docs only\n"})
    assert verdict(docs, "ex.parse") == ("inconclusive", "frozen") and code == 0  # the known failure alone
    site = docs["runs.json"]["runs"]["ex.parse"]["signature_parts"]["site"]
    assert site.startswith("properties/test_parse.py:6#") and len(site.rpartition("#")[2]) == 16
    forged = PARSE.replace("if not text.isdigit():", "if not text.isdigit() or text == '12':\n        text = '+5'")
    code, docs = gate(repo, tmp_path / "forged", {"src/calc.py": forged + ADD})
    assert verdict(docs, "ex.parse") == ("fail", "signature_mismatch") and code == 1
    parts = docs["runs.json"]["runs"]["ex.parse"]["signature_parts"]
    assert parts["site"].startswith("properties/test_parse.py:6#") and parts["site"] != site
