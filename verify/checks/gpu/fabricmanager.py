"""The node's NVIDIA Fabric Manager service (verify/FACTS.md, `FabricManager`): down on a node whose GPUs need it is
the host's. The fabric manager programs a node's own NVSwitches and registers every GPU with the NVLink fabric; with
it dead no GPU (re)joins the fabric after a reset, CUDA refuses each with error 802, and NVLink peer access and NVLS
are gone (NVIDIA's Fabric Manager user guide; NVIDIA/NVSentinel#883: a service failed for weeks, unnoticed). It fails
in the same words where it has nothing to manage (a PCIe or NVLink-bridge node it was installed on by mistake,
NVIDIA/gpu-operator#610: `NV_WARN_NOTHING_TO_DO`), and a Grace compute tray's switches are in the NVLink switch trays:
so it is judged only where the node is shown to have NVSwitches of its own, never from the service's state alone;
CUDA's own 802 beside it (batch 205) shows the GPUs wait on a fabric, which no PCIe or bridge GPU does."""
from __future__ import annotations

import re

from ...facts import FabricManager, GpuFacts, NvmlDevice
from ...findings import Findings
from ...result import FAIL
from .gpuhealth import FABRIC_REMEDY
from .powercap import SUPERCHIPS

DOWN = frozenset({"failed", "inactive", "not_found"})
NOTHING_TO_DO = "NV_WARN_NOTHING_TO_DO"


def service(facts: GpuFacts) -> FabricManager | None:
    fm = facts.get("fabric_manager")
    return fm if isinstance(fm, dict) else None


def down(fm: FabricManager) -> bool:
    """Stopped, failed, not installed, or restarting after a failure (`activating (auto-restart) (Result: ...)`); with
    no service state shown (its log quoted alone, a supervisor other than systemd), its own failure line: the fabric
    manager stops on a failure of its start (FM_STAY_RESIDENT_ON_FAILURES=0, its guide's default)."""
    state, result = fm.get("state"), str(fm.get("result") or "")
    if state is None:
        return bool(str(fm.get("error") or "").strip())
    return state in DOWN or (state == "activating" and result not in ("", "success"))


def switches(fm: FabricManager, devices: list[NvmlDevice]) -> bool | None:
    """Whether the node has NVSwitches of its own: the fabric manager's or the source's word, else a device behind
    NVSwitches that is no Grace superchip's GPU (whose switches are another tray's); None where nothing shows it."""
    if NOTHING_TO_DO in str(fm.get("error") or "") and fm.get("nvswitches") is not True:
        return False                    # the fabric manager asked the NVSwitch driver and found none
    if isinstance(fm.get("nvswitches"), bool):
        return fm["nvswitches"]
    local = [d.get("nvswitch") for d in devices if not any(s in str(d.get("name") or "").upper() for s in SUPERCHIPS)]
    return True if True in local else None


# CUDA's 802 (`system not yet initialized`, cudaErrorSystemNotReady): the driver waiting on the GPUs' NVLink fabric
# registration, which only a fabric-attached GPU does (issue 35, batch 205): beside a fabric manager that is down, the
# GPUs' own word that they need it
_FABRIC_WAIT = re.compile(r"\b802\b|system not (?:yet )?initiali[sz]ed|SystemNotReady", re.IGNORECASE)


def _waits_on_fabric(facts: GpuFacts, devices: list[NvmlDevice]) -> bool:
    superchip = any(s in str(d.get("name") or "").upper() for d in devices for s in SUPERCHIPS)
    return not superchip and bool(_FABRIC_WAIT.search(str(facts.get("cuda_init_error") or "")))


def shows_fault(facts: GpuFacts, devices: list[NvmlDevice]) -> bool:
    fm = service(facts)
    if not (fm and down(fm)):
        return False
    local = switches(fm, devices)
    return bool(local) or (local is None and _waits_on_fabric(facts, devices))


def _said(fm: FabricManager) -> str:
    if fm.get("state") is None and fm.get("error"):
        return f"stopped by its own failure (its service state is not shown): {fm['error']}"
    state = "not installed" if fm.get("state") == "not_found" else str(fm.get("state") or "state not shown")
    return state + (f" (Result: {fm['result']})" if fm.get("result") else "") + (f": {fm['error']}" if fm.get("error") else "")


def judge(facts: GpuFacts, devices: list[NvmlDevice], found: Findings) -> None:
    """Down on a node with NVSwitches of its own: the host's."""
    fm = service(facts)
    if fm and shows_fault(facts, devices):
        found.add(FAIL, "NVLINK_DOWN", f"the NVIDIA fabric manager is {_said(fm)} on a node with NVSwitches: nothing "
                  "programs the switches, no GPU (re)joins the NVLink fabric (CUDA refuses it with 802 after a reset)",
                  "Drain the node; find why the fabric manager stopped (`journalctl -u nvidia-fabricmanager`, "
                  "/var/log/fabricmanager.log), start it at the driver's exact version with the GPU reset sequence "
                  "its guide gives, and check every GPU's fabric state Completed/Success. " + FABRIC_REMEDY, "host",
                  # the cause of CUDA's 802 beside it: named before the driver's refusal it explains
                  rank=4 if _FABRIC_WAIT.search(str(facts.get("cuda_init_error") or "")) else None)


def said(facts: GpuFacts, devices: list[NvmlDevice]) -> list[str]:
    """What the verdict says of a fabric manager it does not fail on: running, by design, or not judged."""
    fm = service(facts)
    if not fm or (fm.get("state") is None and fm.get("error") is None) or shows_fault(facts, devices):
        return []
    if not down(fm):
        return [f"the NVIDIA fabric manager is {_said(fm)} (a running service proves no GPU's health)"]
    if switches(fm, devices) is False:
        return [f"the NVIDIA fabric manager is {_said(fm)}: this node has no NVSwitch for it to manage, so that is "
                "by design (it need not run here)"]
    return [f"the NVIDIA fabric manager is {_said(fm)}; whether this node has NVSwitches of its own is not shown: "
            "not judged (on an NVSwitch node it is the host's: nothing registers the GPUs with the NVLink fabric)"]
