"""NCCL's multi-node NVLink (MNNVL) set-up refused to the process: the job's, never a drain (issue 35, batch 111).

NCCL 2.23+ checks, where NVML reports the GPUs in a fabric clique, that fabric memory can be allocated and shared
(src/mnnvl.cc: cuMemCreate with CU_MEM_HANDLE_TYPE_FABRIC); where it cannot it warns `MNNVL (cliqueSize 8) is available
but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set
NCCL_MNNVL_ENABLE=0 to ignore this issue.` and init fails. A clique size NVML reports means the node's NVLink fabric is
up (Fabric Manager and NVSwitches did their part); the CUDA error above the WARN, `Cuda failure 800 'operation not
permitted'` (CUDA_ERROR_NOT_PERMITTED), is the driver refusing this process fabric memory because it holds no IMEX
channel: channels are granted per workload (a Kubernetes ComputeDomain's claim through NVIDIA's DRA driver, Slurm's
switch/nvidia_imex per job), and an unprivileged pod without one sees none. That is how the job was launched, not the
node's hardware: fail NCCL_FAILED, owner job, no drain. The MNNVL WARN with any other CUDA error (or none shown) is
left to the other rules: an IMEX daemon down or a domain not ready is not told from it. Pure."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

MNNVL_BROKEN = re.compile(r"MNNVL \(cliqueSize (\d+)\) is available but not working")
# CUDA's refusal by its number in NCCL's CUCHECK (2.30 prints the number), its words, or its enum name
NOT_PERMITTED = re.compile(r"Cuda failure (?:800 )?'operation not permitted'|\bCUDA_ERROR_NOT_PERMITTED\b|"
                           r"cudaErrorNotPermitted", re.IGNORECASE)


def mnnvl_verdict(said: str, failed: str, result: CheckResult) -> CheckResult | None:
    """The MNNVL check failing on CUDA's `operation not permitted`: no IMEX channel given to the job; else None."""
    broken = MNNVL_BROKEN.search(said)
    if not broken or not NOT_PERMITTED.search(said):
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: NCCL found a multi-node NVLink clique of {broken.group(1)} "
                          "GPUs but the process was not permitted to allocate fabric memory (CUDA error 800): it was "
                          "given no IMEX channel (/dev/nvidia-caps-imex-channels); the fabric answered, nothing shows "
                          "the node at fault",
                          "Give the job an IMEX channel: in Kubernetes a ComputeDomain and its resource claim (NVIDIA's "
                          "DRA driver) rather than a privileged pod, under Slurm the switch/nvidia_imex plugin; or run "
                          "without multi-node NVLink (NCCL_MNNVL_ENABLE=0).", "job")
