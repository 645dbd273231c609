"""Issue 35's hundred-and-third corpus batch (multi-node NCCL INFO logs), fixed by class:
- NCCL 2.21+ words an adapter's fatal event itself (`NET/IB : mlx5_ib0:1 async fatal event on QP (0x...): local access
  violation work queue error`, also `async fatal event: ...` for the device and `on CQ (%p)`): read as the older `Got
  async event : ...` error events are, never "nothing to judge"
  (h100-2x8-tp16-nccl-2.21.5-mlx5-ib0-qp-local-access-violation-send-status-4-vendor-83-sporadic-fatal-in-ncclibtest;
  that entry's own verdict, the job's because the failure is sporadic, stays an expected mismatch: no field holds how
  often it happens);
- `verify explain`: two ranks of one communicator (one commId) whose `Init START` lines put them on one host's same
  GPU (busId) are NCCL's Duplicate GPU refusal at init, the job's, even where the excerpt is cut before NCCL says so
  (slurm-qgpu2008-four-ranks-on-two-gpus-ranks-0-and-2-both-busid-31000-net-ib-mlx5-0-ib-plus-mlx5-2-roce-job-placement)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import CHECKS
from verify.explain import dupgpu, nccl
from verify.judging import judge
from verify.options import Options
from verify.shared import rdma

pytestmark = pytest.mark.unit

# ------------------------------------------------------------------ NCCL 2.21+: `async fatal event on QP`
# h100-2x8-tp16-nccl-2.21.5-mlx5-ib0-qp-local-access-violation-send-status-4-vendor-83-sporadic-fatal-in-ncclibtest
FATAL_QP = ("h100-28:238:1219 [0] transport/net_ib.cc:180 NCCL WARN NET/IB : mlx5_ib0:1 async fatal event on QP "
            "(0x7f69f01519a8): local access violation work queue error")


@pytest.mark.parametrize("line", [
    FATAL_QP,
    "node-0:5911:5971 [0] transport/net_ib.cc:154 NCCL WARN NET/IB : mlx5_3:1 async fatal event on QP (0x732d78661238): "
    "invalid request local work queue error",
    "n1:1:2 [0] transport/net_ib.cc:140 NCCL WARN NET/IB : mlx5_0:1 async fatal event: local catastrophic error",
    "n1:1:2 [0] transport/net_ib.cc:145 NCCL WARN NET/IB : mlx5_0:1 async fatal event on CQ (0x55d0): CQ error",
], ids=["qp-access", "qp-request", "device", "cq"])
def test_nccl_2_21_s_own_words_for_a_fatal_event_are_an_adapter_error(line):
    assert rdma.IB_ASYNC_ERROR.search(line)
    r = explained(line + "\n")
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "host"), r.summary
    assert "adapter reported an error" in r.summary
    facts = {"backend": "nccl", "distributed": True, "nccl_available": True, "sizes": None, "world_size": 16,
             "error": f"all_reduce: {line}"}
    assert verdict(judge(CHECKS["nccl"], facts, Options())) == ("fail", "NCCL_FAILED", "host")


def test_an_event_nccl_calls_non_fatal_is_no_adapter_error():
    line = "n1:1:2 [0] NCCL INFO NET/IB : mlx5_0:1 async non-fatal event: GID table change"
    assert not rdma.IB_ASYNC_ERROR.search(line)
    assert nccl.parse(line + "\n")["error"] is None


# ------------------------------------------------------------------ two ranks of one communicator on one GPU
# slurm-qgpu2008-four-ranks-on-two-gpus-ranks-0-and-2-both-busid-31000-net-ib-mlx5-0-ib-plus-mlx5-2-roce-job-placement
PLACED = """\
qgpu2008:35184:35221 [1] NCCL INFO Using network IB
qgpu2017:4305:4329 [1] NCCL INFO comm 0x52589c20 rank 7 nranks 8 cudaDev 1 nvmlDev 1 busId 4b000 commId 0x26b3ece72ee71028 - Init START
qgpu2008:35182:35220 [0] NCCL INFO comm 0x562e3380 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 31000 commId 0x26b3ece72ee71028 - Init START
qgpu2008:35184:35221 [1] NCCL INFO comm 0x555bcd30 rank 1 nranks 8 cudaDev 1 nvmlDev 1 busId 4b000 commId 0x26b3ece72ee71028 - Init START
qgpu2008:35183:35223 [0] NCCL INFO comm 0x54e23e50 rank 2 nranks 8 cudaDev 0 nvmlDev 0 busId 31000 commId 0x26b3ece72ee71028 - Init START
"""


def test_two_ranks_of_one_communicator_on_one_gpu_are_the_job_s_even_before_nccl_refuses():
    said = dupgpu.duplicate(PLACED)
    assert said and "rank 0 and rank 2" in said and "qgpu2008" in said and "31000" in said
    r = explained(PLACED)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary
    assert "Duplicate GPU" in r.summary


@pytest.mark.parametrize("change", [
    # rank 2 in another communicator (a GPU in a TP and a DP group is normal)
    lambda t: t.replace("rank 2 nranks 8 cudaDev 0 nvmlDev 0 busId 31000 commId 0x26b3ece72ee71028",
                        "rank 2 nranks 8 cudaDev 0 nvmlDev 0 busId 31000 commId 0x99"),
    # rank 2 on another host
    lambda t: t.replace("qgpu2008:35183:35223", "qgpu2009:35183:35223"),
    # rank 2 on another GPU of the host
    lambda t: t.replace("rank 2 nranks 8 cudaDev 0 nvmlDev 0 busId 31000", "rank 2 nranks 8 cudaDev 2 nvmlDev 2 busId ca000"),
    # NCCL took rank 2: no refusal to infer
    lambda t: t + "qgpu2008:35183:35223 [0] NCCL INFO comm 0x54e23e50 rank 2 nranks 8 cudaDev 0 nvmlDev 0 busId 31000 "
                  "commId 0x26b3ece72ee71028 - Init COMPLETE\n",
    # no commId (NCCL before 2.17): which communicator is not shown
    lambda t: t.replace(" commId 0x26b3ece72ee71028", ""),
], ids=["other-comm", "other-host", "other-gpu", "init-complete", "no-commid"])
def test_one_gpu_is_read_only_for_one_communicator_on_one_host_not_yet_taken(change):
    text = change(PLACED)
    assert dupgpu.duplicate(text) is None
    assert explained(text).status != "fail"


def test_the_placement_is_read_under_a_launcher_s_prefix_and_2_19_s_init_function_name():
    """2.19+ names the init call first (`ncclCommInitRankConfig comm 0x...`); Ray puts its worker before NCCL's prefix."""
    text = "".join(f"(RayWorkerWrapper pid={pid}, ip=10.0.0.5) gpu-a:{pid}:{pid + 7} [0] NCCL INFO ncclCommInitRankConfig "
                   f"comm 0x5600{rank} rank {rank} nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0xabc - Init START\n"
                   for rank, pid in ((0, 901), (1, 902)))
    said = dupgpu.duplicate(text)
    assert said and "rank 0 and rank 1" in said and "gpu-a" in said
    r = explained(text)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary
