# mypy: disable-error-code="arg-type, typeddict-item, index"
"""Issue 35, item 7: fabric rates only against the adapter's own model, the only InfiniBand port down fails, mixed
adapters without NCCL_IB_HCA warn the job, and a memlock limit known on its own is judged, with its owner."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify.checks import fabric
from verify.checks.fabric import check as fabric_check
from verify.options import Options
from verify.shared import rdma

pytestmark = pytest.mark.unit


def port(state="ACTIVE", rate=400.0, layer="InfiniBand", phys="LinkUp"):
    return {"port": 1, "state": state, "phys_state": phys, "rate_gbps": rate, "link_layer": layer}


def judge(adapters, **more):
    return fabric.judge({"adapters": adapters, "uverbs": None, "libraries": None, **more}, Options())


def test_a_port_of_unknown_model_is_never_called_below_its_maximum():
    # a 200 Gb/s front-end NIC beside 400 Gb/s rails, models not listed (ibstatus prints no CA type)
    r = judge([{"name": f"mlx5_{i}", "ports": [port(rate=400.0, layer="Ethernet")]} for i in range(4)]
              + [{"name": "mlx5_4", "ports": [port(rate=200.0, layer="Ethernet")]}])
    assert r.status == "pass"


def test_the_pci_device_id_names_the_model_where_hca_type_is_missing():
    assert fabric_check.model({"name": "x", "pci_device": "0x1021"}) == "MT4129"
    assert fabric_check.model({"name": "x", "hca_type": "MT4123", "pci_device": "0x1021"}) == "MT4123"
    assert fabric_check.model({"name": "x"}) is None
    # 100 Gb/s: neither the MT4129's 400 nor its NDR200 split rate (verify/checks/fabric/splitrate.py)
    r = judge([{"name": "mlx5_0", "pci_device": "0x1021", "ports": [port(rate=100.0)]}])
    assert verdict(r) == ("warn", "FABRIC_RATE_DEGRADED", "host") and "MT4129" in r.summary


def test_the_probe_reads_the_pci_device_id_and_leaves_it_out_when_absent(tmp_path):
    dev = tmp_path / "sys" / "class" / "infiniband" / "mlx5_0"
    (dev / "device").mkdir(parents=True)
    (dev / "device" / "device").write_text("0x101d\n")
    (tmp_path / "sys" / "class" / "infiniband" / "mlx5_1").mkdir()
    found = rdma.adapters(str(tmp_path))
    assert found is not None and found[0]["pci_device"] == "0x101d" and "pci_device" not in found[1]


def test_the_only_infiniband_port_not_active_fails_beside_active_ethernet():
    # ibstat of a node whose one CX-7 IB port sits in INIT (no subnet manager) beside an active RoCE front-end NIC
    r = judge([{"name": "mlx5_0", "hca_type": "MT4129", "ports": [port("INIT", 400.0, phys="LinkUp")]},
               {"name": "mlx5_1", "hca_type": "MT4125", "ports": [port(rate=100.0, layer="Ethernet")]}])
    assert verdict(r) == ("fail", "FABRIC_PORT_DOWN", "host")


def test_a_rail_with_no_link_beside_active_rails_of_its_model_fails_one_turned_off_warns():
    """Issue 35 (tests/data/real-world/h100-roce-ibstat-two-cx7-rails-polling-and-disabled): an adapter whose port is
    Polling (training, no link partner: cable, optic, switch port) beside ACTIVE adapters of the same model is a rail
    that should carry a GPU's traffic and cannot: fail. Disabled (turned off, perhaps on purpose) warns, as in
    cx6-hdr-port-disabled and gb10-cx7-roce-port-disabled."""
    polling = judge([{"name": "mlx5_0", "hca_type": "MT4129", "ports": [port()]},
                     {"name": "mlx5_1", "hca_type": "MT4129", "ports": [port("DOWN", 10.0, phys="Polling")]}])
    assert verdict(polling) == ("fail", "FABRIC_PORT_DOWN", "host") and "a rail with no link" in polling.summary
    disabled = judge([{"name": "mlx5_0", "hca_type": "MT4129", "ports": [port()]},
                      {"name": "mlx5_1", "hca_type": "MT4129", "ports": [port("DOWN", 10.0, phys="Disabled")]}])
    assert verdict(disabled) == ("warn", "FABRIC_PORT_DOWN", "host")


def test_a_polling_port_that_is_no_rail_only_warns():
    """No false drain (hand-made twins, the host healthy): the second port of a dual-port card whose first port is up
    (left uncabled by design), and a spare adapter of another model or of unknown model beside the rails."""
    dual = judge([{"name": "mlx5_0", "hca_type": "MT4123", "ports": [port(rate=200.0), dict(
        port("DOWN", 10.0, phys="Polling"), port=2)]}, {"name": "mlx5_1", "hca_type": "MT4123", "ports": [port(rate=200.0)]}])
    assert verdict(dual) == ("warn", "FABRIC_PORT_DOWN", "host")
    other = judge([{"name": f"mlx5_{i}", "hca_type": "MT4129", "ports": [port()]} for i in range(2)]
                  + [{"name": "mlx5_2", "hca_type": "MT4119", "ports": [port("DOWN", 10.0, phys="Polling")]},
                     {"name": "mlx5_3", "ports": [port("DOWN", 10.0, phys="Polling")]}])
    assert verdict(other) == ("warn", "FABRIC_PORT_DOWN", "host")


def test_mixed_adapters_without_nccl_ib_hca_warn_the_job_naming_the_variable():
    adapters = [{"name": f"mlx5_{i}", "hca_type": "MT4129", "ports": [port()]} for i in range(2)] + [
        {"name": "mlx5_bond_0", "hca_type": "MT4125", "ports": [port(rate=100.0, layer="Ethernet")]}]
    r = judge(adapters, nccl_env={})
    assert verdict(r) == ("warn", "FABRIC_MIXED_ADAPTERS", "job") and "NCCL_IB_HCA=mlx5_0,mlx5_1" in (r.remedy or "")
    assert judge(adapters, nccl_env={"NCCL_IB_HCA": "mlx5_0,mlx5_1"}).status == "pass"
    # a listing alone (ibstat pasted, no job's environment recorded) shows no NCCL_IB_HCA either way: not judged
    # (corpus: h100-ibstat-eight-cx7-ndr-plus-bf3-bond-all-active, a100-ibstatus-eight-hdr-active-plus-ethernet-40)
    assert judge(adapters).status == "pass"


# https://github.com/openucx/ucx/issues/8229: `ulimit -a` on a bare-metal node, `max locked memory (kbytes, -l) 64`
def test_a_memlock_limit_known_on_its_own_is_judged_the_node_s():
    r = fabric.judge({"memlock": 64 * 1024}, Options())
    assert verdict(r) == ("fail", "FABRIC_MEMLOCK_LOW", "host") and "64" in r.summary


def test_the_same_limit_inside_a_container_with_its_devices_is_the_job_s_never_the_host_s():
    """No false drain: docker's default memlock (64 KiB) in a container given the devices is the job's --ulimit."""
    r = fabric.judge({"adapters": [{"name": "mlx5_0", "hca_type": "MT4129", "ports": [port()]}], "uverbs": ["uverbs0"],
                      "libraries": {"libibverbs.so.1": "loaded"}, "verbs_devices": ["mlx5_0"], "memlock": 64 * 1024},
                     Options())
    assert verdict(r) == ("fail", "FABRIC_MEMLOCK_LOW", "job")


def test_a_sound_memlock_alone_passes_on_what_it_shows():
    """Issue 35 item 1: "nothing to judge" only when no recorded field bears on a fault. A memlock limit does (a low
    one fails alone): read and sound, it passes, saying the adapters, devices and libraries were not assessed
    (tests/data/real-world/orcmd-systemctl-show-limitmemlock-infinity-after-fix-job-completes)."""
    r = fabric.judge({"memlock": "unlimited"}, Options())
    assert verdict(r) == ("pass", None, None) and "not assessed" in r.summary
    assert verdict(fabric.judge({"memlock": 8 << 30}, Options())) == ("pass", None, None)
    assert verdict(fabric.judge({"memlock": 65536}, Options()))[:2] == ("fail", "FABRIC_MEMLOCK_LOW")


def test_a_hang_on_a_node_with_mixed_rails_and_no_nccl_ib_hca_is_the_job_s():
    """No false drain: NVIDIA/nccl-tests issues with 400G CX-7 rails beside 25G/200G Ethernet NICs hang until the
    job names its rails (tests/data/real-world/hgx-h100-mixed-nics-no-ib-hca-hang)."""
    from verify.checks import nccl
    adapters = [{"name": f"mlx5_{i}", "ports": [port()]} for i in range(4)] + [
        {"name": "mlx5_4", "ports": [port(rate=25.0, layer="Ethernet")]}]
    facts = {"backend": "nccl", "nodes": 2, "world_size": 16, "adapters": adapters, "infiniband": True,
             "error": "all_reduce: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE)"}
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_TIMEOUT", "job") and "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3" in (r.remedy or "")
    named = nccl.judge({**facts, "nccl_env": {"NCCL_IB_HCA": "mlx5_0,mlx5_1,mlx5_2,mlx5_3"}}, Options())
    # the rails named, the job's watchdog timeout shows no cause: never the node's without evidence
    # (tests/test_judges_batch14.py); this verify's own run of the same hang stays the host's
    assert verdict(named) == ("fail", "NCCL_TIMEOUT", "job")
    own = nccl.judge({**facts, "nccl_env": {"NCCL_IB_HCA": "mlx5_0,mlx5_1,mlx5_2,mlx5_3"}, "mode": "torchrun"},
                     Options())
    assert verdict(own) == ("fail", "NCCL_TIMEOUT", "host")


def test_memlock_low_in_a_container_using_rdma_fails_the_nccl_check_the_job_s():
    from verify.checks import nccl
    from verify.checks.nccl import ncclog
    log = ncclog.parse("n1:1:1 [0] NCCL INFO Using network IB")
    r = nccl.judge({"backend": "nccl", "sizes": None, "memlock_bytes": 64 * 1024, "nccl_log": log}, Options())
    assert verdict(r) == ("fail", "FABRIC_MEMLOCK_LOW", "job")
    sockets = nccl.judge({"backend": "nccl", "sizes": None, "memlock_bytes": 64 * 1024, "infiniband": False,
                          "efa": False}, Options())
    assert sockets.code != "FABRIC_MEMLOCK_LOW"
