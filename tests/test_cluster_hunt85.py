"""Issue 36, an eighty-fifth hunt through the public interfaces (the node script every launcher runs, `python -m
verify.prolog`'s main under Prolog= and as `make undrain`, make fleet-report's reader), classes 1, 3, 6, 8 and 9 and
what the last session changed (tests/test_cluster_hunt84.py, tests/test_cluster_lows82.py).

Found:
- Class 8, the step's temp folder cleanup removed a live step's folder on another node (medium: a running job's
  files lost, its collective failing on a healthy node). lows82's cleanup (scripts/fleet/stepscratch.py) removes
  `torchimages-step.XXXXXX` folders whose flock(2) is free. A lock is the kernel's that took it: on a TMPDIR the
  nodes share (`TMPDIR=$HOME/tmp`, a scratch file system) whose locks are node-local (NFS `nolock` or
  `local_lock=flock`, Lustre `localflock`, BeeGFS by default) a step running on node B holds its lock on B only, and
  a step of the same user starting on node A a minute later saw it free and removed B's live folder (torchrun's
  rendezvous files, verify's temp files: the check then fails on a healthy node, and make isolate reads it as that
  node's). Repro: a node script's scratch lines run as host B (`uname -n` says hostb) holding its lock, its `.lock`
  two minutes old; the same lines run as host A with an flock that sees no lock of B's (argv recorded): B's folder
  is gone. Practice: a lock only proves "not in use" to the kernel that could see it held (flock(2): "locks created
  by flock() are associated with an open file description"; NFS and Lustre document node-local flock modes), so the
  cleanup reaches only this host's folders. Fix (stepscratch.SCRATCH_LINES): the folder is
  `torchimages-step.<host>.XXXXXX` (uname -n, made a file name's part) and only this host's are removed; a folder of
  the old name tells no host and is left alone.
- Class 10, launchers: the job's Python settings reached verify's checks (medium: a wrong owner and code, the image's
  torch never judged). Every launcher runs one node script (scripts/fleet/slurm.py `_node_prelude`; make slurm, make
  isolate's steps) under `srun --export=ALL`, which hands every node the submitting shell's environment. verify
  itself starts under `python -I` (the image's bin/verify) or SAFE_RUN, but its checks run `python -c <boot>`
  (verify/runner.py), which reads PYTHONPATH: a `module load` of another torch (Lmod sets PYTHONPATH), or a path of
  the user's own, was imported by every check in place of the venv's or the image's torch. Repro: make slurm's
  preflight node script (launcher none, `--checks shm`) with the job's PYTHONPATH holding a `torch` that records its
  import and raises: the shm check failed SHM_TOO_SMALL (owner job) on a 23 GiB /dev/shm, the gpu check
  CHECK_CRASHED (owner image), and the job's torch was imported by each check. Practice: Python's isolated mode
  (`-I`: no PYTHON* variable, no user site) and the prolog's own rule (docs/prolog.md "Its own verify": PYTHONPATH
  the package root alone, PYTHONSAFEPATH and PYTHONNOUSERSITE, no other PYTHON* of the job's). Fix (the node
  prelude): every PYTHON* variable of the job is unset before verify runs (PYTHONWARNINGS=error, PYTHONSTARTUP,
  PYTHONUSERBASE too), PYTHONNOUSERSITE=1, PYTHONUNBUFFERED=1 (the images' own), and for the host venv (launcher
  none) PYTHONPATH is the checkout alone.
- Class 6 / GPU_COUNT_UNPROVEN at the gate, a step's count read from the batch host (medium: a healthy node's job
  failed its first step, a wrong code). As a job's first step the prolog counted the GPUs Slurm allocated as the
  larger of SLURM_GPUS_ON_NODE and SLURM_JOB_GPUS. In a step, SLURM_JOB_GPUS is the batch script's, handed on by srun:
  the batch host's list, not this node's, while slurmstepd says the step's own on this node (SLURM_STEP_GPUS and
  SLURM_GPUS_ON_NODE, "the GPUs available to the step on this node", srun(1)). A job of `--gpus=6` on two nodes (four
  on the batch host, two on the other), or one whose first step asks fewer GPUs than the job, had verify asked
  `--expect-gpus 4` on a node whose step holds two: GPU_COUNT_UNPROVEN (exit 3) on a pass of both GPUs, or verify's
  own GPU_NOT_VISIBLE (exit 1, "the job's"). Repro: `verify.prolog` as a step with SLURM_STEP_GPUS=4,5,
  SLURM_GPUS_ON_NODE=2, SLURM_JOB_GPUS=0-3 and a report passing 2 NVML devices: NOT ASSESSED GPU_COUNT_UNPROVEN,
  verify given --expect-gpus 4. Practice: Slurm's environment (SLURM_JOB_GPUS "only set in batch and interactive
  jobs", SLURM_STEP_GPUS per step and node) and NVSentinel's rule that a check proves what it could see. Fix
  (verify/prolog/config.expected_gpus): in a step the ids are SLURM_STEP_GPUS where slurmstepd said the step's; under
  Prolog= and in a batch script SLURM_JOB_GPUS as before (slurmd sets it per node there). A GPU of the step's that
  is gone is still no pass (held below).
- Class 7, `make isolate` cleared a node it saw return wrong values (high: a broken node passed). A failed pair is
  cleared when a named member explains it (scripts/fleet/isolate._unexplained), whatever either failure was. With a
  slow node and a flaky one (wrong values every other all-reduce) in one fleet, round 1 paired them: a wrong
  all-reduce; round 2 the flaky one passed with a healthy node and the slow one was slow with another. The slow node
  was named "failing" on that slow pair and the very pair with the flaky node (two different partners), and the
  flaky node's wrong values were "explained" by it: `n1 ok ... every other node passed against a known-good
  partner`, the GPU that returned wrong values kept in service. 88 of the 4- to 8-node orderings of one flaky and
  one slow node ended so. Repro: make isolate's runner (tests/isolate_fakes.py, srun's argv recorded) on n1-n4, n1
  flaky with NCCL_WRONG_RESULT as verify writes it, n2 slow: exit 1, n1 "ok". Practice: NVSentinel's isolation
  rule (a node is cleared only by evidence of the same fault; a slow link returns no wrong element, NCCL's wrong
  values point at a GPU or its memory) and issue 36's class 7 (never clear a node seen failing). Fix
  (isolate._explains; isolate_run.outcome marks a pair's wrong values, `Outcome.wrong`): wrong values are explained
  only by a node named on wrong values with CONFIRM different partners; any other failure as before. One broken
  node in a healthy fleet is named exactly as before (2 to 10 nodes, every position).

Looked at and held (no defect), through the same interfaces: passfacts' impossible-pass rules (both twins) over every
report under tests/data (1,612, the h100 facts and their train record among them: none refused), and against verify's
own writers: the shm figures are statvfs's f_blocks and f_bavail (free never above size; size 0 is no limit since
hunt84), the nccl busbw_max and algbw_max come from one collective's rows (spawn.py: busbw = round(algbw x factor, 3),
so 0.5x to 2x holds; one rank writes neither); a one-GPU node and a CPU-only node write no figure the rules read
(world 1: no busbw). TORCHIMAGES_CLOCK_SKEW's two parsers (one grammar; `5m\\n`, `1w`, `86400.000000001`, `0`).
open_rw's 0600 fix-up: a symlink at the lock's path is refused (O_NOFOLLOW, ELOOP); a FIFO or folder is refused after
fstat; a lock file owned by another user is left as it is (only a folder others may write lets one be made there,
and such a state folder is already no operator's: settings.py, statefile.not_ours).

Left (said here):
- Low: busy.Running.others believes a read lock on STATE/history/.<node>.running whoever holds it; a lock file made
  there by another user (a state folder group- or other-writable) would excuse slow figures as a busy host. Such a
  folder already makes the kernel-log state and the settings file no operator's word; the run lock could say so too.
- Low: the wall cursor (kernlog.State.wall) of a reader that gave wall stamps, then the kernel's: a clock stepped
  back by less than TORCHIMAGES_CLOCK_SKEW after the wall read puts the kernel-stamped lines of those seconds at or
  before the cursor (boot time + stamp), skipped as read. Only a site's wrapper gives wall stamps (the prolog asks
  journalctl for the kernel's).
- Low: folders of the old name (`torchimages-step.XXXXXX`) a SIGKILLed step left before this change are no longer
  removed (they tell no host): remove them once by hand.

Each test names the practice it follows.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.slurm import Job, node_script, slurm_script
from scripts.fleet.stepscratch import SCRATCH_LINES
from tests.helpers import ROOT
from tests.isolate_fakes import _isolate
from tests.prolog_fakes import STEP_ENV, _gpu, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli


def _fake(folder: Path, name: str, body: str) -> None:
    """An external command replaced: its argv recorded in folder/../argv, then `body`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "{folder.parent}/argv"\n{body}\n')
    (folder / name).chmod(0o755)


