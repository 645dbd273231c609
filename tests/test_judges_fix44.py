# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's forty-fourth corpus batch, fixed by class:
- libfabric's EFA provider aborting because it could not post its internal receive buffers with -12 (ENOMEM): those
  buffers are a packet pool it registers (pins) as it grows it, so the pinning ran out: the fabric's `memlock_error`,
  judged as a locked-memory limit too low (FABRIC_MEMLOCK_LOW), read by `verify explain`; the -12 alone, or the same
  EFA error with another errno, names no pinning and is not;
- an `ibstat`/`ibstatus`/`ibv_devinfo` listing pasted with NCCL's log is the nccl facts' `adapters`, as a translation
  of the same file records them: NCCL's fall-back to sockets is judged against the adapters the file shows;
- NCCL's log showing libibverbs not loadable and its socket transport brought up (`NET/Socket : Using [0]...`), no net
  plugin carrying the traffic: NCCL's network is the socket transport even where no `Using network` line is quoted,
  the image's (no libibverbs), failed where InfiniBand is shown (an IPoIB interface); where no fabric is shown,
  no fall-back (batch 277's review)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import fabric, nccl
from verify.options import Options
from verify.shared import rdma

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ EFA's receive buffers could not be pinned
EFA_ABORT = """[1,3]<stderr>:Libfabric EFA provider has encountered an internal error:
[1,3]<stderr>:
[1,3]<stderr>:Libfabric error: (-12) Cannot allocate memory
[1,3]<stderr>:EFA internal error: (4112) Failure to post internal receive buffers
[1,3]<stderr>:
[1,3]<stderr>:Your application will now abort().
"""
EFA_WARN_LINE = ("libfabric:41532:1718323032::efa:ep_ctrl:efa_base_ep_write_eq_error():322<warn> Writing error to EQ: "
                 "err: Cannot allocate memory (12) prov_errno: Failure to post internal receive buffers (4112)")


@pytest.mark.parametrize("text", [EFA_ABORT, EFA_WARN_LINE], ids=["abort-block", "warn-line"])
def test_efa_failing_to_post_its_registered_receive_buffers_with_enomem_is_a_memlock_limit_too_low(text):
    r = explained(text)
    assert verdict(r) == ("fail", "FABRIC_MEMLOCK_LOW", "host"), r.summary
    assert "Failure to post internal receive buffers" in r.summary and "was not read" in r.summary


def test_the_efa_abort_block_recorded_on_one_line_is_judged_again_the_same():
    failed = rdma.pinning_failed(EFA_ABORT)
    assert failed and "\n" not in failed and rdma.pinning_failed(failed) == failed
    r = fabric.judge({"memlock_error": failed}, Options())
    assert verdict(r) == ("fail", "FABRIC_MEMLOCK_LOW", "host"), r.summary


@pytest.mark.parametrize("text", [
    "Libfabric error: (-12) Cannot allocate memory\n",                                    # no call that pins named
    EFA_ABORT.replace("(-12) Cannot allocate memory", "(-5) Input/output error"),          # another errno
    EFA_ABORT.replace("(4112) Failure to post internal receive buffers", "(4113) Failure posting handshake to peer"),
])
def test_an_enomem_that_names_no_pinning_or_another_errno_is_no_memlock_evidence(text):
    assert rdma.pinning_failed(text) is None
    assert explained(text).code != "FABRIC_MEMLOCK_LOW"


# ------------------------------------------------------------------ a host listing pasted with NCCL's log
STATUS = """Infiniband device 'mlx5_2' port 1 status:
\tdefault gid:\t fe80:0000:0000:0000:b859:9fff:fe12:3456
\tbase lid:\t 0x0
\tsm lid:\t\t 0x0
\tstate:\t\t {state}
\tphys state:\t {phys}
\trate:\t\t 100 Gb/sec (4X EDR)
\tlink_layer:\t Ethernet
"""
SOCKET_LOG = """node7:3301:3301 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation
node7:3301:3301 [0] NCCL INFO NET/IB : No device found.
node7:3301:3301 [0] NCCL INFO NET/Socket : Using [0]eth2:10.0.3.7<0>
node7:3301:3301 [0] NCCL INFO Using network Socket
"""


def test_an_ibstatus_listing_pasted_with_a_socket_fall_back_shows_the_adapters_it_had():
    text = STATUS.format(state="4: ACTIVE", phys="5: LinkUp") + "\n" + SOCKET_LOG
    r = explained(text)
    assert r.name == "nccl" and verdict(r) == ("fail", "NCCL_NET_FALLBACK", "job"), r.summary
    assert "devices are present" in r.summary
    # the log alone shows no adapter, no second node and no error: on a host without RDMA adapters sockets are
    # NCCL's only network, nothing to judge (batch 115's SRE reading, tests/test_judges_fix115.py)
    assert verdict(explained(SOCKET_LOG)) == ("skip", "FACTS_INCOMPLETE", None)


def test_the_listing_s_ports_all_down_make_the_fall_back_the_host_s():
    r = explained(STATUS.format(state="1: DOWN", phys="3: Disabled") + "\n" + SOCKET_LOG)
    assert verdict(r) == ("fail", "FABRIC_PORT_DOWN", "host"), r.summary      # the listing's own verdict, as specific
    assert "also read as NCCL INFO log: nccl fail NCCL_NET_FALLBACK" in " ".join(r.details)


def test_a_listing_beside_nccl_on_its_rdma_fabric_adds_no_fault():
    log = ("node7:3301:3301 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/RoCE [RO]; OOB eth2:10.0.3.7<0>\n"
           "node7:3301:3301 [0] NCCL INFO Using network IB\n"
           "node7:3301:3320 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n")
    r = explained(STATUS.format(state="4: ACTIVE", phys="5: LinkUp") + "\n" + log)
    assert r.status in ("pass", "skip") and r.owner is None, r.summary


# ------------------------------------------------------------------ no libibverbs, and NCCL's socket transport up
NO_VERBS = """gpu-a-17:811:811 [0] NCCL INFO Bootstrap : Using {iface}:10.12.0.17<0>
gpu-a-17:811:811 [0] NCCL INFO Failed to open libibverbs.so[.1]
gpu-a-17:811:811 [0] NCCL INFO NET/Socket : Using [0]{iface}:10.12.0.17<0>
"""


def test_no_libibverbs_and_the_socket_transport_on_ipoib_fail_the_image():
    r = explained(NO_VERBS.format(iface="ibp12s0"))
    assert verdict(r) == ("fail", "NCCL_NET_FALLBACK", "image"), r.summary
    assert "libibverbs" in r.summary and "NET/Socket" in r.summary


def test_no_libibverbs_on_a_node_whose_fabric_is_not_shown_is_no_fall_back():
    # batch 277's review: on nodes without RDMA adapters an image without libibverbs loses nothing (7 of 8
    # translators; tests/test_judges_batch277.py): nothing shows a fabric, so no fall-back is judged
    r = explained(NO_VERBS.format(iface="eth0"))
    assert r.code != "NCCL_NET_FALLBACK" and r.status in ("pass", "skip"), r.summary


def test_the_socket_transport_s_line_without_libibverbs_missing_is_no_choice():
    # NCCL 2.4's bootstrap printed the same words before its IB transport came up: the line alone proves nothing
    log = ("master:11715:11984 [0] NCCL INFO NET/Socket : Using [0]ib0:192.168.11.1<0>\n"
           "master:11715:11984 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:192.168.11.1<0>\n")
    assert explained(log).code != "NCCL_NET_FALLBACK"


def test_a_net_plugin_carrying_the_traffic_is_not_a_fall_back_to_sockets():
    facts = {"backend": "nccl", "infiniband": True, "nccl_log": {
        "verbs_missing": "Failed to open libibverbs.so[.1]", "plugin_loaded": "Libfabric", "ofi_provider": "efa",
        "networks": [], "net_channels": {}, "proof": ["NET/Socket : Using [0]eth0:10.1.0.5<0>"]}}
    assert nccl.judge(facts, Options()).code != "NCCL_NET_FALLBACK"


def test_one_node_without_libibverbs_only_warns():
    facts = {"backend": "nccl", "nodes": 1, "infiniband": True, "nccl_log": {
        "verbs_missing": "Failed to open libibverbs.so[.1]", "networks": [], "net_channels": {}, "interface": "ib0",
        "proof": ["Failed to open libibverbs.so[.1]", "NET/Socket : Using [0]ib0:10.1.0.5<0>"]}}
    assert verdict(nccl.judge(facts, Options())) == ("warn", "NCCL_NET_FALLBACK", "image")
