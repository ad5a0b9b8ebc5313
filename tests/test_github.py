"""verdict_gate/github/ (workflow.py, event.py): workflow-command escaping, GITHUB_OUTPUT heredocs, the job summary cap,
annotations, inputs, base selection per event, git configuration and ownership.

Runner-side parsing is re-implemented here from GitHub's documented rules (the runner's
``ActionCommand`` unescaping and its ``GITHUB_OUTPUT`` heredoc reader) so that every hostile
string is checked by a round trip, not by comparing with our own escaper.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest

from verdict_gate.core.errors import GateError
from verdict_gate.github import event as ev
from verdict_gate.github import workflow as gh
from verdict_gate.report.sarif import Finding

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

HOSTILE = [
    "plain",
    "line one\nline two",
    "carriage\rreturn\r\nand crlf",
    "100% sure %0A %25 %3A %2C literal escapes",
    "::error::injected",
    "\n::set-output name=promoted::true",
    "\n::add-mask::secret\n::stop-commands::x",
    "a:b,c=d::e",
    "ghadelimiter_1234",
    "trailing newline\n",
    "",
    "ünïcödé ✓ — dash",
]


def runner_unescape(text: str, prop: bool) -> str:
    """The runner's unescaping (ActionCommand.UnescapeProperty/UnescapeData): %0D, %0A,
    (properties: %3A, %2C), then %25 last."""
    text = text.replace("%0D", "\r").replace("%0A", "\n")
    if prop:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%25", "%")


def runner_parse(line: str) -> tuple[str, dict[str, str], str]:
    """Parse one workflow command line the way the runner does: ``::cmd k=v,k=v::data``."""
    assert line.startswith("::")
    end = line.index("::", 2)
    head, data = line[2:end], line[end + 2:]
    name, _, props_text = head.partition(" ")
    props: dict[str, str] = {}
    for pair in filter(None, props_text.split(",")):
        key, _, value = pair.partition("=")
        props[key] = runner_unescape(value, prop=True)
    return name, props, runner_unescape(data, prop=False)


def read_output_file(text: str) -> dict[str, str]:
    """The runner's GITHUB_OUTPUT reader: ``name=value`` lines and ``name<<DELIM`` heredocs."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line:
            i += 1
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            i += 1
            while lines[i] != delim:
                body.append(lines[i])
                i += 1
            out[name] = "\n".join(body)
        else:
            name, value = line.split("=", 1)
            out[name] = value
        i += 1
    return out


@pytest.mark.parametrize("text", HOSTILE)
def test_annotation_round_trips_and_stays_one_line(text: str) -> None:
    line = gh.Annotation("error", text, title=f"title {text}", file=f"src/{text}.py", line=3).render()
    assert "\n" not in line and "\r" not in line
    name, props, data = runner_parse(line)
    assert name == "error"
    assert data == text
    assert props["title"] == f"title {text}"
    assert props["file"] == f"src/{text}.py"
    assert props["line"] == "3"


