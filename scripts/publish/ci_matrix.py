"""`make ci-matrix`: the rendered images as JSON for a CI `strategy.matrix` (include list).

Each row carries the repository (from matrix.yaml, through spec.json) and the bake target, so the workflow
names neither images nor the repository itself."""
from __future__ import annotations

import json
from typing import Any

from ..plan.platforms import ci_platform_fields
from ..plan.spec import ImageSpec
from .bake import target_name

PER = ("platform", "tag")


def ci_matrix(specs: list[ImageSpec], per: str = "platform") -> dict[str, Any]:
    """per platform: one row per (image, platform) with its native runner (build and verify jobs); per tag: one
    row per image with its platforms joined by commas (the job that merges the platforms into one tag)."""
    rows = [{"tag": s.tag, "repository": s.repository, "image": s.image, "target": target_name(s.tag),
             "flavor": s.flavor, "gpu": s.cuda is not None, "default": s.default,
             "dockerfile": f"images/{s.tag}/Dockerfile"} for s in specs]
    if per == "tag":
        return {"include": [{**row, "platforms": ",".join(s.platforms)} for row, s in zip(rows, specs, strict=True)]}
    return {"include": [{**row, **ci_platform_fields(t.platform), "local_image": t.local_tag}
                        for row, s in zip(rows, specs, strict=True) for t in s.every_target]}


def ci_matrix_json(specs: list[ImageSpec], per: str = "platform") -> str:
    return json.dumps(ci_matrix(specs, per), separators=(",", ":"))
