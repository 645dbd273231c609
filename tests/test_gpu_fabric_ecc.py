"""Issue 35, items 4 and 6: the GPU's NVLink fabric state and correctable ECC errors, judged from the facts."""
from __future__ import annotations

import pytest

from verify.checks import gpu
from verify.options import Options

pytestmark = pytest.mark.unit


def verdict(r):
    return r.status, r.code, r.owner


def one(**dev):
    return gpu.judge({"devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1", "nvswitch": True,
                                   **dev}], "torch": None}, Options())


@pytest.mark.parametrize("fabric, want", [
    ({"state": "in_progress", "status": None}, ("fail", "NVLINK_DOWN", "host")),          # registration stuck
    ({"state": "not_started"}, ("fail", "NVLINK_DOWN", "host")),
    ({"state": "completed", "status": "Insufficient Resources", "clique_id": 0}, ("fail", "NVLINK_DOWN", "host")),
    ({"state": "completed", "status": "success", "health": {"summary": "unhealthy"}}, ("fail", "NVLINK_DOWN", "host")),
    ({"state": "completed", "status": "success", "health": {"route_unhealthy": True}}, ("fail", "NVLINK_DOWN", "host")),
    ({"state": "completed", "status": "success", "health": {"degraded_bandwidth": True}}, ("warn", "NVLINK_DOWN", "host")),
])
def test_a_gpu_not_registered_or_an_unhealthy_fabric_is_the_host_s(fabric, want):
    assert verdict(one(fabric=fabric)) == want


def test_a_registered_healthy_fabric_or_none_at_all_is_no_fault():
    """No false drain: an A100 whose fabric is `N/A` (not supported) and a GB200 registered with health Not
    Supported (no mask from this driver) show nothing wrong (tests/data/real-world p4d-..., gb200-...)."""
    for fabric in ({"state": "not_supported"}, {"state": "completed", "status": "success", "clique_id": 32766,
                                                 "health": {"summary": None, "degraded_bandwidth": None}}):
        r = one(fabric=fabric)
        assert r.status in ("pass", "warn") and r.code != "NVLINK_DOWN" and r.owner != "host" or \
            r.code == "HEALTH_NOT_ASSESSED"


def test_a_correctable_error_storm_warns_the_host_by_rate_or_count():
    r = one(ecc_volatile_correctable=9_600_000_000, ecc_correctable_growth={"count": 177_000, "seconds": 10.0},
            row_remap={"correctable": 8, "uncorrectable": 0, "pending": 0, "failed": 0}, ecc_volatile_uncorrectable=0)
    assert verdict(r) == ("warn", "ECC_UNCORRECTABLE", "host") and "storm" in r.summary
    assert one(ecc_correctable_growth={"count": 50, "seconds": 10.0}, ecc_volatile_uncorrectable=0).status == "pass" \
        or one(ecc_correctable_growth={"count": 50, "seconds": 10.0}).code != "ECC_UNCORRECTABLE"


def test_a_few_correctable_errors_are_no_storm():
    r = one(ecc_volatile_correctable=12, ecc_aggregate_correctable=40)
    assert r.code != "ECC_UNCORRECTABLE"
