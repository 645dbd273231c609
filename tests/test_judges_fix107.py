# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's hundred-and-seventh corpus batch (NCCL's socket and bootstrap failures as launchers print them), fixed
by class:
- a connect its peer refused (ECONNREFUSED: NCCL's `socketPollConnect: connect to ... returned Connection refused`,
  `Connect to ... failed : Connection refused`, torch's store `errno: 111 - Connection refused`) is the failure: the
  peer host answered and nothing listens on that port (a rank gone, restarted or never started): NCCL_FAILED, owner
  job, on one node or across nodes; beside a timeout the hang's rules decide, and `No route to host` stays the
  network's;
- `verify explain` reads a run of NCCL's connect retries (at least three, one connect, counts climbing) that its log
  ends on as the group not forming, its last attempt not shown; one retry, or retries NCCL got past, are no failure;
- `verify explain` reads torch's `Last error:` when NCCL's message is spaced (`Bootstrap : no socket interface
  found`, `NET/IB : ...`), under torch's `[rank0]:` prefix: the socket selection matches no interface, the job's."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.options import Options

pytestmark = pytest.mark.unit


# ---------------------------------------------------------- a refused connect: the peer answered, nobody listens
# the corpus's h20-k8s-2x8-torchrun-max-restarts-2-after-elastic-restart-socketpollconnect-connection-refused-...
RETRY = ("bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO socketPollConnect: connect to 10.29.224.148<52333> "
         "returned Connection refused, retrying ({n}/34) after sleep for {n}00 msec\n")
REFUSED = "socketPollConnect: connect to 10.29.224.148<52333> returned Connection refused, retrying (21/34) after sleep for 2100 msec"


@pytest.mark.parametrize("error, more", [
    (f"init: {REFUSED}", {"nodes": 2, "nccl_env": {"NCCL_SOCKET_IFNAME": "eth0"}}),
    (f"init: {REFUSED}", {"nodes": 1}),
    ("init: misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : Connection refused", {}),
    ("init: torch.distributed.DistNetworkError: The client socket has failed to connect to [node-0]:29500 (errno: 111 - "
     "Connection refused).", {"nodes": 2}),
    (f"all_reduce: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5 Last error: "
     f"{REFUSED}", {}),
])
def test_a_connect_the_peer_refused_is_the_job_s(error, more):
    r = nccl.judge({"backend": "nccl", "error": error, **more}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "ECONNREFUSED" in r.summary


@pytest.mark.parametrize("error", [
    # a hang said beside the refusals (the corpus's a3-high-slurm-... entry): the hang's rules decide
    "init: multiple NCCL timeout errors during NCCL group initialisation; NCCL INFO Call to connect returned "
    "Connection refused, retrying",
    # the network's answer, not a listener's
    "init: socketPollConnect: connect to 10.0.0.4<52333> returned No route to host, retrying (34/34)",
])
def test_a_refusal_beside_a_hang_or_an_unreachable_peer_is_not_this_rule(error):
    r = nccl.judge({"backend": "nccl", "error": error, "nodes": 2}, Options())
    assert r.status == "fail" and "ECONNREFUSED" not in r.summary and r.owner == "host", r.summary


# ---------------------------------------------------------- verify explain: a run of retries the log ends on
@pytest.mark.parametrize("prefix", ["bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO ", ""])
def test_a_run_of_refused_retries_ending_the_log_is_the_group_not_forming(prefix):
    text = "".join(RETRY.format(n=n).replace(RETRY[:RETRY.index("socketPoll")], prefix) for n in (18, 19, 20, 21))
    r = explained(text)
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "10.29.224.148<52333>" in r.summary


@pytest.mark.parametrize("text", [
    RETRY.format(n=3),                                                           # one retry: a listener late
    RETRY.format(n=3) + RETRY.format(n=4),                                       # two: still within a late start
    "".join(RETRY.format(n=n) for n in (3, 4, 5)) +                              # NCCL went on: it connected
    "bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO Connected all rings\n",
    "".join(RETRY.format(n=n) for n in (5, 3, 4)),                               # no climbing run of one connect
])
def test_retries_with_nothing_ending_on_them_are_no_failure(text):
    assert explained(text).status != "fail"


def test_a_run_of_unreachable_retries_is_the_network_s():
    text = "".join(RETRY.format(n=n).replace("Connection refused", "No route to host") for n in (7, 8, 9))
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "host")


# ---------------------------------------------------------- torch's Last error, NCCL's spaced message
# the corpus's open-r1-multimodal-rank0-broadcast-nccl-2.21.5-internal-error-bootstrap-no-socket-interface-found-...
TORCH = ("[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
         "ProcessGroupNCCL.cpp:2588, internal error - please report this issue to the NCCL developers, NCCL version "
         "2.21.5\n[rank0]: ncclInternalError: Internal check failed.\n[rank0]: Last error:\n{last}\n")


@pytest.mark.parametrize("last", ["[rank0]: Bootstrap : no socket interface found",
                                  "Bootstrap : no socket interface found",
                                  "[rank3]: NET/Socket : No usable listening interface found"])
def test_torch_s_last_error_naming_no_socket_interface_is_the_job_s_not_nccl_s_bug(last):
    r = explained(TORCH.format(last=last))
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "interface" in r.summary


def test_an_internal_error_with_no_last_error_stays_the_image_s():
    r = explained(TORCH.format(last="[rank0]: "))
    assert verdict(r) == ("fail", "NCCL_FAILED", "image"), r.summary


def test_a_spent_connect_that_names_its_address_is_read_as_well():
    # 2.19's spent retry (`connect returned ...`) was read; later releases name the address (`connect to ... returned`)
    r = explained(RETRY.format(n=34))
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_nccl_before_2_19_retrying_a_refused_connect_to_the_end_of_its_log_is_read_too():
    # NCCL <= 2.18 prints no count (https://github.com/wenet-e2e/wenet/issues/959's line, under NCCL's prefix)
    line = "gpu-a:101:201 [0] NCCL INFO Call to connect returned Connection refused, retrying\n"
    assert verdict(explained(line * 4)) == ("fail", "NCCL_FAILED", "job")
    assert explained(line).status != "fail"


def test_torch_s_nccl_error_colon_with_only_the_remote_error_class_is_bare():
    # torch's `RuntimeError: NCCL error: remote process exited ...` (the corpus's eks-efa-pods-... excerpt's form),
    # nothing else said: no cause, the job's, no drain
    error = "all_reduce: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5"
    assert verdict(nccl.judge({"backend": "nccl", "error": error}, Options())) == ("fail", "NCCL_FAILED", "job")
