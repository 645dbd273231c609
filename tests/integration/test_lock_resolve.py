"""`make lock` against the real index (network): resolving again reproduces the committed lock of the CPU image."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from scripts.builder.lock import compile_lock, lock_folders, parse_lock
from scripts.plan.platforms import NATIVE_NAME
from scripts.plan.spec import Target
from scripts.render import load_rendered
from tests.helpers import ROOT, assert_clean_failure, run_cli

pytestmark = pytest.mark.docker

IMAGES = ROOT / "images"


def test_resolving_again_keeps_the_committed_pins_and_hashes():
    """The committed lock is uv's preference: a refresh with unchanged inputs keeps every pin (and its hashes)."""
    spec = next(s for s in load_rendered(IMAGES) if s.default)
    folders = lock_folders(())
    if not any(Path(f).glob("torch-2.13.0+cpu-*.whl") for f in folders):
        pytest.skip("the CPU torch wheel is not in a local wheel folder here")
    text = Target(spec, NATIVE_NAME).lock_path(IMAGES).read_text()
    fresh = {p.name: p for p in parse_lock(compile_lock(Target(spec, NATIVE_NAME), folders, previous=text, env=os.environ))}
    committed = {p.name: p for p in parse_lock(text)}
    assert {n: p.version for n, p in fresh.items()} == {n: p.version for n, p in committed.items()}
    assert all(set(committed[n].hashes) <= set(p.hashes) for n, p in fresh.items())


def test_lock_of_an_unknown_image_is_one_clear_line():
    assert_clean_failure(run_cli("lock", "--image", "9.9.9-cpu-debian12"), "9.9.9-cpu-debian12", code=2)
