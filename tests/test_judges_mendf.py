"""mendf (issue 35, the facts road's known mismatches by class): a collective or a training run that failed on a
cause which is another check's finding keeps its own code (NCCL_FAILED, TRAIN_FAILED) and takes that cause's owner.

The class, from the corpus's translators (nine entries, no translator of the corpus expecting the other way): NCCL
failing on a kernel's fault (700/719), on CUDA's 214 (uncorrectable ECC) or 101 (a GPU index the task lacks), or on a
memory registration out of locked memory, was said by the nccl check under the gpu or fabric check's code
(CUDA_KERNEL_FAULT, ECC_UNCORRECTABLE, DEVICE_COUNT_MISMATCH, FABRIC_MEMLOCK_LOW). Out of memory keeps its own code:
docs/codes.md files NCCL's `Cuda failure 'out of memory'` under GPU_OUT_OF_MEMORY and two translators expect it.
Owners are unchanged, so no verdict is newly the host's (no false drain).
"""
from __future__ import annotations

import json

import pytest

from tests.judging import CORPUS, explained, fabric, nccl_verdict, raw, replayed, verdict, wanted
from verify.checks.train import verdict as train_verdict
from verify.facts import TrainFailure
from verify.result import CheckResult

pytestmark = pytest.mark.unit

MEMLOCK = "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory"
TIMEOUT = ("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 "
           "milliseconds before timing out.")


@pytest.mark.parametrize(("failure", "owner"), [
    ("enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'", "job"),
    ("misc/strongstream.cc:424 NCCL WARN Cuda failure 'unspecified launch failure'", "job"),
    ("misc/strongstream.cc:424 NCCL WARN Cuda failure 'uncorrectable ECC error encountered'", "host"),
    ("misc/strongstream.cc:424 NCCL WARN Cuda failure 'uncorrectable NVLink error detected during the execution'",
     "host"),
    ("transport/p2p.cc:275 NCCL WARN Cuda failure 101 'invalid device ordinal'", "job"),
])
def test_a_collective_failing_on_the_gpu_checks_finding_keeps_its_own_code_and_the_causes_owner(failure, owner):
    """Practice: one code per check, the cause's owner decides who acts (docs/codes.md: every failure names who acts;
    the gpu check's codes are the gpu check's)."""
    assert nccl_verdict(error=f"all_reduce: {failure}") == ("fail", "NCCL_FAILED", owner)


def test_out_of_memory_keeps_its_own_code_in_the_nccl_check():
    """Practice: docs/codes.md is the contract: GPU_OUT_OF_MEMORY names NCCL's `Cuda failure 'out of memory'`."""
    assert nccl_verdict(error="all_reduce: enqueue.cc:1556 NCCL WARN Cuda failure 'out of memory'") == \
        ("fail", "GPU_OUT_OF_MEMORY", "job")


def test_a_timeout_that_trapped_the_kernel_is_a_failure_and_any_other_cuda_error_beside_a_hang_stays_a_timeout():
    """Practice: say what happened: a kernel that faulted ended the collective with an error (NCCL EP's receive
    timeout traps its kernel, 719); a driver's error beside a hang keeps the hang's code and the driver's owner."""
    trapped = f"{TIMEOUT} / misc/strongstream.cc:424 NCCL WARN Cuda failure 'unspecified launch failure'"
    assert nccl_verdict(error=trapped) == ("fail", "NCCL_FAILED", "job")
    assert nccl_verdict(error=f"{TIMEOUT} / init.cc:100 NCCL WARN Cuda failure 'unknown error'") == \
        ("fail", "NCCL_TIMEOUT", "host")


