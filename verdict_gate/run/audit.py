"""``verdict-gate audit``: re-check an evidence directory from its files alone (docs/design.md §9.1). An edge.

In the order in-toto's verifier checks (each step's findings are kept; a step that cannot run for want of a
readable file is skipped, its cause already found):

1. the inventory of files: each one a run of its kind writes, nothing else, nothing missing;
2. every file against its schema (an unknown field is an error, as SLSA's verifiers treat unknown
   parameters), in the exact form the gate writes, every failure signature recomputed from its parts;
3. the files agree with each other: revisions, run id, fixture digests; the catalog and ledger are the
   pack's (its manifest's sha256, and for a directory or ``git:`` pack the pack's sha256 is the manifest's);
4. the inventory of properties (:func:`verdict_gate.core.audit.inventory`);
5. the pure decision (:func:`verdict_gate.core.score.score`) re-run on the recorded inputs, and every derived
   file rendered again: ``verdicts.json`` (each verdict, reason and the outcome, and every file's sha256),
   ``results.sarif``, ``summary.md`` and ``attestation.intoto.json`` compared with the recorded ones.

It never runs a property, never reads git and never needs the network: what the run measured (the runs, the
replays, the diff, the ancestry, the fixture digest) is taken as recorded, and a signature (docs/evidence.md's
``attest`` job, ``gh attestation verify``) proves who recorded it. Both checks are needed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from verdict_gate.core import diffsplit
from verdict_gate.core.audit import (
    Finding,
    ancestry,
    differences,
    failure_fields,
    inventory,
    seeds,
    set_order,
    text_difference,
)
from verdict_gate.core.catalog import CATALOG_NAME, LEDGER_NAME, Catalog
from verdict_gate.core.digest import MANIFEST_NAME
from verdict_gate.core.errors import GateError
from verdict_gate.core.evidence import Evidence
from verdict_gate.core.ledger import EMPTY_LEDGER, Ledger, parse_date, parse_json
from verdict_gate.core.records import (
    BaseSigRecord,
    DiffRecord,
    FixtureRecord,
    RecordError,
    RunsRecord,
    base_sig_record_from_json,
    runs_record_from_json,
)
from verdict_gate.core.score import score
from verdict_gate.core.shard import agreement, inconsistencies, merge_why
from verdict_gate.core.verdict import never_reached
from verdict_gate.core.workflows import Running
from verdict_gate.host import schemas
from verdict_gate.host.files import parse_catalog, parse_ledger
from verdict_gate.host.fixtures import current_ledger
from verdict_gate.report.attestation import statement
from verdict_gate.report.sarif import sarif
from verdict_gate.report.summary import summary_markdown
from verdict_gate.report.verdicts import (
    ATTESTATION,
    FILES,
    INPUT_FILES,
    ORACLE_FILES,
    SCHEMA_OF,
    dumps,
    shard_doc,
    verdicts_doc,
)

# The files a void run may have written before it stopped; a decided run writes every one of FILES.
VOID_REQUIRED = ("verdicts.json", "results.sarif", "summary.md", ATTESTATION)
VOID_OPTIONAL = (*ORACLE_FILES, "fixture.digest", "oracle_edited.json")
VERBATIM = (LEDGER_NAME, MANIFEST_NAME)  # JSON copied byte for byte from the pack, not in the gate's own form


@dataclass
class Loaded:
    """An evidence directory read back: its kind (``run``, ``void`` or ``shard``), each file's text and parsed
    document, the typed records, and what was wrong on the way."""

    kind: str
    texts: dict[str, str] = field(default_factory=dict)
    docs: dict[str, Any] = field(default_factory=dict)
    catalog: Catalog | None = None
    ledger: Ledger | None = None
    runs: RunsRecord | None = None
    base_sig: BaseSigRecord | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def head(self) -> dict[str, Any]:
        """The document that says what the run was: ``verdicts.json``, or a shard's ``shard.json``."""
        return self.docs.get("shard.json" if self.kind == "shard" else "verdicts.json") or {}


