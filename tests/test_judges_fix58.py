# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's fifty-eighth corpus batch (multi-rail InfiniBand/RoCE nodes), fixed by class:
- a segmentation fault inside NCCL or its net plugin (UCX's `Caught signal 11 (Segmentation fault ...)` above frames
  in libnccl, gdb's backtrace of a core whose frame #0 is address 0 under a plugin's init) is the software the image
  ships crashing: CHECK_CRASHED, owner image, as verify's own check dying the same way is; never the node's. A crash
  in the driver's library, or one no NCCL frame names, is not judged so, and an adapter's error NCCL logged before it
  keeps its owner. `verify explain` reads such a backtrace (it was "not recognised");
- NCCL's own device list (`NET/IB : Using [0]mlx5_3:1/IB ... [2]mlx5_2:1/RoCE`) holding InfiniBand and RoCE ports
  together, with a queue pair that cannot be brought up (`Call to ibv_modify_qp failed with error Invalid argument`):
  the job handed NCCL both link layers (no NCCL_IB_HCA, or one naming both): FABRIC_MIXED_ADAPTERS, owner job, never
  the host's NCCL_FAILED;
- a failure the error says is `stuck` is a hang (NCCL_TIMEOUT), as `hangs` and `timed out` are."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ a segmentation fault inside NCCL
UCX_CRASH = """export NCCL_IB_HCA=mlx5_0,mlx5_1
[node-a:911 :0:911] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))
==== backtrace (tid:    911) ====
 0 0x0000000000042520 __sigaction()  ???:0
 1 0x00000000000610c2 ncclProxyConnect()  ???:0
 2 0x0000000000061f07 ncclTransportP2pSetup()  ???:0
 3 0x000000000004c818 ncclCommInitRank()  ???:0
"""
GDB_CRASH = """(gdb) bt
#0  0x0000000000000000 in ?? ()
#1  0x00007f1c2a4b890f in nccl_net_ib_init (ndev=0x7f1c2a4cca38) at plugin_ib.c:211
#2  0x00007f1c3b9daf80 in ncclNet_v8_as_v9_init (logfn=<optimized out>) at net.cc:61
#3  0x00007f1c3b9db85a in ncclNetInit (comm=comm@entry=0x55d0e33d530) at net.cc:351
#4  0x00007f1c3b9d8ef8 in ncclCommInitRankFunc (job_=0x55d0e341290) at init.cc:1387
"""


@pytest.mark.parametrize("error", [
    "init: Caught signal 11 (Segmentation fault: address not mapped to object) in libnccl.so.2 (ncclProxyConnect)",
    "init: segfault: #0 0x0000000000000000 in ?? () called from nccl_net_ib_init via ncclNetInit, ncclCommInitRankFunc",
], ids=["ucx-handler", "gdb-null-call"])
def test_a_segfault_in_ncclss_frames_is_the_images_crash_never_the_nodes(error):
    r = nccl.judge({"backend": "nccl", "error": error, "infiniband": True}, Options())
    assert verdict(r) == ("fail", "CHECK_CRASHED", "image"), r.summary


@pytest.mark.parametrize("text", [UCX_CRASH, GDB_CRASH], ids=["ucx-handler", "gdb-null-call"])
def test_a_segfault_backtrace_in_nccl_is_explained_as_the_images_crash(text):
    r = explained(text)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "CHECK_CRASHED", "image"), r.summary


def test_a_segfault_in_the_drivers_library_or_with_no_nccl_frame_is_not_nccls_crash():
    in_driver = "all_reduce: Caught signal 11 (Segmentation fault) in libcuda.so.1 called from ncclCommInitRank"
    unnamed = "all_reduce: Segmentation fault (core dumped)"
    for error in (in_driver, unnamed):
        assert nccl.judge({"backend": "nccl", "error": error}, Options()).code != "CHECK_CRASHED", error
    assert explained("python train.py\nSegmentation fault (core dumped)\n").code != "CHECK_CRASHED"


def test_a_prose_mention_of_a_segfault_in_nccl_is_not_read_as_one():
    text = "If you see Segmentation fault in ncclCommInitRank, set NCCL_IB_HCA.\n"
    assert explained(text).code != "CHECK_CRASHED"


def test_an_adapters_error_logged_before_the_crash_keeps_its_owner():
    error = ("all_reduce: NET/IB : Got completion from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err "
             "129 | Caught signal 11 (Segmentation fault) in ncclProxyProgress")
    assert nccl.judge({"backend": "nccl", "error": error}, Options()).owner == "host"


# ------------------------------------------------------------------ InfiniBand and RoCE ports in one NCCL list
MIXED = "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_4:1/RoCE [RO]; OOB eth0:10.1.0.7<0>"
EINVAL = "misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument"
MIXED_LOG = f"""node-a:515:515 [0] NCCL INFO Bootstrap : Using eth0:10.1.0.7<0>
node-a:515:515 [0] NCCL INFO {MIXED}
node-a:515:515 [0] NCCL INFO Using network IB
node-a:515:602 [0] NCCL INFO Channel 00/0 : 3[1a000] -> 0[1a000] [receive] via NET/IB/2
node-a:515:602 [0] {EINVAL}
"""


def _ib_failure(using: str, error: str) -> dict:
    return {"backend": "nccl", "error": f"init: {error}", "infiniband": True,
            "nccl_log": {"network": "IB", "networks": ["IB"], "hcas": ["mlx5_0", "mlx5_1", "mlx5_4"],
                         "net_channels": {"IB": {"connections": 1, "gdr": 0}}, "proof": [using]}}


def test_a_queue_pair_refused_between_link_layers_nccl_was_given_together_is_the_jobs():
    r = nccl.judge(_ib_failure(MIXED, EINVAL), Options())
    assert verdict(r) == ("fail", "FABRIC_MIXED_ADAPTERS", "job"), r.summary
    assert "NCCL_IB_HCA=mlx5_0,mlx5_1" in (r.remedy or "")


def test_the_same_log_explained_names_the_jobs_rails():
    r = explained(MIXED_LOG)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "FABRIC_MIXED_ADAPTERS", "job"), r.summary


def test_einval_on_one_link_layer_or_another_failure_beside_mixed_layers_is_not_mixed_rails():
    one_layer = "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB/SHARP; OOB ib0:10.1.0.7<0>"
    assert nccl.judge(_ib_failure(one_layer, EINVAL), Options()).code != "FABRIC_MIXED_ADAPTERS"
    timed_out = "misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out"
    assert nccl.judge(_ib_failure(MIXED, timed_out), Options()).code != "FABRIC_MIXED_ADAPTERS"
    completion = "NET/IB : Got completion from peer 10.1.0.8<3001> with error 12, opcode 0, len 0, vendor err 129"
    assert nccl.judge(_ib_failure(MIXED, completion), Options()).owner == "host"


# ------------------------------------------------------------------ "stuck" is a hang
def test_a_run_the_error_says_is_stuck_is_a_hang():
    facts = {"backend": "nccl", "error": "init: all_reduce_perf gets stuck after the bootstrap", "nodes": 2,
             "world_size": 2}
    assert nccl.judge(facts, Options()).code == "NCCL_TIMEOUT"


def test_a_crash_after_the_collective_hung_leaves_the_hang_to_its_own_rules():
    error = ("all_reduce: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE) "
             "| Caught signal 11 (Segmentation fault) in ncclCommAbort")
    assert nccl.judge({"backend": "nccl", "error": error}, Options()).code == "NCCL_TIMEOUT"
