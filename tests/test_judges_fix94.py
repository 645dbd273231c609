"""Issue 35's ninety-fourth and ninety-fifth corpus batches (cloud NCCL logs; RDMA and limits), fixed by class:
- aws-ofi-nccl's EFA error 4126 `Unresponsive receiver (reachable by EFA device but handshake failed)` under torch's
  `remote process exited or there was a network error`: a peer's process gone, seen from this rank: fail, owner job,
  never a drain (eks-llama3-8b-deepspeed-4-ranks-nccl-2.27.3-efa-gdrdma-channels-then-ofi-unresponsive-receiver-...);
- NCCL's `file:line -> N` traces printed while communicators abort at exit (`misc/socket.cc:47 -> 3` ... `Abort
  COMPLETE`) are no failure (g5-8xlarge-pcluster-slurm-pyxis-2x1-a10g-nccl-2.23.4-ofi-1.12.1-efa-sendrecv-...);
- one process (one host:pid) logging for several devices is one node: no fall-back judged there; two pids on one host
  prove nothing (k8s-pod-lmdeploy-nccl-2.21.5-one-process-four-gpus-..., rtx-a6000-workstation-nccl-2.10.3-...);
- plain `ls /dev/infiniband` is the container's devices (mooncake-transfer-engine-ls-dev-infiniband-six-uverbs-...);
- `verify explain` reads what libibverbs listed as the facts do: an `ibv_devices` listing into `verbs_devices`
  (nvshmem-ibgda-host-ibv-devices-four-mlx5-...), no `/etc/libibverbs.d` then `No IB devices found` into
  `providers` [] and `verbs_devices` [] (scout-image-ibv-devinfo-no-etc-libibverbs-d-...)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, verdict
from verify.explain import devib, oneproc, verbslist

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ EFA 4126: the peer went away
# eks-llama3-8b-deepspeed-4-ranks-nccl-2.27.3-efa-gdrdma-channels-then-ofi-unresponsive-receiver-handshake-failed-peer-host-na
UNRESPONSIVE = ("NET/OFI Request 0x7f456c224810 completed with error. RC: 103. Error: 4126 (Unresponsive receiver "
                "(reachable by EFA device but handshake failed) My EFA addr: fi_addr_efa://[fe80::c55:2eff:fe44:db5]:0:"
                "142160333 My host id: i-07792e0f955a9673b Peer EFA addr: fi_addr_efa://[fe80::454:14ff:fedd:d5b3]:0:"
                "825957744 Peer host id: N/A). Completed length: 0")
REMOTE = ("broadcast: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3699, remote process "
          "exited or there was a network error, NCCL version 2.27.3; ncclRemoteError: A call failed possibly due to a "
          "network error or a remote process exiting prematurely. Last error: " + UNRESPONSIVE)


def test_efa_unresponsive_receiver_is_a_peer_gone_the_job_s_never_a_drain():
    assert nccl_verdict(error=REMOTE, efa=True, nccl_log={"ofi_error": UNRESPONSIVE}) == ("fail", "NCCL_FAILED", "job")


def test_efa_unresponsive_receiver_beside_a_cuda_failure_is_not_read_as_a_casualty():
    from verify.checks.nccl import casualty
    assert casualty.peer_casualty(REMOTE) is not None
    assert casualty.peer_casualty(REMOTE + " | Cuda failure 'an illegal memory access was encountered'") is None


# ------------------------------------------------------------------ traces at a teardown
# g5-8xlarge-pcluster-slurm-pyxis-2x1-a10g-nccl-2.23.4-ofi-1.12.1-efa-sendrecv-gdr-off-qwen-finetune-completes
TEARDOWN = """\
compute-gpu-st-distributed-ml-1:7614:8102 [0] NCCL INFO Connected all trees
compute-gpu-st-distributed-ml-2:7070:11027 [0] NCCL INFO misc/socket.cc:47 -> 3
compute-gpu-st-distributed-ml-2:7070:11027 [0] NCCL INFO misc/socket.cc:58 -> 3
compute-gpu-st-distributed-ml-2:7070:11027 [0] NCCL INFO misc/socket.cc:781 -> 3
compute-gpu-st-distributed-ml-2:7070:7147 [0] NCCL INFO misc/socket.cc:832 -> 3
compute-gpu-st-distributed-ml-2:7070:11027 [0] NCCL INFO comm 0x60630f7f62f0 rank 1 nranks 2 cudaDev 0 busId 1e0 - Abort COMPLETE
"""


def test_socket_traces_at_a_communicator_abort_are_no_failure():
    from verify.explain import nccl
    assert nccl.parse(TEARDOWN)["error"] is None
    # the same traces with no teardown after them stay a failed bootstrap
    assert nccl.parse(TEARDOWN.rsplit("\n", 2)[0] + "\n")["error"].startswith("init: misc/socket.cc:47 -> 3")


# ------------------------------------------------------------------ one process, several GPUs: one node
# k8s-pod-lmdeploy-nccl-2.21.5-one-process-four-gpus-failed-to-open-libibverbs-socket-eth0-no-fabric-needed
ONE_PROCESS = """\
mdeploy-7666548865-hbpt4:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.244.0.233<0>
lmdeploy-7666548865-hbpt4:1:112 [1] NCCL INFO Failed to open libibverbs.so[.1]
lmdeploy-7666548865-hbpt4:1:112 [1] NCCL INFO NET/Socket : Using [0]eth0:10.244.0.233<0>
lmdeploy-7666548865-hbpt4:1:112 [1] NCCL INFO Using network Socket
lmdeploy-7666548865-hbpt4:1:113 [2] NCCL INFO Using network Socket
lmdeploy-7666548865-hbpt4:1:114 [3] NCCL INFO Using network Socket
lmdeploy-7666548865-hbpt4:1:111 [0] NCCL INFO Using network Socket
"""
# rtx-a6000-workstation-nccl-2.10.3-failed-to-open-libibverbs-socket-over-enp68s0-docker-bridges-and-calico-veths-one-host
TWO_PIDS = """\
john-trx40-designare:115664:115664 [0] NCCL INFO Failed to open libibverbs.so[.1]
john-trx40-designare:115664:115664 [0] NCCL INFO Using network Socket
john-trx40-designare:115828:115828 [1] NCCL INFO Using network Socket
"""


def test_one_process_over_several_gpus_is_one_node_and_its_socket_network_no_fall_back():
    assert oneproc.one_node(ONE_PROCESS)
    r = explained(ONE_PROCESS)
    assert (r.name, r.status) == ("nccl", "pass"), r.summary


def test_several_pids_on_one_host_or_one_device_prove_no_single_node():
    assert not oneproc.one_node(TWO_PIDS)
    assert not oneproc.one_node(ONE_PROCESS.splitlines()[-1])      # one device index only
    assert not oneproc.one_node(ONE_PROCESS + "other-host:1:7 [1] NCCL INFO Using network Socket\n")


# ------------------------------------------------------------------ /dev/infiniband as plain `ls`
# mooncake-transfer-engine-ls-dev-infiniband-six-uverbs-rdma-cm-tool-looks-for-dev-infiniband-mlx5-0-regression
LS = ("\u279c  Mooncake git:(main) ls /dev/infiniband \nissm0  issm1  rdma_cm  umad0  umad1  uverbs0  uverbs1\n"
      "W0116 05:27:02.295550 20488 topology.cpp:47] Device path /dev/infiniband/mlx5_0 does not exist\n")


def test_plain_ls_of_dev_infiniband_is_the_container_s_devices():
    assert devib.detect(LS) and devib.parse(LS) == {"uverbs": ["uverbs0", "uverbs1"], "rdma_cm": True}
    assert not devib.detect("the tool wants uverbs0 and rdma_cm here\n")       # prose around the names: no listing


# ------------------------------------------------------------------ what libibverbs listed
# nvshmem-ibgda-host-ibv-devices-four-mlx5-libvmw-pvrdma-rdmav34-warning-nvidia-peermem-loaded
IBV_DEVICES = """\
    device                 node GUID
    ------              ----------------
    mlx5_0              e89e490300356eaa
    mlx5_1              e89e490300356eab
"""
# scout-image-ibv-devinfo-no-etc-libibverbs-d-no-ib-devices-found-ibverbs-providers-not-installed
NO_PROVIDERS = ("root@scout:~# ibv_devinfo\nlibibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.\n"
                "No IB devices found\n")


def test_an_ibv_devices_listing_is_the_verbs_list_on_both_roads():
    assert verbslist.listed(IBV_DEVICES) == {"verbs_devices": ["mlx5_0", "mlx5_1"]}
    assert verbslist.listed("No IB devices found\n") == {}


def test_no_provider_configured_then_no_device_is_read_as_the_facts_read_it():
    assert verbslist.detect(NO_PROVIDERS) and verbslist.parse(NO_PROVIDERS) == {"providers": [], "verbs_devices": []}
    assert not verbslist.detect("No IB devices found\n")        # without the warning: whether providers exist is unknown
    r = explained(NO_PROVIDERS)
    assert (r.name, *verdict(r)) == ("fabric", "skip", "FABRIC_NONE", "host"), r.summary
