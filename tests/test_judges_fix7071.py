# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's seventieth and seventy-first corpus batches (NCCL's log over EFA and IB), fixed by class:
- torch's teardown, `Some NCCL operations have failed or timed out`, says either: `verify explain` reads the failure
  it carries (NCCL's `Last error:`, an IB work completion's status) and no hang, where the whole report is pasted as
  one line; the watchdog's own timeout stays a hang;
- an IB work completion's error quoted short (`NCCL WARN NET/IB Got completion error 12`, a title's or a report's
  form) is the completion's status, read by `verify explain` and judged from the facts alike (host);
- a socket connect that failed to a link-local address (169.254.0.0/16, fe80::), or beside one in NCCL's socket
  list (`NET/Socket : Using [0]eth0:... [1]pod-id-link0:169.254.170.23<0>`), at any phase: the job's
  NCCL_SOCKET_IFNAME left a never-routed interface in (no drain); on one node, or with no connect failure, not this
  rule."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------- torch's "failed or timed out" with the cause it carries
TEARDOWN = ("[E ProcessGroupNCCL.cpp:475] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
            "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
REMOTE = ("what(): NCCL error: remote process exited or there was a network error, NCCL version 2.18.1 ncclRemoteError: "
          "A call failed possibly due to a network error or a remote process exiting prematurely.")
COMPLETION = "NET/IB : Got completion from peer 10.2.3.4<51022> with error 12, opcode 129, len 0, vendor err 129"


@pytest.mark.parametrize("sep", [" ", "\n"])
def test_torch_s_failed_or_timed_out_teardown_is_judged_by_the_completion_it_carries(sep):
    r = explained(sep.join([TEARDOWN, REMOTE, f"Last error:{sep}{COMPLETION}"]) + "\n")
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "host"), r.summary
    assert "status 12" in r.summary


def test_the_watchdog_s_own_timeout_stays_a_hang():
    text = ("[rank3]:[E ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for 600042 "
            "milliseconds before timing out.\n" + TEARDOWN + "\n")
    assert explained(text).code == "NCCL_TIMEOUT"


# ------------------------------------------------------------------------- a work completion's error quoted short
@pytest.mark.parametrize("line", ["NCCL WARN NET/IB Got completion error 12",
                                  "node7:1200:1300 [5] NCCL WARN NET/IB : Got completion error 12"])
def test_a_completion_error_quoted_short_is_the_completion_s_status(line):
    r = explained(line + "\n")
    assert verdict(r) == ("fail", "NCCL_FAILED", "host"), r.summary
    facts = {"backend": "nccl", "error": f"collective: {line}", "infiniband": True,
             "nccl_log": {"ib_error": line, "proof": [line]}}
    judged = nccl.judge(facts, Options())
    assert verdict(judged) == ("fail", "NCCL_FAILED", "host") and "status 12" in judged.summary


def test_a_flushed_completion_quoted_short_is_still_the_flushed_rule():
    r = nccl.judge({"backend": "nccl", "error": "collective: NCCL WARN NET/IB Got completion error 5"}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "host") and "flushed" in r.summary


# ----------------------------------------------------------------- a socket connect to a link-local address
SOCKET_LIST = "NET/Socket : Using [0]ens5:10.0.12.7<0> [1]pod-id-link0:169.254.170.23<0>"
REFUSED_LL = "socketPollConnect: connect to 169.254.170.23<40213> returned Connection refused, retrying (5/34)"
REFUSED = "socketPollConnect: connect to 10.0.13.9<40213> returned Connection refused, retrying (5/34)"
FAILED = "all_reduce: RuntimeError: NCCL error: remote process exited or there was a network error"


def _facts(*proof: str, **more):
    return {"backend": "nccl", "error": FAILED, "nccl_log": {"interface": "ens5:10.0.12.7<0>", "proof": list(proof)},
            **more}


@pytest.mark.parametrize("proof", [(SOCKET_LIST, REFUSED_LL), (REFUSED_LL,), (SOCKET_LIST, REFUSED)])
def test_a_socket_connect_failing_at_or_beside_a_link_local_address_is_the_job_s(proof):
    r = nccl.judge(_facts(*proof), Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "NCCL_SOCKET_IFNAME" in (r.remedy or "")


@pytest.mark.parametrize("proof, more", [((SOCKET_LIST,), {}),              # no connect failed
                                          ((REFUSED,), {}),                  # a routable address
                                          ((SOCKET_LIST, REFUSED_LL), {"nodes": 1})])
def test_no_link_local_connect_failure_is_not_the_job_s_by_this_rule(proof, more):
    r = nccl.judge(_facts(*proof, **more), Options())
    assert "link-local" not in r.summary, r.summary


def test_verify_explain_reads_the_connect_failure_and_its_address():
    text = "\n".join(["NET/OFI No eligible providers were found", "NET/IB : No device found.", "Initialized NET plugin "
                      "Socket", SOCKET_LIST, REFUSED_LL, "RuntimeError: NCCL error: remote process exited or there was "
                      "a network error"]) + "\n"
    r = explained(text)
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
