"""`make attest`: attach the verify report, the SBOM and the build provenance to a pushed image digest, each as a
signed in-toto Statement (v1) in a DSSE envelope, as OCI 1.1 artifacts.

The Statements' subject is the image manifest digest (of a multi-platform image: that platform's manifest); the
predicates: the verify report with the node that attested it (PREDICATE_VERIFY), the CycloneDX SBOM
(PREDICATE_SBOM) and a SLSA v1 provenance record (PREDICATE_PROVENANCE: the matrix entry, the digests of
spec.json, the lock and the templates, the base image, the uv version, the git commit, the builder). Signed with
SIGNING_KEY (signing.py: securesystemslib), which never leaves this process.

Each artifact is an OCI image manifest with `artifactType`, an empty config, one layer (the envelope) and `subject` = the
image manifest, attached by referrers.py (the referrers API, else the referrers tag schema with per-type tags
`sha256-<hex>.verify`, `.sbom`, `.provenance`).
"""
from __future__ import annotations

import hashlib
import io
import json
import platform
import subprocess
import tarfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import ROOT
from ..errors import UserError
from ..fsutil import atomic_write
from ..plan.spec import SOURCE_URL, ImageSpec, Target
from ..settings import Settings
from .referrers import attach, fallback_tag
from .registry import Credentials, Registry, parse_ref
from .sbom import SBOM_PATH, SPEC_VERSION
from .signing import DSSE_TYPE, sign, statement
from .sqsh import SHA256_HEX

VERIFY_TYPE = "application/vnd.torchimages.verify.report.v1+json"     # the unsigned artifacts of older releases
SBOM_TYPE = "application/vnd.cyclonedx+json"
SHORT = {VERIFY_TYPE: "verify", SBOM_TYPE: "sbom"}
PREDICATE_VERIFY = f"{SOURCE_URL}/attestation/verify-report/v1"
PREDICATE_SBOM = "https://cyclonedx.org/bom"
PREDICATE_PROVENANCE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = f"{SOURCE_URL}/build/v1"
KIND = {PREDICATE_VERIFY: "verify", PREDICATE_SBOM: "sbom", PREDICATE_PROVENANCE: "provenance"}
PREDICATE_ANNOTATION = "in-toto.io/predicate-type"


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
    check_sbom(data, image)
    atomic_write(dest, data)
    return dest


def check_sbom(data: bytes, image: str) -> None:
    """The image's SBOM against the CycloneDX schema (cyclonedx-python-lib, strict: no unknown fields), before it is
    signed. sbom.py writes it inside the image on the image's own Python, where no package may be added; here, on
    the host, the maintained library checks what that stdlib writer produced."""
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator
    error = JsonStrictValidator(SchemaVersion.from_version(SPEC_VERSION)).validate_str(data.decode("utf-8", "replace"))
    if error is not None:
        reason = getattr(getattr(error, "data", None), "message", None) or str(error).splitlines()[0]
        raise UserError(f"{image}: its SBOM ({SBOM_PATH}) is not valid CycloneDX {SPEC_VERSION} ({str(reason)[:200]}); "
                        f"not signed")


@dataclass(frozen=True)
class Inputs:
    """What the provenance records about one image's build (the files read from this checkout)."""

    target: Target                  # the image on the platform whose manifest is attested
    images_dir: Path
    base_digest: str | None = None
    builder: str = ""
    env: Mapping[str, str] | None = None


