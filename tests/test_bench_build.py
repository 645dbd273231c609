"""`make bench-build`'s pure parts: the plain Dockerfile it compares against, and the alternating build order."""
from __future__ import annotations

import pytest

from scripts.builder.bench import plain_dockerfile, round_order
from scripts.builder.lock import requirements
from scripts.plan.spec import ImageSpec

pytestmark = pytest.mark.unit


def test_rounds_alternate_which_dockerfile_builds_first():
    assert round_order(1) == [("plain", "project")]
    assert round_order(4) == [("plain", "project"), ("project", "plain")] * 2
    firsts = [order[0] for order in round_order(2)]
    assert sorted(firsts) == ["plain", "project"]     # each builds first once: neither gets the warm cache twice


def test_the_plain_dockerfile_is_one_stage_pip_with_the_same_packages(test_specs: list[ImageSpec]):
    spec = next(s for s in test_specs if s.default)
    text = plain_dockerfile(spec, "base:local")
    assert text.startswith("FROM base:local\n") and text.count("FROM ") == 1
    assert "pip install --no-cache-dir" in text and "uv" not in text
    for requirement in requirements(spec):
        assert f'"{requirement}"' in text
