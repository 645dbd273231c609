# mypy: disable-error-code="typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's eighty-ninth and ninetieth corpus batches (GPU health from operators' tools; one-node NCCL), fixed by
class:
- GPUd's events output of its Xid component (`xid 119 detected by dmesg`, the event's data as an escaped JSON string)
  is read by `verify explain` as the Xid events it relays, judged by the one catalog;
- `dcgmi discovery -l`'s GPU table is read as an inventory (index, name, bus id, uuid): no health read, not assessed;
  a name DCGM printed as `<<<NULL>>>` is no name, and no fault;
- nvidia-smi's `Unable to determine the device handle for gpu ...: Unknown Error` is a lost GPU in every case of its
  spelling (`nvidia-smi -L` prints `gpu` in lower case), beside the GPUs that answer;
- NCCL's NVLS multicast bind failure quoted short (`Multicast memory: CUDA error 401`, no size) is the same refusal;
- a health tool's line that a GPU does not support row remapping (GPUd's RMA check) is that GPU's `unsupported`
  row remapping, the tool's own parse error no fault of the GPU;
- NCCL's `ncclMaxSharedMem X exceeds device/fn maxSharedMem Y` is the image's NCCL build not fitting the GPU, with or
  without the refused launch shown, before what the network set-up shows;
- one node whose GPUs NCCL joins through NVLS (`NVLS multicast support is available`), no collective, nothing
  failing: the ranks joined within one node, as SHM/P2P connections are (passes, bandwidth not assessed)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.explain import dcgmdiscovery, gpudevents, gpudrma, nvlsbind
from verify.options import Options

pytestmark = pytest.mark.unit

# gpud-accelerator-nvidia-error-xid-event-xid119-gsp-rpc-timeout-from-dmesg-no-device-uuid
GPUD = """  {
    "component": "accelerator-nvidia-error-xid",
    "events": [
      {
        "time": "2024-11-20T04:10:23Z",
        "name": "error_xid",
        "message": "xid 119 detected by dmesg (47 minutes ago)",
        "extra_info": {
          "data": "{\\"time\\":\\"2024-11-20T04:10:23Z\\",\\"data_source\\":\\"dmesg\\",\\"device_uuid\\":\\"\\",\\"xid\\":119,\\"suggested_actions_by_gpud\\":{"
"""


def test_gpud_s_xid_event_is_read_as_the_kernel_log_s_xid():
    [event] = gpudevents.events(GPUD)
    assert (event["xid"], event["source"], event["time"], event["uuid"]) == (119, "kernel_log", "2024-11-20T04:10:23Z",
                                                                             None)
    assert verdict(explained(GPUD)) == ("fail", "XID_ERROR", "host")


def test_gpud_s_event_data_alone_is_one_event_and_prose_is_none():
    data = GPUD.split('"message"')[0] + GPUD.split("\n")[-2] + "\n"
    assert [e["xid"] for e in gpudevents.events(data)] == [119]
    assert gpudevents.events("GPUd said xid 119 detected by dmesg once") == []


# h100-sxm-x4-dcgmi-discovery-l-names-null-bus-ids-and-uuids-listed-no-health-read
DISCOVERY = """4 GPUs found.
+--------+----------------------------------------------------------------------+
| GPU ID | Device Information                                                   |
+--------+----------------------------------------------------------------------+
| 0      | Name: <<<NULL>>>                                                     |
|        | PCI Bus ID: 00000000:4C:00.0                                         |
|        | Device UUID: GPU-d6a2c177-4cd8-8d01-0310-79f2720f37de                |
+--------+----------------------------------------------------------------------+
| 1      | Name: NVIDIA H100 80GB HBM3                                          |
|        | PCI Bus ID: 00000000:5D:00.0                                         |
|        | Device UUID: GPU-75c4ee16-a840-6f6c-9a7b-5ed8f41598b8                |
+--------+----------------------------------------------------------------------+
0 NvSwitches found.
+-----------+
| Switch ID |
+-----------+
+-----------+
"""


def test_dcgmi_discovery_is_an_inventory_not_a_health_read():
    devices = dcgmdiscovery.parse(DISCOVERY)["devices"]
    assert [(d["index"], d["name"], d["pci_bus_id"]) for d in devices] == [
        (0, None, "00000000:4C:00.0"), (1, "NVIDIA H100 80GB HBM3", "00000000:5D:00.0")]
    assert verdict(explained(DISCOVERY)) == ("warn", "HEALTH_NOT_ASSESSED", "host")


