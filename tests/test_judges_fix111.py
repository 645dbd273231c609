# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's hundred-and-eleventh corpus batch (RDMA fabrics inside pods), fixed by class:
- a device plugin's AllocateResponse names the device nodes the kubelet creates in the container
  (`ContainerPath:/dev/infiniband/uverbs11`): `verify explain` reads it as it reads `ls -l /dev/infiniband`, into
  `uverbs` and `rdma_cm`; a DeviceSpec of no RDMA node, or a path quoted in an error, is no listing;
- NCCL's MNNVL check refused by CUDA (`Cuda failure 800 'operation not permitted'` beside `MNNVL (cliqueSize 8) is
  available but not working ... Check the IMEX channel configuration`) is a process given no IMEX channel: the job's
  (its pod spec, its launcher), fail NCCL_FAILED, never a drain; `verify explain` keeps the CUDA failure beside the
  WARN it caused. The WARN with any other cause is left to the other rules;
- a memlock limit told in the poster's prose (in Chinese) is no printed line: not recognised, never a pass."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.explain import devib
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = Path(__file__).parent / "data" / "real-world"


# ------------------------------------------------- the container's RDMA devices, as the device plugin allocated them
# the corpus's cx4-25g-two-node-sriov-vf-pods-device-plugin-passes-uverbs11-rdma-cm-net1-same-ip-on-both-nodes-ipam-not-host
ALLOCATE = ("I0325 14:40:51.461625       1 server.go:124] AllocateResponse send: &AllocateResponse{ContainerResponses:"
            "[]*ContainerAllocateResponse{&ContainerAllocateResponse{Envs:map[string]string{PCIDEVICE_MELLANOX_COM_MLX5_VF: "
            "0000:07:03.1,},Mounts:[]*Mount{},Devices:[]*DeviceSpec{&DeviceSpec{ContainerPath:/dev/infiniband/issm11,"
            "HostPath:/dev/infiniband/issm11,Permissions:rwm,},&DeviceSpec{ContainerPath:/dev/infiniband/umad11,HostPath:"
            "/dev/infiniband/umad11,Permissions:rwm,},&DeviceSpec{ContainerPath:/dev/infiniband/uverbs11,HostPath:"
            "/dev/infiniband/uverbs11,Permissions:rwm,},&DeviceSpec{ContainerPath:/dev/infiniband/rdma_cm,HostPath:"
            "/dev/infiniband/rdma_cm,Permissions:rwm,},&DeviceSpec{ContainerPath:/dev/vhost-net,HostPath:/dev/vhost-net,"
            "Permissions:mrw,},},Annotations:map[string]string{},},},}\n")
# the same response in protobuf's text form (a plugin built with newer protobuf)
ALLOCATE_TEXT = ('allocate response: container_responses:{devices:{container_path:"/dev/infiniband/uverbs0" '
                 'host_path:"/dev/infiniband/uverbs0" permissions:"rw"} devices:{container_path:"/dev/infiniband/rdma_cm" '
                 'host_path:"/dev/infiniband/rdma_cm" permissions:"rw"}}\n')


@pytest.mark.parametrize("text, devices", [(ALLOCATE, "uverbs11"), (ALLOCATE_TEXT, "uverbs0")])
def test_a_device_plugin_s_allocate_response_is_the_container_s_rdma_devices(text, devices):
    r = explained(text, "plugin.log")
    assert (r.name, r.status) == ("fabric", "pass"), r.summary
    assert f"({devices}) and rdma_cm" in r.summary, r.summary


def test_an_allocation_of_no_rdma_node_or_a_quoted_path_is_no_listing():
    vhost = ("AllocateResponse send: &AllocateResponse{ContainerResponses:[]*ContainerAllocateResponse{"
             "&ContainerAllocateResponse{Devices:[]*DeviceSpec{&DeviceSpec{ContainerPath:/dev/vhost-net,HostPath:"
             "/dev/vhost-net,Permissions:mrw,},},},},}\n")
    assert explained(vhost, "plugin.log").status == "skip"
    quoted = "Error: failed to open /dev/infiniband/uverbs0 (HostPath:/dev/infiniband/uverbs0 not found)\n"
    assert not devib.detect(quoted)


# ------------------------------------------------------------- MNNVL refused: no IMEX channel given to the job
# the corpus's gb200-class-pods-unprivileged-nccl-net-ib-mlx5-0-found-then-cuda-800-mnnvl-clique-8-no-imex-channel-job
CUDA_800 = ("[2025-11-30 05:55:16] nccl-sleep-c7d759db6-cgz82:3769901:3769901 [1] include/alloc.h:228 NCCL WARN Cuda "
            "failure 800 'operation not permitted'")
MNNVL = ("[2025-11-30 05:55:16] nccl-sleep-c7d759db6-cgz82:3769901:3769901 [1] mnnvl.cc:67 NCCL WARN MNNVL (cliqueSize 8) "
         "is available but not working on this system. Check the IMEX channel configuration "
         "(/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.")
TRACE = """nccl-sleep-c7d759db6-cgz82:3769901:3769901 [1] NCCL INFO init.cc:915 -> 2
nccl-sleep-c7d759db6-cgz82:3769901:3769901 [1] NCCL INFO init.cc:1582 -> 2
nccl-sleep-c7d759db6-cgz82:3769901:3769901 [1] NCCL INFO group.cc:76 -> 2 [Async thread]
"""
LOG = {"network": "IB", "networks": ["IB"], "hcas": ["mlx5_0:1/IB"], "transports": [], "net_channels": {},
       "proof": ["NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB eth0:172.25.114.4<0>", "Using network IB"]}


def test_mnnvl_refused_by_cuda_800_is_the_job_s_imex_channel():
    error = "init: " + CUDA_800.split("] ", 2)[2] + " / " + MNNVL.split("] ", 2)[2]
    r = nccl.judge({"backend": "nccl", "world_size": 8, "error": error, "nccl_log": LOG}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "IMEX channel" in r.summary and "clique of 8" in r.summary


def test_explain_keeps_the_cuda_failure_beside_the_mnnvl_warn():
    r = explained(f"\n{CUDA_800}\n\n{MNNVL}\n{TRACE}")
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary


@pytest.mark.parametrize("cause", ["", "include/alloc.h:228 NCCL WARN Cuda failure 'out of memory'"])
def test_the_mnnvl_warn_without_cuda_s_refusal_is_left_to_the_other_rules(cause):
    # an IMEX daemon down or a domain not ready is not told from the WARN alone: no IMEX-channel verdict for the job
    error = "init: " + (f"{cause} / " if cause else "") + MNNVL.split("] ", 2)[2]
    r = nccl.judge({"backend": "nccl", "world_size": 8, "error": error, "nccl_log": LOG}, Options())
    assert r.status == "fail" and "was not permitted" not in r.summary, r.summary


# ------------------------------------------------------------------------------------- a memlock limit in prose
def test_a_memlock_limit_told_in_prose_is_never_judged():
    slug = "v100-k8s-pytorch-ddp-pod-rdma-v100-resource-ulimit-l-64-kb-in-container-limits-conf-ignored-1m-transfers-fail"
    r = explained((CORPUS / slug / "raw.txt").read_text(), "raw.txt")
    assert r.status == "skip" and r.name == "explain", r.summary
