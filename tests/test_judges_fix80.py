# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's eightieth corpus batch (NCCL logs: the fabric chosen), fixed by class:
- loopback proves one node: NCCL's sockets on `lo` (its interface, or NCCL_SOCKET_IFNAME=lo) join ranks of one host
  only, so no network fall-back is judged there; the job's own switch-off of the fabric is still said;
- a socket its peer or the network ended (aborted, reset, refused, closed) is no consequence of using sockets: the
  fall-back the log also shows is said, never the failure's owner;
- `ibv_modify_qp` refused with ENODEV (errno 19): the RoCE GID's netdev is not in the rank's namespace (a pod's
  share of the adapter, a GID the job pinned): the job's, never a drain;
- NCCL's GPU-initiated networking over GDAKI failing (`DOCA failure 21`, NCCL 2.30.7): the image's NCCL (the job's
  where it forced GDAKI), never a drain; and `verify explain` reads such a failure (NCCL 2.30.7 names the function
  in its WARNs and traces, and several ranks WARN the same failure): a failure it can read is never "nothing to
  judge"."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.checks.nccl.loopback import on_loopback
from verify.options import Options

pytestmark = pytest.mark.unit


def judged(facts: dict):
    return nccl.judge({"backend": "nccl", **facts}, Options())


# ------------------------------------------------------------------------------------ loopback proves one node
# hami-core-vllm-pod-tp2-ib-no-device-socket-on-lo-nccl-socket-ifname-lo-one-pod-no-net-fault
POD = "test-7b94f88dfd-dxs9c:958:958 [1] NCCL INFO "
LOOPBACK_LOG = "".join(POD + line + "\n" for line in (
    "NCCL_SOCKET_IFNAME set by environment to lo", "NET/IB : No device found.", "NET/IB : Using [RO]; OOB lo:127.0.0.1<0>",
    "NET/Socket : Using [0]lo:127.0.0.1<0>", "Using network Socket"))


def _socket_log(interface: str | None, env: dict) -> dict:
    return {"network": "Socket", "networks": ["Socket"], "interface": interface, "ib_no_device": True, "hcas": [],
            "env": env, "proof": ["NET/IB : No device found.", "Using network Socket"]}


def test_sockets_on_loopback_are_no_fall_back_of_a_network_between_nodes():
    r = judged({"nccl_log": _socket_log("lo:127.0.0.1<0>", {"NCCL_SOCKET_IFNAME": "lo"})})
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None), r.summary
    assert "loopback (lo:127.0.0.1<0>)" in r.summary


def test_a_raw_log_of_sockets_on_loopback_is_explained_alike():
    r = explained(LOOPBACK_LOG)
    assert (r.name, *verdict(r)) == ("nccl", "skip", "FACTS_INCOMPLETE", None), r.summary


def test_the_same_fall_back_on_a_routable_interface_is_still_said():
    # across nodes with the fabric shown; with no adapter and no error shown, sockets are the only network of
    # nodes without RDMA, one or two (batch 115's and 149's SRE reading, tests/test_judges_fix115.py, fix149.py)
    r = judged({"nodes": 2, "infiniband": True, "nccl_log": _socket_log("eth0:10.1.2.3<0>", {})})
    assert verdict(r) == ("fail", "NCCL_NET_FALLBACK", "job"), r.summary
    for nodes in (None, 2):
        r = judged({"nodes": nodes, "nccl_log": _socket_log("eth0:10.1.2.3<0>", {})})
        assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None), r.summary


def test_the_job_s_own_switch_off_of_the_fabric_on_loopback_is_still_said():
    log = {**_socket_log("lo:127.0.0.1<0>", {"NCCL_IB_DISABLE": "1"}), "ib_no_device": False}
    assert verdict(judged({"nccl_log": log})) == ("warn", "FABRIC_NCCL_FORCED_SOCKET", "job")


@pytest.mark.parametrize("interface, env, nodes, want", [
    ("lo:127.0.0.1<0>", {}, None, True), ("lo:::1<0>", {}, None, True), (None, {"NCCL_SOCKET_IFNAME": "=lo"}, None, True),
    (None, {"NCCL_SOCKET_IFNAME": "^lo,docker"}, None, False), (None, {"NCCL_SOCKET_IFNAME": "lo,eth0"}, None, False),
    ("eth0:10.0.0.1<0>", {"NCCL_SOCKET_IFNAME": "lo"}, None, False), ("lo:127.0.0.1<0>", {}, 2, False)])
