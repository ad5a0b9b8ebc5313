"""The SARIF rule of every verdict reason: what code scanning shows at the top of an alert. Pure.

Each reason gets a short description (the alert's title), a full description, and help in
text and Markdown (what to do about it). ``docs/rules.md`` is generated from this table
(``python -m verdict_gate.report.rules > docs/rules.md``; a test keeps the two in step) and each
rule's ``helpUri`` points at its section there.
"""

from __future__ import annotations

from dataclasses import dataclass

INFO_URI = "https://github.com/verdict-gate/verdict-gate"
RULES_DOC_URI = f"{INFO_URI}/blob/main/docs/rules.md"


@dataclass(frozen=True)
class Rule:
    short: str  # one line: the alert's title
    full: str  # what happened, in a sentence or two
    fix: str  # what to do about it
    deterministic: str = ""  # what it means when the freeze involved is deterministic (docs/design.md §3)
    flaky: str = ""  # … and when it is flaky ("Flaky freezes")

    def kinds(self) -> list[str]:
        """The per-kind sentences, each prefixed, for the help and docs/rules.md."""
        return ([f"For a deterministic freeze: {self.deterministic}"] if self.deterministic else []) \
            + ([f"For a flaky freeze: {self.flaky}"] if self.flaky else [])


RULES: dict[str, Rule] = {
    "held": Rule(
        "The property held.",
        "The property ran on the candidate and every example passed.",
        "Nothing to do. A deterministic freeze left for it is noted freeze_stale: remove it (verdict-gate ledger "
        "remove ID) through the oracle's review path.",
        deterministic="the frozen failure did not show, so the candidate fixed it and the freeze is stale: the "
        "note freeze_stale says so (with the catalog's stale: fail the verdict is fail, reason freeze_stale).",
        flaky="a pass is a pass, with no note and no advice: a flaky failure that did not show this time is "
        "expected, and says nothing about whether the freeze is still needed. `verdict-gate ledger prune` with "
        "enough replays tells."),
    "no_freeze": Rule(
        "The property failed and no freeze covers it.",
        "The property failed on the candidate and the freeze ledger has no record for this property.",
        "Fix the code under test so the property holds. If the failure is known and already on the base "
        "branch, add a reviewed freeze: verdict-gate freeze --rev BASE --pack PACK replays it up to 5 times "
        "there and records a deterministic freeze, or a flaky one with --kind flaky."),
    "frozen": Rule(
        "A known failure, forgiven by a reviewed freeze.",
        "The property failed with a signature that a freeze in the ledger names, under the same fixture digest, "
        "and the base replay reproduced it on the base revision. The verdict is inconclusive, never pass.",
        "Fix the known failure and remove the freeze, or let the freeze expire (expires_on).",
        deterministic="every failure of the run is in the freeze's set, and the base replay reproduced each of "
        "them; a frozen failure the candidate no longer shows is noted freeze_stale.",
        flaky="the flake showed on the candidate: every failure of the run is in the flaky freeze's set (the union "
        "of the failures seen when it was recorded), and one of the base replay's tries (up to those planned from "
        "its recorded rate) showed failures within that set. A frozen failure that did not show is expected, "
        "never stale."),
    "oracle_moved": Rule(
        "The candidate edits this property's oracle file.",
        "The diff changes the file that holds this property's code, so the candidate is not scored against "
        "the reviewed oracle; any freeze of it is void.",
        "Keep oracle changes out of the patch under test: land them through the human review path for the "
        "oracle (CODEOWNERS), then rebase the patch."),
    "catalog_drift": Rule(
        "The property passed, but the candidate edits its oracle file.",
        "A pass against an oracle file the patch itself changed is not evidence; the verdict is fail.",
        "Move the oracle edit into its own reviewed change, then rebase the patch."),
    "missing_run": Rule(
        "The runner produced no result for this property.",
        "The property process ended without reporting this property, so nothing shows that it held.",
        "Read the run log (VERDICT_GATE_KEEP_WORK=1 keeps it) for a crash at import or collection time."),
    "signature_mismatch": Rule(
        "The failure differs from every freeze of this property.",
        "The property failed, and a freeze exists for it, but the failure's signature (exception type, "
        "message, counterexample, node or seed) is not the frozen one: this is a different failure.",
        "Fix the new failure; the message names the signature parts that differ.",
        flaky="the same: a flaky freeze forgives only the failures in its set, however flaky the property is; a "
        "failure outside it is a different failure."),
    "digest_mismatch": Rule(
        "The fixtures differ from those the freeze was recorded under.",
        "The failure matches a freeze, but the fixture digest of this run is not the freeze's: the freeze was "
        "recorded against other fixture data and does not apply.",
        "Restore the fixtures, or replay on the base revision with the new fixtures and record a new freeze."),
    "base_mismatch": Rule(
        "The freeze's base revision does not fit this run's base.",
        "Under freeze_base: reproduced the freeze's base revision must be an ancestor of the run's base "
        "revision; under exact it must equal it.",
        "Rebase the patch on a base that contains the freeze's revision, or record the freeze again."),
    "not_reproduced_on_base": Rule(
        "The base replay did not reproduce the frozen failure.",
        "A freeze only forgives a failure that also shows on the base revision; the base replay there did not "
        "show it.",
        "Deterministic freeze: fix the failure, the candidate brought it. Flaky freeze: read the detail's odds, "
        "check the candidate's failure, and record the freeze from more replays (freeze --replays 20) if the rate "
        "it recorded is off, or set the catalog's replay_tries.",
        deterministic="the base replay passed or failed differently, so the failure is new to the candidate: fix "
        "it. If the property is flaky on the base too, the freeze was recorded from too few replays: record it "
        "again with verdict-gate freeze --rev BASE --pack PACK --kind flaky, which records its rate.",
        flaky="none of the base replay's tries showed failures within the frozen set, or none showed any of the "
        "candidate's own failures (so its examples could be compared with none: fail closed). The detail gives the "
        "tries and the chance of that for the rate recorded (a flake that failed k of n replays is missed by T "
        "tries (1 - k/n)^T of the time): either the patch's failure is not the flake, or the flake is rarer than "
        "the tries allowed for: they follow from the recorded rate (a miss at most once in 10,000 gates at that "
        "rate, at most 100 tries, within the property's timeout; the run's notice says which bound stopped them)."),
    "freeze_expired": Rule(
        "The freeze has expired.",
        "The freeze's expires_on date is before the run's date, so it no longer forgives the failure.",
        "Fix the failure, or review the freeze and give it a new expiry date (verdict-gate ledger extend ID "
        "--expires-on YYYY-MM-DD); the job summary warns 14 days ahead."),
    "fixture_mutated": Rule(
        "A property changed the read-only fixtures.",
        "A property declared mutates_fixture: false, yet the fixture digest after the run differs from the "
        "one before it.",
        "Make the code under test leave the fixtures alone (copy them to a temporary directory first), or "
        "declare mutates_fixture: true in the catalog through a reviewed change."),
    "timed_out": Rule(
        "The property exceeded its timeout.",
        "The property's process was killed after the catalog's timeout (default 120 s).",
        "Find the slow or hanging code path; raise the timeout only through a reviewed catalog change."),
    "crashed": Rule(
        "The property's process crashed.",
        "The candidate's own crash: the process running the property died or broke the results stream before "
        "reporting it, or the candidate worker died, hung up or flooded its channel while serving the candidate's "
        "code (its import failed, it called os._exit, it ran out of memory). A worker that never started is the "
        "host's fault instead: isolation_unavailable, outcome incomplete.",
        "Run the property with plain pytest (docs/adopting.md) to see the crash; a segfault or os._exit in the "
        "code under test shows up here."),
    "oracle_error": Rule(
        "The oracle cannot run: the property fails before its body on the base revision too.",
        "The oracle's own fault, never the patch's: the property failed before any example reached its body (a "
        "collection or import error in the pack's code, a pytest fixture the pack does not define), and it fails "
        "the same way on the base revision, where the patch is not. The outcome is incomplete (exit 4), not "
        "blocked, and a missing run is never a pass. The detail names the pack's file and line.",
        "Fix the pack through the oracle's review path: define a missing fixture in the pack's own conftest.py "
        "(the gate never loads the repository's), add a module the pack imports to the pack (or its directory to "
        "the catalog's python_path), or fix the line named. `verdict-gate check --rev BASE` shows it without a "
        "patch."),
    "unseeded": Rule(
        "A seeded property ran without its recorded seed.",
        "A kind: property ran without the Hypothesis seed the catalog records, so its result cannot be "
        "reproduced. The outcome is incomplete.",
        "Make sure the property uses @given and is not seeded by other code; see docs/design.md section 8."),
    "vacuous": Rule(
        "The property checked no example.",
        "The property ran but no example reached its assertions (every example was discarded, or the test "
        "returned early). The outcome is incomplete.",
        "Relax assume() calls or filters so examples get through, or mark a plain test kind: example."),
    "isolation_unavailable": Rule(
        "The host could not give the isolation level the catalog asks for.",
        "A fault of the gate or the host, never the candidate's: the level (sandbox or process) cannot be given "
        "here (neither bubblewrap nor Landlock with seccomp can fence a worker), the candidate worker could not "
        "start (an interpreter or a temp dir its own uid cannot reach), or its probe found a fence the method "
        "claims open. The property was not run under a lower level: the gate never downgrades silently, and the "
        "outcome is incomplete (exit 4), not blocked. Also when a value or call could not cross the isolation "
        "boundary (a documented limit of the boundary, such as pickling a candidate object that holds an oracle "
        "object): the detail names the message and the oracle's line, and verdict-gate freeze refuses it.",
        "Run `verdict-gate doctor` where the gate runs: it starts a real worker and names each fence and the fix. "
        "Install bubblewrap, or give the worker Landlock and seccomp (Linux 5.13+), install the gate where the "
        "worker's own uid can run it (not under /root), keep TMPDIR traversable; or lower the property's "
        "isolation through a reviewed catalog change for a candidate you trust. For a boundary limit, set "
        "`isolation: none` for that property (for a candidate you trust: it fences nothing) or change the test "
        "(docs/isolation.md, \"What crosses the boundary\")."),
    "unfrozen_failure": Rule(
        "A failure beside the frozen one is not covered by any freeze.",
        "The property's run has several failures; at least one of them has no freeze of its own. A freeze "
        "forgives a failure, never a property's name.",
        "Fix the extra failure; the message names its signature.",
        flaky="the same: the flake's own failures are in the set, the extra one is not, and a flaky freeze never "
        "forgives a failure outside its set."),
    "new_failing_examples": Rule(
        "Examples that held on the base fail on the candidate.",
        "The frozen failure is reproduced, but examples that passed on the base revision now fail: the patch "
        "broke more than the known failure. Also for a failing example drawn from the run's fresh seed that the "
        "base replay never drew: it cannot be shown to fail on the base revision too, so it counts as new "
        "(fail closed).",
        "Fix the regression; the message lists the examples.",
        flaky="a failing candidate's examples are compared with base replay tries in its own state (tries "
        "that showed its flaky failures), so the flake showing on one side only is never taken for a regression; "
        "when no single try showed all the failures it shows, with every try that showed any of them, and an "
        "example is new unless one of those tries failed it the same way. A passing candidate's are compared "
        "with every try, as without a freeze."),
    "freeze_stale": Rule(
        "The property held, but a deterministic freeze of it is left, and the catalog says stale: fail.",
        "Like pytest's strict xfail: the catalog's stale: fail makes a property that passes while a deterministic "
        "freeze of it exists a failure, so a fixed failure's freeze is removed instead of waiting to forgive a "
        "later regression of the same signature. Without stale: fail the same run is pass, with the note "
        "freeze_stale.",
        "Remove the freeze (verdict-gate ledger remove ID; the detail names it) through the oracle's review path, "
        "with the fix or before it: a patch under test cannot edit the ledger. Or set stale: note in the catalog.",
        deterministic="its failure set no longer shows: the freeze is stale.",
        flaky="never: a flaky failure that did not show is expected, so a flaky freeze is never stale."),
    "void": Rule(
        "The oracle pack or its control files cannot be trusted for this run.",
        "The pack failed validation (bytes, manifest, schema, links) or the diff edits a control file: the "
        "catalog, the ledger, the manifest, the pack's fixtures, or what defines the run: the workflow that runs "
        "the gate, the local workflows and actions it uses, the files its steps run or read by path (scripts "
        "named in run: steps, files given to actions by path) and the symbolic links on the way; every file when "
        "the gate cannot tell which file a step runs. Nothing was scored.",
        "Land oracle and workflow changes through their human review path, or restore the pack from its "
        "protected source; the message says which file. When it says the gate cannot tell which file a step "
        "runs, name that file by its path in the step (docs/action.md, \"Workflow edits\")."),
}


