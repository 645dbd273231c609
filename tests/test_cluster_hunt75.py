"""Issue 36, a seventy-fifth hunt: the operator's day through the public interfaces (`python -m verify.prolog`'s main
as Prolog= and as `make undrain NODE=...` runs it, the state folder's history), with tests/prolog_fakes.py's Slurm.

A node drained for a real host fault (Xid 79, a lost GPU, ECC pending remap, /dev/shm), repaired by a GPU reset, a
reboot or nothing, `make undrain` run once, twice, too early, with the kernel log still holding the old Xid, with the
state folder on another path, and the next jobs' prologs after it.

Found:
- Class 3, return to service must prove the repair (high: a broken node resumed unproven). `make undrain` runs in
  the operator's shell, and the prolog handed that shell's environment to the revalidation's verify. A
  CUDA_VISIBLE_DEVICES left from debugging the faulted GPU (`export CUDA_VISIBLE_DEVICES=0-4,6,7`, the SRE's way to
  keep working around GPU 5) hid that GPU from every check but NVML's count: verify's gpu check passes with torch on
  the GPUs the variable names (a detail line, no failure), NVML still lists 8, so the Gres count held and the node
  drained for GPU 5 was resumed on a preflight that never ran a kernel or an all-reduce on GPU 5. Likewise the
  shell's NCCL_P2P_DISABLE=1 (left from debugging an NVLink fault: the all-reduce then never crosses NVLink) and
  VERIFY_SHM_PATH (the shm check measures another folder than /dev/shm). Repro: n1 drained for GPU_LOST, rebooted,
  `CUDA_VISIBLE_DEVICES=0-4,6,7 make undrain NODE=n1`: verify ran with it, n1 resumed. Practice: NVSentinel's
  return to service reruns the failed check on the whole node, never on a sample of it. Fix
  (verify/prolog/verifyrun.py drop_shell_settings): a revalidation's verify sees the node as Prolog= does: the
  shell's GPU-narrowing variables (CUDA/NVIDIA/HIP/ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL) and verify's, NCCL's
  and gloo's own settings (a job step's rule) are dropped, named in one note line. A gate run (Prolog=, a job's
  first step) keeps Slurm's CUDA_VISIBLE_DEVICES: that is the allocation it gates.

- Class 3 / class 8, evidence lost between a drain and its undrain (high: a broken node resumed unproven). The
  revalidation reads the drain's facts (which check found the fault) from the history, and where the history's last
  drain is not the one Slurm's reason stamps it set them aside as unknown, then required only the checks of the
  other drains listed there. With the state folder on another path (`make undrain STATE_DIR=` naming the folder the
  gate wrote before it moved, holding an old /dev/shm drain of n1), a node Slurm shows drained for
  NCCL_WRONG_RESULT was resumed on a preflight whose nccl check never ran (round 67's rule held only where the
  record was found). Repro: Slurm reason `torchimages:NCCL_WRONG_RESULT`, --state-dir holding one SHM_TOO_SMALL
  drain of a month ago, a passing report of gpu and shm only: RESUMED. Practice: NVSentinel's return to service
  reruns the check that failed; not knowing which, every one. Fix (verify/prolog/rechecks.py, read by
  revalidate._proof): where the history holds no record of Slurm's drain, each preflight check (gpu, shm, nccl) must
  measure again, else REPAIR_UNPROVEN (not assessed, exit 3, it stays drained); a full passing preflight returns it
  as before.

- Class 3 / class 6, a memory-error repair proven by no memory fact (medium: a node with uncorrectable ECC errors
  resumed on a report no verify writes). A node drained for ECC_UNCORRECTABLE, RETIREMENT_PENDING or
  ROW_REMAP_FAILED returns when the preflight reads the GPUs' ECC again (the memory rule: ECC off or an InfoROM
  corrupted refuses). verify's gpu check lists every NVML device with its ECC facts in `data.devices`; a
  passing gpu check listing none (only its `nvml_devices` count) was read as "no device with ECC off": resumed.
  Repro: n1 drained for ECC_UNCORRECTABLE, rebooted, a pass whose gpu check has no `data`: RESUMED. Practice:
  NVIDIA's Xid catalog (48/63/64: retirement and row remap take effect at a reset, seen in the counts read again)
  and NVSentinel's return to service (the failed check's facts read again). Fix (verify/prolog/revalidate.py
  memory_unproven): no device listed is no proof, GPU_NOT_ASSESSED as that rule says (exit 3, stays drained).
  tests/prolog_fakes.py's gpu check now lists its devices as verify does.

Looked at and held (no defect): Xid 79 drained, then a recorded GPU reset (same boot, the Xid line still in the
kernel log) or a reboot: `make undrain` resumes after its passes, and the next prologs pass (the old Xid is not
re-read); a new Xid 79 or 48 logged after the reset keeps the node drained; `make undrain` with the state folder on
another path refuses in one line naming STATE_DIR (exit 5); NODE empty, ALL, a hostlist or an option: one line,
exit 2.
Left (low): a second `make undrain NODE=n1` after a resume on a proof says "REFUSED n1 is not drained (idle)", exit
5, and records a `resume-refused` after the resume (a message and a status for a node that is in service on proof).
"""
from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, _gpu, _nccl, _report, _verify_runs, drained, install_fake
from verify.prolog import cli, history, kernlog, slurm