def _file_digest(path: Path) -> dict[str, str]:
    return {"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _git(*args: str) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def provenance(inputs: Inputs, created: str) -> dict[str, Any]:
    """A SLSA v1 provenance predicate: the matrix entry, the digests of spec.json, the lock and the templates, the
    base image digest, the uv version, the git commit and the builder."""
    from ..builder.buildkit import UV_VERSION
    spec, folder = inputs.target.spec, inputs.images_dir / inputs.target.spec.tag
    deps: list[dict[str, Any]] = []
    for path in (folder / "spec.json", folder / "Dockerfile", inputs.target.lock_path(inputs.images_dir)):
        if path.is_file():
            deps.append({"name": f"images/{spec.tag}/{path.name}", "digest": _file_digest(path)})
    templates = Settings.templates
    for path in sorted(templates.rglob("*.j2")):
        deps.append({"name": f"templates/{path.relative_to(templates)}", "digest": _file_digest(path)})
    commit = _git("rev-parse", "HEAD")
    if commit:
        dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
        deps.append({"uri": f"git+{SOURCE_URL}@{commit}", "digest": {"gitCommit": commit},
                     "annotations": {"dirty": dirty}})
    base: dict[str, Any] = {"uri": f"docker-image://{spec.base_image}", "name": "base image"}
    if inputs.base_digest:
        base["digest"] = {"sha256": inputs.base_digest.removeprefix("sha256:")}
    deps.append(base)
    env = inputs.env or {}
    run_url = (f"{env['GITHUB_SERVER_URL']}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
               if all(env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")) else None)
    entry = {k: getattr(spec, k) for k in ("tag", "repository", "flavor", "torch", "cuda", "cudnn", "distro", "python",
                                           "torchvision", "access", "platforms")}
    entry["access"] = list(spec.access)
    return {
        "buildDefinition": {
            "buildType": BUILD_TYPE,
            "externalParameters": {"matrix_entry": entry, "platform": inputs.target.platform},
            "internalParameters": {"uv": UV_VERSION, "base_image": spec.base_image},
            "resolvedDependencies": deps,
        },
        "runDetails": {
            "builder": {"id": run_url.rsplit("/actions/", 1)[0] + "/actions" if run_url else
                        f"{SOURCE_URL}/make-build@{platform.node()}",
                        "version": {"engine": inputs.builder or "unknown"}},
            "metadata": {"invocationId": run_url or f"{platform.node()}:{created}", "finishedOn": created},
        },
    }


def attest_one(reference: str, report_json: bytes, sbom_json: bytes, signer: Any, creds: Credentials | None = None,
               inputs: Inputs | None = None, also: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """Sign the verify report, the SBOM and (given `inputs`) the provenance as Statements about the digest of
    `reference` (and the (name, sha256) subjects `also`: the image's squashfs), and attach the three envelopes to
    it."""
    ref = parse_ref(reference)
    if not ref.digest:
        raise UserError(f"{reference}: attest needs a digest reference (repo@sha256:...); run make push first")
    try:
        report, sbom = json.loads(report_json), json.loads(sbom_json)
    except ValueError as exc:
        raise UserError(f"the report or the SBOM to attest is not JSON ({exc})") from None
    reg = Registry(ref.registry, creds)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    subject = [(f"{ref.registry}/{ref.repository}", ref.digest), *also]
    docs = [(PREDICATE_VERIFY, {"report": report, "attested": {"node": platform.node(), "time": now}}),
            (PREDICATE_SBOM, sbom)]
    if inputs is not None:
        docs.append((PREDICATE_PROVENANCE, provenance(inputs, now)))
    lines = []
    for predicate_type, predicate in docs:
        kind = KIND[predicate_type]
        envelope = sign(statement(subject, predicate_type, predicate), signer)
        notes = {PREDICATE_ANNOTATION: predicate_type}
        digest, native = attach(reg, ref.repository, ref.digest, envelope, DSSE_TYPE, f"{kind}.dsse.json", notes,
                                kind=kind)
        how = "referrers API" if native else f"tag {fallback_tag(ref.digest, kind)}"
        lines.append(f"{ref.registry}/{ref.repository}@{ref.digest[:19]}...: {kind} attached as {digest} ({how}), "
                     f"signed by key {signer.public_key.keyid[:16]}")
    return lines


def attest_from_reports(client: Any, specs: list[ImageSpec], push_dir: Path, reports: Path, signer: Any,
                        creds: Credentials | None = None, platform: str | None = None,
                        images_dir: Path | None = None, env: Mapping[str, str] | None = None) -> list[str]:
    """Attach reports/<tag>.json and the image's SBOM to the digest `make push` recorded for each spec. A
    multi-platform image: to its `platform` manifest (default: its first platform), with that platform's report
    (reports/<tag>-<arch>.json, as `make verify PLATFORM=...` writes it) and local image."""
    from docker.errors import ImageNotFound

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
        target = Target(spec, spec.platforms[0])
        if not entry:
            raise UserError(f"{spec.tag} is not in {pushed_file}: make push IMAGE={spec.tag} REGISTRY=... first")
        name = spec.tag
        if entry.get("platforms"):
            target = spec.targets(platform)[0] if platform else Target(spec, spec.platforms[0])
            entry = entry["platforms"].get(target.platform)
            if not entry:
                raise UserError(f"{spec.tag}: {target.platform} is not in {pushed_file}: make push IMAGE={spec.tag} "
                                f"PLATFORM={target.platform} REGISTRY=... first")
            entry = {**entry, "source": target.local_tag}
            name = target.report_name
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
        inputs = Inputs(target, images_dir or Settings.images, _base_digest(client, spec),
                        _engine_version(client), env)
        also = sqsh_subject(entry)
        lines += attest_one(entry["reference"], report.read_bytes(), sbom.read_bytes(), signer, creds, inputs, also)
        lines.append(f"SBOM exported to {sbom}")
        lines += [f"squashfs {name} (sha256:{digest}) named in each statement's subject" for name, digest in also]
    return lines


def sqsh_subject(entry: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The squashfs `make sqsh` made of the pushed image (its push record's `sqsh`), as a (file name, sha256)
    subject: a node checks the file it mounts against the signed statement. None recorded: no subject."""
    found = entry.get("sqsh")
    if found is None:
        return ()
    if not isinstance(found, dict) or not isinstance(found.get("file"), str) \
            or not SHA256_HEX.fullmatch(str(found.get("sha256"))):
        raise UserError(f"the push record's squashfs for {str(entry.get('reference'))[:80]} is malformed; make sqsh "
                        f"again (it records the file beside the digest)")
    return ((found["file"], f"sha256:{found['sha256']}"),)


def _base_digest(client: Any, spec: ImageSpec) -> str | None:
    """The engine's digest of the image's base (its registry digest when pulled, else its image id), if present."""
    for name in (spec.base_image, spec.bootstrap_base):
        if not name:
            continue
        try:
            image = client.images.get(name)
        except Exception:  # noqa: BLE001 - absent or unreadable: the provenance says no digest
            continue
        repo_digests = [d.split("@", 1)[1] for d in (image.attrs.get("RepoDigests") or []) if "@" in d]
        return str(repo_digests[0] if repo_digests else image.id)
    return None


def _engine_version(client: Any) -> str:
    try:
        return f"Docker Engine {client.version().get('Version', '?')}"
    except Exception:  # noqa: BLE001 - the provenance says unknown
        return "unknown"
