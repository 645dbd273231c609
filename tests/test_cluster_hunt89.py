"""Issue 36, an eighty-ninth hunt through the public interfaces, on what hunt85 and lows85 changed, and hunt85's lows.

DOCSTRING_PLACEHOLDER
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


SLOW = {"name": "nccl", "status": "fail", "code": "BANDWIDTH_LOW", "owner": "host", "summary": "peak busbw 40 GB/s",
        "metrics": {"busbw_max": {"value": 40.0, "unit": "GB/s"}}}


# ---- low 1: the run lock in a state folder others may write, or a lock file of another user's


def _hold(path: Path) -> subprocess.Popen[str]:
    """Another process holding a read lock on `path` (as a job holding a file it made there would)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1]); fcntl.lockf(f, fcntl.LOCK_SH); "
         "print('held', flush=True); time.sleep(60)", str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def _lock_case(state: Path, case: str) -> Path:
    (state / "history").mkdir(parents=True)
    running = state / "history" / ".n1.running"
    running.write_text("")
    running.chmod(0o600)
    if case == "other user":
        if os.geteuid() != 0:
            pytest.skip("another user's file needs root")
        os.chown(running, 65534, 65534)         # made by a job's user (nobody)
    else:
        (state / "history").chmod(0o777 if case == "world" else 0o775)
    return running


@pytest.mark.host
@pytest.mark.parametrize("case", ["other user", "world", "group"])
def test_nvsentinel_checker_rule_a_run_lock_a_job_could_hold_excuses_no_slow_node(tmp_path, fake, monkeypatch,
                                                                                   capsys, case):
    """A slow figure measured alone is the node's (BANDWIDTH_LOW drains), whatever holds a read lock on a run lock
    that a job could have made (another user's file, a folder group or others write): said, never PREFLIGHT_BUSY."""
    state = tmp_path / "state"
    holder = _hold(_lock_case(state, case))
    try:
        _verify_writes(monkeypatch, json.dumps(_report(_gpu(), SLOW)).encode())
        assert cli.main(["--state-dir", str(state), "--no-kernel-log"], PROLOG_ENV) == 1
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert fake.nodes["n1"][1].startswith("torchimages:BANDWIDTH_LOW")
    err = capsys.readouterr().err
    assert "the run lock" in err and "not believed" in err


@pytest.mark.host
def test_a_run_lock_of_ours_held_by_another_prolog_still_excuses_a_busy_host(tmp_path, fake, monkeypatch):
    state = tmp_path / "state"
    (state / "history").mkdir(parents=True)
    (state / "history").chmod(0o755)
    running = state / "history" / ".n1.running"
    running.write_text("")
    running.chmod(0o600)
    holder = _hold(running)
    try:
        _verify_writes(monkeypatch, json.dumps(_report(_gpu(), SLOW)).encode())
        assert cli.main(["--state-dir", str(state), "--no-kernel-log"], PROLOG_ENV) == 0
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert fake.nodes["n1"][0] == "idle"
