"""`make ci-matrix`: the images as JSON for a CI `strategy.matrix` (include list), from the same specs."""
from __future__ import annotations

import json

from .spec import ImageSpec


def ci_matrix(specs: list[ImageSpec]) -> dict:
    return {"include": [{"tag": s.tag, "flavor": s.flavor, "gpu": s.cuda is not None, "default": s.default,
                         "dockerfile": f"images/{s.tag}/Dockerfile"} for s in specs]}


def ci_matrix_json(specs: list[ImageSpec]) -> str:
    return json.dumps(ci_matrix(specs), separators=(",", ":"))
