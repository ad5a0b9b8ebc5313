"""The verdict table V1–V18 (docs/design.md, "The verdict table"). Pure.

Nothing here reads the environment, the clock, git or files: the edges pass in today's
date, the ancestry of each freeze's base revision and the base replay's signatures.

The one rule this module exists to keep: only a runner ``pass`` on an unedited oracle
yields ``pass``. A freeze can at most turn a failure into ``inconclusive``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from verdict_gate.core.signature import describe_failure, differing_parts

VerdictValue = Literal["pass", "fail", "inconclusive"]

# reason → the table row that produces it (the SARIF ruleId is derived from the reason)
REASON_ROWS = {
    "held": "V1",
    "no_freeze": "V2",
    "frozen": "V3",
    "oracle_moved": "V4",
    "catalog_drift": "V5",
    "missing_run": "V6",
    "signature_mismatch": "V7",
    "digest_mismatch": "V8",
    "base_mismatch": "V9",
    "not_reproduced_on_base": "V10",
    "freeze_expired": "V11",
    "fixture_mutated": "V12",
    "timed_out": "V13",
    "crashed": "V13",
    "unseeded": "V14",
    "vacuous": "V14",
    "unfrozen_failure": "V15",
    "new_failing_examples": "V16",
    "isolation_unavailable": "V17",
    "oracle_error": "V18",  # the oracle's own fault: it fails before the property's body on the base revision too
    "freeze_stale": "V1",  # V1 under the catalog's `stale: fail`: a deterministic freeze outlived its failure
}
INCOMPLETE_REASONS = frozenset({"unseeded", "vacuous", "isolation_unavailable", "oracle_error"})
ISOLATION_RANK = {"none": 0, "process": 1, "sandbox": 2}  # a level gives every fence of the ones below it
KINDS = ("deterministic", "flaky")  # a freeze's kind (docs/design.md §3, "Flaky freezes")
STALE_POLICIES = ("note", "fail")  # catalog `stale`: what a passing property with a deterministic freeze is


@dataclass(frozen=True)
class FailureRef:
    """One failure of a failure set (docs/design.md §5): its signature and the parts it hashes."""

    signature: str
    parts: Mapping[str, Any]


STOPPED = "f" * 32  # the example-log entry of a logging pass that stopped early (the plugin writes it)


@dataclass(frozen=True)
class Example:
    """One drawn example of an example log (docs/design.md §8.3): the digest of its value, whether
    it held, and (for a failing one) its input and ``error`` (``ExcType: first message line``), for the
    message."""

    digest: str
    held: bool
    input: Any = None
    unmatched: bool = False  # a failing fresh example the base replay never drew (see _unmatched)
    error: str | None = None
    fails: str | None = None  # how it failed: 16 hex of its exception type, message and pack line
    changed: bool = False  # it failed on the base too, another way (see _regressions)


@dataclass(frozen=True)
class RunResult:
    """What the runner reported for one property.

    Attributes:
        status: ``pass``, ``fail``, ``timeout``, ``crash`` or ``skipped``.
        signature: ``sha256:…`` of the failure, ``None`` on pass.
        signature_parts: the parts hashed into ``signature``.
        fixture_digest: the digest (``tree-v2``, or ``tree-v1`` for a freeze recorded under it) of the
            fixtures the run saw.
        seed: Hypothesis seed used; ``None`` means the property ran unseeded.
        seeded_kind: True for catalog ``kind: property`` (must be seeded).
        hits: examples that reached the property body; ``None`` when unknown (timeout, crash).
        fixture_mutated: the run changed the fixtures although the catalog says it must not.
        isolation_asked: the level the catalog asks for (``sandbox``, ``process`` or ``none``).
        isolation_level: the level the property ran at; ``isolation_method`` how (``unavailable``
            when the host could not give the level asked for; ``isolation_why`` then says why).
        boundary: the limits of the isolation boundary the run met (a value or an operation that could
            not cross, with the oracle line): the run shows nothing about the candidate (V17).
    """

    status: str
    signature: str | None = None
    signature_parts: Mapping[str, Any] | None = None
    fixture_digest: str = ""
    seed: int | None = None
    seeded_kind: bool = False
    hits: int | None = None
    fixture_mutated: bool = False
    isolation_asked: str = "none"
    isolation_level: str = "none"
    isolation_method: str = "in-process"
    isolation_why: str = ""
    failures: tuple[FailureRef, ...] = ()
    example_log: tuple[Example, ...] | None = None
    fresh_log: tuple[Example, ...] | None = None
    boundary: tuple[str, ...] = ()

    def failure_set(self) -> tuple[FailureRef, ...]:
        """Every failure of the run; a run recorded with one signature only is a set of one."""
        if self.failures:
            return self.failures
        return (FailureRef(self.signature, self.signature_parts or {}),) if self.signature else ()


@dataclass(frozen=True)
class Freeze:
    """One ledger record (docs/design.md, ``freeze_ledger.json``).

    ``kind``: ``deterministic`` (its failure set showed on every replay) or ``flaky`` (it showed on some:
    ``rate`` = (failed, replays), e.g. ``(2, 5)``; the failure set is the union of those seen).
    ``last_seen``: the last day a replay showed one of its failures (``None``: ``first_seen``).
    """

    prop_id: str
    signature: str
    signature_parts: Mapping[str, Any]
    fixture_digest: str
    base_revision: str
    reason: str
    first_seen: dt.date
    expires_on: dt.date | None = None
    failures: tuple[FailureRef, ...] = ()
    fixture_format: str | None = None  # ``tree-v2`` when recorded so; ``None``: before formats were named
    kind: str = "deterministic"
    rate: tuple[int, int] | None = None
    last_seen: dt.date | None = None

    def failure_set(self) -> tuple[FailureRef, ...]:
        """The failures this record forgives; a record with one signature (the ledger before failure
        sets) is a set of one."""
        return self.failures or (FailureRef(self.signature, self.signature_parts),)

    def names(self) -> frozenset[str]:
        """The signatures of :meth:`failure_set`."""
        return frozenset(f.signature for f in self.failure_set())

    @property
    def flaky(self) -> bool:
        return self.kind == "flaky"

    @property
    def id(self) -> str:
        """The freeze id (12 hex digits): what ``verdict-gate ledger`` names a record by. It hashes the record's
        identity (failure set, fixture digest, base revision), which a ledger holds once."""
        identity = f"{self.signature}\0{self.fixture_digest}\0{self.base_revision}".encode()
        return hashlib.sha256(identity).hexdigest()[:12]

    def kind_label(self) -> str:
        """``deterministic`` or ``flaky, failed 2 of 5 replays``."""
        if self.flaky and self.rate:
            return f"flaky, failed {self.rate[0]} of {self.rate[1]} replays"
        return self.kind


@dataclass(frozen=True)
class BaseSig:
    """One base replay try (a ``base.sig.json`` entry): the signature seen on ``base_revision``.

    A property with a flaky freeze may have several tries (docs/design.md §3, "Flaky freezes"); ``status``
    is the try's runner status (``pass``, ``fail``, …, ``missing``; ``None`` when not recorded).
    """

    prop_id: str
    signature: str | None
    fixture_digest: str
    base_revision: str
    failures: tuple[str, ...] = ()
    example_log: tuple[Example, ...] | None = None
    fresh_log: tuple[Example, ...] | None = None
    status: str | None = None

    def failure_set(self) -> frozenset[str]:
        """The signatures the replay reproduced (a set of one for a replay recorded with one signature)."""
        return frozenset(self.failures) if self.failures else frozenset([self.signature] if self.signature else [])


@dataclass(frozen=True)
class Verdict:
    """The gate's answer for one property: ``verdict``, ``reason``, human ``detail``.

    ``notes`` carries secondary findings, e.g. ``("freeze_stale",)`` on a V1 pass.
    """

    verdict: VerdictValue
    reason: str
    detail: str = ""
    notes: tuple[str, ...] = ()

    @property
    def row(self) -> str:
        return REASON_ROWS[self.reason]


def _fail(reason: str, detail: str) -> Verdict:
    return Verdict("fail", reason, detail)


def decide(
    run: RunResult | None,
    *,
    oracle_edited: bool,
    freezes: Sequence[Freeze],
    replay: Sequence[BaseSig],
    base_revision: str,
    ancestors: Mapping[str, bool],
    freeze_base: str,
    today: dt.date,
    stale: str = "note",
) -> Verdict:
    """Apply the verdict table to one property: its stages (:data:`STAGES`) in order, the first that decides.

    Args:
        run: the runner's result, ``None`` when the property produced none (V6).
        oracle_edited: the candidate diff edits this property's oracle file (V4, V5).
        freezes: the ledger records for this property id (any number).
        replay: base replay results for this property id on ``base_revision``.
        base_revision: the run's base revision (merge base of the base ref and HEAD).
        ancestors: freeze ``base_revision`` → whether it is an ancestor of (or equal to)
            ``base_revision``; a revision absent from the map counts as not an ancestor.
        freeze_base: ``"reproduced"`` (default policy) or ``"exact"``.
        today: the date freezes expire against (V11).
        stale: the catalog's ``stale`` (``note`` or ``fail``): whether a pass with a deterministic freeze
            of this id is ``pass`` with the note ``freeze_stale``, or ``fail``/``freeze_stale`` (V1).
    Returns:
        a :class:`Verdict`; ``pass`` only for a runner pass on an unedited oracle. A flaky freeze never
        yields a note on a pass (its failure not showing is expected), and forgives only failures within
        its set, when a base replay try showed failures within it too (docs/design.md §3, "Flaky freezes").
    """
    case = _Case(run, oracle_edited, freezes, replay, base_revision, ancestors, freeze_base, today, stale)
    for stage in STAGES:
        verdict = stage(case)
        if verdict is not None:
            return verdict
    raise AssertionError("the last stage of the verdict table always decides")


@dataclass
class _Case:
    """One property's inputs to :func:`decide`, and what its stages found on the way."""

    run: RunResult | None
    oracle_edited: bool
    freezes: Sequence[Freeze]
    replay: Sequence[BaseSig]
    base_revision: str
    ancestors: Mapping[str, bool]
    freeze_base: str
    date: dt.date  # the day freezes expire against (decide's `today`)
    stale: str
    on_base: list[BaseSig] = field(default_factory=list)  # the replay tries on the run's base revision
    fresh: list[Example] = field(default_factory=list)  # fresh examples that fail here and held on the base
    failure: str | None = None  # timed_out or crashed: the run's process timed out or crashed
    matched: list[FailureRef] = field(default_factory=list)  # the run's failures a freeze names
    extra: list[FailureRef] = field(default_factory=list)  # the run's failures no freeze names
    applied: list[Freeze] = field(default_factory=list)  # the freezes that forgive some of them

    @property
    def ran(self) -> RunResult:
        assert self.run is not None  # every stage after _missing_run
        return self.run


