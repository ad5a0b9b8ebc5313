"""Candidate text never runs as code in the oracle's process (docs/design.md §8.1, "Candidate text in the
oracle's process").

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

What the worker sent is told by :meth:`Client.is_text`: string and bytes answers (a subclass's value too),
the strings of a container answer, an iterator's items, a module's docstring and namespace strings, of six
characters or more; in a property's own call, also a text that holds one (``repr`` of a record or a list
built here around a candidate object's ``repr``, an f-string). Strings nested deeper in a value that crossed
whole, candidate text cut into shorter pieces, and ``pickle.load`` of a file are not told apart: a pack must
not run them (README, "Known limits").

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

# The compiler flags a `from __future__ import …` of the calling code sets (what compile() inherits).
FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag

TEXT = (str, bytes, bytearray, memoryview)  # what eval, exec and compile take as source text
FIX = ("compare the object with an expected value, or read it back with ast.literal_eval; or set isolation: none "
       "for this property")


def _preview(text: Any) -> str:
    return repr(text[:80]) + ("…" if len(text) > 80 else "")


def install(client: Any) -> dict[str, Any]:
    """Wrap ``builtins.eval``, ``builtins.exec``, ``builtins.compile`` and ``pickle.loads`` for ``client``
    (a :class:`proxy.Client`). Returns the originals by those names, to undo it."""
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
                return client.request({"op": "eval", "src": client.encode(text),
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
            return client.request({"op": "unpickle", "arg": client.encode(bytes(memoryview(data)))})
        return real_loads(data, **options)

    for name, wrapper in (("eval", eval), ("exec", exec), ("compile", compile)):
        wrapper.__doc__ = getattr(builtins, name).__doc__
        setattr(builtins, name, wrapper)
    loads.__doc__ = real_loads.__doc__
    pickle.loads = loads
    return originals
