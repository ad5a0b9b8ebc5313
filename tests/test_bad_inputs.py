"""The bad-input corpus: every malformed input a careless user can give gets the clean
answer — the documented exit code, a message that names the thing and the fix, no traceback, and
none of the user's files changed.

Each case is one row: an id, a setup that writes the bad input into a fresh copy of the example
repository (``ctx.repo``, branch ``candidate``) or its pack (``ctx.pack``, a copy of ``oracle/``
outside the repository) and returns the command line, the exit code, and the text the message
must hold. The CLI runs as a subprocess (``python -m verdict_gate``), like a user runs it; most
cases stop before any property runs, so the corpus stays fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import ROOT, cli, commit_all, git

LEDGER_FREEZE = json.loads((ROOT / "examples" / "orders" / "freeze_ledger.json").read_text())["freezes"][0]


@dataclass
class Ctx:
    tmp: Path
    repo: Path
    pack: Path
    out: Path
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None

    def write(self, path: Path, text: str | bytes) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return path

    def catalog(self, text: str | bytes) -> list[str]:
        """Replace the pack's catalog; the command validates the pack (exit 2, nothing written)."""
        self.write(self.pack / "catalog.yaml", text)
        return ["pack", "build", str(self.pack), "--out", str(self.tmp / "pack.tar.gz")]

    def ledger(self, text: str | bytes) -> list[str]:
        self.write(self.pack / "freeze_ledger.json", text)
        return ["pack", "build", str(self.pack), "--out", str(self.tmp / "pack.tar.gz")]

    def run(self, *extra: str, base: str = "main", pack: str = "git:main:oracle", out: str | None = None) -> list[str]:
        return ["run", "--repo", str(self.repo), "--base", base, "--pack", pack, "--out", out or str(self.out),
                "--today", "2026-11-30", *extra]

    def base_sig(self, **changes: object) -> Path:
        rec = {k: LEDGER_FREEZE[k] for k in ("prop_id", "signature", "fixture_digest", "base_revision")}
        # The committed ledger holds a failure set (docs/design.md §5): its one failure's parts.
        rec["signature_parts"] = LEDGER_FREEZE.get("signature_parts") or LEDGER_FREEZE["failures"][0]["signature_parts"]
        doc = {"version": 1, "base_revision": rec["base_revision"], "fixture_digest": rec["fixture_digest"],
               "replays": [{**rec, "status": "fail"}]}
        doc.update(changes)
        return self.write(self.tmp / "base.sig.json", json.dumps(doc))

    def freeze(self, *extra: str, reason: str = "known; ORD-17") -> list[str]:
        return ["freeze", "--base-sig", str(self.base_sig()), "--id", "prop.tax_round", "--reason", reason,
                "--ledger", str(self.pack / "freeze_ledger.json"), *extra]

    def freeze_tries(self, failed: tuple[bool, ...], *extra: str) -> list[str]:
        """``freeze`` from a base.sig.json with one try of prop.tax_round per entry of ``failed`` (the frozen
        failure, or a pass)."""
        argv = self.freeze(*extra)
        one = json.loads(self.base_sig().read_text())["replays"][0]
        passed = {**one, "status": "pass", "signature": None, "signature_parts": None}
        replays = [{**(one if f else passed), "try": n} for n, f in enumerate(failed, 1)]
        doc = {"version": 1, "base_revision": one["base_revision"], "fixture_digest": one["fixture_digest"],
               "replays": replays}
        self.write(self.tmp / "base.sig.json", json.dumps(doc))
        return argv

    def ledger_cmd(self, *args: str, freezes: bool = True) -> list[str]:
        """``ledger ARGS --ledger PACK/freeze_ledger.json``, the ledger holding the example's freeze."""
        if freezes:
            self.write(self.pack / "freeze_ledger.json", json.dumps({"version": 1, "freezes": [LEDGER_FREEZE]}))
        return ["ledger", *args, "--ledger", str(self.pack / "freeze_ledger.json")]


CATALOG = (ROOT / "examples" / "orders" / "repo" / "oracle" / "catalog.yaml").read_text()
GOOD_PROPS = """\
properties:
  - id: prop.order_total
    oracle: properties/test_order_total.py
    kind: example
"""


def cat(body: str, props: str = GOOD_PROPS) -> str:
    return "version: 1\n" + body + props


def prop(extra: str) -> str:
    return ("properties:\n  - id: prop.order_total\n    oracle: properties/test_order_total.py\n"
            "    kind: example\n" + "".join(f"    {line}\n" for line in extra.splitlines()))


def ledger_with(**changes: object) -> str:
    rec = {**LEDGER_FREEZE, **changes}
    for key in [k for k, v in changes.items() if v is None]:
        del rec[key]
    return json.dumps({"version": 1, "freezes": [rec]})


def billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 9)}]")
    return "version: 1\n" + "\n".join(lines) + "\n" + GOOD_PROPS


