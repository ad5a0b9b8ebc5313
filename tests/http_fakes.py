"""Loopback fakes for HTTP tests: the GitHub REST API an ``artifact:NAME`` pack source reads, and
the storage host its downloads redirect to. Real HTTP/1.1 over 127.0.0.1 (standard library
``http.server``, port 0, daemon threads): no mocks, no network beyond loopback.

:class:`FakeGitHub` serves, with the shapes documented at docs.github.com/en/rest/actions:

- ``GET /repos/{owner}/{repo}`` ("Get a repository": ``default_branch``);
- ``GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs`` and
  ``GET /repos/{owner}/{repo}/actions/runs`` (filters ``branch``, ``status``, ``event``; newest first);
- ``GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts`` (filter ``name``);
- ``GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}``;
- ``GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/zip``: 302 to a signed storage URL
  valid for ``url_ttl`` seconds, and for ``link_uses`` downloads when set (410 when the artifact has
  expired).

Listings paginate with ``per_page`` (default 30, max 100) and ``page``, and answer with a
``Link`` header (``rel="next"``/``"last"``). Every API request must carry
``Authorization: Bearer <token>`` (401 otherwise); the storage host answers 401 to any request
that carries ``Authorization`` at all, as GitHub's does, and 403 to an expired signature.

Fault injection (:class:`Fault`, on ``gh.api.faults`` or ``gh.storage.faults``): a status
(``503``; ``429`` with ``Retry-After``), a connection reset mid-body, a truncated body, or wrong
bytes, for the next ``times`` requests whose path contains ``match``. Every request is logged
(:attr:`LoopbackServer.log`) with its headers, for assertions.

Usage (also from other test modules, e.g. the GitHub Action's)::

    with FakeGitHub() as gh:
        gh.add_repo("octo/shop", default_branch="main")
        run = gh.add_run("octo/shop", "oracle-pack.yml", branch="main")
        gh.add_artifact(run, "oracle-pack", zip_bytes)
        env = gh.env("octo/shop")  # GITHUB_API_URL, GITHUB_TOKEN, GITHUB_REPOSITORY
        gh.storage.faults.append(Fault("/artifacts/", kind="truncate"))
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import io
import itertools
import json
import socket
import struct
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

FAULT_KINDS = ("status", "reset", "truncate", "wrong_bytes", "no_length")


@dataclass
class Fault:
    """Misbehave on the next ``times`` requests (``None``: all) whose path contains ``match``.

    Kinds: ``status`` (answer ``status`` with ``headers`` and ``body``, e.g. 503, or 429 with
    ``{"Retry-After": "1"}``), ``reset`` (send half the body, then a TCP reset), ``truncate``
    (send half the body, then close), ``wrong_bytes`` (same length, last byte flipped),
    ``no_length`` (no ``Content-Length``: the body ends when the connection closes).
    """

    match: str
    kind: str = "status"
    status: int = 503
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    times: int | None = 1
    hits: int = 0

    def __post_init__(self) -> None:
        assert self.kind in FAULT_KINDS, self.kind


@dataclass(frozen=True)
class Seen:
    """One request as the server saw it: method, path with query, headers (names as sent)."""

    method: str
    path: str
    headers: dict[str, str]

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(doc: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(doc).encode(), {"Content-Type": "application/json; charset=utf-8",
                                                      **(headers or {})})


Route = Callable[[str, dict[str, str], Seen], Reply]


class LoopbackServer:
    """A threaded HTTP/1.1 server on 127.0.0.1 (a free port) answering GETs with ``route``."""

    def __init__(self, name: str, route: Route) -> None:
        self.name = name
        self.route = route
        self.faults: list[Fault] = []
        self.log: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                server._handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name=f"fake-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)

    def requests(self, contains: str = "") -> list[Seen]:
        """Logged requests whose path contains ``contains``."""
        with self._lock:
            return [s for s in self.log if contains in s.path]

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.match in path and (fault.times is None or fault.hits < fault.times):
                    fault.hits += 1
                    return fault
        return None

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        seen = Seen("GET", h.path, dict(h.headers.items()))
        with self._lock:
            self.log.append(seen)
        parts = urlsplit(h.path)
        query = dict(parse_qsl(parts.query))
        fault = self._take_fault(h.path)
        if fault is not None and fault.kind == "status":
            body = fault.body if fault.body is not None else json.dumps({"message": f"fake {fault.status}"}).encode()
            self._send(h, Reply(fault.status, body, {"Content-Type": "application/json", **fault.headers}), None)
            return
        try:
            reply = self.route(parts.path, query, seen)
        except Exception as exc:  # a bug in a test's fake should be loud, not a hang
            reply = json_reply({"message": f"fake server error: {exc!r}"}, 500)
        self._send(h, reply, fault.kind if fault is not None and reply.status == 200 else None)

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, reply: Reply, body_fault: str | None) -> None:
        body = reply.body
        if body_fault == "wrong_bytes" and body:
            body = body[:-1] + bytes([body[-1] ^ 0xFF])
        h.send_response(reply.status)
        for name, value in reply.headers.items():
            h.send_header(name, value)
        if body_fault != "no_length":
            h.send_header("Content-Length", str(len(body)))
        if body_fault in ("reset", "truncate", "no_length"):
            h.send_header("Connection", "close")
            h.close_connection = True
        h.end_headers()
        if body_fault in ("reset", "truncate"):
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            if body_fault == "reset":  # SO_LINGER 0: close() sends RST instead of FIN
                h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                h.connection.close()
            return
        h.wfile.write(body)
        h.wfile.flush()


def _iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeGitHub:
    """The fake API and storage servers plus the repositories, runs and artifacts they serve.

    Args:
        token: the only token the API accepts (``Authorization: Bearer <token>``).
        url_ttl: seconds a download redirect stays valid (GitHub: about one minute).
        link_uses: downloads one redirect is good for (``None``: any within ``url_ttl``): a test that needs
            a link to die does so by use, not by the clock, so it holds on a busy machine.
        name_filter: honour ``name`` on artifact listings (False: ignore it, like an old GHES,
            so a client must filter and paginate itself).
    """

    def __init__(self, token: str = "ghs_fakeToken_5e1f0c2d9b8a7", url_ttl: float = 60.0,
                 name_filter: bool = True, link_uses: int | None = None) -> None:
        self.token = token
        self.url_ttl = url_ttl
        self.link_uses = link_uses
        self._used: dict[str, int] = {}  # signature → downloads served on that link
        self.name_filter = name_filter
        self.repos: dict[str, dict[str, Any]] = {}
        self.runs: list[dict[str, Any]] = []
        self.artifacts: dict[int, dict[str, Any]] = {}
        self.blobs: dict[str, tuple[bytes, str]] = {}
        self.next_link_origin: str | None = None  # point pagination links elsewhere (an attack)
        self._ids = itertools.count(9_000_001)
        self._clock = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.UTC)
        self._key = b"fake-storage-signing-key"
        self.api = LoopbackServer("api", self._api)
        self.storage = LoopbackServer("storage", self._storage)

    # --- lifecycle ---

    def __enter__(self) -> FakeGitHub:
        self.api.start()
        self.storage.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.api.stop()
        self.storage.stop()

    def env(self, repository: str | None = None, token: str | None = None) -> dict[str, str]:
        """Environment for a client: ``GITHUB_API_URL``, ``GITHUB_TOKEN`` and (given) ``GITHUB_REPOSITORY``."""
        env = {"GITHUB_API_URL": self.api.url, "GITHUB_TOKEN": self.token if token is None else token}
        if repository:
            env["GITHUB_REPOSITORY"] = repository
        return env

    # --- state ---

    def _tick(self) -> dt.datetime:
        self._clock += dt.timedelta(minutes=1)
        return self._clock

    def add_repo(self, full_name: str, default_branch: str = "main") -> dict[str, Any]:
        repo = {"id": next(self._ids), "full_name": full_name, "name": full_name.split("/")[1],
                "owner": {"login": full_name.split("/")[0]}, "default_branch": default_branch, "private": True}
        self.repos[full_name.lower()] = repo
        return repo

    def add_run(self, repository: str, workflow: str, *, branch: str = "main", conclusion: str = "success",
                event: str = "push", head_repository: str | None = None, head_sha: str | None = None,
                workflow_id: int = 161335) -> dict[str, Any]:
        """A completed run of ``workflow`` (a file name under .github/workflows), newer than all before."""
        if repository.lower() not in self.repos:
            self.add_repo(repository)
        run_id = next(self._ids)
        created = self._tick()
        run = {
            "id": run_id, "name": workflow.rsplit(".", 1)[0], "path": f".github/workflows/{workflow}",
            "workflow_id": workflow_id, "run_number": len(self.runs) + 1, "event": event,
            "status": "completed", "conclusion": conclusion, "head_branch": branch,
            "head_sha": head_sha or hashlib.sha1(str(run_id).encode()).hexdigest(),
            "created_at": _iso(created), "updated_at": _iso(created),
            "repository": {"full_name": repository}, "head_repository": {"full_name": head_repository or repository},
            "html_url": f"https://github.invalid/{repository}/actions/runs/{run_id}",
        }
        self.runs.append(run)
        return run

    def add_artifact(self, run: dict[str, Any], name: str, data: bytes, *, expired: bool = False,
                     digest: str | None | bool = True) -> dict[str, Any]:
        """An artifact of ``run`` holding the zip ``data``. ``digest``: True for the real
        ``sha256:…`` of ``data``, a string to report another, False/None for none (older artifacts)."""
        art_id = next(self._ids)
        repository = run["repository"]["full_name"]
        created = self._tick()
        art: dict[str, Any] = {
            "id": art_id, "node_id": f"MDg6QXJ0aWZhY3Q{art_id}", "name": name, "size_in_bytes": len(data),
            "url": f"{self.api.url}/repos/{repository}/actions/artifacts/{art_id}",
            "archive_download_url": f"{self.api.url}/repos/{repository}/actions/artifacts/{art_id}/zip",
            "expired": expired, "created_at": _iso(created), "updated_at": _iso(created),
            "expires_at": _iso(created + dt.timedelta(days=-1 if expired else 90)),
            "workflow_run": {"id": run["id"], "repository_id": self.repos[repository.lower()]["id"],
                             "head_repository_id": self.repos[repository.lower()]["id"],
                             "head_branch": run["head_branch"], "head_sha": run["head_sha"]},
        }
        if digest is True:
            art["digest"] = "sha256:" + hashlib.sha256(data).hexdigest()
        elif isinstance(digest, str):
            art["digest"] = digest
        self.artifacts[art_id] = {"meta": art, "data": data, "run_id": run["id"], "repository": repository}
        return art

    def put_blob(self, path: str, data: bytes, content_type: str = "application/gzip") -> str:
        """Serve ``data`` at ``path`` on the storage host (no signature); returns its URL."""
        self.blobs[path] = (data, content_type)
        return self.storage.url + path

    # --- API ---

    def _page(self, items: list[dict[str, Any]], key: str, path: str, query: dict[str, str]) -> Reply:
        per_page = max(1, min(int(query.get("per_page", 30)), 100))
        page = max(1, int(query.get("page", 1)))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        origin = self.next_link_origin or self.api.url

        def link(n: int, rel: str) -> str:
            return f'<{origin}{path}?{urlencode({**query, "page": n})}>; rel="{rel}"'

        links = []
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        headers = {"Link": ", ".join(links)} if links else {}
        return json_reply({"total_count": len(items), key: chunk}, headers=headers)

    def _api(self, path: str, query: dict[str, str], seen: Seen) -> Reply:
        if seen.header("Authorization") != f"Bearer {self.token}":
            return json_reply({"message": "Bad credentials",
                               "documentation_url": "https://docs.github.com/rest"}, 401)
        parts = path.strip("/").split("/")
        if len(parts) < 3 or parts[0] != "repos":
            return json_reply({"message": "Not Found"}, 404)
        full = f"{parts[1]}/{parts[2]}"
        repo = self.repos.get(full.lower())
        if repo is None:
            return json_reply({"message": "Not Found"}, 404)
        rest = parts[3:]
        if not rest:
            return json_reply(repo)
        if rest[:1] != ["actions"]:
            return json_reply({"message": "Not Found"}, 404)
        rest = rest[1:]
        mine = [r for r in self.runs if r["repository"]["full_name"].lower() == full.lower()]
        if len(rest) == 3 and rest[0] == "workflows" and rest[2] == "runs":
            wf = rest[1]
            mine = [r for r in mine if r["path"].rsplit("/", 1)[1] == wf or str(r["workflow_id"]) == wf]
            return self._page(self._filter_runs(mine, query), "workflow_runs", path, query)
        if rest == ["runs"]:
            return self._page(self._filter_runs(mine, query), "workflow_runs", path, query)
        if len(rest) == 3 and rest[0] == "runs" and rest[2] == "artifacts":
            arts = [a["meta"] for a in self.artifacts.values() if str(a["run_id"]) == rest[1]]
            if self.name_filter and "name" in query:
                arts = [a for a in arts if a["name"] == query["name"]]
            return self._page(sorted(arts, key=lambda a: a["id"], reverse=True), "artifacts", path, query)
        if len(rest) in (2, 3) and rest[0] == "artifacts" and rest[1].isdigit():
            art = self.artifacts.get(int(rest[1]))
            if art is None or art["repository"].lower() != full.lower():
                return json_reply({"message": "Not Found"}, 404)
            if len(rest) == 2:
                return json_reply(art["meta"])
            if rest[2] != "zip":
                return json_reply({"message": "Not Found"}, 404)
            if art["meta"]["expired"]:
                return json_reply({"message": "Artifact has expired"}, 410)
            return Reply(302, b"", {"Location": self.signed_url(int(rest[1]))})
        return json_reply({"message": "Not Found"}, 404)

    @staticmethod
    def _filter_runs(runs: list[dict[str, Any]], query: dict[str, str]) -> list[dict[str, Any]]:
        out = runs
        if "branch" in query:
            out = [r for r in out if r["head_branch"] == query["branch"]]
        if "event" in query:
            out = [r for r in out if r["event"] == query["event"]]
        if "status" in query:
            s = query["status"]
            out = [r for r in out if r["status"] == s or r["conclusion"] == s]
        return sorted(out, key=lambda r: (r["created_at"], r["id"]), reverse=True)

    # --- storage ---

    def signed_url(self, art_id: int) -> str:
        expiry = f"{time.time() + self.url_ttl:.3f}"
        sig = hmac.new(self._key, f"{art_id}:{expiry}".encode(), hashlib.sha256).hexdigest()
        return f"{self.storage.url}/artifacts/{art_id}.zip?{urlencode({'se': expiry, 'sig': sig})}"

    def _storage(self, path: str, query: dict[str, str], seen: Seen) -> Reply:
        if seen.header("Authorization") is not None:
            return Reply(401, b"<Error><Code>InvalidAuthenticationInfo</Code><Message>Authorization header "
                              b"not allowed with a signed URL</Message></Error>", {"Content-Type": "application/xml"})
        if path in self.blobs:
            data, ctype = self.blobs[path]
            return Reply(200, data, {"Content-Type": ctype})
        if path.startswith("/artifacts/") and path.endswith(".zip"):
            art_id = path[len("/artifacts/"):-len(".zip")]
            expiry, sig = query.get("se", ""), query.get("sig", "")
            good = hmac.new(self._key, f"{art_id}:{expiry}".encode(), hashlib.sha256).hexdigest()
            if not art_id.isdigit() or not hmac.compare_digest(sig, good):
                return Reply(403, b"<Error><Code>AuthenticationFailed</Code></Error>")
            used = self._used[sig] = self._used.get(sig, 0) + 1
            if time.time() > float(expiry) or (self.link_uses is not None and used > self.link_uses):
                return Reply(403, b"<Error><Code>AuthenticationFailed</Code><Message>Signed expiry time has "
                                  b"passed</Message></Error>")
            art = self.artifacts.get(int(art_id))
            if art is None:
                return Reply(404, b"<Error><Code>BlobNotFound</Code></Error>")
            return Reply(200, art["data"], {"Content-Type": "application/zip"})
        return Reply(404, b"<Error><Code>BlobNotFound</Code></Error>")


@contextmanager
def fake_github(**kw: Any) -> Iterator[FakeGitHub]:
    """``with fake_github() as gh:`` — started servers, stopped on exit (for pytest fixtures)."""
    with FakeGitHub(**kw) as gh:
        yield gh


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """A zip (deflated) holding ``files`` (name → bytes), as actions/upload-artifact makes one."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()
