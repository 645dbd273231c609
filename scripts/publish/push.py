"""`make push REGISTRY=host:port`: push built images and record their digests.

A single-platform image is pushed through the engine under its tag. A multi-platform image (spec.json
`platforms`) is published as one tag over all its platforms: each local per-arch image (`torchimages:<tag>` for
linux/amd64, `torchimages:<tag>-<arch>` otherwise) is pushed under the per-arch tag `<tag>-<arch>`, then an OCI image
index listing one descriptor per platform manifest is PUT under `<tag>` through registry.py (no shell).

Modes: PLATFORM=<p> pushes only that platform's per-arch tag (CI's build row); INDEX_ONLY=1 pushes nothing from the
engine and assembles the index from the per-arch tags already in the registry (CI's merge job; for a
single-platform image it records the digest the tag already has). Both write <reports>/push/pushed.json, which
`make attest` reads.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..fsutil import atomic_write
from ..oci import DOCKER_LIST, OCI_INDEX, layers_of
from ..plan.platforms import arch_of
from ..plan.spec import ImageSpec, Target
from .layercost import LayerCost, layer_costs, manifest_layers
from .registry import Credentials, Registry, sha256
from .sqsh import attach_sqsh, sidecars_for

Echo = Callable[[str], None]


@dataclass(frozen=True)
class Pushed:
    tag: str
    source: str          # local image name
    reference: str       # registry/repo@sha256:... (the index for a multi-platform image)
    digest: str
    image_id: str        # the local image id (= config digest); "" for an index
    media_type: str = ""
    platforms: dict[str, dict[str, str]] = field(default_factory=dict)   # platform → its manifest's record
    missing: list[str] = field(default_factory=list)                    # platforms the index lacks
    layers: dict[str, list[LayerCost]] = field(default_factory=dict)     # pushed image → what each layer costs


@dataclass(frozen=True)
class PlatformManifest:
    """One platform's image manifest in the registry: what an index descriptor needs, its config digest and layers."""

    platform: str
    media_type: str
    digest: str
    size: int
    config_digest: str
    layers: tuple[tuple[str, int], ...] = ()     # (digest, compressed size) of each layer, oldest first


def target_repository(registry: str, spec: ImageSpec) -> str:
    registry = registry.strip().rstrip("/")
    if not registry or " " in registry or "://" in registry:
        raise UserError(f"REGISTRY={registry!r} is not host[:port][/prefix] (no scheme): e.g. REGISTRY=127.0.0.1:5000")
    return f"{registry}/{spec.repository}"


def split_repository(repository: str) -> tuple[str, str]:
    """registry.example/acme/torchimages → (registry.example, acme/torchimages): the HTTP API's host and name."""
    host, _, name = repository.partition("/")
    return host, name


def platform_descriptor(manifest: PlatformManifest) -> dict[str, Any]:
    parts = manifest.platform.split("/")
    plat = {"architecture": parts[1], "os": parts[0], **({"variant": parts[2]} if len(parts) > 2 else {})}
    return {"mediaType": manifest.media_type, "digest": manifest.digest, "size": manifest.size, "platform": plat}


def index_document(manifests: list[PlatformManifest]) -> bytes:
    """The OCI image index over one manifest per platform, as canonical bytes (the same inputs give the same
    digest, so pushing the index again is idempotent)."""
    if not manifests:
        raise UserError("an image index needs at least one platform manifest")
    seen = [m.platform for m in manifests]
    dupes = sorted({p for p in seen if seen.count(p) > 1})
    if dupes:
        raise UserError(f"two manifests for {', '.join(dupes)}: one per platform")
    for m in manifests:
        if not m.digest.startswith("sha256:") or len(m.digest) != 71 or m.size <= 0:
            raise UserError(f"{m.platform}: {m.digest!r} (size {m.size}) is not a manifest descriptor")
        if m.media_type in (OCI_INDEX, DOCKER_LIST):
            raise UserError(f"{m.platform}: {m.digest} is itself an index; an index lists platform manifests")
    doc = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [platform_descriptor(m) for m in manifests]}
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def config_platform(config: dict[str, Any]) -> str:
    """linux/arm64 (linux/arm/v7) from an image config's os, architecture and variant."""
    os_, arch = str(config.get("os") or ""), str(config.get("architecture") or "")
    variant = str(config.get("variant") or "")
    return f"{os_}/{arch}" + (f"/{variant}" if variant else "")