def _edited(case: _Case) -> Verdict | None:
    """V4, V5. An edited oracle comes first: the pipeline does not run an edited property (docs/design.md §2
    step 5), so its missing result is expected and oracle_moved is the reason to report."""
    if not case.oracle_edited:
        return None
    if case.run is not None and case.run.status == "pass":
        return _fail("catalog_drift", "the property passed, but its oracle file is edited in the diff")
    return _fail("oracle_moved", "the oracle file is edited in the diff; any freeze is void")


def _missing_run(case: _Case) -> Verdict | None:
    """V6."""
    return _fail("missing_run", "the runner produced no result for this property") if case.run is None else None


def _isolation(case: _Case) -> Verdict | None:
    """V17 ahead of every verdict a run could earn: a property that ran less fenced than the catalog asks is
    never a pass, whatever it showed (never silently downgraded)."""
    run = case.ran
    if run.isolation_method == "unavailable":
        return _fail("isolation_unavailable", f"this host could not give the isolation level "
                     f"{run.isolation_asked!r} the catalog asks for: {run.isolation_why or 'no reason given'}; "
                     "`verdict-gate doctor` shows what it can give")
    if run.boundary:
        # What the boundary could not carry is the gate's failure, never the candidate's (docs/design.md
        # §8.1): a pass may be hollow, a failure may be an artifact, and neither may be frozen.
        return _fail("isolation_unavailable", "the isolation boundary could not carry this property: "
                     + "; ".join(run.boundary[:3]) + (f"; and {len(run.boundary) - 3} more" if len(run.boundary) > 3
                                                       else "")
                     + "; fix: set `isolation: none` for this property in the catalog, or change the property "
                       "(`verdict-gate check` shows each line)")
    if ISOLATION_RANK.get(run.isolation_level, -1) < ISOLATION_RANK.get(run.isolation_asked, 2):
        return _fail("isolation_unavailable", f"the catalog asks for isolation {run.isolation_asked!r}, but the "
                     f"property ran only at {run.isolation_level!r} ({run.isolation_method}); "
                     "`verdict-gate doctor` shows what this host can give")
    return None


