"""Which oracle iterators the worker may read ahead, and how (docs/design.md §8.1 "Batching").

Candidate code that loops over an oracle iterator (``cache.update((i, i) for i in range(2000))``) takes
one item per round trip unless the items may be read before it asks for them. That is exact only for an
iterator whose items nothing can change between two of them, and whose reading has no effect of its own:

- a ``range``, ``str``, ``bytes`` or ``tuple`` iterator (a tuple of ``None``, ``bool``, ``int``, ``float``,
  ``complex``, ``str`` or ``bytes`` only), or
- a generator expression over one that reads no name of its own (no global, attribute or call: its code
  has no ``co_names``, no free or cell variables) and has no ``if`` or nested ``for`` (its bytecode is
  made only of :data:`_PLAIN_OPS`), so it yields exactly one item per item of its source.

Items are read from a :func:`shadow` copy, never from the oracle's iterator, which moves only by the
items candidate code took. An expression that raises is read to the exception on the copy, and the oracle's
own raises it too when candidate code has taken that far.
"""

from __future__ import annotations

import copy
import dis
import operator
import types
from typing import Any

_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_PURE_SOURCES = frozenset(type(it) for it in (
    iter(range(0)), iter(range(1 << 100)), iter(""), iter("\u20ac"), iter(b""), iter(())))
_TUPLE_ITERATOR = type(iter(()))
# Loading and storing its own locals, constants, building values of them and the loop itself; versions
# 3.11 to 3.13. Anything else (a jump of an `if`, GET_ITER of a nested `for`, a call) is refused.
_PLAIN_OPS = frozenset({
    "RESUME", "RETURN_GENERATOR", "POP_TOP", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST",
    "LOAD_FAST_AND_CLEAR", "STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST", "LOAD_CONST",
    "RETURN_CONST", "RETURN_VALUE", "FOR_ITER", "END_FOR", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
    "YIELD_VALUE", "BUILD_TUPLE", "BUILD_LIST", "BINARY_OP", "UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_NOT",
    "UNPACK_SEQUENCE", "SWAP", "COPY", "CALL_INTRINSIC_1", "RERAISE", "CLEANUP_THROW", "END_SEND", "NOP",
    "CACHE", "EXTENDED_ARG", "PRECALL", "LIST_APPEND", "LIST_TO_TUPLE", "COMPARE_OP", "IS_OP",
})
_PLAIN_CODES: dict[types.CodeType, bool] = {}


def _pure_source(it: Any) -> bool:
    if type(it) not in _PURE_SOURCES:
        return False
    if type(it) is _TUPLE_ITERATOR:
        rest = it.__reduce__()[1][0]
        return all(type(x) in _SCALARS for x in rest)
    return True


def _plain_genexpr(code: types.CodeType) -> bool:
    known = _PLAIN_CODES.get(code)
    if known is None:
        known = (code.co_name == "<genexpr>" and not code.co_names and not code.co_freevars
                 and not code.co_cellvars and code.co_argcount == 1
                 and all(i.opname in _PLAIN_OPS for i in dis.get_instructions(code)))
        if len(_PLAIN_CODES) < 10_000:
            _PLAIN_CODES[code] = known
    return known


def _source(gen: types.GeneratorType) -> Any:
    """The iterator a suspended generator expression reads (its argument ``.0``), or ``None``."""
    frame = gen.gi_frame
    if frame is None or gen.gi_running or gen.gi_yieldfrom is not None:
        return None
    return frame.f_locals.get(".0")


def shadow(it: Any) -> Any:
    """A copy of ``it`` that yields what ``it`` would yield from here, read without moving ``it``; ``None``
    when ``it`` is not one of the iterators this module reads ahead."""
    if type(it) is types.GeneratorType:
        if not _plain_genexpr(it.gi_code):
            return None
        source = _source(it)
        if source is None or not _pure_source(source):
            return None
        body = types.FunctionType(it.gi_code, {"__builtins__": {}})
        return body(copy.copy(source))
    if _pure_source(it):
        return copy.copy(it)
    return None


def position(it: Any) -> Any:
    """Where ``it`` is: a value that changes when anything takes an item of it (its source's items left,
    or ``None`` once a generator has ended)."""
    if type(it) is types.GeneratorType:
        source = _source(it)
        return None if source is None else operator.length_hint(source)
    return operator.length_hint(it)
