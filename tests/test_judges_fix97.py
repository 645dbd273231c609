"""Issue 35's ninety-seventh to ninety-ninth corpus batches (Kubernetes RDMA pods; Slurm job output and NHC;
workstation GPUs), fixed by class:
- NCCL before 2.9 named its sources `.cu` (`misc/ibvwrap.cu:284 NCCL WARN ...`, `transport/net_ib.cu:382 -> 2`):
  `verify explain` reads its failing WARN and traces as it reads 2.9's `.cc` ones, so the rule for the call that
  failed decides (rdma-shared-device-plugin-containers-two-nodes-nccl-2.4.2-ibv-modify-qp-no-such-device-...);
- a GPU rig report's hardware section (club-3090's markdown: `- **GPU 0:** ... | driver ...`, `- **PCIe:** x4 lanes
  negotiated (GPU max x16, Gen up to 3)`, `- **Power:** limit=... (default=...)`) is read into the gpu facts as its
  translations read it (rtx3090-x4-threadripper-2950x-595.58.03-rig-report-gpu0-x4-lanes-of-x16-gen3-...)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.explain import nccl, rigreport

pytestmark = pytest.mark.unit

# ------------------------------------------------------------------ NCCL 2.4-2.8: `.cu` sources
# rdma-shared-device-plugin-containers-two-nodes-nccl-2.4.2-ibv-modify-qp-no-such-device-unhandled-system-error-host-run-works
NCCL_24 = """\
gpunodev2:10770:10794 [0] misc/ibvwrap.cu:284 NCCL WARN Call to ibv_modify_qp failed with error No such device
gpunodev2:10770:10794 [0] NCCL INFO transport/net_ib.cu:382 -> 2
gpunodev2:10770:10794 [0] NCCL INFO init.cu:667 -> 2
gpunodev2:10770:10794 [0] NCCL INFO misc/group.cu:69 -> 2 [Async thread]
gpunodev2: Test NCCL failure common.cu:788 'unhandled system error'
"""


def test_nccl_cu_sources_are_read_as_cc_ones_and_enodev_on_modify_qp_is_the_job_s():
    error = nccl.parse(NCCL_24)["error"]
    assert error.startswith("init: misc/ibvwrap.cu:284 NCCL WARN Call to ibv_modify_qp failed with error No such "
                            "device"), error
    r = explained(NCCL_24)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary


# ------------------------------------------------------------------ a rig report's GPU lines
# rtx3090-x4-threadripper-2950x-595.58.03-rig-report-gpu0-x4-lanes-of-x16-gen3-tp4-vllm-300w-of-420w-cap
RIG = """\
## GPU hardware

- **GPU 0:** NVIDIA GeForce RTX 3090 | 24576 MiB | driver 595.58.03 | VBIOS 94.02.42.C0.05 | persistence=Enabled
  - **Power:** limit=300.00 W (default=420.00 W, max=450.00 W) | current_draw=26.61 W ⚠ user-capped below default
  - **PCIe:** x4 lanes negotiated (GPU max x16, Gen up to 3) | bus 00000000:08:00.0 ⚠ slot is narrower than GPU capability
- **GPU 1:** NVIDIA GeForce RTX 3090 | 24576 MiB | driver 595.58.03 | VBIOS 94.02.42.C0.05 | persistence=Enabled
"""


def test_a_rig_report_s_gpu_lines_are_the_gpu_facts_and_its_warnings_are_not_read():
    facts = rigreport.parse(RIG)
    assert facts["driver"] == "595.58.03" and facts["nvml_error"] == "none"
    assert facts["devices"][0] == {
        "index": 0, "name": "NVIDIA GeForce RTX 3090", "memory_bytes": 24576 * 1024 * 1024, "persistence": True,
        "power_limit_w": 300.0, "power_default_limit_w": 420.0, "power_w": 26.61, "pcie_width": 4,
        "pcie_width_gpu_max": 16, "pcie_gen_gpu_max": 3, "pci_bus_id": "00000000:08:00.0"}    # no requested limit
    assert facts["devices"][1] == {"index": 1, "name": "NVIDIA GeForce RTX 3090", "memory_bytes": 24576 * 1024 * 1024,
                                   "persistence": True}
    r = explained(RIG)
    assert (r.name, *verdict(r)) == ("gpu", "warn", "PCIE_DOWNGRADED", "host"), r.summary
    assert not rigreport.detect("GPU 0: x4 lanes, the slot is narrow\n")       # prose: no rig report line
