"""An enforced power limit below the GPU's default: a cap that costs clocks under load. Whose it is shows in the limit
that was set (NVML's power management limit: `nvidia-smi -q`'s `Requested Power Limit`, `Power Limit` to R525): the
enforced limit equal to it is the owner's own `nvidia-smi -pl` (intended: no fault); below it, or with the limit set
not read, something else caps the board (the BMC, a power brake): warned, the host's. A Grace superchip's GPU (GH200,
GB200, GB300) shares its module's power budget with the CPU, which the driver steers between them: its enforced limit
below the one set is that design (NVIDIA's Grace Hopper power steering), no fault (the gh200-480gb-idle-... entry)."""
from __future__ import annotations

from ...facts import NvmlDevice
from ...findings import RANK, Findings
from ...result import WARN

CAP_FRACTION = 0.9      # an enforced limit under 90 % of the default is a cap, not a rounding of the default
SUPERCHIPS = ("GH200", "GB200", "GB300")    # a GPU on a Grace module: its limit follows the module's shared budget
SAME_W = 1.0            # nvidia-smi prints watts to two decimals; NVML's milliwatts round to them


def power_cap(dev: NvmlDevice, place: str, found: Findings) -> None:
    limit, default = dev.get("power_limit_w"), dev.get("power_default_limit_w")
    if not (limit and default and limit < CAP_FRACTION * default):
        return
    asked = dev.get("power_requested_limit_w")
    if asked and abs(asked - limit) <= SAME_W:
        return                                      # the owner's own setting, in force as set
    if asked and any(chip in (dev.get("name") or "") for chip in SUPERCHIPS):
        return                                      # the module's budget steered below the limit set: by design
    beyond = f", and below the {asked:.0f} W set (something else caps it)" if asked and asked > limit else ""
    # the owner's setting (`nvidia-smi -pl`), often meant: named, but after what the hardware itself shows at the same
    # severity (a link trained narrow, a thermal slowdown), which is the headline
    found.add(WARN, "THROTTLED", f"{place}: power limit {limit:.0f} W below its default {default:.0f} W{beyond}",
              "Restore the default power limit (`nvidia-smi -pl`), unless the cap is intended; a limit in force below "
              "the one set is the BMC's or the platform's (its power capping policy).", "host", dev.get("index"),
              rank=RANK["THROTTLED"] + 1)