def commit_on_main(ctx: Ctx, path: str, text: str | None) -> None:
    """Change a file of ``oracle/`` on main (the protected source), then return to ``candidate``."""
    git(ctx.repo, "checkout", "--quiet", "main")
    target = ctx.repo / path
    if text is None:
        target.unlink()
    else:
        ctx.write(target, text)
    commit_all(ctx.repo, f"edit {path}")
    git(ctx.repo, "checkout", "--quiet", "candidate")
    git(ctx.repo, "merge", "--quiet", "--ff-only", "main")


@dataclass(frozen=True)
class Case:
    id: str
    setup: Callable[[Ctx], list[str]]
    code: int
    says: tuple[str, ...]  # all must appear in stdout+stderr (the thing blamed and the fix)


C = Case
CASES: list[Case] = [
    # --- catalog (validated by `pack build`: exit 2, nothing written) -------------------------
    C("catalog-nan-timeout", lambda c: c.catalog(cat("", prop("timeout: .nan"))), 2, ("timeout", "finite", "fix:")),
    C("catalog-inf-timeout", lambda c: c.catalog(cat("", prop("timeout: .inf"))), 2, ("timeout", "finite", "fix:")),
    C("catalog-neg-inf-timeout", lambda c: c.catalog(cat("", prop("timeout: -.inf"))), 2, ("timeout", "fix:")),
    C("catalog-nan-seed", lambda c: c.catalog(cat("seed: .nan\n")), 2, ("$.seed", "fix:")),
    C("catalog-generated-outside", lambda c: c.catalog(cat("generated:\n  ../setup.py: x\n")), 2,
      ("$.generated", "'../setup.py'", "fix:")),
    C("catalog-generated-build-command", lambda c: c.catalog(cat("generated:\n  src/v.py: [make, version]\n")), 2,
      ("generated", "fix:")),
    C("catalog-nan-in-claim", lambda c: c.catalog(cat("", prop("claim: .NaN"))), 2, ("claim", "fix:")),
    C("catalog-huge-timeout", lambda c: c.catalog(cat("", prop("timeout: 1e12"))), 2, ("timeout", "fix:")),
    C("catalog-zero-timeout", lambda c: c.catalog(cat("", prop("timeout: 0"))), 2, ("timeout", "fix:")),
    C("catalog-string-timeout", lambda c: c.catalog(cat("", prop("timeout: soon"))), 2, ("timeout", "fix:")),
    C("catalog-billion-laughs", lambda c: c.catalog(billion_laughs()), 2, ("anchor or alias", "fix:")),
    C("catalog-alias", lambda c: c.catalog("version: 1\nx: &p properties/test_order_total.py\n" + GOOD_PROPS),
      2, ("anchor or alias", "fix:")),
    C("catalog-merge-key", lambda c: c.catalog(
        "version: 1\nproperties:\n  - &base {id: a, oracle: properties/test_order_total.py}\n  - <<: *base\n"
        "    id: b\n"), 2, ("anchor or alias", "fix:")),
    C("catalog-40mb-comments", lambda c: c.catalog(cat("") + ("# comment\n" * 4_200_000)), 2,
      ("limit", "fix:")),
    C("catalog-not-yaml", lambda c: c.catalog("version: 1\nproperties: [\n"), 2, ("YAML", "fix:")),
    C("catalog-tabs", lambda c: c.catalog("version: 1\n\tproperties: []\n"), 2, ("YAML", "fix:")),
    C("catalog-empty", lambda c: c.catalog(""), 2, ("catalog", "fix:")),
    C("catalog-list", lambda c: c.catalog("- 1\n- 2\n"), 2, ("catalog", "fix:")),
    C("catalog-version-2", lambda c: c.catalog("version: 2\n" + GOOD_PROPS), 2, ("version", "fix:")),
    C("catalog-no-properties", lambda c: c.catalog("version: 1\n"), 2, ("properties", "fix:")),
    C("catalog-unknown-key", lambda c: c.catalog(cat("colour: blue\n")), 2, ("colour", "fix:")),
    C("catalog-duplicate-id", lambda c: c.catalog("version: 1\n" + GOOD_PROPS + GOOD_PROPS.split("\n", 1)[1]), 2,
      ("duplicate", "fix:")),
    C("catalog-claim-unknown", lambda c: c.catalog(cat("claimed: [prop.nope]\n")), 2, ("prop.nope", "fix:")),
    C("catalog-abs-oracle", lambda c: c.catalog("version: 1\nproperties:\n  - id: a\n    oracle: /etc/passwd\n"), 2,
      ("oracle", "fix:")),
    C("catalog-dotdot-oracle", lambda c: c.catalog("version: 1\nproperties:\n  - id: a\n    oracle: ../x.py\n"), 2,
      ("oracle", "fix:")),
    C("catalog-missing-oracle-file", lambda c: c.catalog(
        "version: 1\nproperties:\n  - id: a\n    oracle: properties/nope.py\n"), 2, ("nope.py", "fix:")),
    C("catalog-bad-kind", lambda c: c.catalog(cat("", prop("kind: fuzz"))), 2, ("kind", "fix:")),
    C("catalog-bad-policy", lambda c: c.catalog(cat("policy: loose\n")), 2, ("policy", "fix:")),
    C("catalog-bad-freeze-base", lambda c: c.catalog(cat("freeze_base: newest\n")), 2, ("freeze_base", "fix:")),
    C("catalog-negative-seed", lambda c: c.catalog(cat("seed: -1\n")), 2, ("seed", "fix:")),
    C("catalog-float-seed", lambda c: c.catalog(cat("seed: 1.5\n")), 2, ("seed", "fix:")),
    C("catalog-pack-root-dot", lambda c: c.catalog(cat("pack_root: .\n")), 2, ("pack_root", "fix:")),
    C("catalog-pack-root-dotdot", lambda c: c.catalog(cat("pack_root: ../x\n")), 2, ("pack_root", "fix:")),
    C("catalog-python-path-dotdot", lambda c: c.catalog(cat("python_path: [../lib]\n")), 2, ("python_path", "fix:")),
    C("catalog-bad-normalizer-regex", lambda c: c.catalog(cat(
        "normalizers:\n  - {glob: 'pack/**', pattern: '(', replacement: ''}\n")), 2, ("pattern", "fix:")),
    C("catalog-bad-glob-bucket", lambda c: c.catalog(cat("paths:\n  secret: ['x/**']\n")), 2, ("secret", "fix:")),
    C("catalog-yaml-date", lambda c: c.catalog(cat("", prop("claim: 2026-02-30"))), 2, ("fix:",)),
    C("catalog-not-utf8", lambda c: c.catalog(b"version: 1\n# \xff\xfe\n" + GOOD_PROPS.encode()), 2,
      ("UTF-8", "fix:")),
    C("catalog-is-directory", lambda c: (c.pack / "catalog.yaml").unlink() or (c.pack / "catalog.yaml").mkdir() or
      ["pack", "build", str(c.pack), "--out", str(c.tmp / "p.tar.gz")], 2, ("catalog", "fix:")),
    C("catalog-missing", lambda c: (c.pack / "catalog.yaml").unlink() or
      ["pack", "build", str(c.pack), "--out", str(c.tmp / "p.tar.gz")], 2, ("catalog.yaml", "fix:")),
    # --- ledger -----------------------------------------------------------------------------
    C("ledger-not-json", lambda c: c.ledger("{"), 2, ("JSON", "fix:")),
    C("ledger-nan", lambda c: c.ledger('{"version": 1, "freezes": [], "x": NaN}'), 2, ("NaN", "fix:")),
    C("ledger-infinity", lambda c: c.ledger('{"version": 1, "freezes": [{"prop_id": Infinity}]}'), 2,
      ("Infinity", "fix:")),
    C("ledger-duplicate-key", lambda c: c.ledger('{"version": 1, "version": 1, "freezes": []}'), 2,
      ("repeats", "fix:")),
    C("ledger-duplicate-freeze", lambda c: c.ledger(json.dumps({"version": 1,
                                                                "freezes": [LEDGER_FREEZE, LEDGER_FREEZE]})), 2,
      ("same failure", "$.freezes[0]", "fix:")),
    C("ledger-week-date", lambda c: c.ledger(ledger_with(first_seen="2026-W01-1")), 2, ("first_seen", "fix:")),
    C("ledger-compact-date", lambda c: c.ledger(ledger_with(expires_on="20261231")), 2, ("expires_on", "fix:")),
    C("ledger-impossible-date", lambda c: c.ledger(ledger_with(expires_on="2026-02-30")), 2,
      ("calendar date", "fix:")),
    C("ledger-date-newline", lambda c: c.ledger(ledger_with(expires_on="2026-12-31\n")), 2, ("expires_on", "fix:")),
    C("ledger-empty-reason", lambda c: c.ledger(ledger_with(reason="   ")), 2, ("reason", "fix:")),
    C("ledger-no-reason", lambda c: c.ledger(ledger_with(reason=None)), 2, ("reason", "fix:")),
    C("ledger-bad-signature", lambda c: c.ledger(ledger_with(signature="sha256:" + "0" * 64)), 2,
      ("signature", "fix:")),
    C("ledger-short-revision", lambda c: c.ledger(ledger_with(base_revision="abc123")), 2, ("base_revision", "fix:")),
    C("ledger-unknown-prop", lambda c: c.ledger(ledger_with(prop_id="prop.nope")), 2, ("fix:",)),
    C("ledger-version-0", lambda c: c.ledger('{"version": 0, "freezes": []}'), 2, ("version", "fix:")),
    C("ledger-array", lambda c: c.ledger("[]"), 2, ("freeze ledger", "fix:")),
    C("ledger-deep", lambda c: c.ledger("[" * 100_000 + "]" * 100_000), 2, ("fix:",)),
    C("ledger-not-utf8", lambda c: c.ledger(b'{"version": 1, "freezes": []}\xff'), 2, ("UTF-8", "fix:")),
    C("ledger-huge", lambda c: c.ledger(" " * (33 * 1024 * 1024) + '{"version": 1, "freezes": []}'), 2,
      ("limit", "fix:")),
    # --- manifest ---------------------------------------------------------------------------
    C("manifest-missing", lambda c: (c.pack / "manifest.sha256").unlink() or ["manifest", "verify", str(c.pack)], 2,
      ("manifest write", "fix:")),
    C("manifest-not-json", lambda c: c.write(c.pack / "manifest.sha256", "nope") and
      ["manifest", "verify", str(c.pack)], 2, ("JSON", "fix:")),
    C("manifest-nan", lambda c: c.write(c.pack / "manifest.sha256", '{"a": NaN}') and
      ["manifest", "verify", str(c.pack)], 2, ("NaN", "fix:")),
    C("manifest-verify-not-a-pack", lambda c: ["manifest", "verify", str(c.tmp)], 2, ("catalog.yaml", "fix:")),
    C("manifest-verify-missing-dir", lambda c: ["manifest", "verify", str(c.tmp / "nope")], 2, ("fix:",)),
    C("manifest-bad-action", lambda c: ["manifest", "check", str(c.pack)], 2, ("invalid choice",)),
    # --- freeze flags: the flag is blamed, never the ledger file ------------------------------
    C("freeze-empty-reason", lambda c: c.freeze(reason=""), 2, ("--reason", "fix:")),
    C("freeze-blank-reason", lambda c: c.freeze(reason="  \t "), 2, ("--reason", "fix:")),
    C("freeze-expires-soon", lambda c: c.freeze("--expires-on", "soon"), 2, ("--expires-on", "YYYY-MM-DD", "fix:")),
    C("freeze-expires-week", lambda c: c.freeze("--expires-on", "2026-W01-1"), 2, ("--expires-on", "fix:")),
    C("freeze-first-seen-bad", lambda c: c.freeze("--first-seen", "yesterday"), 2, ("--first-seen", "fix:")),
    C("freeze-first-seen-impossible", lambda c: c.freeze("--first-seen", "2026-13-01"), 2, ("--first-seen", "fix:")),
    C("freeze-expires-before-seen", lambda c: c.freeze("--first-seen", "2026-11-02", "--expires-on", "2026-01-01"),
      2, ("--expires-on", "fix:")),
    C("freeze-unknown-id", lambda c: c.freeze()[:4] + ["prop.nope"] + c.freeze()[5:], 2, ("prop.nope", "fix:")),
    C("freeze-base-sig-missing", lambda c: ["freeze", "--base-sig", str(c.tmp / "nope.json"), "--id", "x",
                                            "--reason", "r", "--ledger", str(c.pack / "freeze_ledger.json")], 2,
      ("does not exist", "fix:")),
    C("freeze-base-sig-not-json", lambda c: c.write(c.tmp / "b.json", "{") and
      ["freeze", "--base-sig", str(c.tmp / "b.json"), "--id", "prop.tax_round", "--reason", "r",
       "--ledger", str(c.pack / "freeze_ledger.json")], 2, ("JSON", "fix:")),
    C("freeze-base-sig-invalid", lambda c: c.base_sig(version=7) and
      ["freeze", "--base-sig", str(c.tmp / "base.sig.json"), "--id", "prop.tax_round", "--reason", "r",
       "--ledger", str(c.pack / "freeze_ledger.json")], 2, ("version", "fix:")),
    C("freeze-ledger-dir-missing", lambda c: c.freeze()[:-1] + [str(c.tmp / "no" / "ledger.json")], 2,
      ("--ledger", "fix:")),
    C("freeze-ledger-duplicate", lambda c: c.ledger(json.dumps({"version": 1, "freezes": [LEDGER_FREEZE]})) and
      c.freeze(), 2, ("already freezes", "fix:")),
    C("freeze-ledger-invalid", lambda c: c.ledger("{") and c.freeze(), 2, ("JSON", "fix:")),
    C("freeze-missing-reason-flag", lambda c: [a for a in c.freeze() if a not in ("--reason", "known; ORD-17")], 2,
      ("--reason",)),
    # --- freeze's evidence: replayed now (--rev) or read (--base-sig), several tries ----------------
    C("freeze-rev-without-pack", lambda c: ["freeze", "--rev", "main", "--repo", str(c.repo), "--id",
                                            "prop.tax_round", "--reason", "r", "--ledger",
                                            str(c.pack / "freeze_ledger.json")], 2, ("--pack", "--rev", "fix:")),
    C("freeze-pack-without-rev", lambda c: c.freeze("--pack", "git:main:oracle"), 2, ("--pack", "--rev", "fix:")),
    C("freeze-rev-and-base-sig", lambda c: c.freeze("--rev", "main"), 2, ("not allowed with",)),
    C("freeze-rev-unknown", lambda c: ["freeze", "--rev", "no-such-rev", "--pack", "git:main:oracle", "--repo",
                                       str(c.repo), "--id", "prop.tax_round", "--reason", "r", "--ledger",
                                       str(c.pack / "freeze_ledger.json")], 2, ("no-such-rev", "fix:")),
    C("freeze-replays-zero", lambda c: c.freeze("--replays", "0"), 2, ("--replays", "fix:")),
    C("freeze-replays-more-than-the-file", lambda c: c.freeze("--replays", "5"), 2,
      ("1 try", "fewer than --replays 5", "fix:")),
    C("freeze-kind-bad", lambda c: c.freeze("--kind", "sometimes"), 2, ("invalid choice", "flaky")),
    C("freeze-deterministic-but-tries-differ", lambda c: c.freeze_tries((True, False), "--kind", "deterministic"), 2,
      ("failed 1 of 2 replays", "flaky", "fix:")),
    C("freeze-tries-all-pass", lambda c: c.freeze_tries((False, False)), 2, ("no failure to freeze", "fix:")),
    C("replay-replays-zero", lambda c: ["replay", "--repo", str(c.repo), "--rev", "main", "--pack", "git:main:oracle",
                                        "--out", str(c.tmp / "b.json"), "--replays", "0"], 2, ("--replays", "fix:")),
    # --- ledger upkeep: the ledger and its manifest untouched on every error -------------------------
    C("ledger-list-missing", lambda c: ["ledger", "list", "--ledger", str(c.tmp / "nope.json")], 2,
      ("does not exist", "fix:")),
    C("ledger-list-invalid", lambda c: c.ledger("{") and c.ledger_cmd("list", freezes=False), 2, ("JSON", "fix:")),
    C("ledger-list-today-bad", lambda c: c.ledger_cmd("list", "--today", "tomorrow"), 2, ("--today", "fix:")),
    C("ledger-remove-unknown", lambda c: c.ledger_cmd("remove", "abcdef123456"), 2, ("names no freeze", "fix:")),
    C("ledger-remove-short-prefix", lambda c: c.ledger_cmd("remove", "ab"), 2, ("names no freeze", "fix:")),
    C("ledger-extend-past", lambda c: c.ledger_cmd("extend", "prop.tax_round", "--expires-on", "2020-01-01"), 2,
      ("before today", "fix:")),
    C("ledger-extend-bad-date", lambda c: c.ledger_cmd("extend", "prop.tax_round", "--expires-on", "soon"), 2,
      ("--expires-on", "YYYY-MM-DD", "fix:")),
    C("ledger-extend-no-date", lambda c: c.ledger_cmd("extend", "prop.tax_round"), 2, ("--expires-on",)),
    C("ledger-prune-no-evidence", lambda c: c.ledger_cmd("prune"), 2, ("--base-sig", "--rev")),
    C("ledger-prune-rev-without-pack", lambda c: c.ledger_cmd("prune", "--rev", "main", "--repo", str(c.repo)), 2,
      ("--pack", "fix:")),
    C("ledger-prune-base-sig-missing", lambda c: c.ledger_cmd("prune", "--base-sig", str(c.tmp / "nope.json"),
                                                              "--repo", str(c.repo)), 2, ("does not exist", "fix:")),
    C("ledger-prune-base-sig-replays", lambda c: c.ledger_cmd("prune", "--base-sig", str(c.base_sig()), "--replays",
                                                              "3", "--repo", str(c.repo)), 2, ("--replays", "fix:")),
    C("ledger-deterministic-with-a-partial-rate", lambda c: c.ledger(ledger_with(
        kind="deterministic", rate={"failed": 1, "replays": 2})), 2, ("flaky", "fix:")),
    C("ledger-flaky-without-rate", lambda c: c.ledger(ledger_with(kind="flaky", rate=None)), 2, ("rate", "fix:")),
    C("ledger-rate-over-replays", lambda c: c.ledger(ledger_with(kind="flaky", rate={"failed": 3, "replays": 2})),
      2, ("at most", "fix:")),
    C("ledger-kind-bad", lambda c: c.ledger(ledger_with(kind="sometimes")), 2, ("kind", "fix:")),
    C("ledger-last-seen-before-first", lambda c: c.ledger(ledger_with(last_seen="2020-01-01")), 2,
      ("last_seen", "fix:")),
    C("catalog-replay-tries-zero", lambda c: c.catalog(cat("replay_tries: 0\n")), 2, ("replay_tries", "fix:")),
    C("catalog-stale-bad", lambda c: c.catalog(cat("", prop("stale: loudly"))), 2, ("stale", "fix:")),
    # --- run flags ------------------------------------------------------------------------------
    C("run-today-week", lambda c: c.run()[:-1] + ["2026-W01-1"], 2, ("--today", "YYYY-MM-DD")),
    C("run-today-compact", lambda c: c.run()[:-1] + ["20261130"], 2, ("--today", "YYYY-MM-DD")),
    C("run-today-word", lambda c: c.run()[:-1] + ["today"], 2, ("--today", "YYYY-MM-DD")),
    C("run-today-impossible", lambda c: c.run()[:-1] + ["2026-02-30"], 2, ("--today", "fix:")),
    C("run-policy-bad", lambda c: c.run("--policy", "loose"), 2, ("invalid choice", "lenient")),
    C("run-format-bad", lambda c: c.run("--format", "xml"), 2, ("invalid choice", "json")),
    C("run-no-base", lambda c: [a for a in c.run() if a not in ("--base", "main")], 2, ("--base",)),
    C("run-unknown-flag", lambda c: c.run("--colour"), 2, ("unknown option --colour",)),
    C("run-misspelt-flag", lambda c: ["run", "--output", str(c.tmp / "ev")], 2,
      ("unknown option --output (did you mean --out?)",)),
    C("run-unknown-command", lambda c: ["gate"], 2, ("invalid choice",)),
    # --- --out, checked before the work ------------------------------------------------------
    C("out-is-file", lambda c: c.write(c.tmp / "ev", "mine") and c.run(out=str(c.tmp / "ev")), 2,
      ("--out", "not a directory", "fix:")),
    C("out-under-file", lambda c: c.write(c.tmp / "ev", "mine") and c.run(out=str(c.tmp / "ev" / "sub")), 2,
      ("--out", "is a file", "fix:")),
    C("out-proc", lambda c: c.run(out="/proc/self/verdict-gate"), 2, ("--out", "kernel file system", "fix:")),
    C("out-sys", lambda c: c.run(out="/sys/verdict-gate"), 2, ("--out", "kernel file system", "fix:")),
    C("out-dev", lambda c: c.run(out="/dev/verdict-gate"), 2, ("--out", "fix:")),
    C("out-symlink", lambda c: (c.tmp / "link").symlink_to(c.tmp) or c.run(out=str(c.tmp / "link")), 2,
      ("--out", "symbolic link", "fix:")),
    C("out-evidence-name-is-dir", lambda c: (c.out / "verdicts.json").mkdir(parents=True) or c.run(), 2,
      ("verdicts.json", "fix:")),
    C("replay-out-is-dir", lambda c: c.out.mkdir() or ["replay", "--repo", str(c.repo), "--rev", "main", "--pack",
                                                         "git:main:oracle", "--out", str(c.out)], 2,
      ("--out", "fix:")),
    C("replay-out-proc", lambda c: ["replay", "--repo", str(c.repo), "--rev", "main", "--pack", "git:main:oracle",
                                    "--out", "/proc/self/base.sig.json"], 2, ("--out", "fix:")),
    C("replay-out-under-file", lambda c: c.write(c.tmp / "f", "x") and
      ["replay", "--repo", str(c.repo), "--rev", "main", "--pack", "git:main:oracle", "--out",
       str(c.tmp / "f" / "base.sig.json")], 2, ("--out", "fix:")),
    # --- git state -------------------------------------------------------------------------
    C("repo-missing", lambda c: c.run()[:1] + ["--repo", str(c.tmp / "nope")] + c.run()[3:], 2, ("fix:",)),
    C("repo-not-git", lambda c: (c.tmp / "plain").mkdir() or c.run()[:1] + ["--repo", str(c.tmp / "plain")]
      + c.run()[3:], 2, ("fix:",)),
    C("base-unknown", lambda c: c.run(base="origin/nope"), 2, ("origin/nope", "fix:")),
    C("base-garbage", lambda c: [a if a != "--base" else "--base=--upload-pack=x" for a in c.run()
                                 if a != "main"], 2, ("fix:",)),
    C("base-unrelated", lambda c: git(c.repo, "checkout", "--quiet", "--orphan", "lonely") or
      commit_all(c.repo, "unrelated") and c.run(), 2, ("fix:",)),
    C("replay-rev-unknown", lambda c: ["replay", "--repo", str(c.repo), "--rev", "nope", "--pack", "git:main:oracle",
                                       "--out", str(c.tmp / "b.json")], 2, ("nope", "fix:")),
    C("replay-only-id-unknown", lambda c: ["replay", "--repo", str(c.repo), "--rev", "main", "--pack",
                                           "git:main:oracle", "--out", str(c.tmp / "b.json"), "--only-id", "x.y"], 2,
      ("x.y", "fix:")),
    # --- pack sources ----------------------------------------------------------------------
    C("pack-missing-dir", lambda c: c.run(pack=str(c.tmp / "nope")), 2, ("fix:",)),
    C("pack-git-bad-rev", lambda c: c.run(pack="git:nope:oracle"), 2, ("fix:",)),
    C("pack-git-bad-dir", lambda c: c.run(pack="git:main:elsewhere"), 2, ("fix:",)),
    C("pack-https-unpinned", lambda c: c.run(pack="https://example.invalid/pack.tar.gz"), 2, ("sha256", "fix:")),
    C("pack-http", lambda c: c.run(pack="http://example.invalid/pack.tar.gz#sha256=" + "0" * 64), 2, ("fix:",)),
    C("pack-bad-sha256", lambda c: c.run("--pack-sha256", "xyz", pack=str(c.tmp / "p.tar.gz")), 2, ("fix:",)),
    C("pack-artifact-no-workflow", lambda c: c.run(pack="artifact:oracle"), 2, ("--pack-workflow", "fix:")),
    C("pack-unknown-scheme", lambda c: c.run(pack="s3://bucket/pack.tgz"), 2, ("fix:",)),
    C("pack-in-candidate-tree", lambda c: c.run(pack=str(c.repo / "oracle")), 2, ("protected", "fix:")),
    C("pack-archive-garbage", lambda c: c.write(c.tmp / "p.tar.gz", b"not a tarball") and
      c.run(pack=str(c.tmp / "p.tar.gz")), 3, ("void", "fix:")),
    C("pack-zip-garbage", lambda c: c.write(c.tmp / "p.zip", b"PK\x03\x04broken") and
      c.run(pack=str(c.tmp / "p.zip")), 3, ("void", "fix:")),
    C("pack-dir-bad-catalog", lambda c: c.catalog(cat("", prop("timeout: .nan"))) and c.run(pack=str(c.pack)), 3,
      ("void", "timeout", "fix:")),
    C("pack-dir-billion-laughs", lambda c: c.catalog(billion_laughs()) and c.run(pack=str(c.pack)), 3,
      ("anchor or alias", "fix:")),
    C("pack-dir-duplicate-freeze", lambda c: c.ledger(json.dumps({"version": 1, "freezes": [
        LEDGER_FREEZE, LEDGER_FREEZE]})) and c.run(pack=str(c.pack)), 3, ("same failure", "fix:")),
    C("pack-dir-no-manifest", lambda c: (c.pack / "manifest.sha256").unlink() or c.run(pack=str(c.pack)), 3,
      ("is missing", "run `verdict-gate manifest write", "commit the result")),
    C("pack-dir-symlink-fixture", lambda c: (c.pack / "fixtures" / "link.json").symlink_to("/etc/hostname") or
      c.run(pack=str(c.pack)), 3, ("link.json", "symbolic link", "fix:")),
    # --- candidate fixtures ----------------------------------------------------------------
    C("fixture-symlink-committed", lambda c: (c.repo / "fixtures" / "rates.json").symlink_to("tax_rates.json") or
      commit_all(c.repo, "link") and c.run(), 3, ("fixtures/rates.json", "symbolic link", "fix:")),
    # --- catalog node that does not exist: a configuration error, not `blocked` -------------
    C("catalog-node-missing", lambda c: node_missing(c), 2,
      ("test_order_totl", "properties/test_order_total.py", "node:", "fix:")),
    # --- digest / doctor / pack build ------------------------------------------------------
    C("digest-missing", lambda c: ["digest", str(c.tmp / "nope")], 2, ("fix:",)),
    C("digest-file", lambda c: c.write(c.tmp / "f", "x") and ["digest", str(c.tmp / "f")], 2, ("fix:",)),
    C("digest-symlink-inside", lambda c: (c.pack / "fixtures" / "l").symlink_to("/etc") or
      ["digest", str(c.pack)], 2, ("symbolic link", "fix:")),
    C("pack-build-out-suffix", lambda c: ["pack", "build", str(c.pack), "--out", str(c.tmp / "p.zip")], 2,
      (".tar.gz", "fix:")),
    C("pack-build-out-inside", lambda c: ["pack", "build", str(c.pack), "--out", str(c.pack / "p.tar.gz")], 2,
      ("inside", "fix:")),
    C("pack-build-not-dir", lambda c: ["pack", "build", str(c.tmp / "nope"), "--out", str(c.tmp / "p.tar.gz")], 2,
      ("fix:",)),
    C("doctor-bad-format", lambda c: ["doctor", "--format", "yaml"], 2, ("invalid choice",)),
]


