"""Issue 35's eighty-ninth and ninetieth corpus batches (GPU health from operators' tools; one-node NCCL), fixed by
class:
- GPUd's events output of its Xid component (`xid 119 detected by dmesg`, the event's data as an escaped JSON string)
  is read by `verify explain` as the Xid events it relays, judged by the one catalog;
- `dcgmi discovery -l`'s GPU table is read as an inventory (index, name, bus id, uuid): no health read, not assessed;
  a name DCGM printed as `<<<NULL>>>` is no name, and no fault;
- nvidia-smi's `Unable to determine the device handle for gpu ...: Unknown Error` is a lost GPU in every case of its
  spelling (`nvidia-smi -L` prints `gpu` in lower case), beside the GPUs that answer;
- NCCL's NVLS multicast bind failure quoted short (`Multicast memory: CUDA error 401`, no size) is the same refusal."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.explain import dcgmdiscovery, gpudevents, nvlsbind

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
