"""Issue 36, the two lows the last session left on the cluster side (tests/test_cluster_hunt89.py names them).

1. The hang streak's GPU set (class 5: a hung checker is evidence after a few runs). Each history event keeps the
   GPUs its run's preflight saw (`job_gpus`), so that a pass on other GPUs neither counts nor ends a streak of hangs
   (hunt73). It was read as a step's SLURM_STEP_GPUS, else SLURM_JOB_GPUS, and under Prolog= as "every GPU". Both
   were wrong where Slurm says otherwise. Slurm's prolog environment: slurmd runs Prolog= outside the job's cgroup
   with CUDA_VISIBLE_DEVICES (and SLURM_JOB_GPUS) naming the job's GPUs by their ids on the node, and verify
   inherits it, so CUDA saw those GPUs alone: a job's pass on GPUs 4-7 ended the streak of another job's hangs on
   0-3, whose stuck GPU stayed in service ("1 of 3" for ever). A step without SLURM_STEP_GPUS (slurmstepd's ids of
   the step's GPUs) kept SLURM_JOB_GPUS, the batch host's list (hunt85), and its CUDA_VISIBLE_DEVICES counts from 0
   inside the job's device cgroup: the set kept was another node's, or none (every GPU). Fix (config.seen_gpus,
   gpuset.py): under Prolog= the set is SLURM_JOB_GPUS (else the ids CUDA_VISIBLE_DEVICES gives, by hand) where
   CUDA_VISIBLE_DEVICES narrows CUDA, every GPU where it is unset; in a step SLURM_STEP_GPUS, else "unknown" where
   the step was given GPUs, every GPU where no GPU variable is set; --revalidate sees every GPU. A run of unknown
   GPUs covers only another such (as every run did before sets were kept); a known set or every GPU is never taken
   to be covered by it, nor does it clear one.
2. The kernel-log cursor across a switch of stamp formats (class 4: kernel-log evidence only once). A kernel-stamped
   read keeps the stamp of its last line; a wall-stamped read after it took a line as read when its wall stamp was
   at most boot time + that stamp + 1 s. Wall stamps are the clock's when the line was logged, the boot time is
   the clock's now: a clock stepped back since (fast when the Xid was logged) read the lines before the cursor
   again (an Xid 94 read twice counts twice toward NVIDIA's "3 on one device"), and one stepped forward since (slow
   at boot, NTP's first sync) or the second's slack skipped lines logged after the kernel read (an Xid 79 never
   read). The way back too: a kernel-stamped read after a wall-stamped one compared its lines with the older kernel
   cursor, and read the wall read's lines again, the clock right as well. Fix (verify/prolog/kernformat.py): each
   read keeps the words of its last lines (`tail`, no stamp), their place and its format; a read in the other
   format takes its lines up to where those words end as read, whatever either clock says; the stamps decide only
   where the words are not found (the log's start gone).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _gpu, _nccl, _report, _verify_writes, install_fake
from verify.prolog import cli, config, gpuset, history

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


# ---- 1: the GPUs a run saw, from what Slurm sets in each context

def _prolog(gpus: str) -> dict[str, str]:
    """Slurm's prolog environment for a job given `gpus` (SLURM_JOB_GPUS and CUDA_VISIBLE_DEVICES alike)."""
    return {**PROLOG_ENV, "SLURM_JOB_ID": "7", "SLURM_JOB_GPUS": gpus, "CUDA_VISIBLE_DEVICES": gpus}


