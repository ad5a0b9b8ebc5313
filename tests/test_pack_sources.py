"""Pack sources: the one parser, pinned https downloads and GitHub artifacts, over real loopback
HTTP (tests/http_fakes.py) with injected faults. Every fault ends in a verified pack or a clear
error with the right exit code; the token never shows in output or evidence."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from http_fakes import FakeGitHub, Fault, zip_bytes

from conftest import cli, commit_all, git, validate_evidence
from verdict_gate import pack
from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.demo import examples_dir
from verdict_gate.pack import build as packbuild
from verdict_gate.pack import http as fetch

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

REPO = "octo/shop"
WORKFLOW = "oracle-pack.yml"
# Short waits between retries; the timeouts only guard against a hang (the fakes answer at once), so they are
# long enough that a busy machine never trips one and retries where the test expects none.
FAST = fetch.Limits(connect_timeout=30.0, read_timeout=30.0, retries=3, backoff=0.02, max_wait=5.0)
PIN = "a" * 64


@pytest.fixture(scope="module")
def pack_tgz(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The example oracle pack as `verdict-gate pack build` writes it."""
    work = tmp_path_factory.mktemp("packsrc")
    shutil.copytree(examples_dir() / "repo" / "oracle", work / "oracle")
    return packbuild.build(work / "oracle", work / "oracle-pack.tar.gz").path.read_bytes()


@pytest.fixture
def gh():
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        yield fake


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def next_work(tmp_path: Path) -> Path:
    work = tmp_path / f"work{len(list(tmp_path.glob('work*')))}"
    work.mkdir()
    return work


def load(source: str, tmp_path: Path, env: dict[str, str] | None = None, *, work: Path | None = None,
         **opts) -> pack.Pack:
    options = pack.PackOptions(limits=opts.pop("limits", FAST), **opts)
    return pack.load(source, tmp_path, work or next_work(tmp_path), options=options, env=env or {})


def load_fails(source: str, tmp_path: Path, env: dict[str, str] | None = None, **opts) -> GateError:
    work = next_work(tmp_path)
    with pytest.raises(GateError) as info:
        load(source, tmp_path, env, work=work, **opts)
    assert "fix:" in str(info.value)
    assert not (work / "pack").exists(), "no partial pack may remain"
    return info.value


# --- the parser -------------------------------------------------------------------------


def test_parse_source_forms(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "p.tar.gz").write_bytes(b"")
    assert pack.parse_source(str(tmp_path / "dir")).kind == "directory"
    assert pack.parse_source(str(tmp_path / "p.tar.gz")).kind == "archive"
    assert pack.parse_source(str(tmp_path / "p.tar.gz"), pack.PackOptions(sha256=PIN)).pin == PIN
    git_src = pack.parse_source("git:origin/main:oracle/")
    assert (git_src.kind, git_src.rev, git_src.subdir) == ("git", "origin/main", "oracle")
    url = pack.parse_source(f"https://user:pw@example.org/p.tar.gz?sig=secret#sha256={PIN.upper()}")
    assert (url.kind, url.pin, url.url) == ("url", PIN, "https://user:pw@example.org/p.tar.gz?sig=secret")
    assert url.display == f"https://example.org/p.tar.gz?sig=…#sha256={PIN}"  # no credentials in output
    assert pack.parse_source("https://example.org/p.tgz", pack.PackOptions(sha256="sha256:" + PIN)).pin == PIN
    assert pack.parse_source("http://127.0.0.1:8080/p.tgz", pack.PackOptions(sha256=PIN)).kind == "url"
    art = pack.parse_source("artifact:oracle-pack", pack.PackOptions(workflow=WORKFLOW, branch="main"))
    assert (art.kind, art.name) == ("artifact", "oracle-pack")