def _fixture_mutated(case: _Case) -> Verdict | None:
    """V12. Blamed by its own oracle process's check, or by the whole run's check when no one property was
    caught (execute.py): say what is known, not that this property did it."""
    if not case.ran.fixture_mutated:
        return None
    return _fail("fixture_mutated", "the fixtures changed while the property ran (or during the run, when no one "
                                    "property was caught changing them), but it is declared mutates_fixture: "
                                    "false; the run's notices name any changed file that is a work-tree link")


def _unchecked(case: _Case) -> Verdict | None:
    """V14: unseeded, or vacuous. A failure with zero hits (say, an import error) is still a failure, so only a
    pass or a skip can be vacuous."""
    run = case.ran
    if run.status in ("pass", "fail", "skipped") and run.seeded_kind and run.seed is None:
        return _fail("unseeded", "a `kind: property` ran without a recorded Hypothesis seed "
                     "(a plain test is `kind: example` in the catalog)")
    if run.status == "skipped" or (run.status == "pass" and run.hits == 0):
        return _fail("vacuous", "the property ran but checked no example (zero hits)")
    return None


def _passed(case: _Case) -> Verdict | None:
    """V1 (and V16 on fresh examples). Fresh examples count only differentially (docs/design.md §8.3): one that
    fails here and held on the base is a regression, whatever the recorded seed showed. (The base's own
    fixtures are the base's behaviour: no digest filter here.)"""
    run, freezes = case.ran, case.freezes
    case.on_base = [r for r in case.replay if r.base_revision == case.base_revision]
    fresh_tries, alike = _compared(run, case.on_base, freezes)
    case.fresh = (_regressions(run.fresh_log, [r.fresh_log for r in fresh_tries], alike)
                  + _unmatched(run.fresh_log, [r.fresh_log for r in case.on_base]))
    if run.status != "pass":
        return None
    # A flaky freeze's failure not showing is expected: only a deterministic one is stale.
    stale_ones = [fr for fr in freezes if not fr.flaky]
    notes = ("freeze_stale",) if stale_ones else ()
    if case.fresh:
        return Verdict("fail", "new_failing_examples", _regression_detail(case.fresh, "a fresh example"), notes)
    if stale_ones and case.stale == "fail":
        ids = ", ".join(fr.id for fr in stale_ones[:5])
        return _fail("freeze_stale", f"the property held, but its deterministic freeze ({ids}) no longer fails "
                     "and the catalog says stale: fail; remove it through the oracle's review path "
                     f"(verdict-gate ledger remove {stale_ones[0].id})")
    detail = "held" + ("; a freeze for this id is stale and can be removed" if stale_ones else "")
    return Verdict("pass", "held", detail, notes)