def test_escaping_rules_exactly() -> None:
    assert gh.escape_data("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad:e,f"
    assert gh.escape_property("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad%3Ae%2Cf"
    # "%" is escaped first, so a literal escape sequence survives the runner's unescaping.
    assert gh.escape_data("%0A") == "%250A"


def test_command_leaves_out_empty_properties_and_rejects_bad_names() -> None:
    assert gh.command("notice", "hi", {"file": "", "line": None, "title": "t"}) == "::notice title=t::hi"
    assert gh.command("warning", "x") == "::warning::x"
    with pytest.raises(ValueError):
        gh.command("error\n::x", "m")
    with pytest.raises(ValueError):
        gh.command("error", "m", {"fi,le": "x"})


@pytest.mark.parametrize("value", HOSTILE + ["x\nghadelimiter_y\n", "ghadelimiter_\n" * 3])
def test_output_heredoc_round_trips(value: str) -> None:
    text = gh.format_output("outcome", value)
    assert read_output_file(text) == {"outcome": value}


def test_delimiter_never_occurs_in_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = uuid.UUID(int=1), uuid.UUID(int=2)
    seq = iter([first, first, second])
    monkeypatch.setattr(gh.uuid, "uuid4", lambda: next(seq))
    value = f"the delimiter itself:\nghadelimiter_{first}\nand more"
    text = gh.format_output("evil", value)
    assert text.startswith(f"evil<<ghadelimiter_{second}\n")
    assert read_output_file(text) == {"evil": value}


def test_delimiter_gives_up_rather_than_collide(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = uuid.UUID(int=7)
    monkeypatch.setattr(gh.uuid, "uuid4", lambda: fixed)
    with pytest.raises(RuntimeError):
        gh.heredoc_delimiter(f"ghadelimiter_{fixed}")


def test_output_name_checked() -> None:
    for bad in ("a<<b", "x\ny", "", "1abc", "a=b"):
        with pytest.raises(ValueError):
            gh.format_output(bad, "v")


def test_write_outputs_appends_and_skips_without_a_file(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_text("earlier=1\n")
    assert gh.write_outputs(str(path), {"outcome": "blocked", "pass-count": "2"})
    assert read_output_file(path.read_text()) == {"earlier": "1", "outcome": "blocked", "pass-count": "2"}
    assert not gh.write_outputs(None, {"outcome": "x"})
    assert not gh.write_outputs("", {"outcome": "x"})


def test_summary_cut_at_a_line_under_the_cap(tmp_path: Path) -> None:
    row = "| `prop.x` | fail | `no_freeze` | " + "é" * 200 + " |\n"
    text = "## verdict-gate\n" + row * 6000  # ≈ 2.4 MB
    path = tmp_path / "summary.md"
    path.write_text("earlier step text\n" * 10)
    before = path.stat().st_size
    assert gh.append_summary(str(path), text)
    size = path.stat().st_size
    assert size <= gh.SUMMARY_LIMIT - gh.SUMMARY_MARGIN
    body = path.read_text(encoding="utf-8")[before:]
    assert body.rstrip().endswith("see verdicts.json and results.sarif in the evidence._")
    kept = body.split("\n\n_verdict-gate: the rest")[0]
    assert all(line.endswith("|") or line.startswith("##") for line in kept.splitlines())
    assert gh.fit_summary("short\n") == "short\n"


def _finding(level: str, pid: str | None, path: str, line: int = 1) -> Finding:
    verdict = "fail" if level == "error" else "inconclusive"
    if pid is None:
        return Finding("void", level, "void: x", path, line, "0" * 64)
    return Finding("no_freeze", level, f"{pid}: detail", path, line, "0" * 64, pid, verdict, "V8")


def test_annotations_worst_first_at_most_ten_then_a_notice() -> None:
    found = [_finding("warning", f"prop.w{i}", "oracle/w.py") for i in range(5)]
    found += [_finding("error", f"prop.e{i:02d}", "src/a b/✓.py", 7) for i in range(8)]
    anns = gh.annotations_of(found, path_prefix="sub/repo")
    assert [a.level for a in anns] == ["error"] * 8 + ["warning"] * 5
    assert anns[0].file == "sub/repo/src/a b/✓.py" and anns[0].line == 7
    assert anns[0].title == "verdict-gate: prop.e00 fail (no_freeze)"
    lines = gh.render_annotations(anns)
    assert len(lines) == 11
    assert [runner_parse(x)[0] for x in lines] == ["error"] * 8 + ["warning"] * 2 + ["notice"]
    assert runner_parse(lines[-1])[2].startswith("3 more verdict-gate finding(s)")
    assert "job summary and results.sarif" in runner_parse(lines[-1])[2]
    assert len(gh.render_annotations(anns[:10])) == 10  # no notice when nothing was left out


def test_void_result_annotation_without_location() -> None:
    (ann,) = gh.annotations_of([_finding("error", None, ".")])
    assert ann.file == "" and ann.line is None and ann.title == "verdict-gate: void"


def test_input_names_as_github_spells_them() -> None:
    assert gh.input_env_name("oracle-pack") == "INPUT_ORACLE-PACK"
    assert gh.input_env_name("oracle pack sha") == "INPUT_ORACLE_PACK_SHA"
    env = {"INPUT_ORACLE-PACK": "  git:main:oracle \n", "INPUT_ORACLE_PACK": "wrong"}
    assert gh.get_input(env, "oracle-pack") == "git:main:oracle"
    assert gh.get_input(env, "policy", "lenient") == "lenient"


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("True", True), ("TRUE", True), ("false", False),
                                                 ("False", False), ("FALSE", False), ("", None)])
def test_boolean_inputs_are_strings(value: str, expected: bool | None) -> None:
    env = {"INPUT_FETCH-HISTORY": value}
    assert gh.get_bool_input(env, "fetch-history", default=True) is (True if expected is None else expected)


@pytest.mark.parametrize("value", ["yes", "1", "on", "tru"])
def test_boolean_input_rejects_other_words(value: str) -> None:
    with pytest.raises(GateError, match="is not a boolean"):
        gh.get_bool_input({"INPUT_FETCH-HISTORY": value}, "fetch-history", default=True)


def test_fail_on() -> None:
    assert gh.parse_fail_on("") == {"blocked", "void", "incomplete"}
    assert gh.parse_fail_on("void, incomplete") == {"void", "incomplete"}
    assert gh.parse_fail_on("void\nblocked") == {"void", "blocked"}
    assert gh.parse_fail_on("none") == frozenset()
    for bad in ("promoted", "pass", "none,void", "blocked;void"):
        with pytest.raises(GateError):
            gh.parse_fail_on(bad)


BASE = "b" * 40
OTHER = "c" * 40


def test_base_per_event() -> None:
    pr = {"pull_request": {"base": {"sha": BASE, "ref": "main"}}}
    for event in ("pull_request", "pull_request_target"):
        choice = ev.choose_base(event, pr, "")
        assert choice.refs == (BASE,) and choice.fetch == (BASE,)
        assert event in choice.why and "main" in choice.why
    mg = ev.choose_base("merge_group", {"merge_group": {"base_sha": BASE, "base_ref": "refs/heads/main"}}, "")
    assert mg.refs == (BASE,) and "merge_group" in mg.why
    push = ev.choose_base("push", {"before": BASE, "after": OTHER, "ref": "refs/heads/main"}, "")
    assert push.refs == (BASE,) and "before" in push.why


def test_base_for_a_new_branch_push() -> None:
    payload = {"before": ev.ZERO_SHA, "after": OTHER, "created": True, "ref": "refs/heads/feature",
               "repository": {"default_branch": "main"}}
    choice = ev.choose_base("push", payload, "")
    assert choice.refs == ("refs/remotes/origin/main",)
    assert choice.fetch == ("refs/heads/main:refs/remotes/origin/main",)
    assert "push to feature" in choice.why and choice.oracle_ref[0] == "refs/remotes/origin/main"
    # an existing feature branch too: its `before` is the pusher's own commit
    assert ev.choose_base("push", {**payload, "before": OTHER}, "").refs == ("refs/remotes/origin/main",)
    first = ev.choose_base("push", {**payload, "ref": "refs/heads/main"}, "")
    assert first.refs == ("HEAD^",) and "parent commit" in first.why


def test_base_input_wins_and_names_are_tried_as_remote_branches() -> None:
    pr = {"pull_request": {"base": {"sha": BASE}}}
    assert ev.choose_base("pull_request", pr, OTHER).refs == (OTHER,)
    named = ev.choose_base("workflow_dispatch", {}, "release/2.x")
    assert named.refs == ("release/2.x", "origin/release/2.x")
    assert named.fetch == ("", "refs/heads/release/2.x")
    assert ev.choose_base("schedule", {}, "origin/main").fetch == ("refs/heads/main",)


@pytest.mark.parametrize(("event", "payload", "match"), [
    ("workflow_dispatch", {}, "required for workflow_dispatch"),
    ("schedule", {}, "required for event schedule"),
    ("", {}, r"required for event \(none\)"),
    ("pull_request", {"pull_request": {}}, "pull_request.base.sha"),
    ("merge_group", {"merge_group": {"base_sha": "short"}}, "merge_group.base_sha"),
    ("push", {"before": ev.ZERO_SHA, "after": ev.ZERO_SHA, "deleted": True}, "deletes a branch"),
    ("push", {"after": OTHER}, "before"),
])
def test_base_errors_name_the_fix(event: str, payload: dict, match: str) -> None:
    with pytest.raises(GateError, match=match) as info:
        ev.choose_base(event, payload, "")
    assert info.value.exit_code == 2 and info.value.fix


def test_read_event(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text('{"before": "x"}')
    assert ev.read_event({"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(path)}) == ("push", {"before": "x"})
    assert ev.read_event({"GITHUB_EVENT_NAME": "push"}) == ("push", {})
    path.write_text("[1]")
    with pytest.raises(GateError, match="not a JSON object"):
        ev.read_event({"GITHUB_EVENT_PATH": str(path)})
    with pytest.raises(GateError, match="cannot be read"):
        ev.read_event({"GITHUB_EVENT_PATH": str(tmp_path / "missing.json")})


def test_git_config_env_appends_to_what_is_there() -> None:
    env = gh.git_config_env({"GIT_CONFIG_COUNT": "2"}, [("safe.directory", "/github/workspace")])
    assert env == {"GIT_CONFIG_COUNT": "3", "GIT_CONFIG_KEY_2": "safe.directory",
                   "GIT_CONFIG_VALUE_2": "/github/workspace"}
    assert gh.git_config_env({}, [])["GIT_CONFIG_COUNT"] == "0"
    with pytest.raises(GateError):
        gh.git_config_env({"GIT_CONFIG_COUNT": "x"}, [])


def test_auth_header_only_for_the_server() -> None:
    key, value = gh.auth_header("https://github.com/", "tok")
    assert key == "http.https://github.com/.extraheader"
    assert value == "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46dG9r"  # base64("x-access-token:tok")
    assert gh.same_origin("https://github.com/o/r.git", "https://github.com")
    assert not gh.same_origin("https://github.com.evil.example/o/r", "https://github.com")
    assert not gh.same_origin("http://github.com/o/r", "https://github.com")
    assert not gh.same_origin("file:///tmp/o", "https://github.com")
    assert not gh.same_origin("git@github.com:o/r.git", "https://github.com")


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_chown_tree(tmp_path: Path) -> None:
    root = tmp_path / "ev"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f").write_text("x")
    os.symlink("/etc/passwd", root / "link")
    changed = gh.chown_tree(root, 1234, 1235)
    assert changed == 4
    for p in (root, root / "sub", root / "sub" / "f", root / "link"):
        st = p.lstat()
        assert (st.st_uid, st.st_gid) == (1234, 1235)
    assert os.stat("/etc/passwd").st_uid == 0  # the link was not followed
    assert gh.chown_tree(root, 1234, 1235) == 0
    assert gh.chown_tree(tmp_path / "missing", 1, 1) == 0


def test_stop_commands_token_is_fresh() -> None:
    a, b = gh.stop_commands_token(), gh.stop_commands_token()
    assert a != b and re.fullmatch(r"[0-9a-f]{64}", a)
