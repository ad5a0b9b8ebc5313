"""Pure oracle functions run in the candidate worker as copies (docs/design.md §8.1, "Speed").

A key function, a predicate or a mapping a test hands to candidate code (``SortedKeyList(key=negate)``,
``map_values(lambda x: x + 1, d)``) would otherwise be called back across the boundary once per item: 40 µs
a call where plain Python takes 0.1 µs. A function whose result depends on its arguments and on values that
cannot change is sent to the worker once, as a copy, and runs there. A copy hands the candidate nothing of
the judge: its code is the pack's own (the candidate can read the pack's sources anyway), its globals are
builtins or the standard library's own names, its defaults immutable values, and it holds no reference back into the
oracle process. What the candidate does with the copy (rebind its globals, never call it) is what it could do
with the results of a callback. Anything else stays in the oracle and is called back:

- an ``assert`` or a ``raise`` anywhere in it (a failed assertion must reach the oracle, never a candidate
  ``except``; an exception the oracle raises is the oracle's own object);
- a write to a global or to a variable of an enclosing function, an import, a ``yield``;
- a global that is not a builtin, a module or function of the standard library (a module's constant may be
  rebound, ``monkeypatch.setattr(tests, "FACTOR", 3)``, and the copy would keep the old one);
- a closure (its enclosing function may rebind the variable later: tinydb's ``mutable = 10``);
- a default or keyword default that is not an immutable value;
- a private or special attribute name (``self.__get``): the copy would meet the boundary's refusal where the
  original reads an object of the oracle's;
- function attributes of its own, or code that is not the pack's.

The same checks run on every nested code object (a lambda inside a lambda). Both sides run the same
interpreter, so the code object travels as ``marshal`` data: the oracle writes it, the worker reads it (never
the other way). Standard library only: loaded by path in both processes.
"""

from __future__ import annotations

import builtins
import dis
import functools
import marshal
import sys
import types
from typing import Any

# Operations a copy must not hold: an assertion or a raise (the oracle's exception reaches the oracle as its own
# object, whatever candidate code does with it), writes outside its own frame, imports.
_FORBIDDEN = frozenset({"LOAD_ASSERTION_ERROR", "RAISE_VARARGS", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF",
                        "DELETE_DEREF", "IMPORT_NAME", "IMPORT_FROM", "IMPORT_STAR", "YIELD_VALUE", "GET_AWAITABLE",
                        "SETUP_ANNOTATIONS", "LOAD_BUILD_CLASS"})
_ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "LOAD_METHOD"})
_NOT_PLAIN_FLAGS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator
# Builtins a copy may not name: they reach files, code, other modules or this process's state.
_IMPURE = frozenset({"eval", "exec", "compile", "open", "__import__", "input", "breakpoint", "exit", "quit", "help",
                     "globals", "locals", "vars", "setattr", "delattr", "getattr", "print", "memoryview", "super",
                     "__build_class__", "id"})
# Modules of the standard library whose functions only compute: a copy may name them (the worker's own).
PURE_MODULES = frozenset({"math", "cmath", "operator", "itertools", "functools", "statistics", "string", "decimal",
                          "fractions", "datetime", "json", "re", "collections", "heapq", "bisect", "copy",
                          "textwrap", "unicodedata", "base64", "binascii", "hashlib", "struct", "zlib", "calendar",
                          "numbers", "enum", "random"})
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None))


def _immutable(value: Any, depth: int = 0) -> bool:
    t = type(value)
    if t in _IMMUTABLE:
        return True
    if t in (tuple, frozenset) and depth < 4 and len(value) <= 64:
        return all(_immutable(v, depth + 1) for v in value)
    return False