def _unreached(case: _Case) -> Verdict | None:
    """V18 first (:func:`_oracle_fault`), then V13: it never reached the property's body (collection or import
    error, a missing pytest fixture): no freeze can forgive that (docs/design.md §3)."""
    run = case.ran
    broken = _oracle_fault(run, case.on_base)
    if broken is not None:  # V18: the pack cannot run on the base either; the patch is not what broke it
        return broken
    case.failure = {"timeout": "timed_out", "crash": "crashed"}.get(run.status)
    if case.failure is None and run.hits == 0:
        base = " (not so on the base revision: the patch broke it)" if case.on_base else ""
        return _fail("crashed", "the property failed before any example reached its body (an import or "
                     f"collection error, or a missing pytest fixture){base}; such a failure cannot be frozen")
    return None


def _no_freeze(case: _Case) -> Verdict | None:
    """V2 (or V13 for a timeout or crash): a failure the ledger has no freeze for."""
    if case.freezes:
        return None
    if case.failure:
        return _fail(case.failure, f"the property's process {case.failure.replace('_', ' ')}")
    return _fail("no_freeze", "the property failed and the ledger has no freeze for this id")


def _signature_mismatch(case: _Case) -> Verdict | None:
    """V7: no failure of the run is one a freeze names."""
    run_set = case.ran.failure_set()
    frozen_sigs = {f.signature for fr in case.freezes for f in fr.failure_set()}
    case.matched = [f for f in run_set if f.signature in frozen_sigs]
    case.extra = [f for f in run_set if f.signature not in frozen_sigs]
    if case.matched:
        return None
    frozen = [f for fr in case.freezes for f in fr.failure_set()]
    pairs = [(len(differing_parts(fz.parts, rf.parts)), differing_parts(fz.parts, rf.parts))
             for fz in frozen for rf in run_set] or [(0, ())]
    parts = min(pairs)[1]
    detail = "signature differs from the freeze in: " + (", ".join(parts) or "signature value")
    if len(run_set) > 1:
        detail += f" (none of the run's {len(run_set)} failures is frozen)"
    return _fail(case.failure or "signature_mismatch", detail)


