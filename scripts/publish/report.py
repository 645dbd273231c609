"""`make report IMAGE=repo@sha256:...`: fetch the verify report (and SBOM) attached to a digest and summarise it."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from .attest import SBOM_TYPE, SHORT, VERIFY_TYPE, fallback_tag
from .registry import Credentials, Registry, parse_ref


@dataclass
class Summary:
    reference: str
    verified: bool
    status: str | None = None
    created: str | None = None
    host: dict[str, Any] = field(default_factory=dict)
    checks: list[tuple[str, str, str]] = field(default_factory=list)
    found_via: str = ""
    sbom: dict[str, Any] | None = None


def _artifacts(reg: Registry, repo: str, digest: str) -> tuple[list[dict[str, Any]], str]:
    """Descriptors of the artifacts referring to `digest`: referrers API, else the referrers tag schema."""
    found = reg.referrers(repo, digest)
    if found:
        return found, "referrers API"
    tag = fallback_tag(digest)
    if reg.manifest_exists(repo, tag):
        raw, _, _ = reg.get_manifest(repo, tag)
        return list(json.loads(raw).get("manifests", [])), f"tag {tag}"
    return [], ""


def _newest(descriptors: list[dict[str, Any]], artifact_type: str) -> dict[str, Any] | None:
    mine = [d for d in descriptors if d.get("artifactType") == artifact_type]
    mine.sort(key=lambda d: (d.get("annotations") or {}).get("org.opencontainers.image.created", ""))
    return mine[-1] if mine else None


def _payload(reg: Registry, repo: str, reference: str) -> bytes:
    raw, _, _ = reg.get_manifest(repo, reference)
    manifest = json.loads(raw)
    layers = manifest.get("layers") or []
    if not layers:
        raise UserError(f"{reg.host}/{repo}@{reference}: artifact without content")
    return reg.get_blob(repo, layers[0]["digest"])


def host_fingerprint(report: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    env = report.get("environment") or {}
    gpus = env.get("gpus") or env.get("gpu_names") or env.get("gpu_name") or env.get("device_name")
    if isinstance(gpus, list):
        gpus = ", ".join(str(g.get("name", g)) if isinstance(g, dict) else str(g) for g in gpus)
    return {"gpu": gpus or "none reported", "driver": env.get("driver") or "none",
            "node": annotations.get("io.torchimages.verify.host") or env.get("hostname") or "unknown",
            "container": env.get("hostname"), "torch": env.get("torch"), "cuda": env.get("cuda")}


def fetch_report(text: str, creds: Credentials | None = None) -> Summary:
    """The newest verify report and SBOM attached to a digest (referrers API, else the tag schema)."""
    ref = parse_ref(text)
    if not ref.digest:
        raise UserError(f"{text}: make report needs a digest reference (repo@sha256:...)")
    reg = Registry(ref.registry, creds)
    reg.get_manifest(ref.repository, ref.digest)          # the image itself must exist
    descriptors, via = _artifacts(reg, ref.repository, ref.digest)
    summary = Summary(str(ref), verified=False, found_via=via)
    verify = _newest(descriptors, VERIFY_TYPE)
    if verify is None and reg.manifest_exists(ref.repository, fallback_tag(ref.digest, SHORT[VERIFY_TYPE])):
        verify, summary.found_via = {"digest": fallback_tag(ref.digest, "verify")}, "tag " + fallback_tag(ref.digest, "verify")
    if verify is not None:
        report = json.loads(_payload(reg, ref.repository, verify["digest"]))
        notes = verify.get("annotations") or {}
        summary.status = str(report.get("status", "unknown")).upper()
        summary.created = report.get("created")
        summary.verified = summary.status in ("PASS", "WARN")
        summary.host = host_fingerprint(report, notes)
        summary.checks = [(c.get("name", "?"), str(c.get("status", "?")).upper(), c.get("summary", ""))
                          for c in report.get("checks", [])]
    sbom = _newest(descriptors, SBOM_TYPE)
    if sbom is not None:
        doc = json.loads(_payload(reg, ref.repository, sbom["digest"]))
        comps = doc.get("components", [])
        summary.sbom = {"digest": sbom["digest"], "spec": f"CycloneDX {doc.get('specVersion')}",
                        "components": len(comps),
                        "pypi": sum(1 for c in comps if str(c.get("purl", "")).startswith("pkg:pypi/")),
                        "deb": sum(1 for c in comps if str(c.get("purl", "")).startswith("pkg:deb/"))}
    return summary


def format_report(s: Summary) -> str:
    lines = [f"image:    {s.reference}"]
    if s.status is None:
        lines.append("verified: NO (no verify report is attached to this digest; run make verify and make attest)")
    else:
        host = (f"host:     node {s.host.get('node')}, GPU {s.host.get('gpu')}, driver {s.host.get('driver')}, "
                f"torch {s.host.get('torch')}, CUDA {s.host.get('cuda') or 'none'}")
        lines += [f"verified: {'yes' if s.verified else 'NO'} (verdict {s.status}; found via {s.found_via})",
                  f"when:     {s.created}", host, "checks:"]
        lines += [f"  {status:<5} {name:<22} {summary}" for name, status, summary in s.checks]
    if s.sbom:
        lines.append(f"sbom:     {s.sbom['spec']}, {s.sbom['components']} components ({s.sbom['pypi']} Python, "
                     f"{s.sbom['deb']} distro), artifact {s.sbom['digest'][:19]}...")
    else:
        lines.append("sbom:     none attached")
    return "\n".join(lines)
