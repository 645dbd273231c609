"""Issue 36, a ninth hunt (round 56) through the public interfaces: round 55's test hooks and the job's environment
(a first step's environment is the job's, never the node's), class 1 (a setting of ours is never the node's fault)
and class 3 (return to service proves the repair). Each test names the practice it holds the cluster tooling to
(Slurm's prolog semantics, NVSentinel's breaker and return-to-service rules, NVIDIA's Xid catalog)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import (
    PROLOG_ENV,
    STEP_ENV,
    _args,
    _gpu,
    _report,
    _verify_writes,
    allow_test_hooks,
    history_events,
    install_fake,
)
from verify.prolog import cli, history, kernlog, slurm, verifyrun

JOB_SETTINGS = {"TORCHIMAGES_DRIVER_MIN": "999.0", "NCCL_SOCKET_IFNAME": "no-such-if", "NCCL_TOPO_FILE": "/nope",
                "GLOO_SOCKET_IFNAME": "no-such-if", "RANK": "0", "WORLD_SIZE": "16", "MASTER_ADDR": "10.9.9.9",
                "MASTER_PORT": "29500", "LOCAL_RANK": "0", "VERIFY_SHM_PATH": "/nope", "VERIFY_FABRIC_ROOT": "/nope",
                "TORCHIMAGES_HOST_ARCH": "riscv64", "VERIFY_TEST_HANG": "gpu", "VERIFY_TEST_CRASH": "nccl"}
# a batch script that runs the prolog itself, without srun: Slurm's job variables, no step id (read as a Prolog=)
BATCH_ENV = {"SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1"}


def _verify_sees(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> list[dict[str, str]]:
    """The environment verify is started with, for each run (verify replaced: it writes a passing report)."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    seen: list[dict[str, str]] = []
    body = json.dumps(_report(_gpu())).encode()

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        seen.append(verifyrun._verify_env(os.environ))
        Path(cmd[cmd.index("--json") + 1]).write_bytes(body)
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    return seen


@pytest.mark.unit
@pytest.mark.parametrize("slurm_env,extra", [(STEP_ENV, ()), (BATCH_ENV, ()), (STEP_ENV, ("--mode", "prolog"))],
                         ids=["srun-step", "batch-step-without-srun", "step-with-mode-prolog"])
def test_slurm_prolog_semantics_a_job_s_settings_of_verify_never_reach_the_gate(tmp_path, monkeypatch, capsys,
                                                                                 slurm_env, extra):
    """Slurm's Prolog= runs in slurmd's environment, a first step in the job's. The job's settings of verify's own
    (a driver floor of 999: DRIVER_TOO_OLD, the host's; NCCL_SOCKET_IFNAME naming no interface: NCCL_FAILED, the
    host's; its own torchrun RANK/WORLD_SIZE/MASTER_ADDR: an all-reduce waiting on 15 ranks, NCCL_TIMEOUT) had the
    node judged on the job's setting and drained. Round 59 withheld verify's paths and floors in an srun step: a
    batch script running the prolog without srun (no SLURM_STEP_ID: read as a Prolog=) still handed them, the test
    hooks too, to verify, and a step's NCCL_* reached the local all-reduce. Now a run inside a job that slurmd did
    not start as its Prolog= gives verify none of them, as under Prolog=."""
    install_fake(monkeypatch)
    seen = _verify_sees(monkeypatch, JOB_SETTINGS)
    assert cli.main(_args(tmp_path, *extra), {**slurm_env, **JOB_SETTINGS}) == 0
    assert seen and not set(JOB_SETTINGS) & set(seen[0]), sorted(set(JOB_SETTINGS) & set(seen[0]))


@pytest.mark.unit
def test_slurm_prolog_semantics_the_operator_s_switch_still_lets_the_hooks_through_in_a_job(tmp_path, monkeypatch):
    """The operator's switch (STATE/test-hooks, which no job writes) lets verify's test hooks through in a job, the
    batch step too; the job's other settings of verify's are still the job's."""
    install_fake(monkeypatch)
    allow_test_hooks(tmp_path / "state")
    seen = _verify_sees(monkeypatch, JOB_SETTINGS)
    assert cli.main(_args(tmp_path), {**BATCH_ENV, **JOB_SETTINGS}) == 0
    assert seen[0]["VERIFY_TEST_HANG"] == "gpu" and "TORCHIMAGES_DRIVER_MIN" not in seen[0]


