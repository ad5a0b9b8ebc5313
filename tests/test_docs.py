"""The README and the task pages under docs/ are current: the README stays a five-minute read (at most 250
lines) that links every page; every link and anchor resolves; every `verdict-gate` and `make` command a
page shows in a code block is one today's CLI and Makefile accept; every verdict table a page shows names
today's outcomes, verdicts and reasons; and the README's worked example, run as written, prints what the
README shows. The workflows the pages show are linted in tests/test_lint.py and tests/test_workflow_edits.py."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
EVERY = [README, *PAGES]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.S | re.M)


def blocks(path: Path, kinds: tuple[str, ...] = ("sh", "console", "text", "")) -> list[tuple[str, str]]:
    """The fenced code blocks of a page (``kind``, body), in order."""
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(path.read_text()) if m.group(1) in kinds]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = BLOCK.sub("", path.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.M)}


def links(path: Path) -> list[str]:
    text = BLOCK.sub("", path.read_text())
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


def commands(path: Path, program: str, inline: bool = False) -> list[list[str]]:
    """Each ``program`` command of the page's shell and workflow blocks as its words (continuation lines
    joined; the prompt, comments, redirections and whatever a pipe, ``;``, ``&&`` or ``||`` joins to it
    dropped); with ``inline``, of its inline code instead, where a span of three words or more that is not a
    synopsis (no ``[…]``, ``|``, ``…`` or upper-case placeholder) names a command."""
    found = []
    spans = re.findall(r"(?<!`)`([^`\n]+)`(?!`)", BLOCK.sub("", path.read_text()))
    synopsis = re.compile(r"[][|…]|\.\.\.|[A-Z]{2,}")
    texts = "\n".join(s for s in spans if s.startswith(f"{program} ") and len(s.split()) > 2 and not synopsis.search(s))
    for kind, body in [("", texts)] if inline else blocks(path, ("sh", "console", "yaml", "")):
        for line in re.sub(r"\\\n\s*", " ", body).splitlines():
            line = line.strip()
            if kind == "console" or line.startswith("$ "):
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            lexer = shlex.shlex(line.replace("…", "x"), posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            try:
                words = list(lexer)
            except ValueError:  # a here-document's line, not a command
                continue
            command: list[str] = []
            for word in [*words, ";"]:
                if word and set(word) <= set("();<>|&"):
                    if command and (command[0] == program or command[0].endswith(f"/{program}")):
                        found.append(command)
                    command = [] if word != ">" else ["", ""]  # a redirection's target is no argument
                elif command[:1] == [""]:
                    command = command[2:] if len(command) == 2 else command
                elif not (not command and re.fullmatch(r"\w+=\S*", word)):  # VAR=value before the command
                    command.append(word)
    return found


def test_the_readme_is_a_five_minute_read() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move the detail to a page under docs/"


def test_the_readme_links_every_page() -> None:
    linked = {t.split("#")[0] for t in links(README)}
    for page in PAGES:
        assert f"docs/{page.name}" in linked, f"README.md does not link docs/{page.name}"


@pytest.mark.parametrize("path", EVERY, ids=lambda p: p.name)
def test_every_link_and_anchor_resolves(path: Path) -> None:
    for target in links(path):
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        assert dest.exists(), f"{path.name}: link {target} names no file"
        if anchor and dest.suffix == ".md":
            assert anchor in anchors(dest), f"{path.name}: link {target}: no such heading in {dest.name}"


def _parse(argv: list[str]) -> str | None:
    """None when today's parser accepts ``argv``, else what it said."""
    from verdict_gate.cli import build_parser

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser().parse_args(argv)
        except SystemExit as stop:
            if stop.code:
                return err.getvalue().strip() or f"exit {stop.code}"
    return None


