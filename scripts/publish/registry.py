"""A small OCI distribution client (HTTP API v2): manifests, blobs, referrers and the referrers tag schema.

Plain requests calls; http for loopback registries (127.0.0.1, localhost) or REGISTRY_INSECURE=1, https otherwise;
basic or bearer-token auth from REGISTRY_USER / REGISTRY_PASSWORD (through Settings) when the registry asks.

A reader that must not be held up (make report, make gate) gives a `deadline` (time.monotonic() seconds): every
request then runs in a worker thread the caller stops waiting for at the deadline, so a registry that drips one
byte every few seconds (into the headers or the body) is cut off. Every fetch is bounded in size (manifests
MANIFEST_MAX, blobs BLOB_MAX) and anything fetched by digest is checked against that digest.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

import requests

from ..errors import UserError
from ..oci import DOCKER_LIST, DOCKER_MANIFEST, OCI_INDEX, OCI_MANIFEST

ACCEPT = f"{OCI_MANIFEST}, {OCI_INDEX}, {DOCKER_MANIFEST}, {DOCKER_LIST}"
EMPTY_JSON = b"{}"
R = TypeVar("R", "requests.Response", "Fetched")
MANIFEST_MAX = 4 << 20      # distribution refuses manifests above 4 MiB; so does this reader
BLOB_MAX = 32 << 20         # a verify report, an SBOM or an attestation envelope: far below this
CHUNK = 64 << 10
# distribution's repository grammar: path components of lower-case alphanumerics joined by one separator
# ('.', '_', '__' or dashes); so no '..', no empty component, no leading or trailing separator
COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
REPOSITORY = re.compile(rf"{COMPONENT}(?:/{COMPONENT})*")
HOST = re.compile(r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*"
                  r"(?::[0-9]{1,5})?|\[[0-9a-fA-F:]+\](?::[0-9]{1,5})?)")


@dataclass(frozen=True)
class Ref:
    registry: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def reference(self) -> str:
        return self.digest or self.tag or "latest"

    def __str__(self) -> str:
        return f"{self.registry}/{self.repository}" + (f"@{self.digest}" if self.digest else f":{self.tag}")


def parse_ref(text: str) -> Ref:
    """host[:port]/repo[:tag][@sha256:...] → Ref; a UserError for anything else."""
    match = re.fullmatch(r"([^/]+\.[^/]+|[^/]+:\d+|localhost)/([a-z0-9._/-]+?)(?::([\w][\w.-]{0,127}))?"
                         r"(?:@(sha256:[0-9a-f]{64}))?", text.strip())
    if not match:
        raise UserError(f"{text!r} is not a registry reference: expected host:port/repository@sha256:<64 hex> "
                        f"(or :tag)")
    registry, repo, tag, digest = match.groups()
    if not HOST.fullmatch(registry):
        raise UserError(f"{text!r}: {registry!r} is not a registry host[:port]")
    if not REPOSITORY.fullmatch(repo) or len(repo) > 255:
        raise UserError(f"{text!r}: {repo!r} is not a repository name (lower-case components joined by '/', each "
                        f"letters and digits with single '.', '_' or '-' between them; no '..', no empty component)")
    return Ref(registry, repo, tag, digest)


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Credentials:
    """How to talk to a registry: user/password when it asks, and http instead of https (REGISTRY_INSECURE)."""

    user: str | None = None
    password: str | None = field(default=None, repr=False)
    insecure: bool = False


@dataclass
class Fetched:
    """A bounded response: status, headers and at most `limit` bytes of body (read by `_bounded`)."""

    status_code: int
    headers: Any
    content: bytes
    url: str = ""

    @property
    def ok(self) -> bool:
        return self.status_code < 400

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class Registry:
    def __init__(self, host: str, creds: Credentials | None = None, timeout: float = 60,
                 deadline: float | None = None) -> None:
        self.host = host
        self.creds = creds or Credentials()
        insecure = self.creds.insecure or host.split(":")[0] in ("127.0.0.1", "localhost")
        self.base = f"{'http' if insecure else 'https'}://{host}/v2"
        self.session = requests.Session()
        self.timeout = timeout
        self.deadline = deadline        # time.monotonic() after which no request is waited for
        self._token: str | None = None

    def _remaining(self, what: str) -> float:
        if self.deadline is None:
            return self.timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise UserError(f"registry {self.host}: out of time before {what} (the overall deadline passed; "
                            f"a slow or stalling registry)")
        return min(left, self.timeout)

    def fetch(self, method: str, url: str, limit: int, what: str, **kw: Any) -> Fetched:
        """One request whose body is read up to `limit` bytes (more: a UserError), within the deadline."""
        wait = self._remaining(what)
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                # the request's own timeout outlasts the wait: a stalled registry is cut off by the deadline below,
                # never by a read timeout racing it (a loaded machine ran the two in either order)
                resp = self._request(method, url, stream=True, timeout=wait + 2, **kw)
                try:
                    box["result"] = self._bounded(resp, limit, what)
                finally:
                    resp.close()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                box["error"] = exc

        # a daemon thread: the caller stops waiting at the deadline; the stalled read dies with the process
        worker = threading.Thread(target=work, name=f"registry {what}", daemon=True)
        worker.start()
        worker.join(wait)
        if worker.is_alive():
            raise UserError(f"registry {self.host}: {what} took longer than {wait:.0f} s; cut off (a slow or "
                            f"stalling registry)")
        if "error" in box:
            raise box["error"]
        result: Fetched = box["result"]
        return result

    def _bounded(self, resp: requests.Response, limit: int, what: str) -> Fetched:
        length = resp.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > limit:
            raise UserError(f"registry {self.host}: {what} is {length} bytes, more than the {limit} this reader "
                            f"accepts")
        body = bytearray()
        for chunk in resp.iter_content(CHUNK):
            body += chunk
            if len(body) > limit:
                raise UserError(f"registry {self.host}: {what} is more than the {limit} bytes this reader accepts")
        return Fetched(resp.status_code, resp.headers, bytes(body), resp.url)

    def _request(self, method: str, url: str, timeout: float | None = None, **kw: Any) -> requests.Response:
        headers = dict(kw.pop("headers", {}) or {})
        timeout = self.timeout if timeout is None else timeout
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            resp = self.session.request(method, url, headers=headers, timeout=timeout, **kw)
            if resp.status_code == 401 and not self._token and self._authenticate(resp):
                headers["Authorization"] = f"Bearer {self._token}"
                resp = self.session.request(method, url, headers=headers, timeout=timeout, **kw)
        except requests.RequestException as exc:
            raise UserError(f"registry {self.host} not reachable ({type(exc).__name__}): start it or fix REGISTRY") from None
        return resp

    def _authenticate(self, resp: requests.Response) -> bool:
        user, password = self.creds.user, self.creds.password
        challenge = resp.headers.get("WWW-Authenticate", "")
        if challenge.lower().startswith("basic") and user:
            self.session.auth = (user, password or "")
            return False
        fields = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        if not challenge.lower().startswith("bearer") or "realm" not in fields:
            return False
        params = {k: v for k, v in fields.items() if k in ("service", "scope")}
        auth = (user, password or "") if user else None
        token = requests.get(fields["realm"], params=params, auth=auth, timeout=self.timeout)
        if not token.ok:
            return False
        self._token = token.json().get("token") or token.json().get("access_token")
        return bool(self._token)

    def _check(self, resp: R, what: str) -> R:
        if resp.status_code == 401:
            raise UserError(f"registry {self.host} refused {what} (401): set REGISTRY_USER and REGISTRY_PASSWORD")
        if not resp.ok:
            raise UserError(f"registry {self.host}: {what} failed: HTTP {resp.status_code} {resp.text[:300].strip()}")
        return resp

    def get_manifest(self, repo: str, reference: str) -> tuple[bytes, str, str]:
        """(raw bytes, media type, digest) of a manifest; a UserError naming the reference when absent. Fetched by
        digest, its bytes must hash to that digest (a registry cannot substitute another manifest)."""
        resp = self.fetch("GET", f"{self.base}/{repo}/manifests/{reference}", MANIFEST_MAX,
                          f"GET manifest {reference}", headers={"Accept": ACCEPT})
        if resp.status_code == 404:
            raise UserError(f"{self.host}/{repo}: no manifest {reference} (not pushed, or deleted)")
        self._check(resp, f"GET manifest {reference}")
        data = resp.content
        if reference.startswith("sha256:") and sha256(data) != reference:
            raise UserError(f"{self.host}/{repo}: manifest {reference} came back with other content "
                            f"({sha256(data)[:19]}...); not accepted")
        return data, resp.headers.get("Content-Type", "").split(";")[0], sha256(data)

    def manifest_exists(self, repo: str, reference: str) -> bool:
        """True on 200, False on 404; any other answer (a 500, a 401) is an error, never read as absent."""
        resp = self.fetch("HEAD", f"{self.base}/{repo}/manifests/{reference}", MANIFEST_MAX, f"HEAD manifest {reference}",
                          headers={"Accept": ACCEPT})
        if resp.status_code == 404:
            return False
        self._check(resp, f"HEAD manifest {reference}")
        return resp.status_code == 200

    def put_manifest(self, repo: str, reference: str, data: bytes, media_type: str) -> requests.Response:
        resp = self._request("PUT", f"{self.base}/{repo}/manifests/{reference}", data=data,
                             headers={"Content-Type": media_type})
        return self._check(resp, f"PUT manifest {reference}")

    def get_blob(self, repo: str, digest: str, limit: int = BLOB_MAX) -> bytes:
        resp = self._check(self.fetch("GET", f"{self.base}/{repo}/blobs/{digest}", limit, f"GET blob {digest[:19]}"),
                           f"GET blob {digest}")
        if sha256(resp.content) != digest:
            raise UserError(f"{self.host}/{repo}: blob {digest} came back with other content; the registry is corrupt")
        return resp.content

    def put_blob(self, repo: str, data: bytes) -> str:
        digest = sha256(data)
        if self._request("HEAD", f"{self.base}/{repo}/blobs/{digest}").status_code == 200:
            return digest
        start = self._check(self._request("POST", f"{self.base}/{repo}/blobs/uploads/"), "start blob upload")
        location = start.headers["Location"]
        if location.startswith("/"):
            location = self.base.rsplit("/v2", 1)[0] + location
        sep = "&" if "?" in location else "?"
        self._check(self._request("PUT", f"{location}{sep}digest={digest}", data=data,
                                  headers={"Content-Type": "application/octet-stream"}), f"upload blob {digest}")
        return digest

    def referrers(self, repo: str, digest: str) -> list[dict[str, Any]] | None:
        """The referrers API's descriptors, or None when the registry has no referrers API (404, or a 200 that is
        not an image index); any other answer (a 500) is an error: it says nothing about what is attached."""
        resp = self.fetch("GET", f"{self.base}/{repo}/referrers/{digest}", MANIFEST_MAX, "GET referrers",
                          headers={"Accept": OCI_INDEX})
        if resp.status_code in (404, 405) or (resp.status_code == 200 and not resp.headers.get("Content-Type", "")
                                              .startswith(OCI_INDEX)):
            return None
        self._check(resp, f"GET referrers of {digest[:19]}")
        try:
            found = json.loads(resp.content).get("manifests", [])
        except (ValueError, AttributeError):
            raise UserError(f"registry {self.host}: the referrers of {digest[:19]} are not an image index") from None
        return [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []
