"""Issue 35's hundred-and-ninth corpus batch (NVSwitch/HGX/Grace), fixed by class:
- `verify explain` reads GPUd's fabric-state check (its reason `GPU GPU-...: state=...` and its per-GPU table) into
  each GPU's `fabric`: the judge decides from NVML's state, never from GPUd's own 'unhealthy' (a PCIe card's or a
  single GB200 tray's 'Not Supported' is no failed registration: not assessed, no drain; In Progress is NVLINK_DOWN);
- `verify explain` reads torch's `collect_env` report (torch, its CUDA build, `Is CUDA available`, the GPU list,
  the driver): GPUs listed with no health field are not assessed, never healthy; a CPU build of torch is no GPU
  missing; a CUDA error beside the report still decides.
The dead fabric manager of `h100-nvswitch-node-nvidia-fabricmanager-service-failed-killed-two-weeks-undetected` has
no field of facts schema 3: a strict expected failure on both roads (tests/test_gpu_rules.py, tests/test_explain.py)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.explain import collectenv, gpudfabric

pytestmark = pytest.mark.unit

# ---------------------------------------------------------- GPUd's fabric-state check
# the corpus's h100-pcie-pair-gpud-nvml-fabric-state-not-supported-flagged-unhealthy-no-nvswitch
PCIE = ("NVIDIA-H100-PCIe with unhealthy fabric state: GPU GPU-8ca5630b-8911-2e29-513a-869117d22eaa: state=Not Supported; "
        "GPU GPU-b52a020b-b703-61ba-e7c7-8b25ab6de799: state=Not Supported\n")
# the corpus's gb200-four-gpus-gpud-nvml-fabric-state-not-supported-status-success-clique-0 (its first table)
TABLE = """\
✔ NVIDIA-GB200 checked fabric state
+-------------------------+------------------------------------------+
| GPU UUID                | GPU-1182579c-5a69-8e8e-cb7a-e6e0b65d47c7 |
| Clique ID               | {clique:<40} |
| State                   | {state:<40} |
| Status                  | Success                                  |
| Health Summary          | Not Supported                            |
| Bandwidth               | Not Supported                            |
| Route Recovery          | Not Supported                            |
| Route Unhealthy         | Not Supported                            |
| Access Timeout Recovery | Not Supported                            |
+-------------------------+------------------------------------------+
"""


def test_gpud_s_reason_is_read_as_nvml_s_fabric_state_per_gpu():
    facts = gpudfabric.parse(PCIE)
    assert [(d["uuid"], d["name"], d["fabric"]["state"]) for d in facts["devices"]] == [
        ("GPU-8ca5630b-8911-2e29-513a-869117d22eaa", "NVIDIA H100 PCIe", "not_supported"),
        ("GPU-b52a020b-b703-61ba-e7c7-8b25ab6de799", "NVIDIA H100 PCIe", "not_supported")]
    # GPUd lists the status only when it is not Success
    assert {d["fabric"]["status"] for d in facts["devices"]} == {"success"}


def test_gpud_s_table_gives_status_clique_and_a_health_nvml_does_not_support():
    (dev,) = gpudfabric.parse(TABLE.format(clique=0, state="Not Supported"))["devices"]
    assert dev["fabric"]["state"] == "not_supported" and dev["fabric"]["status"] == "success"
    assert dev["fabric"]["clique_id"] == 0
    assert set(dev["fabric"]["health"].values()) == {None}      # 'Not Supported' is no reading


@pytest.mark.parametrize("text", [PCIE, TABLE.format(clique=0, state="Not Supported"),
                                  TABLE.format(clique=4026, state="Completed")])
def test_gpud_calling_a_not_supported_or_completed_fabric_unhealthy_is_no_drain(text):
    r = explained(text)
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host"), r.summary


def test_a_gpu_gpud_shows_still_registering_is_not_on_the_fabric():
    r = explained(PCIE.replace("NVIDIA-H100-PCIe", "NVIDIA-H100-80GB-HBM3").replace("Not Supported", "In Progress"))
    assert verdict(r) == ("fail", "NVLINK_DOWN", "host"), r.summary


# GPUd's other issues (its FabricState.GetIssues): a GPU that names no `state=` is Completed
SICK = ("NVIDIA-GB200 with unhealthy fabric state: GPU GPU-1182579c-5a69-8e8e-cb7a-e6e0b65d47c7: {issues}; "
        "NVIDIA-GB200 does not support fabric manager\n")


@pytest.mark.parametrize("issues, expected", [
    ("route unhealthy", ("fail", "NVLINK_DOWN", "host")),
    ("summary=Unhealthy", ("fail", "NVLINK_DOWN", "host")),
    ("bandwidth degraded", ("warn", "NVLINK_DOWN", "host")),
    ("state=In Progress, status=Insufficient Resources", ("fail", "NVLINK_DOWN", "host")),
])
def test_gpud_s_health_issues_are_read_into_the_fabric_health(issues, expected):
    r = explained(SICK.format(issues=issues))
    assert verdict(r) == expected, r.summary


def test_an_entry_gpud_did_not_write_is_not_read():
    assert not gpudfabric.detect("GPU GPU-1182579c-5a69-8e8e-cb7a-e6e0b65d47c7: fell off the bus")


def test_gpud_s_other_reports_are_not_this_kind():
    # its JSON state export (the corpus's gb200-fabric-completed-success-no-local-fabric-manager) holds no such line
    assert not gpudfabric.detect('"reason": "NVIDIA-GB200 checked fabric state",')


# ---------------------------------------------------------- torch's collect_env report
# the corpus's h200-node-vllm-v1-engine-hang-no-shared-memory-broadcast-block-rpc-sample-tokens-timeout-burst-load-...
H200 = """\
PyTorch version              : 2.10.0+cu128
Is debug build               : False
CUDA used to build PyTorch   : 12.8
ROCM used to build PyTorch   : N/A
Is CUDA available            : True
CUDA runtime version         : Could not collect
GPU models and configuration :\x20
GPU 0: NVIDIA H200
GPU 1: NVIDIA H200
GPU 2: NVIDIA H200
GPU 5:
"""


def test_collect_env_gives_torch_its_cuda_build_and_the_listed_gpus():
    facts = collectenv.parse(H200)
    assert (facts["torch"], facts["torch_cuda"], facts["cuda_available"], facts["driver"]) == (
        "2.10.0+cu128", "12.8", True, None)
    # the cut line `GPU 5:` names no GPU
    assert facts["devices"] == [{"index": n, "name": "NVIDIA H200"} for n in range(3)]


def test_gpus_collect_env_lists_are_not_assessed_never_healthy():
    assert verdict(explained(H200)) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_collect_env_s_one_line_gpu_list_and_driver_are_read():
    facts = collectenv.parse("PyTorch version: 2.3.0+cu121\nCUDA used to build PyTorch: 12.1\nIs CUDA available: True\n"
                             "GPU models and configuration: GPU 0: NVIDIA A100-SXM4-40GB\n"
                             "Nvidia driver version: 550.54.14\n")
    assert facts["devices"] == [{"index": 0, "name": "NVIDIA A100-SXM4-40GB"}] and facts["driver"] == "550.54.14"


def test_a_cpu_build_s_collect_env_is_no_gpu_missing_on_the_host():
    r = explained("PyTorch version: 2.1.0+cpu\nCUDA used to build PyTorch: None\nIs CUDA available: False\n"
                  "GPU models and configuration: No CUDA\nNvidia driver version: No CUDA\n")
    assert r.status == "skip" and r.owner != "host", r.summary


def test_a_cuda_error_beside_collect_env_still_decides():
    # the corpus's rtx-a2000-12gb-vllm-torch-outofmemoryerror-224-mib-with-187.75-mib-free-of-11.53-gib
    r = explained("PyTorch version: 2.5.1+cu124\nCUDA used to build PyTorch: 12.4\nIs CUDA available: True\n"
                  "GPU models and configuration: GPU 0: NVIDIA RTX A2000 12GB\nNvidia driver version: 550.120\n\n"
                  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a total "
                  "capacity of 11.53 GiB of which 187.75 MiB is free.\n")
    assert verdict(r) == ("warn", "GPU_OUT_OF_MEMORY", "job"), r.summary