def describe(reg: Registry, name: str, reference: str, platform: str) -> PlatformManifest:
    """The manifest at `reference`, checked to be one image of `platform` (its config says so)."""
    raw, media_type, digest = reg.get_manifest(name, reference)
    if media_type in (OCI_INDEX, DOCKER_LIST):
        raise UserError(f"{reg.host}/{name}:{reference} is an index, not the {platform} image manifest: push the "
                        f"single-platform image there (make push PLATFORM={platform})")
    config_digest = str(json.loads(raw).get("config", {}).get("digest", ""))
    config = json.loads(reg.get_blob(name, config_digest))
    found = config_platform(config)
    if found.split("/")[:2] != platform.split("/")[:2]:
        raise UserError(f"{reg.host}/{name}:{reference} is a {found} image, not {platform}: rebuild it "
                        f"(make build PLATFORM={platform}) so that its config says {arch_of(platform)}")
    return PlatformManifest(platform, media_type, digest, len(raw), config_digest, tuple(layers_of(raw)))


def push_image(client: Any, source: str, repository: str, tag: str) -> str:
    """Tag `source` as repository:tag, push it, return the manifest digest the registry reported."""
    from docker.errors import APIError, ImageNotFound
    try:
        image = client.images.get(source)
    except ImageNotFound:
        raise UserError(f"image {source} is not in the engine: make build IMAGE={tag} first") from None
    image.tag(repository, tag)
    digest = None
    try:
        for event in client.images.push(repository, tag=tag, stream=True, decode=True):
            if event.get("error"):
                raise UserError(f"push of {repository}:{tag} failed: {event['error']}; is the registry running and "
                                f"is it allowed as insecure when it speaks http?")
            digest = (event.get("aux") or {}).get("Digest") or digest
    except APIError as exc:
        raise UserError(f"push of {repository}:{tag} failed: {exc.explanation}") from None
    if not digest:
        raise UserError(f"push of {repository}:{tag} reported no digest")
    return str(digest)


def find_local(client: Any, names: list[str]) -> str | None:
    """The first of `names` the engine holds."""
    from docker.errors import ImageNotFound
    for name in names:
        try:
            client.images.get(name)
            return name
        except ImageNotFound:
            continue
    return None


def local_source(client: Any, target: Target, registry: str) -> str | None:
    """The engine's name of the built image: `make build`'s local tag (repo:tag, per-arch repo:tag-<arch>), else
    the registry-prefixed name a bake target (CI) gives it; None when the engine holds neither."""
    name = target.local_tag
    return find_local(client, [name, f"{registry.rstrip('/')}/{name}"])


def _push_single(client: Any, spec: ImageSpec, registry: str, reg: Registry, index_only: bool) -> Pushed:
    repository = target_repository(registry, spec)
    _, name = split_repository(repository)
    if index_only:      # CI's merge job: the build job pushed the tag already; record what the registry holds
        found = describe(reg, name, spec.tag, spec.platforms[0])
        return Pushed(spec.tag, spec.image, f"{repository}@{found.digest}", found.digest, found.config_digest,
                      found.media_type)
    target = spec.targets(None)[0]
    source = local_source(client, target, registry) or target.local_tag
    digest = push_image(client, source, repository, spec.tag)
    costs = layer_costs(client, source, manifest_layers(reg, name, digest))
    return Pushed(spec.tag, source, f"{repository}@{digest}", digest, client.images.get(source).id,
                  layers={spec.tag: costs})