def node_missing(c: Ctx) -> list[str]:
    """main's reviewed catalog names a test that its file does not have."""
    commit_on_main(c, "oracle/catalog.yaml", CATALOG.replace("node: test_order_total", "node: test_order_totl"))
    _remanifest(c)
    return c.run()


def _remanifest(c: Ctx) -> bool:
    """Commit a manifest matching main's edited catalog (the reviewed path for a catalog change)."""
    git(c.repo, "checkout", "--quiet", "main")
    proc = cli("manifest", "write", str(c.repo / "oracle"))
    assert proc.returncode == 0, proc.stderr
    commit_all(c.repo, "manifest")
    git(c.repo, "checkout", "--quiet", "candidate")
    git(c.repo, "merge", "--quiet", "--ff-only", "main")
    return True


# --- action inputs (the Docker entrypoint, as the runner starts it) ------------------------------
ACTION_CASES: list[tuple[str, dict[str, str], tuple[str, ...]]] = [
    ("action-policy", {"INPUT_POLICY": "loose"}, ("policy", "lenient")),
    ("action-fail-on", {"INPUT_FAIL-ON": "sometimes"}, ("fail-on",)),
    ("action-fetch-history", {"INPUT_FETCH-HISTORY": "maybe"}, ("fetch-history",)),
    ("action-working-directory-outside", {"INPUT_WORKING-DIRECTORY": "../.."}, ("working-directory",)),
    ("action-working-directory-missing", {"INPUT_WORKING-DIRECTORY": "nope"}, ("working-directory",)),
    ("action-pack-sha256", {"INPUT_ORACLE-PACK-SHA256": "not-hex"}, ("sha256",)),
    ("action-no-base", {"GITHUB_EVENT_NAME": "workflow_dispatch"}, ("base",)),
    ("action-bad-event-json", {"GITHUB_EVENT_NAME": "pull_request", "EVENT_TEXT": "{"}, ("event",)),
]