@pytest.mark.unit
def test_slurm_prolog_semantics_slurmd_s_own_environment_is_passed_as_it_is(tmp_path, monkeypatch):
    """Under Prolog= (slurmd's environment, the operator's) and by hand outside a job, nothing is withheld."""
    install_fake(monkeypatch)
    seen = _verify_sees(monkeypatch, {"NCCL_SOCKET_IFNAME": "ib0", "VERIFY_TEST_HANG": "none"})
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_JOB_ID": "7"}) == 0
    assert seen[0]["NCCL_SOCKET_IFNAME"] == "ib0" and seen[0]["VERIFY_TEST_HANG"] == "none"
    assert cli.main(_args(tmp_path, "--node", "n1"), {}) == 0
    assert seen[1]["NCCL_SOCKET_IFNAME"] == "ib0"




# ---- class 3: return to service proves the repair

def _drained(tmp_path: Path, fake: Any, code: str, gpus: int | None = 8, gres: str | None = "gpu:8") -> list[str]:
    """n1 drained by torchimages for `code` (a reboot since: the drain names an earlier boot)."""
    if gres:
        fake.info = {"Gres": gres}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", code, "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", code, "x", now=1000.0,
                   extra={"gpus": gpus, "boot_id": "an-earlier-boot", "action": "reboot", "check": "gpu"})
    return ["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--revalidate", "--node", "n1"]


def _verify_reports(monkeypatch: pytest.MonkeyPatch, report: dict[str, Any]) -> None:
    body = json.dumps(report).encode()

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_bytes(body)
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)


@pytest.mark.unit
def test_nvsentinel_return_to_service_a_shell_s_gpu_allocation_is_no_count_of_the_node_s(tmp_path, monkeypatch,
                                                                                        capsys):
    """NVSentinel's return to service proves the repair against the GPUs the node should have: Slurm's Gres for it,
    or the count recorded at the drain; with neither, a GPU drain is refused ("the GPUs n1 should have are unknown").
    `make undrain` run from a job's shell on the node carries that job's SLURM_GPUS_ON_NODE=1, which stood in for
    the node's count: a node drained for a lost GPU resumed with NVML seeing one GPU. The shell's allocation only
    raises the bar now; it never makes an unknown count known."""
    fake = install_fake(monkeypatch)
    args = _drained(tmp_path, fake, "GPU_LOST", gpus=None, gres=None)
    _verify_reports(monkeypatch, _report(_gpu(devices=1)))
    assert cli.main(args, {"SLURM_GPUS_ON_NODE": "1", "SLURM_JOB_ID": "5"}) == 5
    assert fake.nodes["n1"][0] == "drained" and "should have are unknown" in capsys.readouterr().err
    # a count that is known (Slurm's Gres) is still the bar, and the shell's larger allocation raises it
    fake.info = {"Gres": "gpu:1"}
    assert cli.main(args, {"SLURM_GPUS_ON_NODE": "2", "SLURM_JOB_ID": "5"}) == 3 and fake.nodes["n1"][0] == "drained"


def _device(index: int, **kw: Any) -> dict[str, Any]:
    return {"index": index, "name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-{index:08x}-0000-0000-0000-000000000000",
            **kw}


@pytest.mark.unit
@pytest.mark.parametrize("code", ["ECC_UNCORRECTABLE", "RETIREMENT_PENDING", "ROW_REMAP_FAILED"])
@pytest.mark.parametrize("device,resumed", [
    ({"ecc": [True, True]}, True),
    ({}, True),                                                       # ECC not read: verify's own rules judge it
    ({"ecc": [False, False]}, False),                                 # ECC turned off: its errors are not counted
    ({"ecc": [True, False]}, False),                                  # ECC set to go off at the next reset
    ({"ecc": [True, True], "nvml_errors": {"ecc_aggregate": "CorruptedInforom"}}, False),
], ids=["ecc-on", "ecc-not-read", "ecc-off", "ecc-off-at-next-reset", "inforom-corrupted"])
def test_nvidia_xid_catalog_a_memory_error_s_repair_is_seen_in_ecc_counts_that_are_kept(tmp_path, monkeypatch, capsys,
                                                                                       code, device, resumed):
    """NVIDIA's Xid catalog repairs a GPU's memory errors at a reset (pages retired, rows remapped), and the repair is
    seen in the ECC counts read again. A node drained for an uncorrectable ECC error whose "repair" turned ECC off
    (nvidia-smi -e 0 and a reboot) passed its preflight on a warning, "ECC is disabled on a data-centre GPU", and
    was resumed: the errors it was drained for were simply no longer counted. So was one whose InfoROM, where the
    counts and retirements are kept, is corrupted. Now such a return to service is not proven (GPU_NOT_ASSESSED,
    exit 3, the node stays drained); with ECC on, it resumes as before."""
    fake = install_fake(monkeypatch)
    args = _drained(tmp_path, fake, code)
    devices = [_device(i, **device) for i in range(8)]
    _verify_reports(monkeypatch, _report(_gpu("warn" if not resumed else "pass", code="ECC_UNCORRECTABLE" if not resumed
                                              else None, owner=None if resumed else "host", data={"devices": devices})))
    status = cli.main(args, {})
    said = capsys.readouterr()
    assert (status, fake.nodes["n1"][0]) == ((0, "idle") if resumed else (3, "drained")), (status, said)
    if not resumed:
        assert "GPU_NOT_ASSESSED" in said.out + said.err