@pytest.mark.parametrize(("text", "opts", "needle"), [
    ("", {}, "is empty"),
    ("https://example.org/p.tar.gz", {}, "without a sha256 pin"),
    ("https://example.org/p.tar.gz#sha256=1234", {}, "not 64 hexadecimal digits"),
    ("https://example.org/p.tar.gz#md5=00", {}, "only #sha256=HEX"),
    (f"https://example.org/p.tar.gz#sha256={PIN}", {"sha256": "b" * 64}, "two different pins"),
    (f"http://example.org/p.tar.gz#sha256={PIN}", {}, "plain http"),
    (f"ftp://example.org/p.tar.gz#sha256={PIN}", {}, "unsupported scheme"),
    ("artifact:oracle-pack", {}, "needs the workflow"),
    ("artifact:", {"workflow": WORKFLOW}, "does not name an artifact"),
    ("artifact:a/b", {"workflow": WORKFLOW}, "does not name an artifact"),
    ("git:main:oracle", {"workflow": WORKFLOW}, "apply only to artifact:NAME"),
    ("git:main:oracle", {"sha256": PIN}, "does not apply to a git: source"),
    ("git::oracle", {}, "git:REV:DIR"),
    ("/nonexistent/pack", {}, "does not exist"),
])
def test_parse_source_errors(text, opts, needle):
    with pytest.raises(GateError) as info:
        pack.parse_source(text, pack.PackOptions(**opts))
    assert info.value.exit_code == 2 and needle in str(info.value) and "fix:" in str(info.value)


def test_a_pin_on_a_directory_is_refused_and_a_local_archive_pin_is_checked(tmp_path, pack_tgz):
    (tmp_path / "dir").mkdir()
    assert "does not apply to a directory" in str(load_fails(str(tmp_path / "dir"), tmp_path, sha256=PIN))
    archive = tmp_path / "p.tar.gz"
    archive.write_bytes(pack_tgz)
    assert load(str(archive), tmp_path, sha256=sha(pack_tgz)).sha256 == sha(pack_tgz)
    err = load_fails(str(archive), tmp_path, sha256=PIN)
    assert isinstance(err, VoidError) and f"not the pinned {PIN}" in str(err)


# --- pinned https (loopback http here) ------------------------------------------------------


def test_pinned_url_loads_and_records_what_it_fetched(gh, tmp_path, pack_tgz):
    url = gh.put_blob("/packs/oracle.tar.gz", pack_tgz)
    p = load(f"{url}#sha256={sha(pack_tgz)}", tmp_path)
    assert p.origin == {"source": f"{url}#sha256={sha(pack_tgz)}", "kind": "url", "sha256": sha(pack_tgz)}
    assert {c.id for c in p.catalog.properties} == {"prop.order_total", "prop.tax_round"}
    assert len(gh.storage.requests("/packs")) == 1