def _push_multi(client: Any, spec: ImageSpec, registry: str, reg: Registry, platform: str | None,
                index_only: bool, echo: Echo) -> Pushed:
    repository = target_repository(registry, spec)
    _, name = split_repository(repository)
    wanted = spec.targets(platform) if platform else spec.every_target
    local = {t.platform: t.local_tag for t in spec.every_target}
    manifests: dict[str, PlatformManifest] = {}
    sources: dict[str, str] = {}
    costs: dict[str, list[LayerCost]] = {}
    absent: list[str] = []
    for target in wanted:
        p, per_arch = target.platform, target.arch_tag
        if index_only:
            if not reg.manifest_exists(name, per_arch):
                absent.append(p)
                continue
        else:
            source = local_source(client, target, registry)
            if source is None:
                absent.append(p)
                continue
            digest = push_image(client, source, repository, per_arch)
            sources[p] = source
            echo(f"  {source:<46} -> {repository}:{per_arch} ({p})")
            found = describe(reg, name, digest, p)
            if found.config_digest != client.images.get(source).id:
                raise UserError(f"{repository}@{digest} has config {found.config_digest[:19]}, not the local "
                                f"{source}: push again")
            manifests[p] = found
            costs[per_arch] = layer_costs(client, source, list(found.layers))
            continue
        manifests[p] = describe(reg, name, per_arch, p)
    how = {p: f"make build IMAGE={spec.tag} PLATFORM={p}, then make push" + (f" PLATFORM={p}" if platform else "")
           for p in absent}
    if platform:        # one platform's per-arch tag only (CI's build row); the merge job writes the index
        if absent:
            raise UserError(f"{local[platform]} is not in the engine: {how[platform]}")
        m = manifests[platform]
        return Pushed(spec.tag, sources[platform], f"{repository}@{m.digest}", m.digest, m.config_digest,
                      m.media_type, {platform: _record(spec, repository, m, sources[platform])}, layers=costs)
    if index_only and absent:
        raise UserError(f"{repository}: no per-arch tag {', '.join(Target(spec, p).arch_tag for p in absent)} in the "
                        f"registry; the build job of each platform pushes it (make push IMAGE={spec.tag} "
                        f"PLATFORM={absent[0]})")
    if not manifests:
        raise UserError(f"no platform of {spec.tag} is in the engine ({', '.join(local[p] for p in absent)}"
                        f"): make build IMAGE={spec.tag} PLATFORM={absent[0]} first (each of {', '.join(absent)})")
    for p in absent:
        echo(f"  missing: {p} ({local[p]} is not in the engine): {how[p]}; the index covers "
             f"{', '.join(manifests)} only")
    ordered = [manifests[p] for p in spec.platforms if p in manifests]
    data = index_document(ordered)
    reg.put_manifest(name, spec.tag, data, OCI_INDEX)
    digest = sha256(data)
    records = {m.platform: _record(spec, repository, m, sources.get(m.platform, local[m.platform]))
               for m in ordered}
    return Pushed(spec.tag, spec.image, f"{repository}@{digest}", digest, "", OCI_INDEX, records, absent, costs)


def _record(spec: ImageSpec, repository: str, m: PlatformManifest, source: str) -> dict[str, str]:
    return {"source": source, "reference": f"{repository}@{m.digest}", "digest": m.digest,
            "image_id": m.config_digest, "media_type": m.media_type, "tag": Target(spec, m.platform).arch_tag}


def push_images(client: Any, specs: list[ImageSpec], registry: str, out_dir: Path, creds: Credentials | None = None,
                platform: str | None = None, index_only: bool = False, echo: Echo = print,
                sqsh_dir: Path | None = None) -> list[Pushed]:
    """Push each spec's image to `registry` (see the module's docstring); record tag → digests in
    out_dir/pushed.json, with the squashfs `make sqsh` made of the same image (sqsh_dir) beside its digest."""
    rows = []
    for spec in specs:
        if platform is not None:
            spec.targets(platform)      # PLATFORM must be one of the image's
        host, _ = split_repository(target_repository(registry, spec))
        reg = Registry(host, creds)
        if len(spec.platforms) == 1:
            rows.append(_push_single(client, spec, registry, reg, index_only))
        else:
            rows.append(_push_multi(client, spec, registry, reg, platform, index_only, echo))
    path = out_dir / "pushed.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError) as exc:
        raise UserError(f"{path} is unreadable ({exc}); delete it and push again") from None
    for row in rows:
        entry = asdict(row)
        if platform is not None and row.platforms:     # one platform: keep the others and the index already recorded
            old = record.get(row.tag) or {}
            entry = {**old, "tag": row.tag, "platforms": {**(old.get("platforms") or {}), **row.platforms},
                     "layers": {**(old.get("layers") or {}), **entry["layers"]}}
            entry.setdefault("source", row.source)
            entry.setdefault("reference", row.reference)
            entry.setdefault("digest", row.digest)
            entry.setdefault("image_id", row.image_id)
        record[row.tag] = entry
        spec = next(s for s in specs if s.tag == row.tag)
        names = [spec.tag, *(Target(spec, p).report_name for p in spec.platforms)]
        for found in sidecars_for(sqsh_dir, names) if sqsh_dir else []:
            if attach_sqsh(entry, found):
                echo(f"{row.tag}: squashfs {found['file']} (sha256 {found['sha256'][:16]}...) recorded beside its digest")
    atomic_write(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return rows