def help_markdown(reason: str) -> str:
    rule = RULES[reason]
    kinds = "".join(f"\n\n{line}" for line in rule.kinds())
    return f"**{rule.short}**\n\n{rule.full}{kinds}\n\n**Fix:** {rule.fix}\n\nSee [{reason}]({help_uri(reason)})."


def help_text(reason: str) -> str:
    rule = RULES[reason]
    kinds = "".join(f"\n{line}" for line in rule.kinds())
    return f"{rule.short} {rule.full}{kinds}\nFix: {rule.fix}"


def help_uri(reason: str) -> str:
    return f"{RULES_DOC_URI}#{reason}"


def rules_markdown() -> str:
    """The text of ``docs/rules.md``."""
    out = ["# verdict-gate rules", "",
           "One SARIF rule per verdict reason (generated by `python -m verdict_gate.report.rules`; the",
           "row numbers are those of the verdict table, [design.md §3](design.md#3-the-verdict-table)).", "",
           "A freeze is `deterministic` (its failure set showed on every replay when it was recorded) or `flaky`",
           "(it showed on some: the ledger keeps the rate, failed k of n replays, and the union of the failures",
           "seen). Where a reason means something different for each kind, its section says so. Neither kind",
           "ever turns a failure into `pass`.", "",
           "`verdict-gate explain DIR ID` shows why one property of a run's evidence got its reason: each freeze",
           "of it against the run in two columns, the first difference marked, then the fix below and a link to",
           "its section here (the job summary shows the same lines under each property that did not pass).", ""]
    for reason, rule in RULES.items():
        out += [f"## {reason}", "", f"**{rule.short}**", "", rule.full, ""]
        out += [line for kind in rule.kinds() for line in (kind, "")]
        out += [f"Fix: {rule.fix}", ""]
    out += SEEN
    return "\n".join(out)


