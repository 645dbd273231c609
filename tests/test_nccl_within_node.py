# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""NCCL's log alone, of ranks that reach each other inside one node (issue 35 items 1 and 2: "nothing to judge" only
when no recorded field bears on a fault). Every connection the log lists is intra-node (SHM, P2P) and none goes
through the network: the transport chosen is the evidence, the network NCCL would use across nodes is never
exercised (a `NET/IB : No device found` there is no fall-back), and the pass says bandwidth was not assessed. A
connection through the network, a group said to span nodes, or a failure in the log is never passed this way
(corpus: `nccl-2.27-two-ranks-one-host-ib-no-device-shm`, from NVIDIA/nccl#1936)."""
from __future__ import annotations

import pytest

from verify import explain as ex
from verify.checks import nccl
from verify.checks.nccl import ncclog
from verify.options import Options

pytestmark = pytest.mark.unit

HEAD = ("h:11:11 [0] NCCL INFO NCCL version 2.27.5+cuda12.9\n"
        "h:11:20 [0] NCCL INFO NET/IB : No device found.\n"
        "h:11:20 [0] NCCL INFO NET/Socket : Using [0]eth0:192.168.69.159<0>\n")
SHM = "h:11:21 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
P2P = ("h:11:21 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
       "h:12:22 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC\n")
NET = "h:11:21 [0] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via NET/Socket/0\n"


def explained(text: str):
    return ex.explain_text(text, "log.txt", Options())


@pytest.mark.parametrize("body", [SHM, P2P, SHM + P2P], ids=["shm", "p2p", "both"])
def test_ranks_joined_inside_one_node_pass_on_the_log_alone(body):
    r = explained(HEAD + body)
    assert (r.name, r.status, r.code) == ("nccl", "pass", None), r.summary
    assert "within one node" in r.summary and "bandwidth not assessed" in r.summary


def test_a_connection_through_the_network_is_no_such_pass():
    r = explained(HEAD + SHM + NET)
    assert r.status != "pass", r.summary


def test_a_group_said_to_span_nodes_is_no_such_pass():
    log = ncclog.parse(HEAD + SHM)
    r = nccl.judge({"backend": "nccl", "nodes": 2, "nccl_log": log}, Options())
    assert r.status != "pass", r.summary
    one = nccl.judge({"backend": "nccl", "nodes": 1, "nccl_log": log}, Options())
    assert one.status == "pass", one.summary


def test_a_failure_in_the_log_is_judged_not_passed():
    r = explained(HEAD + SHM + "h:11:21 [0] NCCL WARN Error : ring 0 does not loop back to start (4 != 0)\n"
                  "h:11:21 [0] NCCL INFO init.cc:1134 -> 3\n")
    assert (r.status, r.code) == ("fail", "NCCL_FAILED"), r.summary
