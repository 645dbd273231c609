# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's eighty-fifth corpus batch (NVSwitch systems: fabric manager logs, IMEX, NVLS), fixed by class:
- a GPU's fabric health mask read (NVML's nvmlDeviceGetGpuFabricInfoV, as nvidia-smi or NCCL's MNNVL line prints
  it) is the NVLink health FACTS.md lists: read and clean, it is no "health not assessed"; the registration state
  alone still is;
- NCCL's `MNNVL busId ... state ... healthMask` lines are read by `verify explain` into the gpu fabric facts;
- an undecoded CUDA error of a program beside the driver's read of the node and CUDA's start: the error is said, not
  judged, and the GPUs' unread health warns (never "nothing to judge");
- the Fabric Manager's log: its `detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id ...` lines
  are SXids, one SxidEvent each, judged by the one catalog;
- NCCL's `Failed to bind NVLink SHARP (NVLS) Multicast memory ... CUDA error 401` quoted on its own is read by
  `verify explain` as the facts road reads it."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import gpu
from verify.explain import fmlog, mnnvl, nvbandwidth
from verify.options import Options

pytestmark = pytest.mark.unit

# gb200-tray-4gpu-570.124.06-nccl-mnnvl-state-3-healthmask-0xaa-all-health-bits-false-clique-0x7ffe-nvls-forced-on-errors-fabric-healthy
MNNVL = ("gb200a-04:2101743:2101803 [1] NCCL INFO MNNVL busId 0x901000 fabric UUID 3143b15bc2cd192b.28cc9b5473fb5b93 "
         "cliqueId 0x7ffe state 3 healthMask 0xaa\n"
         "gb200a-04:2101742:2101799 [0] NCCL INFO MNNVL busId 0x801000 fabric UUID 3143b15bc2cd192b.28cc9b5473fb5b93 "
         "cliqueId 0x7ffe state 3 healthMask 0xaa\n")


def _fabric(health):
    return {"state": "completed", "status": None, "clique_id": 32766, "cluster_uuid": "x", "health": health}


def test_a_clean_fabric_health_mask_is_an_nvlink_health_read():
    clean = {"summary": None, "degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
             "access_timeout_recovery": False, "incorrect_configuration": None}
    r = gpu.judge({"driver": "570.124.06", "devices": [{"index": 0, "fabric": _fabric(clean)}]}, Options())
    assert verdict(r)[0] == "pass", r.summary


def test_the_registration_state_alone_is_no_health_read():
    r = gpu.judge({"driver": "570.124.06", "devices": [{"index": 0, "fabric": _fabric(None)}]}, Options())
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_nccl_s_mnnvl_lines_are_read_into_the_gpu_fabric():
    devices = mnnvl.parse(MNNVL)["devices"]
    assert [(d["index"], d["pci_bus_id"]) for d in devices] == [(0, "00000008:01:00.0"), (1, "00000009:01:00.0")]
    fabric = devices[0]["fabric"]
    assert (fabric["state"], fabric["clique_id"]) == ("completed", 32766)
    assert fabric["health"]["route_unhealthy"] is False and fabric["health"]["incorrect_configuration"] is None


def test_a_mask_with_a_route_unhealthy_fails_the_host_through_explain():
    # 0x9a: route unhealthy (shift 4) reads 1, TRUE
    text = MNNVL.replace("healthMask 0xaa", "healthMask 0x9a")
    assert mnnvl.health(0x9a)["route_unhealthy"] is True
    assert verdict(explained(text)) == ("fail", "NVLINK_DOWN", "host")


def test_an_undecoded_cuda_error_beside_the_driver_warns_the_unread_health():
    # h200-x4-pod-nvbandwidth-multinode-mode-on-one-node-cumemcreate-cuda-error-not-permitted-no-imex-channel-driver-560.35.03
    facts = {"driver": "560.35.03", "cuda_driver": "12.8", "cuda_init_error": "none", "cuda_errors": [
        {"index": None, "text": "[CUDA_ERROR_NOT_PERMITTED] operation not permitted in expression cuMemCreate(&handle, "
                                "roundedUpAllocationSize, &prop, 0 ) on tensorflow-benchmarks-worker-0, rank = 0"}]}
    assert verdict(gpu.judge(facts, Options())) == ("warn", "HEALTH_NOT_ASSESSED", "host")
    # without the driver's read, the program's undecoded error alone stays not judged
    assert verdict(gpu.judge({**facts, "driver": None}, Options()))[0] == "skip"


