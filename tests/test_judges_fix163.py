"""Issue 35, batches 163 to 165 (nvbandwidth's host copies, gpu_burn runs, an NVL5+ fabric manager's start): the
classes their blind translations showed `verify explain` getting wrong.
- nvbandwidth's device listing (v0.2 without the bus id) and its host-copy matrices: the devices CUDA used and each
  one's h2d/d2h rate, so the GPUs are "not assessed" (no health field), never "nothing to judge";
- a gpu_burn run: its `nvidia-smi -L`, CUDA's start per device, a client's CUDA error (judged by the one catalog) and
  its last progress line: a clean burn passes, a client that counted errors is said and never passes;
- the fabric manager's start precheck on an NVL5+ baseboard (`Kernel module "ib_umad" has not been loaded, fabric
  manager cannot be started`) and NVLSM's `umad_init` failure: the fabric manager down on a node with NVSwitches,
  fail NVLINK_DOWN (host);
- mpirun's report that a rank exited non-zero beside an NCCL log that names no failure: the failure, never a pass.
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import pytest

from tests.judging import explained, raw, replayed, verdict
from verify.explain import fmstatus, gpuburn, mpiexit, nvbandwidth

pytestmark = pytest.mark.unit

A100_NVB = "a100-sxm4-40gb-nvbandwidth-v0.8-h2d-sm-25.13-gbs-at-512mib-driver-560.35.05-pcie-gen4-rate"
RTX4090_NVB = "rtx-4090-x8-nvbandwidth-v0.2-h2d-ce-24-26-d2h-ce-26-27-gbs-driver-545.29.06-pcie-gen4-x16"
A500_BURN = "rtx-a500-embedded-gpu-burn-10s-3519-gflops-errors-0-53c-healthy"
PTX_BURN = "rtx-3090-ti-gpu-burn-cuda-13.2-ptx-on-driver-590.48.01-unsupported-toolchain-222-client-died"
B200_FM = "hgx-b200-palette-edge-kairos-fabricmanager-start-precheck-nvl5-ib-umad-not-loaded-fabric-manager-cannot-be-started"
TALOS_FM = "talos-nvidia-nvlink5-baseboard-ext-nvidia-fabricmanager-crash-loop-nvlsm-umad-init-is-ib-umad-module-loaded"


# ---------------------------------------------------------- nvbandwidth: devices and host copies, health not read
def test_nvbandwidth_lists_its_devices_and_host_copy_rates():
    text = raw(A100_NVB)
    assert "Device 0: NVIDIA A100-SXM4-40GB (00000000:99:00)" in text
    facts = nvbandwidth.parse(text)
    assert facts["devices"] == [{"index": 0, "name": "NVIDIA A100-SXM4-40GB"}]
    assert facts["perf"] == [{"index": 0, "h2d_GBps": 25.13}]
    assert verdict(explained(text)) == ("warn", "HEALTH_NOT_ASSESSED", "host") == replayed(A100_NVB)["gpu"]


def test_nvbandwidth_v0_2_devices_without_a_bus_id_are_read():
    text = raw(RTX4090_NVB)
    assert "Device 7: NVIDIA GeForce RTX 4090\n" in text
    facts = nvbandwidth.parse(text)
    assert [d["index"] for d in facts["devices"]] == list(range(8)) and facts["cuda_init_error"] == "none"
    assert facts["perf"][2] == {"index": 2, "h2d_GBps": 23.9, "d2h_GBps": 26.25}
    assert verdict(explained(text)) == ("warn", "HEALTH_NOT_ASSESSED", "host") == replayed(RTX4090_NVB)["gpu"]


# ---------------------------------------------------------- gpu_burn: a run read, a clean one passes
def test_a_clean_gpu_burn_passes():
    text = raw(A500_BURN)
    assert "100.0%  proc'd: 30 (3519 Gflop/s)   errors: 0   temps: 53 C" in text
    facts = gpuburn.parse(text)
    assert facts["kernels"] == [{"index": 0}] and facts["devices"][0]["temperature_c"] == 53.0
    assert verdict(explained(text)) == ("pass", None, None) == replayed(A500_BURN)["gpu"]


def test_a_gpu_burn_client_dying_on_a_newer_ptx_is_the_images_build():
    text = raw(PTX_BURN)
    line = ("Couldn't init a GPU test: Error in load module (gpu_burn-drv.cpp:243): the provided PTX was compiled with "
            "an unsupported toolchain.")
    assert line in text
    facts = gpuburn.parse(text)
    assert facts["cuda_errors"] == [{"index": 2, "text": line}] and "kernels" not in facts
    assert verdict(explained(text)) == ("fail", "ARCH_NOT_IN_BUILD", "image") == replayed(PTX_BURN)["gpu"]


def test_a_gpu_burn_that_counted_errors_never_passes():
    text = ("Burning for 10 seconds.\nGPU 0: NVIDIA RTX A500 Embedded GPU (UUID: GPU-6bd3cf32-0057-0f0b-2eb7-3af5ed6da5f2)\n"
            "Initialized device 0 with 3897 MB of memory (3504 MB available, using 3154 MB of it), using FLOATS\n"
            "100.0%  proc'd: 30 (3519 Gflop/s)   errors: 12   temps: 53 C\n")
    assert "kernels" not in gpuburn.parse(text)
    assert gpuburn.unread(text) == ["gpu_burn counted 12 faulty results on its client 0"]
    assert explained(text).status != "pass"


# ---------------------------------------------------------- the fabric manager that cannot start on NVL5+
@pytest.mark.parametrize("slug,error", [
    (B200_FM, 'Kernel module "ib_umad" has not been loaded, fabric manager cannot be started'),
    (TALOS_FM, "nvlsm: ibwarn: [15] umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version (No "
               "such file or directory): is ib_umad module loaded?"),
])
def test_the_fabric_manager_refused_its_start_on_an_nvl5_node_is_nvlink_down(slug, error):
    text = raw(slug)
    assert error in text and fmstatus.detect(text)
    manager = fmstatus.parse(text)["fabric_manager"]
    assert manager["error"] == error and manager["nvswitches"] is True
    assert verdict(explained(text)) == ("fail", "NVLINK_DOWN", "host") == replayed(slug)["gpu"]


def test_a_module_message_without_the_fabric_managers_words_is_not_its_failure():
    assert not fmstatus.detect('modprobe: FATAL: Module ib_umad not found in directory /lib/modules/6.8.0')


# ---------------------------------------------------------- mpirun's non-zero exit beside NCCL's log
AZURE_NHC = "azure-nd-h100-v5-no-persistent-rdma-naming-an0-vf-as-mlx5-1-roce-among-eight-ib-aznhc-allreduce-exit-3-topo-xml-nic-busid"


def test_mpiruns_non_zero_exit_beside_nccls_log_is_a_failure_never_a_pass():
    text = raw(AZURE_NHC)
    assert "mpirun detected that one or more processes exited with non-zero status" in text
    assert mpiexit.exited(text) == ("graph/xml.h:85 NCCL WARN Attribute busid of node nic not found (mpirun: a rank "
                                    "exited with code 3)")
    status, code, _ = verdict(explained(text))
    assert (status, code) == ("fail", "NCCL_FAILED")


def test_mpiruns_block_without_a_non_zero_exit_is_no_failure():
    block = ("mpirun detected that one or more processes exited with non-zero status, thus causing\n"
             "the job to be terminated. The first process to do so was:\n\n  Process name: [[1,1],0]\n"
             "  Exit code:    0\n")
    assert mpiexit.exited(block) is None
    assert mpiexit.exited("Primary job  terminated normally") is None
