"""A small OCI distribution client (HTTP API v2): manifests, blobs, referrers and the referrers tag schema.

Plain requests calls; http for loopback registries (127.0.0.1, localhost) or REGISTRY_INSECURE=1, https otherwise;
basic or bearer-token auth from REGISTRY_USER / REGISTRY_PASSWORD (through Settings) when the registry asks.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import requests

from ..errors import UserError

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_EMPTY = "application/vnd.oci.empty.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
ACCEPT = f"{OCI_MANIFEST}, {OCI_INDEX}, {DOCKER_MANIFEST}, {DOCKER_LIST}"
EMPTY_JSON = b"{}"


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
    return Ref(registry, repo, tag, digest)


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Credentials:
    """How to talk to a registry: user/password when it asks, and http instead of https (REGISTRY_INSECURE)."""

    user: str | None = None
    password: str | None = field(default=None, repr=False)
    insecure: bool = False


class Registry:
    def __init__(self, host: str, creds: Credentials | None = None, timeout: float = 60) -> None:
        self.host = host
        self.creds = creds or Credentials()
        insecure = self.creds.insecure or host.split(":")[0] in ("127.0.0.1", "localhost")
        self.base = f"{'http' if insecure else 'https'}://{host}/v2"
        self.session = requests.Session()
        self.timeout = timeout
        self._token: str | None = None

    def _request(self, method: str, url: str, **kw: Any) -> requests.Response:
        headers = dict(kw.pop("headers", {}) or {})
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            resp = self.session.request(method, url, headers=headers, timeout=self.timeout, **kw)
            if resp.status_code == 401 and not self._token and self._authenticate(resp):
                headers["Authorization"] = f"Bearer {self._token}"
                resp = self.session.request(method, url, headers=headers, timeout=self.timeout, **kw)
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

    def _check(self, resp: requests.Response, what: str) -> requests.Response:
        if resp.status_code == 401:
            raise UserError(f"registry {self.host} refused {what} (401): set REGISTRY_USER and REGISTRY_PASSWORD")
        if not resp.ok:
            raise UserError(f"registry {self.host}: {what} failed: HTTP {resp.status_code} {resp.text[:300].strip()}")
        return resp

    def get_manifest(self, repo: str, reference: str) -> tuple[bytes, str, str]:
        """(raw bytes, media type, digest) of a manifest; a UserError naming the reference when absent."""
        resp = self._request("GET", f"{self.base}/{repo}/manifests/{reference}", headers={"Accept": ACCEPT})
        if resp.status_code == 404:
            raise UserError(f"{self.host}/{repo}: no manifest {reference} (not pushed, or deleted)")
        self._check(resp, f"GET manifest {reference}")
        data = resp.content
        return data, resp.headers.get("Content-Type", "").split(";")[0], sha256(data)

    def manifest_exists(self, repo: str, reference: str) -> bool:
        resp = self._request("HEAD", f"{self.base}/{repo}/manifests/{reference}", headers={"Accept": ACCEPT})
        return resp.status_code == 200

    def put_manifest(self, repo: str, reference: str, data: bytes, media_type: str) -> requests.Response:
        resp = self._request("PUT", f"{self.base}/{repo}/manifests/{reference}", data=data,
                             headers={"Content-Type": media_type})
        return self._check(resp, f"PUT manifest {reference}")

    def get_blob(self, repo: str, digest: str) -> bytes:
        resp = self._check(self._request("GET", f"{self.base}/{repo}/blobs/{digest}"), f"GET blob {digest}")
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
        """The referrers API's descriptors, or None when the registry has no referrers API."""
        resp = self._request("GET", f"{self.base}/{repo}/referrers/{digest}", headers={"Accept": OCI_INDEX})
        if resp.status_code != 200 or not resp.headers.get("Content-Type", "").startswith(OCI_INDEX):
            return None
        return list(json.loads(resp.content).get("manifests", []))