@pytest.mark.parametrize(("env", "step", "seen"), [
    (_prolog("0,1,2,3"), False, {0, 1, 2, 3}),
    ({**PROLOG_ENV, "SLURM_JOB_GPUS": "4-7", "CUDA_VISIBLE_DEVICES": "GPU-1,GPU-2"}, False, {4, 5, 6, 7}),
    # a batch script: its CUDA_VISIBLE_DEVICES counts from 0 in the job's cgroup, SLURM_JOB_GPUS is this node's
    ({"SLURM_JOB_ID": "7", "SLURM_JOB_GPUS": "4,5", "CUDA_VISIBLE_DEVICES": "0,1"}, False, {4, 5}),
    ({"CUDA_VISIBLE_DEVICES": "2,3"}, False, {2, 3}),                    # by hand, no Slurm: the ids CUDA takes
    ({**PROLOG_ENV, "SLURM_JOB_GPUS": "4-7"}, False, None),              # CUDA not narrowed: every GPU
    (PROLOG_ENV, False, None),                                           # a job without GPUs: the node's
    ({**PROLOG_ENV, "CUDA_VISIBLE_DEVICES": "NoDevFiles"}, False, gpuset.UNKNOWN),
    ({**STEP_ENV, "SLURM_STEP_GPUS": "2", "SLURM_JOB_GPUS": "0-3"}, True, {2}),
    ({**STEP_ENV, "SLURM_JOB_GPUS": "0-3", "SLURM_GPUS_ON_NODE": "2"}, True, gpuset.UNKNOWN),   # the batch host's
    ({**STEP_ENV, "CUDA_VISIBLE_DEVICES": "0,1"}, True, gpuset.UNKNOWN),  # numbered in the step's cgroup
    ({**STEP_ENV, "SLURM_STEP_GPUS": "NoDevFiles"}, True, gpuset.UNKNOWN),
    (STEP_ENV, True, None),                                              # a step given no GPU: the node's
])
def test_slurm_prolog_environment_names_the_gpus_a_run_saw(env, step, seen):
    """Slurm's prolog environment (Prolog= outside the job's cgroup, CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS by the
    node's ids) and a step's (SLURM_STEP_GPUS by slurmd's ids; CUDA_VISIBLE_DEVICES from 0 in the cgroup)."""
    got = config.seen_gpus(env, step)
    assert (set(got) if isinstance(got, frozenset) else got) == seen


def _ok4() -> bytes:
    return json.dumps(_report(_gpu(devices=4), _nccl())).encode()


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hang: bool, env: dict[str, str], *extra: str) -> int:
    _verify_writes(monkeypatch, None if hang else _ok4(), rc=None if hang else 0)
    return cli.main(_args(tmp_path, "--budget", "30", *extra), env)


def _kept(tmp_path: Path) -> list[Any]:
    return [e.get(gpuset.FIELD) for e in history.read(str(tmp_path / "state"), "n1").events]


def test_nvsentinel_checker_rule_under_prolog_another_job_s_pass_never_ends_a_hang_streak(tmp_path, fake,
                                                                                        monkeypatch):
    """Slurm's prolog environment: each Prolog= run's preflight saw its job's GPUs (CUDA_VISIBLE_DEVICES). A GPU
    stalling every preflight of the jobs given 0-3, the passes of jobs on 4-7 between: the third hang drains
    (PREFLIGHT_HUNG, behind the breaker), as NVSentinel's checker rule counts the checker's stalls."""
    for gpus, hang in [("0-3", True), ("4-7", False), ("0-3", True), ("4-7", False), ("0,1,2,3", True)]:
        _run(tmp_path, monkeypatch, hang, _prolog(gpus))
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")
    assert _kept(tmp_path)[:2] == [[0, 1, 2, 3], [4, 5, 6, 7]]


@pytest.mark.parametrize(("between", "env"), [
    ("a Prolog= pass of the same GPUs", _prolog("0-3")),
    ("a Prolog= pass whose CUDA saw every GPU", {**PROLOG_ENV, "SLURM_JOB_GPUS": "4-7"}),
    ("a step's pass of those GPUs", {**STEP_ENV, "SLURM_STEP_GPUS": "0-7"}),
])
def test_nvsentinel_checker_rule_a_pass_that_saw_the_hung_gpus_still_ends_the_streak(tmp_path, fake, monkeypatch,
                                                                                    between, env):
    for hang, run_env in [(True, _prolog("0-3")), (True, _prolog("0-3")), (False, env), (True, _prolog("0-3"))]:
        _run(tmp_path, monkeypatch, hang, run_env)
    assert fake.nodes["n1"] == ("idle", "none"), between
    assert "1 of 3 runs in a row hung" in history.read(str(tmp_path / "state"), "n1").events[-1]["detail"]


