"""``catalog.yaml``: the reviewed properties, the claimed set and the diff buckets (docs/design.md, "The catalog").

:func:`parse_yaml` (text in, data out) and :func:`catalog_from` (schema-valid data in, :class:`Catalog`
out) are pure; reading the file and checking it against its schema is the edge's
(:func:`verdict_gate.host.files.parse_catalog`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import yaml

from verdict_gate.core.digest import Normalizer
from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.core.globs import match_any

CATALOG_NAME = "catalog.yaml"
LEDGER_NAME = "freeze_ledger.json"
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_FRESH = "20%"  # of each Hypothesis property's max_examples, drawn from the run's fresh seed (§8.3)
CATALOG_MAX_BYTES = 1024 * 1024  # refused before it is parsed: a catalog lists properties, never data


@dataclass(frozen=True)
class Property:
    """One catalog property. ``seed`` is resolved (own seed, else the catalog's); ``None`` for examples.

    ``timeout`` is in seconds. ``oracle`` is relative to the pack root.
    """

    id: str
    oracle: str
    node: str | None
    kind: str
    mutates_fixture: bool
    seed: int | None
    timeout: float
    fold_digits: bool
    isolation: str = "sandbox"
    # Of each Hypothesis property's max_examples, drawn from the run's fresh seed instead of the recorded
    # one (docs/design.md §8.3): a count or "P%", at most half of them; 0: none.
    fresh_examples: int | str = DEFAULT_FRESH
    # Base replay tries of a property with a flaky freeze (docs/design.md §3, "Flaky freezes"); ``None``: from the
    # freeze's recorded rate (core.tries.planned).
    replay_tries: int | None = None
    stale: str = "note"  # a pass with a deterministic freeze: ``note`` (pass, freeze_stale) or ``fail``

    @property
    def draws_fresh(self) -> bool:
        """Whether this property draws fresh examples (a ``kind: property`` with ``fresh_examples`` not 0)."""
        return self.kind == "property" and self.fresh_examples not in (0, "0%")

    @property
    def selector(self) -> str:
        """The pytest node id prefix inside the pack: ``oracle`` or ``oracle::node``."""
        return f"{self.oracle}::{self.node}" if self.node else self.oracle


@dataclass(frozen=True)
class Paths:
    """Glob lists per diff bucket, in repository coordinates."""

    oracle: tuple[str, ...]
    control: tuple[str, ...]
    fixtures: tuple[str, ...]
    src: tuple[str, ...]
    generated: tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    """A validated catalog. ``claimed`` defaults to every id, in catalog order."""

    source: str
    seed: int
    pack_root: str
    paths: Paths
    python_path: tuple[str, ...]
    normalizers: tuple[Normalizer, ...]
    properties: tuple[Property, ...]
    claimed: tuple[str, ...]
    policy: str
    freeze_base: str
    isolation: str = "sandbox"
    modules: tuple[str, ...] = ()
    limits: tuple[tuple[str, int], ...] = ()  # the candidate worker's limits over its defaults, sorted pairs
    generated: tuple[tuple[str, str], ...] = ()  # repository path → literal content, sorted by path (§7)

    def by_id(self) -> dict[str, Property]:
        return {p.id: p for p in self.properties}

    def repo_path(self, prop: Property) -> str:
        """The property's oracle file in repository coordinates (``<pack_root>/<oracle>``)."""
        return f"{self.pack_root}/{prop.oracle}"


def default_paths(pack_root: str) -> dict[str, list[str]]:
    """Bucket globs when the catalog names none (docs/design.md, "Diff buckets")."""
    return {
        "oracle": [f"{pack_root}/properties/**"],
        # The workflows are not here: which of them void a run depends on the run (core/workflows.py).
        "control": [f"{pack_root}/**"],
        "fixtures": ["fixtures/**"],
        "src": ["src/**"],
        "generated": ["tests/generated/**"],
    }


def _safe_relative(value: str, where: str, source: str, error: type[GateError]) -> None:
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or "\\" in value:
        raise error("catalog", f"{source} {where}", f"{value!r} is not a relative path inside the pack or repository",
                    "use a POSIX path relative to the pack root, without '..'")


GENERATED_MAX = 100  # files a catalog may declare under `generated:`


def _generated(data: Any, pack_root: str, fixture_globs: list[str], source: str,
               error: type[GateError]) -> tuple[tuple[str, str], ...]:
    """The catalog's ``generated:`` map (repository path → literal content) as sorted pairs, each path
    checked: relative, POSIX, written one way only (no ``.``/``..`` or empty parts, no backslash), outside
    ``.git``, the pack and the fixtures. A generated file is what a build would write (hatch-vcs's
    ``_version.py``): content the pack declares, never a command, and never data the digest covers."""
    entries = data.get("generated", {})
    if len(entries) > GENERATED_MAX:
        raise error("catalog", f"{source} $.generated", f"declares {len(entries)} files, over {GENERATED_MAX}",
                    "declare only the few files a build writes and git ignores (e.g. a _version.py)")
    out = []
    for path, content in sorted(entries.items()):
        where = f"$.generated[{path!r}]"
        parts = path.split("/")
        if (path.startswith("/") or "\\" in path or not path.isprintable()
                or any(part in ("", ".", "..") for part in parts)):
            raise error("catalog", f"{source} {where}", "is not a relative path inside the repository written one "
                        "way (no leading '/', no '.', '..' or empty parts, no backslash or control character)",
                        "write the path from the repository's top, e.g. src/humanize/_version.py")
        if any(part.lower() == ".git" for part in parts):
            raise error("catalog", f"{source} {where}", "is inside .git: the gate never writes git's own files",
                        "declare only files of the work tree")
        if path == pack_root or path.startswith(pack_root + "/"):
            raise error("catalog", f"{source} {where}", f"is inside the pack's directory {pack_root!r}",
                        "generated files belong to the candidate's tree, never to the oracle pack")
        if match_any(path, fixture_globs):
            raise error("catalog", f"{source} {where}", "is a fixture path (paths.fixtures): fixtures are "
                        "committed data the fixture digest covers", "move it out of the fixture globs")
        out.append((path, content))
    return tuple(out)


# libyaml's safe loader where PyYAML was built with it (fast), else the pure-Python one.
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _refuse_aliases(text: str) -> tuple[int, int] | None:
    """The line and column (1-based) of the first YAML anchor or alias in ``text``, else None.

    Reads parser events only: an alias is never expanded, so a billion-laughs file costs its own size.
    """
    for event in yaml.parse(text, Loader=_SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            mark = event.start_mark
            return (mark.line + 1, mark.column + 1) if mark else (0, 0)
    return None


def parse_yaml(text: str, source: str, *, void: bool = False) -> Any:
    """Parse YAML with libyaml's safe loader (else PyYAML's); a syntax error names the line and column.

    Refuses a text over :data:`CATALOG_MAX_BYTES`, anchors and aliases (``&a`` / ``*a``: a catalog
    never needs them, and they make billion-laughs files possible) and non-finite numbers.
    """
    error = VoidError if void else GateError
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > CATALOG_MAX_BYTES:
        raise error("catalog", source, f"is {size:,} bytes, over the {CATALOG_MAX_BYTES:,}-byte limit",
                    "a catalog lists properties; keep it under 1 MiB (move data into fixtures/)")
    try:
        alias_at = _refuse_aliases(text)
        if alias_at is not None:
            raise error("catalog", f"{source}:{alias_at[0]}:{alias_at[1]}",
                        "uses a YAML anchor or alias (&name / *name), which the gate refuses",
                        "write the value out in full where it is used")
        data = yaml.load(text, Loader=_SafeLoader)  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise error("catalog", where, f"is not valid YAML ({getattr(exc, 'problem', None) or exc})",
                    "fix the YAML syntax at that line") from None
    except (ValueError, RecursionError) as exc:  # e.g. an unquoted impossible date: 2026-02-30
        raise error("catalog", source, f"cannot be read as YAML ({exc})",
                    "quote dates and odd scalars as strings, e.g. '2026-02-28'") from None
    bad = non_finite(data)
    if bad is not None:
        raise error("catalog", f"{source} {bad}", "is not a finite number (.nan, .inf)",
                    "write a finite number, e.g. timeout: 60")
    return data


def non_finite(data: Any, path: str = "$") -> str | None:
    """The JSON path of the first NaN or infinite float in ``data`` (dicts, lists, scalars), else None."""
    stack = [(data, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return where
        if isinstance(value, dict):
            stack += [(v, f"{where}.{k}") for k, v in reversed(list(value.items()))]
        elif isinstance(value, list):
            stack += [(v, f"{where}[{i}]") for i, v in reversed(list(enumerate(value)))]
    return None


def catalog_from(data: Any, source: str, *, void: bool = False) -> Catalog:
    """The :class:`Catalog` of a parsed ``catalog.yaml`` that its schema accepted.

    Args:
        data: the document (:func:`parse_yaml`), valid against ``schemas/catalog.schema.json``.
        source: where it was read (a path or ``git:REV:PATH``), used in messages.
        void: errors are :class:`VoidError` (exit 3, the pack is untrustworthy) instead of
            :class:`GateError` (exit 2).
    Raises:
        GateError | VoidError: duplicate ids, claimed ids missing from the properties, unsafe
            paths or a normaliser that is not a regular expression.
    """
    error = VoidError if void else GateError
    seed = data.get("seed", 0)
    _safe_relative(data.get("pack_root", "oracle"), "$.pack_root", source, error)
    # One spelling for one directory: `./oracle`, `oracle/` and `oracle` build the same buckets.
    pack_root = str(PurePosixPath(data.get("pack_root", "oracle").strip("/")))
    if pack_root in (".", ""):
        raise error("catalog", f"{source} $.pack_root", "is the repository root; the pack needs a directory",
                    "set pack_root to the pack's directory, e.g. oracle")
    props: list[Property] = []
    seen: set[str] = set()
    for i, raw in enumerate(data["properties"]):
        if raw["id"] in seen:
            raise error("catalog", f"{source} $.properties[{i}].id", f"duplicate property id {raw['id']!r}",
                        "give every property a unique id")
        seen.add(raw["id"])
        _safe_relative(raw["oracle"], f"$.properties[{i}].oracle", source, error)
        kind = raw.get("kind", "property")
        props.append(Property(
            id=raw["id"],
            oracle=str(PurePosixPath(raw["oracle"])),
            node=raw.get("node"),
            kind=kind,
            mutates_fixture=raw.get("mutates_fixture", False),
            seed=raw.get("seed", seed) if kind == "property" else None,
            timeout=float(raw.get("timeout", DEFAULT_TIMEOUT_S)),
            # A plain test's failure has no counterexample: the digits of its message (`assert 4 == 5`)
            # are what tells one wrong answer from another, so an example keeps them by default.
            fold_digits=raw.get("fold_digits", kind == "property"),
            isolation=raw.get("isolation", data.get("isolation", "sandbox")),
            fresh_examples=(raw.get("fresh_examples", data.get("fresh_examples", DEFAULT_FRESH))
                            if kind == "property" else 0),
            replay_tries=raw.get("replay_tries", data.get("replay_tries")),
            stale=raw.get("stale", data.get("stale", "note")),
        ))
    claimed = tuple(data.get("claimed", [p.id for p in props]))
    unknown = [c for c in claimed if c not in seen]
    if unknown:
        raise error("catalog", f"{source} $.claimed", f"claims ids that no property defines: {unknown}",
                    "add those properties to $.properties or remove them from $.claimed")
    for j, entry in enumerate(data.get("python_path", [])):
        _safe_relative(entry, f"$.python_path[{j}]", source, error)
    for j, rule in enumerate(data.get("normalizers", [])):
        try:
            re.compile(rule["pattern"].encode())
        except re.error as exc:
            raise error("catalog", f"{source} $.normalizers[{j}].pattern", f"is not a regular expression ({exc})",
                        "fix the pattern (Python `re` syntax)") from None
    paths = default_paths(pack_root) | data.get("paths", {})
    for bucket, globs in paths.items():
        for j, glob in enumerate(globs):
            _safe_relative(glob, f"$.paths.{bucket}[{j}]", source, error)
    generated = _generated(data, pack_root, list(paths["fixtures"]), source, error)
    return Catalog(
        source=source,
        seed=seed,
        pack_root=pack_root,
        paths=Paths(**{k: tuple(v) for k, v in paths.items()}),
        python_path=tuple(data.get("python_path", ["src", "."])),
        normalizers=tuple(Normalizer(**n) for n in data.get("normalizers", [])),
        properties=tuple(props),
        claimed=claimed,
        policy=data.get("policy", "lenient"),
        freeze_base=data.get("freeze_base", "reproduced"),
        isolation=data.get("isolation", "sandbox"),
        modules=tuple(data.get("modules", ())),
        limits=tuple(sorted(data.get("limits", {}).items())),
        generated=generated,
    )
