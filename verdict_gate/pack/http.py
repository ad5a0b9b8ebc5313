"""The network edge of the oracle pack (docs/design.md §2 step 1): pinned downloads and GitHub artifacts.

- :class:`Client` wraps one ``requests.Session``: connect and read timeouts, bounded retries
  (urllib3 ``Retry``) with exponential backoff on connection errors and on 429/5xx answers,
  honouring ``Retry-After`` up to :attr:`Limits.max_wait` seconds, and a second bounded loop for
  failures *inside* a body (a reset or a truncated transfer), which urllib3 cannot retry.
  :meth:`Client.download` streams to disk under a byte cap and returns the sha256 of what it
  wrote; a pinned sha256 is checked before the caller extracts anything.
- :class:`GitHub` finds the newest unexpired artifact of a name from a successful run of a
  workflow on a branch, with the documented REST endpoints (docs.github.com/en/rest/actions):
  "List workflow runs for a workflow" (``GET /repos/{owner}/{repo}/actions/workflows/{id}/runs``,
  ``branch`` and ``status=success``), "List workflow run artifacts"
  (``GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts``, ``name``), "Get a repository"
  (``default_branch``) and "Download an artifact"
  (``GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip``), which answers 302 with a storage
  URL valid for about one minute. That redirect is followed here, at once, *without* the
  ``Authorization`` header (the storage host rejects it, and the token must not leave the API
  host). Listings follow the ``Link: rel="next"`` header ("Using pagination in the REST API"),
  ``per_page=100`` (the maximum).

The token comes only from ``GITHUB_TOKEN`` in the environment the caller passes in; it is sent
only to the API origin (``GITHUB_API_URL``; a ``Link`` to another host is refused), through a
``requests`` auth hook rather than a header (``requests`` lets ``~/.netrc`` replace a header), and
scrubbed from every message this module makes. Only runs of the repository itself triggered by
:data:`TRUSTED_EVENTS` count: the ``branch`` filter matches a run's head branch, which a fork's
pull request can name like the default branch.

Errors: a network or HTTP failure is :class:`GateError` (exit 2); bytes that are not the pinned
ones, or more bytes than the cap, are :class:`VoidError` (exit 3).
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from verdict_gate import __version__
from verdict_gate.core.errors import GateError, VoidError

if TYPE_CHECKING:  # requests and urllib3 load when a client is made: start-up stays fast (issue 10)
    import requests

MAX_REDIRECTS = 3  # hops one download may take (GitHub's artifact downloads take one)

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"  # X-GitHub-Api-Version (docs.github.com, "API Versions")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# Events whose runs on a branch execute that branch's own workflow code. A pull request from a
# fork can carry a head branch named like the default branch, so runs are also checked for
# being from the repository itself.
TRUSTED_EVENTS = ("push", "workflow_dispatch", "schedule")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class Limits:
    """Bounds on every network operation of one pack load.

    Attributes:
        connect_timeout: seconds to open a connection.
        read_timeout: seconds to wait for the next bytes of an answer.
        retries: extra attempts after the first, per request (status and connection errors)
            and again per transfer (a body cut off mid-way).
        backoff: seconds; the n-th consecutive retry waits ``backoff * 2**(n-1)`` (the first
            one is immediate), at most ``max_wait``.
        max_wait: seconds; the longest ``Retry-After`` honoured and the backoff ceiling. A
            server asking for longer ends the load with an error instead of a stall.
        max_download_bytes: bytes one download may have (the pack archive or artifact zip).
        max_pages: pages (of 100) read from one listing.
        max_runs: successful runs searched, newest first, for the artifact.
    """

    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0
    max_wait: float = 60.0
    max_download_bytes: int = 256 * 1024 * 1024
    max_pages: int = 10
    max_runs: int = 20


@dataclass(frozen=True)
class Download:
    """A file written by :meth:`Client.download`: its ``path``, ``sha256`` hex and ``size`` in bytes."""

    path: Path
    sha256: str
    size: int


class _WaitTooLong(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"Retry-After {seconds:.0f} s")
        self.seconds = seconds


@cache
def _retry_class() -> Any:
    """The ``_Retry`` class, defined on first use (urllib3 is imported then, not at start-up)."""
    from urllib3.util.retry import Retry

    class _Retry(Retry):
        """urllib3 ``Retry`` that waits for a ``Retry-After`` only up to ``max_wait`` seconds and
        otherwise stops (raising ``_WaitTooLong``) instead of sleeping for hours."""

        def __init__(self, *args: Any, max_wait: float = 60.0, **kw: Any) -> None:
            super().__init__(*args, **kw)
            self.max_wait = max_wait

        def new(self, **kw: Any) -> _Retry:
            kw.setdefault("max_wait", self.max_wait)
            return super().new(**kw)

        def get_retry_after(self, response: Any) -> float | None:
            seconds = super().get_retry_after(response)
            if seconds is not None and seconds > self.max_wait:
                raise _WaitTooLong(seconds)
            return seconds

    return _Retry


def redact_url(url: str) -> str:
    """``url`` without user info and with query values hidden (they may be signatures)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    query = "&".join(f"{kv.partition('=')[0]}=…" for kv in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def is_loopback(url: str) -> bool:
    """True when ``url``'s host is ``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


Auth = Callable[["requests.PreparedRequest"], "requests.PreparedRequest"]


def no_authorization(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """A ``requests`` auth hook that removes ``Authorization`` (and keeps ``~/.netrc`` from adding one)."""
    request.headers.pop("Authorization", None)
    return request


class BearerToken:
    """``Authorization: Bearer <token>``, as a hook so ``~/.netrc`` cannot replace it (``requests``
    takes any callable as ``auth``; this is ``requests.auth.AuthBase``'s whole contract)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]


class Client:
    """One ``requests.Session`` with the retry policy of :class:`Limits`. Use as a context manager.

    Args:
        limits: timeouts, retries and caps.
        secret: a value (the token) never to appear in a message from this client.
    """

    def __init__(self, limits: Limits | None = None, secret: str = "") -> None:
        self.limits = limits or Limits()
        self.secret = secret
        import requests
        from requests.adapters import HTTPAdapter

        self.session = requests.Session()
        retry = _retry_class()(total=self.limits.retries, connect=self.limits.retries, read=self.limits.retries,
                       status=self.limits.retries, other=0, redirect=0, raise_on_redirect=False,
                       status_forcelist=RETRY_STATUSES, allowed_methods=frozenset({"GET", "HEAD"}),
                       backoff_factor=self.limits.backoff, backoff_max=self.limits.max_wait,
                       raise_on_status=False, respect_retry_after_header=True, max_wait=self.limits.max_wait)
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers["User-Agent"] = f"verdict-gate/{__version__}"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.session.close()

    def scrub(self, text: str) -> str:
        """``text`` with the secret replaced by ``***``."""
        return text.replace(self.secret, "***") if self.secret else text

    def _error(self, what: str, url: str, problem: str, fix: str) -> GateError:
        return GateError(what, redact_url(url), self.scrub(problem), fix)

    def _pause(self, attempt: int) -> None:
        time.sleep(min(self.limits.max_wait, self.limits.backoff * (2 ** attempt)))

    def get(self, url: str, *, headers: Mapping[str, str] | None = None, params: Mapping[str, Any] | None = None,
            stream: bool = False, what: str = "download", auth: Auth | None = None) -> requests.Response:
        """One GET with the retry policy; redirects are *not* followed (the caller decides).

        ``auth`` is a ``requests`` auth hook (:class:`BearerToken`, :func:`no_authorization`);
        credentials go there, never into ``headers``, because ``requests`` lets ``~/.netrc``
        replace an ``Authorization`` header when no hook is given.

        Returns the response of the last attempt, whatever its status.
        Raises:
            GateError: the connection failed on every attempt, or a ``Retry-After`` asked for
                more than ``max_wait`` seconds.
        """
        import requests

        timeout = (self.limits.connect_timeout, self.limits.read_timeout)
        try:
            return self.session.get(url, headers=dict(headers or {}), params=params, stream=stream,
                                    allow_redirects=False, timeout=timeout, auth=auth)
        except requests.exceptions.ChunkedEncodingError:
            raise  # a body cut off mid-way: the caller's transfer loop retries it
        except _WaitTooLong as exc:
            raise self._error(what, url, f"the server asked to wait {exc.seconds:.0f} s (Retry-After), longer "
                              f"than the {self.limits.max_wait:.0f} s this gate waits", "retry the job later") from None
        except requests.RequestException as exc:
            raise self._error(what, url, f"could not be fetched after {self.limits.retries + 1} attempts "
                              f"({_short(exc)})", "check the URL and the network, then re-run the job") from None

    def _status_error(self, what: str, url: str, response: requests.Response) -> GateError:
        status = response.status_code
        message = ""
        try:
            body = response.json()
            if isinstance(body, dict) and isinstance(body.get("message"), str):
                message = f": {body['message'][:200]}"
        except ValueError:
            pass
        tried = f" after {self.limits.retries + 1} attempts" if status in RETRY_STATUSES else ""
        fixes = {
            401: "set GITHUB_TOKEN to a valid token (in a workflow: env GITHUB_TOKEN: ${{ github.token }})",
            403: "give the token read access (workflow `permissions: actions: read`), or wait for the rate "
                 "limit to reset",
            404: "check the repository, workflow and names (a token without access also gets 404)",
            410: "the artifact has expired: re-run the workflow that uploads it",
        }
        return self._error(what, url, f"answered HTTP {status}{tried}{message}",
                           fixes.get(status, "check the URL, the token and GitHub's status, then re-run"))

    def get_json(self, url: str, *, headers: Mapping[str, str], params: Mapping[str, Any] | None = None,
                 what: str, auth: Auth | None = None) -> tuple[Any, requests.Response]:
        """GET a JSON document (retrying cut-off bodies too). Returns (document, response).

        Raises:
            GateError: a connection failure, a non-200 status (naming it and the fix) or a body
                that is not JSON.
        """
        import requests

        for attempt in range(self.limits.retries + 1):
            try:
                response = self.get(url, headers=headers, params=params, what=what, auth=auth)
                if response.status_code != 200:
                    raise self._status_error(what, url, response)
                try:
                    return response.json(), response
                except requests.exceptions.JSONDecodeError:
                    raise self._error(what, url, "answered with a body that is not JSON",
                                      "check GITHUB_API_URL points at the GitHub REST API") from None
            except (requests.exceptions.ChunkedEncodingError, requests.exceptions.ConnectionError) as exc:
                if attempt == self.limits.retries:
                    raise self._error(what, url, f"was cut off on every attempt ({_short(exc)})",
                                      "re-run the job") from None
                self._pause(attempt)
        raise AssertionError("unreachable")

    def download(self, url: str, dest: Path, *, headers: Mapping[str, str] | None = None,
                 expected_sha256: str | None = None, what: str = "oracle pack download",
                 auth: Auth | None = None) -> Download:
        """Stream ``url`` to ``dest`` (created; removed again on failure) and return its sha256.

        ``auth`` applies to ``url`` only. Redirects are followed here, at once, up to
        :data:`MAX_REDIRECTS`, never from https to http, and never with credentials: the
        redirected requests carry no ``Authorization`` (not even from ``~/.netrc``). A transfer
        cut off mid-body starts again from ``url`` (a fresh, short-lived redirect).

        Args:
            expected_sha256: lowercase hex the bytes must hash to, checked before returning.
        Raises:
            GateError: network failure, an HTTP error status, too many or downgrading redirects.
            VoidError: more than ``max_download_bytes`` bytes, or a sha256 other than expected.
        """
        import requests

        cap = self.limits.max_download_bytes
        for attempt in range(self.limits.retries + 1):
            try:
                return self._download_once(url, dest, headers or {}, expected_sha256, what, cap, auth)
            except (requests.exceptions.ChunkedEncodingError, requests.exceptions.ConnectionError) as exc:
                dest.unlink(missing_ok=True)
                if attempt == self.limits.retries:
                    raise self._error(what, url, f"was cut off on every one of {attempt + 1} attempts "
                                      f"({_short(exc)})", "check the network, then re-run the job") from None
                self._pause(attempt)
            except BaseException:
                dest.unlink(missing_ok=True)
                raise
        raise AssertionError("unreachable")

    def _download_once(self, url: str, dest: Path, headers: Mapping[str, str], expected: str | None,
                       what: str, cap: int, auth: Auth | None) -> Download:
        current, send, hook = url, dict(headers), auth
        for _hop in range(MAX_REDIRECTS + 1):
            response = self.get(current, headers=send, stream=True, what=what, auth=hook)
            if response.is_redirect:
                location = response.headers.get("Location", "")
                response.close()
                target = urljoin(current, location)
                if urlsplit(current).scheme == "https" and urlsplit(target).scheme != "https":
                    raise self._error(what, current, f"redirects to a non-https URL ({redact_url(target)})",
                                      "serve the pack over https")
                send = {k: v for k, v in send.items() if k.lower() != "authorization"}
                hook = no_authorization
                current = target
                continue
            break
        else:
            raise self._error(what, url, f"redirected more than {MAX_REDIRECTS} times", "serve the pack directly")
        with response:
            if response.status_code != 200:
                raise self._status_error(what, current, response)
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > cap:
                raise VoidError(what, redact_url(url), f"is {int(length)} bytes, more than the cap of {cap} bytes",
                                "shrink the pack, or raise the download cap if this size is expected")
            digest, size = hashlib.sha256(), 0
            with open(dest, "wb") as out:
                for chunk in response.iter_content(chunk_size=1 << 16):
                    size += len(chunk)
                    if size > cap:
                        raise VoidError(what, redact_url(url), f"sent more than the cap of {cap} bytes",
                                        "shrink the pack, or raise the download cap if this size is expected")
                    digest.update(chunk)
                    out.write(chunk)
        sha = digest.hexdigest()
        if expected is not None and sha != expected:
            raise VoidError(what, redact_url(url), f"has sha256 {sha}, not the pinned {expected}",
                            "restore the pack at that URL, or pin the sha256 printed by "
                            "`verdict-gate pack build` for the pack you reviewed")
        return Download(path=dest, sha256=sha, size=size)


# --- GitHub artifacts ---------------------------------------------------------------------


@dataclass(frozen=True)
class Artifact:
    """The artifact chosen for an ``artifact:NAME`` source, as recorded in evidence."""

    repository: str
    workflow: str
    branch: str
    name: str
    artifact_id: int
    run_id: int
    head_sha: str
    created_at: str
    size_in_bytes: int
    digest: str | None  # "sha256:<hex>" when the API reports one (artifacts uploaded since 2025)

    def record(self) -> dict[str, Any]:
        """The evidence form (``verdicts.json`` ``pack.artifact``)."""
        return {"repository": self.repository, "workflow": self.workflow, "branch": self.branch, "name": self.name,
                "artifact_id": self.artifact_id, "run_id": self.run_id, "head_sha": self.head_sha,
                "created_at": self.created_at, "size_in_bytes": self.size_in_bytes}


class GitHub:
    """The few GitHub REST calls an ``artifact:NAME`` pack source needs.

    Args:
        client: the one HTTP client of this pack load.
        api_url: ``GITHUB_API_URL`` (default ``https://api.github.com``), without a trailing slash.
        token: ``GITHUB_TOKEN``; sent as ``Authorization: Bearer`` to ``api_url``'s origin only.
    """

    def __init__(self, client: Client, api_url: str, token: str) -> None:
        self.client = client
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.auth = BearerToken(token)
        client.secret = token

    @classmethod
    def from_env(cls, env: Mapping[str, str], client: Client) -> GitHub:
        """Read ``GITHUB_TOKEN`` and ``GITHUB_API_URL`` from ``env``.

        Raises:
            GateError: ``GITHUB_TOKEN`` is missing or empty, or ``GITHUB_API_URL`` is not an
                http(s) URL.
        """
        token = env.get("GITHUB_TOKEN", "").strip()
        if not token:
            raise GateError("GitHub token", "environment variable GITHUB_TOKEN", "is not set; an artifact: pack "
                            "source reads the GitHub REST API with it",
                            "in the workflow step set `env: GITHUB_TOKEN: ${{ github.token }}` with "
                            "`permissions: actions: read`")
        api_url = env.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL
        if urlsplit(api_url).scheme not in ("https", "http") or not urlsplit(api_url).hostname:
            raise GateError("GitHub API URL", "environment variable GITHUB_API_URL", f"{api_url!r} is not a URL",
                            "unset it (default https://api.github.com) or set your GitHub Enterprise API URL")
        return cls(client, api_url, token)

    def _headers(self) -> dict[str, str]:
        return {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION}

    def _url(self, *segments: str) -> str:
        return self.api_url + "/" + "/".join(quote(s, safe="") for s in segments)

    def _repo_url(self, repository: str, *segments: str) -> str:
        owner, name = repository.split("/")
        return self._url("repos", owner, name, *segments)

    def _check_origin(self, url: str, what: str) -> None:
        if _origin(url) != _origin(self.api_url):
            raise GateError(what, redact_url(url), "is not on the GitHub API host; the token is sent there only",
                            "check GITHUB_API_URL; a listing's Link header must stay on the API host")

    def pages(self, url: str, params: Mapping[str, Any], key: str, what: str) -> Iterator[dict[str, Any]]:
        """Items of ``key`` across the pages of a listing, following ``Link: rel="next"``.

        Raises:
            GateError: an HTTP error, a page without ``key``, or a next link to another host.
        """
        next_url: str | None = url
        query: Mapping[str, Any] | None = params
        for _page in range(self.client.limits.max_pages):
            if next_url is None:
                return
            self._check_origin(next_url, what)
            doc, response = self.client.get_json(next_url, headers=self._headers(), params=query, what=what,
                                                 auth=self.auth)
            if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
                raise GateError(what, redact_url(next_url), f"answered without a {key!r} list",
                                "check GITHUB_API_URL points at the GitHub REST API")
            yield from (item for item in doc[key] if isinstance(item, dict))
            next_url = response.links.get("next", {}).get("url")
            query = None  # the next link carries the query

    def default_branch(self, repository: str) -> str:
        """The repository's default branch ("Get a repository": ``default_branch``)."""
        what = f"GitHub repository {repository}"
        doc, _ = self.client.get_json(self._repo_url(repository), headers=self._headers(), what=what, auth=self.auth)
        branch = doc.get("default_branch") if isinstance(doc, dict) else None
        if not isinstance(branch, str) or not branch:
            raise GateError(what, self._repo_url(repository), "has no default_branch in the API answer",
                            "pass the branch explicitly (--pack-branch)")
        return branch

    def find_artifact(self, repository: str, workflow: str, branch: str | None, name: str) -> Artifact:
        """The newest unexpired artifact ``name`` of a successful run of ``workflow`` on ``branch``.

        Runs are read newest first (``status=success``, ``branch``); a run counts only when its
        conclusion is success, its head branch is ``branch``, its head repository is
        ``repository`` itself and its event is one of :data:`TRUSTED_EVENTS`. Expired artifacts
        are skipped. At most ``max_runs`` runs are searched.

        Raises:
            GateError: a malformed repository, no such artifact (naming what was searched and
                the expired ones seen), or two unexpired artifacts of that name in one run.
        """
        if not _REPO.match(repository):
            raise GateError("pack repository", repr(repository), "is not of the form OWNER/NAME",
                            "pass --pack-repository OWNER/NAME or set GITHUB_REPOSITORY")
        branch = branch or self.default_branch(repository)
        runs_url = self._repo_url(repository, "actions", "workflows", workflow, "runs")
        searched: list[int] = []
        skipped: list[str] = []
        expired: list[str] = []
        what = f"workflow runs of {workflow} in {repository}"
        for run in self.pages(runs_url, {"branch": branch, "status": "success", "per_page": 100},
                              "workflow_runs", what):
            if len(searched) >= self.client.limits.max_runs:
                break
            run_id = run.get("id")
            if not isinstance(run_id, int):
                continue
            head_repo = str((run.get("head_repository") or {}).get("full_name") or "")
            if run.get("conclusion") != "success" or run.get("head_branch") != branch:
                skipped.append(f"run {run_id} ({run.get('head_branch')}, {run.get('conclusion')})")
                continue
            if head_repo.lower() != repository.lower() or run.get("event") not in TRUSTED_EVENTS:
                skipped.append(f"run {run_id} (event {run.get('event')} from {head_repo or 'unknown repository'})")
                continue
            searched.append(run_id)
            arts_url = self._repo_url(repository, "actions", "runs", str(run_id), "artifacts")
            found = [a for a in self.pages(arts_url, {"name": name, "per_page": 100}, "artifacts",
                                           f"artifacts of run {run_id} in {repository}") if a.get("name") == name]
            live = [a for a in found if not a.get("expired")]
            expired += [f"{a.get('id')} (run {run_id}, expired {a.get('expires_at', '?')})"
                        for a in found if a.get("expired")]
            if len(live) > 1:
                raise GateError("oracle pack", f"artifact:{name}",
                                f"is ambiguous: run {run_id} of {workflow} has {len(live)} unexpired artifacts "
                                f"named {name!r} (ids {', '.join(str(a.get('id')) for a in live)})",
                                "upload the pack once per run under a unique name")
            if live:
                art = live[0]
                digest = art.get("digest")
                return Artifact(
                    repository=repository, workflow=workflow, branch=branch, name=name,
                    artifact_id=int(art["id"]), run_id=run_id, head_sha=str(run.get("head_sha") or ""),
                    created_at=str(art.get("created_at") or ""), size_in_bytes=int(art.get("size_in_bytes") or 0),
                    digest=digest if isinstance(digest, str) and digest else None,
                )
        searched_text = ", ".join(str(r) for r in searched) or "none"
        detail = f"; expired: {', '.join(expired)}" if expired else ""
        detail += f"; skipped: {', '.join(skipped[:5])}" if skipped else ""
        raise GateError("oracle pack", f"artifact:{name}",
                        f"no unexpired artifact named {name!r} in successful {'/'.join(TRUSTED_EVENTS)} runs of "
                        f"workflow {workflow} on branch {branch} of {repository} (runs searched: "
                        f"{searched_text}){detail}",
                        "run the workflow that uploads the pack on that branch, or fix the name, workflow, "
                        "branch or repository")

    def download_artifact(self, artifact: Artifact, dest: Path, expected_sha256: str | None = None) -> Download:
        """Download the artifact's zip to ``dest`` ("Download an artifact", ``archive_format`` zip).

        The 302 to the storage host is followed at once without ``Authorization``. The zip is
        checked against the API's ``digest`` (when given) and ``expected_sha256`` (when pinned).

        Raises:
            GateError: network or HTTP failure (410: the artifact expired meanwhile).
            VoidError: more bytes than the cap, or a sha256 other than the digest or pin.
        """
        url = self._repo_url(artifact.repository, "actions", "artifacts", str(artifact.artifact_id), "zip")
        what = f"artifact {artifact.name} ({artifact.artifact_id})"
        if artifact.size_in_bytes > self.client.limits.max_download_bytes:
            raise VoidError(what, redact_url(url), f"is {artifact.size_in_bytes} bytes, more than the cap of "
                            f"{self.client.limits.max_download_bytes} bytes",
                            "shrink the pack, or raise the download cap if this size is expected")
        api_digest = None
        if artifact.digest and artifact.digest.startswith("sha256:") and _HEX64.match(artifact.digest[7:]):
            api_digest = artifact.digest[7:]
        got = self.client.download(url, dest, headers=self._headers(), what=what, auth=self.auth)
        for expected, named in ((api_digest, "the digest the API reports"), (expected_sha256, "the pinned sha256")):
            if expected and got.sha256 != expected:
                dest.unlink(missing_ok=True)
                raise VoidError(what, redact_url(url), f"has sha256 {got.sha256}, not {named} ({expected})",
                                "re-run the workflow that uploads the pack, and pin the sha256 of that artifact")
        return got


def env_repository(env: Mapping[str, str]) -> str | None:
    """``GITHUB_REPOSITORY`` from ``env`` (``OWNER/NAME``), or None."""
    value = env.get("GITHUB_REPOSITORY", "").strip()
    return value or None


def default_env() -> Mapping[str, str]:
    """The process environment (the CLI's source of GITHUB_TOKEN, GITHUB_API_URL, GITHUB_REPOSITORY)."""
    return os.environ