@dataclass
class Audit:
    """What ``verdict-gate audit`` found: ``findings`` (empty: every file agrees with the others and with the
    rules), what was checked (``checked``: files, digests, properties, tries), and the evidence's own
    ``kind``, ``outcome``, ``head_revision`` and ``gate_version`` as recorded."""

    kind: str
    findings: list[Finding]
    checked: dict[str, int]
    outcome: str | None
    head_revision: str
    gate_version: str

    @property
    def ok(self) -> bool:
        return not self.findings


def kind_of(names: Mapping[str, Any]) -> str:
    """``shard`` (a ``shard.json``), ``void`` or ``run`` (by ``verdicts.json``'s outcome, read leniently here),
    or ``""`` when no file of ``names`` is one the gate writes."""
    if "shard.json" in names:
        return "shard"
    if not set(names) & {*FILES, "shard.json"}:
        return ""
    raw = names.get("verdicts.json")
    try:
        outcome = json.loads(raw).get("outcome") if raw is not None else None
    except (ValueError, AttributeError, RecursionError):  # unreadable: the file's own check says why
        outcome = None
    return "void" if outcome == "void" else "run"


def _text(name: str, data: bytes, out: Loaded) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.findings.append(Finding(name, f"byte {exc.start}", "is not UTF-8: the gate writes UTF-8 only"))
        return None


def _error(name: str, exc: GateError) -> Finding:
    where = exc.where if exc.where != name and not exc.where.startswith(name + ":") else \
        exc.where[len(name) + 1:]
    return Finding(name, where, exc.problem)


def _parse_json(name: str, text: str, out: Loaded) -> None:
    doc, found = parsed(name, text)
    out.findings += found
    if doc is not None:
        out.docs[name] = doc


@lru_cache(maxsize=64)
def parsed(name: str, text: str) -> tuple[Any, tuple[Finding, ...]]:
    """One JSON evidence file read: its document (``None`` when it cannot be read or fails its schema) and what
    is wrong with it. Kept for the same text: the tampering tests audit one directory thousands of times, each
    time with one file changed. The document is shared: nothing may change it."""
    try:
        doc = parse_json(text, name, name)
        schemas.check(SCHEMA_OF[name], doc, name)
    except GateError as exc:
        return None, (_error(name, exc),)
    if name not in VERBATIM and dumps(doc) != text:
        return doc, (Finding(name, "", "is not in the exact form the gate writes (sorted keys, two-space indent, "
                             "ASCII, one trailing newline): a byte was changed, added or removed"),)
    return doc, ()


