"""The protocol between the oracle process and the candidate worker, as one table both sides import
(docs/design.md §8.1): the operations the oracle asks, the callback verbs the worker asks, the keys of a
frame, the tags of a value and the limits. Each side dispatches through a registry keyed by these names
(the worker's ``server.HANDLERS``, the oracle's ``callbacks.HANDLERS``), whose keys the tests hold equal
to :data:`OPS` and :data:`VERBS`; as in RPyC, whose ``consts`` names every operation of ``protocol.py``.

A frame is one JSON object (:mod:`.codec`: a 4-byte length, then UTF-8 JSON). A *request* has ``op``;
an *answer* has exactly one of ``ok``, ``raise``, ``fail``. Either side may, while it waits for its answer,
receive a request of the other and answer it first (the channel is re-entrant, nesting capped at
:data:`MAX_DEPTH`): the oracle's requests are :data:`OPS`; the worker's is :data:`CALLBACK`, whose ``do``
is one of :data:`VERBS`. The first frame is the oracle's :data:`HELLO`, the first answer the worker's fence
report. Values inside a frame are codec trees; the tags of :data:`TAGS` are the ones each side makes
itself (the rest are plain values).

Part of the boundary package: standard library only, loaded by path on both sides (:mod:`.load`).
"""

from __future__ import annotations

from typing import NamedTuple


class Op(NamedTuple):
    """One operation: its name (a frame's ``op``, or a callback's ``do``), the keys it carries besides that,
    and what its ``ok`` answer holds."""

    name: str
    keys: tuple[str, ...]
    answer: str


# --- what the oracle asks the worker (a request's ``op``) --------------------------------------------------

IMPORT, GETATTR, SETATTR, DELATTR, CALL, NEXT, DUNDER = "import", "getattr", "setattr", "delattr", "call", "next", \
    "dunder"
SIGNATURE, DIR, VARS, EXCEPTION, SHADOW, NEW, MEMBERS = "signature", "dir", "vars", "exception", "shadow", "new", \
    "members"
UNPICKLE, EVAL, DOCTEST, PING = "unpickle", "eval", "doctest", "ping"

OPS: dict[str, Op] = {op.name: op for op in (
    Op(IMPORT, ("mod",), "{pkg, file, doc} of the candidate module imported"),
    Op(GETATTR, ("obj", "name", "inh"), "the attribute; a list, dict or set of a module or object as a live handle; "
       "inh: as the first class that is no shadow defines it (super() from an oracle class)"),
    Op(SETATTR, ("obj", "name", "value"), "None"),
    Op(DELATTR, ("obj", "name"), "None"),
    Op(CALL, ("obj", "args", "kw", "name", "inh"), "the result; with mut, the by-value arguments the call changed in "
       "place; with name, a call of the object's method of that name (inh: as for GETATTR)"),
    Op(NEXT, ("obj", "n"), "a list of up to n items; end (it ended) or then (the exception that ended it)"),
    Op(DUNDER, ("obj", "name", "arg", "exc", "inh"), "what the special method name (__len__, __add__ …) returns; "
       "inh: as for GETATTR"),
    Op(SIGNATURE, ("obj",), "inspect.signature of a candidate callable"),
    Op(DIR, ("obj",), "dir() of the object, sorted"),
    Op(VARS, ("obj",), "a module's namespace: its public names and __name__, __doc__, __all__, __file__"),
    Op(EXCEPTION, ("obj", "args", "kw"), "None, with exc: an exception the candidate's class built"),
    Op(SHADOW, ("name", "qualname", "module", "bases", "over", "data", "oracle", "kw"),
       "{hid} of the shadow of an oracle class deriving from candidate classes (worker/shadows.py)"),
    Op(NEW, ("obj", "twin", "args", "kw"), "{hid, t} of a new instance of a shadow, its twin the oracle object given"),
    Op(MEMBERS, ("obj",), "[[name, kind], …] of what a candidate class's own classes define (m, p, d)"),
    Op(UNPICKLE, ("arg",), "pickle.loads of candidate bytes, in the worker"),
    Op(EVAL, ("src", "globals"), "eval of a candidate text with a copy of the property's namespace"),
    Op(DOCTEST, ("mod", "path", "opts"), "[failed, attempted] of doctest.testmod or testfile, run in the worker"),
    Op(PING, (), "None"),
)}

