# mypy: disable-error-code="arg-type, typeddict-item, index"
"""Issue 35, items 4 and 6: the GPU's NVLink fabric state and correctable ECC errors, judged from the facts."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify.checks import gpu
from verify.options import Options

pytestmark = pytest.mark.unit


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
        assert (r.status in ("pass", "warn") and r.code != "NVLINK_DOWN" and r.owner != "host") or \
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


# ------------------------------------------------------------------ the NVML probe, guarded (pure logic, no GPU)
class _OldNvml:
    """A pynvml from before the fabric calls (nvidia-ml-py < 12.535): neither function exists."""


class _Info:
    version = 0
    state, status, cliqueId, clusterUuid, healthMask = 2, 0, 7, b"\x01" * 16, (1 << 0) | (2 << 2) | (2 << 4) | (2 << 6) | (1 << 8)


class _NewNvml:
    nvmlGpuFabricInfo_v2 = 2

    @staticmethod
    def c_nvmlGpuFabricInfoV_t():
        return _Info()

    @staticmethod
    def nvmlDeviceGetGpuFabricInfoV(handle, info):
        assert info.version == 2


def test_an_older_pynvml_without_the_fabric_call_gives_null_never_a_crash():
    from verify.checks.gpu import gpuprobe
    assert gpuprobe.gpu_fabric(_OldNvml(), object()) is None


def test_the_fabric_info_and_its_health_mask_are_decoded():
    from verify.checks.gpu import gpuprobe
    got = gpuprobe.gpu_fabric(_NewNvml(), object())
    assert got is not None and got["state"] == "in_progress" and got["status"] == "success" and got["clique_id"] == 7
    assert got["health"] == {"degraded_bandwidth": True, "route_recovery": False, "route_unhealthy": False,
                             "access_timeout_recovery": False, "incorrect_configuration": False}
    assert gpuprobe.fabric_health(0) == {k: None for k in got["health"]}
