"""Issue 35, batch 180 (fix180), fixed for the class:
- a cloud GPU network that is neither verbs nor EFA, a net plugin's own (GCP's GPUDirect-TCPX `Using network
  GPUDirectTCPX_v7`, TCPXO `Using network FasTrak`, any vendor's), chosen by every rank, is the platform's GPU fabric
  in use: a pass where the log shows no fault, never "no network choice" (verify/checks/nccl/plugfabric.py);
- a net plugin's own registration failing (TCPX's `gpu_tx_reg_mr failed -5`) is the image's plugin build unless the
  log shows the host's, through the facts and through `verify explain` (verify/checks/nccl/plugreg.py).
Real lines from the entries named by slug (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, replayed, verdict

pytestmark = pytest.mark.unit

FASTRAK = "gcp-a3-mega-2x8-gke-tcpxo-fastrak-plugin-1.0.17-all-16-ranks-using-network-fastrak-no-net-socket-healthy"
TCPX = "gcp-a3-high-2x8-gke-gpudirecttcpx-plugin-v3.1.12-using-network-gpudirecttcpx-v7-dmabuf-on-after-repin-healthy"
REGMR = "gcp-a3-high-gke-tcpx-plugin-latest-v3.1.9-on-r580-open-driver-dma-buf-frags-enotty-gpu-tx-reg-mr-failed-connect-res-3-image"


def _log(*networks: str, **more) -> dict:
    return {"network": networks[0], "networks": list(networks), "proof": [f"Using network {n}" for n in networks],
            **more}


@pytest.mark.parametrize("slug,line", [
    (FASTRAK, "tcpxo-wb-0:319:319 [0] NCCL INFO Using network FasTrak"),
    (TCPX, "[0] NCCL INFO Using network GPUDirectTCPX_v7"),
])
def test_a_net_plugin_s_own_network_is_the_platform_s_fabric_in_use(slug, line):
    assert line in raw(slug)
    assert replayed(slug) == {"nccl": ("pass", None, None)}
    assert verdict(explained(raw(slug))) == ("pass", None, None)
    net = line.rsplit(" ", 1)[1]
    assert nccl_verdict(world_size=16, nodes=2, nccl_log=_log(net)) == ("pass", None, None)


def test_a_plugin_network_beside_sockets_or_libfabric_alone_proves_no_fabric():
    # a rank on NCCL's sockets beside the plugin, or aws-ofi-nccl with no provider shown: not the class
    assert nccl_verdict(world_size=16, nodes=2, nccl_log=_log("FasTrak", "Socket"))[0] != "pass"
    assert nccl_verdict(world_size=16, nodes=2, nccl_log=_log("AWS Libfabric")) == ("skip", "FACTS_INCOMPLETE", None)


def test_a_net_plugin_s_own_registration_failure_is_the_image_s():
    warn = "tcpxResult_t gpu_tx_reg_mr(...):223 NCCL WARN gpu_tx_reg_mr failed -5"
    assert warn in raw(REGMR)
    assert replayed(REGMR) == {"nccl": ("fail", "NCCL_FAILED", "image")}
    assert verdict(explained(raw(REGMR))) == ("fail", "NCCL_FAILED", "image")
    trace = "TCPXCHECK /nccl-plugin-gpudirecttcpx/src/net_tcpx.cc:793 -> 3"
    assert nccl_verdict(error=f"init: {warn}; {trace}") == ("fail", "NCCL_FAILED", "image")


def test_verbs_registration_or_a_plugin_out_of_memory_is_not_the_plugin_build():
    # NCCL's own verbs call is the host's (peermem, dma-buf) and ENOMEM is locked memory: neither is this class
    verbs = "init: net_ib.cc:577 NCCL WARN NET/IB : Call to ibv_reg_mr failed with error Bad address"
    assert nccl_verdict(error=verbs)[2] != "image"
    enomem = "init: tcpxResult_t gpu_tx_reg_mr(...):223 NCCL WARN gpu_tx_reg_mr failed -12"
    assert nccl_verdict(error=enomem)[2] != "image"
