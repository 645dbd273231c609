"""`make ci-matrix`: the rendered images as JSON for a CI `strategy.matrix` (include list).

Each row carries the repository (from matrix.yaml, through spec.json) and the bake target, so the workflow
names neither images nor the repository itself."""
from __future__ import annotations

import json
from typing import Any

from ..plan.spec import ImageSpec
from .bake import target_name


def ci_matrix(specs: list[ImageSpec]) -> dict[str, Any]:
    return {"include": [{"tag": s.tag, "repository": s.repository, "image": s.image, "target": target_name(s.tag),
                         "flavor": s.flavor, "gpu": s.cuda is not None, "default": s.default,
                         "dockerfile": f"images/{s.tag}/Dockerfile"} for s in specs]}


def ci_matrix_json(specs: list[ImageSpec]) -> str:
    return json.dumps(ci_matrix(specs), separators=(",", ":"))
