# mypy: disable-error-code="arg-type, typeddict-item, index"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's eighth corpus batch, fixed by class.

- Rails turned off: a Disabled port is a fault of the node when it is one of the node's rails (the largest set, four
  or more, of one model and link layer: one NIC per GPU or pair on HGX/DGX and cloud GPU nodes) beside active twins,
  as a Polling one is: it leaves a GPU without its NIC (fail, host). A lone or second port Disabled may be off on
  purpose (warn). A Disabled port on another fabric than the rails, every rail ACTIVE (a front-end Ethernet card
  beside InfiniBand rails), carries none of the GPUs' traffic: no finding. Corpus:
  `h100-roce-ibstat-two-of-eight-cx7-400-rails-disabled`, `h100-ibstat-eight-cx7-ndr-ib-active-beside-cx6dx-ethernet-
  three-disabled` (GPUd's ibstat fixtures), against `gb10-cx7-roce-port-disabled` and `cx6-hdr-port-disabled` (warn).
- Mixed adapters are judged against a recorded environment only: an `ibstat` pasted alone shows no NCCL_IB_HCA
  either way (tests/test_fabric_known.py).
- aws-ofi-nccl's provider is the network's only where the plugin carries the traffic: a plugin that failed its init
  beside `Using network IB` with GPUDirect RDMA on every channel is no fall-back to TCP. Corpus:
  `roce-nccl-2.27-aws-ofi-plugin-init-fails-internal-ib-gdrdma-every-channel`.
"""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import fabric
from verify.options import Options

pytestmark = pytest.mark.unit


def port(phys="LinkUp", rate=400.0, layer="Ethernet"):
    state = "ACTIVE" if phys == "LinkUp" else "DOWN"
    return {"port": 1, "state": state, "phys_state": phys, "rate_gbps": rate, "link_layer": layer}


def nic(i, hca="MT4129", **kw):
    return {"name": f"mlx5_{i}", "hca_type": hca, "ports": [port(**kw)]}


def judge(adapters):
    return fabric.judge({"adapters": adapters, "uverbs": None, "libraries": None}, Options())


@pytest.mark.parametrize("rails", [4, 8])
def test_a_rail_turned_off_beside_active_twins_fails_the_host(rails):
    adapters = [nic(i) for i in range(rails - 1)] + [nic(rails - 1, phys="Disabled", rate=40.0)]
    adapters += [nic(20 + i, hca="MT4125", rate=100.0) for i in range(2)]       # front-end cards, up
    r = judge(adapters)
    assert verdict(r) == ("fail", "FABRIC_PORT_DOWN", "host") and "a rail with no link" in r.summary, r.summary


@pytest.mark.parametrize("ports", [2, 3])
def test_a_port_turned_off_outside_a_rail_set_only_warns(ports):
    adapters = [nic(i, rate=200.0) for i in range(ports - 1)] + [nic(ports - 1, phys="Disabled", rate=40.0)]
    assert verdict(judge(adapters)) == ("warn", "FABRIC_PORT_DOWN", "host")


def test_front_end_ports_turned_off_beside_active_rails_of_another_fabric_are_no_finding():
    rails = [nic(i, layer="InfiniBand") for i in range(8)]
    front = [nic(20, hca="MT4125", rate=100.0)] + [nic(21 + i, hca="MT4125", phys="Disabled", rate=40.0)
                                                    for i in range(3)]
    assert judge(rails + front).status == "pass"
    # the same ports Polling (a cable pulled) are still said; and once a rail is down, nothing is excused
    polling = [nic(20, hca="MT4125", rate=100.0), nic(21, hca="MT4125", phys="Polling", rate=40.0)]
    r = judge(rails + polling)
    assert r.code == "FABRIC_PORT_DOWN" and "mlx5_21" in r.summary, r.summary
    broken = [nic(0, layer="InfiniBand", phys="Polling", rate=10.0)] + rails[1:] + front
    r = judge(broken)
    assert r.status == "fail" and "mlx5_21" in r.summary, r.summary


def test_a_port_of_unknown_link_layer_is_never_excused_as_front_end():
    rails = [nic(i) for i in range(2)]
    odd = {"name": "mlx5_10", "hca_type": "MT4125", "ports": [{"port": 1, "state": "DOWN", "phys_state": "Disabled",
                                                               "rate_gbps": None, "link_layer": None}]}
    assert verdict(judge(rails + [odd])) == ("warn", "FABRIC_PORT_DOWN", "host")


OFI_FAILED_THEN_IB = """\
node8:207007:207007 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v6)
node8:207007:207007 [0] NCCL INFO NET/OFI Selected Provider is verbs;ofi_rxm (found 58 nics)
node8:207007:207007 [0] NCCL INFO NET/OFI Invalid type of PCI bus returned 0
node8:207007:207007 [0] NCCL INFO plugin/net.cc:118 -> 2
node8:207007:207007 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB enp25s0np0:10.99.91.63<0>
node8:207007:207007 [0] NCCL INFO Using network IB
node8:207007:207099 [0] NCCL INFO Channel 00/0 : 1[1] -> 8[0] [receive] via NET/IB/0/GDRDMA
node8:207007:207099 [0] NCCL INFO Channel 01/0 : 8[0] -> 1[1] [send] via NET/IB/1/GDRDMA
"""


def test_an_ofi_plugin_that_failed_its_init_is_no_tcp_fallback_when_nccl_runs_its_own_ib():
    r = ex.explain_text(OFI_FAILED_THEN_IB, "log.txt", Options())
    assert r.status == "pass" and r.code is None, r.summary


def test_the_provider_still_counts_where_the_plugin_carries_the_traffic():
    text = (OFI_FAILED_THEN_IB.replace("NET/OFI Invalid type of PCI bus returned 0\n", "")
            .replace("plugin/net.cc:118 -> 2\n", "").replace("verbs;ofi_rxm", "tcp")
            .replace("Using network IB", "Using network AWS Libfabric")
            .replace("via NET/IB/0/GDRDMA", "via NET/AWS Libfabric/0").replace("via NET/IB/1/GDRDMA", "via NET/AWS Libfabric/1"))
    r = ex.explain_text(text, "log.txt", Options())
    assert r.status != "pass", r.summary


V100_ROWS = """+-------------------------------+----------------------+----------------------+
|   1  Tesla V100-PCIE...  On   | 00008ED0:00:00.0 Off |                    0 |
| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
"""


def test_nvidia_smi_table_rows_pasted_without_their_banner_are_read():
    """A user's excerpt of one GPU's rows (Azure/azhpc-diagnostics#77): read, its power draw ERR! recorded, no fault
    in what it shows (a power reading that failed once is no sign; Azure's maintainers call it transient)."""
    r = ex.explain_text(V100_ROWS, "smi.txt", Options())
    assert (r.name, r.status) == ("gpu", "pass"), r.summary
    assert r.status == "pass" and "1 GPU" in r.summary


def test_a_fan_nvml_cannot_read_is_never_a_pass():
    """nvidia-smi's `ERR!` in the fan column (utkuozdemir/nvidia_gpu_exporter#393): the GPU's cooling is not watched;
    a warning owned by the host, never a pass."""
    rows = V100_ROWS.replace("| N/A   29C    P0   ERR! / 250W", "|ERR!   68C    P2    99W / 250W")
    r = ex.explain_text(rows, "smi.txt", Options())
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host") and "fan_speed" in r.summary, r.summary


def test_lines_that_only_look_like_a_table_row_are_not_a_gpu():
    r = ex.explain_text("| 1  thing  On | 0000:00:00.0 Off | 0 |\nno second row here\n", "x.txt", Options())
    assert r.name != "gpu" or r.status != "pass"
