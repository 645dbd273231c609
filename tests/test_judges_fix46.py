# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's forty-sixth corpus batch (the image's faults), fixed by class:
- a running program's CUDA error that says the build has no code for this GPU (`no kernel image is available`,
  `invalid device function`) fails the image, as the same build's arch list does: no run of that build works on
  this GPU. Drains nothing; the job's own errors (out of memory, a kernel's fault) still warn, and 804, whose owner
  turns on the driver's facts, is judged as before;
- torch's start-up warning that a GPU's capability is not in its build (`... with CUDA capability sm_120 is not
  compatible with the current PyTorch installation.` / `The current PyTorch install supports CUDA capabilities ...`)
  is read by `verify explain` into the devices, capabilities and arch list, and judged by CUDA's rules (a PTX entry
  that JITs is no failure); a warning quoted in prose, or without its list, is not read;
- on an EFA node, a net plugin NCCL could not load and no network chosen is sockets between nodes (NCCL's own IB
  transport opens no EFA device): NCCL_NET_FALLBACK, owned by the image (no aws-ofi-nccl it can load), with or
  without a `Using network Socket` line. A plugin that loaded, a network named, or a node not shown to be EFA
  decide otherwise."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify import explain as ex
from verify.checks import gpu, nccl
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ a program's CUDA error: no code for this GPU
@pytest.mark.parametrize("text", [
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "RuntimeError: Failed to load model: CUDA error: no kernel image is available for execution on the device",
    "RuntimeError: CUDA error: invalid device function",
])
def test_a_running_program_s_error_that_the_build_has_no_code_for_its_gpu_fails_the_image(text):
    r = gpu.judge({"cuda_errors": [{"index": None, "text": text}]}, Options())
    assert verdict(r) == ("fail", "ARCH_NOT_IN_BUILD", "image"), r.summary


@pytest.mark.parametrize("text, code", [
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "GPU_OUT_OF_MEMORY"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "CUDA_KERNEL_FAULT"),
])
def test_the_job_s_own_cuda_errors_still_only_warn(text, code):
    r = gpu.judge({"cuda_errors": [{"index": None, "text": text}]}, Options())
    assert r.status == "warn" and r.owner == "job", r.summary


def test_804_met_by_a_program_without_the_driver_s_facts_is_not_made_a_failure():
    text = "RuntimeError: CUDA error: forward compatibility was attempted on non supported HW"
    r = gpu.judge({"cuda_errors": [{"index": None, "text": text}]}, Options())
    assert r.status == "warn", r.summary


# ------------------------------------------------------------------ torch's warning: a GPU not in its build
WARNED = """\
/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:287: UserWarning:
NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.
The current PyTorch install supports CUDA capabilities {archs}.
If you want to use the NVIDIA GeForce RTX 5070 Ti GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/

  warnings.warn(
"""


def test_torch_s_warning_with_its_arch_list_is_read_and_a_build_without_the_gpu_fails_the_image():
    r = explained(WARNED.format(archs="sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"))
    assert verdict(r) == ("fail", "ARCH_NOT_IN_BUILD", "image"), r.summary
    assert "sm_120" in r.summary


def test_the_warning_on_one_line_after_userwarning_is_read_too():
    text = ("x/torch/cuda/__init__.py:104: UserWarning: GeForce RTX 3080 with CUDA capability sm_86 is not compatible "
            "with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_37 "
            "sm_50 sm_60 sm_70 sm_75.\n")
    facts = ex.torcharch.parse(ex.views(text)[False])
    assert facts["devices"] == [{"index": None, "name": "GeForce RTX 3080", "cc": "8.6"}]
    assert facts["arch_list"] == ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75"] and facts["capabilities"] == ["8.6"]


def test_a_list_whose_ptx_the_driver_can_jit_is_no_failure():
    r = explained(WARNED.format(archs="sm_80 sm_90 compute_90"))
    assert r.code != "ARCH_NOT_IN_BUILD" and r.status != "fail", r.summary


@pytest.mark.parametrize("text", [
    # quoted in prose
    "If you see `NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
    "installation.` then\nThe current PyTorch install supports CUDA capabilities sm_50 sm_90.\n",
    # the warning without its list: nothing says what the build holds
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n",
])
def test_a_warning_in_prose_or_without_its_list_is_not_read(text):
    assert not ex.torcharch.detect(ex.views(text)[False])


# ------------------------------------------------------------------ EFA: no net plugin NCCL can load
PLUGIN_LINES = ["NET/Plugin: libnccl-net-ofi.so: libfabric.so.1: cannot open shared object file: No such file or "
                "directory", "NET/Plugin: Could not find: ofi"]


def efa_log(**log):
    return {"backend": "nccl", "efa": True, "nccl_log": {"plugin_missing": PLUGIN_LINES[1], "proof": PLUGIN_LINES,
                                                        **log}}


def test_an_efa_node_whose_net_plugin_does_not_load_falls_back_to_sockets_on_the_image_s_account():
    r = nccl.judge(efa_log(), Options())
    assert verdict(r) == ("fail", "NCCL_NET_FALLBACK", "image"), r.summary
    assert "EFA" in r.summary and "Could not find" in r.summary


def test_on_one_node_it_only_warns():
    r = nccl.judge({**efa_log(), "nodes": 1}, Options())
    assert verdict(r) == ("warn", "NCCL_NET_FALLBACK", "image"), r.summary


@pytest.mark.parametrize("facts", [
    efa_log(plugin_loaded="NET/Plugin: Loaded net plugin Libfabric (v8)"),          # a plugin did load
    {**efa_log(), "efa": None},                                                     # EFA not shown
    {**efa_log(), "efa": False},
], ids=["plugin-loaded", "efa-unknown", "no-efa"])
def test_no_fallback_without_an_efa_node_or_with_a_plugin_loaded(facts):
    r = nccl.judge(facts, Options())
    assert r.code != "NCCL_NET_FALLBACK" and r.owner != "host", r.summary


def test_the_job_s_own_socket_choice_on_efa_stays_the_job_s():
    facts = efa_log(env={"NCCL_NET": "Socket"})
    r = nccl.judge(facts, Options())
    assert r.owner == "job" and r.code == "FABRIC_NCCL_FORCED_SOCKET", r.summary


def test_803_the_image_s_cuda_compat_met_by_a_program_fails_the_image_too():
    text = "RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination"
    r = gpu.judge({"cuda_errors": [{"index": None, "text": text}]}, Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "image"), r.summary
