"""compat.yaml and its refresh from package-index metadata (recorded, no network)."""
from __future__ import annotations

import json

import pytest

from scripts.plan.compat import load_compat
from scripts.plan.compat_refresh import facts_from_report, rewrite, wheel_pythons
from tests.helpers import DATA, TEST_COMPAT

pytestmark = pytest.mark.unit

HTML = (DATA / "simple-torch-excerpt.html").read_text()


def report(version: str) -> dict:
    return json.loads((DATA / f"pip-report-torch-{version}.json").read_text())


def test_cuda13_metadata_is_read_from_the_cuda_toolkit_pin():
    facts = facts_from_report(report("2.15.0"), wheel_pythons(HTML, "2.15.0"))
    assert (facts.cuda, facts.toolkit, facts.cudnn, facts.nccl) == ("13.2", "13.2.2", "9.26.0.51", "2.30.7")
    assert facts.python == ("3.11", "3.12", "3.13", "3.14", "3.15")


def test_cuda12_metadata_is_read_from_the_cudart_pin_and_build_tags_are_handled():
    facts = facts_from_report(report("2.10.0"), wheel_pythons(HTML, "2.10.0"))
    assert (facts.cuda, facts.toolkit, facts.cudnn, facts.nccl) == ("12.8", "12.8.90", "9.10.2.21", "2.27.5")
    assert facts.python == ("3.10", "3.11", "3.12", "3.13", "3.14")   # no free-threaded 3.13t/3.14t counted


def test_recorded_metadata_agrees_with_compat_yaml():
    text = TEST_COMPAT.read_text()
    for version in ("2.15.0", "2.10.0"):
        assert rewrite(text, facts_from_report(report(version), wheel_pythons(HTML, version))) == text


def test_rewrite_updates_only_the_release_block_and_keeps_comments():
    text = TEST_COMPAT.read_text()
    facts = facts_from_report(report("2.15.0"), ("3.12",))
    facts = facts.__class__(**{**facts.__dict__, "cudnn": "9.99.0.1"})
    new = rewrite(text, facts)
    changed = [(a, b) for a, b in zip(text.splitlines(), new.splitlines(), strict=True) if a != b]
    assert len(changed) == 2 and "9.99.0.1" in changed[1][1] and '["3.12"]' in changed[0][1]
    assert new.count("#") == text.count("#")


def test_compat_facts_cover_the_current_releases():
    compat = load_compat(TEST_COMPAT)
    assert {"2.13.0", "2.14.1", "2.15.0"} <= set(compat.torch)
    for release in compat.torch.values():
        assert release.pypi_default in release.builds and "cpu" in release.builds
        for build in release.builds.values():
            assert build.index in compat.indexes
            if build.cuda != "cpu":
                assert build.cuda in compat.cuda and build.cudnn and build.nccl
