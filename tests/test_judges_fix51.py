# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's fifty-first corpus batch (GPUs and RDMA on Kubernetes, as printed), fixed by class:
- the k8s device plugin's go-nvml binding naming a lost GPU by its NVML index (`error creating nvml.Device 5: nvml: GPU
  is lost`, newer `error getting device handle for index '5': GPU is lost`), as kubelet's admission error quotes it:
  `verify explain` records that GPU lost: GPU_LOST (host), as the facts' `lost` is judged;
- a pod's own `ls -l /dev/infiniband` (the RDMA device plugins' test pods): the container was given its verbs devices,
  a pass on what it shows (the ports, the image's libraries and memlock not assessed), through the facts and `verify
  explain` alike; a listing without a verbs device is no pass, and a fault recorded beside it still fails;
- a pod's `nvidia-smi -L` loop that then prints NVML's refusal: the refusal is the state now, judged alone (no GPU
  visible), never the earlier listing's "not assessed" (host)."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import fabric
from verify.options import Options

pytestmark = pytest.mark.unit


def explained(text: str, name: str = "pod.log"):
    return ex.explain_text(text, name, Options())


# ------------------------------------------------------------------ the device plugin's lost GPU, by NVML index
@pytest.mark.parametrize("line", [
    "Warning  UnexpectedAdmissionError  pod/train-0  Allocate failed due to device plugin GetPreferredAllocation rpc "
    "failed with err: rpc error: code = Unknown desc = Unable to retrieve list of available devices: error creating "
    "nvml.Device 3: nvml: GPU is lost, which is unexpected",
    "E0412 10:01:02.123456       1 main.go:123] error getting device handle for index '3': GPU is lost",
])
def test_the_device_plugin_s_lost_gpu_by_index_is_the_host_s(line):
    r = explained(line + "\n")
    assert verdict(r) == ("fail", "GPU_LOST", "host")
    assert "device 3" in r.summary


@pytest.mark.parametrize("text", [
    # a healthy node's device plugin: NVML loaded, devices registered
    "I0412 10:00:00.000000       1 main.go:199] Starting FS watcher.\nI0412 10:00:00.000001       1 main.go:206] "
    "Starting OS watcher.\nI0412 10:00:00.000002       1 main.go:221] Starting Plugins.\nI0412 10:00:00.000003       1 "
    "main.go:278] Loading configuration.\nI0412 10:00:00.000004       1 server.go:176] Registered device plugin for "
    "'nvidia.com/gpu' with Kubelet\n",
    # another NVML error of a device handle names no lost GPU
    "error creating nvml.Device 0: nvml: Not Supported\n",
])
def test_a_device_plugin_log_without_a_lost_gpu_drains_nothing(text):
    assert explained(text).code != "GPU_LOST"


# ------------------------------------------------------------------ a pod's /dev/infiniband
POD_DEV_IB = """/dev/infiniband:
total 0
crw-------. 1 root root 231,  64 Mar  3 09:12 issm0
crw-rw-rw-. 1 root root  10,  58 Mar  3 09:12 rdma_cm
crw-------. 1 root root 231,   0 Mar  3 09:12 umad0
crw-rw-rw-. 1 root root 231, 192 Mar  3 09:12 uverbs0
crw-rw-rw-. 1 root root 231, 193 Mar  3 09:12 uverbs1
"""


def test_a_pod_given_its_verbs_devices_passes_on_what_it_shows():
    r = fabric.judge({"uverbs": ["uverbs0", "uverbs1"], "rdma_cm": True}, Options())
    assert verdict(r) == ("pass", None, None)
    assert "not assessed" in r.summary


def test_a_pod_s_dev_infiniband_listing_explained_passes():
    r = explained(POD_DEV_IB)
    assert verdict(r) == ("pass", None, None)
    assert "uverbs0, uverbs1" in r.summary


def test_a_pod_s_find_listing_is_read_too():
    assert verdict(explained("/dev/infiniband/rdma_cm\n/dev/infiniband/uverbs0\n")) == ("pass", None, None)


def test_a_listing_without_a_verbs_device_is_no_pass():
    text = "/dev/infiniband:\ntotal 0\ncrw-rw-rw- 1 root root 10, 58 Mar  3 09:12 rdma_cm\n"
    assert verdict(explained(text))[:2] == ("skip", "FABRIC_NONE")


def test_a_verbs_device_named_in_an_error_is_no_listing():
    text = "libibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.\n" \
           "Failed to open /dev/infiniband/uverbs0: Permission denied\n"
    assert not ex.devib.detect(text)


def test_a_fault_beside_the_pod_s_devices_still_fails():
    r = fabric.judge({"uverbs": ["uverbs0"], "rdma_cm": True, "memlock": 65536}, Options())
    assert verdict(r)[:2] == ("fail", "FABRIC_MEMLOCK_LOW")


# ------------------------------------------------------------------ nvidia-smi -L, then NVML's refusal
LISTED = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0d9b1f5e-3c1a-4f6e-9a8b-2c4d6e8f0a1b)\n"
REFUSED = "Failed to initialize NVML: Unknown Error\n"


def test_nvml_refusing_after_the_listing_is_judged_alone():
    r = explained(LISTED * 2 + REFUSED * 2)
    assert verdict(r)[:2] == ("skip", "GPU_NOT_VISIBLE")        # as the translated record of NVML's refusal is
    assert "Unknown Error" in r.summary


def test_a_listing_after_the_refusal_is_the_state_now():
    r = explained(REFUSED + LISTED)
    assert r.code == "HEALTH_NOT_ASSESSED"