def test_what_proves_loopback(interface, env, nodes, want):
    assert on_loopback({"nodes": nodes}, {"interface": interface, "env": env}) is want


# -------------------------------------------------------------- a socket its peer ended is not the fall-back's
# two-ubuntu-hosts-nccl-2.18.3-no-libibverbs-socket-ens4-proxy-connect-10.0.0.2-software-caused-connection-abort
NO_VERBS = {"network": "Socket", "networks": ["Socket"], "interface": "ens4:10.0.0.1<0>",
            "verbs_missing": "Failed to open libibverbs.so[.1]",
            "proof": ["Failed to open libibverbs.so[.1]", "NET/Socket : Using [0]ens4:10.0.0.1<0>", "Using network Socket"]}


@pytest.mark.parametrize("error", [
    "init: socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort",
    "init: proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x7f6f18cb7f40; transport/net.cc:288 -> 3"])
def test_a_socket_its_peer_ended_is_not_owned_by_the_fall_back(error):
    r = judged({"nodes": 2, "error": error, "verbs_loads": False, "nccl_log": NO_VERBS})
    assert verdict(r) == ("fail", "NCCL_FAILED", "host"), r.summary
    assert any("libibverbs" in d and "not this failure's cause" in d for d in r.details)


@pytest.mark.parametrize("log", [NO_VERBS, {}])
def test_a_connect_the_stack_aborted_across_nodes_is_the_network_between_them_whatever_file_printed_it(log):
    """h100-2x8-sglang-...-software-caused-connection-abort and this batch's two Ubuntu hosts: the host's, as `No route
    to host`; NCCL's own `misc/socket.cc` prefix does not make it the job's bootstrap interface."""
    error = ("init: misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused "
             "connection abort")
    r = judged({"nodes": 2, "error": error, "verbs_loads": False if log else None, "nccl_log": log})
    assert verdict(r) == ("fail", "NCCL_FAILED", "host") and "aborted by the network stack" in r.summary, r.summary


def test_an_aborted_connect_to_a_link_local_peer_stays_the_job_s():
    error = ("init: misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to fe80::966d:ae03:a2:8cf0%ib1<17943> "
             "failed : Software caused connection abort")
    assert verdict(judged({"nodes": 2, "error": error})) == ("fail", "NCCL_FAILED", "job")


def test_a_peer_that_closed_mid_run_stays_the_rule_of_its_own():
    """verify/checks/nccl/midrun.py: a peer rank's process exited (the job's), whatever network NCCL fell back to."""
    r = judged({"nodes": 2, "error": "all_reduce: misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by "
                "remote peer node1<57557>", "verbs_loads": False, "nccl_log": NO_VERBS})
    assert verdict(r) == ("fail", "NCCL_FAILED", "job") and "libibverbs" not in r.summary, r.summary


def test_a_hang_beside_the_same_fall_back_stays_the_fall_back_s():
    r = judged({"nodes": 2, "error": "all_reduce: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)",
                "mode": "torchrun group: rank 0 of 16", "verbs_loads": False, "nccl_log": NO_VERBS})
    assert verdict(r) == ("fail", "NCCL_TIMEOUT", "image"), r.summary


# ------------------------------------------------------------------------------ ibv_modify_qp refused with ENODEV
# vllm-v100-pods-two-nodes-nccl-ib-gid-0-link-local-ibv-modify-qp-no-such-device-errno-19
NODEV = "misc/ibvwrap.cc:206 NCCL WARN Call to ibv_modify_qp failed with error No such device errno 19"


def test_a_queue_pair_refused_with_enodev_is_the_rank_s_network_set_up():
    r = judged({"nodes": 2, "infiniband": True, "verbs_loads": True, "error": f"init: {NODEV}"})
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "ENODEV" in r.summary


def test_enodev_in_nccl_2_27_s_words_is_the_same():
    r = judged({"nodes": 2, "error": "init: misc/ibvwrap.cc:376 NCCL WARN Call to ibv_modify_qp failed with 19 No such "
                "device, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3"})
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_enodev_under_a_pinned_gid_names_the_job_s_gid():
    r = judged({"nodes": 2, "error": f"init: {NODEV}", "nccl_env": {"NCCL_IB_GID_INDEX": "0"}})
    assert verdict(r) == ("fail", "NCCL_FAILED", "job") and "GID index 0" in r.summary