# docs/rules.md's last section: the limits of what a freeze is matched against.
SEEN = [
    "## What a freeze can and cannot see", "",
    "A freeze forgives a failure set: each failing test node, and each distinct bug Hypothesis reports inside "
    "one, by its signature (the node, seed, exception type, normalised message, counterexample, where it was "
    "raised and the pack line it came through). The gate sees every failure a test reports, every example a "
    "Hypothesis property draws (the example logs: an example that held on the base and fails now is "
    "new_failing_examples), and fresh examples drawn from a seed the patch cannot know.", "",
    "It cannot see what a test never reached. Two shapes of a test hide more than the failure that is frozen, "
    "as they do under plain pytest; `verdict-gate check` and `verdict-gate freeze` warn about both, with the "
    "line, before a freeze is recorded:", "",
    "- **An assertion inside a loop** of an example test (`for amount, band in CASES: assert bands(amount) == "
    "band`): the first row that fails ends the test, so once that failure is frozen, a patch that breaks every "
    "row after it fails the same way and is forgiven. Write the rows with `@pytest.mark.parametrize`: each row "
    "is a test node whose failure is its own.",
    "- **An expected value computed from an argument after candidate code had it** (`out = sort(xs)`, then "
    "`assert out == sorted(xs)`): a candidate that rewrites its argument agrees with itself. Compute the "
    "expected value before the call, or hand the candidate a copy.", "",
    "Nor can a freeze tell a flake's failure from the same failure made deterministic: a flaky freeze forgives "
    "its failures whenever a base try shows them too, however often the candidate shows them.", "",
]


if __name__ == "__main__":
    print(rules_markdown(), end="")
