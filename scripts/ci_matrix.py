"""`make ci-matrix`: the images as JSON for a CI `strategy.matrix` (include list), from the same specs."""
from __future__ import annotations

import json

from .spec import ImageSpec


def ci_matrix(specs: list[ImageSpec], per: str = "platform") -> dict:
    """per platform: one entry per (image, platform) with its native runner; per tag: one per image."""
    from .platforms import ci_platform_fields
    base = [{"tag": s.tag, "flavor": s.flavor, "gpu": s.cuda is not None, "default": s.default,
             "dockerfile": f"images/{s.tag}/Dockerfile"} for s in specs]
    if per == "tag":
        return {"include": [{**b, "platforms": ",".join(s.platforms)} for b, s in zip(base, specs)]}
    return {"include": [{**b, **ci_platform_fields(p)} for b, s in zip(base, specs) for p in s.platforms]}


def ci_matrix_json(specs: list[ImageSpec], per: str = "platform") -> str:
    return json.dumps(ci_matrix(specs, per), separators=(",", ":"))
