"""Issue 35's eighty-third, eighty-fourth and eighty-sixth corpus batches, fixed by class:
- a memlock verdict rests on a call that pins memory failing with ENOMEM: the errno must be that call's own, not a
  queue pair's ENOMEM printed after it on the same line (mercury-libfabric-verbs-rxm-4050-clients-...);
- ibstat aborted (`ibpanic:`) in an excerpt whose earlier adapters were cut (a lone `...`): no whole listing, never a
  pass; a port it shows down is still judged (ibstat-partial-listing-mlx5-7-ib-active-200-then-ibpanic-...); the abort
  after a whole listing (a100-azure-ibstat-eight-mt4124-...) or an elision alone (nvlink-8gpu-cx7-...) still pass;
- an Ethernet port Disabled (its netdev down: a setting) beside InfiniBand ports that are all up is no fault; an
  InfiniBand port Disabled beside its twin stays a lost rail (a800-slurm-ibstatus-two-hdr-ib-rails-...);
- the container toolkit on the host finding no libnvidia-ml (`nvidia-container-cli: initialization error: load
  library failed: libnvidia-ml.so.1`) is the host's driver install, as `nvml error: driver not loaded` is, on both
  roads (rocky-9.3-nvidia-container-cli-list-load-library-failed-...)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options
from verify.shared import rdma

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ memlock: the errno is the pinning call's own
# mercury-libfabric-verbs-rxm-4050-clients-one-node-ibv-create-qp-enomem-ulimit-l-unlimited-job-scale-not-memlock
MERCURY = ("the other clients all report -61 while calling HGClass::new_with_opt, and libfabric report error : "
           "ibv_create_cq: Invalid argument(22) or ibv_create_qp: Cannot allocate memory(12).")


def test_a_queue_pair_s_enomem_after_a_cq_s_einval_is_no_memlock_evidence():
    assert rdma.pinning_failed(MERCURY) is None


def test_a_cq_s_own_enomem_is_still_memlock_evidence():
    assert rdma.pinning_failed("ibv_create_cq() failed: Cannot allocate memory")
    assert rdma.pinning_failed("NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory")


def test_the_mercury_report_explained_drains_nothing():
    r = explained(MERCURY + "\nI checked ulimit -l, it's unlimited, and my available memory is more than 350g.\n")
    assert verdict(r)[0] != "fail", r.summary


# ------------------------------------------------------------------ an ibstat listing whose adapters were cut
# ibstat-partial-listing-mlx5-7-ib-active-200-then-ibpanic-stat-of-mlx5-8-no-such-file-gpud-uses-partial-output
def _ibstat(state: str, phys: str, elided: bool = True) -> str:
    return (("...\n\n" if elided else "") + f"CA 'mlx5_7'\n\tCA type: ...\n\tNumber of ports: 1\n\tPort 1:\n"
            f"\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: 200\n\t\tLink layer: InfiniBand\n"
            "ibpanic: [1323906] main: stat of IB device 'mlx5_8' failed: No such file or directory\n")


def test_a_listing_ibstat_aborted_whose_earlier_adapters_were_elided_is_no_pass():
    r = explained(_ibstat("Active", "LinkUp"), "ibstat.txt")
    assert (r.name, *verdict(r)) == ("fabric", "skip", "FACTS_INCOMPLETE", None), r.summary


def test_a_port_down_beside_the_elision_is_still_judged():
    r = explained(_ibstat("Down", "Polling"), "ibstat.txt")
    assert (r.name, verdict(r)[1]) == ("fabric", "FABRIC_PORT_DOWN"), r.summary


def test_a_whole_listing_then_ibstat_s_abort_on_a_vanished_device_still_passes():
    # a100-azure-ibstat-eight-mt4124-vf-hdr-200-active-then-ibpanic-mlx5-8-exit-255: the SRE passes it
    r = explained(_ibstat("Active", "LinkUp", elided=False), "ibstat.txt")
    assert (r.name, *verdict(r)) == ("fabric", "pass", None, None), r.summary


def test_an_elision_alone_before_a_whole_ibstat_still_passes():
    # nvlink-8gpu-cx7-mt4129-ibstat-mlx5-5-active-400-ib-sm-lid-359-nccl-init-internal-error: the SRE passes it
    text = _ibstat("Active", "LinkUp").split("ibpanic")[0]
    r = explained(text, "ibstat.txt")
    assert (r.name, *verdict(r)) == ("fabric", "pass", None, None), r.summary


# ------------------------------------------------------------------ an Ethernet port switched off beside IB rails
# a800-slurm-ibstatus-two-hdr-ib-rails-active-200-roce-100-active-second-roce-port-disabled-nccl-picks-ib
def _port(layer: str, state: str, phys: str, rate: float) -> dict:
    return {"port": 1, "state": state, "phys_state": phys, "rate_gbps": rate, "link_layer": layer}


def _fabric(ports: list[dict]) -> tuple:
    adapters = [{"name": f"mlx5_{i}", "driver": None, "hca_type": None, "ports": [p]} for i, p in enumerate(ports)]
    r = judge(CHECKS["fabric"], {"root": "/", "adapters": adapters}, Options())
    return verdict(r), r.summary


def test_an_ethernet_port_disabled_beside_active_infiniband_rails_is_a_setting():
    got, summary = _fabric([_port("Ethernet", "ACTIVE", "LinkUp", 100), _port("InfiniBand", "ACTIVE", "LinkUp", 200),
                            _port("Ethernet", "DOWN", "Disabled", 100), _port("InfiniBand", "ACTIVE", "LinkUp", 200)])
    assert got == ("pass", None, None), summary


def test_an_ethernet_port_polling_beside_them_is_still_down():
    got, summary = _fabric([_port("InfiniBand", "ACTIVE", "LinkUp", 200), _port("Ethernet", "DOWN", "Polling", 100)])
    assert got[1] == "FABRIC_PORT_DOWN", summary


def test_an_infiniband_port_disabled_beside_its_twin_stays_a_lost_rail():
    got, summary = _fabric([_port("InfiniBand", "ACTIVE", "LinkUp", 200), _port("InfiniBand", "DOWN", "Disabled", 200)])
    assert got == ("warn", "FABRIC_PORT_DOWN", "host"), summary


def test_an_ethernet_port_disabled_beside_an_infiniband_port_down_is_still_said():
    got, summary = _fabric([_port("InfiniBand", "DOWN", "Polling", 200), _port("Ethernet", "DOWN", "Disabled", 100),
                            _port("InfiniBand", "ACTIVE", "LinkUp", 200)])
    assert got[1] == "FABRIC_PORT_DOWN" and "mlx5_1" in summary, summary


# ------------------------------------------------------------------ the toolkit on the host without the driver's library
# rocky-9.3-nvidia-container-cli-list-load-library-failed-libnvidia-ml-so-1-toolkit-without-driver-userspace
TOOLKIT = ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
           "object file: no such file or directory")


def test_the_toolkit_finding_no_libnvidia_ml_is_the_host_s_driver_install():
    r = judge(CHECKS["gpu"], {"torch": None, "nvml_library": False, "nvml_error": TOOLKIT}, Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host"), r.summary


def test_its_raw_line_is_explained_alike():
    r = explained("nvidia-container-cli list\n" + TOOLKIT + "\n")
    assert (r.name, *verdict(r)) == ("gpu", "fail", "DRIVER_ERROR", "host"), r.summary


def test_a_process_s_own_missing_library_is_not_this_rule():
    r = judge(CHECKS["gpu"], {"torch": None, "nvml_library": False, "nvml_error": None}, Options())
    assert verdict(r)[1] != "DRIVER_ERROR", r.summary
