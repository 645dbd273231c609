# mypy: disable-error-code="arg-type, typeddict-item, index"
"""Issue 35, items 1 and 2: a fault the evidence shows is judged whatever else is missing, a skip for missing
evidence names no owner, and NCCL's INFO log is evidence on its own, read as launchers print it.

Every excerpt quoted here is real public output; each names its URL."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify.checks import gpu, nccl
from verify.checks.nccl import ncclog
from verify.options import Options
from verify.result import CheckResult

pytestmark = pytest.mark.unit


# https://github.com/microsoft/lisa/issues/2823 (Standard_ND96asr_v4: 8 A100 behind NVSwitches)
CUDA_802 = ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
            "functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet "
            "initialized (Triggered internally at  ../c10/cuda/CUDAFunctions.cpp:112.)")
# https://github.com/gpustack/gpustack/issues/1254 (a vLLM image on driver 535.129.03: the thread's fix is a 550+ driver)
CUDA_804 = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
            "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on "
            "non supported HW")


def test_cuda_802_alone_is_the_host_s_fabric_manager_whatever_else_is_missing():
    r = gpu.judge({"devices": None, "torch": None, "cuda_init_error": CUDA_802}, Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host") and "fabricmanager" in (r.remedy or "")
    assert any("not assessed" in d for d in r.details)


def test_cuda_802_beside_nvswitch_devices_without_health_fields_is_judged_not_skipped():
    # https://github.com/huggingface/huggingface_hub/issues/4134: `nvidia-smi -L` lists GPU 0: NVIDIA H200, CUDA 802
    facts = {"devices": [{"index": 0, "name": "NVIDIA H200", "nvswitch": True}], "torch": None,
             "cuda_init_error": "RuntimeError: Unexpected error from cudaGetDeviceCount() ... Error 802: system not yet "
                                "initialized"}
    r = gpu.judge(facts, Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host") and "NVSwitch" in r.summary


def test_a_forward_compatibility_refusal_is_the_driver_s_unless_the_driver_supports_the_build():
    """Error 804: the process loaded a libcuda newer than the kernel driver (the image's cuda-compat) on a GPU that
    cannot use it: the image's CUDA is newer than the driver, which is too old for it (the thread's fix), whatever
    else is missing. No false drain (hand-made twin): where the facts show the driver supports the build's CUDA, the
    cuda-compat libraries were loaded for nothing and the image is at fault, the host healthy."""
    r = gpu.judge({"devices": None, "torch": None, "cuda_init_error": CUDA_804}, Options())
    assert verdict(r) == ("fail", "DRIVER_TOO_OLD", "host") and "804" in r.summary
    older = gpu.judge({"devices": None, "torch": None, "cuda_init_error": CUDA_804, "driver": "535.129.03",
                       "cuda_driver": "12.2", "torch_cuda": "12.4"}, Options())
    assert verdict(older) == ("fail", "DRIVER_TOO_OLD", "host") and "535.129.03" in older.summary
    supported = gpu.judge({"devices": None, "torch": None, "cuda_init_error": CUDA_804, "driver": "550.54.15",
                           "cuda_driver": "12.4", "torch_cuda": "12.4"}, Options())
    assert verdict(supported) == ("fail", "DRIVER_ERROR", "image") and "cuda-compat" in supported.summary


def test_a_refusal_not_decoded_warns_and_never_fails_the_node():
    r = gpu.judge({"devices": None, "torch": None, "cuda_init_error": "RuntimeError: something else"}, Options())
    assert r.status == "warn" and r.code == "GPU_NOT_VISIBLE"


def test_torch_seeing_gpus_with_nvml_unrecorded_is_nothing_to_judge_never_gpu_not_visible():
    # a program's run (torch's count) is no device read and no health read: as CUDA initialising alone
    # (tests/test_judges_gaps65.py); beside a read of the node (its kernel log), the unread health warns
    facts = {"devices": None, "torch": "2.9.0+cu128", "torch_cuda": "12.8", "cuda_available": True, "torch_devices": 2}
    assert verdict(gpu.judge(facts, Options())) == ("skip", "FACTS_INCOMPLETE", None)
    assert verdict(gpu.judge({**facts, "xid_events": []}, Options())) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_nothing_bearing_on_a_fault_is_skipped_with_no_owner():
    r = gpu.judge({"devices": None, "torch": None, "driver": None}, Options())
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None)
    assert CheckResult.from_dict(r.to_dict()).owner is None        # stays unowned through JSON


# ------------------------------------------------------------------------------------------- NCCL's log
# https://github.com/NVIDIA/nccl/issues/1162 (quoted in tests/data/real-world/ib-node-socket-after-libibverbs-missing)
IB_AND_SOCKET = """x1:870114:870114 [1] NCCL INFO Using network IB
x0:26431:26431 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]
x0:26431:26431 [0] NCCL INFO Using network Socket"""
# https://github.com/NVIDIA/nccl/issues/959 (tests/data/real-world/efa-without-ofi-plugin-socket)
EFA_NO_PLUGIN = """[1] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).
[0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]"""


def _wrapped(text: str, style: str) -> str:
    """The same lines as launchers print them."""
    out = []
    for n, line in enumerate(text.splitlines()):
        if style == "ray":
            out.append(f"(RayWorkerWrapper pid=4711, ip=10.0.0.{n}) {line} [repeated 7x across cluster]")
        elif style == "timestamp":
            out.append(f"2024-05-02T10:11:12.345Z {line}\r")
        elif style == "mpirun":
            out.append(f"[1,{n}]<stdout>:{line}")
        else:            # quoted without the tag (an issue's excerpt)
            out.append(line.split(" NCCL INFO ", 1)[-1].split(" NCCL WARN ", 1)[-1])
    return "\n".join(out)


@pytest.mark.parametrize("style", ["ray", "timestamp", "mpirun", "untagged"])
def test_launchers_lines_read_as_nccl_prints_them(style):
    for text in (IB_AND_SOCKET, EFA_NO_PLUGIN):
        plain, wrapped = ncclog.parse(text), ncclog.parse(_wrapped(text, style))
        keys = ("networks", "verbs_missing", "plugin_missing", "hcas", "ib_no_device")
        assert {k: wrapped[k] for k in keys} == {k: plain[k] for k in keys}, style


def test_the_network_each_rank_chose_is_read_from_nccl_s_prefix():
    assert ncclog.parse(IB_AND_SOCKET)["rank_networks"] == {"x1:870114": "IB", "x0:26431": "Socket"}


def test_a_log_alone_with_one_rank_on_sockets_after_libibverbs_failed_is_the_image_s():
    r = nccl.judge({"backend": "nccl", "sizes": None, "nccl_log": ncclog.parse(IB_AND_SOCKET)}, Options())
    assert verdict(r) == ("fail", "NCCL_NET_FALLBACK", "image")


def test_sockets_after_libibverbs_failed_with_adapters_unknown_are_no_fall_back():
    # batch 277's review (tests/test_judges_batch277.py): with no fabric shown, an image without libibverbs loses
    # nothing (7 of 8 translators); an InfiniBand node keeps the image's fall-back
    log = ncclog.parse("x0:26431:26431 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
                       "x0:26431:26431 [0] NCCL INFO Using network Socket")
    r = nccl.judge({"backend": "nccl", "sizes": None, "nccl_log": log}, Options())
    assert r.code != "NCCL_NET_FALLBACK"
    ib = nccl.judge({"backend": "nccl", "sizes": None, "nccl_log": log, "infiniband": True}, Options())
    assert (ib.code, ib.owner) == ("NCCL_NET_FALLBACK", "image")
    no_rdma = nccl.judge({"backend": "nccl", "sizes": None, "nccl_log": log, "infiniband": False, "efa": False},
                         Options())
    assert no_rdma.status == "skip" and no_rdma.owner is None       # sockets on a node without adapters: nothing


def test_a_transport_the_job_disabled_is_the_job_s():
    log = ncclog.parse("n1:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n"
                       "n1:1:1 [0] NCCL INFO Using network Socket")
    assert log["env"] == {"NCCL_IB_DISABLE": "1"}
    r = nccl.judge({"backend": "nccl", "sizes": None, "nccl_log": log, "infiniband": True}, Options())
    assert verdict(r) == ("fail", "FABRIC_NCCL_FORCED_SOCKET", "job")


def test_a_timeout_on_efa_whose_log_shows_no_plugin_is_the_image_s_never_the_host_s():
    """No false drain: the node's EFA is fine; the image's NCCL found no aws-ofi-nccl plugin."""
    facts = {"backend": "nccl", "sizes": None, "efa": True, "nccl_log": {**ncclog.parse(EFA_NO_PLUGIN),
             "network": "Socket", "networks": ["Socket"]},
             "error": "all_reduce: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1) ran for 600000 ms"}
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_TIMEOUT", "image") and "plugin" in r.summary
    bare = nccl.judge({**facts, "nccl_log": None}, Options())
    # no cause shown in a job's log: the job's (a node is drained only on evidence; tests/test_judges_batch14.py)
    assert verdict(bare) == ("fail", "NCCL_TIMEOUT", "job")


def test_a_log_proving_gpudirect_rdma_on_every_connection_passes_and_says_bandwidth_not_assessed():
    # the per-connection form of src/transport/net.cc (2.18 to 2.30), as nccl-tests prints it under NCCL_DEBUG=INFO
    lines = "\n".join(f"gpu-a:100:200 [{c % 8}] NCCL INFO Channel {c:02d}/0 : {c % 8}[{c % 8}] -> {8 + c % 8}[{c % 8}] "
                      f"[send] via NET/IB/{c % 4}/GDRDMA" for c in range(8))
    log = ncclog.parse("gpu-a:100:100 [0] NCCL INFO Using network IB\n" + lines)
    r = nccl.judge({"backend": "nccl", "sizes": None, "nccl_log": log}, Options())
    assert r.status == "pass" and "8 IB/RoCE connection(s), 8 with GPUDirect RDMA" in r.summary
    assert "not assessed" in r.summary
