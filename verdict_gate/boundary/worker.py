"""The candidate worker: the only process that imports and executes candidate code (docs/design.md §8.1).

Part of the boundary package, started as ``python -P -s -B load.py RFD WFD`` (:mod:`.load`; inside the
sandbox the launcher builds, :mod:`.sandbox`), so neither the worker's directory nor the candidate's is on
``sys.path`` until the oracle's ``hello`` puts the candidate's ``python_path`` there, after the
standard library. It answers one request frame with one response frame (:mod:`codec`), on the two
pipe descriptors it is given; its stdout and stderr go nowhere the oracle reads.

Before any candidate code runs it applies the in-process fences of the policy in its ``hello``
(:func:`confine`: Landlock, seccomp), then tries each forbidden act the policy names (:func:`prove`:
connect to the gate's listeners, read its canaries, write outside its temp dir, signal and trace
the oracle process) and reports what held in its first answer: candidate code, which has not run
yet, cannot forge that answer. Everything after that is candidate-controlled, so the oracle trusts nothing the worker
sends beyond plain values (the codec's by-value types) and exceptions it re-raises as data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import importlib
import importlib.util
import operator
import os
import sys
import traceback
import types
from typing import Any

from . import codec, landlock, probe, seccomp, sources

MAX_HANDLES = 1_000_000
MAX_TEXT = 16_384  # characters of a message or repr sent back
MAX_FRAMES = 40

_BINARY: dict[str, Any] = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul, "__truediv__": operator.truediv,
    "__floordiv__": operator.floordiv, "__mod__": operator.mod, "__pow__": operator.pow,
    "__matmul__": operator.matmul, "__and__": operator.and_, "__or__": operator.or_, "__xor__": operator.xor,
    "__lshift__": operator.lshift, "__rshift__": operator.rshift,
    "__radd__": lambda a, b: b + a, "__rsub__": lambda a, b: b - a, "__rmul__": lambda a, b: b * a,
    "__rtruediv__": lambda a, b: b / a, "__rfloordiv__": lambda a, b: b // a, "__rmod__": lambda a, b: b % a,
    "__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le,
    "__gt__": operator.gt, "__ge__": operator.ge,
    "__getitem__": operator.getitem, "__delitem__": operator.delitem, "__contains__": operator.contains,
}
_UNARY: dict[str, Any] = {
    "__len__": len, "__iter__": iter, "__next__": next, "__repr__": repr, "__str__": str, "__bool__": bool,
    "__int__": int, "__float__": float, "__index__": operator.index, "__neg__": operator.neg,
    "__pos__": operator.pos, "__abs__": abs, "__invert__": operator.invert, "__hash__": hash,
    "__enter__": lambda o: o.__enter__(), "__reversed__": reversed,
}


class Worker:
    """The request loop and the handle table (objects the oracle holds by id)."""

    def __init__(self, reader: Any, wfd: int) -> None:
        self.reader, self.wfd = reader, wfd  # requests come through reader (a codec.Reader), answers go to wfd
        self.handles: dict[int, Any] = {}
        self.next_id = 1
        self.called: tuple[list[Any], dict[str, Any]] | None = None

    # -- encoding (worker → oracle) ---------------------------------------------------------------

    def _handle(self, obj: Any) -> int:
        if len(self.handles) >= MAX_HANDLES:
            raise codec.Unencodable(f"more than {MAX_HANDLES} live handles")
        hid = self.next_id
        self.next_id += 1
        self.handles[hid] = obj
        return hid

    def _ref(self, obj: Any) -> list[str] | None:
        """``[module, qualname]`` when importing ``module`` and walking ``qualname`` gives ``obj`` back."""
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        if type(module) is not str or type(qualname) is not str or "<" in qualname:
            return None
        found = sys.modules.get(module)
        try:
            for part in qualname.split("."):
                found = getattr(found, part)
        except Exception:
            return None
        return [module, qualname] if found is obj else None

    def _record(self, value: Any) -> Any:
        cls = type(value)
        if isinstance(value, type):
            if issubclass(value, BaseException):
                return {"x": codec.mro_names(value)}
            return None
        if isinstance(value, enum.Enum):
            return {"en": {"c": self._class(cls), "n": value.name,
                           "v": codec.encode(value.value, self._fallback, records=self._record)}}
        if isinstance(value, types.ModuleType) and isinstance(value.__name__, str):
            return {"mod": value.__name__}
        kind = self._record_kind(cls)
        if kind is None:
            return None
        fields = self._field_names(cls, kind)
        pairs = [(name, getattr(value, name)) for name in fields]
        return {"r": {"c": self._class(cls), "k": kind,
                      "f": codec.encode_fields(pairs, self._fallback, self._record), "h": self._handle(value)}}

    @staticmethod
    def _record_kind(cls: type) -> str | None:
        if dataclasses.is_dataclass(cls):
            return "dc"
        if issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple):
            return "nt"
        if hasattr(cls, "__attrs_attrs__"):
            return "at"
        return None

    @staticmethod
    def _field_names(cls: type, kind: str) -> list[str]:
        if kind == "dc":
            return [f.name for f in dataclasses.fields(cls)]
        if kind == "nt":
            return [str(n) for n in cls._fields]  # type: ignore[attr-defined]
        return [str(a.name) for a in cls.__attrs_attrs__]  # type: ignore[attr-defined]

    def _class(self, cls: type) -> dict[str, Any]:
        """A class descriptor: its names, its record shape (if any) and how to reach it again."""
        desc: dict[str, Any] = {"t": codec.mro_names(cls), "ref": self._ref(cls), "id": self._handle(cls)}
        kind = self._record_kind(cls) if isinstance(cls, type) else None
        if kind is not None:
            desc["rk"] = kind
            desc["f"] = self._field_names(cls, kind)
            desc["init"], desc["cmp"] = self._field_flags(cls, kind, desc["f"])
        return desc

    @staticmethod
    def _field_flags(cls: type, kind: str, names: list[str]) -> tuple[list[str], list[bool]]:
        """The fields ``__init__`` takes, in order, and whether each takes part in ``==``."""
        if kind == "dc":
            fields = dataclasses.fields(cls)
            return [f.name for f in fields if f.init], [bool(f.compare) for f in fields]
        if kind == "at":
            attrs = cls.__attrs_attrs__  # type: ignore[attr-defined]
            return [str(a.name) for a in attrs if a.init], [bool(getattr(a, "eq", True)) for a in attrs]
        return list(names), [True] * len(names)

    def _fallback(self, obj: Any) -> Any:
        if isinstance(obj, type):
            return {"h": {"k": "cls", **self._class(obj)}}
        kind = "fn" if callable(obj) else "obj"
        return {"h": {"k": kind, "t": codec.mro_names(type(obj)), "ref": self._ref(obj) if kind == "fn" else None,
                      "id": self._handle(obj)}}

    def encode(self, value: Any) -> Any:
        return codec.encode(value, self._fallback, records=self._record)

    # -- decoding (oracle → worker) ---------------------------------------------------------------

    def _resolve_ref(self, ref: Any) -> Any:
        module, qualname = ref
        obj = importlib.import_module(module)
        for part in [p for p in str(qualname).split(".") if p]:
            obj = getattr(obj, part)
        return obj

    def _make(self, tag: str, p: Any) -> Any:
        if tag == "h":
            if p.get("id") in self.handles:
                return self.handles[p["id"]]
            if p.get("ref"):
                return self._resolve_ref(p["ref"])
            raise codec.ProtocolError("a handle this worker does not hold (it was restarted?)")
        if tag == "r":
            if p.get("h") in self.handles:
                return self.handles[p["h"]]
            cls = self._make("h", p["c"])
            fields = {name: self.decode(value) for name, value in p["f"]}
            if p.get("k") == "nt":
                return cls(*fields.values())
            return cls(**fields)
        if tag == "en":
            return self._make("h", p["c"])[p["n"]]
        if tag == "x":
            return self._resolve_ref(p[0])
        if tag == "mod":
            return importlib.import_module(p)
        raise codec.ProtocolError(f"unknown tag {tag!r}")

    def decode(self, tree: Any) -> Any:
        return codec.decode(tree, self._make)

    # -- requests ---------------------------------------------------------------------------------

    def _target(self, req: dict[str, Any]) -> Any:
        return self._make("h", req["obj"])

    def handle(self, req: dict[str, Any]) -> Any:
        for hid in req.get("rel") or ():
            self.handles.pop(hid, None)
        op = req.get("op")
        if op == "import":
            module = importlib.import_module(req["mod"])
            return {"pkg": hasattr(module, "__path__"), "file": str(getattr(module, "__file__", "") or "")}
        if op == "getattr":
            return getattr(self._target(req), req["name"])
        if op == "setattr":
            setattr(self._target(req), req["name"], self.decode(req["value"]))
            return None
        if op == "call":
            args = self.decode(req.get("args") or [])
            kwargs = {k: self.decode(v) for k, v in req.get("kw") or []}
            self.called = (args, kwargs)
            return self._target(req)(*args, **kwargs)
        if op == "dunder":
            name = req["name"]
            obj = self._target(req)
            if name in _UNARY:
                return _UNARY[name](obj)
            if name in _BINARY:
                return _BINARY[name](obj, self.decode(req["arg"]))
            if name == "__setitem__":
                key, value = self.decode(req["arg"])
                obj[key] = value
                return None
            if name == "__exit__":
                return obj.__exit__(None, None, None)
            raise codec.ProtocolError(f"unsupported operation {name!r}")
        if op == "dir":
            return sorted(str(n) for n in dir(self._target(req)))
        if op == "ping":
            return None
        raise codec.ProtocolError(f"unknown op {op!r}")

    def _mutables(self, args: list[Any], kwargs: dict[str, Any]) -> list[list[Any]]:
        """``[[position or name, value], …]`` of the mutable by-value arguments of the last call: the
        oracle passed copies, so their state after the call is sent back and applied in place."""
        out = []
        for key, value in [*enumerate(args), *kwargs.items()]:
            if type(value) in (list, dict, set, bytearray):
                out.append([key, self.encode(value)])
        return out

    def exception(self, exc: BaseException) -> dict[str, Any]:
        frames = []
        for frame, line in traceback.walk_tb(exc.__traceback__):
            frames.append([frame.f_code.co_filename, line, frame.f_code.co_name])
        try:
            args = self.encode(tuple(exc.args))
        except Exception:
            args = None
        try:
            message = str(exc)[:MAX_TEXT]
        except Exception as inner:
            message = f"<str() of the exception raised {type(inner).__name__}>"
        return {"t": codec.mro_names(type(exc)), "args": args, "msg": message, "tb": frames[-MAX_FRAMES:]}

    def serve(self) -> None:
        while True:
            try:
                req = self.reader.frame(cap=codec.MAX_MESSAGE)
            except codec.ProtocolError:
                return  # the oracle is gone, or spoke nonsense: nothing to answer
            self.called = None
            try:
                value = self.handle(req)
                answer: dict[str, Any] = {"ok": self.encode(value)}
                if self.called is not None:  # arguments changed in place travel back (lists, dicts, sets …)
                    changed = self._mutables(*self.called)
                    if changed:
                        answer["mut"] = changed
            except codec.ProtocolError as exc:
                answer = {"fail": str(exc)}
            except codec.Unencodable as exc:
                answer = {"fail": f"the result cannot cross the isolation boundary: {exc}"}
            except BaseException as exc:  # the candidate's exception, SystemExit included
                answer = {"raise": self.exception(exc)}
            try:
                codec.write_frame(self.wfd, answer)
            except (TypeError, ValueError) as exc:
                codec.write_frame(self.wfd, {"fail": f"the result cannot be encoded ({exc})"})


def confine(policy: dict[str, Any]) -> dict[str, Any]:
    """Apply the in-process fences of ``policy`` (:class:`sandbox.Policy`'s JSON) to this process, for
    good, before any candidate code: a Landlock domain, then the seccomp filter (docs/design.md §8.2).

    Returns:
        ``{"landlock": what Landlock enforced or None, "seccomp": bool, "errors": [why a fence is missing]}``;
        a ``required`` fence that could not be applied is an error (the oracle then refuses the worker),
        a ``best-effort`` one (inside bubblewrap, which fences by namespaces) only a note.
    """
    out: dict[str, Any] = {"landlock": None, "seccomp": False, "errors": [], "notes": []}
    if policy.get("landlock"):
        try:
            out["landlock"] = landlock.restrict([str(p) for p in policy.get("read", [])],
                                                [str(p) for p in policy.get("write", [])])
        except landlock.Unavailable as exc:
            out["errors" if policy["landlock"] == "required" else "notes"].append(str(exc))
    if policy.get("seccomp"):
        try:
            deny = (*seccomp.DENIED, *seccomp.METADATA) if policy.get("metadata") else seccomp.DENIED
            seccomp.install(seccomp.Policy(deny=deny))
            out["seccomp"] = True
        except seccomp.Unavailable as exc:
            out["errors" if policy["seccomp"] == "required" else "notes"].append(str(exc))
    return out


def prove(policy: dict[str, Any]) -> dict[str, Any]:
    """Try each forbidden act the policy names (:mod:`.probe`) and check the rlimits: which fences hold,
    checked before any candidate code runs, so no candidate code can forge the answer.

    Returns:
        ``{"fences": {fence: held}, "probes": {label: {"held", "detail"}}, "uid": int, "rlimits": {…}}``;
        a fence holds when it was tried and every probe that proves it (the policy's ``fences``) held.
    """
    import resource

    results: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    for label, (name, args) in (policy.get("probes") or {}).items():
        kinds[label] = name
        run = probe.PROBES.get(name)
        try:  # a probe never raises; one that does proves nothing
            results[label] = run(*args) if run is not None else {"held": False, "detail": f"no probe {name!r}"}
        except Exception as exc:
            results[label] = {"held": False, "detail": f"probe error: {type(exc).__name__}: {exc}"}
    rlimits = {}
    for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NPROC"):
        soft, _hard = resource.getrlimit(getattr(resource, name))
        rlimits[name] = None if soft == resource.RLIM_INFINITY else soft
    unset = [n for n in ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_CPU") if rlimits[n] is None]
    results["limits"] = {"held": not unset, "detail": f"unset: {', '.join(unset)}" if unset else
                         ", ".join(f"{k}={v}" for k, v in rlimits.items())}
    kinds["limits"] = "limits"
    fences = {}
    for fence, names in (policy.get("fences") or {}).items():
        mine = [label for label, kind in kinds.items() if kind in names]
        fences[fence] = bool(mine) and all(results[label]["held"] for label in mine)
    return {"fences": fences, "probes": results, "uid": os.getuid(), "rlimits": rlimits}


def _spin_budget() -> float | None:
    """Seconds of polling this worker may spend: a quarter of its CPU time limit, so that polling
    never brings a worker near ``RLIMIT_CPU`` that its own work would not have."""
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_CPU)
    return None if soft == resource.RLIM_INFINITY else soft / 4


def main(argv: list[str]) -> int:
    rfd, wfd = int(argv[1]), int(argv[2])
    reader = codec.Reader(rfd)
    try:
        hello = reader.frame()
    except codec.ProtocolError:
        return 2
    if hello.get("cpu") is not None:  # a hint for speed (docs/design.md §11), set before candidate code runs
        with contextlib.suppress(AttributeError, OSError, ValueError, TypeError):
            os.sched_setaffinity(0, {int(hello["cpu"])})
    spin = hello.get("spin_s")
    reader.poll(float(spin) if type(spin) in (int, float) else 0.0, _spin_budget())
    worker = Worker(reader, wfd)
    policy = hello.get("policy") or {}
    confined = confine(policy)
    report = {**prove(policy), "confined": confined}
    python_path = [str(p) for p in hello.get("python_path", [])]
    sources.source_only(python_path)  # never compiled code in place of a reviewed source
    at = sources.after_stdlib(sys.path)
    sys.path[at:at] = python_path
    if hello.get("cwd"):
        os.chdir(hello["cwd"])
    codec.write_frame(wfd, {"ok": {"pid": os.getpid(), **report}})
    worker.serve()
    return 0

