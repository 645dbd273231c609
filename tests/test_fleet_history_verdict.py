"""Issue 36, class 3 and 8 on the fleet side: with STATE_DIR the drain history is part of the fleet's answer.

`make fleet-report STATE_DIR=...` passed (exit 0, "fleet: ok") with a node flagged for hardware inspection (drained
again within 7 days of a resume: NVSentinel's return-to-service rule, a node that fails again after its repair is
flapping and goes to a person) and with a history it could not read (a FIFO, a folder, garbled lines: events
unknown, not none). An operator reads a passing fleet as a healthy one; neither is. The flagged node and the
unread history are each counted on the last line and the command exits 1; a clean history still passes.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from scripts.cli import main
from tests.verify_handmade import make_report
from verify.prolog import history as prolog_history

pytestmark = pytest.mark.unit


def _job(tmp_path: Path) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    for host in ("n1", "n2"):
        doc = make_report()
        doc["environment"]["hostname"] = host
        doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        (job / f"{host}.json").write_text(json.dumps(doc))
    return job


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["fleet-report"], {"DIR": str(tmp_path / "job"), "STATE_DIR": str(tmp_path / "state")})
    return status, capsys.readouterr().out


def test_a_clean_history_leaves_the_fleet_passing(tmp_path, capsys):
    _job(tmp_path)
    now = time.time()
    prolog_history.record(str(tmp_path / "state"), "n1", "drain", "GPU_LOST", "drained", now=now - 30 * 86400)
    prolog_history.record(str(tmp_path / "state"), "n1", "resume", None, "revalidated", now=now - 29 * 86400)
    prolog_history.record(str(tmp_path / "state"), "n2", "pass", None, "preflight passed", now=now - 3600)
    status, out = _run(tmp_path, capsys)
    assert status == 0, out


def test_a_node_flagged_for_hardware_inspection_fails_the_fleet(tmp_path, capsys):
    _job(tmp_path)
    now, state = time.time(), str(tmp_path / "state")
    prolog_history.record(state, "n1", "drain", "GPU_LOST", "drained", now=now - 30 * 3600)
    prolog_history.record(state, "n1", "resume", None, "revalidated", now=now - 20 * 3600)
    prolog_history.record(state, "n1", "drain", "GPU_LOST", "drained", now=now - 15 * 3600)
    prolog_history.record(state, "n1", "inspect", "GPU_LOST", "drained again 5.0 h after it was resumed",
                          now=now - 15 * 3600)
    status, out = _run(tmp_path, capsys)
    assert status == 1 and "1 node(s) flagged for hardware inspection" in out, out
    assert "n1: flagged by the prolog" in out


@pytest.mark.parametrize("kind", ["garbled", "folder", "fifo"])
def test_a_history_not_wholly_read_fails_the_fleet(tmp_path, capsys, kind):
    _job(tmp_path)
    path = Path(prolog_history.path(str(tmp_path / "state"), "n1"))
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "garbled":
        prolog_history.record(str(tmp_path / "state"), "n1", "pass", None, "passed", now=time.time() - 60)
        with path.open("a", encoding="utf-8") as fh:
            fh.write('{"schema": 1, "event": "drain", "epoch": "yesterday"\n')
    elif kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    status, out = _run(tmp_path, capsys)
    assert status == 1 and "1 drain history file(s) not wholly read" in out, out


def _flagged_again(tmp_path) -> tuple[float, str]:
    """n1 drained for a lost GPU, revalidated, drained again and flagged for inspection 15 hours ago."""
    _job(tmp_path)
    now, state = time.time(), str(tmp_path / "state")
    prolog_history.record(state, "n1", "drain", "GPU_LOST", "drained", now=now - 30 * 3600)
    prolog_history.record(state, "n1", "resume", None, "revalidated", now=now - 20 * 3600)
    prolog_history.record(state, "n1", "drain", "GPU_LOST", "drained", now=now - 15 * 3600)
    prolog_history.record(state, "n1", "inspect", "GPU_LOST", "drained again", now=now - 15 * 3600)
    return now, state


def test_a_flagged_node_inspected_and_back_in_service_no_longer_holds_the_fleet(tmp_path, capsys):
    """`--revalidate` refuses a flagged node, so an operator inspects it and resumes it by hand (no `resume` in the
    history): its next preflight passing is the evidence it is back. The flag stays listed; the fleet passes."""
    now, state = _flagged_again(tmp_path)
    prolog_history.record(state, "n1", "pass", None, "preflight passed", now=now - 3600)
    status, out = _run(tmp_path, capsys)
    assert status == 0 and "n1: flagged by the prolog" in out, out


def test_a_pass_of_a_prolog_that_ran_beside_the_drain_is_no_return_to_service(tmp_path, capsys):
    """Two jobs' prologs on one shared node: one drains and flags it, the other, started before the drain, passes
    after it. That pass ran beside the fault (its `started` before the drain): the node is still out of service."""
    now, state = _flagged_again(tmp_path)
    prolog_history.record(state, "n1", "pass", None, "preflight passed", now=now - 15 * 3600 + 5,
                          extra={"started": now - 15 * 3600 - 20})
    status, out = _run(tmp_path, capsys)
    assert status == 1 and "1 node(s) flagged for hardware inspection" in out, out