# rtx2080ti-x4-ml-node-nvidia-smi-l-unable-to-determine-device-handle-18-00-0-unknown-error-three-answer
LISTED = """$ nvidia-smi -L
Unable to determine the device handle for gpu 0000:18:00.0: Unknown Error
GPU 1: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-f0f3ae96-fe93-f5c8-4295-bf657e5a25da)
GPU 2: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-99c4f278-11da-052d-ac5c-3490b58ade04)
"""


def test_a_handle_nvml_cannot_get_beside_the_listed_gpus_is_a_lost_gpu():
    r = explained(LISTED)
    assert verdict(r) == ("fail", "GPU_LOST", "host")
    assert "18:00.0" in r.summary


# pytorch-ao-4xh100-ci-runner-fsdp-all-gather-nvls-multicast-bind-cuda-401-nvls-disabled-in-ci
def test_the_nvls_bind_failure_quoted_short_is_read():
    text = "  Failed to bind NVLink SHARP (NVLS) Multicast memory: CUDA error 401\n"
    assert nvlsbind.detect(text)
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "host")


# rtx4090-gpud-rma-check-invalid-remapping-failure-occurred-value-empty-no-row-remapping-tool-error
RMA = ('nvidia-smi GPU GPU 00000000:E1:00.0 failed to determine if it qualifies for RMA: invalid remapping failure '
       'occurred value: "", GPU product name "NVIDIA GeForce RTX 4090" does not support row remapping (message: "GPU\n')


def test_a_tool_s_no_row_remapping_line_is_the_gpu_s_unsupported_field():
    [dev] = gpudrma.parse(RMA)["devices"]
    assert (dev["pci_bus_id"], dev["name"], dev["unsupported"]) == ("00000000:E1:00.0", "NVIDIA GeForce RTX 4090",
                                                                    {"row_remap": "NotSupported"})
    assert verdict(explained(RMA))[0] == "pass"


# rtx5090-x2-workstation-nccl-2.25.1-cuda12.2-p2p-disabled-still-fails-maxsharedmem-82240-exceeds-79856-needs-2.26
SHMEM = """localhost:11344:11344 [1] NCCL INFO NCCL version 2.25.1+cuda12.2
localhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856
localhost:11344:11344 [1] NCCL INFO NET/IB : No device found.
localhost:11344:11344 [1] NCCL INFO NET/Socket : Using [0]eno1:10.201.24.89<0> [1]CloudflareWARP:172.16.0.2<0>
localhost:11344:11344 [1] NCCL INFO Using network Socket
"""


def test_nccl_s_kernels_too_big_for_the_gpu_are_the_image_s_with_or_without_a_failure():
    assert verdict(explained(SHMEM)) == ("fail", "NCCL_FAILED", "image")
    log = {"proof": ["ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856", "NET/IB : No device found."],
           "ib_no_device": True, "networks": ["Socket"]}
    r = nccl.judge({"backend": "nccl", "nodes": 1, "error": "init: fails", "nccl_log": log}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "image")


# h100-x8-one-node-nvls-multicast-available-16-channels-init-complete-3s-small-message-regression-2.28-to-2.29
NVLS = """[0] NCCL INFO NVLS multicast support is available on dev 0 (NVLS_NCHANNELS 16)
[6] NCCL INFO comm 0x563cb8ca7160 rank 6 nRanks 8 nNodes 1 localRanks 8 localRank 6 MNNVL 0
[3] NCCL INFO ncclCommInitRankConfig comm 0x563cb890f420 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId b000 commId 0xfa356df9cba89de0 - Init COMPLETE
"""


def test_one_node_joined_through_nvls_with_nothing_failing_passes():
    r = explained(NVLS)
    assert verdict(r) == ("pass", None, None)
    assert "NVLink SHARP" in r.summary
    # across nodes NVLS says nothing of the network: no pass from it
    log = {"nvls": True, "transports": [], "networks": []}
    assert nccl.judge({"backend": "nccl", "nodes": 2, "nccl_log": log}, Options()).status != "pass"