def _scratch_shell(tmp: Path, path_first: Path, body: str) -> subprocess.Popen[str]:
    """The node script's scratch lines (every launcher's), then `body`, in bash, with `path_first` ahead on PATH."""
    script = "\n".join(["set -uo pipefail", *SCRATCH_LINES, body])
    return subprocess.Popen(["bash", "-c", script], env={"PATH": f"{path_first}:{os.environ['PATH']}",
                                                          "TMPDIR": str(tmp)},
                            stdout=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.host
def test_a_live_step_of_another_node_keeps_its_folder_where_the_shared_tmpdirs_locks_are_node_local(tmp_path):
    """A lock only proves "not in use" to the kernel that could see it held (flock(2); NFS `local_lock=flock`,
    Lustre `localflock`, BeeGFS by default keep flock node-local): on a TMPDIR the nodes share, the cleanup of the
    folders SIGKILL left reaches this host's alone, and a step running on node B keeps its folder when a step of the
    same user starts on node A."""
    tmp = tmp_path / "shared-tmp"
    tmp.mkdir()
    _fake(tmp_path / "host-b", "uname", "echo hostb")                 # node B's name
    _fake(tmp_path / "host-a", "uname", "echo hosta")                 # node A's name
    _fake(tmp_path / "host-a", "flock", "exit 0")                     # from A, B's lock is not seen: free
    b = _scratch_shell(tmp, tmp_path / "host-b", 'echo "$TMPDIR"; sleep 300')
    try:
        assert b.stdout is not None
        live = Path(b.stdout.readline().strip())
        assert live.parent == tmp and (live / ".lock").is_file()
        os.utime(live / ".lock", (1, 1))                              # a step running for more than a minute
        a = _scratch_shell(tmp, tmp_path / "host-a", 'echo "$TMPDIR"')
        out, _ = a.communicate(timeout=60)
        assert a.returncode == 0
        assert live.is_dir(), "a live step's folder on another node was removed"
        assert "hosta" in Path(out.strip()).name and "hostb" in live.name     # each folder names its host
    finally:
        os.killpg(b.pid, signal.SIGKILL)
        b.wait(timeout=30)
    assert "flock -n 8" in (tmp_path / "argv").read_text()


def _job(test_specs, launcher: str, python: str = ".venv/bin/python") -> Job:
    spec = next(s for s in test_specs if s.tag == "2.13.0-cpu-debian12")
    return Job(spec, spec.image, 1, 0, launcher, preflight=True, verify_args=("--checks", "shm"), python=python,
               checkout=str(ROOT))


def _job_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The submitting shell's environment as srun --export=ALL hands it to each node: a PYTHONPATH holding a torch of
    the job's own (a `module load`), which records its import and raises."""
    mods = tmp_path / "mods" / "torch"
    mods.mkdir(parents=True)
    (mods / "__init__.py").write_text("import os\nopen(os.environ['MARK'], 'a').write('imported\\n')\n"
                                      "raise ImportError('the job torch')\n")
    (tmp_path / "reports").mkdir()
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TORCHIMAGES_REPORTS_IN": str(tmp_path / "reports"),
            "SLURM_JOB_ID": "1", "SLURMD_NODENAME": "n1", "MARK": str(tmp_path / "mark"),
            "PYTHONPATH": str(tmp_path / "mods"), "PYTHONSTARTUP": str(tmp_path / "mods" / "torch" / "__init__.py"),
            "PYTHONUSERBASE": str(tmp_path / "mods"), "PYTHONWARNINGS": "error", **extra}


