"""Issue 35's thirty-fourth corpus batch (translated blind from real output): the rules it called for, by class (the
batch's entries themselves replay in tests/test_gpu_rules.py and tests/test_explain.py).

- An active RDMA port of a known Mellanox/NVIDIA model (ConnectX-3 on) below every rate the model is sold for (10
  Gb/s: 1 GbE reads 2.5 Gb/s) trained at a fall-back speed: the host's cable, module or switch port. It fails where no
  other port of the node is active, and warns beside ports that are; a port of unknown model is not judged.
- NCCL's RoCE GID probe answered EINVAL (`read failed in ncclIbRoceGetVersionNum: Invalid argument`: a GID index the
  container cannot see, which later NCCL releases skip) is the image's NCCL; `verify explain` reads the WARN as the
  failure it is, with or without NCCL's tag.
- `ibv_modify_qp` that cannot reach the peer (ETIMEDOUT, unreachable) over a GID index the job pinned
  (NCCL_IB_GID_INDEX) is the job's choice of GID; without the job's pin it is not the job's.
"""
from __future__ import annotations

from typing import Any

import pytest

from verify import explain as ex
from verify.checks import CHECKS
from verify.checks.fabric import check as fabric
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit


def _port(rate: float, layer: str = "Ethernet", state: str = "ACTIVE") -> dict[str, Any]:
    return {"port": 1, "state": state, "phys_state": "LinkUp", "rate_gbps": rate, "width": None, "speed": None,
            "link_layer": layer}


def _adapter(name: str, hca: str | None, *ports: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "driver": None, "hca_type": hca, "pci_device": None, "ports": list(ports)}


def _fabric(*adapters: dict[str, Any]) -> Any:
    return {"root": "/", "adapters": list(adapters), "uverbs": None, "libraries": None, "verbs_devices": None,
            "memlock": None, "nccl_env": None}


def test_the_only_active_port_below_every_rate_of_its_model_fails_the_host():
    r = fabric.judge(_fabric(_adapter("mlx5_0", "MT4119", _port(2.5))), Options())
    assert (r.status, r.code, r.owner) == ("fail", "FABRIC_RATE_DEGRADED", "host")


def test_a_port_at_the_fall_back_speed_beside_an_active_rail_warns():
    r = fabric.judge(_fabric(_adapter("mlx5_0", "MT4129", _port(400.0, "InfiniBand")),
                             _adapter("mlx5_1", "MT4117", _port(2.5))), Options())
    assert (r.status, r.code, r.owner) == ("warn", "FABRIC_RATE_DEGRADED", "host")


@pytest.mark.parametrize("adapter", [_adapter("mlx5_0", "MT4117", _port(10.0)),       # a 10 GbE link: rated
                                     _adapter("rocep1s0", None, _port(2.5)),           # model unknown
                                     _adapter("mlx5_0", "MT4125", _port(2.5, state="DOWN"))])
def test_a_rated_rate_or_an_unknown_model_is_no_fall_back(adapter):
    r = fabric.judge(_fabric(adapter), Options())
    assert r.code != "FABRIC_RATE_DEGRADED"


IBSTAT_1G = """CA 'mlx5_4'
        CA type: MT4121
        Number of ports: 1
        Firmware version: 16.35.2000
        Hardware version: 0
        Node GUID: 0x0c42a10300b1c2d4
        System image GUID: 0x0c42a10300b1c2d4
        Port 1:
                State: Active
                Physical state: LinkUp
                Rate: 2.5
                Base lid: 0
                LMC: 0
                SM lid: 0
                Capability mask: 0x00010000
                Port GUID: 0x0e42a1fffeb1c2d4
                Link layer: Ethernet
"""


def test_ibstat_of_a_port_at_the_fall_back_speed_is_explained_as_degraded():
    r = ex.explain_text(IBSTAT_1G, "ibstat.txt", Options())
    assert (r.name, r.status, r.code, r.owner) == ("fabric", "fail", "FABRIC_RATE_DEGRADED", "host")


GID_EINVAL = ("gpu-7:2211:2290 [3] NCCL INFO NET/IB : Using [0]mlx5_3:1/RoCE [RO]; OOB net1:10.20.1.7<0>\n"
              "gpu-7:2211:2301 [3] NCCL WARN NET/IB : read failed in ncclIbRoceGetVersionNum: Invalid argument\n"
              "gpu-7:2211:2301 [3] NCCL INFO transport/net_ib.cc:1004 -> 2\n")


@pytest.mark.parametrize("text", [GID_EINVAL, "WARN NET/IB: read failed in ncclIbRoceGetVersionNum: Invalid argument\n"])
def test_nccl_s_gid_probe_answered_einval_is_the_image_s_nccl(text):
    r = ex.explain_text(text, "nccl.log", Options())
    assert (r.name, r.status, r.code, r.owner) == ("nccl", "fail", "NCCL_FAILED", "image")


def _nccl(error: str, env: dict[str, str] | None) -> dict[str, Any]:
    return {"backend": "nccl", "sizes": None, "error": error, "nccl_env": env,
            "nccl_log": {"networks": [], "net_channels": {}, "ib_no_device": False, "hca_gdr": {}, "env": {},
                         "rank_networks": {}, "proof": [error]}}


def test_another_errno_of_the_gid_probe_is_not_the_image_s():
    r = judge(CHECKS["nccl"], _nccl("NET/IB: read failed in ncclIbRoceGetVersionNum: Input/output error", None),
              Options())
    assert r.status == "fail" and r.owner != "image"


MODIFY_QP = ("ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_2:1, "
             "curr state INIT, next state RTR, local GID index 0")


@pytest.mark.parametrize("error", [MODIFY_QP, "Call to ibv_modify_qp failed with error Network is unreachable"])
def test_a_queue_pair_that_cannot_reach_its_peer_over_the_job_s_pinned_gid_is_the_job_s(error):
    r = judge(CHECKS["nccl"], _nccl(error, {"NCCL_IB_GID_INDEX": "0"}), Options())
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "job")
    assert "NCCL_IB_GID_INDEX" in (r.remedy or "")


def test_without_the_job_s_pin_the_unreached_peer_is_not_the_job_s():
    r = judge(CHECKS["nccl"], _nccl(MODIFY_QP, {"NCCL_SOCKET_IFNAME": "eth0"}), Options())
    assert r.status == "fail" and r.owner != "job"