def _unknown_step() -> dict[str, str]:
    """A step of a Slurm that says no SLURM_STEP_GPUS: the batch host's SLURM_JOB_GPUS, a count for this node."""
    return {**STEP_ENV, "SLURM_JOB_GPUS": "4-7", "SLURM_GPUS_ON_NODE": "4", "CUDA_VISIBLE_DEVICES": "0,1,2,3"}


def test_a_step_that_says_not_which_gpus_it_saw_keeps_them_unknown_and_ends_no_known_streak(tmp_path, fake,
                                                                                           monkeypatch):
    """Slurm's step environment: without SLURM_STEP_GPUS the GPUs are unknown (kept as such, never the batch host's
    list): its pass says nothing of GPUs 0-3 that hung under Prolog=, so the third hang drains."""
    for hang, env in [(True, _prolog("0-3")), (False, _unknown_step()), (True, _prolog("0-3")),
                      (False, _unknown_step()), (True, _prolog("0-3"))]:
        _run(tmp_path, monkeypatch, hang, env)
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")
    assert _kept(tmp_path)[1] == gpuset.UNKNOWN


def test_runs_of_unknown_gpus_end_each_other_s_streak_as_before(tmp_path, fake, monkeypatch):
    """Where every run's GPUs are unknown (a Slurm without SLURM_STEP_GPUS), a pass ends the hangs before it, as
    every run did before sets were kept: no node drained on hangs a pass came between."""
    for hang in (True, True, False, True):
        _run(tmp_path, monkeypatch, hang, _unknown_step())
    assert fake.nodes["n1"] == ("idle", "none")
    assert "1 of 3 runs in a row hung" in history.read(str(tmp_path / "state"), "n1").events[-1]["detail"]


def test_a_revalidation_sees_every_gpu_whatever_the_shell_narrowed(tmp_path, fake, monkeypatch):
    """Return to service proves the whole node: --revalidate drops the shell's CUDA_VISIBLE_DEVICES, so its runs
    keep no set (every GPU)."""
    fake.nodes["n1"] = ("drained", "torchimages:PREFLIGHT_HUNG #1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(devices=8), _nccl())).encode())
    cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--revalidate", "--node", "n1"],
             {"CUDA_VISIBLE_DEVICES": "2", "SLURM_JOB_GPUS": "2"})
    events = history.read(str(tmp_path / "state"), "n1").events
    assert events and all(gpuset.FIELD not in e for e in events)


@pytest.mark.parametrize(("event", "gpus", "covered"), [
    ({"job_gpus": "unknown"}, gpuset.UNKNOWN, True),
    ({"job_gpus": "unknown"}, frozenset({0}), False),
    ({"job_gpus": "unknown"}, None, False),
    ({}, gpuset.UNKNOWN, True),                       # a run of every GPU covers any
    ({"job_gpus": [0, 1]}, gpuset.UNKNOWN, False),
    ({"job_gpus": "0-3"}, gpuset.UNKNOWN, True),      # garbled: every GPU, as before
])
def test_a_run_of_unknown_gpus_covers_only_another(event, gpus, covered):
    assert gpuset.covers({"event": "pass", **event}, gpus) is covered


def test_an_unknown_hang_is_ended_by_no_pass_of_some_gpus_only(tmp_path):
    """A hang of unknown GPUs is not cleared by passes of known sets (they may not be its GPUs); a pass of every
    GPU ends it."""
    now = time.time()
    base = {"boot_id": "b", "code": "PREFLIGHT_TIMEOUT"}
    hang = {**base, "event": "not-assessed", "job_gpus": "unknown", "epoch": now - 300, "time": ""}
    other = {"event": "pass", "code": None, "boot_id": "b", "job_gpus": [4, 5, 6, 7], "epoch": now - 200}
    runs = history.streak([hang, other], frozenset({"PREFLIGHT_TIMEOUT"}), "b", now=now, gpus=frozenset({0, 1}))
    assert runs == 1
    every = {**other, "job_gpus": None}
    assert history.streak([hang, every], frozenset({"PREFLIGHT_TIMEOUT"}), "b", now=now, gpus=frozenset({0})) == 0


