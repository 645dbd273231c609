"""Issue 35, batches 277 to 282 after the lead's review (the entries replay in tests/test_gpu_rules.py and
tests/test_explain.py): NCCL's socket transport beside `Failed to open libibverbs.so` where nothing shows an RDMA fabric
is no fall-back (7 of 8 translators: a workstation, pods of one host, Ethernet-only nodes; NCCL brings up sockets when
its IB transport and net plugins give no device, src/net.cc); an RDMA fabric shown keeps the image's fall-back."""
from __future__ import annotations

import pytest

from tests.judging import explained, replayed, verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

LOG = """node-a:811:811 [0] NCCL INFO Bootstrap : Using {iface}:10.12.0.17<0>
node-a:811:811 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)
node-a:811:811 [0] NCCL INFO Failed to open libibverbs.so[.1]
node-a:811:811 [0] NCCL INFO NET/Socket : Using [0]{iface}:10.12.0.17<0>
node-a:811:811 [0] NCCL INFO Using network Socket
"""


def _facts(**over):
    base = {"backend": "nccl", "nodes": 2, "sizes": None, "error": None, "nccl_log": {
        "verbs_missing": "Failed to open libibverbs.so[.1]", "networks": ["Socket"], "interface": "eth0:10.1.0.5<0>",
        "net_channels": {"Socket": {"connections": 8, "gdr": 0}},
        "proof": ["Failed to open libibverbs.so[.1]", "NET/Socket : Using [0]eth0:10.1.0.5<0>"]}}
    base.update(over)
    return base


@pytest.mark.parametrize("slug", [
    "dell-r760-l40s-eks-anywhere-kubeflow-pytorchjob-2x2-etcd-rdzv-nccl-2.21.5-no-libibverbs-socket-eth0-fsdp-epoch-completes-healthy",
    "openshift-vllm-four-ranks-one-host-nccl-failed-to-open-libibverbs-socket-ens5-no-fabric-needed",
    "radeon-r9700-vllm-ray-container-rccl-failed-to-open-libibverbs-socket-enp165s0f1np1-two-ranks-no-rdma-adapter-shown",
])
def test_real_sockets_without_libibverbs_and_no_fabric_shown_are_no_fall_back(slug):
    assert replayed(slug)["nccl"][1] != "NCCL_NET_FALLBACK"


def test_on_ethernet_no_fall_back_is_judged():
    r = explained(LOG.format(iface="eth0"))
    assert r.code != "NCCL_NET_FALLBACK"


def test_on_ipoib_the_image_s_missing_libibverbs_fails():
    assert verdict(explained(LOG.format(iface="ib0"))) == ("fail", "NCCL_NET_FALLBACK", "image")


@pytest.mark.parametrize("shown", [
    {"infiniband": True},
    {"efa": True},
    {"adapters": [{"name": "mlx5_0", "ports": [{"port": 1, "state": "ACTIVE"}]}]},
    {"nccl_env": {"NCCL_IB_HCA": "mlx5_0"}},
])
def test_a_fabric_shown_keeps_the_image_s_fall_back(shown):
    r = judge(CHECKS["nccl"], _facts(**shown), Options())
    assert r.code == "NCCL_NET_FALLBACK" and r.owner == "image", (shown, r.summary)


def test_an_error_beside_it_is_still_judged():
    # the collective failed: the missing libibverbs is not waved away where the run itself broke
    r = judge(CHECKS["nccl"], _facts(error="NCCL WARN Net : Connection closed by remote peer"), Options())
    assert r.status == "fail"


def test_nothing_shown_and_no_error_is_no_fault():
    r = judge(CHECKS["nccl"], _facts(), Options())
    assert r.code != "NCCL_NET_FALLBACK" and r.status in ("pass", "skip")


# The CRI log files kubelet keeps under /var/log/pods (containerd's and CRI-O's `<RFC 3339> stderr F <line>`, P for a
# partial line), stacked on Go's own log stamp: read as the tool's lines (k8s-device-plugin#444's paste, batch 283)
CRI = """2023-10-19T11:11:54.957587844+08:00 stderr F 2023/10/19 03:11:54 Loading NVML
2023-10-19T11:11:54.957723331+08:00 stderr F 2023/10/19 03:11:54 Failed to initialize NVML: could not load NVML library.
2023-10-19T11:11:54.957728922+08:00 stderr F 2023/10/19 03:11:54 If this is a GPU node, did you set the docker default runtime to `nvidia`?
"""


def test_cri_log_file_lines_are_read_as_the_tool_s():
    from verify.explain import launchers
    assert launchers.prefixes(CRI.splitlines()[1]) == "Failed to initialize NVML: could not load NVML library."
    r = explained(CRI, "device-plugin.log")
    assert r.name == "gpu" and "libnvidia-ml" in r.summary, r.summary


def test_a_cri_stamp_without_its_stream_word_is_kubectl_s_stamp_only():
    from verify.explain import launchers
    assert launchers.prefixes("2023-10-19T11:11:54Z stdout: fine") == "stdout: fine"


# aws-ofi-nccl giving up at its start (`Couldn't find any optimal provider`, `OFI NCCL failure: 2`) as the run's own
# failure, with nothing showing the EFA device refusing: the software that found no provider, never a drain
# (aws-ofi-nccl#67, batch 284); the device's own refusal beside it keeps the host's
P4D = "p4d-2x8-a100-40gb-after-nccl-2.10.3-upgrade-own-aws-ofi-nccl-build-couldnt-find-any-optimal-provider-efa-message-transfer-failure-2-image"


def test_the_plugin_giving_up_at_its_start_is_no_drain():
    status, code, owner = replayed(P4D)["nccl"]
    assert (status, code) == ("fail", "NCCL_FAILED") and owner != "host"


def test_the_efa_device_refusing_beside_it_stays_the_host_s():
    facts = {"backend": "nccl", "nodes": 2, "world_size": 16, "sizes": None,
             "error": "init: find_ofi_provider:543 NET/OFI Couldn't find any optimal provider", "nccl_log": {
                 "ofi_error": "NET/OFI Couldn't find any optimal provider",
                 "proof": ["infiniband efa_0: Failed to process command ALLOC_PD (opcode 14) comp_status 1 err -12"]}}
    r = judge(CHECKS["nccl"], facts, Options())
    assert (r.status, r.owner) == ("fail", "host"), r.summary
