"""Issue 35's fortieth corpus batch (InfiniBand listings as health checks print them, translated blind): the readers it
called for, by class (the batch's entries themselves replay in tests/test_gpu_rules.py and tests/test_explain.py).

- LBNL NHC's `check_hw_ib` run with `-d` lists every port it reads under /sys/class/infiniband (`Found ACTIVE (LinkUp)
  IB Port mlx5_0:1 (200 Gb/sec)`, lbnl_hw.nhc of https://github.com/mej/nhc): `verify explain` reads those lines as the
  node's listing, judged as an `ibstatus` would be, whatever else the debug run printed.
- NHC's own failure (`check_hw_ib:  No IB port is ACTIVE (LinkUp 100 Gb/sec).`) does not tell a port down from one at
  another rate, but either fails the site's own check of the node's fabric: the host's port (batch 278 and three
  earlier translators; tests/test_explain_nhc.py). The OFED version mismatch it reports is said, never a pass and never
  "nothing to judge" (warn, not assessed, host).
- `ibstatus` with no device named, whose glob of /sys/class/infiniband/* matched nothing (`Fatal error:  device '*':
  sys files not found`), is FACTS.md's empty listing (`adapters` []): no RDMA device. Beside kernel lines that show an
  InfiniBand adapter on PCI with its IB driver loaded, it is a fault no field holds: not assessed, never "no fabric".
"""
from __future__ import annotations

import pytest

from verify import explain as ex
from verify.explain import ib, nhc
from verify.options import Options

pytestmark = pytest.mark.unit

NHC_DEBUG = """# nhc -d -e 'check_hw_ib 200'
DEBUG:  Debugging activated via -d option.
DEBUG:  Evaluating single check line:  check_hw_ib 200
[1700000000] - DEBUG:  Found ACTIVE (LinkUp) IB Port mlx5_0:1 (200 Gb/sec)
[1700000000] - DEBUG:  Found DOWN (Polling) IB Port mlx5_1:1 (10 Gb/sec)
"""


def _verdict(text: str, name: str = "nhc.txt") -> tuple[str, str | None, str | None]:
    r = ex.explain_text(text, name, Options())
    return r.status, r.code, r.owner


def test_nhc_debug_lines_are_the_nodes_listing():
    facts = nhc.parse(NHC_DEBUG)
    kind = ex.kind_of(NHC_DEBUG)
    assert kind is not None and kind.name == "NHC check_hw_ib" and kind.check == "fabric"
    ports = {(a["name"], p["port"]): (p["state"], p["phys_state"], p["rate_gbps"]) for a in facts["adapters"]
             for p in a["ports"]}
    assert ports == {("mlx5_0", 1): ("ACTIVE", "LinkUp", 200.0), ("mlx5_1", 1): ("DOWN", "Polling", 10.0)}
    assert all(a["hca_type"] is None and a["driver"] is None for a in facts["adapters"])     # not printed: unknown


def test_a_port_nhc_lists_down_is_judged_as_in_any_listing():
    """Beside an active port it warns; the node's only port down fails (the fabric judge's rule, issue 35 item 7)."""
    assert _verdict(NHC_DEBUG) == ("warn", "FABRIC_PORT_DOWN", "host")
    only = "DEBUG:  Found DOWN (Polling) IB Port mlx5_1:1 (10 Gb/sec)\n"
    assert _verdict(only) == ("fail", "FABRIC_PORT_DOWN", "host")


def test_an_nhc_listing_of_active_ports_passes_beside_the_checks_own_file_errors():
    """A site's patched check reading sysfs files a driver lacks prints bash's errors and a suffix: neither is a port."""
    text = ("/etc/nhc/scripts/lbnl_hw.nhc: line 134: /sys/class/infiniband/mlx4_0/device/current_link_speed: No such "
            "file or directory\n[1700000000] - DEBUG:  Found ACTIVE (LinkUp) IB Port mlx4_0:1 (40 Gb/sec) with PCI-e "
            "link 8x 8 GT/s\n")
    assert _verdict(text) == ("pass", None, None)


