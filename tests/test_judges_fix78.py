# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's seventy-eighth corpus batch (adapter listings, GIDs, libfabric), fixed by class:
- an InfiniBand port at its model's design split rate (HDR100: a ConnectX-6, MT4123, at 2X HDR, 100 Gb/s; NDR200: a
  ConnectX-7, MT4129, at 2X NDR, 200 Gb/s) is not "below the adapter's maximum" by itself: sites cable whole fabrics
  so (kaust-ibex-login-cx6-mt4123-ibstat-rate-100-active-sm-lid-8-hdr100-by-design: `CA type: MT4123` /
  `Rate: 100`). ibstat prints the total rate alone, so a null width and speed are read as the split's; a width or
  speed printed otherwise (4X EDR: a link that trained down) and a faster port of the same model beside it still
  warn (FABRIC_RATE_DEGRADED, host)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks.fabric.check import judge as judge_fabric
from verify.options import Options

pytestmark = pytest.mark.unit


def _port(rate, width=None, speed=None, layer="InfiniBand"):
    return {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": rate, "width": width, "speed": speed,
            "link_layer": layer}


def _facts(*adapters):
    return {"root": "root", "adapters": [{"name": name, "driver": None, "hca_type": kind, "ports": [port]}
                                         for name, kind, port in adapters],
            "libraries": {"libibverbs.so.1": "loaded"}, "verbs_devices": [name for name, _, _ in adapters]}


@pytest.mark.parametrize("kind, port", [
    ("MT4123", _port(100.0)),                   # ibstat's `Rate: 100`: no width, no speed (the KAUST listing)
    ("MT4123", _port(100.0, 2, "HDR")),         # ibstatus' `100 Gb/sec (2X HDR)`, ibv_devinfo -v's 2X at 50 Gbps
    ("MT4129", _port(200.0, 2, "NDR")),         # NDR200
], ids=["hdr100-rate-only", "hdr100-2x-hdr", "ndr200-2x-ndr"])
def test_a_port_at_its_model_s_design_split_rate_is_not_degraded(kind, port):
    r = judge_fabric(_facts(("mlx5_0", kind, port)), Options())
    assert verdict(r) == ("pass", None, None), r.summary


@pytest.mark.parametrize("kind, port", [
    ("MT4123", _port(100.0, 4, "EDR")),         # an HDR card trained at EDR (cx6-hdr-links-at-edr-100)
    ("MT4123", _port(50.0, 1, "HDR")),          # one lane left
    ("MT4129", _port(100.0)),                   # no design rate of a ConnectX-7
], ids=["hdr-at-4x-edr", "hdr-at-1x", "ndr-at-100"])
def test_a_port_below_its_model_at_no_design_rate_still_warns(kind, port):
    r = judge_fabric(_facts(("mlx5_0", kind, port)), Options())
    assert verdict(r) == ("warn", "FABRIC_RATE_DEGRADED", "host"), r.summary


def test_a_split_rate_port_beside_a_faster_one_of_its_model_still_warns():
    r = judge_fabric(_facts(("mlx5_0", "MT4123", _port(200.0, 4, "HDR")), ("mlx5_1", "MT4123", _port(100.0))),
                     Options())
    assert verdict(r) == ("warn", "FABRIC_RATE_DEGRADED", "host"), r.summary
    assert "mlx5_1" in r.summary


_IBSTAT = ("CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tFirmware version: 20.35.1012\n"
           "\tHardware version: 0\n\tNode GUID: 0xb8599f030022626e\n\tSystem image GUID: 0xb8599f030022626e\n"
           "\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: {rate}\n\t\tBase lid: 762\n"
           "\t\tLMC: 0\n\t\tSM lid: 8\n\t\tCapability mask: 0xa651e848\n\t\tPort GUID: 0xb8599f030022626e\n"
           "\t\tLink layer: InfiniBand\n")
_DEVINFO_V = ("hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tvendor_id:\t\t\t0x02c9\n"
              "\tvendor_part_id:\t\t\t4123\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n"
              "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tsm_lid:\t\t\t8\n\t\t\tport_lid:\t\t762\n"
              "\t\t\tlink_layer:\t\tInfiniBand\n\t\t\tactive_width:\t\t{width}\n"
              "\t\t\tactive_speed:\t\t{speed}\n\t\t\tphys_state:\t\tLINK_UP (5)\n")


@pytest.mark.parametrize("text, want", [
    (_IBSTAT.format(rate=100), ("pass", None, None)),
    (_IBSTAT.format(rate=200), ("pass", None, None)),
    (_DEVINFO_V.format(width="2X (16)", speed="50.0 Gbps (64)"), ("pass", None, None)),
    (_DEVINFO_V.format(width="4X (2)", speed="25.0 Gbps (32)"), ("warn", "FABRIC_RATE_DEGRADED", "host")),
], ids=["ibstat-rate-100", "ibstat-rate-200", "devinfo-v-2x-hdr", "devinfo-v-4x-edr"])
def test_verify_explain_reads_an_hdr100_listing_against_the_adapter_s_own_model(text, want):
    r = explained(text, "ibstat.txt")
    assert (r.name, *verdict(r)) == ("fabric", *want), r.summary


def test_the_design_rate_is_said_beside_the_pass():
    r = judge_fabric(_facts(("mlx5_0", "MT4123", _port(100.0))), Options())
    assert any("HDR100" in d and "MT4123" in d for d in r.details), r.details
