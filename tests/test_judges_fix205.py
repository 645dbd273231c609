"""Issue 35, batches 205 (single-node NVLS), 206 (training failures at scale) and 207 (rented GPU hosts) (fix205).
The classes fixed, each on a real line of the entry named by slug (its source.md gives the URL):
- NVLS's multicast bind or create answering CUDA error 2 'out of memory' is the NVSwitches' multicast slots spent by
  the library's communicators, not the GPU's memory nor a fabric fault: NCCL_FAILED, the image's
  (verify/checks/nccl/nvlssetup.py);
- CUDA's 802 beside a fabric manager that is down (not installed, failed) is the GPUs' own word that they wait on a
  fabric: NVLINK_DOWN, the host's, where no line says the node has none (verify/checks/gpu/fabricmanager.py);
- a worker torchrun reports dead of SIGSEGV (exitcode -11) with no CUDA error is native code in the image's software
  stack crashing: TRAIN_FAILED, the image's (verify/checks/train/launcher.py); torchrun's table pasted without its
  header is still read by `verify explain` (verify/explain/childfailed.py);
- torch's `NCCL communicator was aborted on rank N. Original reason for failure was: Watchdog caught collective
  operation timeout` is the watchdog's timeout on the explain road too (verify/explain/nccl.py);
- an nvidia-smi table cut mid-row keeps the cells printed before the cut (verify/explain/smitable.py).
The transient 802 stall, the forced-Ring and the NVLS busbw questions, and the release note's prose are strict
expected failures (tests/data/real-world/README.md, "Known mismatches")."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, replayed, verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

NVLS_OOM = ("h200-x8-nccl-2.29.7-nvls-multicast-bind-cuda-error-2-out-of-memory-128-nvswitch-slots-exhausted-fabric-"
            "manager-completed-2.28.9-falls-back-image")
FM_MISSING = "aws-dlami-a100-h100-h200-b200-instances-nvidia-fabricmanager-not-installed-cuda-init-802-system-error-ami"
SEGV = "b200-yotta-node-megatron-lm-torchrun-rank0-exitcode-minus-11-sigsegv-no-error-file-same-job-fine-on-h100"
ABORTED = "rtx3090ti-x8-rt-detr-training-nccl-communicator-was-aborted-on-rank-6-watchdog-collective-timeout-no-cause-shown"
CUT = "akash-provider-node1-quadro-rtx-4000-x2-535.129.03-smi-l-two-uuids-gpu0-p8-25c-10w-of-125w-marketplace-healthy"

BIND = ("unhandled cuda error: Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 "
        "'out of memory'. This is usually caused by a system or configuration error in the Fabric Manager or "
        "NVSwitches.")


# -- NVLS multicast slots spent (CUDA error 2) --

def test_nvls_multicast_bind_out_of_memory_is_the_librarys_slots_not_the_gpus_memory():
    assert replayed(NVLS_OOM) == {"nccl": ("fail", "NCCL_FAILED", "image")}
    assert verdict(explained(raw(NVLS_OOM))) == ("fail", "NCCL_FAILED", "image")


@pytest.mark.parametrize("error", [
    BIND,
    "NVLS multicast group creation failed: Cuda failure 2 'out of memory'",
    "init: cuMulticastBindMem() -> CUDA error 2",
], ids=["bind-words", "create-words", "driver-call"])
def test_the_class_is_any_multicast_set_up_answering_error_2(error):
    assert nccl_verdict(error=error, nvswitch=True) == ("fail", "NCCL_FAILED", "image")


def test_a_plain_out_of_memory_stays_the_jobs():
    """The rule reads the multicast set-up only: a collective's buffers not fitting are still the job's memory."""
    error = "unhandled cuda error: Cuda failure 2 'out of memory'"
    assert nccl_verdict(error=error) == ("fail", "GPU_OUT_OF_MEMORY", "job")


def test_another_nvls_cuda_failure_stays_the_fabrics():
    """`transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization error'` is the fabric's state (batch 174)."""
    error = "unhandled cuda error | transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization error'"
    assert nccl_verdict(error=error)[2] == "host"


# -- 802 beside a fabric manager that is not installed --

def _gpu(**facts: object) -> tuple[str, str | None, str | None]:
    return verdict(judge(CHECKS["gpu"], facts, Options()))


def test_cuda_802_beside_a_missing_fabric_manager_fails_the_hosts_nvlink():
    # `CUDA initialization fails with 802 system error`, nvidia-fabricmanager not installed
    assert replayed(FM_MISSING) == {"gpu": ("fail", "NVLINK_DOWN", "host")}


@pytest.mark.parametrize("init", ["CUDA error 802: system not yet initialized", "cudaErrorSystemNotReady"])
@pytest.mark.parametrize("state", ["not_found", "failed", "inactive"])
def test_the_class_is_any_down_fabric_manager_beside_802(init, state):
    assert _gpu(cuda_init_error=init, fabric_manager={"state": state}) == ("fail", "NVLINK_DOWN", "host")


def test_802_does_not_override_a_fabric_manager_that_found_no_switch():
    fm = {"state": "failed", "error": "NV_WARN_NOTHING_TO_DO", "nvswitches": None}
    assert _gpu(cuda_init_error="802 system not yet initialized", fabric_manager=fm)[1] != "NVLINK_DOWN"


def test_a_down_fabric_manager_without_802_or_switches_is_still_not_judged():
    assert _gpu(cuda_init_error="CUDA error 999: unknown error", fabric_manager={"state": "not_found"})[1] \
        != "NVLINK_DOWN"


# -- SIGSEGV on one rank, no error --

def test_a_segfaulted_rank_with_no_error_is_the_images_on_both_roads():
    # `exitcode  : -11 (pid: 3304209)`, `traceback : Signal 11 (SIGSEGV) received by PID 3304209`
    assert replayed(SEGV) == {"train": ("fail", "TRAIN_FAILED", "image")}
    assert verdict(explained(raw(SEGV))) == ("fail", "TRAIN_FAILED", "image")


def test_sigkill_from_the_same_table_stays_the_jobs():
    table = raw(SEGV).replace("-11", "-9").replace("Signal 11 (SIGSEGV)", "Signal 9 (SIGKILL)")
    assert verdict(explained(table)) == ("fail", "TRAIN_FAILED", "job")


# -- the communicator aborted by the watchdog, no cause --

def test_communicator_aborted_by_the_watchdog_is_the_jobs_timeout_on_the_explain_road():
    assert verdict(explained(raw(ABORTED))) == ("fail", "NCCL_TIMEOUT", "job")
    line = ("RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure was: Watchdog caught "
            "collective operation timeout")
    assert verdict(explained(line)) == ("fail", "NCCL_TIMEOUT", "job")


# -- an nvidia-smi table cut mid-row --

def test_a_table_cut_after_the_power_cell_keeps_the_rows_read_cells():
    assert verdict(explained(raw(CUT))) == ("pass", None, None)


def test_a_cut_row_showing_err_is_not_a_pass():
    text = raw(CUT).replace("25C    P8               1W", "ERR!   P8               1W")
    assert verdict(explained(text))[0] != "pass"
