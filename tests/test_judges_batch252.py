"""Batches 252 to 261 (issue 35): the lead's review.

- Batch 257: the NVIDIA Container Toolkit refusing a device the container asked for (`nvidia-container-cli: device
  error: 1: unknown device`, `docker run --gpus 2` on a one-GPU node) was not recognised by `verify explain`. It is the
  job's request naming a GPU the node does not have: fail GPU_NOT_VISIBLE, owner job, never a drain
  (verify/checks/gpu/node.py, verify/explain/nvml.py, FACTS.md).
- Batch 257: the toolkit's hook timing out on the driver (`driver rpc error: timed out`) decided before the kernel's
  cause beside it (`RmInitAdapter failed! (0x25:0x65:1545)`: one SXM card the driver could not initialise). The hook's
  timeout is the symptom; the kernel log names the GPU: GPU_NOT_VISIBLE (host), as FACTS.md files RmInitAdapter.
- Batch 256: the kernel's "fallen off the bus" message without an Xid had no translation in FACTS.md (explain read it
  as Xid 79 already); FACTS.md now says so, and the entry's facts hold it.
Real lines from the entries named by slug (each source.md gives its URL).
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.judging import CORPUS, explained, raw, replayed, verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

UNKNOWN = "docker-gpus-2-on-one-gpu-ubuntu-16.04-docker-19.03.9-nvidia-container-cli-device-error-1-unknown-device-job"
RMINIT = ("sxm-node-localai-compose-three-working-gpu-uuids-driver-rpc-timed-out-one-card-rminitadapter-0x25-0x65-"
          "minor-1-host")
RPC_ALONE = ("docker-gpus-all-cuda-11.0.3-base-driver-rpc-error-timed-out-gpus-not-in-persistence-mode-works-with-pm-1-"
             "host")
FALLEN = ("hgx-h100-x8-525.125.06-syslog-nvswitch-probed-gpu-5d-00-fallen-off-bus-probe-failed-one-device-gsp-"
          "firmware-missing-host")


def _gpu(facts: dict[str, Any], **options: Any) -> tuple[str, str | None, str | None]:
    return verdict(judge(CHECKS["gpu"], facts, Options(**options)))


def test_the_toolkits_unknown_device_in_dockers_quoting_is_the_jobs_request():
    r = explained(raw(UNKNOWN), "docker.log")
    assert (r.name, *verdict(r)) == ("gpu", "fail", "GPU_NOT_VISIBLE", "job")
    assert "(nvidia-container-cli: device error: 1: unknown device)" in r.summary    # cut before docker's `\\n`


# The same wording as other tools print it (public troubleshooting pages quote these lines: a UUID, a GPU-sharing
# scheduler's answer, the NIM build's index): hand-made lines of that wording, not one source's output
@pytest.mark.parametrize("line", [
    "nvidia-container-cli: device error: GPU-0c3a6e1f-2b4d-4e5f-8a9b-1c2d3e4f5a6b: unknown device",
    "stderr: nvidia-container-cli: device error: unknown device id: no-gpu-has-10MiB-to-run",
    "nvidia-container-cli: device error: 3: unknown device: unknown",
    "nvidia-container-cli.real: device error: 1: unknown device",
])
def test_every_spelling_of_the_toolkits_unknown_device_is_the_jobs_handmade(line):
    assert _gpu({"nvml_error": line, "devices": None}) == ("fail", "GPU_NOT_VISIBLE", "job")
    assert verdict(explained(line + "\n", "err.txt")) == ("fail", "GPU_NOT_VISIBLE", "job")


def test_an_unknown_device_is_judged_without_expect_gpus_and_never_drains():
    facts = {"nvml_error": "nvidia-container-cli: device error: 1: unknown device", "devices": None}
    for expect in (0, 8):
        assert _gpu(facts, expect_gpus=expect) == ("fail", "GPU_NOT_VISIBLE", "job")


def test_a_device_error_that_is_not_an_unknown_device_is_not_this_rule():
    # a sentence about the wording, and another of the hook's errors, stay what they were
    assert _gpu({"nvml_error": "nvidia-container-cli: device error: false: invalid device", "devices": None})[2] != "job"


def test_the_hooks_driver_timeout_yields_to_the_kernels_cause_beside_it():
    assert replayed(RMINIT) == {"gpu": ("fail", "GPU_NOT_VISIBLE", "host")}
    facts = json.loads((CORPUS / RMINIT / "facts" / "gpu.json").read_text())["facts"]
    facts["driver_errors"] = None           # the hook's timeout alone stays the driver's
    assert _gpu(facts) == ("fail", "DRIVER_ERROR", "host")
    assert replayed(RPC_ALONE) == {"gpu": ("fail", "DRIVER_ERROR", "host")}


def test_a_gpu_fallen_off_the_bus_without_an_xid_is_lost_on_both_roads():
    events = json.loads((CORPUS / FALLEN / "facts" / "gpu.json").read_text())["facts"]["xid_events"]
    assert [(e["xid"], e["pci_bus_id"]) for e in events] == [(79, "0000:5d:00.0")]
    assert replayed(FALLEN) == {"gpu": ("fail", "GPU_LOST", "host")}
    assert verdict(explained(raw(FALLEN), "syslog")) == ("fail", "GPU_LOST", "host")


# ---------------------------------------------------------------- batches 259 to 261
MAHTI = ("mahti-g1301-sbatch-module-pytorch-2.1-singularity-srun-torchrun-execve-no-such-file-command-missing-from-"
         "module-image")
NIC = "connectx-6-mt4123-ocp3-200g-on-ocp-to-pcie4-adapter-z690-lnksta-8gts-of-16gts-x16-mlxlink-gen3-of-gen4-host"
CARD = "rtx-2060-x2-folding-at-home-rig-lspci-both-gpus-8gts-x8-of-8gts-x16-half-lanes-root-port-not-shown-host"
SMI_A = "gtx-1070-class-10de-1b81-nvidia-smi-a-pci-section-idle-gen1-of-gen3-x16-of-x16-zenn-healthy"


def _train(message: str) -> tuple[str, str | None, str | None]:
    failure = {"rank": 0, "node": "n1", "phase": "init", "type": "Exited with exit code 2", "message": message}
    return verdict(judge(CHECKS["train"], {"failures": [failure]}, Options()))


def test_a_program_the_job_starts_missing_from_path_is_the_images_on_both_roads():
    assert replayed(MAHTI) == {"train": ("fail", "TRAIN_FAILED", "image")}
    r = explained(raw(MAHTI), "slurm-3022331.out")
    assert (r.name, *verdict(r)) == ("train", "fail", "TRAIN_FAILED", "image")


# the launchers' other wordings of the same refusal (bash, an OCI runtime): hand-made lines of that wording
@pytest.mark.parametrize("line", [
    "/var/spool/slurmd/job4242/slurm_script: line 12: torchrun: command not found",
    "bash: deepspeed: command not found",
    'docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: '
    'unable to start container process: exec: "torchrun": executable file not found in $PATH: unknown.',
])
def test_every_launchers_not_found_is_the_images_handmade(line):
    assert _train(line) == ("fail", "TRAIN_FAILED", "image")
    assert verdict(explained(line + "\n", "job.err")) == ("fail", "TRAIN_FAILED", "image")


@pytest.mark.parametrize("line", [
    "bash: nvidia-smi: command not found",                        # the driver's tool: mounted by the toolkit
    "srun: command not found",                                    # the scheduler's client on the node
    "slurmstepd: error: execve(): /home/u/train.sh: No such file or directory",   # a path the job names
])
def test_a_missing_program_that_is_not_the_images_is_not_filed_to_it_handmade(line):
    assert _train(line)[2] != "image"


def test_a_nics_link_lines_beside_its_kernel_driver_are_no_gpu():
    # `lspci -s 01:00.0 | grep Width` of a ConnectX-6 whose mlx5_core lines name 0000:01:00.0: read as a GPU, it passed
    r = explained(raw(NIC), "nic.txt")
    assert r.name != "gpu" and r.status != "pass"


def test_a_scripts_label_before_lspcis_header_and_a_cut_nvidia_smi_a_are_read():
    assert verdict(explained(raw(CARD), "probe.txt")) == ("warn", "PCIE_DOWNGRADED", "host")
    assert verdict(explained(raw(SMI_A), "smi.txt")) == ("pass", None, None)


# ---------------------------------------------------------------- batch 264
RETRY = "roce-v2-nccl-ib-timeout-1-retry-cnt-0-beside-ib-write-bw-flow-got-completion-error-12-opcode-0-vendor-err-129-job"
_WC12 = "NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129"


def _completion(status: int, env: dict[str, str] | None) -> tuple[str, str | None, str | None]:
    error = _WC12.replace("error 12", f"error {status}")
    return verdict(judge(CHECKS["nccl"], {"backend": "nccl", "sizes": None, "error": error, "nccl_env": env,
                                          "nccl_log": {"proof": [f"NCCL WARN {error}"], "ib_error": error}}, Options()))


def test_retries_run_out_under_the_jobs_own_cut_budget_is_the_jobs():
    assert replayed(RETRY) == {"nccl": ("fail", "NCCL_FAILED", "job")}
    assert _completion(12, {"NCCL_IB_RETRY_CNT": "2"}) == ("fail", "NCCL_FAILED", "job")


@pytest.mark.parametrize("status,env", [
    (12, None),                                              # NCCL's defaults: the link's
    (12, {"NCCL_IB_TIMEOUT": "22", "NCCL_IB_RETRY_CNT": "7"}),  # a budget raised, not cut
    (12, {"NCCL_IB_TIMEOUT": "fourteen"}),                   # a value NCCL would not read as a number
    (4, {"NCCL_IB_TIMEOUT": "1"}),                           # local protection: GPUDirect on the PCIe path, not retries
], ids=["defaults", "raised", "not-a-number", "status-4"])
def test_a_completion_error_stays_the_links_where_the_job_cut_no_retry_budget(status, env):
    assert _completion(status, env) == ("fail", "NCCL_FAILED", "host")


# ---------------------------------------------------------------- batch 267 (Slurm's own lines)
PYXIS = "azure-hpc-pg0-two-vm-srun-pyxis-enroot-switchroot-failed-to-execute-bin-bash-no-such-file-both-tasks-image"
SLURM_LOST = "titan-rtx-slurm-multi-gpu-job-slurmstepd-nvml-failed-to-get-usage-15-gpu-is-lost-host"
PROLOG = "ubuntu-slurm-gpu-node-hpc-srun-task-launch-job-prolog-failed-sinfo-r-prolog-error-drain-prolog-d-missing-host"


def test_enroot_finding_no_program_in_the_image_is_the_images_on_both_roads():
    assert replayed(PYXIS) == {"train": ("fail", "TRAIN_FAILED", "image")}
    assert verdict(explained(raw(PYXIS), "slurm.out")) == ("fail", "TRAIN_FAILED", "image")
    # a path of the job's own (a mounted script) is not the image's
    assert _train("enroot-switchroot: failed to execute: /home/u/run.sh: No such file or directory")[2] != "image"


def test_slurms_nvml_plugin_saying_a_gpu_is_lost_is_the_hosts():
    assert verdict(explained(raw(SLURM_LOST), "slurm.err")) == ("fail", "GPU_LOST", "host")
    # another NVML error number is not "GPU is lost" (15 is NVML_ERROR_GPU_IS_LOST)
    assert verdict(explained("slurmstepd: error: NVML: Failed to get usage(3): Not Supported\n", "e")) != (
        "fail", "GPU_LOST", "host")


def test_a_launch_the_nodes_prolog_failed_is_the_nodes_not_a_cancel():
    assert replayed(PROLOG) == {"train": ("fail", "TRAIN_FAILED", "host")}
    assert verdict(explained(raw(PROLOG), "srun.err")) == ("fail", "TRAIN_FAILED", "host")
    # srun's abort alone stays a cancel (the job's)
    aborted = "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
    assert verdict(explained(aborted, "srun.err"))[2] == "job"