@pytest.mark.host
def test_the_jobs_pythonpath_never_reaches_the_checks_of_the_host_venvs_verify(tmp_path, test_specs):
    """Python's isolated mode and the prolog's own rule (docs/prolog.md "Its own verify"): make slurm's node script
    (launcher none: the venv on the hosts) runs verify's checks with the checkout alone on PYTHONPATH; a torch on
    the job's PYTHONPATH is never imported in place of the venv's (it was: SHM_TOO_SMALL on a large /dev/shm)."""
    job = _job(test_specs, "none", str(ROOT / ".venv" / "bin" / "python"))
    env = _job_env(tmp_path, TORCHIMAGES_PYTHON=job.python)
    # the batch script's own lines before the step: the checkout ahead of the job's PYTHONPATH
    exports = [line for line in slurm_script(job).splitlines() if line.startswith("export PYTHONPATH=")]
    assert exports
    proc = subprocess.run(["bash", "-c", "\n".join([*exports, node_script(job)])], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, check=False)
    assert not (tmp_path / "mark").exists(), "the job's torch was imported by verify's checks"
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.host
def test_the_image_launchers_node_script_hands_verify_none_of_the_jobs_python_settings(tmp_path, test_specs):
    """The same rule for the image's verify (pyxis; its bin/verify puts its root ahead of what PYTHONPATH it is
    given, and its checks read the rest): the node script hands it no PYTHON* variable of the job's
    (PYTHONWARNINGS=error would crash a check on a warning), and PYTHONSAFEPATH and PYTHONNOUSERSITE (a home mounted
    into the container holds the user's ~/.local); PYTHONUNBUFFERED, the images' own, stays."""
    _fake(tmp_path / "bin", "verify", f'env | grep "^PYTHON" | sort > "{tmp_path}/seen"; exit 0')
    env = _job_env(tmp_path)
    env["PATH"] = f"{tmp_path / 'bin'}:{env['PATH']}"
    proc = subprocess.run(["bash", "-c", node_script(_job(test_specs, "pyxis"))], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "seen").read_text().split() == ["PYTHONNOUSERSITE=1", "PYTHONSAFEPATH=1",
                                                        "PYTHONUNBUFFERED=1"]