def expected(kind: str, docs: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The files a directory of ``kind`` must hold, and those it may hold besides."""
    if kind == "run":
        return set(FILES), set()
    if kind == "void":
        return set(VOID_REQUIRED), set(VOID_OPTIONAL)
    shard = docs.get("shard.json") or {}
    if shard.get("outcome") == "void":
        return {"shard.json"}, set(VOID_OPTIONAL)
    return {"shard.json", *INPUT_FILES}, set()


def load(files: Mapping[str, bytes], odd: Mapping[str, str] | None = None) -> Loaded:
    """Parse every file of an evidence directory (``name → bytes``) and build the typed records.

    ``odd``: entries that are not regular files (name → what they are): each is a finding.

    Raises:
        GateError: no file of ``files`` is one the gate writes (exit 2: not an evidence directory).
    """
    kind = kind_of(files)
    if not kind:
        raise GateError("evidence directory", "(its files)", "holds none of the files verdict-gate writes "
                        f"({', '.join(FILES)}, or shard.json)", "pass the directory `verdict-gate run --out DIR` "
                        "wrote, e.g. a downloaded evidence artifact")
    out = Loaded(kind)
    out.findings += [Finding(name, "", f"is {what}, not a file the gate writes") for name, what in (odd or {}).items()]
    for name in sorted(files):
        text = _text(name, files[name], out)
        if text is None:
            continue
        out.texts[name] = text
        if name in SCHEMA_OF:
            _parse_json(name, text, out)
    required, optional = expected(kind, out.docs)
    listed = set((out.docs.get("verdicts.json") or out.docs.get("shard.json") or {}).get("evidence") or {})
    listed |= {s["name"] for s in (out.docs.get(ATTESTATION) or {}).get("subject", []) if s["name"] in FILES}
    for name in sorted((required | listed) - set(files)):
        out.findings.append(Finding(name, "", f"is missing: a {kind} of verdict-gate writes it" if name in required
                                    else "is missing: the evidence lists its sha256"))
    for name in sorted(set(files) - required - optional):
        out.findings.append(Finding(name, "", f"is not a file a {kind} of verdict-gate writes"))
    _records(out)
    return out


def _records(out: Loaded) -> None:
    """The catalog, the ledger, runs.json and base.sig.json as typed records (each failure signature
    recomputed from its parts), where their files were read."""
    if CATALOG_NAME in out.texts:
        try:
            out.catalog = parse_catalog(out.texts[CATALOG_NAME], CATALOG_NAME)
        except GateError as exc:
            out.findings.append(_error(CATALOG_NAME, exc))
    if LEDGER_NAME in out.docs and out.catalog is not None:
        try:
            out.ledger = parse_ledger(out.texts[LEDGER_NAME], LEDGER_NAME,
                                      known_ids=[p.id for p in out.catalog.properties])
        except GateError as exc:
            out.findings.append(_error(LEDGER_NAME, exc))
    try:
        if "runs.json" in out.docs:
            out.runs = runs_record_from_json(out.docs["runs.json"], "runs.json")
        if "base.sig.json" in out.docs:
            out.base_sig = base_sig_record_from_json(out.docs["base.sig.json"], "base.sig.json")
    except RecordError as exc:
        name, _, problem = str(exc).partition(": ")
        out.findings.append(Finding(name.split(" ", 1)[0], name.partition(" ")[2], problem))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _pack_files(out: Loaded) -> list[Finding]:
    """The catalog and ledger copies are the pack's: its manifest names their sha256 (a pack without a ledger
    has the empty one)."""
    found: list[Finding] = []
    manifest = out.docs.get(MANIFEST_NAME)
    if manifest is None:
        return found
    for name in (CATALOG_NAME, LEDGER_NAME):
        if name not in out.texts:
            continue
        if name not in manifest:
            if not (name == LEDGER_NAME and out.texts[name] == EMPTY_LEDGER):
                found.append(Finding(MANIFEST_NAME, f"$[{json.dumps(name)}]", f"is missing, but the evidence holds "
                                     f"a {name} of the pack"))
        elif manifest[name] != sha256(out.texts[name]):
            found.append(Finding(name, "", f"has sha256 {sha256(out.texts[name])}, but the pack's manifest says "
                                 f"{manifest[name]}: not the file the pack held"))
    return found


def input_digests(out: Loaded) -> dict[str, str]:
    """name → sha256 of each file the decision read that the directory holds (as recorded, byte for byte)."""
    return {name: sha256(out.texts[name]) for name in INPUT_FILES if name in out.texts}


def planned(out: Loaded) -> tuple[list[str], list[str]]:
    """The properties the run had to run (catalog order, less those whose oracle the diff edits; a shard's
    share), and those of them with a freeze (the base replay's plan)."""
    assert out.catalog is not None
    moved = set((out.docs.get("oracle_edited.json") or {}).get("oracle_moved") or [])
    plan = [p.id for p in out.catalog.properties if p.id not in moved]
    if out.kind == "shard":
        mine = set(out.head.get("properties") or [])
        plan = [pid for pid in plan if pid in mine]
    frozen = set(out.ledger.prop_ids()) if out.ledger is not None else set()
    return plan, [pid for pid in plan if pid in frozen]


def _diff_split(out: Loaded) -> list[Finding]:
    """``oracle_edited.json`` sorted again: every path it lists bucketed by the catalog and what defined the run,
    and the moved ids, control edits and void flag found again."""
    doc, catalog = out.docs.get("oracle_edited.json"), out.catalog
    if doc is None or catalog is None:
        return []
    run = doc.get("running")
    running = Running(run["workflow"], tuple(run["files"]), tuple(run["action_dirs"])) if run else None
    paths = sorted({p for paths in doc["buckets"].values() for p in paths})
    parts = diffsplit.split(tuple(diffsplit.Change("M", (p,)) for p in paths), catalog, running)
    derived = {**doc, "buckets": {k: list(v) for k, v in parts.buckets.items()},
               "oracle_moved": list(parts.oracle_edited), "control_edits": list(parts.control_edits),
               "void": parts.void, "workflow_edits": list(parts.workflow_edits)}
    return differences("oracle_edited.json", doc, derived)


def _agreement(out: Loaded) -> list[Finding]:
    """Every file describes the same head, base revision, run id and fixtures as ``verdicts.json``."""
    v, fixture = out.docs.get("verdicts.json"), out.docs.get("fixture.digest")
    if v is None:
        return []
    found = []
    oe = out.docs.get("oracle_edited.json")
    checks = [("oracle_edited.json", "$.head_revision", (oe or {}).get("head_revision"), v["head_revision"]),
              ("oracle_edited.json", "$.base_revision", (oe or {}).get("base_revision"), v["base_revision"])] \
        if oe is not None else []
    if fixture is not None:
        checks.append(("fixture.digest", "$.revision", fixture["revision"], v["head_revision"]))
    if out.runs is not None and out.base_sig is not None and fixture is not None:
        # A merge names each shard file that disagrees among its problems (and the outcome is incomplete).
        named = " ".join((v.get("decision") or {}).get("merge_problems") or [])
        # A base replay try's fixture digest is the base tree's as that try saw it (measured; a freeze applies
        # only under its own), which may differ from the replay's first: not an agreement to check in a run.
        checks += [(name, where, got, wanted) for what, name, where, got, wanted in agreement(
            out.runs, out.base_sig, fixture, head=v["head_revision"], base=v["base_revision"], run_id=v["run_id"],
            fixture_digest=fixture["digest"])
            if f": {what} " not in named and not (name == "base.sig.json" and where.endswith(".fixture_digest"))]
    for name, where, got, wanted in checks:
        if got != wanted:
            found.append(Finding(name, where, f"recorded {str(got)[:64]!r}, but verdicts.json says "
                                 f"{str(wanted)[:64]!r}"))
    return found


def derived_pack(out: Loaded, recorded: Mapping[str, Any]) -> dict[str, Any]:
    """``verdicts.json``'s ``pack`` with what the evidence re-derives: its root and file count from the catalog
    and manifest, and for a directory or ``git:`` pack its sha256, which is the manifest's."""
    pack = dict(recorded)
    manifest = out.docs.get(MANIFEST_NAME)
    if out.catalog is not None and "pack_root" in pack:
        pack["pack_root"] = out.catalog.pack_root
    if manifest is not None and "files" in pack:
        pack["files"] = len(manifest)
    if manifest is not None and pack.get("kind") in ("directory", "git"):
        pack["sha256"] = sha256(out.texts[MANIFEST_NAME])
    return pack


def evidence_of(out: Loaded) -> Evidence | None:
    """The :class:`Evidence` of a run or void run as the pipeline held it, with the decision re-derived: what
    was measured (runs, replays, the diff, the fixture record, ancestry, the date, the notices) as recorded,
    the rest (claimed set, freeze base, pack root, the verdicts, the promotion, the outcome) from the catalog,
    the ledger and the pure core. ``None`` when ``verdicts.json`` could not be read."""
    v = out.docs.get("verdicts.json")
    if v is None:
        return None
    ev = Evidence(repo="", head_revision=v["head_revision"], base_ref=v["base_ref"],
                  base_revision=v["base_revision"], policy=v["policy"], notices=list(v["notices"]),
                  run_id=out.runs.run_id if out.runs is not None else v["run_id"])
    ev.pack = derived_pack(out, v["pack"])
    ev.fixture = _record(FixtureRecord, out.docs.get("fixture.digest"))
    ev.diff = _record(DiffRecord, out.docs.get("oracle_edited.json"))
    ev.runs, ev.base_sig = out.runs, out.base_sig
    ev.oracle_files = {name: out.texts[name] for name in ORACLE_FILES if name in out.texts}
    if out.catalog is not None:
        ev.claimed, ev.properties, ev.freeze_base = out.catalog.claimed, out.catalog.by_id(), out.catalog.freeze_base
    if out.kind == "void":
        ev.void(v["void_reason"] or "")
        ev.why = v["promotion"]
        return ev
    decision = v["decision"]
    if decision is None or out.catalog is None or out.ledger is None or ev.fixture is None or ev.runs is None \
            or ev.base_sig is None or ev.diff is None:
        return None  # a file the decision reads is missing or unreadable: found already
    try:
        ev.today = parse_date(decision["today"], "today", "verdicts.json")
    except GateError as exc:
        out.findings.append(Finding("verdicts.json", "$.decision.today", exc.problem))
        return None
    ev.ancestors = dict(decision["ancestors"])
    ev.items, ev.unreported = decision["items"], list(decision["unreported"])
    ev.phase_failures, ev.merge_problems = list(decision["phase_failures"]), list(decision["merge_problems"])
    decide(ev, out.catalog, out.ledger)
    return ev


def decide(ev: Evidence, catalog: Catalog, ledger: Ledger) -> None:
    """The pure decision (:func:`verdict_gate.core.score.score`) on the evidence's inputs, as the pipeline's
    last step and a merge of shards take it: verdicts, promotion and outcome into ``ev``."""
    assert ev.fixture is not None and ev.runs is not None and ev.base_sig is not None and ev.diff is not None
    assert ev.today is not None
    moved = list(ev.diff.oracle_edited)
    ev.ledger = current_ledger(ledger, ev.fixture)[0]
    result = score(catalog, ev.ledger, ev.runs.runs, oracle_edited=moved,
                   replays=[r.base_sig() for r in ev.base_sig.replays], base_revision=ev.base_revision,
                   ancestors=ev.ancestors, policy=ev.policy, today=ev.today,
                   ran=sum(q.id not in moved for q in catalog.properties), items=ev.items,
                   phase_failures=ev.phase_failures)
    ev.verdicts, ev.why, ev.outcome = result.verdicts, result.promotion.why, result.outcome
    if ev.merge_problems:
        ev.outcome, ev.why = "incomplete", merge_why(ev.merge_problems)


def _record(kind: Any, doc: Any) -> Any:
    """``kind.from_json(doc)`` of a document read (and checked against its schema) already; ``None`` without one."""
    return kind.from_json(doc) if doc is not None else None


def sarif_category(out: Loaded) -> str:
    """The SARIF category the run was given (``--sarif-category``), read off ``results.sarif``."""
    try:
        return str(out.docs["results.sarif"]["runs"][0]["automationDetails"]["id"]).rstrip("/") or "verdict-gate"
    except (KeyError, IndexError, TypeError):
        return "verdict-gate"


def rendered(out: Loaded, ev: Evidence) -> list[Finding]:
    """Every derived file rendered again from ``ev`` and compared with the recorded one; each file's sha256 is
    taken of the recorded bytes (``verdicts.json`` lists the inputs', the statement every file's)."""
    inputs = input_digests(out)
    derived = {"verdicts.json": dumps(verdicts_doc(ev, inputs)), "results.sarif": dumps(sarif(ev, sarif_category(out))),
               "summary.md": summary_markdown(ev)}
    found: list[Finding] = []
    for name, text in derived.items():
        if name not in out.texts:
            continue
        if name == "summary.md":
            diff = text_difference(name, out.texts[name], text)
            found += [diff] if diff is not None else []
        elif name in out.docs:
            found += differences(name, out.docs[name], json.loads(text))
    recorded = {name: sha256(out.texts[name]) for name in (*INPUT_FILES, "verdicts.json", "results.sarif",
                                                           "summary.md") if name in out.texts}
    if ATTESTATION in out.docs:
        found += differences(ATTESTATION, out.docs[ATTESTATION], statement(ev, recorded))
    return found


def _shard(out: Loaded) -> list[Finding]:
    """A shard's own checks: ``shard.json`` against the shard's files (its share, head, base revision, run id
    and fixtures) and rendered again from them (each file's sha256, the gate's version)."""
    h = out.head
    if not h or out.catalog is None:
        return []
    plan, _ = planned(Loaded("run", docs=out.docs, catalog=out.catalog, ledger=out.ledger))
    label = f"shard {h['index']}/{h['count']}"
    found = [Finding("shard.json", "", line.removeprefix(label + ": "))
             for line in inconsistencies(label, h, plan, out.runs, out.base_sig, out.docs.get("fixture.digest"))]
    ev = Evidence(repo="", head_revision=h["head_revision"], base_revision=h["base_revision"],
                  run_id=h["run_id"], notices=list(h["notices"]),
                  fixture=_record(FixtureRecord, out.docs.get("fixture.digest")))
    ev.shard = {k: h[k] for k in ("index", "count", "properties", "pack_sha256", "items", "phase_failures",
                                  "unreported")}
    if h["outcome"] == "void":
        ev.void(h["void_reason"] or "")
    return found + differences("shard.json", h, shard_doc(ev, input_digests(out)))


def audit(files: Mapping[str, bytes], odd: Mapping[str, str] | None = None) -> Audit:
    """Audit one evidence directory's files (name → bytes; ``odd``: entries that are not regular files).

    Returns:
        an :class:`Audit`: no finding when every file agrees with the others and with the rules.
    Raises:
        GateError: not an evidence directory at all (no file the gate writes: exit 2).
    """
    out = load(files, odd)
    found = list(out.findings)
    found += _pack_files(out)
    found += _diff_split(out)
    found += set_order(out.runs, out.base_sig)
    head = out.head
    found += failure_fields(out.runs, out.base_sig, str(head.get("head_revision", "")), str(head.get("run_id", "")))
    tries = 0
    if out.catalog is not None:
        found += seeds(out.catalog, out.runs, out.base_sig)
    if out.catalog is not None and out.runs is not None and out.base_sig is not None:
        plan, frozen = planned(out)
        unreported = out.head.get("unreported") if out.kind == "shard" else \
            (out.head.get("decision") or {}).get("unreported")
        fresh = [pid for pid, r in out.runs.runs.items() if r.fresh_log and any(not e.held for e in r.fresh_log)]
        props = out.catalog.by_id()
        unreached = [pid for pid, r in out.runs.runs.items()
                     if pid in props and never_reached(r.run_result(props[pid]))]
        found += inventory(plan, list(out.runs.runs), unreported or [], frozen, out.base_sig.replays, fresh,
                           unreached)
        tries = len(out.base_sig.replays)
    if out.kind == "shard":
        found += _shard(out)
    else:
        found += _agreement(out)
        decision = (out.docs.get("verdicts.json") or {}).get("decision")
        if out.ledger is not None and decision is not None:
            found += ancestry(decision["ancestors"], [f.base_revision for f in out.ledger.freezes],
                              out.docs["verdicts.json"]["base_revision"])
        known = len(out.findings)
        ev = evidence_of(out)
        found += out.findings[known:]  # what reading the decision's inputs back found
        if ev is not None:
            found += rendered(out, ev)
    return Audit(out.kind, _unique(found),
                 {"files": len(files), "properties": len(out.runs.runs) if out.runs is not None else 0,
                  "tries": tries},
                 None if out.kind == "shard" else head.get("outcome"), str(head.get("head_revision", "")),
                 str(head.get("gate_version", "")))


def _unique(found: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(found))
