"""LBNL NHC's `check_hw_ib` (scripts/lbnl_hw.nhc of https://github.com/mej/nhc) as `verify explain` judges it: the
check fails when no port is ACTIVE at the rate the site's conf asks for (`No IB port $DEV is ACTIVE (LinkUp $RATE
Gb/sec)`), which is the node's fabric failing the site's own health check (the host's, as Slurm sites drain on it),
unless the same run shows the conf is another machine's, or the port is listed ACTIVE above the rate asked for."""
from __future__ import annotations

import pytest

from tests.judging import explained, raw, verdict

pytestmark = pytest.mark.unit

NAMED = "ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port mlx5_ib0:1 is ACTIVE (LinkUp 200 Gb/sec).\n"


@pytest.mark.parametrize("slug", [
    "nhc-check-hw-ib-no-ib-port-active-linkup-100-new-node-fabric-cables-not-in-place-resv",
    "omni-path-hfi1-0-port-1-nhc-check-hw-ib-no-ib-port-active-linkup-100-state-init-not-printed-host",
    "azure-distributed-nhc-sbatch-health-log-check-hw-ib-no-port-mlx5-ib7-1-active-linkup-400-one-rail-of-eight",
])
def test_nhc_failing_the_node_for_no_active_port_is_the_host_s_port(slug):
    r = explained(raw(slug))
    assert verdict(r) == ("fail", "FABRIC_PORT_DOWN", "host")
    assert "NHC's check_hw_ib fails the node" in r.summary and "ibstat" in r.remedy


def test_a_real_nhc_run_with_another_machine_s_conf_drains_nothing():
    # real: NDv4's conf on an ND H100 v5 (more RAM than its maximum; the port line cut by the source)
    r = explained(raw("h100-nd96isr-v5-aznhc-ndv4-conf-check-hw-ib-no-port-active-at-hdr-rate-on-ndr-vm"))
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None)


def test_the_same_run_with_its_port_line_whole_is_the_tool_s_trouble_handmade():
    text = ("ERROR:  nhc:  Health check failed:  check_hw_physmem:  Actual RAM size (1961032660 kB) greater than "
            "maximum allowed (928858388 kB).\n" + NAMED)
    r = explained(text)
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None)
    assert any("another machine's" in d for d in r.details)


def test_a_port_listed_active_below_the_rate_asked_for_is_a_link_trained_down_handmade():
    text = "DEBUG:  Found ACTIVE (LinkUp) IB Port mlx5_ib0:1 (100 Gb/sec)\n" + NAMED
    assert verdict(explained(text)) == ("warn", "FABRIC_RATE_DEGRADED", "host")


def test_a_port_listed_active_above_the_rate_asked_for_is_the_conf_s_never_a_fault_handmade():
    text = "DEBUG:  Found ACTIVE (LinkUp) IB Port mlx5_ib0:1 (400 Gb/sec)\n" + NAMED
    r = explained(text)
    assert r.status not in ("fail", "warn") or r.owner != "host"
    assert any("conf is another machine's" in d for d in r.details)


def test_a_port_listed_down_keeps_the_listing_s_verdict_handmade():
    text = "DEBUG:  Found DOWN (Polling) IB Port mlx5_ib0:1 (10 Gb/sec)\n" + NAMED
    assert verdict(explained(text)) == ("fail", "FABRIC_PORT_DOWN", "host")


def test_another_host_s_port_finding_is_said_not_judged_on_this_host_handmade():
    text = ("node-a | ERROR: nhc: Health check failed: check_gpu_ecc: GPU id 1: Row remap pending. FaultCode: NHC2007\n"
            "node-b | ERROR: nhc: Health check failed: check_hw_ib: No IB port mlx5_ib7:1 is ACTIVE (LinkUp 400 "
            "Gb/sec).\n")
    r = explained(text)
    assert verdict(r) == ("fail", "RETIREMENT_PENDING", "host")
    # node-b's finding is no fault of node-a's: said, not assessed, never node-a's fabric failing
    assert "also read as NHC check_hw_ib: fabric warn HEALTH_NOT_ASSESSED" in r.details


@pytest.mark.parametrize("text", [
    "check_hw_ib:  No IB port is ACTIVE (LinkUp " + "9" * 5000 + " Gb/sec).\n",
    "x | " * 20000 + "check_hw_ib: No IB port is ACTIVE (LinkUp).\n",
    "check_hw_ib:  No IB port \x00\xff:1 is ACTIVE (LinkUp 400 Gb/sec).",
])
def test_hostile_nhc_lines_end_in_a_verdict_never_a_traceback(text):
    r = explained(text)
    assert r.status in ("pass", "warn", "fail", "skip")