# ---- a step's GPUs are the step's on this node (SLURM_STEP_GPUS), not the batch host's (SLURM_JOB_GPUS)

# node 2 of a job of --gpus=6 on two nodes: the batch host holds 0-3, this node's step holds 4 and 5
SECOND_NODE = {**STEP_ENV, "SLURM_JOB_GPUS": "0-3", "SLURM_GPUS_ON_NODE": "2", "SLURM_STEP_GPUS": "4,5",
               "CUDA_VISIBLE_DEVICES": "0,1"}


def _step_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, devices: int) -> tuple[int, list[Any], str]:
    for name, value in SECOND_NODE.items():
        monkeypatch.setenv(name, value)
    install_fake(monkeypatch)
    seen: list[Any] = []
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(devices=devices))).encode(), seen)
    rc = cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"])
    cmd = seen[0][0]
    return rc, cmd[cmd.index("--expect-gpus") + 1:cmd.index("--expect-gpus") + 2], str(history_events(tmp_path))


@pytest.mark.unit
def test_a_first_step_proves_the_gpus_its_node_gave_the_step_not_the_batch_hosts(tmp_path, monkeypatch):
    """Slurm's environment: in a step SLURM_JOB_GPUS is the batch script's (the batch host's list, srun hands it on)
    and slurmstepd says the step's GPUs on this node (SLURM_STEP_GPUS, SLURM_GPUS_ON_NODE): a pass of both GPUs the
    step holds on node 2 is a pass, verify asked for 2 (it was asked for 4: GPU_COUNT_UNPROVEN on a healthy node)."""
    rc, asked, events = _step_run(tmp_path, monkeypatch, devices=2)
    assert (rc, asked) == (0, ["2"]), events
    assert "'pass'" in events


