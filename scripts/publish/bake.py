"""`make bake`: a bake file with one target per image, so `docker buildx bake` builds the matrix in parallel on
any builder (local, remote, Kubernetes driver), and CI builds through it. Groups: one per flavor, and `default`.

Each target is `builder.buildkit.build_definition(spec)`, the definition `make build` uses too."""
from __future__ import annotations

import json
from typing import Any

from ..builder.buildkit import build_definition
from ..plan.spec import ImageSpec


def target_name(tag: str) -> str:
    """Bake target names allow [a-zA-Z0-9_-]."""
    return tag.replace(".", "_")


def bake_file(specs: list[ImageSpec], registry: str = "") -> dict[str, Any]:
    prefix = f"{registry}/" if registry else ""
    targets = {}
    for s in specs:
        target = build_definition(s, registry)
        if registry:
            cache_ref = f"{prefix}{s.repository}:buildcache-{s.tag}"
            target["cache-from"] = [f"type=registry,ref={cache_ref}"]
            target["cache-to"] = [f"type=registry,ref={cache_ref},mode=max"]
        targets[target_name(s.tag)] = target
    groups: dict[str, dict[str, list[str]]] = {"default": {"targets": [target_name(s.tag) for s in specs]}}
    for flavor in sorted({s.flavor for s in specs}):
        groups[flavor] = {"targets": [target_name(s.tag) for s in specs if s.flavor == flavor]}
    return {"group": groups, "target": targets}


def bake_json(specs: list[ImageSpec], registry: str = "") -> str:
    return json.dumps(bake_file(specs, registry), indent=2, sort_keys=True) + "\n"
