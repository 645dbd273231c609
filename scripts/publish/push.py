"""`make push REGISTRY=host:port`: push built images through the engine and record their digests."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import UserError
from ..spec import ImageSpec


@dataclass(frozen=True)
class Pushed:
    tag: str
    source: str          # local image name
    reference: str       # registry/repo@sha256:...
    digest: str
    image_id: str


def target_repository(registry: str, spec: ImageSpec) -> str:
    registry = registry.strip().rstrip("/")
    if not registry or " " in registry or "://" in registry:
        raise UserError(f"REGISTRY={registry!r} is not host[:port][/prefix] (no scheme): e.g. REGISTRY=127.0.0.1:5000")
    return f"{registry}/{spec.repository}"


def push_image(client, source: str, repository: str, tag: str) -> str:
    """Tag `source` as repository:tag, push it, return the manifest digest the registry reported."""
    from docker.errors import APIError, ImageNotFound  # type: ignore[import-untyped]
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
    return digest


def push_images(client, specs: list[ImageSpec], registry: str, out_dir: Path) -> list[Pushed]:
    rows = []
    for spec in specs:
        repository = target_repository(registry, spec)
        digest = push_image(client, spec.image, repository, spec.tag)
        rows.append(Pushed(spec.tag, spec.image, f"{repository}@{digest}", digest, client.images.get(spec.image).id))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "pushed.json"
    record = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    record.update({r.tag: asdict(r) for r in rows})
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return rows
