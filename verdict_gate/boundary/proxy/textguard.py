"""Candidate text never runs as code in the oracle's process (docs/design.md §8.1, "Candidate text in the
oracle's process"): the texts the worker sent (:class:`Texts`), and the entry points that could run one.

A string or bytes the worker sent is the candidate's text. A pack that runs it as code runs the
candidate's code beside pytest, the plugin and the results stream: ``eval(repr(obj))``, a common
round-trip check, runs whatever the candidate's ``__repr__`` returns, and ``pickle.loads`` of bytes a
candidate function returned runs that pickle's calls. :func:`install` wraps the four entry points in this
process:

- ``eval(text, namespace)`` of a text the worker sent, with a dict of globals the pack gives (the usual
  ``eval(repr(obj), {"Money": Money})``; not a module's namespace such as ``globals()``), is evaluated in
  the worker with a copy of that namespace, and its value comes back, as in one process. Any other
  ``eval``, ``exec`` or ``compile`` of such a text (str or bytes; the same after stripping whitespace) is
  refused as a limit of the boundary (the property is ``incomplete``, never run, never frozen): the
  caller's own module namespace cannot go to the worker. ``compile`` to an AST only (``ast.parse``,
  ``ast.literal_eval``) builds data and is left alone.
- ``pickle.loads`` of bytes the worker sent unpickles them in the worker, as one process would load the
  candidate's own pickle, and gives back the value.

What the worker sent is told by :meth:`Texts.is_text`: string and bytes answers (a subclass's value too),
the strings of a container answer, an iterator's items, a module's docstring and namespace strings, of six
characters or more; in a property's own call, also a text that holds one (``repr`` of a record or a list
built here around a candidate object's ``repr``, an f-string). Strings nested deeper in a value that crossed
whole, candidate text cut into shorter pieces, and ``pickle.load`` of a file are not told apart: a pack must
not run them (docs/isolation.md, "Known limits, said plainly").

A spoke of the oracle side (it imports nothing of the boundary: the client is handed to :func:`install`).
This module has no ``from __future__`` import on purpose: ``eval``, ``exec`` and ``compile`` inherit the
future flags of the code that calls them, so the wrappers pass their caller's flags on, and their own
must be none.
"""

import __future__

import ast
import builtins
import pickle
import sys
from typing import Any

from ..protocol import EVAL, UNPICKLE
from .errors import named

# The compiler flags a `from __future__ import …` of the calling code sets (what compile() inherits).
FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag

TEXT = (str, bytes, bytearray, memoryview)  # what eval, exec and compile take as source text
FIX = ("compare the object with an expected value, or read it back with ast.literal_eval; or set isolation: none "
       "for this property")


MAX_DOC_TEXTS = 10_000  # texts with doctest examples a client keeps (Texts.note)
MIN_PIECE = 6  # characters of a worker text, stripped, from which it is looked for (`exit()` is six)
MAX_TEXTS = 500_000  # worker texts a client keeps (Texts.note)
MAX_TEXT_BYTES = 32 << 20  # their characters (or bytes) in all