def _unforgiven(case: _Case) -> Verdict | None:
    """V8–V11, V15. Every record naming one of the run's failures is checked on its own (:func:`_check_freeze`);
    a failure is forgiven when a record that applies in full (digest, base, replay, expiry) names it."""
    forgiven: set[str] = set()
    best: Verdict | None = None
    best_step = -1
    for freeze in case.freezes:
        names = {f.signature for f in freeze.failure_set()}
        mine = [f for f in case.matched if f.signature in names]
        if not mine:
            continue
        step, verdict = _check_freeze(freeze, mine, case.ran, case.replay, case.base_revision, case.ancestors,
                                      case.freeze_base, case.date)
        if verdict.verdict == "inconclusive":
            forgiven.update(f.signature for f in mine)
            case.applied.append(freeze)
        elif step > best_step:
            best, best_step = verdict, step
    extra = case.extra
    also = [f"{len(extra)} failure(s) outside the frozen set"] if extra else []
    unfrozen = (f"{len(extra)} failure(s) outside the frozen set: "
                + "; ".join(describe_failure(f.parts) for f in extra[:10])
                + (f"; and {len(extra) - 10} more" if len(extra) > 10 else ""))
    unforgiven = [f for f in case.matched if f.signature not in forgiven]
    if unforgiven:
        assert best is not None
        if extra and best.reason == "not_reproduced_on_base" and all(
                any(f.signature in fr.names() for fr in case.freezes if fr.flaky) for f in unforgiven):
            # No base try could forgive a failure outside the set: whether the flake showed there does not
            # decide, so the failure that does is reported (and the gate spends no try on it: needs_try).
            return _fail("unfrozen_failure", f"{unfrozen}; the flaky freeze's own failures showed on no base "
                                             "replay try either")
        return Verdict(best.verdict, best.reason, "; ".join([best.detail, *also]), best.notes)
    if extra:  # V15: some failures are frozen, these are not
        return _fail("unfrozen_failure", unfrozen)
    return None


def _new_failing_examples(case: _Case) -> Verdict | None:
    """V16: same seed, same draws; an example that held on the base and fails here is new."""
    run, freezes, fresh = case.ran, case.freezes, case.fresh
    run_set = run.failure_set()
    compared, alike = _compared(run, [r for r in case.on_base if r.prop_id == freezes[0].prop_id
                                      and r.fixture_digest == run.fixture_digest], freezes)
    if not compared:
        # Never silent (issue 41): with no base try to compare the candidate's examples with, a new bug on
        # inputs that held on every try would go unseen behind the flake.
        shown = "; ".join(describe_failure(f.parts) for f in run_set[:3]) + ("; …" if len(run_set) > 3 else "")
        return _fail("not_reproduced_on_base", f"no base replay try on {case.base_revision[:12]} showed any of the "
                     f"candidate's failures ({shown}), so its examples could be compared with none (V16): fail "
                     "closed; the catalog's replay_tries sets how many tries a flaky freeze gets")
    logged = _regressions(run.example_log, [r.example_log for r in compared], alike)
    if logged or fresh:
        first = logged or fresh
        union = "" if alike else (f" (no single base try showed the candidate's {len(run_set)} failures: compared with "
                                  f"the {len(compared)} tries that showed any of them)")
        return _fail("new_failing_examples", _regression_detail(first, "an example" if logged else "a fresh example")
                     + (f"; {len(logged) + len(fresh)} such example(s) in all" if len(logged) + len(fresh) > 1 else "")
                     + union)
    return None


def _frozen(case: _Case) -> Verdict:
    """V3. The subset rule: a frozen failure the candidate no longer shows is stale, the rest stay frozen; a
    flaky freeze's failure that did not show this time is expected, never stale."""
    applied = case.applied
    seen = {f.signature for f in case.ran.failure_set()}
    gone = [f for fr in applied if not fr.flaky for f in fr.failure_set() if f.signature not in seen]
    reasons = "; ".join(dict.fromkeys(fr.reason for fr in applied))
    flaky = [fr for fr in applied if fr.flaky]
    detail = ("known flaky failure, frozen" if flaky and len(flaky) == len(applied) else "known failure, frozen") \
        + f": {reasons}"
    if gone:
        detail += "; no longer fails (freeze_stale): " + "; ".join(describe_failure(f.parts) for f in gone[:10])
    return Verdict("inconclusive", "frozen", detail, ("freeze_stale",) if gone else ())


