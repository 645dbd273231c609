"""After `make push`: what each pushed image costs a node, layer by layer, compressed and unpacked.

The compressed sizes exist only once the layers are pushed (the engine stores them unpacked): they come from the
image manifest the registry holds, the unpacked sizes and step names from the engine (builder/layers.py). A manifest
lists its layers in the order of the image's diff ids, so the two line up by position. Two pushed images share a
layer when their manifests name the same blob digest: a node that holds one does not download that layer again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..builder.layers import image_layers
from ..oci import layers_of
from .registry import Registry


@dataclass(frozen=True)
class LayerCost:
    digest: str          # the compressed blob's digest in the registry
    compressed: int
    unpacked: int | None  # None: the engine's history does not line up with the image's layers
    step: str


def manifest_layers(reg: Registry, repo: str, reference: str) -> list[tuple[str, int]]:
    """(digest, compressed size) of each layer of one image manifest in the registry, oldest first."""
    return layers_of(reg.get_manifest(repo, reference)[0])


def layer_costs(client: Any, source: str, pushed: list[tuple[str, int]]) -> list[LayerCost]:
    """The pushed layers with the local image's steps and unpacked sizes (by position; unknown when they differ)."""
    local = image_layers(client, source) if client is not None else None
    if local is None or len(local) != len(pushed):
        return [LayerCost(d, size, None, "?") for d, size in pushed]
    return [LayerCost(d, size, x.size, x.step) for (d, size), x in zip(pushed, local, strict=True)]


def cost_table(images: dict[str, list[LayerCost]]) -> str:
    """Per image: each layer's step, compressed and unpacked size and the other images holding the same blob; then
    what a node that holds the others still downloads for it."""
    rows = [f"{'IMAGE / LAYER':<40} {'COMPRESSED':>11} {'UNPACKED':>10}  SHARED WITH"]
    for name, own in images.items():
        others = {o: {x.digest for x in ls} for o, ls in images.items() if o != name}
        rows.append(name)
        for x in own:
            shared = [o for o, ds in others.items() if x.digest in ds]
            unpacked = "?" if x.unpacked is None else f"{x.unpacked / 1e6:.1f}MB"
            rows.append(f"  {x.step:<8} {x.digest[7:19]:<29} {x.compressed / 1e6:>9.1f}MB {unpacked:>10}  "
                        f"{', '.join(shared) if shared else '-'}")
        total = sum(x.compressed for x in own)
        rows.append(f"  total {total / 1e9:.3f} GB compressed in {len(own)} layers")
        if others and total:
            fresh = sum(x.compressed for x in own if not any(x.digest in ds for ds in others.values()))
            rows.append(f"  a node that holds the others downloads {fresh / 1e9:.3f} GB of it ({fresh / total:.1%})")
    return "\n".join(rows)