pytestmark = pytest.mark.unit

SHM: dict[str, Any] = {"name": "shm", "status": "pass", "code": None, "owner": None, "summary": "ok", "metrics": {}}
NARROWING = {"CUDA_VISIBLE_DEVICES": "0-4,6,7", "NCCL_P2P_DISABLE": "1", "VERIFY_SHM_PATH": "/tmp",
             "ROCR_VISIBLE_DEVICES": "0"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _rebooted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The node rebooted a minute ago (after the drain), its kernel log empty since."""
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(
        "boot-b", 60.0, time.time() - 60.0, time.time()))
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: time.time() - 60.0)
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))


def _verify_sees(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """verify replaced: it writes a passing 8-GPU report; the environment each run would inherit is kept."""
    seen: list[dict[str, str]] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        seen.append(dict(os.environ))
        with open(cmd[cmd.index("--json") + 1], "w") as out:
            out.write(json.dumps(_report(_gpu(), SHM)))
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    return seen


def test_nvsentinel_return_to_service_proves_every_gpu_not_the_shell_s_sample(tmp_path, fake, monkeypatch, capsys):
    state = drained(tmp_path, fake, "GPU_LOST", "gpu")
    _rebooted(monkeypatch)
    for key in list(os.environ):      # the runner's own (CI sets VERIFY_ARGS, VERIFY_TIMEOUT): only NARROWING is said
        if key.startswith(("VERIFY_", "NCCL_", "GLOO_")) or key.endswith("_VISIBLE_DEVICES"):
            monkeypatch.delenv(key)
    for key, value in NARROWING.items():
        monkeypatch.setenv(key, value)
    seen = _verify_sees(monkeypatch)
    status = cli.main(["--state-dir", state, "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1", **NARROWING})
    said = capsys.readouterr().err
    assert seen, said
    for env in seen:         # every preflight of the revalidation saw the whole node
        assert not set(NARROWING) & set(env), said
    assert status == 0 and fake.nodes["n1"] == ("idle", "none"), said
    assert "--revalidate proves the whole node: the shell's CUDA_VISIBLE_DEVICES, NCCL_P2P_DISABLE, " \
           "ROCR_VISIBLE_DEVICES, VERIFY_SHM_PATH not given to its preflight" in said, said


def test_slurm_prolog_semantics_a_gate_keeps_slurm_s_allocation(tmp_path, fake, monkeypatch, capsys):
    """Under Prolog= CUDA_VISIBLE_DEVICES is Slurm's allocation for the job (the GPUs it gates): kept, nothing said."""
    _rebooted(monkeypatch)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    seen = _verify_sees(monkeypatch)
    env = {**PROLOG_ENV, "SLURM_JOB_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "0,1"}
    assert cli.main(["--state-dir", str(tmp_path / "state")], env) == 0
    assert seen and all(e.get("CUDA_VISIBLE_DEVICES") == "0,1" for e in seen)
    assert "proves the whole node" not in capsys.readouterr().err


# ---- class 3: a history that holds drains, none of them the one Slurm shows (the state folder on another path)

@pytest.mark.parametrize("code", ["NCCL_WRONG_RESULT", "SHM_TOO_SMALL", "XID_HISTORY"])
@pytest.mark.parametrize("measured", [False, True])
def test_nvsentinel_return_to_service_reruns_every_check_when_the_drain_s_is_unknown(tmp_path, fake, monkeypatch,
                                                                                    capsys, code, measured):
    """Slurm shows n1 drained by torchimages an hour ago; the folder `make undrain STATE_DIR=` names holds only an
    older drain of n1 (for /dev/shm, a month ago: the folder the gate wrote before it moved). Which check found this
    drain's fault is unknown: a pass whose nccl check never ran resumed a node drained for an all-reduce that returned
    wrong values. Now each preflight check must measure again; with all of them passing it returns as before."""
    fake.info = {"Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", code, "x", time.time() - 3600))
    old = str(tmp_path / "old")
    history.record(old, "n1", "drain", "SHM_TOO_SMALL", "x", now=time.time() - 30 * 86400,
                   extra={"gpus": 8, "check": "shm"})
    _rebooted(monkeypatch)
    checks = (_gpu(), SHM, _nccl()) if measured else (_gpu(), SHM)
    runs = _verify_runs(monkeypatch, [json.dumps(_report(*checks, whole=False)).encode()])
    status = cli.main(["--state-dir", old, "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"})
    said = capsys.readouterr().err
    if measured:
        assert status == 0 and fake.nodes["n1"] == ("idle", "none"), said
        assert len(runs) == (1 if code == "SHM_TOO_SMALL" else 3), said      # an intermittent fault's passes in a row
    else:
        # a pass with no nccl result is no report verify writes (tests/test_cluster_hunt76.py): nothing proven
        assert status == 3 and fake.nodes["n1"][0] == "drained", said
        last = history.read(old, "n1").events[-1]
        assert (last["event"], last["code"]) == ("resume-refused", "REPORT_INVALID"), said
        assert "no result of its nccl check" in last["detail"], last


# ---- class 3: a memory-error drain returns only on the GPUs' memory facts read again

@pytest.mark.parametrize("code", ["ECC_UNCORRECTABLE", "RETIREMENT_PENDING", "ROW_REMAP_FAILED"])
@pytest.mark.parametrize("listed", [False, True])
def test_nvidia_xid_catalog_a_memory_repair_is_read_in_the_devices_ecc(tmp_path, fake, monkeypatch, capsys, code,
                                                                       listed):
    state = drained(tmp_path, fake, code, "gpu")
    _rebooted(monkeypatch)
    gpu = _gpu() if listed else {**_gpu(), "data": {}}       # verify's gpu check lists each device; a forged one none
    _verify_runs(monkeypatch, [json.dumps(_report(gpu, SHM, _nccl())).encode()])
    status = cli.main(["--state-dir", state, "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"})
    said = capsys.readouterr()
    if listed:
        assert status == 0 and fake.nodes["n1"] == ("idle", "none"), said
    else:
        assert status == 3 and fake.nodes["n1"][0] == "drained", said
        last = history.read(state, "n1").events[-1]
        assert (last["event"], last["code"]) == ("resume-refused", "GPU_NOT_ASSESSED"), said
        assert "lists no GPU's ECC facts" in last["detail"], last
