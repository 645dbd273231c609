"""A device's NVLinks as NVML reports them: which are up, and whether they end in NVSwitches. The gpu check reads them
for link health; the nccl check to know whether NVLink SHARP (NVLS) can run."""
from __future__ import annotations

from typing import Any

NVLINK_MAX_LINKS = 18


def links(nvml: Any, h: Any) -> list[bool]:
    links: list[bool] = []
    for link in range(NVLINK_MAX_LINKS):
        try:
            links.append(bool(nvml.nvmlDeviceGetNvLinkState(h, link)))
        except Exception:  # noqa: BLE001 - NotSupported / InvalidArgument: no such link
            break
    return links


def nvswitch(nvml: Any, h: Any, count: int) -> bool | None:
    """Whether the device's NVLinks end in NVSwitches (NVLS needs them); None when NVML cannot say."""
    fn = getattr(nvml, "nvmlDeviceGetNvLinkRemoteDeviceType", None)
    if not count or fn is None:
        return None
    try:
        return any(int(fn(h, k)) == getattr(nvml, "NVML_NVLINK_DEVICE_TYPE_SWITCH", 2) for k in range(count))
    except Exception:  # noqa: BLE001
        return None