# The verdict table's precedence (docs/design.md §3), as the order of its stages: the first that decides wins.
STAGES: tuple[Callable[[_Case], Verdict | None], ...] = (
    _edited,  # V4, V5: the pipeline does not run an edited oracle
    _missing_run,  # V6
    _isolation,  # V17: ahead of every verdict a run could earn
    _fixture_mutated,  # V12
    _unchecked,  # V14: unseeded, vacuous
    _passed,  # V1 (V16 for a fresh example that fails)
    _unreached,  # V18: the oracle's own fault; V13: no example reached the body
    _no_freeze,  # V2 (V13 for a timeout or crash)
    _signature_mismatch,  # V7
    _unforgiven,  # V8-V11 record by record, V15
    _new_failing_examples,  # V16
    _frozen,  # V3
)


def _compared(run: RunResult, tries: Sequence[BaseSig], freezes: Sequence[Freeze]) -> tuple[list[BaseSig], bool]:
    """The base replay tries the candidate's examples are compared with (V16), and whether they are alike
    (:func:`_alike`: in the candidate's own state). V16 never goes silent (docs/design.md §3, "Flaky
    freezes"; issue 41): when no single try shows every flaky failure the candidate shows (a flaky freeze's
    union whose failures never showed together on the base), every try whose failures lie within the frozen
    sets and include one of the candidate's is compared, example by example (:func:`_regressions` with
    ``alike`` false). ``[]`` only when no try showed any of the candidate's failures: the caller fails closed.
    """
    alike = _alike(run, tries, freezes)
    if alike or run.status == "pass" or not any(fr.flaky for fr in freezes):
        return alike, True
    frozen = {sig for fr in freezes for sig in fr.names()}
    failing = {f.signature for f in run.failure_set()}
    return [t for t in tries if t.failure_set() and t.failure_set() <= frozen and t.failure_set() & failing], False


def _alike(run: RunResult, tries: Sequence[BaseSig], freezes: Sequence[Freeze]) -> list[BaseSig]:
    """The base replay tries whose examples may be compared with the candidate's (V16).

    Every try, unless the property has a flaky freeze and the candidate failed: then only the tries in the
    candidate's own state, whose failures are all frozen and show the flaky failures the candidate shows.
    An example that held while the flake did not show says nothing about it when the flake shows, and
    comparing them would block an honest patch whenever the flake showed on the candidate only (docs/design.md
    §3, "Flaky freezes"). A passing candidate is compared with every try, as without a freeze: a freeze may
    never weaken the check of a pass.
    """
    flaky = {sig for fr in freezes if fr.flaky for sig in fr.names()}
    if not flaky or run.status == "pass":
        return list(tries)
    frozen = {sig for fr in freezes for sig in fr.names()}
    shown = {f.signature for f in run.failure_set()} & flaky
    return [t for t in tries if t.failure_set() and t.failure_set() <= frozen and shown <= t.failure_set()]


def needs_try(run: RunResult | None, freezes: Sequence[Freeze], tries: Sequence[BaseSig]) -> bool:
    """Whether the base replay should try a property with a flaky freeze once more (docs/design.md §3, "Flaky
    freezes"): the candidate failed with a failure of a flaky freeze, and no try yet (of ``tries``: this
    property's, on the run's base revision) showed failures within that freeze (V10) or showed them in the
    candidate's own state (V16). Never for a property without a flaky freeze, for a pass (another try can
    only find more regressions, never fewer), nor for a failure outside every frozen set (it fails anyway).
    """
    flaky = [fr for fr in freezes if fr.flaky]
    if run is None or not flaky or run.status == "pass":
        return False
    failing = {f.signature for f in run.failure_set()}
    named = [fr for fr in flaky if fr.names() & failing]
    if not named or failing - {sig for fr in freezes for sig in fr.names()}:
        return False  # no flaky freeze involved, or a failure outside every set fails the property anyway
    return not _alike(run, tries, freezes) or not all(shows_within(fr, tries) for fr in named)


def shows_within(freeze: Freeze, tries: Sequence[BaseSig]) -> bool:
    """Whether one of the base replay ``tries`` showed failures within ``freeze``'s set (a failure set that
    is not empty and lies inside the frozen one): how a flaky freeze counts as reproduced (docs/design.md §3,
    "Flaky freezes")."""
    names = freeze.names()
    return any(t.failure_set() and t.failure_set() <= names for t in tries)