# ---- 2: the kernel-log cursor across a switch from the kernel's stamps to the wall clock's

XID94 = "NVRM: Xid (PCI:0000:9b:00): 94, pid={pid}, Contained ECC error"
XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid=9, GPU has fallen off the bus."
BOOT, UP1 = 1_800_000_000.0, 5000.0


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(epoch))


def _kernel_read(tmp_path: Path, messages: list[tuple[float, str]]) -> Any:
    """Run 1 reads the kernel's stamps (the clock right); its state saved and loaded as the next run finds it."""
    from verify.prolog import kernlog
    lines = [f"[{up:.6f}] {text}" for up, text in messages]
    state, _ = kernlog.advance(kernlog.State("boot"), lines, kernlog.Clock("boot", UP1, BOOT, BOOT + UP1), 86400.0)
    assert kernlog.save(str(tmp_path), "n1", state) is None
    state, why = kernlog.load(str(tmp_path), "n1")
    assert why is None
    return state


def _wall_read(state: Any, messages: list[tuple[float, str]], off_s: float, up2: float = UP1 + 60) -> Any:
    """Run 2 reads wall stamps (a site's reader): each line stamped by the clock when logged, `off_s` off then,
    right now."""
    from verify.prolog import kernlog
    lines = [f"{_iso(BOOT + up + off_s)} n1 kernel: {text}" for up, text in messages]
    return kernlog.advance(state, lines, kernlog.Clock("boot", up2, BOOT, BOOT + up2), 86400.0)


@pytest.mark.parametrize("off_s", [0, 1, 2, 60, 240, -1, -60, -240])
def test_nvidia_xid_catalog_a_switch_to_wall_stamps_reads_each_xid_exactly_once(tmp_path, off_s):
    """NVIDIA's Xid catalog counts "3 of Xid 94 on one device within the lookback": each logged Xid counted once.
    Two Xid 94 read with the kernel's stamps, then a wall-stamped read whose stamps were off by `off_s` when logged
    (fast: stepped back since; slow: NTP's first sync since): the two are not counted again (no XID_REPEATED on two
    events), and an Xid 79 logged 2 s after the kernel read is read (never skipped as read)."""
    from verify.prolog import xid
    old = [(UP1 - 100, XID94.format(pid=1)), (UP1 - 50, XID94.format(pid=2)), (UP1 - 1, "usb 1-1: new device")]
    state = _kernel_read(tmp_path, old)
    after, held = _wall_read(state, [*old, (UP1 + 1, XID79)], off_s)
    assert sorted(f.code for f in held) == [79, 94, 94], held
    assert [e["line"].endswith(XID79) for e in after.held].count(True) == 1
    _, again = _wall_read(after, [*old, (UP1 + 1, XID79)], off_s, UP1 + 120)
    assert sorted(f.code for f in again) == [79, 94, 94]              # the next wall read: nothing read twice
    judged = xid.judge(held)
    assert judged is not None and judged[0] != "XID_REPEATED"


def test_nvidia_xid_catalog_a_third_xid_94_after_the_switch_still_counts(tmp_path):
    """The third Xid 94 on the device, logged after the kernel read and read in wall time: XID_REPEATED (3 logged)."""
    from verify.prolog import xid
    old = [(UP1 - 100, XID94.format(pid=1)), (UP1 - 50, XID94.format(pid=2))]
    _, held = _wall_read(_kernel_read(tmp_path, old), [*old, (UP1 + 10, XID94.format(pid=3))], 240)
    judged = xid.judge(held)
    assert len(held) == 3 and judged is not None and judged[0] == "XID_REPEATED"


