"""What each image costs a node, layer by layer, and what it shares with the rest of the family in this engine.

A layer is named by the step that made it (the venv's parts are the install steps of templates/partials/builder.j2)
and counted by its unpacked bytes (the engine's history); two images share a layer when they have the same diff id
(the digest of its uncompressed tar), which is what a node that holds one of them does not pull again. The
compressed sizes exist only once the layers are pushed: `make bench-start` prints them per layer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..plan.venvparts import cuda_parts

# A history entry that made a layer (the others only set metadata: ENV, LABEL, USER, CMD, ...)
LAYER_STEPS = ("RUN", "COPY", "ADD", "WORKDIR")
# What the venv's install steps leave in their command line (templates/partials/builder.j2), by layer name
# A crossed build (another platform's venv installed natively) COPYs each part from /parts/<name>/ instead.
_NAMES = (*(name for name, _ in cuda_parts()), "torch", "rest", "venv")
PARTS = (*((name, f"/parts/{name}/ ") for name in _NAMES),
         *((name, f"/tmp/uv/{name}.txt") for name, _ in cuda_parts()), ("torch", "/tmp/uv/torch.txt"),
         ("rest", "/tmp/uv/rest.txt"), ("venv", "uv venv"), ("verify", "COPY verify"), ("system", "apt-get"), ("mounts", "COPY rootfs/builder"),
         ("sbom", "sbom.py"), ("workdir", "WORKDIR"), ("access", "COPY"))


@dataclass(frozen=True)
class Layer:
    diff_id: str
    size: int            # unpacked bytes
    step: str            # cusparselt, cuda, nccl, cudnn, torch, rest, venv, verify, system, base, other


def _step(created_by: str, first: bool) -> str:
    for name, needle in PARTS:
        if needle in created_by:
            return name
    return "base" if first else "other"


def image_layers(client: Any, ref: str) -> list[Layer] | None:
    """The layers of a local image, oldest first, with their step and size; None when the engine's history does
    not line up with the image's layers (then no size is claimed)."""
    image = client.images.get(ref)
    diff_ids: list[str] = image.attrs.get("RootFS", {}).get("Layers", [])
    history = list(reversed(image.history()))          # the API gives the newest first
    made = [h for i, h in enumerate(history) if int(h.get("Size") or 0) > 0 or i == 0
            or str(h.get("CreatedBy", "")).lstrip().startswith(LAYER_STEPS)]
    if len(made) != len(diff_ids):
        return None
    return [Layer(d, int(h.get("Size") or 0), _step(str(h.get("CreatedBy", "")), i == 0))
            for i, (d, h) in enumerate(zip(diff_ids, made, strict=True))]


def family(client: Any, built: list[str], repository: str) -> list[str]:
    """The built images, then every other local tag of the repository: the family a node may already hold. An image
    also tagged for a registry (make push) is listed once, by its own repository's tag."""
    local = sorted(t for image in client.images.list(name=repository) for t in image.tags
                   if t.startswith(f"{repository}:"))
    return built + [t for t in local if t not in built]


def family_table(client: Any, refs: list[str]) -> str:
    """Per image: each layer's step, unpacked size and the other images (of `refs`) holding the same layer; then
    what a node holding the others still pulls for it."""
    layers = {ref: image_layers(client, ref) for ref in refs}
    rows = [f"{'IMAGE / LAYER':<58} {'UNPACKED':>10}  SHARED WITH"]
    for ref, own in layers.items():
        if own is None:
            rows.append(f"{ref:<58} {'?':>10}  (the engine's history does not line up with its layers)")
            continue
        others = {o: {x.diff_id for x in ls} for o, ls in layers.items() if o != ref and ls}
        rows.append(ref)
        for layer in own:
            shared = [o for o, ids in others.items() if layer.diff_id in ids]
            rows.append(f"  {layer.step:<8} {layer.diff_id[7:19]:<47} {layer.size / 1e6:>8.1f}MB  "
                        f"{', '.join(shared) if shared else '-'}")
        fresh = sum(x.size for x in own if not any(x.diff_id in ids for ids in others.values()))
        total = sum(x.size for x in own)
        if others and total:
            rows.append(f"  a node with the others holds {1 - fresh / total:.0%} of its layers; it downloads "
                        f"{fresh / 1e9:.2f} GB (unpacked size; a shared layer above a layer it does not hold is still "
                        f"unpacked again)")
    return "\n".join(rows)