# --- what the worker asks the oracle (a callback: ``op`` CALLBACK, its verb in ``do``) ---------------------

CALLBACK = "cb"
VERBS: dict[str, Op] = {op.name: op for op in (
    Op("call", ("args", "kw"), "what the oracle's callable returned"),
    Op("next", ("n", "ra"), "up to n items (end, then as for NEXT); ra: read ahead from a copy"),
    Op("iter", (), "iter() of the object"),
    Op("len", (), "len()"), Op("bool", (), "bool()"), Op("hash", (), "hash()"), Op("index", (), "operator.index()"),
    Op("int", (), "int()"), Op("float", (), "float()"), Op("repr", (), "repr(), capped"),
    Op("str", (), "str(), capped"),
    Op("getitem", ("args",), "obj[key]"), Op("setitem", ("args",), "None (a test's own instance only)"),
    Op("delitem", ("args",), "None (a test's own instance only)"), Op("contains", ("args",), "key in obj"),
    Op("eq", ("args",), "the object's own __eq__ (NotImplemented included)"), Op("ne", ("args",), "__ne__"),
    Op("lt", ("args",), "__lt__"), Op("le", ("args",), "__le__"), Op("gt", ("args",), "__gt__"),
    Op("ge", ("args",), "__ge__"),
    Op("enter", (), "__enter__()"), Op("exit", ("args",), "__exit__ told the exception (or None)"),
    Op("signature", (), "inspect.signature of the oracle's callable, or the name of what it raised"),
    Op("vars", (), "a test's own instance's public __dict__, a copy"),
    Op("dict", ("args",), "[get|set|del|has, key, value] or [keys]: a public name of a test's own instance's __dict__"),
    Op("instancecheck", ("args",), "isinstance(arg, the oracle's class)"),
    Op("subclasscheck", ("args",), "issubclass(arg, the oracle's class)"),
    Op("getattr", ("name",), "a public attribute of a test's own instance, or of a module of the pack"),
    Op("invoke", ("name", "args", "kw"), "a method an oracle class that derives from a candidate class defines"),
    Op("twin", ("args",), "the oracle object of an instance of a shadow candidate code made, by reference"),
    Op("setattr", ("name", "args"), "None (a public attribute of a test's own instance)"),
    Op("delattr", ("name",), "None (a public attribute of a test's own instance)"),
    Op("dir", (), "the public names of a test's own instance, else []"),
    Op("pickle", (), "None once plain pickle could pickle the object (its bytes stay in the oracle)"),
    Op("module", ("name",), "a reference to a module of the pack, or None"),
)}

# --- the keys of a frame ---------------------------------------------------------------------------------

# The first frame, oracle → worker, and its answer.
HELLO: dict[str, str] = {
    "python_path": "the candidate's directories, put on sys.path after the standard library",
    "cwd": "the worker's working directory (the candidate tree)",
    "policy": "its fence policy (fence.policy.Policy.to_json)",
    "cpu": "the CPU it pins itself to, or None", "spin_s": "seconds it polls its pipe before it sleeps",
}
REPORT = ("pid", "fences", "probes", "uid", "rlimits", "confined")  # the first answer's ok

KEYS: dict[str, str] = {
    # a request (either side)
    "op": "the operation (OPS, or CALLBACK)", "do": "a callback's verb (VERBS)",
    "obj": "the target: a handle's {id, ref} to the worker, a reference id to the oracle",
    "name": "an attribute or special method name", "args": "positional arguments", "kw": "[[name, value], …]",
    "arg": "a special method's operand", "value": "the value to set", "n": "items asked for",
    "ra": "read the oracle's iterator ahead (asked; answered where it was)", "exc": "what a with-body raised",
    "mod": "a module name", "path": "a file", "opts": "doctest's options", "src": "source text",
    "globals": "a namespace (eval)", "inh": "the implementation a shadow inherits (super() of an oracle class)",
    "qualname": "a class's qualified name", "module": "a class's module",
    "bases": "a shadow's bases (handles)", "over": "[[name, kind], …] an oracle class defines (m, p, c, s)",
    "data": "[[name, value], …] of an oracle class's data", "oracle": "the oracle class (a reference)",
    "twin": "the oracle object of a new shadow instance (a reference)",
    # an answer
    "ok": "the value", "raise": "an exception as data (its class names, args, msg, frames …)",
    "fail": "a limit of the boundary met answering (never the candidate's exception)",
    "end": "the iterator ended after these items", "then": "the exception that ended it after these items",
    "mut": "[[position or name, value], …] of arguments a call changed in place",
    # riders: what travels with any frame of the sender
    "rel": "ids of the other side's objects this side no longer holds",
    "rnd": "the oracle's seedings of its random, in order: [seed, value], [state, state], [restore]",
    "env": "the environment names the test set (a value) or removed (None), relative to the gate's",
    "cwd": "the working directory the test changed to", "argv": "the sys.argv a test put in place (None: its own)",
    "sync": "[[link id, state], …] of linked containers changed", "kept": "offered links the worker kept",
    "unlink": "links the worker let go", "took": "[[reference id, n], …] items taken of what was read ahead",
    "drop": "references whose iterator the oracle moved since the worker read it ahead",
    "out": "what candidate code printed to stdout", "err": "… to stderr",
    "w": "[[class names, message, file, line], …] warnings candidate code raised",
}