@pytest.mark.parametrize("fault", [
    Fault("/packs", status=503),
    Fault("/packs", status=502, times=2),
    Fault("/packs", kind="reset"),
    Fault("/packs", kind="truncate"),
], ids=["503-then-ok", "502-twice-then-ok", "reset-mid-body", "truncated-body"])
def test_transient_faults_are_retried_to_a_verified_pack(gh, tmp_path, pack_tgz, fault):
    url = gh.put_blob("/packs/oracle.tar.gz", pack_tgz)
    gh.storage.faults.append(fault)
    p = load(f"{url}#sha256={sha(pack_tgz)}", tmp_path)
    assert p.sha256 == sha(pack_tgz)
    assert len(gh.storage.requests("/packs")) == (fault.times or 1) + 1


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every ``time.sleep`` of the test's process, recorded instead of slept (the retry's waits): what the
    client asked to wait, independent of how fast the machine is."""
    asked: list[float] = []
    monkeypatch.setattr(time, "sleep", asked.append)
    return asked


def test_429_retry_after_is_honoured(gh, tmp_path, pack_tgz, sleeps):
    url = gh.put_blob("/packs/oracle.tar.gz", pack_tgz)
    gh.storage.faults.append(Fault("/packs", status=429, headers={"Retry-After": "1"}))
    load(f"{url}#sha256={sha(pack_tgz)}", tmp_path)
    assert sleeps == [1.0]  # Retry-After, not the backoff (0.02 s)
    assert len(gh.storage.requests("/packs")) == 2


def test_a_retry_after_longer_than_the_gate_waits_is_an_error_not_a_stall(gh, tmp_path, pack_tgz, sleeps):
    url = gh.put_blob("/packs/oracle.tar.gz", pack_tgz)
    gh.storage.faults.append(Fault("/packs", status=503, headers={"Retry-After": "3600"}))
    err = load_fails(f"{url}#sha256={sha(pack_tgz)}", tmp_path)
    assert sleeps == []  # it never waited
    assert err.exit_code == 2 and "asked to wait 3600 s" in str(err)


@pytest.mark.parametrize(("fault", "needle"), [
    (Fault("/packs", status=503, times=None), "answered HTTP 503 after 4 attempts"),
    (Fault("/packs", kind="truncate", times=None), "cut off on every one of 4 attempts"),
    (Fault("/packs", kind="reset", times=None), "cut off on every one of 4 attempts"),
    (Fault("/packs", status=404, times=None), "answered HTTP 404"),
], ids=["503-forever", "truncated-forever", "reset-forever", "404"])
def test_persistent_failures_end_in_a_clear_error(gh, tmp_path, pack_tgz, fault, needle):
    url = gh.put_blob("/packs/oracle.tar.gz", pack_tgz)
    gh.storage.faults.append(fault)
    err = load_fails(f"{url}#sha256={sha(pack_tgz)}", tmp_path)
    assert type(err) is GateError and err.exit_code == 2 and needle in str(err)
    assert len(gh.storage.requests("/packs")) == (1 if fault.status == 404 and fault.kind == "status" else 4)
    assert not list(tmp_path.glob("work*/pack.download")), "a failed download leaves no file behind"


def test_wrong_bytes_are_void_and_never_retried_or_extracted(gh, tmp_path, pack_tgz):
    url = gh.put_blob("/packs/oracle.tar.gz", pack_tgz)
    gh.storage.faults.append(Fault("/packs", kind="wrong_bytes", times=None))
    err = load_fails(f"{url}#sha256={sha(pack_tgz)}", tmp_path)
    assert isinstance(err, VoidError) and err.exit_code == 3 and f"not the pinned {sha(pack_tgz)}" in str(err)
    assert len(gh.storage.requests("/packs")) == 1
    assert not list(tmp_path.glob("work*/pack*")), "nothing downloaded or extracted remains"


def test_a_download_past_the_cap_is_void(gh, tmp_path, pack_tgz):
    url = gh.put_blob("/packs/oracle.tar.gz", pack_tgz)
    small = fetch.Limits(**{**vars(FAST), "max_download_bytes": len(pack_tgz) - 1})
    err = load_fails(f"{url}#sha256={sha(pack_tgz)}", tmp_path, limits=small)
    assert isinstance(err, VoidError) and "more than the cap" in str(err)


def test_a_body_without_a_length_is_capped_while_it_streams(gh, tmp_path, pack_tgz):
    url = gh.put_blob("/packs/oracle.tar.gz", pack_tgz)
    gh.storage.faults.append(Fault("/packs", kind="no_length", times=None))
    assert load(f"{url}#sha256={sha(pack_tgz)}", tmp_path).sha256 == sha(pack_tgz)
    small = fetch.Limits(**{**vars(FAST), "max_download_bytes": len(pack_tgz) - 1})
    err = load_fails(f"{url}#sha256={sha(pack_tgz)}", tmp_path, limits=small)
    assert isinstance(err, VoidError) and "sent more than the cap" in str(err)


def test_a_pack_failing_verification_after_extraction_leaves_nothing(gh, tmp_path, pack_tgz):
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(pack_tgz)) as src, tarfile.open(fileobj=buf, mode="w:gz") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read()
            if member.name == "fixtures/orders.json":
                data = b"[]"  # changed after the manifest was written
                member.size = len(data)
            dst.addfile(member, io.BytesIO(data))
    url = gh.put_blob("/packs/tampered.tar.gz", buf.getvalue())
    err = load_fails(f"{url}#sha256={sha(buf.getvalue())}", tmp_path)
    assert isinstance(err, VoidError) and "changed: fixtures/orders.json" in str(err)


def test_a_connection_refused_is_retried_then_a_gate_error(tmp_path):
    with FakeGitHub() as gone:
        url = gone.storage.url + "/p.tar.gz"
    err = load_fails(f"{url}#sha256={PIN}", tmp_path)  # the server has stopped: nothing listens
    assert type(err) is GateError and "could not be fetched after 4 attempts" in str(err)


# --- GitHub artifacts ---------------------------------------------------------------------


def artifact(gh: FakeGitHub, data: bytes, *, name: str = "oracle-pack", **run_kw) -> tuple[dict, dict]:
    run = gh.add_run(REPO, WORKFLOW, **run_kw)
    return run, gh.add_artifact(run, name, data)


def load_artifact(gh: FakeGitHub, tmp_path: Path, name: str = "oracle-pack", env: dict | None = None,
                  **opts) -> pack.Pack:
    return load(f"artifact:{name}", tmp_path, env if env is not None else gh.env(REPO), workflow=WORKFLOW, **opts)


def fail_artifact(gh: FakeGitHub, tmp_path: Path, name: str = "oracle-pack", env: dict | None = None,
                  **opts) -> GateError:
    return load_fails(f"artifact:{name}", tmp_path, env if env is not None else gh.env(REPO), workflow=WORKFLOW,
                      **opts)


def assert_token_only_to_api(gh: FakeGitHub) -> None:
    api = gh.api.requests()
    assert api and all(s.header("Authorization") == f"Bearer {gh.token}" for s in api)
    assert all(s.header("Authorization") is None for s in gh.storage.requests())


def test_artifact_holding_a_built_pack_archive(gh, tmp_path, pack_tgz):
    run, art = artifact(gh, zip_bytes({"oracle-pack.tar.gz": pack_tgz}))
    p = load_artifact(gh, tmp_path)
    assert p.origin["artifact"] == {
        "repository": REPO, "workflow": WORKFLOW, "branch": "main", "name": "oracle-pack",
        "artifact_id": art["id"], "run_id": run["id"], "head_sha": run["head_sha"],
        "created_at": art["created_at"], "size_in_bytes": art["size_in_bytes"]}
    assert p.origin["sha256"] == p.sha256 == art["digest"].removeprefix("sha256:")
    assert p.origin["inner_archive"] == {"name": "oracle-pack.tar.gz", "sha256": sha(pack_tgz)}
    assert_token_only_to_api(gh)
    # The branch came from the API: the repository's default branch.
    assert gh.api.requests(f"/repos/{REPO}")[0].path == f"/repos/{REPO}"
    assert "branch=main" in gh.api.requests("/runs?")[0].path and "status=success" in gh.api.requests("/runs?")[0].path


def test_artifact_holding_the_pack_files(gh, tmp_path):
    oracle = examples_dir() / "repo" / "oracle"
    artifact(gh, zip_bytes({p.relative_to(oracle).as_posix(): p.read_bytes()
                            for p in sorted(oracle.rglob("*")) if p.is_file()}))
    p = load_artifact(gh, tmp_path)
    assert "inner_archive" not in p.origin and len(p.manifest) == 5


def test_the_default_branch_is_asked_from_the_api(gh, tmp_path, pack_tgz):
    gh.add_repo(REPO, default_branch="trunk")
    artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}), branch="main")  # not the default branch: ignored
    _, art = artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}), branch="trunk")
    artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}), branch="feature")
    assert load_artifact(gh, tmp_path).origin["artifact"]["artifact_id"] == art["id"]
    assert load_artifact(gh, tmp_path, branch="feature").origin["artifact"]["branch"] == "feature"


def test_the_newest_successful_trusted_run_wins(gh, tmp_path, pack_tgz):
    data = zip_bytes({"p.tar.gz": pack_tgz})
    artifact(gh, data)  # older, fine
    _, newest = artifact(gh, data, event="workflow_dispatch")
    artifact(gh, data, conclusion="failure")
    # A fork's pull request from its own branch "main": same head branch, other repository.
    artifact(gh, data, event="pull_request", head_repository="mallory/shop")
    artifact(gh, data, event="pull_request_target")
    p = load_artifact(gh, tmp_path)
    assert p.origin["artifact"]["artifact_id"] == newest["id"]


def test_runs_are_paginated(gh, tmp_path, pack_tgz):
    _, art = artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}))
    for _ in range(105):  # newer, untrusted runs fill page 1 (per_page=100)
        gh.add_run(REPO, WORKFLOW, event="pull_request", head_repository="mallory/shop")
    assert load_artifact(gh, tmp_path).origin["artifact"]["artifact_id"] == art["id"]
    pages = gh.api.requests("/workflows/")
    assert len(pages) == 2 and "page=2" in pages[1].path


def test_artifacts_are_paginated_and_filtered_by_name_client_side(tmp_path, pack_tgz):
    with FakeGitHub(name_filter=False) as gh:  # like an API without the `name` filter
        run = gh.add_run(REPO, WORKFLOW)
        target = gh.add_artifact(run, "oracle-pack", zip_bytes({"p.tar.gz": pack_tgz}))
        for i in range(130):
            gh.add_artifact(run, f"coverage-{i}", b"PK\x05\x06" + bytes(18))
        assert load_artifact(gh, tmp_path).origin["artifact"]["artifact_id"] == target["id"]
        listing = gh.api.requests("/artifacts?")
        assert len(listing) == 2 and "page=2" in listing[1].path


def test_expired_artifacts_are_skipped(gh, tmp_path, pack_tgz):
    data = zip_bytes({"p.tar.gz": pack_tgz})
    _, live = artifact(gh, data)
    run = gh.add_run(REPO, WORKFLOW)
    gh.add_artifact(run, "oracle-pack", data, expired=True)
    assert load_artifact(gh, tmp_path).origin["artifact"]["artifact_id"] == live["id"]


def test_only_expired_artifacts_is_an_error_naming_them(gh, tmp_path, pack_tgz):
    run = gh.add_run(REPO, WORKFLOW)
    dead = gh.add_artifact(run, "oracle-pack", zip_bytes({"p.tar.gz": pack_tgz}), expired=True)
    err = fail_artifact(gh, tmp_path)
    assert err.exit_code == 2
    text = str(err)
    assert f"expired: {dead['id']} (run {run['id']}" in text and f"runs searched: {run['id']}" in text
    assert f"workflow {WORKFLOW} on branch main of {REPO}" in text


def test_a_missing_artifact_names_what_was_searched(gh, tmp_path, pack_tgz):
    artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}), name="something-else")
    artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}), event="pull_request", head_repository="mallory/shop")
    err = fail_artifact(gh, tmp_path)
    assert "no unexpired artifact named 'oracle-pack'" in str(err) and "skipped: run" in str(err)
    assert "from mallory/shop" in str(err)


def test_two_artifacts_of_the_same_name_in_one_run_are_ambiguous(gh, tmp_path, pack_tgz):
    run, first = artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}))
    second = gh.add_artifact(run, "oracle-pack", zip_bytes({"p.tar.gz": pack_tgz}))
    err = fail_artifact(gh, tmp_path)
    assert "is ambiguous" in str(err) and str(first["id"]) in str(err) and str(second["id"]) in str(err)
    assert not gh.api.requests("/zip"), "nothing is downloaded when the choice is ambiguous"


@pytest.mark.parametrize(("where", "fault"), [
    ("api", Fault("/runs?", status=503)),
    ("api", Fault("/artifacts?", status=429, headers={"Retry-After": "0"})),
    ("api", Fault("/artifacts?", kind="truncate")),
    ("api", Fault("/zip", status=500)),
    ("storage", Fault("/artifacts/", status=503)),
    ("storage", Fault("/artifacts/", kind="reset")),
    ("storage", Fault("/artifacts/", kind="truncate")),
], ids=["runs-503", "artifacts-429", "artifacts-truncated", "download-500", "storage-503", "storage-reset",
        "storage-truncated"])
def test_artifact_faults_are_retried_to_a_verified_pack(gh, tmp_path, pack_tgz, where, fault):
    artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}))
    getattr(gh, where).faults.append(fault)
    p = load_artifact(gh, tmp_path)
    assert p.origin["inner_archive"]["sha256"] == sha(pack_tgz)
    assert fault.hits == 1
    assert_token_only_to_api(gh)


def test_a_cut_off_download_starts_again_from_a_fresh_redirect(tmp_path, pack_tgz):
    with FakeGitHub(link_uses=1) as gh:  # a storage link serves one download: reusing it gets 403
        artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}))
        gh.storage.faults.append(Fault("/artifacts/", kind="truncate"))
        p = load_artifact(gh, tmp_path)
        assert p.origin["inner_archive"]["sha256"] == sha(pack_tgz)
        assert len(gh.api.requests("/zip")) == 2 and len(gh.storage.requests("/artifacts/")) == 2


def test_the_storage_host_never_gets_the_token(gh, tmp_path, pack_tgz):
    # The fake storage answers 401 to any Authorization header: a forwarded token fails the load.
    artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}))
    load_artifact(gh, tmp_path)
    downloads = gh.storage.requests("/artifacts/")
    assert len(downloads) == 1 and downloads[0].header("Authorization") is None
    assert "se=" in downloads[0].path and "sig=" in downloads[0].path


def test_a_netrc_entry_neither_replaces_the_token_nor_reaches_the_storage_host(gh, tmp_path, pack_tgz, monkeypatch):
    # requests lets ~/.netrc override an Authorization *header*; the token goes in an auth hook instead.
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login mallory password hunter2\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}))
    load_artifact(gh, tmp_path)
    assert_token_only_to_api(gh)


def test_wrong_artifact_bytes_are_void(gh, tmp_path, pack_tgz):
    artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}))
    gh.storage.faults.append(Fault("/artifacts/", kind="wrong_bytes", times=None))
    err = fail_artifact(gh, tmp_path)
    assert isinstance(err, VoidError) and "not the digest the API reports" in str(err)
    assert len(gh.storage.requests("/artifacts/")) == 1


def test_an_artifact_pin_is_checked(gh, tmp_path, pack_tgz):
    data = zip_bytes({"p.tar.gz": pack_tgz})
    run = gh.add_run(REPO, WORKFLOW)
    gh.add_artifact(run, "oracle-pack", data, digest=None)  # an older artifact: no digest from the API
    assert load_artifact(gh, tmp_path, sha256=sha(data)).sha256 == sha(data)
    err = fail_artifact(gh, tmp_path, sha256=PIN)
    assert isinstance(err, VoidError) and "not the pinned sha256" in str(err)


def test_an_artifact_expiring_before_download_is_a_clear_error(gh, tmp_path, pack_tgz):
    _, art = artifact(gh, zip_bytes({"p.tar.gz": pack_tgz}))
    gh.api.faults.append(Fault("/zip", status=410, body=b'{"message": "Artifact has expired"}'))
    err = fail_artifact(gh, tmp_path)
    assert "answered HTTP 410: Artifact has expired" in str(err) and "re-run the workflow" in str(err)


def test_a_hostile_artifact_is_void_with_the_member_named(gh, tmp_path):
    artifact(gh, zip_bytes({"catalog.yaml": b"version: 1", "../../escape.py": b"import os"}))
    err = fail_artifact(gh, tmp_path)
    assert isinstance(err, VoidError) and "'../../escape.py'" in str(err)
    assert not (tmp_path / "escape.py").exists()


@pytest.mark.parametrize(("env", "needle"), [
    ({"GITHUB_API_URL": "X", "GITHUB_REPOSITORY": REPO}, "GITHUB_TOKEN"),
    ({"GITHUB_TOKEN": "ghs_wrong"}, "needs the repository"),
])
def test_missing_token_or_repository(gh, tmp_path, env, needle):
    env = {k: (gh.api.url if v == "X" else v) for k, v in env.items()}
    err = fail_artifact(gh, tmp_path, env=env)
    assert err.exit_code == 2 and needle in str(err)
    assert not gh.api.requests(), "nothing is asked without a token and a repository"


def test_a_refused_token_names_the_fix_and_is_never_echoed(gh, tmp_path):
    wrong = "ghs_WRONG_secret_value_1234"
    err = fail_artifact(gh, tmp_path, env=gh.env(REPO, token=wrong))
    assert "answered HTTP 401: Bad credentials" in str(err) and "GITHUB_TOKEN" in err.fix
    assert wrong not in str(err)


def test_a_server_echoing_the_token_is_scrubbed(gh, tmp_path):
    gh.api.faults.append(Fault("/repos/", status=400, times=None,
                               body=json.dumps({"message": f"bad token {gh.token}"}).encode()))
    err = fail_artifact(gh, tmp_path)
    assert gh.token not in str(err) and "bad token ***" in str(err)


def test_a_next_link_to_another_host_never_gets_the_token(gh, tmp_path, pack_tgz):
    for _ in range(101):
        gh.add_run(REPO, WORKFLOW, event="pull_request", head_repository="mallory/shop")
    gh.next_link_origin = gh.storage.url  # page 2 "lives" on another host
    err = fail_artifact(gh, tmp_path)
    assert "not on the GitHub API host" in str(err)
    assert not gh.storage.requests(), "the foreign host got no request at all"


def test_an_explicit_repository_option_wins_over_the_environment(gh, tmp_path, pack_tgz):
    run = gh.add_run("octo/other", WORKFLOW)
    art = gh.add_artifact(run, "oracle-pack", zip_bytes({"p.tar.gz": pack_tgz}))
    p = load_artifact(gh, tmp_path, repository="octo/other")
    assert p.origin["artifact"]["repository"] == "octo/other" and p.origin["artifact"]["artifact_id"] == art["id"]


# --- end to end: `verdict-gate run` with a fetched pack --------------------------------------


@pytest.fixture
def repo_pack_tgz(example_repo, tmp_path) -> bytes:
    """The example repository's own oracle (with its replayed freeze), built as a pack archive."""
    shutil.copytree(example_repo / "oracle", tmp_path / "repo-oracle")
    return packbuild.build(tmp_path / "repo-oracle", tmp_path / "repo-oracle.tar.gz").path.read_bytes()


