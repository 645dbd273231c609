"""Hunt 100: bad input on what hunts 98 and 99 landed (verifyrun.drop_job_settings, repair.unrepaired and
drain.regained, kernfit, settings.operators; the fleet report's new rules), then issue 36's classes 2, 3 and 5.

Each finding, its rating, repro and fix:

1. (high, a broken node returned to service; classes 3 and 4) hunt98's gate rule held a spent Xid again only where
   the preflight's report listed the Xid's GPU: an Xid 48 (double-bit ECC) on GPU 3 (PCI 0000:13:00), held behind
   the breaker (the node drained by someone else), then GPU 3 gone from NVML's view (fallen off the bus, or taken
   out by hand) and a reset of GPU 0 recorded: the next `python -m verify.prolog` (no Gres count to miss GPU 3 by)
   read a report of 7 GPUs, each placed by its bus id, found no listed GPU at the Xid's bus, kept the event spent
   and PASSED the node; the Xid gone for good. make undrain's side (repair._unreset, hunt95) asked for the reset of a
   faulted GPU only where the report listed its bus id: the same hole. Fix: where the report places every GPU it
   lists, an event (or a drain's faulted GPU) at a bus id it does not list is a GPU no listed board's reset
   repaired: held again and judged (XID_HISTORY), and make undrain names it. A report that places none of its GPUs
   keeps the documented limit. Practice: NVIDIA's Xid catalog actions (reset THAT GPU, or reboot); NVSentinel's
   return to service (the repair of the faulted GPU is proven, never inferred from another's).
2. (high, a healthy node drained; class 1) In a job's first step the job's scratch folder and CUDA math libraries'
   knobs still reached the node's judgement: srun exports the submitting shell's TMPDIR (a quota'd $HOME/tmp, a
   nearly full project scratch), and verify's checks (verify/runner.scratch_base) and the prolog's own temporary
   folder were made there: the job's ENOSPC was DISK_FULL, owner host, and the node drained for the job's quota.
   CUBLAS_WORKSPACE_CONFIG, CUBLASLT_* / CUDNN_* (a log of every call) and NVIDIA_TF32_OVERRIDE steer the gpu
   check's own matmul. Repro: `TMPDIR=/quota/full srun torchimages-prolog`: verify runs with TMPDIR=/quota/full.
   Fix: verifyrun.drop_job_settings takes them as the job's in its step (and the shell's under make undrain,
   said); the node's scratch is its own /tmp, as under Prolog=. Practice: Slurm's prolog semantics (a step runs
   with the job's environment, which judges no node).
4. (high, a healthy node drained; classes 3 and 4) hunt98's gate rule read a reset of a GPU the report does not list
   as another node's board, and held every spent event again; but a job's first step (or batch script) given some of
   the node's GPUs sees only those (Slurm's ConstrainDevices: its device cgroup hides the rest from NVML). Repro: an
   Xid 48 on GPU 3 held behind the breaker, GPU 3 reset as the catalog asks (`GPU reset executed: <GPU 3>, success:
   true`), then `srun --gpus=3 torchimages-prolog` (SLURM_STEP_GPUS=0,1,2): `FAULT XID_HISTORY`, DRAINED, the
   repaired node out of service. Fix: drain.regained tells repair.unrepaired whether the report sees every GPU
   (outside a job's environment, or one given no GPUs); where it may not, a reset of an unlisted GPU is no foreign
   board's, and the Xid it may have repaired stays spent; an Xid of an unlisted GPU where every reset names a
   listed one is still held (finding 1). Practice: Slurm's prolog semantics (a step sees its own GPUs); NVIDIA's
   Xid catalog (the reset of that GPU is its repair).
3. (medium, an unbounded resource; class 8) hunt99 bounded one report at 1,000,000 JSON values before the schema's
   validator (some 4.5 us a value), but a saved log's report blocks were each held to it alone: one 60 MB log of 31
   blocks of 400,000 values (a gpu check's details of "x"), each under the bound, took `make fleet-report DIR=...` a
   minute (a folder of them, an hour). Fix: the blocks of one log share a bound, MAX_LOG_VALUES (two of verify's
   largest reports, some 1,200 8-GPU nodes' blocks): past it each further block is invalid, named, not assessed
   (9 s for that log). Practice: files the tooling reads are hostile (issue 36 class 8: bounded reads).
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import pytest

from scripts.fleet import reports
from scripts.fleet.cluster import REPORT_BEGIN, REPORT_END
from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _gpu, _nccl, _report, _shm, _verify_writes, install_fake
from tests.verify_handmade import gpu_facts, nccl_facts
from verify.checks import gpu, nccl
from verify.options import Options
from verify.prolog import cli, kernlog, repair, verifyrun
from verify.prolog.verdict import EXIT_BREAKER, EXIT_FAULT

pytestmark = pytest.mark.unit

# ------------------------------------------------------------------ 1. a reset of a board listed repairs no GPU gone

UUIDS = [f"GPU-{i:08x}-1111-2222-3333-444444444444" for i in range(8)]
XID48_GPU3 = "[ 5000.000001] NVRM: Xid (PCI:0000:13:00): 48, pid=1, name=x, An uncorrectable double bit error"
BOOTED = 1_000_000.0


def _devices(gone: int | None = None) -> list[dict[str, Any]]:
    """GPU i on bus 0x10 + i, each placed by its bus id beside its UUID; `gone` not listed."""
    return [{"index": i, "ecc": [True, True], "uuid": UUIDS[i], "pci_bus_id": f"00000000:{0x10 + i:02X}:00.0"}
            for i in range(8) if i != gone]


def _writes(monkeypatch: pytest.MonkeyPatch, devices: list[dict[str, Any]]) -> None:
    gpu = _gpu(data={"devices": devices}, devices=len(devices))
    _verify_writes(monkeypatch, json.dumps(_report(gpu, _shm(), _nccl())).encode())


def test_nvidia_xid_catalog_a_reset_of_gpu_0_repairs_no_xid_of_a_gpu_gone_from_the_report(tmp_path, monkeypatch,
                                                                                           capsys):
    fake = install_fake(monkeypatch)
    monkeypatch.setattr(kernlog, "host_clock",
                        lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 9000.0, BOOTED, BOOTED + 9000))
    logs = iter([[XID48_GPU3]])
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(next(logs, []), "journalctl"))
    _writes(monkeypatch, _devices())
    fake.nodes["n1"] = ("drained", "ops: looking at it")
    args = ["--state-dir", str(tmp_path / "state")]
    assert cli.main(args, STEP_ENV) == EXIT_BREAKER                      # held: not ours to drain
    fake.nodes["n1"] = ("idle", "none")
    _writes(monkeypatch, _devices(gone=3))                               # GPU 3 no longer seen; GPU 0 reset
    monkeypatch.setattr(repair, "read_resets",
                        lambda timeout: ([repair.Reset(BOOTED + 6000, UUIDS[0].lower(), True)], ""))
    assert cli.main(args, STEP_ENV) == EXIT_FAULT and fake.nodes["n1"][0] == "drained"
    assert "XID_HISTORY" in capsys.readouterr().out


def _xid48_logged(monkeypatch: pytest.MonkeyPatch) -> None:
    """GPU 3's Xid 48 in this boot's kernel log, read once."""
    monkeypatch.setattr(kernlog, "host_clock",
                        lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 9000.0, BOOTED, BOOTED + 9000))
    logs = iter([[XID48_GPU3]])
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(next(logs, []), "journalctl"))


@pytest.mark.parametrize("reset, drained", [(3, False), (0, True)], ids=["GPU 3 reset", "GPU 0 reset"])
def test_slurm_prolog_semantics_a_step_given_some_gpus_never_calls_the_reset_of_another_a_foreign_board(
        tmp_path, monkeypatch, reset, drained):
    fake = install_fake(monkeypatch)
    _xid48_logged(monkeypatch)                                           # held: the node drained by ops
    _writes(monkeypatch, _devices())
    fake.nodes["n1"] = ("drained", "ops: looking at it")
    args = ["--state-dir", str(tmp_path / "state")]
    assert cli.main(args, STEP_ENV) == EXIT_BREAKER
    fake.nodes["n1"] = ("idle", "none")
    monkeypatch.setattr(repair, "read_resets",
                        lambda timeout: ([repair.Reset(BOOTED + 6000, UUIDS[reset].lower(), True)], ""))
    _writes(monkeypatch, _devices()[:3])                                 # the step's cgroup: GPUs 0-2 alone
    step = {**STEP_ENV, "SLURM_STEP_GPUS": "0,1,2", "SLURM_GPUS_ON_NODE": "3"}
    assert (cli.main(args, step) == EXIT_FAULT) is drained
    assert (fake.nodes["n1"][0] == "drained") is drained


def _spent_and_report(devices: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    return [{"line": XID48_GPU3, "mono": 5000.000001}], {"checks": [{"name": "gpu", "data": {"devices": devices}}]}


def test_a_report_placing_none_of_its_gpus_keeps_the_documented_limit():
    clock = kernlog.Clock("boot-a", 9000.0, BOOTED, BOOTED + 9000)
    reset0 = [repair.Reset(BOOTED + 6000, UUIDS[0].lower(), True)]
    spent, report = _spent_and_report(_devices(gone=3))
    assert repair.unrepaired(spent, reset0, report, clock) == spent
    unplaced = [{k: v for k, v in d.items() if k != "pci_bus_id"} for d in _devices(gone=3)]
    spent, report = _spent_and_report(unplaced)
    assert repair.unrepaired(spent, reset0, report, clock) == []          # which GPU the Xid named: untold
    spent, report = _spent_and_report(_devices(gone=3))                   # a step given GPUs 0-2, 4-7: GPU 3's
    both = [*reset0, repair.Reset(BOOTED + 6000, UUIDS[3].lower(), True)]   # reset, a board it cannot see
    assert repair.unrepaired(spent, both, report, clock) == []
    unread = [{**d, "pci_bus_id": "N/A"} for d in _devices()]              # NVML could not read the bus ids
    spent, report = _spent_and_report(unread)
    assert repair.unrepaired(spent, reset0, report, clock) == []
    spent, report = _spent_and_report(_devices())
    reset3 = [repair.Reset(BOOTED + 6000, UUIDS[3].lower(), True)]
    assert repair.unrepaired(spent, reset3, report, clock) == []          # its own GPU's reset: spent


# ------------------------------------------------------------------ 2. a job's scratch folder and math-library knobs

JOBS = {"TMPDIR": "/quota/full", "CUBLAS_WORKSPACE_CONFIG": ":0:0", "CUBLASLT_LOG_LEVEL": "5",
        "CUDNN_LOGINFO_DBG": "1", "NVIDIA_TF32_OVERRIDE": "0"}


@pytest.mark.parametrize("env, dropped", [(STEP_ENV, True), (PROLOG_ENV, False)], ids=["first step", "Prolog="])
def test_slurm_prolog_semantics_a_jobs_tmpdir_and_math_library_knobs_never_judge_the_node(tmp_path, monkeypatch, env,
                                                                                          dropped):
    # practice: Slurm's prolog semantics (a step runs with the job's environment; slurmd's is the operator's)
    install_fake(monkeypatch)
    job_tmp = tmp_path / "jobtmp"
    job_tmp.mkdir()
    for name, value in {**JOBS, "TMPDIR": str(job_tmp)}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(tempfile, "tempdir", None)
    seen: list[tuple[dict[str, str], str]] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        out = cmd[cmd.index("--json") + 1]
        seen.append((verifyrun._verify_env(os.environ), out))
        Path(out).write_text(json.dumps(_report(_gpu(), _shm(), _nccl())))
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    try:
        assert cli.main(_args(tmp_path), dict(env)) == 0
    finally:
        tempfile.tempdir = None
    given, out = seen[0]
    assert all((name in given) is not dropped for name in JOBS), given
    assert out.startswith(str(job_tmp)) is not dropped                   # the prolog's own folder too


def test_make_undrain_says_the_shells_tmpdir_is_not_given_to_its_preflight():
    environ = {"TMPDIR": "/home/me/tmp", "CUBLAS_WORKSPACE_CONFIG": ":4096:8", "PATH": "/usr/bin"}
    notes = verifyrun.drop_shell_settings(environ)
    assert set(environ) == {"PATH"} and "TMPDIR" in notes[0] and "CUBLAS_WORKSPACE_CONFIG" in notes[0]


# ------------------------------------------------------------------ 3. a saved log's report blocks share one bound

def _h100(host: str = "n1") -> dict[str, Any]:
    """A report as verify writes one: an 8-GPU H100 node's gpu and nccl checks judged from hand-made facts."""
    facts = gpu_facts()
    for d in facts["devices"]:
        d["uuid"] = f"{d['uuid']}-{host}"
    checks = [module.judge(cast(Any, f), Options()).to_dict() for module, f in ((gpu, facts), (nccl, nccl_facts()))]
    return {"schema_version": 2, "tool": {"name": "verify", "version": "2"}, "status": "pass",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "environment": {"hostname": host, "scheduler": {"kind": "slurm", "node": host}}, "options": {},
            "checks": checks}


def _log(path: Path, hosts: list[str]) -> None:
    path.write_text("".join(f"{REPORT_BEGIN}\n{json.dumps(_h100(h))}\n{REPORT_END}\n" for h in hosts))


def test_files_are_hostile_a_logs_report_blocks_share_one_bound_of_json_values(tmp_path, monkeypatch):
    per_report = reports._values(_h100())
    monkeypatch.setattr(reports, "MAX_LOG_VALUES", 3 * per_report + 10)      # three reports' worth, not four
    _log(tmp_path / "job.log", ["n1", "n2", "n3", "n4"])
    valid, invalid = reports.read_reports(tmp_path)
    assert [name for name, _ in valid] == ["job.log#1", "job.log#2", "job.log#3"]
    assert [name for name, _ in invalid] == ["job.log#4"] and "together" in invalid[0][1]
    _log(tmp_path / "job.log", ["n1", "n2", "n3"])                           # within it: every block read
    (tmp_path / "n4.log").write_text(f"{REPORT_BEGIN}\n{json.dumps(_h100('n4'))}\n{REPORT_END}\n")
    valid, invalid = reports.read_reports(tmp_path)
    assert len(valid) == 4 and invalid == []                                   # each log has a bound of its own