@pytest.mark.unit
def test_nvsentinel_return_to_service_a_node_the_gate_flagged_for_inspection_is_resumed_only_by_hand(tmp_path,
                                                                                                  monkeypatch, capsys):
    """NVSentinel's return to service quarantines a node whose fault comes back (a flap) for a person to inspect. The
    gate in slurm.conf ran with --flap-window 30: a node drained again 10 days after its resume was flagged, "INSPECT
    n1", and `make undrain` (which passes no flap window: 7 days) resumed it on its preflight, the flag never read.
    Now an `inspect` the history holds since the node was last in service refuses the return (exit 5), whatever
    window the revalidation was given."""
    fake = install_fake(monkeypatch)
    fake.info = {"Gres": "gpu:8"}
    state = str(tmp_path / "state")
    now = time.time()
    history.record(state, "n1", "drain", "NVLINK_DOWN", "x", now=now - 11 * 86400, extra={"gpus": 8, "check": "gpu"})
    history.record(state, "n1", "resume", None, "x", now=now - 10 * 86400)
    reports = [_report(_gpu("fail", code="NVLINK_DOWN", owner="host")), _report(_gpu())]

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_bytes(json.dumps(reports.pop(0)).encode())
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    assert cli.main(["--state-dir", state, "--no-kernel-log", "--flap-window", "30"], PROLOG_ENV) == 1
    assert "INSPECT n1" in capsys.readouterr().err
    assert cli.main(["--state-dir", state, "--no-kernel-log", "--revalidate", "--node", "n1"], {}) == 5
    assert fake.nodes["n1"][0] == "drained" and "flagged for hardware inspection" in capsys.readouterr().err


@pytest.mark.unit
def test_nvsentinel_flap_rule_a_drain_whose_record_is_missing_after_a_resume_is_not_resumed(tmp_path, monkeypatch,
                                                                                          capsys):
    """NVSentinel's flap rule: a fault that comes back soon after a return to service needs a person. The history
    held an old drain and its resume two days ago; the new drain's line was never written (a full disk at the
    drain: the drain itself still happened). `make undrain` took the old drain for this one, found no drain after
    the resume, so no flap, and resumed the node. Now a history whose last drain was resumed since holds no record
    of this drain: refused (exit 5), as a history with no drain at all is."""
    fake = install_fake(monkeypatch)
    fake.info = {"Gres": "gpu:8"}
    state = str(tmp_path / "state")
    now = time.time()
    history.record(state, "n1", "drain", "NVLINK_DOWN", "x", now=now - 20 * 86400, extra={"gpus": 8, "check": "gpu"})
    history.record(state, "n1", "resume", None, "x", now=now - 2 * 86400)
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "NVLINK_DOWN", "x", now - 3600))
    _verify_reports(monkeypatch, _report(_gpu()))
    assert cli.main(["--state-dir", state, "--no-kernel-log", "--revalidate", "--node", "n1"], {}) == 5
    assert fake.nodes["n1"][0] == "drained" and "since it was resumed" in capsys.readouterr().err


# ---- round 54's held kernel-log evidence, re-attacked: kept until acted on, read whole by return to service