def read_outputs(out: Path, proc) -> str:
    return proc.stdout + proc.stderr + "".join(p.read_text() for p in out.iterdir() if p.is_file())


@pytest.mark.slow
def test_run_with_an_artifact_pack_records_it_and_never_shows_the_token(example_repo, tmp_path, repo_pack_tgz):
    with FakeGitHub() as gh:
        run, art = artifact(gh, zip_bytes({"oracle-pack.tar.gz": repo_pack_tgz}))
        out = tmp_path / "out"
        proc = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", "artifact:oracle-pack",
                   "--pack-workflow", WORKFLOW, "--out", str(out), "--today", "2026-11-30", env=gh.env(REPO))
        assert_token_only_to_api(gh)
    assert proc.returncode == 0, proc.stderr
    verdicts = validate_evidence(out)["verdicts.json"]
    assert verdicts["outcome"] == "promoted"
    assert verdicts["pack"]["kind"] == "artifact" and verdicts["pack"]["source"] == "artifact:oracle-pack"
    assert verdicts["pack"]["artifact"]["artifact_id"] == art["id"]
    assert verdicts["pack"]["artifact"]["run_id"] == run["id"]
    assert verdicts["pack"]["sha256"] == art["digest"].removeprefix("sha256:")
    assert verdicts["pack"]["inner_archive"]["sha256"] == sha(repo_pack_tgz)
    assert verdicts["counts"] == {"pass": 1, "fail": 0, "inconclusive": 1}
    summary = (out / "summary.md").read_text()
    assert f"artifact oracle-pack {art['id']} of run {run['id']}" in summary and verdicts["pack"]["sha256"] in summary
    assert f"run {run['id']}" in proc.stdout
    assert gh.token not in read_outputs(out, proc)