def miss_chance(rate: tuple[int, int] | None, tries: int) -> float | None:
    """The chance that ``tries`` independent tries all miss a flake that failed ``rate`` = (k, n) replays:
    ``(1 - k/n) ** tries``; ``None`` without a rate."""
    if not rate or rate[1] <= 0:
        return None
    return (1 - rate[0] / rate[1]) ** tries


def _regressions(log: Sequence[Example] | None, base_logs: Sequence[tuple[Example, ...] | None],
                 alike: bool = True) -> list[Example]:
    """The examples of ``log`` that fail although the same example held in one of ``base_logs``, or failed
    there another way (another exception, message or pack line: a second bug on an example the freeze
    forgives for the first; found by a red-team run, promoted before).

    ``alike`` false: the base logs are tries in other states than the candidate's (a flaky union, see
    :func:`_compared`), where an example of a failure that did not show there held; then an example is new
    when no log that drew it failed it the same way (it held on every one, or failed only other ways).
    """
    if not log:
        return []
    held = {e.digest for base in base_logs if base for e in base if e.held}
    failed: dict[str, set[str | None]] = {}  # digest → how it failed on the base (None: a log without `fails`)
    for base in base_logs:
        for e in base or ():
            if not e.held:
                failed.setdefault(e.digest, set()).add(e.fails)
    found: list[Example] = []
    for e in log:
        ways = failed.get(e.digest, set())
        if e.held or (not alike and None in ways):
            continue  # a log without `fails` failed it: any way counts as the same
        if e.digest in held and (alike or not ways):  # alike: held on one try; else: held on every one
            found.append(e)
        elif ways - {None} and e.fails not in ways - {None}:
            found.append(replace(e, changed=True))
    # A log cut short on the candidate but not on the base hides the examples after the cut: fail closed.
    base_stopped = any(e.digest == STOPPED for base in base_logs if base for e in base)
    if not base_stopped and any(b for b in base_logs):
        found += [e for e in log if e.digest == STOPPED]
    return found


def _unmatched(log: Sequence[Example] | None, base_logs: Sequence[tuple[Example, ...] | None]) -> list[Example]:
    """The failing fresh examples of ``log`` the base replay never drew (neither held nor failed there): they
    cannot be shown to be old failures, so they count as new (fail closed, docs/design.md §8.3)."""
    if not log:
        return []
    drawn = {e.digest for base in base_logs if base for e in base}
    return [Example(e.digest, False, e.input, unmatched=True, error=e.error) for e in log
            if not e.held and e.digest != STOPPED and e.digest not in drawn]


def _regression_detail(found: Sequence[Example], what: str) -> str:
    if found[0].digest == STOPPED:
        return f"{found[0].input} (on the candidate only: not every example could be compared)"
    shown = str(found[0].input) if found[0].input is not None else "(input not kept)"
    shown = shown if len(shown) <= 300 else shown[:300] + "…"
    if found[0].changed:
        error = f" ({found[0].error})" if found[0].error else ""
        return f"{what} that failed on the base revision fails another way on the candidate{error}: {shown}"
    if found[0].unmatched:
        return (f"{what} fails on the candidate and was not drawn on the base revision, so it cannot be shown to "
                f"fail there too: {shown}")
    return f"{what} that held on the base revision fails on the candidate: {shown}"