def test_the_raw_enodev_lines_are_explained_alike():
    text = ("leader-0:1639:1915 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1040 mtu 5 GID 0 (80FE/1A8A41FEFF21A75E)\n"
            f"leader-0:1639:1915 [0] {NODEV}\nleader-0:1639:1915 [0] NCCL INFO transport/net_ib.cc:937 -> 2\n")
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "job")


def test_another_errno_of_the_same_call_is_not_this_rule():
    r = judged({"nodes": 2, "error": "init: misc/ibvwrap.cc:206 NCCL WARN Call to ibv_modify_qp failed with error "
                "Invalid argument errno 22"})
    assert "ENODEV" not in r.summary


# ------------------------------------------------------------------------------------ GIN over GDAKI, NCCL 2.30.7
# worker-0-nccl-2.30.7-gin-gdaki-port-grh-required-doca-failure-21-all-reduce-r-2-feature-gap
GDAKI = ("worker-0:862519:862553 [0] transport/net_ib/gdaki/gin_host_gdaki.cc:431 (gdakiConnectQp) NCCL WARN DOCA failure 21\n"
         "worker-0:862519:862553 [0] NCCL INFO transport/net_ib/gdaki/gin_host_gdaki.cc:683 (ncclGinGdakiCreateContext) -> 2\n"
         "worker-0:862519:862552 [1] transport/net_ib/gdaki/gin_host_gdaki.cc:431 (gdakiConnectQp) NCCL WARN DOCA failure 21\n")


def test_a_gdaki_failure_is_the_image_s_nccl_not_the_node():
    r = judged({"infiniband": True, "error": "init: transport/net_ib/gdaki/gin_host_gdaki.cc:431 (gdakiConnectQp) "
                "NCCL WARN DOCA failure 21"})
    assert verdict(r) == ("fail", "NCCL_FAILED", "image"), r.summary


def test_a_gdaki_failure_the_job_forced_is_the_job_s():
    r = judged({"error": "init: NCCL WARN DOCA failure 21", "nccl_env": {"NCCL_GIN_TYPE": "3"}})
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_explain_reads_the_failure_of_several_ranks_in_nccl_2_30_7_s_format():
    r = explained(GDAKI)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "image"), r.summary
    assert "(ncclGinGdakiCreateContext) -> 2" in r.summary


def test_a_2_30_7_trace_reads_as_the_older_one():
    """NCCL 2.30.7 prints `file:line (function) -> ret`; a bootstrap failure in that form is still a failure."""
    text = ("n1:10:20 [0] misc/socket.cc:584 (socketPollConnect) NCCL WARN socketPollConnect: Connect to 10.0.0.9<4242> "
            "returned 113(No route to host) errno 113(No route to host)\n"
            "n1:10:20 [0] NCCL INFO misc/socket.cc:620 (socketConnect) -> 6\n"
            "n1:10:20 [0] NCCL INFO bootstrap.cc:290 (bootstrapInit) -> 6\n")
    r = explained(text)
    assert r.status == "fail" and "init:" in r.summary, r.summary


def test_a_warn_nccl_went_on_after_is_still_no_failure():
    text = GDAKI + "worker-0:862519:862553 [0] NCCL INFO Using network IB\n"
    assert explained(text).status != "fail"


# ------------------------------------------------------------- aws-ofi-nccl's log alone: the EFA fabric proven or not
# p4d-sagemaker-aws-ofi-nccl-1.11.0-efa-found-4-nics-network-aws-libfabric-excerpt-shows-no-collective (a strict xfail:
# its translator skips) against a10g-two-nodes-efa-ofi-plugin-... (a strict xfail the other way: its translator passes)
def test_the_efa_provider_and_its_network_pass_on_the_log_alone():
    log = {"network": "AWS Libfabric", "networks": ["AWS Libfabric"], "ofi_provider": "efa",
           "proof": ["NET/OFI Selected Provider is efa (found 4 nics)", "Using network AWS Libfabric"]}
    r = judged({"efa": True, "nccl_log": log})
    assert verdict(r) == ("pass", None, None) and "bandwidth not assessed" in r.summary, r.summary


def test_aws_ofi_nccl_s_lines_without_a_provider_prove_no_fabric():
    log = {"network": "AWS Libfabric", "networks": ["AWS Libfabric"], "proof": ["Using network AWS Libfabric"]}
    assert verdict(judged({"nccl_log": log})) == ("skip", "FACTS_INCOMPLETE", None)