@pytest.mark.unit
def test_a_first_step_missing_one_of_its_own_gpus_is_still_no_pass(tmp_path, monkeypatch):
    """NVSentinel's rule, no false pass: the step's own count still binds; one GPU of the two seen is not proven."""
    rc, asked, events = _step_run(tmp_path, monkeypatch, devices=1)
    assert asked == ["2"] and rc != 0 and "'pass'" not in events


@pytest.mark.unit
def test_under_prolog_and_in_a_batch_script_the_jobs_gpu_list_still_counts(monkeypatch):
    """Slurm's prolog semantics: slurmd sets SLURM_JOB_GPUS for this node under Prolog= (and a batch script runs on
    the batch host, whose list it is): there it still counts, the larger of Slurm's two words."""
    from verify.prolog import config
    assert config.expected_gpus({"SLURM_JOB_GPUS": "0-7", "SLURM_GPUS_ON_NODE": "2"}) == 8
    assert config.expected_gpus({"SLURM_JOB_GPUS": "0-7", "SLURM_STEP_GPUS": "4,5", "SLURM_GPUS_ON_NODE": "2"},
                                step=True) == 2
    assert config.expected_gpus({"SLURM_JOB_GPUS": "0-7"}, step=True) == 8      # a step that says nothing of its own


# ---- make isolate: wrong values are cleared only by a node named on wrong values

@pytest.mark.host
def test_nvsentinel_isolation_a_slow_node_never_explains_a_partners_wrong_values(tmp_path):
    """NVSentinel's isolation rule and issue 36's class 7: n1 returns wrong values every other all-reduce, n2 is slow.
    n2 named on one slow pair and the pair it shared with n1 cleared n1 ("ok", exit 1): now n1 is never ok."""
    rc, lines = _isolate(tmp_path, ["n1", "n2", "n3", "n4"], {"flaky": ["n1"], "slow": ["n2"], "as_verify": True})
    verdicts = {ln.split()[0]: ln.split()[1] for ln in lines if ln.startswith("  n")}
    assert verdicts["n1"] in ("INTERMITTENT", "FAILING"), lines
    assert rc != 0 and "every other node passed" not in "\n".join(lines)


@pytest.mark.host
def test_nvsentinel_isolation_one_node_returning_wrong_values_is_still_named_alone(tmp_path):
    """The same rule holds one broken node's answer as before: named failing, every other node ok (exit 1)."""
    rc, lines = _isolate(tmp_path, ["n1", "n2", "n3", "n4", "n5"], {"bad": ["n2"], "as_verify": True})
    verdicts = {ln.split()[0]: ln.split()[1] for ln in lines if ln.startswith("  n")}
    assert rc == 1 and verdicts == {"n1": "ok", "n2": "FAILING", "n3": "ok", "n4": "ok", "n5": "ok"}, lines
