"""Issue 35: InfiniBand's fabric-wide tools read by `verify explain` by FACTS.md's "Translating iblinkinfo" and
"Translating the fabric's error counters" (verify/explain/iblinkinfo.py, ibcounters.py, ibdiagnet.py). Excerpts are
the corpus's real ones (batch 263 and 230, their URLs in each entry's source.md) or lines laid out exactly as the
tools' sources print them: rdma-core infiniband-diags/iblinkinfo.c (print_port, print_node_header),
ibqueryerrors.c (print_results) and scripts/ibcheckerrs.in, https://github.com/linux-rdma/rdma-core at commit
691953d8d502f54088f776c5ba2aeed0a5ac945d. A switch's port names no host (no drain); a summary proves no port (no
pass); a CA whose description names no device is never recorded under a guessed name (no pass)."""
from __future__ import annotations

import pytest

from tests.judging import contract, explained, raw, verdict
from verify import explain as ex
from verify.explain import ibcounters, ibdiagnet, iblinkinfo

pytestmark = pytest.mark.unit

# The corpus's excerpts (tests/data/real-world/<slug>/raw.txt), each from:
# LEGOOS https://github.com/WukLab/LegoOS/blob/6584a0d326208774b9783dd4840661fa830929d2/README.md
# BLADE https://github.com/open-mpi/ompi-www/blob/master/community/lists/users/2010/07/13551.php
# CEPH https://lore.kernel.org/linux-rdma/CAMCTd2ncDaqfgSOov67rAX6-YekFwe_eME-t62ERHiFAEPZ7EA@mail.gmail.com/
# CPMD https://github.com/open-mpi/ompi-www/blob/master/community/lists/users/2009/12/11447.php
# ARCH https://wiki.archlinux.org/title/InfiniBand
# INFINIHOST https://github.com/open-mpi/ompi-www/blob/master/community/lists/users/2009/03/8333.php
# cx4 (MGT below) https://github.com/824380210/Linpack/blob/2b96aeede5bebef8f8b1f062f5cde1d478b78134/Mellanox_19A.md
LEGOOS = "legoos-wuklab00-mlx4-0-iblinkinfo-port-1-active-4x-10.0-gbps-qdr-lid-8-on-mellanox-is5035-like-wuklab01-02-readme-snippet-healthy"
BLADE = ("bladecenter-faui36a-hca-1-iblinkinfo-port-1-4x-5.0-gbps-ddr-while-faui36b-c-link-4x-10.0-qdr-on-one-voltaire-"
         "hssm-port-2-sdr-topspin-host")
CEPH = ("sx6036-ceph-fabric-ibqueryerrors-switch-ports-5-7-symbolerrors-65535-linkdowned-48-opensm-sminfo-ib-timeouts-"
        "dl380g7-mlx4-0-xmitwait-only-no-host-named")
CPMD = ("cpmd-sge-cluster-node-0-2-ibv-event-port-err-peer-retry-exceeded-from-node-0-22-mthca0-ibcheckerrors-0-bad-nodes-"
        "infiniscale-iii-port-7-relay-errors-host")
ARCH = ("archwiki-ibdiagnet-1.5.7-lw-4x-ls-5-two-ca-direct-link-every-stage-clean-ipoib-group-rate-10-below-members-20-"
        "warning-healthy")
INFINIHOST = ("infinihost-iii-ex-host-port-lid-0xe2-at-2.5gbps-ibdiagnet-ipoib-can-not-join-10gbps-group-ibcheckerrors-"
              "voltaire-switch-symbol-errors")
NOTHING = ("skip", "FACTS_INCOMPLETE", None)
UNREAD = ("warn", "HEALTH_NOT_ASSESSED", "host")


def kind(text):
    found = ex.kind_of(text)
    assert found is not None
    return found


def judged(text):
    return verdict(explained(text, "fabric.txt"))


def said(text):
    return "\n".join(explained(text, "fabric.txt").details)


def ca_line(guid, lid, port, width, speed, state, phys, peer_lid, peer_port, peer, could=""):
    """A CA's port line as iblinkinfo.c's print_port prints it (`%6d %4d[%2s] ==(%3s %18s %6s/%8s)==>  ...`)."""
    link = f"({width:>3} {speed:>18} {state:>6}/{phys:>8})" if width else f"(              {state:>6}/{phys:>8})"
    return (f"      0x{guid:016x} {lid:6d} {port:4d}[  ] =={link}==>  {peer_lid:6d} {peer_port:4d}[  ] \"{peer}\" "
            f"({could} )")


