# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's sixty-first (GPUs under Slurm) and sixty-second (the NVIDIA container runtime) corpus batches, fixed by
class:
- the NVIDIA Container Toolkit's hook refusing on the host with `nvidia-container-cli: initialization error: nvml
  error: driver not loaded`: the hook runs only for a container that asked for GPUs, on the host, and found no NVIDIA
  kernel module: DRIVER_ERROR (host), through the facts and `verify explain` alike; a process's own NVML refusal
  (`NVMLError_DriverNotLoaded`, nvidia-smi's `couldn't communicate`) stays "no GPU visible";
- a container engine refusing a GPU request for want of an NVIDIA runtime (docker's `could not select device driver
  "" with capabilities: [[gpu]]`, `unknown or invalid runtime name: nvidia`; containerd's `no runtime for "nvidia" is
  configured`): read by `verify explain` as a process with neither device nodes nor libnvidia-ml; beside the host's
  driver, GPU_NOT_VISIBLE (job) whatever was expected; never a drain (a node without the toolkit has no broken GPU);
- slurmd's list of GPUs its gpu/nvml plugin detected (`GRES[gpu] ... Flags:...ENV_NVML File:/dev/nvidiaN
  UniqueId:GPU-...`): NVML answered for each; no health field, so not assessed (warn), never healthy;
- CUDA's first call answering `initialization error` with no number (a node test's `Failed during cudaGetDeviceCount:
  initialization error`): read by `verify explain` as CUDA's refusal, and, as batch 47 ruled, not decoded (a process
  forked after CUDA started meets the same words): a warning, no drain."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import gpu
from verify.options import Options

pytestmark = pytest.mark.unit


def explained(text: str, name: str = "job.log", expect: int = 0):
    return ex.explain_text(text, name, Options(expect_gpus=expect))


# ------------------------------------------------------------------ the toolkit's hook: no driver loaded on the host
HOOK = ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:349: starting container "
        "process caused \"process_linux.go:449: container init caused \\\"process_linux.go:432: running prestart hook "
        "0 caused \\\\\\\"error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization "
        "error: nvml error: driver not loaded\\\\\\n\\\\\\\"\\\"\": unknown.")


@pytest.mark.parametrize("error", [
    "nvml error: driver not loaded",
    "nvidia-container-cli: initialization error: nvml error: driver not loaded",
    "initialization error: nvml error: driver not loaded: unknown.",
])
def test_the_toolkit_s_hook_finding_no_driver_loaded_is_the_host_s(error):
    r = gpu.judge({"nvml_error": error}, Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host"), r.summary


def test_the_toolkit_s_hook_explained_is_the_host_s():
    r = explained(HOOK)
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host"), r.summary


@pytest.mark.parametrize("error", [
    "NVMLError_DriverNotLoaded: Driver Not Loaded",
    "Failed to initialize NVML: Driver Not Loaded",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
])
def test_a_process_s_own_nvml_refusal_is_no_drain_where_no_gpu_is_expected(error):
    # a container started without its GPU devices prints these too: no GPU visible, a failure only where expected
    r = gpu.judge({"nvml_error": error}, Options())
    assert r.status == "skip" and r.code != "DRIVER_ERROR", r.summary


# ------------------------------------------------------------------ a GPU request the container engine refused
SMI_HEADER = ("==============NVSMI LOG==============\n\nTimestamp                                 : Mon Mar  3 10:01:12 "
              "2025\nDriver Version                            : 535.183.01\nCUDA Version                              "
              ": 12.2\n")


@pytest.mark.parametrize("refusal", [
    "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
    "Error response from daemon: could not select device driver \"nvidia\" with capabilities: [[gpu utility]]",
    "docker: Error response from daemon: unknown or invalid runtime name: nvidia.",
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "
    "\"nvidia\" is configured",
])
def test_a_gpu_request_refused_beside_the_host_s_driver_is_the_job_s(refusal):
    r = explained(f"$ docker run --rm --gpus all ubuntu nvidia-smi\n{refusal}\n\n$ nvidia-smi -q\n{SMI_HEADER}")
    assert verdict(r) == ("fail", "GPU_NOT_VISIBLE", "job"), r.summary
    assert "nvidia-ctk runtime configure" in r.remedy


@pytest.mark.parametrize("expect", [0, 8])
def test_a_gpu_request_refused_alone_never_drains(expect):
    r = explained("Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
                  expect=expect)
    assert r.owner != "host" and r.code == "GPU_NOT_VISIBLE" if expect else r.status == "skip", r.summary


def test_a_refusal_mentioned_in_prose_is_not_read():
    text = "If you see `could not select device driver \"\" with capabilities: [[gpu]]`, install the toolkit."
    assert explained(text).name == "explain"


def test_no_devices_and_no_library_beside_the_driver_fails_the_job_whatever_was_expected():
    facts = {"device_nodes": False, "nvml_library": False, "driver": "550.120"}
    assert verdict(gpu.judge(facts, Options())) == ("fail", "GPU_NOT_VISIBLE", "job")
    # without the driver's answer the node's GPUs are not shown: no GPU visible, a failure only where expected
    assert gpu.judge({"device_nodes": False, "nvml_library": False}, Options()).status == "skip"


# ------------------------------------------------------------------ slurmd's GPUs detected through NVML
GRES = ("[2025-06-02T09:14:07.512] gpu/nvml: _get_system_gpu_list_nvml: 2 GPU system device(s) detected\n"
        "[2025-06-02T09:14:07.513] warning: The following autodetected GPUs are being ignored:\n"
        "[2025-06-02T09:14:07.513]     GRES[gpu] Type:a100-sxm4-80gb Count:1 Cores(64):0-31  Links:(null) "
        "Flags:HAS_FILE,HAS_TYPE,ENV_NVML File:/dev/nvidia0 UniqueId:GPU-0b2c41a7-5d1e-3f70-9a11-2c3d4e5f6a7b\n"
        "[2025-06-02T09:14:07.513]     GRES[gpu] Type:a100-sxm4-80gb Count:1 Cores(64):32-63  Links:(null) "
        "Flags:HAS_FILE,HAS_TYPE,ENV_NVML File:/dev/nvidia1 UniqueId:GPU-7e6d5c4b-3a29-1807-f6e5-d4c3b2a19080\n")


def test_slurmd_s_gpus_detected_through_nvml_are_not_assessed_never_healthy():
    r = explained(GRES + GRES)          # the list logged twice is the same two GPUs
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host"), r.summary
    assert r.summary.startswith("2 devices")


def test_gres_lines_a_gres_conf_configured_were_read_by_no_nvml():
    text = GRES.replace("ENV_NVML", "HAS_FILE").split("\n", 1)[1]
    assert explained(text).name == "explain"


# ------------------------------------------------------------------ CUDA's first call: a bare initialization error
def test_cuda_s_first_call_with_a_bare_initialization_error_is_read_and_never_drains():
    line = "FAILED: node042 Failed during cudaGetDeviceCount: initialization error"
    r = explained(f"# /etc/slurm/epilog.d/gpucheck\n{line}\n")
    assert verdict(r) == ("warn", "GPU_NOT_VISIBLE", "host"), r.summary
    assert verdict(gpu.judge({"cuda_init_error": "initialization error"}, Options())) == verdict(r)