def tree_hashes(*roots: Path) -> dict[str, str]:
    """sha256 of every file (and link target) under ``roots``, skipping git's own bookkeeping."""
    out: dict[str, str] = {}
    for root in roots:
        if not root.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in ("worktrees", "logs", "objects", "__pycache__")]
            for name in filenames:
                path = Path(dirpath) / name
                if path.name in ("index", "ORIG_HEAD", "FETCH_HEAD", "packed-refs") and ".git" in path.parts:
                    continue
                key = str(path)
                out[key] = ("link:" + os.readlink(path)) if path.is_symlink() else \
                    hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def ctx(example_base: Path, tmp_path: Path) -> Ctx:
    repo = tmp_path / "orders"
    shutil.copytree(example_base, repo, symlinks=True)
    git(repo, "checkout", "--quiet", "-b", "candidate")
    pack = tmp_path / "pack"
    shutil.copytree(repo / "oracle", pack)
    (pack / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}')  # cases bring their own freezes
    return Ctx(tmp=tmp_path, repo=repo, pack=pack, out=tmp_path / "out")


def check_clean(proc: subprocess.CompletedProcess[str], code: int, says: tuple[str, ...]) -> None:
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text, text
    assert "internal error" not in text, text
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}:\n{text}"
    for needle in says:
        assert needle in text, f"{needle!r} not in:\n{text}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, ctx: Ctx) -> None:
    argv = case.setup(ctx)
    assert isinstance(argv, list), "a case's setup returns the command line"
    before = tree_hashes(ctx.repo, ctx.pack, ctx.tmp / "ev", ctx.tmp / "base.sig.json")
    proc = cli(*argv, cwd=ctx.cwd or ctx.tmp, env=ctx.env)
    check_clean(proc, case.code, case.says)
    assert tree_hashes(ctx.repo, ctx.pack, ctx.tmp / "ev", ctx.tmp / "base.sig.json") == before, \
        "the user's files changed"
    if case.code == 2 and not argv[0].startswith(("manifest", "pack", "freeze", "digest", "doctor")):
        # a usage error stops before the work: no evidence directory was left behind
        assert not (ctx.out / "summary.md").exists()