@named
class Texts:
    """Every string or bytes the worker sent, of at least :data:`MIN_PIECE` characters once stripped (a shorter
    one is no code worth running): candidate text, which never runs as code here (``eval(repr(obj))``, or a
    text built around one: ``repr`` of a record or a list holding a candidate object). Past :data:`MAX_TEXTS`
    texts or :data:`MAX_TEXT_BYTES` every text is taken for the candidate's (fail closed: a flood cannot push
    one out of sight). Texts with doctest examples are kept whole too (``doc_texts``): the doctest fence
    (:mod:`.doctests`) refuses to parse their examples in this process; past :data:`MAX_DOC_TEXTS` it refuses
    every parse with examples."""

    def __init__(self) -> None:
        self.seen: dict[str | bytes, None] = {}
        self.size = 0  # characters (or bytes) of the texts seen
        self.full = False
        self.doc_texts: dict[str, None] = {}
        self.doc_texts_full = False

    @property
    def max_doc_texts(self) -> int:
        return MAX_DOC_TEXTS

    def note(self, *texts: Any) -> None:
        """Keep the texts the worker sent (a string or bytes answer or the strings of a container answer, an
        iterator's items, a module's docstring and the strings of its namespace; a subclass's value too): the
        candidate's text, never run here as code. Those that hold doctest examples (``>>>``) whole, every one
        for :meth:`is_text`."""
        for text in texts:
            if isinstance(text, str):
                text = str.__str__(text)  # a subclass's value, as an exact str (its own __str__ not called)
            elif isinstance(text, (bytes, bytearray)):
                text = bytes(memoryview(text))
            else:
                continue
            if not self.full:
                self._keep(text)
            if type(text) is str and ">>>" in text and text not in self.doc_texts:
                if len(self.doc_texts) >= MAX_DOC_TEXTS:
                    self.doc_texts_full = True
                    continue
                self.doc_texts[text] = None

    def note_in(self, value: Any) -> None:
        """:meth:`note` of an answer: the value itself, or the items (keys and values) of a container."""
        if isinstance(value, (list, tuple, set, frozenset)):
            self.note(*value)
        elif type(value).__name__ == "Signature" and type(value).__module__ == "inspect":
            # a candidate callable's signature: its string annotations and defaults are candidate text
            # (typing.ForwardRef would compile an annotation)
            for param in value.parameters.values():
                self.note(param.default, param.annotation)
            self.note(value.return_annotation)
        elif isinstance(value, dict):
            self.note(*value.keys(), *value.values())
        else:
            self.note(value)

    def _keep(self, text: "str | bytes") -> None:
        if text[:1].isspace() or text[-1:].isspace():  # a copy only when stripping changes it
            text = text.strip()
        if len(text) < MIN_PIECE or text in self.seen:
            return
        if len(self.seen) >= MAX_TEXTS or self.size + len(text) > MAX_TEXT_BYTES:
            self.full = True
            return
        self.seen[text] = None
        self.size += len(text)

    def is_text(self, value: Any, *, within: bool = False) -> bool:
        """Whether ``value`` (a str, bytes, bytearray or memoryview, or a subclass; anything else is not text)
        strips to a text the worker sent (:meth:`note`); with ``within``, also whether it holds one. Always
        for a text of :data:`MIN_PIECE` characters or more once the texts kept reached their cap."""
        if isinstance(value, str):
            value = str.__str__(value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            value = bytes(memoryview(value))
        else:
            return False
        if value[:1].isspace() or value[-1:].isspace():
            value = value.strip()
        if len(value) < MIN_PIECE:
            return False
        if self.full:
            return True
        # eval and compile take either: a str the worker sent is the same code as its UTF-8 bytes.
        other = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else \
            value.decode("utf-8", "surrogateescape")
        if value in self.seen or other in self.seen:
            return True
        if within:
            return any(text in (value if type(text) is type(value) else other) for text in self.seen)
        return False


def _preview(text: Any) -> str:
    return repr(text[:80]) + ("…" if len(text) > 80 else "")


def install(client: Any) -> dict[str, Any]:
    """Wrap ``builtins.eval``, ``builtins.exec``, ``builtins.compile`` and ``pickle.loads`` for ``client``
    (a :class:`.client.Client`). Returns the originals by those names, to undo it."""
    real_eval, real_exec, real_compile, real_loads = builtins.eval, builtins.exec, builtins.compile, pickle.loads
    originals: dict[str, Any] = {"eval": real_eval, "exec": real_exec, "compile": real_compile, "loads": real_loads}

    def theirs(source: Any, frame: Any) -> bool:
        """Whether ``source`` is the worker's text. Called from a property's own code it is also the worker's
        when it holds one (``repr(record)``, ``repr([obj])``, an f-string); the standard library, pytest and
        Hypothesis build code of names and their own templates, where a name of the candidate's is only a
        name, so only the text itself is looked for there."""
        filename = frame.f_code.co_filename
        return client.is_text(source, within=filename.startswith(tuple(client.oracle_roots)))

    def refuse(what: str, source: Any) -> BaseException:
        return client.limit(f"{what} of a text the candidate's code sent ({_preview(source)}): it would run "
                            f"as code in the oracle's process, beside pytest and the results; {FIX}")

    def compiled(source: Any, mode: str, frame: Any) -> Any:
        """``source`` (already found not to be the worker's) compiled as eval and exec compile a string: with
        the caller's future flags."""
        if isinstance(source, TEXT):
            if mode == "eval":  # eval drops leading spaces and tabs, compile does not
                source = str.lstrip(source, " \t") if isinstance(source, str) else bytes(source).lstrip(b" \t")
            return real_compile(source, "<string>", mode, frame.f_code.co_flags & FUTURE_FLAGS, True)
        return source

    def eval(source: Any, globals: Any = None, locals: Any = None, /) -> Any:  # noqa: A001, A002
        frame = sys._getframe(1)  # the caller's namespace, as the builtin takes it
        if isinstance(source, TEXT) and theirs(source, frame):  # one look, however it is then answered
            if type(globals) is dict and locals is None and "__name__" not in globals \
                    and "__builtins__" not in globals and isinstance(source, (str, bytes)):
                # eval(repr(obj), {"Money": Money}): the namespace is the property's own, so the text can be
                # evaluated where candidate code runs, in the worker, and its value comes back. A module's
                # namespace (globals()) stays here: it would hand the worker every function of the pack.
                text = str.__str__(source) if isinstance(source, str) else bytes(memoryview(source))
                return client.request({"op": EVAL, "src": client.encode(text),
                                       "globals": client.encode(dict(globals))})
            raise refuse("eval", source)
        if globals is None:
            globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
        return real_eval(compiled(source, "eval", frame), globals, locals)

    def exec(source: Any, globals: Any = None, locals: Any = None, /, **closure: Any) -> Any:  # noqa: A001, A002
        frame = sys._getframe(1)
        if isinstance(source, TEXT) and theirs(source, frame):
            raise refuse("exec", source)
        if globals is None:
            globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
        return real_exec(compiled(source, "exec", frame), globals, locals, **closure)

    def compile(source: Any, filename: Any, mode: Any, flags: int = 0, dont_inherit: bool = False,  # noqa: A001
                optimize: int = -1, **options: Any) -> Any:
        if not dont_inherit:
            flags |= sys._getframe(1).f_code.co_flags & FUTURE_FLAGS
        if not flags & ast.PyCF_ONLY_AST and theirs(source, sys._getframe(1)):
            raise refuse("compile", source)
        return real_compile(source, filename, mode, flags, True, optimize, **options)

    def loads(data: Any, /, **options: Any) -> Any:
        # The bytes themselves only: the oracle's own pickle of a candidate object holds that object's pickle,
        # which the worker sent (Handle.__reduce__), and unpickles here by asking the worker.
        if client.is_text(data):
            if options:
                raise client.limit(f"pickle.loads with options {sorted(options)} of bytes the candidate's code "
                                   "sent: they unpickle in the candidate worker, with the defaults only")
            return client.request({"op": UNPICKLE, "arg": client.encode(bytes(memoryview(data)))})
        return real_loads(data, **options)

    for name, wrapper in (("eval", eval), ("exec", exec), ("compile", compile)):
        wrapper.__doc__ = getattr(builtins, name).__doc__
        setattr(builtins, name, wrapper)
    loads.__doc__ = real_loads.__doc__
    pickle.loads = loads
    return originals