def switch_line(lid, port, width, speed, state, phys, peer_lid, peer_port, peer):
    link = f"({width:>3} {speed:>18} {state:>6}/{phys:>8})"
    return f"      {lid:6d} {port:4d}[  ] =={link}==>  {peer_lid:6d} {peer_port:4d}[  ] \"{peer}\" ( )"


SWITCH = 'Switch: 0x0002c903006e29b0 MF0;ys23ib4:SX6036/U1:'


# --- iblinkinfo -----------------------------------------------------------------------------------------------------

def test_a_ca_that_names_its_device_is_the_hosts_adapter_and_passes():
    text = raw(LEGOOS)
    assert kind(text).parse is iblinkinfo.parse
    facts = iblinkinfo.parse(text)
    assert facts == {"adapters": [{"name": "mlx4_0", "driver": None, "hca_type": None, "pci_device": None, "ports": [
        {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 40.0, "width": 4, "speed": "QDR",
         "link_layer": "InfiniBand"}]}]}
    assert contract(kind(text), facts) == []
    assert judged(text) == ("pass", None, None)
    assert "2 other host(s) listed with every port Active/LinkUp (wuklab01, wuklab02)" in said(text)


# the corpus's cx4 entry: mgt's own port line (lid 3, switch port 36), its CA header as print_node_header prints it
MGT = """CA: mgt mlx5_0:
      0x248a070300928186      3    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       2   36[  ] "MF0;SB7700:MSB7700/U1" ( )
"""


def test_the_rate_is_the_sysfs_rate_not_the_signalling_figure():
    port = iblinkinfo.parse(MGT)["adapters"][0]["ports"][0]
    assert (port["width"], port["speed"], port["rate_gbps"]) == (4, "EDR", 100.0)     # sysfs: 100 Gb/sec (4X EDR)
    assert judged(MGT) == ("pass", None, None)


@pytest.mark.parametrize(("width", "speed", "word", "rate"), [
    ("4X", "2.5 Gbps", "SDR", 10.0), ("4X", "5.0 Gbps", "DDR", 20.0), ("4X", "10.0 Gbps", "QDR", 40.0),
    ("4X", "10.0 Gbps (FDR10)", "FDR10", 40.0), ("4X", "14.0625 Gbps", "FDR", 56.0), ("1X", "25.78125 Gbps", "EDR", 25.0),
    ("2X", "53.125 Gbps", "HDR", 100.0), ("4X", "53.125 Gbps", "HDR", 200.0), ("4X", "106.25 Gbps", "NDR", 400.0),
    ("8X", "106.25 Gbps", "NDR", 800.0), ("12X", "10.0 Gbps", "QDR", 120.0), ("4X", "212.5 Gbps", "XDR", 800.0),
    ("4X", "undefined (3)", None, None)])
def test_each_speed_libibmad_prints_is_its_generation(width, speed, word, rate):
    text = "CA: gpu01 mlx5_0:\n" + ca_line(0xb8599f0300fd8b4c, 12, 1, width, speed, "Active", "LinkUp", 1, 7, "sw") + "\n"
    port = iblinkinfo.parse(text)["adapters"][0]["ports"][0]
    assert (port["speed"], port["rate_gbps"]) == (word, rate)
    assert contract(kind(text), iblinkinfo.parse(text)) == []


def test_a_switch_only_listing_names_no_host_nothing_to_judge_never_a_drain():
    text = raw(BLADE)          # `iblinkinfo -P 1` and `-P 2`: two switches' blocks, the Perl script's header
    assert kind(text).parse is iblinkinfo.parse
    assert iblinkinfo.parse(text) == {"adapters": None}
    assert judged(text) == NOTHING
    assert "60 switch port(s), 47 not Active: a switch's ports name no host" in said(text)


def test_a_switch_ports_down_beside_a_healthy_ca_are_no_fault_of_the_host():
    text = (SWITCH + "\n" + switch_line(22, 5, "4X", "10.0 Gbps", "Down", "Polling", 0, 0, "") + "\n"
            "CA: wuklab00 mlx4_0:\n" + raw(LEGOOS).splitlines()[3] + "\n")
    assert judged(text) == ("pass", None, None)


def test_ofed_default_description_names_no_device_never_a_pass_never_a_guess():
    text = "CA: node01 HCA-1:\n" + ca_line(0x0002c90300001235, 5, 1, "4X", "25.78125 Gbps", "Active", "LinkUp", 2, 17,
                                           "MF0;SB7700:MSB7700/U1") + "\n"
    assert iblinkinfo.parse(text) == {"adapters": None}
    assert judged(text) == NOTHING
    assert '"node01 HCA-1" names no device' in said(text)


