"""`make attest`: attach the verify report and the SBOM to a pushed image digest as OCI 1.1 artifacts.

Each artifact is an OCI image manifest with `artifactType`, an empty config, one layer (the JSON) and `subject` = the
image manifest. A registry with the referrers API answers the PUT with an `OCI-Subject` header; one without it (e.g.
distribution 2.8) gets the referrers tag schema too: an image index at tag `sha256-<hex>` listing the artifacts, and
a per-type tag `sha256-<hex>.<type>` (`.verify`, `.sbom`) pointing at the newest artifact of that type.
"""
from __future__ import annotations

import io
import json
import platform
import tarfile
import time
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..fsutil import atomic_write
from ..plan.spec import ImageSpec
from .registry import (
    EMPTY_JSON,
    OCI_EMPTY,
    OCI_INDEX,
    OCI_MANIFEST,
    Credentials,
    Registry,
    parse_ref,
    sha256,
)
from .sbom import SBOM_PATH

VERIFY_TYPE = "application/vnd.torchimages.verify.report.v1+json"
SBOM_TYPE = "application/vnd.cyclonedx+json"
SHORT = {VERIFY_TYPE: "verify", SBOM_TYPE: "sbom"}


def fallback_tag(digest: str, kind: str | None = None) -> str:
    """The referrers tag schema: sha256-<hex>, and sha256-<hex>.<kind> for one artifact type."""
    base = digest.replace(":", "-")
    return f"{base}.{kind}" if kind else base


def attach(reg: Registry, repo: str, subject_digest: str, payload: bytes, artifact_type: str, filename: str,
           annotations: dict[str, str] | None = None) -> tuple[str, bool]:
    """Push one artifact referring to `subject_digest`; returns (artifact digest, whether the referrers API took it)."""
    subject_bytes, subject_type, digest = reg.get_manifest(repo, subject_digest)
    if digest != subject_digest:
        raise UserError(f"{reg.host}/{repo}@{subject_digest}: the registry returned another manifest")
    layer = reg.put_blob(repo, payload)
    config = reg.put_blob(repo, EMPTY_JSON)
    notes = {"org.opencontainers.image.created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             **(annotations or {})}
    manifest = {
        "schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": artifact_type,
        "config": {"mediaType": OCI_EMPTY, "digest": config, "size": len(EMPTY_JSON)},
        "layers": [{"mediaType": artifact_type, "digest": layer, "size": len(payload),
                    "annotations": {"org.opencontainers.image.title": filename}}],
        "subject": {"mediaType": subject_type, "digest": subject_digest, "size": len(subject_bytes)},
        "annotations": notes,
    }
    data = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    art_digest = sha256(data)
    resp = reg.put_manifest(repo, art_digest, data, OCI_MANIFEST)
    native = resp.headers.get("OCI-Subject") == subject_digest
    if not native:
        _update_fallback(reg, repo, subject_digest, {"mediaType": OCI_MANIFEST, "digest": art_digest,
                                                     "size": len(data), "artifactType": artifact_type,
                                                     "annotations": notes})
        reg.put_manifest(repo, fallback_tag(subject_digest, SHORT.get(artifact_type, "artifact")), data, OCI_MANIFEST)
    return art_digest, native


def _update_fallback(reg: Registry, repo: str, subject: str, descriptor: dict[str, Any]) -> None:
    tag = fallback_tag(subject)
    manifests: list[dict[str, Any]] = []
    if reg.manifest_exists(repo, tag):
        raw, _, _ = reg.get_manifest(repo, tag)
        manifests = [m for m in json.loads(raw).get("manifests", []) if m.get("digest") != descriptor["digest"]]
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests + [descriptor]}
    reg.put_manifest(repo, tag, json.dumps(index, sort_keys=True, separators=(",", ":")).encode(), OCI_INDEX)


