"""Issue 35: adversarial inputs per class, unlike the corpus's (other wordings, orders, prefixes), to find rules bound
to one example; and, for each host-owned verdict added here, a real excerpt where the host is healthy."""
from __future__ import annotations

from typing import Any, cast

import pytest

from verify import explain as ex
from verify.checks import gpu
from verify.options import Options
from verify.prolog import xid as xidlog

pytestmark = pytest.mark.unit


def verdict(r):
    return r.status, r.code, r.owner


def _gpu(**facts: Any):
    return gpu.judge(cast(Any, {"devices": None, "torch": None, **facts}), Options())


# ------------------------------------------------------------------ NVSwitch SXids
# The SXid lines gpud's tests quote from real nodes (https://github.com/leptonai/gpud/pull/338 and its sxid package).
NONFATAL_12028 = "[111111111.111] nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)"
FATAL_20034 = ["[131453.740743] nvidia-nvswitch0: SXid (PCI:0000:a9:00.0): 20034, Fatal, Link 30 LTSSM Fault Up",
               "[131453.740754] nvidia-nvswitch0: SXid (PCI:0000:a9:00.0): 20034, Severity 1 Engine instance 30 Sub-engine instance 00",
               "[131453.740758] nvidia-nvswitch0: SXid (PCI:0000:a9:00.0): 20034, Data {0x50610002, 0x10100030}"]


def _sxids(lines):
    kind = ex.kind_of("\n".join(lines))
    assert kind is not None and kind.check == "gpu"
    return kind.parse("\n".join(lines))


def test_a_fatal_sxid_in_any_order_of_its_three_lines_fails_the_host_once():
    for lines in (FATAL_20034, FATAL_20034[::-1]):
        r = gpu.judge(_sxids(lines), Options())
        assert verdict(r) == ("fail", "XID_ERROR", "host") and "SXid 20034" in r.summary and "(3 lines)" in r.summary


def test_a_non_fatal_sxid_never_drains_and_its_detail_lines_follow_its_stated_severity():
    """No false drain: the same 12028 the corpus fails on, printed with its severity `Non-fatal`, only warns."""
    detail = NONFATAL_12028.replace("Non-fatal, Link 32 egress non-posted PRIV error (First)", "Data {0x1, 0x2}")
    for lines in ([NONFATAL_12028], [detail, NONFATAL_12028]):
        assert verdict(gpu.judge(_sxids(lines), Options())) == ("warn", "XID_ERROR", "host")
        assert not any(f.action == "drain" for f in xidlog.parse(lines))


def test_a_corrected_switch_ecc_sxid_is_noted_not_judged():
    line = "Mar 3 10:00:01 node kernel: nvidia-nvswitch2: SXid (PCI:0000:8a:00.0): 11012, Data {0x0}"
    r = gpu.judge(_sxids([line]), Options())
    assert r.status != "fail" and r.owner != "host"


def test_sxid_events_are_facts_a_replay_judges_without_devices():
    event = {"sxid": 12028, "pci_bus_id": "0000:84:00.0", "source": "kernel_log",
             "text": "nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x1}"}
    assert verdict(_gpu(sxid_events=[event])) == ("fail", "XID_ERROR", "host")
    assert verdict(_gpu(sxid_events=[]))[2] is None        # none seen: nothing against anyone


# ------------------------------------------------------------------ correctable storms from DCGM field values
def _dcgm(sbe_vol: str, gpu_label: str = "0") -> str:
    """dcgm-exporter's exposition format, as its README and issues print it (labels gpu, UUID, device)."""
    labels = f'gpu="{gpu_label}", UUID="GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba", device="nvidia{gpu_label}"'
    return "\n".join(f"DCGM_FI_DEV_{k}{{{labels}}} {v}" for k, v in (
        ("ECC_SBE_VOL_TOTAL", sbe_vol), ("ECC_DBE_VOL_TOTAL", "0"), ("ECC_SBE_AGG_TOTAL", sbe_vol),
        ("ECC_DBE_AGG_TOTAL", "0"), ("FB_FREE", "7064")))


def test_dcgm_exporter_lines_carry_a_correctable_storm_to_the_host():
    r = ex.explain_text(_dcgm("2500000"), "metrics.txt", Options())
    assert verdict(r) == ("warn", "ECC_UNCORRECTABLE", "host") and "correctable-error storm" in r.summary


def test_dcgm_blank_values_are_not_counts():
    """dcgm-exporter prints DCGM's blank (9223372036854775794) for a field the GPU does not report: never a storm."""
    facts = ex.kind_of(_dcgm("9223372036854775794")).parse(_dcgm("9223372036854775794"))  # type: ignore[union-attr]
    assert facts["devices"][0].get("ecc_volatile_correctable") is None
    assert ex.explain_text(_dcgm("9223372036854775794"), "m.txt", Options()).owner != "host"


def test_a_healthy_gpus_dcgm_counts_do_not_drain_it():
    """No false drain: a few corrected errors are the memory working as designed."""
    assert ex.explain_text(_dcgm("12"), "metrics.txt", Options()).status == "pass"