def test_an_unnamed_cas_port_in_init_is_said_as_the_hosts_never_nothing_to_judge():
    text = "CA: node01 HCA-1:\n" + ca_line(0x0002c90300001235, 5, 1, "4X", "25.78125 Gbps", "Initialize", "LinkUp", 2,
                                           17, "sw") + "\n"
    r = explained(text, "fabric.txt")
    assert verdict(r) == UNREAD and '"node01 HCA-1" (no device named) port 1' in r.summary


def test_a_named_cas_port_down_is_judged():
    text = ("CA: gpu07 mlx5_0:\n" + ca_line(0xb8599f0300fd8b4c, 12, 1, "4X", "106.25 Gbps", "Active", "LinkUp", 1, 7,
                                            "sw") + "\n"
            + ca_line(0xb8599f0300fd8b4d, 13, 2, "", "", "Down", "Polling", 1, 8, "sw") + "\n")
    ports = iblinkinfo.parse(text)["adapters"][0]["ports"]
    assert ports[1] == {"port": 2, "state": "DOWN", "phys_state": "Polling", "rate_gbps": None, "width": None,
                        "speed": None, "link_layer": "InfiniBand"}
    assert judged(text) == ("warn", "FABRIC_PORT_DOWN", "host")


def test_iblinkinfos_own_could_be_is_a_slow_link_said_never_a_pass():
    text = "CA: gpu07 mlx5_0:\n" + ca_line(0xb8599f0300fd8b4c, 12, 1, "4X", "10.0 Gbps", "Active", "LinkUp", 1, 7, "sw",
                                           could="Could be 14.0625 Gbps") + "\n"
    r = explained(text, "fabric.txt")
    assert verdict(r) == UNREAD and "says Could be 14.0625 Gbps" in r.summary


def test_the_host_is_the_first_that_shows_a_fault():
    text = ("CA: gpu01 mlx5_0:\n" + ca_line(1, 12, 1, "4X", "53.125 Gbps", "Active", "LinkUp", 1, 7, "sw") + "\n"
            "CA: gpu02 mlx5_0:\n" + ca_line(2, 13, 1, "4X", "53.125 Gbps", "Armed", "LinkUp", 1, 8, "sw") + "\n")
    assert iblinkinfo.parse(text)["adapters"][0]["ports"][0]["state"] == "ARMED"
    assert judged(text) == ("fail", "FABRIC_PORT_DOWN", "host")
    assert 'the host judged is gpu02 (the first whose CA shows a fault, else the first), its CA(s) "gpu02 mlx5_0"' \
        in said(text)


def test_grepped_port_lines_with_no_header_are_not_read():
    text = raw("cx4-mt4115-edr-ibstat-mlx5-0-active-100-iblinkinfo-4x-25g-lid-1-own-opensm-sb7700-xcat-linpack-n01")
    assert not iblinkinfo.detect(text)                  # `iblinkinfo | grep Up`: a CA's line no header names
    assert judged(text) == ("pass", None, None)         # its ibstat, as before


@pytest.mark.parametrize(("desc", "host", "name"), [
    ("wuklab00 mlx4_0", "wuklab00", "mlx4_0"), ("faui36a HCA-1", "faui36a", None), ("mgt mlx5_0", "mgt", "mlx5_0"),
    ("MT25408 ConnectX Mellanox Technologies", "MT25408 ConnectX Mellanox Technologies", None),
    ("node1 mlx5_0 mlx5_1", "node1 mlx5_0 mlx5_1", None), ("gpu3 ibp12s0", "gpu3", "ibp12s0")])
def test_a_device_only_by_the_letter(desc, host, name):
    assert iblinkinfo.named(desc) == (host, name)


# --- ibqueryerrors / ibcheckerrors ----------------------------------------------------------------------------------

def test_switch_ports_errors_and_ca_congestion_name_no_host():
    text = raw(CEPH)
    assert kind(text).parse is ibcounters.parse
    assert ibcounters.parse(text) == {"adapters": None} and ibcounters.unread(text) == []
    assert judged(text) == NOTHING
    details = said(text)
    assert "port 5: SymbolErrorCounter == 65535" in details and "port 7: SymbolErrorCounter == 65535" in details
    assert '"dl380g7 mlx4_0": no link-error counter' in details
    assert "4 nodes checked, 4 bad nodes found (a count, no port's state: never a pass)" in details


# print_results: `Errors for "%s"` (a CA), `   GUID 0x%x port %d:` and ` [%s == %u]` per counter
CA_ERRORS = """Errors for "gpu07 mlx5_0"
   GUID 0xb8599f0300fd8b4c port 1: [SymbolErrorCounter == 1288] [LinkErrorRecoveryCounter == 4]

## Summary: 41 nodes checked, 1 bad nodes found
##          412 ports checked, 1 ports have errors beyond threshold
"""