def export_sbom(client: Any, image: str, dest: Path) -> Path:
    """Copy SBOM_PATH out of `image` (a created, never started container) to dest, atomically."""
    from docker.errors import ImageNotFound, NotFound
    try:
        container = client.containers.create(image, command=["true"])
    except ImageNotFound:
        raise UserError(f"image {image} is not in the engine: make build IMAGE=... first") from None
    try:
        stream, _ = container.get_archive(SBOM_PATH)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.extractfile(tar.getmembers()[0])
            assert member is not None
            data = member.read()
    except NotFound:
        raise UserError(f"{image} has no {SBOM_PATH}: it was built before SBOMs; rebuild it (make build)") from None
    finally:
        container.remove(force=True)
    atomic_write(dest, data)
    return dest


def attest_one(reference: str, report_json: bytes, sbom_json: bytes, creds: Credentials | None = None) -> list[str]:
    ref = parse_ref(reference)
    if not ref.digest:
        raise UserError(f"{reference}: attest needs a digest reference (repo@sha256:...); run make push first")
    report = json.loads(report_json)
    reg = Registry(ref.registry, creds)
    notes = {"io.torchimages.verify.status": str(report.get("status")),
             "io.torchimages.verify.created": str(report.get("created")),
             "io.torchimages.verify.host": platform.node()}
    lines = []
    for payload, kind, name in ((report_json, VERIFY_TYPE, "verify-report.json"), (sbom_json, SBOM_TYPE, "sbom.cdx.json")):
        digest, native = attach(reg, ref.repository, ref.digest, payload, kind, name,
                                notes if kind == VERIFY_TYPE else {})
        how = "referrers API" if native else f"tag {fallback_tag(ref.digest, SHORT[kind])}"
        lines.append(f"{ref.registry}/{ref.repository}@{ref.digest[:19]}...: {SHORT[kind]} attached as {digest} ({how})")
    return lines


def attest_from_reports(client: Any, specs: list[ImageSpec], push_dir: Path, reports: Path,
                        creds: Credentials | None = None, platform: str | None = None) -> list[str]:
    """Attach reports/<tag>.json and the image's SBOM to the digest `make push` recorded for each spec. A
    multi-platform image: to its `platform` manifest (default: its first platform), with that platform's report
    (reports/<tag>-<arch>.json, as `make verify PLATFORM=...` writes it) and local image."""
    from docker.errors import ImageNotFound

    from ..build.base_platform import platform_image
    from ..plan.platforms import NATIVE_NAME, arch_of, select_platforms
    pushed_file = push_dir / "pushed.json"
    if not pushed_file.exists():
        raise UserError(f"{pushed_file} not found: run `make push REGISTRY=host:port` first")
    try:
        pushed = json.loads(pushed_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{pushed_file} is unreadable ({exc}); push again") from None
    lines = []
    for spec in specs:
        entry = pushed.get(spec.tag)
        if not entry:
            raise UserError(f"{spec.tag} is not in {pushed_file}: make push IMAGE={spec.tag} REGISTRY=... first")
        name = spec.tag
        if entry.get("platforms"):
            chosen = select_platforms(list(spec.platforms), platform, spec.tag)[0]
            entry = entry["platforms"].get(chosen)
            if not entry:
                raise UserError(f"{spec.tag}: {chosen} is not in {pushed_file}: make push IMAGE={spec.tag} "
                                f"PLATFORM={chosen} REGISTRY=... first")
            entry = {**entry, "source": platform_image(spec, chosen)}
            name = spec.tag if chosen == NATIVE_NAME else f"{spec.tag}-{arch_of(chosen)}"
        report = reports / f"{name}.json"
        if not report.exists():
            raise UserError(f"{report} not found: run `make verify IMAGE={spec.tag}"
                            + (f" PLATFORM={platform}" if platform else "") + "` before `make attest`")
        try:
            local = client.images.get(entry["source"]).id
        except ImageNotFound:
            raise UserError(f"{entry['source']} is not in the engine: pull {entry['reference']} and tag it "
                            f"{entry['source']}, then make verify and make attest") from None
        if local != entry["image_id"]:
            raise UserError(f"{entry['source']} changed since it was pushed ({local[:19]} vs {entry['image_id'][:19]}): "
                            f"push and verify it again")
        sbom = export_sbom(client, entry["source"], reports / f"{name}.sbom.cdx.json")
        lines += attest_one(entry["reference"], report.read_bytes(), sbom.read_bytes(), creds)
        lines.append(f"SBOM exported to {sbom}")
    return lines