def test_run_with_wrong_pinned_bytes_is_void_with_evidence(example_repo, tmp_path, pack_tgz):
    with FakeGitHub() as gh:
        url = gh.put_blob("/oracle-pack.tar.gz", pack_tgz)
        out = tmp_path / "out"
        proc = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", url, "--pack-sha256", PIN,
                   "--out", str(out), env=gh.env(REPO))
    assert proc.returncode == 3, proc.stderr
    verdicts = validate_evidence(out)["verdicts.json"]
    assert verdicts["outcome"] == "void" and f"not the pinned {PIN}" in verdicts["void_reason"]
    assert verdicts["pack"] == {"source": f"{url}#sha256={PIN}", "kind": "url"}
    assert "Traceback" not in proc.stderr and gh.token not in read_outputs(out, proc)


def test_run_with_a_failing_api_exits_2_without_the_token(example_repo, tmp_path):
    with FakeGitHub() as gh:
        gh.api.faults.append(Fault("/repos/", status=403, times=None,
                                   body=json.dumps({"message": f"token {gh.token} lacks actions: read"}).encode()))
        out = tmp_path / "out"
        proc = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", "artifact:oracle-pack",
                   "--pack-workflow", WORKFLOW, "--out", str(out), env=gh.env(REPO))
    assert proc.returncode == 2 and "answered HTTP 403: token *** lacks" in proc.stderr and "fix:" in proc.stderr
    assert "Traceback" not in proc.stderr and gh.token not in proc.stdout + proc.stderr
    assert not out.exists()