def test_a_registration_out_of_locked_memory_fails_the_collective_by_the_memlock_owner_rule():
    """Practice: the owner follows where the limit was read (FACTS.md's memlock rule); the fabric check, which owns
    the limit, still names it FABRIC_MEMLOCK_LOW and the nccl summary names it too."""
    assert nccl_verdict(error=f"all_reduce: {MEMLOCK}") == ("fail", "NCCL_FAILED", "host")
    assert nccl_verdict(error=f"all_reduce: {MEMLOCK}", uverbs=["uverbs0"]) == ("fail", "NCCL_FAILED", "job")
    assert verdict(fabric(memlock_error=MEMLOCK)) == ("fail", "FABRIC_MEMLOCK_LOW", "host")
    assert verdict(fabric(memlock_error=MEMLOCK, memlock="unlimited"))[0] == "pass"   # the limit is not what ran out


@pytest.mark.parametrize(("message", "want"), [
    ("CUDA error: an illegal memory access was encountered", ("fail", "TRAIN_FAILED", "job")),
    ("CUDA error: uncorrectable ECC error encountered", ("fail", "TRAIN_FAILED", "host")),
    ("CUDA error: invalid device ordinal", ("fail", "TRAIN_FAILED", "job")),
    ("CUDA out of memory. Tried to allocate 1.50 GiB", ("fail", "GPU_OUT_OF_MEMORY", "job")),
])
def test_a_training_run_failing_on_the_gpu_checks_finding_is_train_failed_with_the_causes_owner(message, want):
    """Practice: one rule for every check that meets a CUDA error (the one catalog, verify/shared/cuda_errors.py)."""
    result = CheckResult("train", "pass", "")
    failure: TrainFailure = {"rank": 0, "node": "n1", "phase": "train", "type": "RuntimeError", "message": message}
    assert verdict(train_verdict._failure({"failures": [failure]}, result)) == want


MENDED = ["gb200-tray-4-ranks-nccl-2.30.7-mnnvl-1-clique-2786-p2p-mnnvl-nccl-ep-low-latency-two-handles-alias-"
          "dispatch-timeout-719-job",
          "gb200-two-nccl-tests-jobs-on-one-nvlink-clique-dra-compute-domains-cuda-failure-unspecified-launch-"
          "failure-alone-runs-job",
          "asus-gx10-gb10-pair-kernel-7.0.0-1019-nvidia-vllm-tp2-both-ranks-nccl-init-ibv-reg-mr-iova2-enomem",
          "h800-2x8-nccl-2.28.7-alltoall-device-api-nvl-kernel-across-two-nodes-illegal-memory-access",
          "gb10-x3-roce-nccl-2.30.7-ibv-reg-mr-iova2-enomem-kernel-7.0.0-1019-regression",
          "h200-node-msm-h200-2-ranks-8-15-deepep-after-nvshmem-install-nccl-ib-ibv-create-cq-enomem-memlock-not-shown",
          "kohya-sdxl-ddp-cloud-gpu-rank1-uncorrectable-ecc-error-encountered-nccl-watchdog-thread-terminated",
          "rtx-4090-x4-ubuntu-24-modded-nanogpt-docker-gpus-all-then-bare-venv-torchrun-nproc-per-node-8-set-device-"
          "invalid-device-ordinal-job",
          "slurm-a100-srun-gpus-per-task-1-nccl-2.28.9-p2p-cc-275-cuda-101-invalid-device-ordinal-task-cgroup-job"]


def _expected(slug: str) -> dict:
    return wanted(json.loads((CORPUS / slug / "expected.json").read_text())["verdicts"])


@pytest.mark.parametrize("slug", MENDED)
def test_the_mended_corpus_entries_replay_to_their_translators_verdicts(slug):
    """Practice: real public output, translated by the letter of FACTS.md by someone who had not read the judges."""
    assert replayed(slug) == _expected(slug)


@pytest.mark.parametrize("slug", [s for s in MENDED if json.loads((CORPUS / s / "expected.json").read_text())
                                  ["kind"] != "faulty" and not any(o == "host" for _, _, o in _expected(s).values())])
def test_no_false_drain_where_the_job_is_at_fault_on_either_road(slug):
    """Practice: no false drain: the mended entries whose host is healthy (the job's kernel, its device request, two
    handles on one group) are owned by the job through their facts and through their raw excerpt alike."""
    assert all(owner != "host" for _, _, owner in replayed(slug).values())
    assert explained(raw(slug)).owner != "host"
