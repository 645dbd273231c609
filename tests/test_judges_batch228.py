"""Batch 228 (issue 35): the lead's review.

- vLLM's crash catcher prints `!!!!!!! Segfault encountered !!!!!!!` (capital S): the crash pattern read only
  `segfault`, so the crash was not seen and the failure fell to the unclassified default.
- A segmentation fault whose innermost frame is the CUDA driver's own (`File "<unknown>", line 0, in cuMemCreate`
  under libc's signal frame), called by NCCL's cuMem probe, was read as NCCL's crash (CHECK_CRASHED, the image's):
  the driver crashed, whoever called it; NVIDIA fixed it in its r595 drivers (NVIDIA/nccl#2106). Now NCCL_FAILED, the
  host's driver, on both roads
  (rtx3080-x8-vllm-p2p-nccl-connector-torch-2.9-segfault-in-driver-cumemcreate-ncclcumemhostenable-numa-affinity-uneven-host).
"""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks.nccl.crash import driver_crash

pytestmark = pytest.mark.unit

CRASH = """!!!!!!! Segfault encountered !!!!!!!
  File "./signal/../sysdeps/unix/sysv/linux/x86_64/libc_sigaction.c", line 0, in 0x000070e67704532f
  File "<unknown>", line 0, in cuMemCreate
  File "misc/cudawrap.cc", line 92, in ncclCuMemHostEnable()
  File "/dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/init.cc", line 1852, in ncclCommInitRank
"""


def test_a_crash_inside_the_drivers_own_call_is_the_hosts_driver():
    assert driver_crash(CRASH) == "cuMemCreate"
    r = explained(CRASH)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "host"), r.summary
    assert "inside the CUDA driver (cuMemCreate)" in r.summary


def test_a_crash_in_ncclS_own_frame_above_a_driver_call_stays_the_images():
    inner = CRASH.replace('  File "<unknown>", line 0, in cuMemCreate\n', "")
    assert driver_crash(inner) is None
    r = explained(inner)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "CHECK_CRASHED", "image"), r.summary


def test_a_driver_call_named_in_a_sentence_is_no_frame():
    assert driver_crash("Segfault encountered; we think it is in cuMemCreate, see the trace below") is None
