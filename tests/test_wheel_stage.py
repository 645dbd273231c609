"""Builds of one checkout take turns on its wheel stage (build/wheels, the folder every Dockerfile mounts): a second
build said that it waits and waited, instead of replacing the first one's wheels under it (found by running the suite
on two workers: an arm64 build failed on a CPU build's stage)."""
from __future__ import annotations

import threading
import time

import pytest

from scripts.builder.wheels import stage_turn

pytestmark = pytest.mark.unit


def test_a_second_build_waits_for_the_stage_and_says_so(tmp_path):
    stage = tmp_path / "build" / "wheels"
    said: list[str] = []
    order: list[str] = []
    held, release = threading.Event(), threading.Event()

    def first() -> None:
        with stage_turn(stage, said.append):
            held.set()
            release.wait(10)
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    assert held.wait(10)
    threading.Timer(0.3, release.set).start()
    start = time.monotonic()
    with stage_turn(stage, said.append):
        order.append("second in")
    thread.join(10)
    assert order == ["first done", "second in"] and time.monotonic() - start >= 0.25
    assert len(said) == 1 and "another build of this checkout holds" in said[0] and str(stage) in said[0]


def test_an_uncontended_stage_says_nothing_and_a_stage_it_cannot_lock_is_one_line(tmp_path):
    said: list[str] = []
    with stage_turn(tmp_path / "build" / "wheels", said.append):
        pass
    assert said == []
    (tmp_path / "file").write_text("not a folder")
    from scripts.errors import UserError
    with pytest.raises(UserError, match="cannot lock the wheel stage"), \
            stage_turn(tmp_path / "file" / "build" / "wheels", said.append):
        pass