@pytest.mark.parametrize("path", EVERY, ids=lambda p: p.name)
def test_every_command_shown_is_accepted_today(path: Path) -> None:
    bad = []
    for words in commands(path, "verdict-gate"):
        if (said := _parse(words[1:])) is not None:
            bad.append(f"{shlex.join(words)}\n  -> {said}")
    for words in commands(path, "verdict-gate", inline=True):  # prose names a command and some of its options
        said = _parse(words[1:])
        if said is not None and not re.search(r"required|expected one argument", said.splitlines()[-1]):
            bad.append(f"{shlex.join(words)}\n  -> {said}")
    assert not bad, f"{path.name}: commands today's CLI refuses:\n" + "\n".join(bad)
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), flags=re.M))
    for words in commands(path, "make"):
        for target in words[1:]:
            if "=" not in target and not target.startswith("-"):
                assert target in targets, f"{path.name}: `{shlex.join(words)}`: the Makefile has no target {target}"


def test_the_readme_test_command_is_make_test() -> None:
    assert ["make", "test"] in commands(README, "make"), "the README's test command is `make test` (.ci/run runs it)"
    assert "\nmake test\n" in (ROOT / ".ci" / "run").read_text()


def _current_words() -> tuple[set[str], set[str], set[str]]:
    from verdict_gate.report.rules import RULES

    return {"promoted", "blocked", "void", "incomplete"}, {"pass", "fail", "inconclusive"}, set(RULES)


@pytest.mark.parametrize("path", EVERY, ids=lambda p: p.name)
def test_every_verdict_table_shown_names_today_s_words(path: Path) -> None:
    outcomes, verdicts, reasons = _current_words()
    for _, body in blocks(path, ("console", "text", "")):
        for line in body.splitlines():
            if m := re.match(r"outcome: (\S+)$", line):
                assert m.group(1) in outcomes, f"{path.name}: {line}"
            if m := re.match(r"(prop\.\S+) {2,}(\S+) {2,}(\S+)( |$)", line):
                assert m.group(2) in verdicts and m.group(3) in reasons, f"{path.name}: {line}"


# --- the README's worked example, run as written ---------------------------------------------------------------


def worked_example() -> list[tuple[str, str]]:
    """The blocks of the README's worked example, in order."""
    text = README.read_text()
    section = text.split("\n## A worked example", 1)[1].split("\n## ", 1)[0]
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(section)]


def _console(body: str) -> list[tuple[str, str]]:
    """A console block's (command, the output shown) pairs."""
    out: list[tuple[str, str]] = []
    for line in re.sub(r"\\\n\s*", " ", body).splitlines():
        if line.startswith("$ "):
            out.append((line[2:], ""))
        else:
            out[-1] = (out[-1][0], out[-1][1] + line + "\n")
    return out


def normal(text: str) -> str:
    """What differs from machine to machine: commit ids and digests, the sandbox's method."""
    text = re.sub(r"[0-9a-f]{12,}", "<hex>", text)
    return re.sub(r" via [\w-]+:", " via <method>:", text)


def run_worked_example(tmp_path: Path) -> list[tuple[str, str, str]]:
    """Run the README's worked example in ``tmp_path`` as a reader would, in one shell: each console block's
    (command, the output the README shows, what it printed on stdout today)."""
    script, shown = ["set -u"], []
    for i, (kind, body) in enumerate(worked_example()):
        if kind == "sh":
            (tmp_path / f"block{i}.sh").write_text(body)
            script += ["set -e", f"source {tmp_path / f'block{i}.sh'} >/dev/null", "set +e"]
        elif kind == "console":
            for j, (command, output) in enumerate(_console(body)):
                script += [f"echo '@@ {i}.{j}'", command]
                shown.append((command, output))
        else:
            raise AssertionError(f"the worked example's block {i} is `{kind}`: only sh and console blocks run")
    script.append("echo '@@ end'")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "A",
           "GIT_COMMITTER_EMAIL": "a@example.com"}
    env.pop("VERDICT_GATE_RUN_ID", None)
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.stdout.rstrip().endswith("@@ end"), f"the example stopped early:\n{proc.stdout}\n{proc.stderr}"
    parts = re.split(r"^@@ \S+\n", proc.stdout, flags=re.M)
    assert len(parts) == len(shown) + 2, proc.stdout
    return [(command, output, printed) for (command, output), printed in zip(shown, parts[1:-1], strict=True)]


def test_the_readme_worked_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    for command, output, printed in run_worked_example(tmp_path):
        assert normal(printed) == normal(output), f"$ {command}\nREADME shows:\n{output}\nprinted today:\n{printed}"
