# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's fifty-second corpus batch (GPU partitioning and nvidia-smi's error fields), fixed by class:
- CUDA error 46 (`all CUDA-capable devices are busy or unavailable`) is a compute mode's or a sharing configuration's
  answer (an exclusive mode another process holds, MPS with no room for another client), never the GPU's health:
  GPU_NOT_VISIBLE, owner job, whether CUDA's first call or a program's first allocation met it and whether or not
  NVML's devices were recorded; a Prohibited mode stays the host's, and a fault shown beside it (an Xid, the driver
  asking for a reset, NVML refusing too) outranks it;
- nvidia-smi's table as drivers 3xx print it for a GeForce (`N/A` in GPU-Util before the compute mode): the compute
  mode is read, so a busy GPU in `E. Thread` is the job's through `verify explain` as through its facts;
- nvidia-smi's `Unable to determine the device handle for GPU <address>: Unknown Error` with an address a poster
  masked or shortened: the GPU is lost all the same, recorded without an address (never a guessed one);
- torch counting no GPU (`torch.cuda.device_count()` 0) where CUDA initialised (a tensor on `cuda:0`) or torch says
  it is available: torch's own count (its NVML-based reading of a `MIG-<uuid>` CUDA_VISIBLE_DEVICES) misses the GPU:
  GPU_NOT_VISIBLE, owner image, never the node's nor CUDA_VISIBLE_DEVICES' fault; `verify explain` reads torch's
  answers at an IPython or Python prompt."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import gpu
from verify.explain import nvml, smitable, torchrepl
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ CUDA error 46: a compute mode or sharing
TORCH_46 = "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable"
SAMPLE_46 = "Failed to allocate device vector A (error code all CUDA-capable devices are busy or unavailable)!"
GPU = {"index": 0, "name": "NVIDIA A30", "pci_bus_id": "00000000:3B:00.0", "uuid": "GPU-3b", "temperature_c": 41.0,
       "ecc_volatile_uncorrectable": 0}


@pytest.mark.parametrize("facts", [
    {"cuda_errors": [{"index": None, "text": SAMPLE_46}]},                      # a program's first allocation
    {"cuda_errors": [{"index": 0, "text": "cudaErrorDevicesUnavailable"}], "torch": "2.4.0+cu124"},
    {"cuda_init_error": TORCH_46, "cuda_available": False},                    # CUDA's first call, no NVML read
    {"cuda_init_error": TORCH_46, "cuda_available": False, "nvml_error": "none",
     "devices": [{**GPU, "compute_mode": "default"}]},                         # Default: MPS, not an exclusive mode
    {"cuda_errors": [{"index": None, "text": TORCH_46}], "nvml_error": "none",
     "devices": [{**GPU, "compute_mode": "exclusive_process"}]},
], ids=["sample-alone", "the-error-s-name", "first-call-alone", "default-mode", "exclusive-process"])
def test_cuda_error_46_is_the_jobs_placement_or_sharing_never_a_drain(facts):
    r = gpu.judge(facts, Options())
    assert verdict(r) == ("fail", "GPU_NOT_VISIBLE", "job"), r.summary


def test_cuda_error_46_under_a_prohibited_compute_mode_is_the_nodes_setting():
    facts = {"cuda_errors": [{"index": None, "text": TORCH_46}], "nvml_error": "none",
             "devices": [{**GPU, "compute_mode": "prohibited"}]}
    r = gpu.judge(facts, Options())
    assert verdict(r) == ("fail", "GPU_NOT_VISIBLE", "host") and "Prohibited" in r.summary


@pytest.mark.parametrize("beside, code", [
    ({"xid_events": [{"xid": 79, "index": None}]}, "GPU_LOST"),
    ({"driver_errors": [{"status": "NV_ERR_RESET_REQUIRED", "code": 98, "text": "NVRM: nvAssertOkFailedNoLog: "
                         "Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status "
                         "@ kernel_channel.c:2874"}]}, "GPU_RESET_REQUIRED"),
    ({"nvml_error": "Failed to initialize NVML: Unknown Error"}, "DRIVER_ERROR"),
])
def test_a_gpu_fault_shown_beside_error_46_outranks_it(beside, code):
    r = gpu.judge({"cuda_errors": [{"index": None, "text": TORCH_46}], **beside}, Options())
    assert verdict(r) == ("fail", code, "host"), r.summary


def test_an_mps_clients_error_46_explained_is_the_jobs():
    text = f"MPS client: {SAMPLE_46}\nTraceback (most recent call last):\n  File \"train.py\", line 74, in main\n"
    assert verdict(explained(text)) == ("fail", "GPU_NOT_VISIBLE", "job")


# ------------------------------------------------------------------ a 3xx table's compute mode after GPU-Util N/A
TABLE_3XX = """+------------------------------------------------------+
| NVIDIA-SMI 346.46     Driver Version: 346.46         |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GeForce GTX 980     Off  | 0000:02:00.0     N/A |                  N/A |
| 26%   40C    P8    N/A /  N/A |     55MiB /  4095MiB |     N/A    E. Process |
+-------------------------------+----------------------+----------------------+
"""