@pytest.mark.slow
def test_replay_takes_the_pack_options(example_repo, tmp_path, pack_tgz):
    with FakeGitHub() as gh:
        url = gh.put_blob("/oracle-pack.tar.gz", pack_tgz)
        proc = cli("replay", "--repo", str(example_repo), "--rev", "main", "--pack", url,
                   "--pack-sha256", sha(pack_tgz), "--only-id", "prop.order_total",
                   "--out", str(tmp_path / "base.sig.json"))
    assert proc.returncode == 0, proc.stderr
    assert "prop.order_total: pass" in proc.stdout


# --- git: sources: the tree's listing is checked, then git checks it out ----------------------------------


def git_pack(repo: Path, change=None) -> Path:
    """The example repository with ``change(oracle_dir)`` applied and committed (the pack is ``git:HEAD:oracle``)."""
    if change is not None:
        change(repo / "oracle")
        commit_all(repo, "change the pack")
    return repo


def test_a_git_pack_is_the_committed_tree_and_leaves_the_repository_alone(example_repo, tmp_path):
    (example_repo / "oracle" / "fixtures" / "deep" / "er").mkdir(parents=True)
    (example_repo / "oracle" / "fixtures" / "deep" / "er" / "x.bin").write_bytes(bytes(range(256)))
    (example_repo / "oracle" / "fixtures" / "deep" / "er" / "run.sh").write_text("#!/bin/sh\n")
    (example_repo / "oracle" / "fixtures" / "deep" / "er" / "run.sh").chmod(0o755)
    subprocess.run([sys.executable, "-m", "verdict_gate", "manifest", "write", str(example_repo / "oracle")],
                   check=True, capture_output=True)
    commit_all(example_repo, "a nested fixture")
    index_before = (example_repo / ".git" / "index").read_bytes()
    work = next_work(tmp_path)
    loaded = pack.load("git:HEAD:oracle", example_repo, work, options=pack.PackOptions())
    committed = git(example_repo, "ls-tree", "-r", "--name-only", "HEAD:oracle").split()
    on_disk = sorted(p.relative_to(loaded.dir).as_posix() for p in loaded.dir.rglob("*") if p.is_file())
    assert on_disk == sorted(committed)
    for name in committed:
        assert (loaded.dir / name).read_bytes() == (example_repo / "oracle" / name).read_bytes(), name
    assert (example_repo / ".git" / "index").read_bytes() == index_before  # a private index: the user's untouched
    assert not (work / "pack.index").exists()
    assert loaded.origin["commit"] == git(example_repo, "rev-parse", "HEAD").strip()