@functools.lru_cache(maxsize=4096)
def _code_names(code: types.CodeType) -> tuple[frozenset[str], bool]:
    """The global names ``code`` (and the code nested in it) loads, and whether it holds a forbidden operation."""
    names: set[str] = set()
    for ins in dis.get_instructions(code):
        if ins.opname in _FORBIDDEN:
            return frozenset(), False
        if ins.opname in _ATTRIBUTE_OPS and str(ins.argval).startswith("_"):
            return frozenset(), False  # a private or special attribute: refused of an oracle object in the worker
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(ins.argval, str):
            names.add(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_flags & _NOT_PLAIN_FLAGS:
                return frozenset(), False
            inner, ok = _code_names(const)
            if not ok:
                return frozenset(), False
            names |= inner
    return frozenset(names), True


def _global(name: str, namespace: dict[str, Any], stdlib_ref: Any) -> list[Any] | None:
    """How the worker binds one global of a copy: ``["b"]`` its own builtin, ``["m", module]`` its own module,
    ``["r", [module, qualname]]`` its own function or class; ``None``: not allowed."""
    if name not in namespace:
        return ["b"] if hasattr(builtins, name) and name not in _IMPURE else None
    value = namespace[name]
    if isinstance(value, types.ModuleType):
        return ["m", value.__name__] if value.__name__ in PURE_MODULES else None
    ref = stdlib_ref(value)
    if ref is not None and ref[0].partition(".")[0] in PURE_MODULES | {"builtins"} and \
            ref[1].partition(".")[0] not in _IMPURE:
        return ["r", ref]
    return None


def body(fn: Any, roots: tuple[str, ...], stdlib_ref: Any) -> dict[str, Any] | None:
    """What the worker needs to make a copy of ``fn`` (:func:`make`), or ``None`` when it must stay here.

    Args:
        fn: an oracle object about to be handed to candidate code.
        roots: the pack's directories (only the pack's own functions are copied).
        stdlib_ref: ``obj → [module, qualname] | None`` for the standard library's functions and classes.
    """
    if type(fn) is not types.FunctionType:
        return None
    code = fn.__code__
    if code.co_flags & _NOT_PLAIN_FLAGS or not code.co_filename.startswith(roots) or fn.__dict__:
        return None
    names, ok = _code_names(code)
    if not ok:
        return None
    if fn.__closure__:  # a variable of an enclosing function: rebound there later (tinydb's ``mutable = 10``)
        return None
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    if not all(_immutable(v) for v in (*defaults, *kwdefaults.values())):
        return None
    bound = []
    for name in sorted(names):
        how = _global(name, fn.__globals__, stdlib_ref)
        if how is None:
            return None
        bound.append([name, *how])
    return {"code": marshal.dumps(code), "g": bound, "d": list(defaults), "kd": dict(kwdefaults),
            "n": fn.__name__, "q": fn.__qualname__, "m": fn.__module__ if type(fn.__module__) is str else None}


def make(spec: dict[str, Any], resolve: Any) -> Any:
    """The worker's copy of an oracle function from its :func:`body` (values decoded already); ``resolve``:
    ``[module, qualname] → object`` of this process. The worker calls it in place of a callback only where no
    argument is an oracle object (``worker.refs``): the original reads such an object in the oracle as plain
    Python would (a class's attribute, ``lambda cls: cls.cache``), where the copy would meet the boundary.

    Raises:
        ValueError: a body of an unknown shape."""
    import importlib

    try:
        code = marshal.loads(spec["code"])
        if not isinstance(code, types.CodeType):
            raise ValueError("not a code object")
        namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": spec.get("m") or "__oracle__"}
        for name, how, *rest in spec["g"]:
            if how == "m":
                namespace[name] = importlib.import_module(str(rest[0]))
            elif how == "r":
                namespace[name] = resolve(rest[0])
        if code.co_freevars:
            raise ValueError("a copy has no closure")
        fn = types.FunctionType(code, namespace, str(spec["n"]), tuple(spec["d"]) or None)
        fn.__kwdefaults__ = dict(spec["kd"]) or None
        fn.__qualname__ = str(spec["q"])
        if spec.get("m"):
            fn.__module__ = str(spec["m"])
    except (KeyError, TypeError, ValueError, EOFError, ImportError, AttributeError) as exc:
        raise ValueError(f"an oracle function's copy of an unknown shape ({type(exc).__name__}: {exc})") from None
    return fn


assert sys.version_info >= (3, 11)