def test_a_geforce_tables_compute_mode_is_read_after_gpu_util_n_a():
    assert smitable.parse(TABLE_3XX)["devices"][0]["compute_mode"] == "exclusive_process"


def test_a_busy_geforce_in_an_exclusive_mode_explained_is_the_jobs():
    r = explained(TABLE_3XX + "cudaSetDevice failed: all CUDA-capable devices are busy or unavailable\n")
    assert verdict(r) == ("fail", "GPU_NOT_VISIBLE", "job") and "exclusive compute mode" in r.summary


# ------------------------------------------------------------------ a lost GPU's handle error, address masked
@pytest.mark.parametrize("address", ["000:BA:80.0", "******", "0000:xx:00.0"])
def test_a_handle_error_with_a_masked_address_is_a_gpu_lost_without_an_address(address):
    line = f"Unable to determine the device handle for GPU {address}: Unknown Error"
    assert nvml.parse(line)["devices"] == [{"index": None, "pci_bus_id": None, "lost": True,
                                            "nvml_errors": {"handle": "Unknown Error"}}]
    assert verdict(explained(line + "\n", "smi.txt")) == ("fail", "GPU_LOST", "host")


def test_a_handle_errors_real_address_is_still_read():
    line = "Unable to determine the device handle for GPU 0000:C1:00.0: GPU is lost.  Reboot the system to recover"
    assert nvml.parse(line)["devices"][0]["pci_bus_id"] == "00000000:C1:00.0"


# ------------------------------------------------------------------ torch's count misses a GPU CUDA initialised
MIG = "MIG-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
A100 = {"index": 0, "name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-a1", "pci_bus_id": "00000000:07:00.0",
        "mig": [True, True], "ecc_volatile_uncorrectable": 0, "temperature_c": 33.0}


@pytest.mark.parametrize("facts", [
    {"torch_devices": 0, "cuda_init_error": "none", "cuda_visible_devices": MIG},          # a translated session
    {"torch": "2.0.0+cu117", "torch_cuda": "11.7", "cuda_available": True, "cuda_init_error": "none",
     "torch_devices": 0, "cuda_visible_devices": MIG, "nvml_error": "none", "driver": "525.85.12",
     "devices": [A100], "kernels": []},                                                    # a live record's shape
], ids=["session", "live"])
def test_torch_counting_no_gpu_that_cuda_initialised_is_the_images(facts):
    r = gpu.judge(facts, Options())
    assert verdict(r) == ("fail", "GPU_NOT_VISIBLE", "image"), r.summary
    assert "MIG-" in r.summary


@pytest.mark.parametrize("facts, expected", [
    ({"torch_devices": 0}, ("skip", "FACTS_INCOMPLETE", None)),                # CUDA not shown: nothing to judge
    ({"torch_devices": 0, "cuda_visible_devices": "7", "nvml_error": "none", "devices": [A100]},
     ("fail", "DEVICE_COUNT_MISMATCH", "job")),                                # the variable names no device
])
def test_a_count_of_0_without_cuda_initialised_is_not_torchs(facts, expected):
    assert verdict(gpu.judge(facts, Options())) == expected


IPYTHON = f"""CUDA_VISIBLE_DEVICES={MIG} ipython

In [3]: torch.cuda.device_count()
Out[3]: 0

In [4]: torch.ones(2).to("cuda")
Out[4]: tensor([1., 1.], device='cuda:0')
"""
PROMPT = """>>> import torch
>>> torch.cuda.is_available()
True
>>> torch.cuda.device_count()
0
"""


def test_torchs_answers_at_an_ipython_prompt_are_read():
    facts = torchrepl.parse(IPYTHON)
    assert (facts["torch_devices"], facts["cuda_init_error"], facts["cuda_visible_devices"]) == (0, "none", MIG)
    assert verdict(explained(IPYTHON, "session.txt")) == ("fail", "GPU_NOT_VISIBLE", "image")


def test_torchs_answers_at_a_python_prompt_are_read():
    facts = torchrepl.parse(PROMPT)
    assert (facts["torch_devices"], facts["cuda_available"]) == (0, True)
    assert verdict(explained(PROMPT, "session.txt")) == ("fail", "GPU_NOT_VISIBLE", "image")


@pytest.mark.parametrize("text", [
    "If torch.cuda.device_count() returns 0, check CUDA_VISIBLE_DEVICES.\n",     # a sentence names the call
    'python -c "import torch; print(torch.cuda.device_count())"\n',             # a command, no prompt's answer
    "In [3]: torch.cuda.device_count()\n",                                        # asked, never answered
])
def test_a_call_named_without_a_prompts_answer_is_not_read(text):
    assert not torchrepl.detect(text)
