"""OCI 1.1 artifacts that refer to an image manifest, over registry.py: attaching one, and listing what refers to a digest.

A registry with the referrers API answers an artifact's PUT with an `OCI-Subject` header and lists the artifacts at
/referrers/<digest>. One without it (e.g. distribution 2.8) gets the referrers tag schema: an image index at tag
`sha256-<hex>` listing the artifacts, and here also a per-type tag `sha256-<hex>.<kind>` pointing at the newest
artifact of that kind (two attests at once can each rewrite the index; the per-type tags survive that).
What to attach (attest.py) and what to believe of it (report.py) are decided by the callers.
"""
from __future__ import annotations

import json
import time
from typing import Any

from ..errors import UserError
from ..oci import OCI_EMPTY, OCI_INDEX, OCI_MANIFEST
from .registry import EMPTY_JSON, Registry, sha256

CREATED = "org.opencontainers.image.created"


def fallback_tag(digest: str, kind: str | None = None) -> str:
    """The referrers tag schema: sha256-<hex>, and sha256-<hex>.<kind> for one artifact type."""
    base = digest.replace(":", "-")
    return f"{base}.{kind}" if kind else base


def _canonical(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def attach(reg: Registry, repo: str, subject_digest: str, payload: bytes, artifact_type: str, filename: str,
           annotations: dict[str, str] | None = None, *, kind: str, layer_type: str | None = None) -> tuple[str, bool]:
    """Push one artifact referring to `subject_digest`; returns (artifact digest, whether the referrers API took it).
    Without the referrers API, the artifact is added to the tag schema's index and tagged `sha256-<hex>.<kind>`."""
    subject_bytes, subject_type, digest = reg.get_manifest(repo, subject_digest)
    if digest != subject_digest:
        raise UserError(f"{reg.host}/{repo}@{subject_digest}: the registry returned another manifest")
    layer = reg.put_blob(repo, payload)
    config = reg.put_blob(repo, EMPTY_JSON)
    notes = {CREATED: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **(annotations or {})}
    manifest = {
        "schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": artifact_type,
        "config": {"mediaType": OCI_EMPTY, "digest": config, "size": len(EMPTY_JSON)},
        "layers": [{"mediaType": layer_type or artifact_type, "digest": layer, "size": len(payload),
                    "annotations": {"org.opencontainers.image.title": filename}}],
        "subject": {"mediaType": subject_type, "digest": subject_digest, "size": len(subject_bytes)},
        "annotations": notes,
    }
    data = _canonical(manifest)
    art_digest = sha256(data)
    resp = reg.put_manifest(repo, art_digest, data, OCI_MANIFEST)
    native = resp.headers.get("OCI-Subject") == subject_digest
    if not native:
        add_to_index(reg, repo, subject_digest, {"mediaType": OCI_MANIFEST, "digest": art_digest, "size": len(data),
                                                 "artifactType": artifact_type, "annotations": notes})
        reg.put_manifest(repo, fallback_tag(subject_digest, kind), data, OCI_MANIFEST)
    return art_digest, native


def add_to_index(reg: Registry, repo: str, subject: str, descriptor: dict[str, Any]) -> None:
    """Add (or move to the end) `descriptor` in the tag schema's index of `subject`."""
    tag = fallback_tag(subject)
    manifests: list[dict[str, Any]] = []
    if reg.manifest_exists(repo, tag):
        raw, _, _ = reg.get_manifest(repo, tag)
        manifests = [m for m in json.loads(raw).get("manifests", []) if m.get("digest") != descriptor["digest"]]
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests + [descriptor]}
    reg.put_manifest(repo, tag, _canonical(index), OCI_INDEX)


def attached(reg: Registry, repo: str, digest: str, kinds: tuple[str, ...]) -> tuple[list[dict[str, Any]], str]:
    """Descriptors of the artifacts referring to `digest` and how they were found: the referrers API, else the
    referrers tag schema (its index, and the per-type tags of `kinds` the index may have lost)."""
    found = reg.referrers(repo, digest)
    if found:
        return found, "referrers API"
    descriptors: list[dict[str, Any]] = []
    via = ""
    tag = fallback_tag(digest)
    if reg.manifest_exists(repo, tag):
        raw, _, _ = reg.get_manifest(repo, tag)
        try:
            listed = json.loads(raw).get("manifests", [])
        except (ValueError, AttributeError):
            raise UserError(f"{reg.host}/{repo}:{tag} is not an image index; cannot tell what is attached") from None
        descriptors = [d for d in listed if isinstance(d, dict)] if isinstance(listed, list) else []
        via = f"tag {tag}"
    # per-type tags an index may have lost (two attests at once): read them too, by what they point at
    for kind in kinds:
        per_type = fallback_tag(digest, kind)
        if reg.manifest_exists(repo, per_type):
            _, media_type, art = reg.get_manifest(repo, per_type)
            if all(d.get("digest") != art for d in descriptors):
                descriptors.append({"digest": art, "mediaType": media_type, "annotations": {}})
                via = via or f"tag {per_type}"
    return descriptors, via
