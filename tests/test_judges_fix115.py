"""Issue 35, batch 115: a paste holding several tools' output at once (nvidia-smi's table or topo -m, collect_env,
NCCL INFO lines, a traceback). A hang with no error text proves no fault: never a pass, never a drain; a fault one
part shows is judged whatever the others leave out. Lines quoted from the batch's real excerpts (slugs named)."""
from __future__ import annotations

import copy
import json

import pytest

from tests.helpers import ROOT
from verify import explain as ex
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"

# flow-matic-x2-torchrun-nccl-2.20.5-ib-no-device-socket-eno3-lxcbr0-tailscale0-vllm-0.5.1-tp2-hang-no-error-in-excerpt
WORKSTATION = """\
flow-matic:820398:820398 [0] NCCL INFO Bootstrap : Using eno3:169.229.48.108<0>
flow-matic:820398:820398 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation
NCCL version 2.20.5+cuda12.4
flow-matic:820398:820779 [0] NCCL INFO NET/IB : No device found.
flow-matic:820398:820779 [0] NCCL INFO NET/Socket : Using [0]eno3:169.229.48.108<0> [1]lxcbr0:10.0.3.1<0> [2]tailscale0:100.72.221.35<0>
flow-matic:820398:820779 [0] NCCL INFO Using network Socket
"""
FLOW = "flow-matic-x2-torchrun-nccl-2.20.5-ib-no-device-socket-eno3-lxcbr0-tailscale0-vllm-0.5.1-tp2-hang-no-error-in-excerpt"

# a800-or-h800-class-8gpu-nv8-topo-four-mlx5-fastertransformer-tp4-allreduce-opcount-0-hang-no-error-in-excerpt
OPCOUNT_0 = """\
qygpu047:411931:411931 [3] NCCL INFO AllReduce: opCount 0 sendbuff 0xa04814200 recvbuff 0xa04814200 count 12288 datatype 6 op 0 root 0 comm 0x55e41389f340 [nranks=4] stream 0x55e415d64210
qygpu047:411928:411928 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0xa04814200 recvbuff 0xa04814200 count 12288 datatype 6 op 0 root 0 comm 0x55bdc4245080 [nranks=4] stream 0x55bdc8091da0
"""
TOPO = """\
nvidia-smi topo -m
        GPU0    GPU1    mlx5_0  CPU Affinity    NUMA Affinity
GPU0     X      NV8     PXB     48-63,176-191   3
GPU1    NV8      X      PXB     48-63,176-191   3
"""


def _facts(slug: str) -> dict:
    return json.loads((CORPUS / slug / "facts" / "nccl.json").read_text())["facts"]


def test_sockets_after_no_ib_device_on_a_host_with_no_fabric_shown_is_no_fall_back():
    """Class: `NET/IB : No device found.` then `Using network Socket`, nothing else: on a workstation without RDMA
    adapters sockets are NCCL's only network; no verdict on either road."""
    r = judge(CHECKS["nccl"], _facts(FLOW), Options())
    assert (r.status, r.code, r.owner) == ("skip", "FACTS_INCOMPLETE", None), r.summary
    e = ex.explain_text(WORKSTATION, "log.txt", Options())
    assert (e.status, e.code, e.owner) == ("skip", "FACTS_INCOMPLETE", None), e.summary


def test_the_same_lines_across_two_nodes_are_no_fall_back_either_and_never_against_the_host():
    """Two nodes without RDMA adapters meet over sockets too (fix149: two blind translations of the class, batches
    137 and 149, say nothing to judge); with an error beside them, the missing device is still named, the job's."""
    facts = copy.deepcopy(_facts(FLOW))
    facts["nodes"] = 2
    r = judge(CHECKS["nccl"], facts, Options())
    assert (r.status, r.code, r.owner) == ("skip", "FACTS_INCOMPLETE", None), r.summary
    facts["error"] = "ncclSystemError: unhandled system error"
    r = judge(CHECKS["nccl"], facts, Options())
    assert (r.status, r.owner) == ("fail", "job") and "found no IB device" in r.summary, r.summary


def test_a_collective_that_never_returns_beside_a_healthy_topology_is_no_pass():
    """Class: topo -m (a sound NV8 board) beside opCount 0 lines and nothing after: the hang proves no fault, and
    the topology's pass is not the job's all-clear."""
    r = ex.explain_text(TOPO + "\n" + OPCOUNT_0, "paste.txt", Options())
    assert (r.name, r.status, r.code, r.owner) == ("nccl", "skip", "FACTS_INCOMPLETE", None), r.summary


def test_the_topology_alone_is_still_read_as_it_was():
    r = ex.explain_text(TOPO, "topo.txt", Options())
    assert r.name == "gpu" and r.status == "pass", r.summary


def test_a_shm_attach_failure_quoted_in_the_bug_title_fails_the_job():
    """a100-sxm4-40gb-x4-550.144.03-collect-env-vllm-nccl-intranode-p2p-0-shm-segment-attach-enoent: the WARN is in
    the issue's title, collect_env and NCCL's start-up below it."""
    text = ('[Bug]: "NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl- (size 192814336), error: '
            'No such file or directory (2)"\n'
            "a100-8:421780:421780 [0] NCCL INFO comm 0x1c2ea230 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0\n"
            "a100-8:421780:421780 [0] NCCL INFO Check P2P Type intraNodeP2pSupport 0 directMode 0\n")
    r = ex.explain_text(text, "issue.txt", Options())
    assert (r.name, r.status, r.code, r.owner) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary


RAISE = '[rank0]:     raise RuntimeError(f"NCCL error: {error_str}")\n'
RAISED = "[rank0]: RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n"


def test_a_tracebacks_raise_line_is_the_template_and_the_error_below_it_is_read():
    """gpu-x8-all-phb-vllm-0.5.3-nvidia-nccl-cu11-2.20.5-torch-2.3.1-cu118-pynccl-allreduce-invalid-usage-rebuilt-
    nccl-fixed: invalid usage is how NCCL was called, the job's."""
    r = ex.explain_text(RAISE + RAISED, "trace.txt", Options())
    assert (r.name, r.status, r.code, r.owner) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary
    assert "invalid usage" in r.summary


def test_the_raise_line_alone_is_no_failure():
    r = ex.explain_text(RAISE, "trace.txt", Options())
    assert r.status != "fail", r.summary


def test_a_real_healthy_hosts_table_beside_a_start_up_with_nothing_to_judge_is_neither_pass_nor_drain():
    """No false drain: a real healthy host's idle nvidia-smi table (a100-pcie-40gb-x2-k8s-mpijob-pod-525.105.17-smi-
    table-idle-34c-46w-of-250w-gpu0-ecc-na-nccl-2.21.5-launcher-hangs-after-kubectl-exec) with the workstation's
    start-up lines: the hang proves nothing, so no pass and no owner."""
    table = next(CORPUS.glob("a100-pcie-40gb-x2-k8s-mpijob-pod-525.105.17-*")) / "raw.txt"
    alone = ex.explain_text(table.read_text(), "smi.txt", Options())
    assert (alone.name, alone.status, alone.owner) == ("gpu", "pass", None), alone.summary
    r = ex.explain_text(table.read_text() + "\n" + WORKSTATION, "paste.txt", Options())
    assert (r.name, r.status, r.code, r.owner) == ("nccl", "skip", "FACTS_INCOMPLETE", None), r.summary
