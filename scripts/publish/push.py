"""`make push REGISTRY=host:port`: push built images through the engine and record their digests."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..fsutil import atomic_write
from ..plan.spec import ImageSpec


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


def local_source(client: Any, spec: ImageSpec, registry: str) -> str:
    """The engine's name of the built image: `make build`'s repo:tag, else the registry-prefixed name a bake
    target (CI) gives it."""
    from docker.errors import ImageNotFound
    for name in (spec.image, f"{registry.rstrip('/')}/{spec.image}"):
        try:
            client.images.get(name)
            return name
        except ImageNotFound:
            continue
    return spec.image


def push_images(client: Any, specs: list[ImageSpec], registry: str, out_dir: Path) -> list[Pushed]:
    """Push each spec's image to `registry`; record tag → digest reference in out_dir/pushed.json."""
    rows = []
    for spec in specs:
        repository = target_repository(registry, spec)
        source = local_source(client, spec, registry)
        digest = push_image(client, source, repository, spec.tag)
        rows.append(Pushed(spec.tag, source, f"{repository}@{digest}", digest, client.images.get(source).id))
    path = out_dir / "pushed.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError) as exc:
        raise UserError(f"{path} is unreadable ({exc}); delete it and push again") from None
    record.update({r.tag: asdict(r) for r in rows})
    atomic_write(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return rows