def test_a_port_listed_twice_keeps_its_last_reading():
    text = ("DEBUG:  Found DOWN (Polling) IB Port mlx5_0:1 (10 Gb/sec)\n"
            "DEBUG:  Found ACTIVE (LinkUp) IB Port mlx5_0:1 (100 Gb/sec)\n")
    assert [len(a["ports"]) for a in nhc.parse(text)["adapters"]] == [1]
    assert _verdict(text) == ("pass", None, None)


@pytest.mark.parametrize(("line", "want"), [
    ("ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port is ACTIVE (LinkUp 200 Gb/sec).",
     ("fail", "FABRIC_PORT_DOWN", "host")),
    ("ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port mlx5_0:1 is ACTIVE (LinkUp).",
     ("fail", "FABRIC_PORT_DOWN", "host")),
    ("20240101 10:00:00 /usr/libexec/nhc/node-mark-offline n01 check_hw_ib:  Version mismatch between kernel OFED "
    "drivers and userspace OFED libraries.", ("warn", "HEALTH_NOT_ASSESSED", "host")),
])
def test_nhcs_own_failure_is_judged_never_nothing_to_judge(line, want):
    assert nhc.parse(line)["adapters"] is None        # no port named: the listing is unknown, not empty
    r = ex.explain_text(line + "\n", "nhc.log", Options())
    assert (r.status, r.code, r.owner) == want
    assert "check_hw_ib" in r.summary and "ibstat" in r.remedy and "nvidia-smi" not in r.remedy


def test_nhcs_failure_beside_active_ports_at_another_rate_is_no_pass():
    text = ("DEBUG:  Found ACTIVE (LinkUp) IB Port mlx5_0:1 (100 Gb/sec)\n"
            "ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port is ACTIVE (LinkUp 200 Gb/sec).\n")
    assert _verdict(text)[0] == "warn"


GLOB_EMPTY = "# ibstatus\nFatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)\n"


def test_ibstatus_finding_no_device_is_the_empty_listing():
    assert ib.parse(GLOB_EMPTY)["adapters"] == []
    assert _verdict(GLOB_EMPTY, "ibstatus.txt")[:2] == ("skip", "FABRIC_NONE")


def test_ibstatus_missing_one_named_device_says_nothing_of_the_others():
    text = "Fatal error:  device 'mlx5_3': sys files not found (/sys/class/infiniband/mlx5_3/ports)\n"
    assert not ib.detect(text)


def test_no_device_beside_an_ib_adapter_on_pci_with_its_driver_is_not_no_fabric():
    text = GLOB_EMPTY + (
        "[   12.100000] mlx4_core 0000:81:00.0: PCIe link speed is 8.0GT/s, device supports 8.0GT/s\n"
        "[   12.400000] <mlx4_ib> mlx4_ib_add: mlx4_ib: Mellanox ConnectX InfiniBand driver v4.0-0\n")
    r = ex.explain_text(text, "node.txt", Options())
    assert (r.status, r.code, r.owner) == ("warn", "HEALTH_NOT_ASSESSED", "host")
    assert "0000:81:00.0" in r.summary and "firmware" in r.remedy


def test_an_ethernet_only_adapter_without_its_ib_driver_stays_no_rdma_device():
    """mlx5_core alone: a ConnectX run as a plain NIC, with no IB driver, has no RDMA device by design."""
    text = GLOB_EMPTY + "[    5.0] mlx5_core 0000:3b:00.0: firmware version: 16.35.2000\n"
    assert _verdict(text, "node.txt")[:2] == ("skip", "FABRIC_NONE")


def test_a_listing_with_adapters_ignores_the_kernels_driver_lines():
    text = ("Infiniband device 'mlx4_0' port 1 status:\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n"
            "\trate:\t\t 56 Gb/sec (4X FDR)\n"
            "[ 3.0] mlx4_en 0000:0d:00.0: UDP RSS is not supported on this device\n"
            "[ 3.1] <mlx4_ib> mlx4_ib_add: mlx4_ib: Mellanox ConnectX InfiniBand driver v2.2-1 (Feb 2014)\n")
    assert ib.unread(text) == []
    assert _verdict(text, "node.txt")[0] == "pass"
