"""A driver status line (`NVRM: ... [NV_ERR_STATE_IN_USE] ...`) the one catalog does not judge, where NVML's devices
were not recorded and nothing else shows a fault: the driver said something went wrong and no read of the GPUs says
they are well, so it is "not assessed", never a pass (rtx6000-ada-590.48.01-idle-node-dcgm-exporter-profiler-nv-err-
state-in-use-0x63-crashloop: a profiler's refused stream, the GPU's health unread). Not a fault either: a status the
catalog does not decode drains nothing. Pure."""
from __future__ import annotations

from ...facts import GpuFacts
from ...findings import Findings
from ...result import WARN
from ...shared.xidcatalog import RM_STATUS


def unread_status(facts: GpuFacts, found: Findings) -> None:
    if found.items:
        return
    said = sorted({str(e.get("status")) for e in facts.get("driver_errors") or []
                   if isinstance(e, dict) and e.get("status") and str(e.get("status")) not in RM_STATUS})
    if said:
        found.add(WARN, "HEALTH_NOT_ASSESSED", f"the driver logged {', '.join(said)}, a status that says nothing of the "
                  "GPU's state, and no NVML device was recorded: the GPUs' health is not assessed, not healthy",
                  "Read the GPUs' health on the host (`nvidia-smi -q`, `dmesg` for Xids) and find which program the "
                  "driver answered with that status.", "host")