def test_a_flood_of_one_line_places_the_switch_at_the_kernel_read_s_own_count(tmp_path):
    """A flood of one line (more than the words kept) then an Xid: the words end in many places; the one at the
    kernel read's own count is where it ended, so the flood's new lines and the Xid after it are read once."""
    flood = [(UP1 - 300 + i, "eth0: link down") for i in range(100)]
    state = _kernel_read(tmp_path, [(UP1 - 400, XID94.format(pid=1)), *flood])
    more = [(UP1 + 1 + i * 0.1, "eth0: link down") for i in range(30)]
    _, held = _wall_read(state, [(UP1 - 400, XID94.format(pid=1)), *flood, *more, (UP1 + 9, XID79)], 240)
    assert sorted(f.code for f in held) == [79, 94]


def test_where_the_kernel_read_s_last_lines_are_gone_the_stamps_decide_as_before(tmp_path):
    """The log's start gone past the kernel read's last lines (rotated): its words end nowhere; the stamps decide
    (boot time + cursor), the clock right: the old Xid not read again, the new one read."""
    old = [(UP1 - 100, XID94.format(pid=1))]
    state = _kernel_read(tmp_path, old)
    _, held = _wall_read(state, [(UP1 + 30, XID79)], 0)
    assert sorted(f.code for f in held) == [79, 94]


@pytest.mark.parametrize("off_s", [0, 60])
def test_switching_back_and_forth_reads_every_line_once(tmp_path, off_s):
    """Kernel stamps, wall stamps, kernel stamps, wall stamps (a reader timing out now and then), the clock right or
    `off_s` fast while the lines were logged: each Xid 94 held once (a kernel-stamped read after a wall-stamped one
    read its lines again, the clock right too: the kernel's cursor was the read before the wall one)."""
    from verify.prolog import kernlog
    logged = [(UP1 - 100 + 40 * i, XID94.format(pid=i)) for i in range(6)]
    state = kernlog.State("boot")
    for n, up in enumerate((UP1 - 70, UP1 - 30, UP1 + 10, UP1 + 50, UP1 + 90)):
        shown = [x for x in logged if x[0] <= up]
        if n % 2 == 0:
            lines = [f"[{u:.6f}] {text}" for u, text in shown]
            state, held = kernlog.advance(state, lines, kernlog.Clock("boot", up, BOOT, BOOT + up), 10 ** 6)
        else:
            state, held = _wall_read(state, shown, off_s, up)
        assert len(held) == len(shown), (n, held)


def test_a_state_kept_before_the_tail_reads_as_before(tmp_path):
    from verify.prolog import kernlog
    kept = {"schema": 1, "boot_id": "b", "mono": 10.0, "at_mono": [], "unstamped": [], "held": []}
    (tmp_path / "kernlog").mkdir(mode=0o700)
    (tmp_path / "kernlog" / "n1.json").write_text(json.dumps(kept))
    state, why = kernlog.load(str(tmp_path), "n1")
    assert why is None and state.tail == [] and state.mono == 10.0


@pytest.mark.parametrize("off_s", [0, 120])
def test_the_gate_drains_on_no_xid_94_counted_twice_across_a_switch(tmp_path, fake, monkeypatch, off_s):
    """NVIDIA's Xid catalog through the prolog: two Xid 94 on one device read with the kernel's stamps (watched, no
    drain), then the same log in wall time, stamped while the clock ran `off_s` fast (set right since): still two,
    no XID_REPEATED drain; a third logged since is read there, and drains."""
    from verify.prolog import kernlog
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    now, up = time.time(), 1e6
    logged = [(up - 100, XID94.format(pid=1)), (up - 50, XID94.format(pid=2))]

    def run(lines: list[str], at: float) -> int:
        monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(
            "boot-a", up + at - now, now - up, at))
        monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(lines, "journalctl"))
        return cli.main(["--state-dir", str(tmp_path / "state"), "--lookback", "24"], dict(PROLOG_ENV))

    assert run([f"[{u:.6f}] n1 kernel: {text}" for u, text in logged], now) == 0
    walled = [f"{_iso(now - up + u + off_s)} n1 kernel: {text}" for u, text in logged]
    assert run(walled, now + 60) == 0 and fake.nodes["n1"] == ("idle", "none")
    assert run([*walled, f"{_iso(now + 90)} n1 kernel: {XID94.format(pid=3)}"], now + 120) == 1
    assert "XID_REPEATED" in fake.nodes["n1"][1]