@pytest.mark.parametrize("name,env,says", ACTION_CASES, ids=[c[0] for c in ACTION_CASES])
def test_bad_action_input(name: str, env: dict[str, str], says: tuple[str, ...], ctx: Ctx) -> None:
    from test_entrypoint import clean_env

    workspace = ctx.repo
    event = ctx.write(ctx.tmp / "event.json", env.pop("EVENT_TEXT", json.dumps(
        {"pull_request": {"base": {"sha": git(workspace, "rev-parse", "main"), "ref": "main"}}})))
    full = {**clean_env(), "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_OUTPUT": str(ctx.write(ctx.tmp / "output", "")),
            "GITHUB_STEP_SUMMARY": str(ctx.write(ctx.tmp / "summary.md", "")),
            "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
            "RUNNER_TEMP": str(ctx.tmp / "temp"), "INPUT_SARIF-CATEGORY": "verdict-gate",
            "INPUT_FAIL-ON": "blocked,void,incomplete", "INPUT_FETCH-HISTORY": "false",
            "INPUT_WORKING-DIRECTORY": ".", "INPUT_GITHUB-TOKEN": "", **env}
    (ctx.tmp / "temp").mkdir(exist_ok=True)
    before = tree_hashes(ctx.repo)
    proc = subprocess.run([sys.executable, str(ROOT / "entrypoint.py")], cwd=workspace, env=full,
                          capture_output=True, text=True, timeout=300)
    check_clean(proc, 2, says)
    assert "::error" in proc.stdout  # the runner shows it as an annotation
    assert tree_hashes(ctx.repo) == before


def test_fixture_named_with_a_newline(ctx: Ctx) -> None:
    """A committed fixture whose name holds a newline: scored (the digest reads names as bytes) or
    refused naming the file, escaped, with the fix; never a traceback, never a forged log line."""
    ctx.write(ctx.repo / "fixtures" / "bad\nname.json", "{}")
    commit_all(ctx.repo, "a fixture with a newline in its name")
    proc = cli(*ctx.run(), cwd=ctx.tmp)
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text and "internal error" not in text, text
    assert proc.returncode in (1, 3), text
    if proc.returncode == 3:
        assert "bad\\x0aname.json" in text and "fix:" in text, text
    assert "\nname.json" not in text  # never a raw newline from a file name


def test_corpus_size() -> None:
    assert len(CASES) + len(ACTION_CASES) >= 90
