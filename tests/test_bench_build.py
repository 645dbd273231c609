"""`make bench-build`'s pure parts: the plain Dockerfile it compares against, and the alternating build order."""
from __future__ import annotations

import pytest

from scripts.builder.bench import WHO, plain_dockerfile, round_order, uv_dockerfile
from scripts.builder.lock import UV_VERSION, requirements
from scripts.plan.spec import ImageSpec

pytestmark = pytest.mark.unit


def test_rounds_rotate_which_dockerfile_builds_first():
    assert round_order(1) == [("plain", "uv", "project")]
    assert round_order(3) == [("plain", "uv", "project"), ("uv", "project", "plain"), ("project", "plain", "uv")]
    assert round_order(4)[3] == round_order(1)[0]
    for place in range(3):      # over three rounds each builds first, second and last once: none gets the warm cache twice
        assert sorted(order[place] for order in round_order(3)) == sorted(WHO)
    assert round_order(2, ("plain", "project")) == [("plain", "project"), ("project", "plain")]


def test_the_uv_peer_is_one_stage_with_the_pinned_uv_and_the_same_packages(test_specs: list[ImageSpec]):
    spec = next(s for s in test_specs if s.default)
    text = uv_dockerfile(spec, "base:local", UV_VERSION)
    assert text.startswith("FROM base:local\n") and text.count("FROM ") == 1
    assert f"/wheels/uv-{UV_VERSION}-" in text and "uv pip install --no-cache" in text
    assert "--compile-bytecode" in text          # pip compiles by default; the peers start from the same bytecode
    for requirement in requirements(spec):
        assert f'"{requirement}"' in text


def test_the_plain_dockerfile_is_one_stage_pip_with_the_same_packages(test_specs: list[ImageSpec]):
    spec = next(s for s in test_specs if s.default)
    text = plain_dockerfile(spec, "base:local")
    assert text.startswith("FROM base:local\n") and text.count("FROM ") == 1
    assert "pip install --no-cache-dir" in text and "uv" not in text
    for requirement in requirements(spec):
        assert f'"{requirement}"' in text
