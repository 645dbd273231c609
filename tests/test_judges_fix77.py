# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's seventy-sixth, seventy-seventh and seventy-ninth corpus batches, fixed by class:
- GPUs a host tool listed by name beside the driver version it read through NVML (`dcgmi diag`'s Metadata:
  `Driver Version Detected`, `GPU Device IDs Detected`), with no health field: there, not read: warn
  HEALTH_NOT_ASSESSED (FACTS.md: a GPU whose health fields are all unknown warns), never "nothing to judge";
  named devices without a driver (a program's own device lines) stay nothing to judge;
- a program's CUDA kernel fault beside the kernel log's application Xid for it (CUDA error 73 "an illegal
  instruction was encountered" and Xid 13 "Illegal Instruction Encoding"): one fault, the job's, named by the
  driver's account of it (XID_ERROR), whichever road reads it."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks.gpu.verdict import judge as judge_gpu
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ devices a host tool listed, beside its driver
def _listed(driver: str | None) -> dict:
    return {"torch": None, "driver": driver,
            "devices": [{"index": i, "name": "Tesla V100-SXM2-16GB"} for i in range(4)]}


def test_gpus_a_host_tool_listed_beside_the_driver_it_read_are_not_assessed_never_nothing_to_judge():
    """tests/data/real-world/v100-sxm2-16gb-x4-dcgm-4.4.1-driver-580-diag-pcie-fail-bwchecker-13-missing-cuda13-package:
    `| Driver Version Detected   | 580.65.06 |` and `| GPU Device IDs Detected   | 1db1, 1db1, 1db1, 1db1 |`."""
    r = judge_gpu(_listed("580.65.06"), Options())
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host") and "not healthy" in r.summary
    # no driver beside them (nccl-tests' `device 0 [0x..] NVIDIA H100 80GB HBM3` lines): still nothing to judge
    assert verdict(judge_gpu(_listed(None), Options())) == ("skip", "FACTS_INCOMPLETE", None)


# ------------------------------------------------------------------ a program's kernel fault and its Xid
_CUDA = ("ERROR: an illegal instruction was encountered in /home/dawid/relion-3.0_beta/src/acc/cuda/"
         "custom_allocator.cuh at line 176 (error-code 73)")
_XID = ("NVRM: Xid (PCI:0000:41:00): 13, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Illegal Instruction "
        "Encoding")


def _facts(xid: bool) -> dict:
    return {"torch": None, "devices": None, "cuda_errors": [{"index": None, "text": _CUDA}],
            "xid_events": [{"xid": 13, "index": None, "uuid": None, "pci_bus_id": "0000:41:00", "text": _XID,
                            "time": "82659.755933", "source": "kernel_log"}] if xid else None}


def test_a_program_s_kernel_fault_told_by_its_application_xid_too_is_named_by_the_xid_on_both_roads():
    """tests/data/real-world/relion-3.0-beta-refine-mpi-cuda-error-73-illegal-instruction-xid13-illegal-instruction-
    encoding-gpc1-gpu-41-00: the program's line and the kernel's Xid 13 for the same moment."""
    r = judge_gpu(_facts(xid=True), Options())
    assert verdict(r) == ("warn", "XID_ERROR", "job") and "CUDA_KERNEL_FAULT" in r.summary
    assert verdict(explained(f"{_CUDA}\nFeb 15 17:37:45 Gipfeli kernel: [82659.755933] {_XID}\n")) == (
        "warn", "XID_ERROR", "job")
    # the program's fault alone keeps its own code
    assert verdict(judge_gpu(_facts(xid=False), Options())) == ("warn", "CUDA_KERNEL_FAULT", "job")
