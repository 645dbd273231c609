"""Issue 35, batches 63 and 64 (inference servers' output, NVSwitch NCCL), by class, on handmade real-shaped lines:
- a file that holds a program's finding and a GPU read without health (an out of memory above a cut nvidia-smi table):
  the finding is the file's verdict, the unread health said beside it, never the other way round;
- a program's output read with no CUDA error in it, and nothing else, is no pass: nothing to judge."""
from __future__ import annotations

import pytest

from verify import explain as ex
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.69 "
       "GiB of which 1.09 GiB is free. Including non-PyTorch memory, this process has 22.57 GiB memory in use.\n")
TABLE = """+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 545.23.08              Driver Version: 545.23.08    CUDA Version: 12.3     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA GeForce RTX 3090        Off | 00000000:01:00.0 Off |                  N/A |
"""


@pytest.mark.parametrize("text", [OOM + "\n" + TABLE, TABLE + "\n" + OOM], ids=["oom-first", "table-first"])
def test_a_programs_finding_outranks_a_gpu_listed_without_health(text):
    r = ex.explain_text(text, "paste.txt", Options())
    assert (r.name, r.status, r.code, r.owner) == ("gpu", "warn", "GPU_OUT_OF_MEMORY", "job"), r.summary
    assert any("HEALTH_NOT_ASSESSED" in d for d in r.details), r.details


def test_a_gpu_without_health_alone_still_warns_not_assessed():
    r = ex.explain_text(TABLE, "smi.txt", Options())
    assert (r.status, r.code) == ("warn", "HEALTH_NOT_ASSESSED"), r.summary


def test_a_programs_output_with_no_cuda_error_alone_is_nothing_to_judge_never_a_pass():
    r = judge(CHECKS["gpu"], {"cuda_errors": []}, Options())
    assert (r.status, r.code, r.owner) == ("skip", "FACTS_INCOMPLETE", None), r.summary


def test_no_cuda_error_beside_a_kernel_log_with_no_xid_is_judged_on_the_log():
    """The kernel log read and clean is evidence of its own (no Xid): judged on it, the devices said not assessed."""
    r = judge(CHECKS["gpu"], {"cuda_errors": [], "xid_events": []}, Options())
    assert (r.status, r.code) == ("pass", None) and "Xid events none seen" in r.summary \
        and "devices themselves not assessed" in r.summary, r.summary
