"""Issue 36, class 3 (a fourth hunt): return to service must prove the repair, and rotation must not forget it.

NVSentinel's return to service: a node drained again within the flap window of a resume needs hardware inspection,
and `make undrain` refuses it. The history is rotated past MAX_BYTES to its last KEEP_LINES lines, and every job's
prolog appends a `pass`: a busy node (short jobs, job arrays: a few thousand prologs in a week) rotated its resume
away, the flap was never seen, and a node whose fault came back was resumed again without inspection. Rotation now
keeps, ahead of the tail, the last drains, resumes and inspections it would drop: what return to service reads."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.prolog_fakes import FakeSlurm, _args, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, history, slurm
from verify.prolog.verdict import EXIT_REFUSED

pytestmark = pytest.mark.unit

DAY = 86400.0


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _busy(state: str, count: int, since: float) -> None:
    """`count` passes (a prolog's line each), appended as the prologs of a busy node write them."""
    line = {"schema": 1, "node": "n1", "event": "pass", "code": None, "detail": "7 check(s) passed",
            "boot_id": "0f0f0f0f-1111-2222-3333-444444444444"}
    with open(history.path(state, "n1"), "a", encoding="utf-8") as fh:
        for i in range(count):
            when = since + i * 60
            fh.write(json.dumps({**line, "epoch": when, "id": f"{i:016x}", "started": when - 20,
                                 "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))}) + "\n")


def test_nvsentinel_flap_rule_survives_a_busy_week_of_rotations(tmp_path):
    state, now = str(tmp_path), time.time()
    history.record(state, "n1", "drain", "GPU_LOST", "first", now=now - 4 * DAY, extra={"gpus": 8})
    history.record(state, "n1", "resume", None, "passes", now=now - 3 * DAY)
    for _ in range(3):                               # three rotations' worth of jobs (each: MAX_BYTES of passes)
        _busy(state, 4500, now - 3 * DAY + 60)
        history.record(state, "n1", "pass", None, "7 check(s) passed", now=now - 60)
    history.record(state, "n1", "drain", "GPU_LOST", "again", now=now, extra={"gpus": 8})
    assert Path(history.path(state, "n1")).stat().st_size < history.MAX_BYTES
    read = history.read(state, "n1")
    assert read.garbled is None
    assert [e["event"] for e in read.events[:3]] == ["drain", "resume", "pass"]
    flap = history.failed_again_after_resume(read.events)
    assert flap and "needs hardware inspection" in flap


def test_rotation_keeps_the_milestones_bounded(tmp_path):
    """The kept milestones are the last ones, in their order, and a bounded few: a history of only drains and
    resumes still rotates to about KEEP_LINES lines."""
    state = str(tmp_path)
    for i in range(400):
        history.record(state, "n1", "resume" if i % 2 else "drain", None if i % 2 else "GPU_LOST", f"m{i}",
                       now=1000.0 + i, max_bytes=20_000, keep_lines=50)
    events = history.read(state, "n1").events
    assert len(events) < 200 and events[-1]["detail"] == "m399"
    numbers = [int(e["detail"][1:]) for e in events]
    assert numbers == sorted(numbers)


def test_make_undrain_refuses_the_flapping_busy_node(tmp_path, fake, monkeypatch, capsys):
    """End to end: `make undrain` on the node drained again two days after its resume, 13,500 jobs later."""
    state, now = str(tmp_path / "state"), time.time()
    history.record(state, "n1", "drain", "NVLINK_DOWN", "first", now=now - 4 * DAY, extra={"gpus": 8, "check": "gpu"})
    history.record(state, "n1", "resume", None, "passes", now=now - 3 * DAY)
    for _ in range(3):
        _busy(state, 4500, now - 3 * DAY + 60)
        history.record(state, "n1", "pass", None, "7 check(s) passed", now=now - 120)
    history.record(state, "n1", "drain", "NVLINK_DOWN", "again", now=now - 60, extra={"gpus": 8, "check": "gpu"})
    fake.info = {"NodeHostName": "n1", "Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "NVLINK_DOWN", "again", now - 60))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("pass", 8))).encode())
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == EXIT_REFUSED
    assert "hardware inspection" in capsys.readouterr().err and fake.nodes["n1"][0] == "drained"


def test_nvsentinel_flap_rule_a_resume_stamped_in_the_past_hides_no_flap(tmp_path):
    """The mirror of a resume stamped in the future: a node rebooted for its repair and resumed before its clock was
    set (a dead RTC battery: 1970, or a month behind) stamped its resume long before the drain it followed. By the
    stamps the next drain, two hours on, came 30 days after it: no flap, and `make undrain` and the fleet report
    let it pass. The resume happened after every event logged before it: its time is at least theirs."""
    from scripts.fleet.history import read_state
    state, now = str(tmp_path), time.time()
    history.record(state, "n1", "drain", "GPU_LOST", "first", now=now - 5 * 3600)
    history.record(state, "n1", "resume", None, "passes", now=now - 30 * DAY)          # its clock a month behind
    history.record(state, "n1", "drain", "GPU_LOST", "again", now=now)                 # set again, 5 h later
    flap = history.failed_again_after_resume(history.read(state, "n1").events)
    assert flap and "needs hardware inspection" in flap and "clock" in flap
    found = read_state(tmp_path, ["n1"], now=now)["n1"]
    assert found.inspect and "clock" in found.inspect
    history.record(state, "n1", "resume", None, "passes", now=now + 30 * DAY)
    history.record(state, "n1", "drain", "GPU_LOST", "a month on", now=now + 40 * DAY)
    assert history.failed_again_after_resume(history.read(state, "n1").events) is None


def test_an_event_stamped_after_the_drain_says_nothing_of_the_resume(tmp_path):
    """A pass stamped a year ahead (its clock ahead then) before a drain and a resume of a month ago: the resume's
    own stamp stands, and a drain 30 days after it is no flap."""
    state, now = str(tmp_path), time.time()
    history.record(state, "n1", "pass", None, "ahead", now=now + 365 * DAY)
    history.record(state, "n1", "drain", "GPU_LOST", "first", now=now - 40 * DAY)
    history.record(state, "n1", "resume", None, "passes", now=now - 30 * DAY)
    history.record(state, "n1", "drain", "GPU_LOST", "again", now=now)
    assert history.failed_again_after_resume(history.read(state, "n1").events) is None
