"""Issue 35, batches 190 and 191 (fix190), fixed for the class:
- aws-ofi-nccl on a libfabric provider of an RDMA fabric other than EFA (`Selected Provider is cxi`: HPE Slingshot;
  `verbs;ofi_rxm`, `psm3`, `opx`) is that fabric in use, as `efa` is: never a fall-back to sockets; only the
  providers over IP (`tcp`, `sockets`, `udp`) are sockets under a Libfabric name (verify/checks/nccl/ofirdma.py);
- an nccl-tests table pasted from a report (a `bytes count type ...` column line, one row as long) is no terminal
  wrap, and an `all_reduce_perf` row alone gives its world size by busbw/algbw = 2(n-1)/n (verify/explain/wrap.py,
  nccltests.py).
Real lines from the entries named by slug (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, replayed, verdict
from verify.checks.nccl.ofirdma import ofi_rdma

pytestmark = pytest.mark.unit

POLARIS = "polaris-a100-2x4-slingshot-aws-ofi-nccl-1.6.0-selected-provider-cxi-4-nics-nccl-2.20.5-gdrdma-via-net-aws-libfabric-init-healthy"
HOST = "perlmutter-a100-2x4-host-nccl-2.29.2-aws-ofi-1.19.0-cxi-ofi-nccl-disable-dmabuf-allreduce-4g-72.2-busbw-healthy"
PODMAN = "perlmutter-podman-hpc-8x4-a100-nccl-2.29.2-aws-ofi-1.19.0-cxi-4-nics-host-profile-allreduce-4g-68.96-busbw-healthy"


def _ofi(provider: str, network: str = "AWS Libfabric") -> dict:
    return {"network": network, "networks": [network], "plugin_loaded": network, "ofi_provider": provider,
            "net_channels": {network: {"connections": 4, "gdr": 4}}, "transports": [f"NET/{network}"],
            "proof": [f"NET/OFI Selected Provider is {provider} (found 4 nics)", f"Using network {network}"]}


def test_aws_ofi_nccl_on_slingshot_cxi_is_the_fabric_in_use():
    assert "NET/OFI Selected Provider is cxi (found 4 nics)" in raw(POLARIS)
    assert replayed(POLARIS) == {"nccl": ("pass", None, None)}
    assert verdict(explained(raw(POLARIS))) == ("pass", None, None)


@pytest.mark.parametrize("slug,line", [
    (HOST, "4294967296   1073741824 float  sum    -1     104054   41.28 72.23 0"),
    (PODMAN, "4294967296   1073741824 float  sum    -1     120675   35.59 68.96 0"),
])
def test_a_slingshot_all_reduce_near_its_nics_rate_passes_on_both_roads(slug, line):
    # ~70 GB/s busbw at 4 GiB over 4 x 200 Gb/s cxi NICs: sound, and no InfiniBand rail to measure it against
    assert line in raw(slug) and "Selected provider is cxi" in raw(slug)
    assert replayed(slug) == {"nccl": ("pass", None, None)}
    assert verdict(explained(raw(slug))) == ("pass", None, None)


@pytest.mark.parametrize("provider", ["cxi", "verbs;ofi_rxm", "psm3", "opx"])
def test_libfabric_rdma_providers_are_a_fabric_not_a_fall_back(provider):
    assert ofi_rdma(provider)
    assert nccl_verdict(world_size=8, nodes=2, nccl_log=_ofi(provider)) == ("pass", None, None)


@pytest.mark.parametrize("provider", ["tcp", "tcp;ofi_rxm", "sockets", "udp;ofi_rxd", "efa"])
def test_libfabric_over_ip_or_efa_is_not_read_as_another_rdma_fabric(provider):
    assert ofi_rdma(provider) is None
    if provider != "efa":       # sockets under a Libfabric name between nodes: still a fall-back, never a pass
        assert nccl_verdict(world_size=8, nodes=2, nccl_log=_ofi(provider))[0] != "pass"


def test_a_slingshot_container_without_dev_infiniband_is_not_called_cut_off_from_its_fabric():
    # cxi NICs are /dev/cxi*, not verbs devices: `uverbs` [] beside provider cxi proves no missing device
    assert nccl_verdict(world_size=8, nodes=2, uverbs=[], nccl_log=_ofi("cxi")) == ("pass", None, None)
    assert nccl_verdict(world_size=8, nodes=2, uverbs=[], nccl_log=_ofi("verbs;ofi_rxm"))[0] != "pass"
