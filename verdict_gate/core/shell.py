"""Which repository files a shell script runs or reads by path (docs/design.md §6, "What defines the run"). Pure.

GitHub Actions runs a ``run:`` step with ``bash -e {0}`` (``sh -e {0}`` where bash is missing). This module
reads that text only as far as the gate's question needs: the words a command is made of (quotes, escapes,
line continuations, comments, operators, redirections and here-documents as bash reads them), and of each
command which word names a file: the command itself when it is a path (``./x.sh``, ``tools/x``), the script
given to a shell, to Python or to another interpreter (``bash ./x.sh``, ``python x.py``, ``node x.js``), the
module of ``python -m``, the file given to ``source`` or ``.``, a file redirected in (``< x``), and the same
in ``bash -c '…'``, ``eval``, command substitutions (``$( … )``) and a here-document fed to a shell.

What the run alone knows (a variable that no ``env:`` sets to a literal, an expression, a command's output)
cannot be read: a path built from one counts as every file under its literal directory, and as "cannot tell"
(:attr:`Refs.unsure`) when nothing of it is literal. Files a tool finds by its own conventions (a Makefile,
``package.json``, ``conftest.py``) and what a script opens by a name it computes are not seen.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

UNKNOWN = "\0"  # in a word: a value only the run knows
_VAR, _END = "\2", "\3"  # in a word: "\2NAME\3", a variable, resolved against the env at the command
OUTSIDE = "/"  # a working directory outside the checkout (the runner's temp, $HOME)
WORKSPACE = "/\1workspace"  # the checkout's top as an absolute path ($GITHUB_WORKSPACE, ${{ github.workspace }})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)", re.DOTALL)
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"})
PYTHON = re.compile(r"(python|pypy)(\d+(\.\d+)?)?")
_OTHERS = frozenset({"node", "nodejs", "deno", "bun", "ruby", "perl", "php", "Rscript", "pwsh", "powershell",
                     "tsx", "ts-node", "lua", "tclsh"})
_INLINE = frozenset({"-e", "--eval", "-p", "--print", "-c", "-E", "-Command", "-command", "--command"})
_WITH_VALUE = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader", "-I", "-C", "--config"})
# Words that start a command without being it: reserved words, and commands that run the rest of theirs.
_KEYWORDS = frozenset({"!", "if", "then", "elif", "else", "do", "while", "until", "{", "}", "fi", "done", "esac",
                       "time", "exec", "command", "builtin", "nohup", "coproc"})
# … and the options of theirs that take a value
_WRAPPERS = {"sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}, "env": {"-u", "-C", "-S"},
             "nice": {"-n"}, "timeout": {"-s", "-k"}, "stdbuf": set(), "ionice": {"-c", "-n", "-p"},
             "xvfb-run": {"-s", "-n", "-e", "-f", "-p", "-w"}}
_RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye"})  # `uv run CMD …`
_DECLARE = frozenset({"export", "local", "declare", "readonly", "typeset"})
MAX_DEPTH = 8  # nested `bash -c`, `eval` and command substitutions read
# How a script names its own directory: $(dirname "$0"), $(dirname "${BASH_SOURCE[0]}"), and $(cd THAT && pwd)
_DIRNAME = re.compile(r'\$\(\s*dirname\s+(?:--\s+)?"?(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE)"?\s*\)')
_CD_PWD = re.compile(r'\$\(\s*cd\s+(?:--\s+)?"?(' + re.escape(WORKSPACE) + r'[^"\s)]*)"?\s*&&\s*pwd(?:\s+-P)?\s*\)')


class Unreadable(ValueError):
    """The text is not shell the gate can read (an unterminated quote or substitution)."""


@dataclass(frozen=True)
class Command:
    """One simple command: its words (quotes removed; see :data:`UNKNOWN`), the files redirected into it, the
    command substitutions anywhere in it and the here-documents of its line."""

    words: tuple[str, ...]
    inputs: tuple[str, ...] = ()
    nested: tuple[str, ...] = ()
    heredocs: tuple[str, ...] = ()


@dataclass
class Refs:
    """What a script names. ``files``: ``(path, how, cwd)`` with ``how`` ``shell`` (a shell reads it: follow
    it), ``run`` (executed: a shell script when it has no other ``#!``) or ``file`` (run by another interpreter,
    or read), and the directory it runs in; ``dirs``: directories any file of which may be meant; ``globs``;
    ``unsure``: why the gate cannot tell."""

    files: list[tuple[str, str, str | None]] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    globs: list[str] = field(default_factory=list)
    unsure: list[str] = field(default_factory=list)


def parse(text: str) -> list[Command]:
    """The simple commands of ``text``, in order.

    Raises:
        Unreadable: an unterminated quote, substitution or ``${``.
    """
    return _Lexer(text).commands()


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0
        self.out: list[Command] = []
        self.line_start = 0  # index into out: the commands of the current line
        self.words: list[str] = []
        self.inputs: list[str] = []
        self.nested: list[str] = []
        self.delimiters: list[str] = []
        self.word: list[str] | None = None
        self.redirect: str | None = None  # what the next word is: "input", "heredoc" or "other"

    def commands(self) -> list[Command]:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c in " \t\r":
                self.end_word()
                self.i += 1
            elif c == "\\":
                if text.startswith("\\\n", self.i):
                    self.i += 2  # a line continuation
                else:
                    self.add(text[self.i + 1:self.i + 2])
                    self.i += 2
            elif c == "\n":
                self.end_command()
                self.i += 1
                self.heredoc_bodies()
            elif c == "#" and self.word is None:
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif c in ";&|()":
                self.operator(c)
            elif c in "<>":
                self.redirection(c)
            elif c == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise Unreadable("a ' quote is not closed")
                self.add(text[self.i + 1:end])
                self.i = end + 1
            elif c == '"':
                self.double_quoted()
            else:
                self.character(c)
        self.end_command()
        return self.out

    def character(self, c: str) -> None:
        """A character that means the same inside double quotes and out: an expansion, or itself."""
        if c == "$":
            self.dollar()
        elif c == "`":
            self.backquoted()
        else:
            self.add(c)
            self.i += 1

    def add(self, s: str) -> None:
        if self.word is None:
            self.word = []
        self.word.append(s)

    def end_word(self) -> None:
        if self.word is None:
            return
        word, self.word = "".join(self.word), None
        redirect, self.redirect = self.redirect, None
        if redirect == "input":
            self.inputs.append(word)
        elif redirect == "heredoc":
            self.delimiters.append(word)
        elif redirect is None:
            self.words.append(word)

    def end_command(self) -> None:
        self.end_word()
        if self.words or self.inputs or self.nested:
            self.out.append(Command(tuple(self.words), tuple(self.inputs), tuple(self.nested)))
        self.words, self.inputs, self.nested = [], [], []

    def operator(self, c: str) -> None:
        text = self.text
        if text.startswith("&>", self.i):  # &> and &>>: both streams to a file
            self.end_word()
            self.i += 3 if text.startswith("&>>", self.i) else 2
            self.redirect = "other"
            return
        self.end_command()
        self.i += 2 if text[self.i:self.i + 2] in ("&&", "||", ";;", "|&") else 1

    def redirection(self, c: str) -> None:
        text = self.text
        if self.word is not None and "".join(self.word).isdigit():
            self.word = None  # a file descriptor number (2>…), not a word
        self.end_word()
        if text.startswith(("<(", ">("), self.i):  # a process substitution: a command the shell runs
            end = _closing(text, self.i + 1)
            self.nested.append(text[self.i + 2:end])
            self.add(UNKNOWN)
            self.i = end + 1
            return
        for op, kind in (("<<<", "other"), ("<<-", "heredoc"), ("<<", "heredoc"), ("<&", "other"), ("<>", "input"),
                         ("<", "input"), (">>", "other"), (">|", "other"), (">&", "other"), (">", "other")):
            if text.startswith(op, self.i):
                self.i += len(op)
                self.redirect = kind
                return

    def heredoc_bodies(self) -> None:
        """After a newline: the here-documents its line opened, each up to its delimiter line (bash ends one
        at the end of the text too); kept on every command of that line."""
        bodies = []
        for delimiter in self.delimiters:
            lines = []
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line, self.i = self.text[self.i:end], end + 1
                if line.strip() == delimiter.replace(UNKNOWN, ""):
                    break
                lines.append(line)
            bodies.append("\n".join(lines))
        self.delimiters = []
        if bodies:
            self.out[self.line_start:] = [Command(c.words, c.inputs, c.nested, tuple(bodies))
                                          for c in self.out[self.line_start:]]
        self.line_start = len(self.out)

    def double_quoted(self) -> None:
        text, self.i = self.text, self.i + 1
        self.add("")
        while True:
            if self.i >= len(text):
                raise Unreadable('a " quote is not closed')
            c = text[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and text[self.i + 1:self.i + 2] in ('"', "\\", "$", "`", "\n"):
                self.add(text[self.i + 1] if text[self.i + 1] != "\n" else "")
                self.i += 2
            else:
                self.character(c)

    def dollar(self) -> None:
        text, i = self.text, self.i
        nxt = text[i + 1:i + 2]
        if text.startswith("$((", i):
            end = text.find("))", i + 3)
            if end < 0:
                raise Unreadable("a $(( is not closed")
            self.add(UNKNOWN)
            self.i = end + 2
        elif nxt == "(":
            end = _closing(text, i + 1)
            self.nested.append(text[i + 2:end])
            self.add(UNKNOWN)
            self.i = end + 1
        elif nxt == "{":
            end = text.find("}", i + 2)
            if end < 0:
                raise Unreadable("a ${ is not closed")
            name = text[i + 2:end]
            self.add(f"{_VAR}{name}{_END}" if _NAME.fullmatch(name) else UNKNOWN)
            self.i = end + 1
        elif nxt == "'":  # $'…': ANSI-C quoting (its escapes are kept as written)
            end = text.find("'", i + 2)
            if end < 0:
                raise Unreadable("a $' quote is not closed")
            self.add(text[i + 2:end])
            self.i = end + 1
        elif (m := _NAME.match(text, i + 1)) is not None:
            self.add(f"{_VAR}{m.group()}{_END}")
            self.i = m.end()
        elif nxt and nxt in "@*#?$!-0123456789":
            self.add(UNKNOWN)
            self.i = i + 2
        else:
            self.add("$")
            self.i = i + 1

    def backquoted(self) -> None:
        end = self.i + 1
        while end < len(self.text) and self.text[end] != "`":
            end += 2 if self.text[end] == "\\" else 1
        if end >= len(self.text):
            raise Unreadable("a ` substitution is not closed")
        self.nested.append(self.text[self.i + 1:end])
        self.add(UNKNOWN)
        self.i = end + 1


def _closing(text: str, at: int) -> int:
    """The index of the ``)`` that closes the ``(`` at ``at``, past quotes and nested parentheses."""
    depth, i = 0, at
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            end = text.find(c, i + 1)
            if end < 0:
                break
            i = end
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise Unreadable("a $( or <( is not closed")


def resolve(word: str, env: Mapping[str, str]) -> str:
    """``word`` with each variable replaced by its value in ``env`` (itself resolved), or by :data:`UNKNOWN`."""
    for _ in range(MAX_DEPTH):
        if _VAR not in word:
            return word
        word = re.sub(f"{_VAR}([^{_END}]*){_END}", lambda m: env.get(m.group(1), UNKNOWN), word)
    return re.sub(f"{_VAR}[^{_END}]*{_END}", UNKNOWN, word)


def refs(text: str, cwd: str | None, env: Mapping[str, str], where: str, found: Refs | None = None,
         depth: int = 0, script: str | None = None) -> Refs:
    """What the script ``text`` runs or reads by path, as repository paths (:class:`Refs`).

    ``cwd``: its working directory (``""`` the checkout's top, :data:`OUTSIDE`, ``None`` unknown); ``env``:
    the variables it starts with whose values are known (:data:`UNKNOWN` in a value: unknown); ``where``: what
    to name in a reason; ``script``: the repository path of the file ``text`` is, for ``$(dirname "$0")``.
    """
    found = found if found is not None else Refs()
    if script is not None:  # the script's own directory, as scripts find it
        own = WORKSPACE + "/" + posixpath.dirname(script) if posixpath.dirname(script) else WORKSPACE
        text = _DIRNAME.sub(lambda m: own, text)
        text = _CD_PWD.sub(lambda m: m.group(1), text)
    if depth > MAX_DEPTH:
        found.unsure.append(f"{where}: commands nested deeper than {MAX_DEPTH} levels")
        return found
    try:
        commands = parse(text)
    except Unreadable as exc:
        found.unsure.append(f"{where}: the script cannot be read ({exc})")
        return found
    env, cwds = dict(env), [cwd]
    for command in commands:
        here = f"{where}: `{_show(' '.join(command.words))}`"
        for inner in command.nested:
            refs(inner, cwds[-1], env, where, found, depth + 1)
        for path in command.inputs:
            _path(resolve(path, env), cwds, "file", here, found)
        cwds = _command([resolve(w, env) for w in command.words], command, cwds, env, here, found, depth)
    return found


def _command(words: list[str], command: Command, cwds: list[str | None], env: dict[str, str], where: str,
             found: Refs, depth: int) -> list[str | None]:
    """Read one command into ``found``; returns the working directories after it (``cd``)."""
    i = _skip_prefix(words, env)
    if i >= len(words):
        return cwds
    head, args = words[i], words[i + 1:]
    name = posixpath.basename(head)
    if head in ("for", "case", "select", "function", "[[", "[", "test", "echo", "printf", "true", "false", ":"):
        return cwds
    if head in ("cd", "pushd"):
        return cwds + [_cd(args, cwds)]
    if head in ("source", "."):
        if args:
            _path(args[0], cwds, "shell", where, found)
        return cwds
    if head == "eval":
        _code(" ".join(args), cwds, env, where, found, depth)
        return cwds
    if "/" in head or UNKNOWN in head:
        _path(head, cwds, "run", where, found)
    if name in _SHELLS:
        _shell(args, command, cwds, env, where, found, depth)
    elif PYTHON.fullmatch(name):
        _python(args, cwds, where, found)
    elif name in _OTHERS:
        _other(name, args, cwds, where, found)
    return cwds


def _skip_prefix(words: list[str], env: dict[str, str]) -> int:
    """The index of the word that is the command: past assignments (recorded in ``env`` when the command is
    only those, or ``export``), reserved words and the commands that run the rest of the line."""
    i, wrapper = 0, None
    while i < len(words):
        word = words[i]
        assign = _ASSIGN.fullmatch(word)
        if assign and wrapper in (None, "env"):
            i += 1
            continue
        if word in _KEYWORDS or (word in _DECLARE and wrapper is None):
            i += 1
            continue
        if word in _WRAPPERS:
            wrapper = word
            i += 1
            continue
        if word in _RUNNERS and words[i + 1:i + 2] == ["run"]:
            wrapper = "run"
            i += 2
            continue
        if wrapper is not None and word.startswith("-"):
            i += 2 if word in _WRAPPERS.get(wrapper, ()) else 1
            continue
        if wrapper == "timeout" and re.fullmatch(r"[\d.]+[smhd]?", word):
            i += 1
            continue
        break
    if i == len(words) or words[0] in _DECLARE:  # assignments alone, or export: they set the rest's env
        for word in words:
            assign = _ASSIGN.fullmatch(word)
            if assign:
                env[assign.group(1)] = assign.group(2)
    return i


def _cd(args: list[str], cwds: list[str | None]) -> str | None:
    """The directory ``cd ARGS`` leads to (relative to the last of ``cwds``): ``OUTSIDE`` for ``cd``, ``~``
    or an absolute path, ``None`` when it cannot be told."""
    target = next((a for a in args if not a.startswith("-")), None)
    base = cwds[-1]
    if target is not None and target.startswith(WORKSPACE):
        target, base = target[len(WORKSPACE):].lstrip("/") or ".", ""
    if target is None or target.startswith(("~", "/")):
        return OUTSIDE
    if UNKNOWN in target or base is None:
        return None
    if base == OUTSIDE:
        return OUTSIDE
    joined = _join(base, target)
    return OUTSIDE if joined is None else joined


def _join(base: str, path: str) -> str | None:
    """``base/path`` as a clean repository path (``""`` the top), ``None`` when it leaves the checkout."""
    norm = posixpath.normpath(posixpath.join(base, path) if base else path)
    if norm.startswith("/") or norm == ".." or norm.startswith("../"):
        return None
    return "" if norm == "." else norm


def _path(word: str, cwds: list[str | None], how: str, where: str, found: Refs) -> None:
    """Record the file ``word`` names, relative to each working directory it may be run from."""
    if word.startswith(WORKSPACE):
        word, cwds = word[len(WORKSPACE):].lstrip("/") or ".", [""]
    if not word or word.startswith(("/", "~")):
        return  # outside the checkout: no edit of the patch reaches it
    for cwd in dict.fromkeys(cwds):
        if cwd == OUTSIDE:
            continue
        if cwd is None:
            found.unsure.append(f"{where}: it runs in a directory the gate cannot tell")
            continue
        literal, dynamic, _ = word.partition(UNKNOWN)
        if dynamic:
            top = _join(cwd, literal.rpartition("/")[0] if "/" in literal else "")
            if top:
                found.dirs.append(top)
            elif top == "":
                found.unsure.append(f"{where}: the gate cannot tell which file that is")
            continue
        path = _join(cwd, word)
        if not path:
            continue  # outside the checkout, or its top (a directory, not a file)
        if any(c in word for c in "*?["):
            found.globs.append(path)
        else:
            found.files.append((path, how, cwd))


def _show(text: str) -> str:
    """``text`` for a reason: a variable as ``$NAME``, what the run computes as ``…``, at most 200 characters."""
    text = re.sub(f"{_VAR}([^{_END}]*){_END}", lambda m: "$" + m.group(1), text).replace(UNKNOWN, "…")
    return text if len(text) <= 200 else text[:200] + "…"


def _code(code: str, cwds: list[str | None], env: Mapping[str, str], where: str, found: Refs, depth: int) -> None:
    """Shell code given as a word (``bash -c``, ``eval``): read it too, when the run does not make it."""
    if UNKNOWN in code:
        found.unsure.append(f"{where}: the gate cannot tell what code that runs")
    else:
        refs(code, cwds[-1], env, where, found, depth + 1)


def _shell(args: list[str], command: Command, cwds: list[str | None], env: Mapping[str, str], where: str,
           found: Refs, depth: int) -> None:
    """``bash [options] [SCRIPT | -c CODE | -s]``; without a script, a here-document is the code it reads."""
    j = 0
    while j < len(args):
        arg = args[j]
        if arg == "--":
            j += 1
            break
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            if j + 1 < len(args):
                _code(args[j + 1], cwds, env, where, found, depth)
            return
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            j += 2
            continue
        if arg in ("-s", "-"):
            break
        if arg.startswith(("-", "+")):
            j += 1
            continue
        _path(arg, cwds, "shell", where, found)
        return
    for path in command.inputs:  # `bash < x.sh`: what it reads is its code
        _path(resolve(path, env), cwds, "shell", where, found)
    for body in command.heredocs:
        _code(body, cwds, env, where, found, depth)


def _python(args: list[str], cwds: list[str | None], where: str, found: Refs) -> None:
    """``python [options] (SCRIPT | -m MODULE | -c CODE | -)``: the script, or the files a module may be."""
    j = 0
    while j < len(args):
        arg = args[j]
        if arg == "-" or not arg.startswith("-"):
            break
        if arg.startswith("--"):
            j += 2 if arg == "--check-hash-based-pycs" else 1
            continue
        flags, j = arg[1:], j + 1
        for k, flag in enumerate(flags):
            if flag in "cmWX":
                value = flags[k + 1:] or (args[j] if j < len(args) else "")
                j += 0 if flags[k + 1:] else 1
                if flag == "c":
                    return  # inline code: not followed
                if flag == "m":
                    _module(value, cwds, where, found)
                    return
                break
    if j < len(args) and args[j] != "-":
        _path(args[j], cwds, "file", where, found)


def _module(module: str, cwds: list[str | None], where: str, found: Refs) -> None:
    """``python -m a.b`` from the working directory (first on ``sys.path``): ``a/b.py``, ``a/b/__main__.py``
    and the ``__init__.py`` of each package on the way."""
    if UNKNOWN in module or not module:
        found.unsure.append(f"{where}: the gate cannot tell which module that runs")
        return
    parts = module.split(".")
    base = "/".join(parts)
    for path in (f"{base}.py", f"{base}/__main__.py", f"{base}/__init__.py",
                 *("/".join(parts[:k]) + "/__init__.py" for k in range(1, len(parts)))):
        _path(path, cwds, "file", where, found)


def _other(name: str, args: list[str], cwds: list[str | None], where: str, found: Refs) -> None:
    """``node [options] SCRIPT``, ``deno run SCRIPT``, ``pwsh -File SCRIPT`` …: the script."""
    j = 1 if name in ("deno", "bun") and args[:1] == ["run"] else 0
    while j < len(args):
        arg = args[j]
        if arg in _INLINE:
            return
        if arg in ("-File", "-file", "-f") and name in ("pwsh", "powershell"):
            j += 1
            break
        if arg in _WITH_VALUE:
            j += 2
            continue
        if not arg.startswith("-"):
            break
        j += 1
    if j < len(args):
        _path(args[j], cwds, "file", where, found)


def is_shell_script(text: str) -> bool:
    """Whether a file run as a command (``./x``) is run by a shell: a ``#!`` naming one (``#!/bin/bash``,
    ``#!/usr/bin/env bash``), or none at all (the shell then runs it itself); never a binary (a NUL byte)."""
    if "\0" in text:
        return False
    if not text.startswith("#!"):
        return True
    words = text[2:].split("\n", 1)[0].split()
    if words and posixpath.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return bool(words) and posixpath.basename(words[0]) in _SHELLS