def test_a_cas_own_link_errors_are_the_hosts_evidence_never_a_pass():
    r = explained(CA_ERRORS, "fabric.txt")
    assert verdict(r) == UNREAD
    assert '"gpu07 mlx5_0" port 1: SymbolErrorCounter == 1288, LinkErrorRecoveryCounter == 4' in r.summary


def test_the_same_counters_on_a_switch_name_no_host():
    text = CA_ERRORS.replace('Errors for "gpu07 mlx5_0"', 'Errors for 0x2c903006e29b0 "MF0;ys23ib4:SX6036/U1"')
    assert judged(text) == NOTHING


def test_report_ports_link_info_is_the_named_cas_port():
    text = CA_ERRORS.replace("[LinkErrorRecoveryCounter == 4]\n", "[LinkErrorRecoveryCounter == 4]\n"
                             "       Link info:     12    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>  "
                             "     1    7[  ] \"sw\" ( )\n")
    assert ibcounters.parse(text)["adapters"][0]["ports"] == [
        {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 200.0, "width": 4, "speed": "HDR",
         "link_layer": "InfiniBand"}]
    assert judged(text) == UNREAD          # the port is up; its symbol errors are no field's, said


def test_ibcheckerrors_on_a_switch_with_zero_bad_nodes_is_no_pass_and_no_drain():
    text = raw(CPMD)
    r = explained(text, "fabric.txt")
    assert verdict(r) == NOTHING
    assert '"MT47396 Infiniscale-III Mellanox Technologies", whose counters name no host' in "\n".join(r.details)
    assert "25 nodes checked, 0 bad nodes found (a count, no port's state: never a pass)" in "\n".join(r.details)


def test_ibcheckerrors_on_a_cas_port_is_the_hosts():
    # scripts/ibcheckerrs.in: `#warn: counter <name> = <n> \t(threshold <t>) lid <lid> port <port>`, then its check line
    text = ("#warn: counter SymbolErrors = 36905 \t(threshold 10) lid 5 port 1\n"
            "Error check on lid 5 (node7 HCA-1) port 1:  FAILED\n\n"
            "## Summary: 25 nodes checked, 0 bad nodes found\n"
            "##          48 ports checked, 1 ports have errors beyond threshold\n")
    assert judged(text) == UNREAD


def test_ibcheckerrors_voltaire_linecard_errors_are_said_not_the_hosts():
    # cut from its ibdiagnet lines, two of its tab-padded lines are 80 columns wide and read back as a terminal's wrap
    # (explain/wrap.py): each record is read from where it starts all the same
    text = "#warn" + raw(INFINIHOST).split("#warn", 1)[1]
    assert "port 14Error check" in ex.views(text)[False]
    details = said(text)
    assert judged(text) == NOTHING
    assert '"ISR9288/ISR9096 Voltaire sLB-24", whose counters name no host: port 14: SymbolErrors == 36905' in details


# --- ibdiagnet ------------------------------------------------------------------------------------------------------

def test_a_clean_ibdiagnet_is_never_a_pass():
    text = raw(ARCH)
    assert kind(text).parse is ibdiagnet.parse
    assert judged(text) == NOTHING
    details = said(text)
    assert "discovered 2 nodes (0 Switches & 2 CA-s)" in details
    assert "stage IPoIB Subnets Check: 0 error(s), 1 warning(s)" in details      # the SM's group rate: no host's
    clean = text.replace("IPoIB Subnets Check                      0      1", "IPoIB Subnets Check                      0      0")
    assert judged(clean) == NOTHING and "every stage reports 0 errors" in said(clean)


def test_a_ca_port_below_its_ipoib_groups_rate_is_said_as_the_hosts():
    r = explained(raw(INFINIHOST), "fabric.txt")
    assert verdict(r) == UNREAD
    assert "port localhost/P1 (lid 0x00e2, guid 0x001e0bffff4ced75) runs at 2.5Gbps, below its IPoIB group's 10Gbps" \
        in r.summary


def test_hostile_lines_are_read_for_nothing():
    long = "CA: " + "x" * 5000 + ":\n" + "      0x1 1 1[  ] ==(" + " 4X" * 3000 + ")==>\n"
    assert not iblinkinfo.detect(long) and not ibcounters.detect(long) and not ibdiagnet.detect(long)
    assert iblinkinfo.link("==( 4X 99999999999999999999 Gbps Active/  LinkUp)==>") is not None