BOOT = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
TWO_DAYS_UP = kernlog.Clock(BOOT, 200_000.0, booted=1_000_000.0, now=1_200_000.0)     # up 55 h, the lookback 24 h
XID48 = "[ 1000.000000] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, DBE (double bit error) ECC error."


def _kernel(monkeypatch: pytest.MonkeyPatch, lines: list[str]) -> None:
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: TWO_DAYS_UP)
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: TWO_DAYS_UP.booted)
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(lines, "journalctl"))


@pytest.mark.unit
def test_nvidia_xid_catalog_a_held_xid_is_kept_until_acted_on_however_long_no_prolog_ran(tmp_path, monkeypatch):
    """NVIDIA's Xid catalog drains on an Xid 48 (a double-bit ECC error); the breaker kept the node from draining
    and held the event for the next run. No prolog ran for two days (a node idle over a weekend, or held by one long
    job): the next run dropped the held Xid as older than --lookback (24 h), and the node passed on a preflight that
    cannot see it. The lookback ages out watched events ("3 on one device"); a drain-worthy one is kept until acted
    on."""
    fake = install_fake(monkeypatch)
    _kernel(monkeypatch, [])
    assert kernlog.save(str(tmp_path / "state"), "n1", kernlog.State(BOOT, 1000.0, held=[
        {"line": XID48, "mono": 1000.0},
        {"line": XID48.replace(": 48,", ": 94,").replace("DBE (double bit error)", "Contained"), "mono": 1000.0}])) is None
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state")], PROLOG_ENV) == 1
    assert fake.nodes["n1"][0] == "drained" and history_events(tmp_path)[-1] == ("drain", "XID_HISTORY")


@pytest.mark.unit
def test_nvsentinel_return_to_service_reads_the_kernel_log_since_the_repair_whole(tmp_path, monkeypatch, capsys):
    """NVSentinel's return to service: the Xid the node was drained for has not come back since its repair. The node
    was rebooted on Friday and `make undrain` run on Monday: an Xid 48 logged on Saturday, in this boot, lay past
    the gate's 24 h lookback and was never read, and the node was resumed. Return to service now reads this boot's
    kernel log whole: the Xid is back, the node stays drained."""
    fake = install_fake(monkeypatch)
    fake.info = {"Gres": "gpu:8"}
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    for lines, status in (([], 0), ([XID48], 1)):       # a log clean since the reboot resumes; the Xid back does not
        _kernel(monkeypatch, lines)
        state = tmp_path / f"state-{status}"
        fake.nodes["n1"] = ("drained", slurm.reason("n1", "XID_HISTORY", "x", 900_000))
        history.record(str(state), "n1", "drain", "XID_HISTORY", "x", now=900_000.0,
                       extra={"gpus": 8, "boot_id": "an-earlier-boot", "action": "reboot", "check": "kernel-log"})
        assert cli.main(["--state-dir", str(state), "--revalidate", "--node", "n1"], {}) == status
    assert fake.nodes["n1"][0] == "drained" and "stays drained: XID_HISTORY" in capsys.readouterr().err


# ---- round 54's busy host, re-attacked: an outcome stamped in the future is no run beside this one

NCCL_TIMEOUT = {"name": "nccl", "status": "fail", "code": "CHECK_TIMEOUT", "owner": "host", "summary": "ran past 15 s"}


@pytest.mark.unit
def test_nvsentinel_checker_rule_an_outcome_stamped_in_the_future_is_no_busy_host(tmp_path, monkeypatch, capsys):
    """NVSentinel's checker rule reruns a stalled check alone; round 54 took an outcome in the history stamped after
    this run began as another prolog that ran beside it (a busy host, not a hung one). One stamped a day ahead (a
    run whose clock was ahead, then stepped back) made every confirmed hang a "busy host" for a day: a GPU whose
    check hangs alone again stayed in service. An outcome stamped after now is no run beside this one: the
    confirmed hang drains."""
    fake = install_fake(monkeypatch)
    history.record(str(tmp_path / "state"), "n1", "pass", None, "its clock a day ahead", now=time.time() + 86400)
    reports = [_report(_gpu("pass", 8), NCCL_TIMEOUT), _report(NCCL_TIMEOUT)]

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_bytes(json.dumps(reports.pop(0)).encode())
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    assert cli.main(_args(tmp_path, "--budget", "30"), PROLOG_ENV) == 1
    assert fake.nodes["n1"][0] == "drained" and "busy host" not in capsys.readouterr().out