def _symlink(oracle: Path) -> None:
    (oracle / "fixtures" / "link.json").symlink_to("/etc/hostname")


def _submodule(oracle: Path) -> None:
    inner = oracle / "fixtures" / "sub"  # a repository inside: `git add` records it as a gitlink
    inner.mkdir()
    git(inner, "init", "-q")
    (inner / "f").write_text("x")
    commit_all(inner, "inner")


def _case_collision(oracle: Path) -> None:
    (oracle / "fixtures" / "Data.json").write_text("{}")
    (oracle / "fixtures" / "data.json").write_text("{}")
    git(oracle.parent, "add", "-A")


def _backslash(oracle: Path) -> None:
    (oracle / "fixtures" / "a\\b.json").write_text("{}")


@pytest.mark.parametrize("change, needle", [
    (_symlink, "'fixtures/link.json': is a symbolic link"),
    (_submodule, "'fixtures/sub': is a submodule"),
    (_case_collision, "collides by case"),
    (_backslash, "backslash"),
])
def test_a_git_pack_entry_that_is_no_plain_file_is_void_before_anything_is_written(example_repo, tmp_path,
                                                                                    change, needle):
    repo = git_pack(example_repo, change)
    work = next_work(tmp_path)
    with pytest.raises(VoidError) as info:
        pack.load("git:HEAD:oracle", repo, work, options=pack.PackOptions())
    assert needle in str(info.value) and "fix:" in str(info.value)
    assert not (work / "pack").exists(), "nothing is checked out before the listing is checked"


def test_git_pack_caps_count_directories_and_bytes(example_repo, tmp_path):
    entries = git(example_repo, "ls-tree", "-r", "-t", "HEAD:oracle").splitlines()
    with pytest.raises(VoidError, match="more than"):
        pack.load("git:HEAD:oracle", example_repo, next_work(tmp_path),
                  options=pack.PackOptions(max_members=len(entries) - 1))
    assert pack.load("git:HEAD:oracle", example_repo, next_work(tmp_path),
                     options=pack.PackOptions(max_members=len(entries))).catalog
    with pytest.raises(VoidError, match="past 100 bytes"):
        pack.load("git:HEAD:oracle", example_repo, next_work(tmp_path), options=pack.PackOptions(max_bytes=100))


def test_a_git_pack_directory_that_does_not_exist_is_a_gate_error(example_repo, tmp_path):
    work = next_work(tmp_path)
    with pytest.raises(GateError) as info:
        pack.load("git:HEAD:no-such-dir", example_repo, work, options=pack.PackOptions())
    assert "no-such-dir" in str(info.value) and "git:origin/main:oracle" in str(info.value)
    assert not (work / "pack").exists()