# hgx-h100-fabricmanager-535.161.08-log-sxid-12028-non-fatal-burst-all-four-nvswitches-then-restart-all-gpus-reprobed-18-links-gpud-fixture
FM = ("[Dec 19 2024 19:17:49] [ERROR] [tid 1374] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id "
      "00000000:83:00.0 physical id 0 port 34\n"
      "[Dec 19 2024 05:55:13] [INFO] [tid 1584] multicast group 0 is allocated.\n")


def test_the_fabric_manager_s_sxid_lines_are_sxid_events():
    events = fmlog.parse(FM)["sxid_events"]
    assert [(e["sxid"], e["pci_bus_id"], e["time"], e["source"]) for e in events] == [
        (12028, "00000000:83:00.0", "Dec 19 2024 19:17:49", "fabric_manager")]
    assert verdict(explained(FM, "fabricmanager.log")) == ("warn", "XID_ERROR", "host")


def test_nccl_s_nvls_bind_failure_quoted_alone_is_read_by_explain():
    # p5-48xlarge-h100-ci-runners-nccl-2.29.7-nvls-multicast-bind-cuda-401-every-run-fabric-manager-off-imex-channels-not-loaded-node-setup-fix
    text = ("Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152:\n"
            "CUDA error 401 'the operation cannot be performed in the present state'.\n"
            "This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.\n")
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "host")


def test_an_mnnvl_line_with_no_health_bit_is_not_taken():
    # roce-nccl-2.27-aws-ofi-plugin-init-fails-internal-ib-gdrdma-every-channel: an H100 with no multi-node fabric
    line = ("tpgds-aihub0008:207012:207012 [5] NCCL INFO MNNVL busId 0xab000 fabric UUID 0.0 cliqueId 0x0 state 3 "
            "healthMask 0x0\n")
    assert not mnnvl.detect(line)


def test_nvbandwidth_s_header_and_error_are_read_by_explain():
    # h200-x4-pod-nvbandwidth-multinode-mode-on-one-node-cumemcreate-cuda-error-not-permitted-no-imex-channel-driver-560.35.03
    text = ("nvbandwidth Version: v0.8\nCUDA Runtime Version: 12080\nCUDA Driver Version: 12080\n"
            "Driver Version: 560.35.03\n\n"
            "Process 0 (tensorflow-benchmarks-worker-0): device 0: NVIDIA H200 (00000000:8f:00)\n\n"
            "[CUDA_ERROR_NOT_PERMITTED] operation not permitted in expression cuMemCreate(&handle, "
            "roundedUpAllocationSize, &prop, 0 ) on tensorflow-benchmarks-worker-0, rank = 0\n")
    facts = nvbandwidth.parse(text)
    assert (facts["driver"], facts["cuda_driver"], facts["cuda_init_error"]) == ("560.35.03", "12.8", "none")
    assert verdict(explained(text, "nvbandwidth.log")) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_a_fatal_sxid_of_the_fabric_manager_under_journald_s_prefix_is_read():
    line = ("Feb 27 15:10:02 node7 nv-fabricmanager[2211]: [Feb 27 2025 15:10:02] [ERROR] [tid 12727] detected NVSwitch "
            "fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61\n")
    (event,) = fmlog.parse(line)["sxid_events"]
    assert (event["sxid"], event["pci_bus_id"], event["time"]) == (20034, "00000000:86:00.0", "Feb 27 2025 15:10:02")


def test_an_mnnvl_line_in_progress_fails_the_host():
    # NCCL prints no line for a GPU NVML gives no fabric (state 0); a registration still in progress is the host's
    line = ("node:1:1 [0] NCCL INFO MNNVL busId 0x801000 fabric UUID 0.0 cliqueId 0x0 state 2 healthMask 0x0\n")
    assert verdict(explained(line)) == ("fail", "NVLINK_DOWN", "host")
