# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's fifty-third and fifty-fourth corpus batches (NCCL's group forming; the driver stack), fixed by class:
- torch's rendezvous store whose client timed out (or failed) connecting to a loopback address: the store's server
  is a process of the job on the same host that never served it; no network is involved: NCCL_TIMEOUT, owner job,
  through the facts and through `verify explain` (which reads the client's line only for a loopback store: a remote
  one's timeout names no cause);
- NCCL's socket connect refused by the network stack (`Software caused connection abort`, `No route to host`) where
  every rank is on one node and NCCL chose the interface: the node's network stack (its firewall, an interface with
  no usable address), owner host, whether or not the error kept its `misc/socket.cc` prefix; a refused or timed-out
  connect there (a peer rank not listening) is not the host's;
- across nodes, the bootstrap on a link-local address (169.254.0.0/16, fe80::): the job's, which names the shared
  interface (NCCL_SOCKET_IFNAME); `No route to host` on a shared interface (or none logged): the nodes' firewall or
  route, the host's; on a host-local bridge (docker0, docker's 172.17.0.0/16) it stays the job's;
- `verify explain` reads NCCL's socket connect that spent its retries (`retrying (34/34)`) as the group failing to
  form; a retry with retries left is no failure;
- modprobe's `could not insert 'nvidia': Key was rejected by service` (Secure Boot refusing the module's signature):
  no driver is loaded, DRIVER_ERROR, owner host (driver_errors' `module_rejected`), through the facts and through
  `verify explain` of the journal; modprobe refused inside a container (`Operation not permitted`) is not read."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import gpu, nccl
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ the rendezvous store on loopback
STORE_TIMEOUT = ("TimeoutError: The client socket has timed out after 600s while trying to connect to "
                 "({addr}, 29511).")


@pytest.mark.parametrize("addr", ["127.0.0.1", "localhost", "::1"])
def test_a_store_client_timing_out_on_loopback_is_the_jobs_own_launch(addr):
    facts = {"backend": "nccl", "error": "init: " + STORE_TIMEOUT.format(addr=addr)}
    assert verdict(nccl.judge(facts, Options())) == ("fail", "NCCL_TIMEOUT", "job")


def test_a_store_client_timing_out_on_loopback_explained_is_the_jobs():
    text = ("  File \"torch/distributed/rendezvous.py\", line 176, in _create_c10d_store\n    return TCPStore(\n"
            + STORE_TIMEOUT.format(addr="127.0.0.1") + "\n")
    assert verdict(explained(text)) == ("fail", "NCCL_TIMEOUT", "job")


def test_a_remote_store_client_timing_out_is_not_read_as_a_cause():
    text = STORE_TIMEOUT.format(addr="10.20.0.7") + "\n"
    assert explained(text).owner != "host"


# ------------------------------------------------------------------ NCCL's connect within one node
ABORT = "socketStartConnect: Connect to 10.3.0.9<43211> failed : Software caused connection abort"


@pytest.mark.parametrize("error", [f"init: {ABORT}", f"init: misc/socket.cc:483 NCCL WARN {ABORT}",
                                   "init: socketPollConnect: Connect to 10.3.0.9<43211> returned 113(No route to host) "
                                   "errno 115(Operation now in progress)"])
def test_ncclS_bootstrap_refused_by_the_stack_within_one_node_is_the_nodes(error):
    facts = {"backend": "nccl", "nodes": 1, "world_size": 4, "error": error,
             "nccl_log": {"interface": "eth0:10.3.0.9<0>", "proof": []}}
    assert verdict(nccl.judge(facts, Options())) == ("fail", "NCCL_FAILED", "host")


def test_a_single_node_connect_refused_is_a_peer_not_listening_never_the_host():
    facts = {"backend": "nccl", "nodes": 1, "world_size": 4,
             "error": "init: misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.3.0.9<43211> failed : "
                      "Connection refused"}
    assert nccl.judge(facts, Options()).owner != "host"


def test_a_single_node_bootstrap_on_the_jobs_own_interface_is_not_called_the_node_s_stack():
    facts = {"backend": "nccl", "nodes": 1, "world_size": 4, "error": f"init: {ABORT}",
             "nccl_env": {"NCCL_SOCKET_IFNAME": "ib0"}}
    assert "of its own node" not in nccl.judge(facts, Options()).summary


NCCL_TESTS_ONE_HOST = """# nThread 1 nGpus 4 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  1201 on    node07 device  0 [0x1a] Tesla V100-SXM2-16GB
#  Rank  1 Group  0 Pid  1201 on    node07 device  1 [0x1b] Tesla V100-SXM2-16GB
#  Rank  2 Group  0 Pid  1201 on    node07 device  2 [0x3d] Tesla V100-SXM2-16GB
#  Rank  3 Group  0 Pid  1201 on    node07 device  3 [0x3e] Tesla V100-SXM2-16GB
node07:1201:1201 [0] NCCL INFO Bootstrap : Using eth0:10.3.0.9<0>
node07:1201:1201 [0] misc/socket.cc:483 NCCL WARN """ + ABORT + "\n"


def test_a_single_node_nccl_tests_bootstrap_refused_by_the_stack_explained_is_the_nodes():
    assert verdict(explained(NCCL_TESTS_ONE_HOST)) == ("fail", "NCCL_FAILED", "host")


# ------------------------------------------------------------------ NCCL's connect across nodes
NO_ROUTE = ("socketPollConnect: Connect to 10.8.1.12<51234> returned 113(No route to host) errno 115(Operation now "
            "in progress)")


def _across(interface: str | None, error: str = NO_ROUTE) -> dict:
    return {"backend": "nccl", "nodes": 2, "error": f"init: {error}",
            "nccl_log": {"interface": interface, "proof": [f"misc/socket.cc:533 NCCL WARN {error}"]}}


@pytest.mark.parametrize("interface", ["ens5:169.254.3.1<0>", "enp1s0:fe80::5:1%enp1s0<0>"])
def test_a_bootstrap_on_a_link_local_address_across_nodes_is_the_jobs(interface):
    for error in (NO_ROUTE, "socketStartConnect: Connect to 169.254.3.1<4000> failed : Connection refused"):
        assert verdict(nccl.judge(_across(interface, error), Options())) == ("fail", "NCCL_FAILED", "job")


@pytest.mark.parametrize("interface", ["bond0:10.8.1.11<0>", None])
def test_no_route_to_a_peer_node_on_a_shared_interface_is_the_nodes_network(interface):
    assert verdict(nccl.judge(_across(interface), Options())) == ("fail", "NCCL_FAILED", "host")


@pytest.mark.parametrize("interface", ["docker0:172.17.0.1<0>", "eth0:172.17.0.3<0>", "virbr0:192.168.122.1<0>"])
def test_a_bootstrap_across_nodes_on_a_host_local_bridge_is_the_jobs_interface_choice(interface):
    assert verdict(nccl.judge(_across(interface), Options())) == ("fail", "NCCL_FAILED", "job")


RETRIES = "gpu-a:2201:2290 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying ({n}/34) after sleep for 100 msec\n"


def test_ncclS_connect_that_spent_its_retries_is_read_as_the_group_not_forming():
    text = "".join(RETRIES.format(n=n) for n in (32, 33, 34))
    r = explained(text)
    assert verdict(r) == ("fail", "NCCL_FAILED", "host"), r.summary


def test_a_connect_retry_with_retries_left_is_no_failure():
    assert explained(RETRIES.format(n=3)).status != "fail"


# ------------------------------------------------------------------ the module refused under Secure Boot
REJECTED = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"
SMI = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
       "NVIDIA driver is installed and running.")


def test_the_nvidia_module_refused_for_its_key_is_the_hosts():
    facts = {"nvml_library": True, "nvml_error": SMI,
             "driver_errors": [{"status": "module_rejected", "code": None, "text": REJECTED}]}
    assert verdict(gpu.judge(facts, Options())) == ("fail", "DRIVER_ERROR", "host")


@pytest.mark.parametrize("line", [REJECTED, "insmod: ERROR: could not insert module nvidia.ko: Key was rejected by service",
                                  "modprobe: ERROR: could not insert 'nvidia_drm': Required key not available"])
def test_the_journal_s_module_refusal_explained_is_the_hosts(line):
    text = (f"$ nvidia-smi\n{SMI}\n\n"
            f"Jan 12 09:01:10 ws01 systemd-modules-load[412]: {line}\n"
            f"Jan 12 09:01:11 ws01 gdm3[7055]: {line}\n")
    r = explained(text)
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host"), r.summary


def test_modprobe_refused_inside_a_container_is_not_a_driver_fault():
    text = ("Jan 12 09:01:10 pod-7 entrypoint[1]: modprobe: ERROR: could not insert 'nvidia': Operation not "
            "permitted\n" * 3)
    assert explained(text).owner != "host"
