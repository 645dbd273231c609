"""Batches 87 and 88 of the corpus (issue 35): the classes fixed by fix87, each on real lines of its entry."""
from __future__ import annotations

from typing import cast

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import nccl
from verify.facts import NcclFacts
from verify.options import Options

pytestmark = pytest.mark.unit


def explained(text: str):
    return ex.explain_text(text, "log.txt", Options())


def failed(error: str):
    facts = cast(NcclFacts, {"backend": "nccl", "error": error, "sizes": None})
    return nccl.judge(facts, Options())


# ------------------------------------------------------------------ a rank that only saw a peer fail during setup
# slurm-submitit-multi-node-nccl-2.18.1-barrier-internal-error-socket-recv-failed-while-polling-opid-cause-not-shown
SUBMITIT = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, "
            "internal error - please report this issue to the NCCL developers, NCCL version 2.18.1\n"
            "ncclInternalError: Internal check failed.\nLast error:\nSocket recv failed while polling for opId=0x7f22ff731e10\n")
# verl-prime-ray-fsdp-multi-node-nccl-2.24.3-first-barrier-unhandled-system-error-proxy-connect-res-3-cause-not-shown
VERL = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2615, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.24.3\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
        "Last error:\n[Service thread] Error encountered progressing operation=Connect, res=3, closing connection\n")


@pytest.mark.parametrize("text", [SUBMITIT, VERL], ids=["internal-error-opid", "system-error-connect-res"])
def test_a_peers_failure_seen_from_a_rank_fails_as_the_job_s_on_both_roads(text):
    """No drain without evidence: the casualty's error names no node, fabric, image or setting."""
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "job")
    error = "barrier: " + " ".join(line.strip() for line in text.splitlines() if line.strip() != "Last error:")
    error = error.replace("failed or device error. [Service", "failed or device error. Last error: [Service")
    error = error.replace("Internal check failed. Socket", "Internal check failed. Last error: Socket")
    assert verdict(failed(error)) == ("fail", "NCCL_FAILED", "job")


def test_a_cause_named_beside_the_casualty_still_decides():
    """megatron-2x8-...-transport-cc-154-cuda-invalid-argument: a CUDA failure in the error is the cause, not a peer."""
    r = failed("init: transport.cc:154 NCCL WARN Cuda failure 'invalid argument' (then proxy Connect failed, retcode 3) "
               "Last error: Socket recv failed while polling for opId=0x1")
    assert r.status == "fail" and r.owner is not None


# ------------------------------------------------------------------ NCCL's allocation WARN and its CUDA cause
# narval-4gpu-deepspeed-zero3-reward-model-nccl-p2p-setup-cuda-calloc-oom-on-rank-3-peers-see-connection-closed
NARVAL = """ng30903:3063025:3066048 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x55a51966cc80
ng30903:3063025:3066048 [0] NCCL INFO transport/p2p.cc:438 -> 3

ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'

ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes
ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1
ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:605 -> 1
ng30903:3063028:3066152 [3] NCCL INFO proxy.cc:1303 -> 1
ng30903:3063028:3066152 [3] NCCL INFO proxy.cc:1377 -> 1
"""


def test_a_cuda_allocation_failing_on_out_of_memory_is_the_jobs_through_explain_never_a_drain():
    r = explained(NARVAL)
    assert verdict(r)[2] == "job" and r.code == "GPU_OUT_OF_MEMORY", (r.code, r.summary)


# ------------------------------------------------------------------ `ibdev2netdev -v`: the RDMA port's own state
# azure-nc24rs-v3-v100-ibdev2netdev-v-cx3-vf-mt4100-port-active-ib0-netdev-down-nccl-tests-openmpi-error
AZURE = "$ sudo ibdev2netdev -v\n0002:00:02.0 mlx4_0 (MT4100 - NA)  fw 2.43.7008 port 1 (ACTIVE) ==> ib0 (Down)\n"


def test_ibdev2netdev_v_reads_the_ports_state_not_the_netdevs():
    r = explained(AZURE)
    assert r.name == "fabric" and verdict(r) == ("pass", None, None), (r.code, r.summary)
    port = ex.kind_of(AZURE)
    assert port is not None and port.name.startswith("ibdev2netdev -v")


def test_ibdev2netdev_v_with_a_port_down_is_the_hosts_and_plain_ibdev2netdev_stays_nothing_to_judge():
    down = AZURE.replace("(ACTIVE)", "(DOWN)")
    assert verdict(explained(down)) == ("fail", "FABRIC_PORT_DOWN", "host")
    # a100-two-nodes-ibdev2netdev-four-roce-netdevs-up-...: no port state, only the netdevs'
    plain = "[root@10 ~]# ibdev2netdev\nmlx5_0 port 1 ==> eth2 (Up)\nmlx5_1 port 1 ==> eth3 (Up)\n"
    assert verdict(explained(plain))[:2] == ("skip", "FACTS_INCOMPLETE")


# ------------------------------------------------------------------ a bare failure: the error's class and nothing else
# h100-2x8-kubeflow-pytorchjob-roce-sriov-vf-net1-hpcx-ibext-nccl-2.18.1-unhandled-system-error-no-warn-in-excerpt
BARE = ("init: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system "
        "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1 ncclSyste")


def test_a_bare_system_error_fails_as_the_job_s_and_a_named_cause_keeps_its_owner():
    assert verdict(failed(BARE)) == ("fail", "NCCL_FAILED", "job")
    assert verdict(failed("RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)")) \
        == ("fail", "NCCL_FAILED", "job")
    # nccl-2.21.5-remote-error-connection-reset-nodes-with-ib-issues: a peer's socket reset is named: the host's, as ever
    reset = ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely. "
             "Last error: socketProgressOpt: Call to recv from 172....<33759> failed : Connection reset by peer")
    assert verdict(failed(reset)) == ("fail", "NCCL_FAILED", "host")
