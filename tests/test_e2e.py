"""End to end: `verdict-gate run` as a subprocess on real git repositories built in temp dirs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import github_sarif_rules
import pytest
import yaml

from conftest import cli, commit_all, git, validate_evidence
from verdict_gate.demo import _apply, examples_dir

SPEC = yaml.safe_load((examples_dir() / "candidates.yaml").read_text())
EXIT = {"promoted": 0, "blocked": 1, "void": 3, "incomplete": 4}


def gate(repo: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               "--today", "2026-11-30", *extra)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("cand", SPEC["candidates"], ids=[c["name"] for c in SPEC["candidates"]])
def test_example_candidates(example_repo, tmp_path, cand):
    _apply(example_repo, cand["edits"])
    commit_all(example_repo, cand["description"])
    code, stdout, _ = gate(example_repo, tmp_path / "out")
    docs = validate_evidence(tmp_path / "out")
    verdicts = docs["verdicts.json"]
    assert verdicts["outcome"] == cand["expect"]["outcome"]
    assert code == EXIT[cand["expect"]["outcome"]]
    for pid, (verdict, reason) in cand["expect"].get("verdicts", {}).items():
        assert (verdicts["verdicts"][pid]["verdict"], verdicts["verdicts"][pid]["reason"]) == (verdict, reason)
    assert f"outcome: {verdicts['outcome']}" in stdout
    sarif = docs["results.sarif"]  # the OASIS schema passed in validate_evidence; now GitHub's rules
    assert github_sarif_rules.violations(sarif) == []
    non_pass = [v for v in verdicts["verdicts"].values() if v["verdict"] != "pass"]
    assert len(sarif["runs"][0]["results"]) == max(len(non_pass), 1 if verdicts["outcome"] == "void" else 0)
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert f"**{verdicts['outcome']}**" in summary


def test_evidence_chain(example_repo, tmp_path):
    (example_repo / "README.md").write_text("docs only\n")
    commit_all(example_repo, "docs")
    code, _, _ = gate(example_repo, tmp_path / "out")
    assert code == 0
    docs = validate_evidence(tmp_path / "out")
    verdicts = docs["verdicts.json"]
    import hashlib

    for name, digest in verdicts["evidence"].items():
        assert hashlib.sha256((tmp_path / "out" / name).read_bytes()).hexdigest() == digest
    runs = docs["runs.json"]["runs"]
    tax = runs["prop.tax_round"]
    assert tax["seed"] == 20261130 and tax["counterexample"] == {"amount": 2, "rate": 2500}
    assert tax["trials"] >= tax["hits"] > 0
    assert tax["traceback"][-1]["path"] == "oracle/properties/test_tax_round.py"
    assert docs["base.sig.json"]["replays"][0]["signature"] == tax["signature"]
    assert docs["oracle_edited.json"]["buckets"]["other"] == ["README.md"]
    assert len(git(example_repo, "worktree", "list").splitlines()) == 1  # base and candidate worktrees removed
    sarif_result = docs["results.sarif"]["runs"][0]["results"][0]
    assert sarif_result["ruleId"] == "frozen" and sarif_result["level"] == "warning"
    assert sarif_result["partialFingerprints"]["verdictGate/v1"] == tax["signature"].removeprefix("sha256:")
    assert sarif_result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("oracle/properties/")


def test_expired_freeze_and_strict_policy(example_repo, tmp_path):
    code, _, _ = gate(example_repo, tmp_path / "strict", "--policy", "strict")
    assert code == 1  # one inconclusive: strict needs every claim to pass
    code, _, _ = gate(example_repo, tmp_path / "late", "--today", "2030-01-01")
    assert code == 0  # the example's freeze has no expiry date
    # The same freeze with an expiry date, on the protected base: it holds up to that day, not after.
    ledger_path = example_repo / "oracle" / "freeze_ledger.json"
    ledger = json.loads(ledger_path.read_text())
    ledger["freezes"][0]["expires_on"] = "2026-12-31"
    ledger_path.write_text(json.dumps(ledger))
    assert cli("manifest", "write", str(example_repo / "oracle")).returncode == 0
    commit_all(example_repo, "the freeze expires at the end of the year")
    git(example_repo, "branch", "-f", "main", "HEAD")
    git(example_repo, "commit", "--quiet", "--allow-empty", "-m", "candidate")
    code, stdout, _ = gate(example_repo, tmp_path / "last-day", "--today", "2026-12-31")
    assert code == 0 and "frozen" in stdout
    code, stdout, stderr = gate(example_repo, tmp_path / "expired", "--today", "2027-01-01")
    assert code == 1, stderr
    verdict = validate_evidence(tmp_path / "expired")["verdicts.json"]["verdicts"]["prop.tax_round"]
    assert (verdict["verdict"], verdict["reason"], verdict["row"]) == ("fail", "freeze_expired", "V11")
    assert "2026-12-31" in verdict["detail"]


def test_freeze_on_an_unrelated_base_is_base_mismatch(example_repo, tmp_path):
    ledger_path = example_repo / "oracle" / "freeze_ledger.json"
    ledger = json.loads(ledger_path.read_text())
    ledger["freezes"][0]["base_revision"] = "0" * 40  # not a commit of this repository
    ledger_path.write_text(json.dumps(ledger))
    assert cli("manifest", "write", str(example_repo / "oracle")).returncode == 0
    commit_all(example_repo, "a ledger naming a foreign base")
    git(example_repo, "branch", "-f", "main", "HEAD")
    git(example_repo, "commit", "--quiet", "--allow-empty", "-m", "candidate")
    code, stdout, stderr = gate(example_repo, tmp_path / "out")
    assert code == 1 and "base_mismatch" in stdout, stderr


# --- bad input: one clear message, exit 2 (or 3 for an untrusted pack), no traceback ---------


def test_missing_base_ref(example_repo, tmp_path):
    proc = cli("run", "--repo", str(example_repo), "--base", "nope", "--pack", "git:main:oracle", "--out",
               str(tmp_path / "o"))
    assert proc.returncode == 2 and "'nope'" in proc.stderr and "fix:" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_pack_path_missing(example_repo, tmp_path):
    proc = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", str(tmp_path / "none"), "--out",
               str(tmp_path / "o"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr


def test_not_a_repository(tmp_path):
    proc = cli("run", "--repo", str(tmp_path), "--base", "main", "--pack", "x", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "not a git work tree" in proc.stderr


def test_shallow_clone_names_fetch_depth(example_repo, tmp_path):
    commit_all(example_repo, "candidate")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "--quiet", "--depth", "1", "--branch", "candidate", f"file://{example_repo}", str(clone))
    git(clone, "fetch", "--quiet", "--depth", "1", "origin", "main:main")
    proc = cli("run", "--repo", str(clone), "--base", "main", "--pack", "git:main:oracle", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "fetch-depth: 0" in proc.stderr and "shallow" in proc.stderr


def test_symlink_in_repository_fixtures(example_repo, tmp_path):
    (example_repo / "fixtures" / "link.json").symlink_to("/etc/hostname")
    commit_all(example_repo, "a symlinked fixture")
    code, stdout, _ = gate(example_repo, tmp_path / "o")
    void_reason = validate_evidence(tmp_path / "o")["verdicts.json"]["void_reason"]
    assert code == 3 and "symbolic link" in void_reason and void_reason.startswith(
        "the candidate's fixtures cannot be digested: fixtures/link.json")
    assert "/tmp" not in void_reason
    assert len(git(example_repo, "worktree", "list").splitlines()) == 1  # removed on the error path too


def test_a_pack_directory_inside_the_candidate_tree_is_refused(example_repo, tmp_path):
    proc = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", str(example_repo / "oracle"),
               "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "candidate's own tree" in proc.stderr and "git:origin/main:oracle" in proc.stderr


def test_out_through_a_symlink_is_refused(example_repo, tmp_path):
    (tmp_path / "victim").mkdir()
    (tmp_path / "evidence").symlink_to(tmp_path / "victim")
    code, _, stderr = gate(example_repo, tmp_path / "evidence")
    assert code == 2 and "symbolic link" in stderr and not list((tmp_path / "victim").iterdir())


def test_out_is_a_file_is_not_overwritten(example_repo, tmp_path):
    target = tmp_path / "evidence"
    target.write_text("user data")
    code, _, stderr = gate(example_repo, target)
    assert code == 2 and "not a directory" in stderr and target.read_text() == "user data"


def pack_edit(repo: Path, edit, *, manifest: bool = True) -> None:
    """Change the pack on main (the protected side) and commit; the candidate branch follows."""
    edit(repo / "oracle")
    if manifest:
        # The manifest writer itself, not `verdict-gate manifest write`, which refuses to seal an invalid
        # catalog or ledger: these packs stand for ones sealed by hand or by another tool, which `run` voids.
        from verdict_gate.pack.build import write_manifest

        write_manifest(repo / "oracle")
    commit_all(repo, "pack change")
    git(repo, "branch", "-f", "main", "HEAD")


@pytest.mark.parametrize(("edit", "manifest", "code", "needle"), [
    (lambda d: (d / "catalog.yaml").write_text("version: 1\nproperties: [}"), True, 3, "not valid YAML"),
    (lambda d: (d / "freeze_ledger.json").write_text('{"version": 1}'), True, 3, "'freezes' is a required property"),
    (lambda d: (d / "fixtures" / "orders.json").write_text("[]"), False, 3, "changed: fixtures/orders.json"),
    (lambda d: (d / "manifest.sha256").unlink(), False, 3, "manifest.sha256: is missing"),
    (lambda d: (d / "catalog.yaml").write_text((d / "catalog.yaml").read_text().replace(
        "test_order_total.py", "test_gone.py")), True, 3, "not a file in the pack"),
    (lambda d: (d / "catalog.yaml").write_text((d / "catalog.yaml").read_text().replace(
        "    oracle: properties/test_tax_round.py", "    oracel: properties/test_tax_round.py")), True, 3,
     "'oracel' was unexpected"),
    (lambda d: (d / "catalog.yaml").write_text((d / "catalog.yaml").read_text().replace(
        "pack_root: oracle", "pack_root: checks")), True, 2, "pack_root: 'checks'"),
], ids=["malformed-catalog", "malformed-ledger", "manifest-mismatch", "missing-manifest", "catalog-names-no-file",
        "misspelt-key", "pack-root-elsewhere"])
def test_bad_pack(example_repo, tmp_path, edit, manifest, code, needle):
    pack_edit(example_repo, edit, manifest=manifest)
    got, _, stderr = gate(example_repo, tmp_path / "o")
    assert got == code
    if code == 3:
        verdicts = validate_evidence(tmp_path / "o")["verdicts.json"]
        assert verdicts["outcome"] == "void" and needle in verdicts["void_reason"]
        assert verdicts["promoted"] is False
    else:
        assert needle in stderr and "fix:" in stderr


def test_a_pack_directory_is_copied_not_scored_in_place(example_repo, tmp_path):
    pack = tmp_path / "pack"
    shutil.copytree(example_repo / "oracle", pack)
    before = {p: p.read_bytes() for p in pack.rglob("*") if p.is_file()}
    proc = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", str(pack), "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    assert {p: p.read_bytes() for p in pack.rglob("*") if p.is_file()} == before
    assert not list(pack.rglob("__pycache__"))


def test_committed_example_ledger_comes_from_a_real_replay(example_base):
    """examples/orders/freeze_ledger.json is what `verdict-gate replay` + `freeze` produce (not typed in)."""
    built = json.loads((example_base / "oracle" / "freeze_ledger.json").read_text())
    committed = json.loads((examples_dir() / "freeze_ledger.json").read_text())
    assert built == committed
    first = git(example_base, "rev-list", "--max-parents=0", "HEAD")
    assert committed["freezes"][0]["base_revision"] == first


def test_node_typo_names_the_property(example_repo, tmp_path):
    def typo(d: Path) -> None:
        (d / "catalog.yaml").write_text((d / "catalog.yaml").read_text().replace(
            "node: test_order_total", "node: test_order_totl"))

    pack_edit(example_repo, typo)
    commit_all(example_repo, "candidate")
    code, stdout, stderr = gate(example_repo, tmp_path / "o")
    # A node that names no test is the catalog's error (issue 11): exit 2 before any property runs (issue 40),
    # naming the property, its file, the node, the closest name and the fix; no verdicts are written.
    assert code == 2, stderr
    assert "$.properties[0] 'prop.order_total': node 'test_order_totl': properties/test_order_total.py defines " \
           "no test_order_totl (did you mean test_order_total?)" in stderr
    assert "running" not in stderr
    assert "fix: set each property's node:" in stderr
    assert not (tmp_path / "o" / "verdicts.json").exists()


def test_no_ledger_means_no_freezes(example_repo, tmp_path):
    pack_edit(example_repo, lambda d: (d / "freeze_ledger.json").unlink())
    commit_all(example_repo, "candidate")
    code, stdout, _ = gate(example_repo, tmp_path / "o")
    assert code == 1 and "no_freeze" in stdout


def test_failure_cause_is_shown(example_repo, tmp_path):
    commit_all(example_repo, "candidate")
    code, stdout, _ = gate(example_repo, tmp_path / "o")
    expected = 'run: AssertionError: tax_cents(2, 2500) = 0, expected 1 [counterexample {"amount": 2, "rate": 2500}]'
    assert expected in stdout
    assert "tax_cents(2, 2500)" in (tmp_path / "o" / "summary.md").read_text()