def _check_freeze(
    freeze: Freeze,
    mine: Sequence[FailureRef],
    run: RunResult,
    replay: Sequence[BaseSig],
    base_revision: str,
    ancestors: Mapping[str, bool],
    freeze_base: str,
    today: dt.date,
) -> tuple[int, Verdict]:
    if freeze.fixture_digest != run.fixture_digest:
        return 0, _fail("digest_mismatch",
                        f"fixture digest {run.fixture_digest[:12]}… differs from "
                        f"the freeze's {freeze.fixture_digest[:12]}…")
    if freeze_base == "exact":
        base_ok = freeze.base_revision == base_revision
        rule = "equal to"
    else:
        base_ok = freeze.base_revision == base_revision or ancestors.get(freeze.base_revision, False)
        rule = "an ancestor of"
    if not base_ok:
        return 1, _fail("base_mismatch",
                        f"freeze base revision {freeze.base_revision[:12]} is not {rule} "
                        f"the run's base revision {base_revision[:12]}")
    tries = [r for r in replay if r.prop_id == freeze.prop_id and r.fixture_digest == freeze.fixture_digest
             and r.base_revision == base_revision]
    if freeze.flaky:
        # A flaky failure shows on some tries only: reproduced when any try showed failures within the set.
        if not shows_within(freeze, tries):
            chance = miss_chance(freeze.rate, len(tries))
            odds = (f" (it failed {freeze.rate[0]} of {freeze.rate[1]} replays when frozen: {len(tries)} "
                    f"tr{'y' if len(tries) == 1 else 'ies'} miss such a flake {chance:.1%} of the time)"
                    if chance is not None and freeze.rate and tries else "")
            return 2, _fail("not_reproduced_on_base",
                            f"the flaky freeze's failures showed in none of the {len(tries)} base replay "
                            f"tr{'y' if len(tries) == 1 else 'ies'} on {base_revision[:12]} under this fixture "
                            f"digest{odds}; the tries follow from the freeze's recorded rate (a flake at that rate "
                            "missed at most once in 10,000 gates) within the property's timeout, or from the "
                            "catalog's replay_tries")
    # Each failure a deterministic record is asked to forgive must have been reproduced on the run's base.
    elif any(f.signature not in set().union(*[r.failure_set() for r in tries]) for f in mine):
        return 2, _fail("not_reproduced_on_base",
                        f"the base replay on {base_revision[:12]} did not reproduce this signature "
                        "under this fixture digest")
    if freeze.expires_on is not None and freeze.expires_on < today:
        return 3, _fail("freeze_expired", f"the freeze expired on {freeze.expires_on.isoformat()}")
    return 4, Verdict("inconclusive", "frozen", f"known failure, frozen: {freeze.reason}")


# Failures pytest reports before a test's body runs: a fixture nobody defines, a file that cannot be collected.
NEVER_REACHED = frozenset({"_pytest.fixtures.FixtureLookupError", "_pytest.nodes.Collector.CollectError"})


def never_reached(run: RunResult | None) -> tuple[FailureRef, ...]:
    """The failures of ``run`` that never reached the property's body: every failure of a failed run whose
    body no example reached (zero hits: a collection or import error, a missing fixture), and any failure
    pytest reports before a test's body (:data:`NEVER_REACHED`). Empty for a pass, a timeout or a crash."""
    if run is None or run.status != "fail":
        return ()
    failures = run.failure_set()
    if run.hits == 0:
        return failures
    return tuple(f for f in failures if f.parts.get("exc_type") in NEVER_REACHED)


def _oracle_fault(run: RunResult, on_base: Sequence[BaseSig]) -> Verdict | None:
    """V18 (docs/design.md §3, "Gate faults are not the candidate's"): ``fail``/``oracle_error`` when a failure
    of ``run`` that never reached the property's body showed, with the same signature, on a base replay try
    of the run's base revision (``on_base``): the pack cannot run there either, so the oracle is broken, not
    the patch. ``None`` otherwise (a failure the candidate alone shows stays the candidate's: crashed)."""
    seen = {sig for t in on_base for sig in t.failure_set()}
    both = [f for f in never_reached(run) if f.signature in seen]
    if not both:
        return None
    first = both[0].parts
    where = f"the pack's {first['site']}" if first.get("site") else f"{first.get('node') or 'the property'}"
    more = f"; and {len(both) - 1} more such failure(s)" if len(both) > 1 else ""
    return _fail("oracle_error", f"{where} fails before the property's body ({first.get('exc_type')}), on the base "
                 f"revision {on_base[0].base_revision[:12]} as on the candidate: the oracle cannot run, whatever the "
                 f"patch{more}; fix: {oracle_fix(str(first.get('exc_type') or ''))} (`verdict-gate check --rev "
                 f"{on_base[0].base_revision[:12]}` shows it)")


def oracle_fix(exc_type: str) -> str:
    """What to do about a property that cannot run before its body, by the exception's qualified type."""
    if exc_type == "_pytest.fixtures.FixtureLookupError":
        return ("define the fixture in the pack's own conftest.py (the gate loads the pack's conftest.py, never "
                "the repository's: one left out of the pack, or kept under tests/, is not there), or fix the test's "
                "argument")
    if exc_type in ("builtins.ModuleNotFoundError", "builtins.ImportError"):
        return ("the pack imports a module or name that neither the pack nor the base revision has: add the module "
                "to the pack beside the property, put its directory on the catalog's python_path, install it beside "
                "the gate, or fix the import; a file the project's build writes and git ignores (a _version.py) goes "
                "under the catalog's generated:")
    return "fix the pack's code at that line (plain pytest fails it on the base revision too)"
