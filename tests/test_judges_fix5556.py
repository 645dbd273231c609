# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's fifty-fifth and fifty-sixth corpus batches (GPU peer-to-peer and NVLink topology; training runs' own
failures), fixed by class:
- torch's THC forms of a running program's CUDA error (torch before 1.0: `THCudaCheck FAIL file=... error=59 :
  device-side assert triggered`, `RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at
  ...`) are read by `verify explain` as the newer `CUDA error: ...` lines are, decoded by the error's words (CUDA
  renumbered its errors in 10.1): a device-side assert warns the job, an uncorrectable ECC error fails the host;
- NCCL's `unhandled cuda error` beside the CUDA error that caused it (a program's `CUDA error: uncorrectable NVLink
  error ...`): `verify explain` gives the file the CUDA error's verdict, the cause NCCL reports, not NCCL_FAILED;
- a one-node NCCL group whose log shows sockets chosen for want of libibverbs (or a plugin), no adapter recorded and
  no connection over sockets: its ranks meet over P2P or SHM, so the network carries nothing of it and the image is
  not warned for it; across nodes, or with a socket connection logged, the fall-back is judged as before;
- a DataLoader out of /dev/shm as torch prints it in a job's log (`DataLoader worker (pid N) is killed by signal:
  Bus error`, the worker's `Unexpected bus error ... insufficient shared memory (shm)`): `verify explain` reads it
  into the train facts' data-phase failure, SHM_TOO_SMALL, owner job (never the host)."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import nccl
from verify.explain import cuda, loaderbus
from verify.options import Options

pytestmark = pytest.mark.unit


def explained(text: str, name: str = "train.log"):
    return ex.explain_text(text, name, Options())


# ------------------------------------------------------------------ THC's forms of a running program's CUDA error
THC_ASSERT = ("THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCTensorCopy.c line=20 error=59 : device-side "
              "assert triggered")
THC_ECC = ("RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at "
           "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265")


def test_thc_device_side_assert_is_the_programs_kernel_warn_job():
    text = ("/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:105: block: [0,0,0], thread: [3,0,0] Assertion "
            "`t >= 0 && t < n_classes` failed.\n" + THC_ASSERT + "\nTraceback (most recent call last):\n")
    assert cuda.runtime_errors(text) == [{"index": None, "text": THC_ASSERT}]
    assert verdict(explained(text)) == ("warn", "CUDA_KERNEL_FAULT", "job")


def test_thc_cuda_runtime_error_of_uncorrectable_ecc_fails_the_host():
    text = "Epoch 18 [120/500]\n" + THC_ECC + "\nterminate called without an active exception\n"
    r = explained(text)
    assert verdict(r) == ("fail", "ECC_UNCORRECTABLE", "host"), r.summary


def test_a_thc_error_quoted_in_prose_is_no_programs_error():
    text = f"If you see `{THC_ECC}` the GPU memory is bad, see the FAQ.\n"
    assert cuda.runtime_errors(text) == []


# ------------------------------------------------------------------ NCCL's unhandled cuda error and its cause
def test_the_cuda_error_under_ncclunhandledcudaerror_names_the_cause():
    text = ("terminate called after throwing an instance of 'c10::Error'\n"
            "  what():  CUDA error: uncorrectable NVLink error detected during the execution\n\n"
            "RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled cuda error, NCCL "
            "version 2.10.3\nncclUnhandledCudaError: Call to CUDA function failed.\n")
    r = explained(text)
    assert (r.name, *verdict(r)) == ("gpu", "fail", "NVLINK_ERRORS", "host"), r.details


def test_an_nccl_failure_beside_a_jobs_cuda_error_keeps_the_worse_verdict():
    """The CUDA error wins only on a tie: a job's out-of-memory warning never hides NCCL's failure."""
    text = ("RuntimeError: CUDA error: out of memory\n"
            "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.10.3\n")
    r = explained(text)
    assert r.name == "nccl" and r.status == "fail", (r.name, verdict(r))


# ------------------------------------------------------------------ sockets for want of verbs, on one node
LOG = {"network": "Socket", "networks": ["Socket"], "interface": "eth0:10.0.0.3<0>", "net_channels": {},
       "verbs_missing": "Failed to open libibverbs.so[.1]", "ib_no_device": False,
       "plugin_missing": "NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
       "hca_gdr": {}, "env": {}, "rank_networks": {},
       "proof": ["host:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.3<0>"]}
GROUP = {"backend": "nccl", "nccl_version": "2.18.3", "device_name": "Tesla T4", "gpus": 2, "world_size": 2}


def test_one_nodes_socket_setup_for_want_of_verbs_does_not_warn_the_image():
    r = nccl.judge({**GROUP, "nodes": 1, "nccl_log": LOG}, Options())
    assert r.code != "NCCL_NET_FALLBACK" and r.owner != "image", (verdict(r), r.summary)
    assert r.status in ("pass", "skip") and "one node" in r.summary, r.summary


@pytest.mark.parametrize("change", [
    {"nodes": 2, "world_size": 4},                                                      # the network is used
    {"nodes": 1, "nccl_log": {**LOG, "net_channels": {"Socket": {"connections": 2, "gdr": 0}}}},   # and said so
    {"nodes": None},                                                                    # nodes unknown
], ids=["two-nodes", "socket-connections-logged", "nodes-unknown"])
def test_sockets_for_want_of_verbs_where_the_network_carries_traffic_still_warn_the_image(change):
    # an InfiniBand node (batch 277's review: with no fabric shown, sockets are no fall-back at all)
    r = nccl.judge({**GROUP, "infiniband": True, "nccl_log": LOG, **change}, Options())
    assert (r.code, r.owner) == ("NCCL_NET_FALLBACK", "image"), (verdict(r), r.summary)


@pytest.mark.parametrize("change", [{"nodes": 2, "world_size": 4}, {"nodes": None}], ids=["two-nodes", "nodes-unknown"])
def test_sockets_for_want_of_verbs_with_no_fabric_shown_are_no_fall_back(change):
    # batch 277's review (tests/test_judges_batch277.py): nothing shows an adapter, so nothing fell back
    r = nccl.judge({**GROUP, "nccl_log": LOG, **change}, Options())
    assert r.code != "NCCL_NET_FALLBACK", (verdict(r), r.summary)


# ------------------------------------------------------------------ a DataLoader out of /dev/shm, as a job prints it
BUS = ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
       "Traceback (most recent call last):\n"
       '  File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 990, in _try_get_data\n'
       "    data = self._data_queue.get(timeout=timeout)\n"
       "RuntimeError: DataLoader worker (pid 4711) is killed by signal: Bus error.\n")


def test_a_dataloader_worker_killed_by_sigbus_is_the_jobs_shm_size():
    r = explained(BUS)
    assert (r.name, *verdict(r)) == ("train", "fail", "SHM_TOO_SMALL", "job"), r.summary
    failure = loaderbus.parse(BUS)["failures"][0]
    assert failure["type"] == "RuntimeError" and failure["phase"] == "data"
    assert failure["message"].startswith("DataLoader worker (pid 4711)")


def test_the_shm_managers_refusal_is_read_as_well():
    text = ("RuntimeError: unable to allocate shared memory(shm) for file </torch_1_2_3>: No space left on "
            "device (28)\n")
    assert verdict(explained(text)) == ("fail", "SHM_TOO_SMALL", "job")


def test_a_bus_error_quoted_in_prose_or_without_a_dataloader_is_not_read():
    assert not loaderbus.detect("If you see `DataLoader worker (pid 1) is killed by signal: Bus error`, raise "
                                "--shm-size.\n")
    assert not loaderbus.detect("Segmentation fault\nBus error (core dumped)\n")
