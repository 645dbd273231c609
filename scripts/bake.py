"""`make bake`: docker-bake.json with one target per image, so `docker buildx bake` builds the matrix in
parallel on any builder (local, remote, Kubernetes driver). Groups: one per flavor, and `default`."""
from __future__ import annotations

import json
import os

from .spec import ImageSpec


def target_name(tag: str) -> str:
    """Bake target names allow [a-zA-Z0-9_-]."""
    return tag.replace(".", "_")


def bake_file(specs: list[ImageSpec]) -> dict:
    registry = os.environ.get("REGISTRY", "")
    prefix = f"{registry.rstrip('/')}/" if registry else ""
    targets = {}
    for s in specs:
        cache_ref = f"{prefix}{s.repository}:buildcache-{s.tag}" if registry else None
        target = {
            "context": ".",
            "dockerfile": f"images/{s.tag}/Dockerfile",
            "args": s.build_args,
            "tags": [f"{prefix}{s.image}"],
            "labels": {"org.opencontainers.image.version": s.tag},
            "platforms": list(s.platforms),
        }
        if cache_ref:
            target["cache-from"] = [f"type=registry,ref={cache_ref}"]
            target["cache-to"] = [f"type=registry,ref={cache_ref},mode=max"]
        targets[target_name(s.tag)] = target
    groups = {"default": {"targets": [target_name(s.tag) for s in specs]}}
    for flavor in sorted({s.flavor for s in specs}):
        groups[flavor] = {"targets": [target_name(s.tag) for s in specs if s.flavor == flavor]}
    return {"group": groups, "target": targets}


def bake_json(specs: list[ImageSpec]) -> str:
    return json.dumps(bake_file(specs), indent=2, sort_keys=True) + "\n"