# Tags of a value tree that each side makes itself (codec.decode hands them to the side's ``make``).
TAGS: dict[str, str] = {
    "h": "a handle: a candidate object in the worker (a descriptor of DESCRIPTOR's keys)",
    "o": "a reference: an oracle object in the oracle ({id, c: the operations it answers, n: its names})",
    "lk": "a linked container: its id, or [id, state] when first handed over",
    "r": "a record (dataclass, named tuple, attrs) by value", "en": "an enum member", "bv": "a builtin's subclass",
    "x": "an exception class (its method resolution order)", "xv": "an exception as a value",
    "mod": "a module, by name",
}
DESCRIPTOR: dict[str, str] = {
    "k": "kind: cls, fn, obj, it (an iterator) or live (a list, dict or set held live)",
    "t": "the class names, method resolution order", "ref": "[module, qualname] to find it again", "id": "its id",
    "mt": "a class's metaclass names", "rk": "a record class's kind (dc, nt, at)", "f": "its fields",
    "init": "the fields __init__ takes", "nc": "fields left out of its equality", "alias": "an enum's aliases",
    "si": "iter() gives it back", "nl": "it has no __len__", "dg": "a descriptor", "sn": "it has __set_name__",
    "n": "a function's __name__, __qualname__, __module__", "om": "it answers its own __module__",
    "via": "the call that returned it (set by the oracle)",
    "cid": "an instance's class (its handle id)", "cls": "that class's descriptor, the first time it is sent",
    "sp": "the special methods a class's own classes define", "uh": "its instances cannot be hashed",
    "b": "the mutable builtin it derives from", "fm": "the plain functions its classes define (its methods)",
}

# --- limits ----------------------------------------------------------------------------------------------

MAX_DEPTH = 64  # calls nested across the boundary (a callback calling candidate code calling back …)
MAX_BATCH = 1024  # items one NEXT request or ``next`` callback may take from an iterator
MAX_TEXT = 16_384  # characters of a message or repr sent back
MAX_CALLBACKS = 10_000_000  # callbacks into the oracle per property
MAX_LOCAL = 1_000_000  # oracle objects the worker may hold by reference at once
MAX_HANDLES = 1_000_000  # candidate objects the oracle may hold by handle at once
MAX_LINKED_ITEMS = 10_000  # a larger argument container goes by value only (changes come back after the call)
MAX_NESTED_LINKS = 64  # containers inside one held container linked with it (the rest go by value inside it)
MAX_LINKS = 256  # containers the worker keeps in step with the oracle's at once
MAX_FRAMES = 40  # frames of a candidate traceback sent
MAX_RAISED = 64  # the worker's exceptions kept for the oracle to hand back to a candidate __exit__
BATCH_BYTES = 1 << 20  # a rough bound on the size of one batch's items
MAX_OUTPUT = 1 << 20  # characters of the candidate's stdout and of its stderr forwarded with one answer
MAX_WARNINGS = 100  # the candidate's warnings forwarded with one answer
READ_AHEAD_FIRST = 2  # items the worker's first read ahead of an oracle iterator asks for (doubled up to MAX_BATCH)
HANDSHAKE_TIMEOUT_S = 60.0  # seconds the worker may take to send its fence report
PACK_MODULES = 0  # the reference id, in every worker, of the oracle's object that answers the verb "module"
