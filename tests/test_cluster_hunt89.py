"""Issue 36, an eighty-ninth hunt through the public interfaces, on what hunt85 and lows85 changed, and hunt85's lows.

Read first: tests/test_cluster_hunt85.py and tests/test_cluster_lows85.py (what the last session changed).

Found (hunt85's three lows, each decided real and fixed for its class; no high or medium found in the new changes):
- Low, class 8/2 (the run lock believed whoever held it). A slow figure (BANDWIDTH_LOW) or a confirmed timeout is
  excused as a busy host when the prolog cannot take STATE/history/.<node>.running exclusive for a moment. In a
  state folder group- or other-writable a job makes its own file in our file's place (or one owned by another user
  is found there) and holds a read lock on it: every slow node was PREFLIGHT_BUSY (exit 0, kept in service). Repro:
  `.n1.running` owned by uid 65534, or its folder 0777/0775, a read lock held by another process, a preflight
  measuring BANDWIDTH_LOW alone: exit 0. Practice: NVSentinel's checker rule (a slow figure or stall is believed when
  it recurs alone; only another preflight is "beside" it) and the state folder's own rule (statefile.not_ours: a
  file a job could have written is no operator's word). Fix (verify/prolog/busy.running): such a lock file (the
  fd's owner, then the path and its folder) is not used; the trace says "the run lock ...: its locks are not
  believed"; other prologs are seen by the history alone (which refuses the same folder). Ours, 0600 in a 0755
  folder, held by another prolog, still excuses (control).
- Low, class 9 (time). The wall cursor (kernlog.State.wall) of a reader that gave wall stamps, then the kernel's:
  a clock fast by less than TORCHIMAGES_CLOCK_SKEW at the wall read (not "from the future"), set right since, put
  the kernel-stamped lines logged in those seconds after the read at or before the cursor (boot time + stamp):
  skipped as read, an Xid 79 among them never read. Repro: kernlog.advance over a wall-stamped read with the clock
  240 s fast, saved and loaded, then a kernel-stamped read holding `[up1+30] ... Xid ... 79`: nothing held. Practice:
  NVIDIA's Xid catalog (79: drain) and the cursor's rule (no line skipped for good nor read twice; the kernel's
  stamp, which no clock step moves, decides). Fix (kernlog): a read in wall time keeps the uptime after it
  (`wall_up`); a kernel-stamped line is skipped as read there only when its stamp is at most that too (a state kept
  before it reads as before).
- Low, class 8 (leftovers). Old-name step folders `torchimages-step.XXXXXX` (before hunt85's rename) that SIGKILL
  left were never removed. /tmp is the node's own (never shared by nodes; Slurm's job_container/tmpfs makes it the
  job's), so its flock(2) locks are this kernel's: an old-name folder there is removed by the same rules (ours, no
  link, a free `.lock` over a minute old); in a TMPDIR elsewhere (perhaps shared, node-local locks) it is kept.
  Repro: an old-name folder in /tmp with a free lock two minutes old survives a step's start. Practice: flock(2) (a
  lock proves "not in use" to the kernel that could see it held).

Attacked and held (no defect), through the same interfaces:
- lows85's deferred lines: a state of 150,000 deferred entries (800 KB, under the 1 MiB cap) loads in 0.3 s and is
  cut to 500, the drain-worthy first; a deferred Xid never caught up (stamped 2099) stays no evidence and holds one
  slot until the boot ends; a reboot drops them (another boot's Xid is no evidence); a line still in the log and
  still future is not deferred twice (positions); two identical lines are two; one due and read, then given by a
  kernel-stamped reader, is read once (`_in_kernel_format`); a drain owed from a due line the breaker held stays
  held (drain-worthy, kept past the lookback).
- lows85's breaker: mixed case (`IDLE~`, `Drained~`), `#` counted, a drained node of ours powered off counted,
  sinfo's single-suffix state strings; a row with missing columns is not a row (parse_sinfo).
- hunt85's isolate rule: one flaky node with wrong values beside one partner only ends intermittent (exit 2),
  never ok; over 3 to 10 nodes, every placement of two faulty nodes (flaky+flaky, broken+flaky, broken+slow,
  flaky+slow, broken+broken), a node that returned wrong values is "ok" only where a node named on wrong values with
  two partners explains its one failure (the evidence a broken node leaves; only repeating the pair would tell, as
  the module says).
- hunt85's SLURM_STEP_GPUS: `0,1` (2), `0-3` (4), `4,5` beside SLURM_GPUS_ON_NODE=2 (2), an empty value beside a
  count (the count), a word or MIG UUID (one CONFIG_ERROR line: Slurm writes indices there).

Left (said here):
- Low: config.seen_gpus (the hang streak's GPU set) still reads SLURM_JOB_GPUS in a step where SLURM_STEP_GPUS is
  unset and SLURM_GPUS_ON_NODE is set (the batch host's list, as expected_gpus no longer does); recording none
  instead would claim every GPU, so the fix needs a "set unknown" the history can keep.
- Low: the reverse switch (kernel stamps, then wall stamps) with a clock fast at the wall read can re-read a line
  (a double read, never a skip).
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import string
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.stepscratch import SCRATCH_LINES
from tests.prolog_fakes import PROLOG_ENV, SLOW, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, kernlog

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)




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


# ---- low 2: a wall cursor read while the clock ran fast (within the skew allowance) skipped later kernel lines

XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(epoch))


@pytest.mark.parametrize("fast_s", [0, 60, 240])
def test_xid_catalog_a_kernel_stamped_xid_after_a_wall_read_with_a_fast_clock_is_read_once(tmp_path, fast_s):
    """Run 1 reads a wall-stamped log while the clock runs `fast_s` ahead (under the 300 s allowance: no line is from
    the future); the clock is then set right; an Xid 79 is logged 30 s after that read; run 2 reads the kernel's
    stamps (journalctl timed out: dmesg). The Xid is read (held, drain-worthy); the line read by run 1 is not read
    again."""
    real_boot, up1 = 1_800_000_000.0, 5000.0
    earlier = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
    now1 = real_boot + up1 + fast_s                  # the wall clock at run 1, `fast_s` ahead
    run1 = [f"{_iso(real_boot + up1 - 100 + fast_s)} n1 kernel: {earlier}",
            f"{_iso(real_boot + up1 - 50 + fast_s)} n1 kernel: nvidia-modeset: benign"]
    clock1 = kernlog.Clock("boot", up1, now1 - up1, now1)
    state, _ = kernlog.advance(kernlog.State("boot"), run1, clock1, 86400.0)
    assert kernlog.save(str(tmp_path), "n1", kernlog.settle(state)) is None     # the drain on it was done
    state, why = kernlog.load(str(tmp_path), "n1")
    assert why is None
    up2 = up1 + 60
    clock2 = kernlog.Clock("boot", up2, real_boot, real_boot + up2)               # set right since
    run2 = [f"[{up1 - 100:.6f}] {earlier}", f"[{up1 - 50:.6f}] nvidia-modeset: benign", f"[{up1 + 30:.6f}] {XID79}"]
    after, held = kernlog.advance(state, run2, clock2, 86400.0)
    assert [f.line for f in held] == [run2[2]], held
    assert [e["line"] for e in after.held] == [run2[2]]


def test_a_state_kept_before_the_wall_read_s_uptime_reads_as_before(tmp_path):
    kept = {"schema": 1, "boot_id": "b", "mono": -1.0, "at_mono": [], "unstamped": [], "held": [], "wall": 5.0}
    (tmp_path / "kernlog").mkdir(mode=0o700)
    (tmp_path / "kernlog" / "n1.json").write_text(json.dumps(kept))
    state, why = kernlog.load(str(tmp_path), "n1")
    assert why is None and state.wall_up == -1.0 and state.wall == 5.0


# ---- low 3: the folders SIGKILL left under the old name (no host) were never removed

@pytest.mark.host
def test_an_old_name_step_folder_left_in_tmp_is_removed_and_one_in_a_shared_tmpdir_is_kept(tmp_path):
    """flock(2): a lock is the kernel's that took it. /tmp is the node's own, so an old-name folder there whose lock
    is free and over a minute old is one SIGKILL left on this node (removed); in a TMPDIR elsewhere (perhaps shared
    by the nodes) an old name tells no host (kept). A live one in /tmp keeps its folder."""
    tag = "".join(random.choice(string.ascii_letters) for _ in range(5))
    left, live = Path(f"/tmp/torchimages-step.{tag}L"), Path(f"/tmp/torchimages-step.{tag}R")
    shared = tmp_path / "shared" / f"torchimages-step.{tag}S"
    holder = None
    try:
        for folder in (left, live, shared):
            folder.mkdir(parents=True, mode=0o700)
            (folder / ".lock").write_text("")
            os.utime(folder / ".lock", (1, 1))
        holder = subprocess.Popen(["flock", "-s", str(live / ".lock"), "sleep", "60"], start_new_session=True)
        deadline = time.monotonic() + 10
        while subprocess.run(["flock", "-n", str(live / ".lock"), "true"]).returncode == 0:
            assert time.monotonic() < deadline, "the live step's lock was never taken"
            time.sleep(0.05)
        script = "\n".join(["set -uo pipefail", *SCRATCH_LINES, 'echo "$TMPDIR"'])
        out = subprocess.run(["bash", "-c", script], env={"PATH": os.environ["PATH"], "TMPDIR": str(shared.parent)},
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert not left.exists(), "a folder SIGKILL left in /tmp under the old name stayed"
        assert live.is_dir() and shared.is_dir()
    finally:
        if holder is not None:
            os.killpg(holder.pid, signal.SIGKILL)
            holder.wait(timeout=10)
        for folder in (left, live):
            shutil.rmtree(folder, ignore_errors=True)
