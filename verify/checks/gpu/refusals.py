"""Who owns a GPU that is there and refused to this process, where the CUDA catalog gives no owner:
- CUDA error 46 (cudaErrorDevicesUnavailable: "all CUDA-capable devices are busy or unavailable"): the answer of a
  compute mode or a sharing configuration, never of the GPU's health. An exclusive mode admits one process and
  another holds the GPU; MPS admits a client only while it has room (clients, their share of the SMs); both are the
  job's placement or sharing request. A Prohibited mode admits none: the node's setting (host). A GPU fault that
  causes it shows in its own facts (an Xid, a driver status line, a lost GPU, NVML refusing too), judged there and
  ranked above this;
- torch counting no GPU (`torch.cuda.device_count()` 0) where CUDA initialised or torch says it is available: the
  driver enumerates a device that torch's own count (its NVML-based parse of CUDA_VISIBLE_DEVICES, which some
  releases could not read in the `MIG-<uuid>` form) misses: the torch build in the image;
- CUDA_VISIBLE_DEVICES set to a value that names no device (empty, -1, NoDevFiles): the process's own setting."""
from __future__ import annotations

from ...codes import Owner
from ...facts import NONE, UNSET, GpuFacts, NvmlDevice
from ...shared.cuda_errors import undecided

_SHARED = ("Find the process that holds the GPU (`nvidia-smi`) and the GPU's compute mode; run one process per "
           "exclusive GPU (the scheduler's GPU assignment, the job's CUDA_VISIBLE_DEVICES). Under MPS (a device "
           "plugin's `sharing.mps.replicas`, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) ask for fewer clients per GPU or a "
           "larger share each. A fault of the GPU shows in the kernel log (Xid) and NVML, not in this error.")


def busy(devices: list[NvmlDevice], error: str | None) -> tuple[Owner, str, str] | None:
    """(owner, why, fix) where CUDA's refusal (none decoded, or 46: busy or unavailable) is the GPUs' compute mode or
    their sharing; None where the error is another (decoded elsewhere) and no device shows such a mode."""
    if error and not undecided(error):
        return None
    modes = {str(d.get("compute_mode")) for d in devices}
    named = ", ".join(str(d.get("index")) for d in devices if str(d.get("compute_mode")).startswith(("exclusive",
                                                                                                      "prohibited")))
    if "prohibited" in modes:
        return "host", f"GPU {named} in compute mode Prohibited: no process may create a context", \
            "Set the node's compute mode back (`nvidia-smi -c DEFAULT`, as root) and find who set it."
    if modes & {"exclusive_process", "exclusive_thread"}:
        return "job", f"GPU {named} in an exclusive compute mode admits one process, and another already holds it", \
            "Run one process per exclusive GPU (check the job's placement and `nvidia-smi` for the process holding " \
            "it), or ask for the default compute mode."
    if error:
        cause = ("its compute mode is Default, so a sharing configuration (an MPS server) with no room for another "
                 "client" if "default" in modes else "an exclusive compute mode another process holds, or a sharing "
                 "configuration (MPS) with no room for another client")
        return "job", (f"CUDA error 46 (busy or unavailable): the GPU admits no context for this process: {cause}; "
                       "the GPU's health is not in question"), _SHARED
    return None


def torch_misses_cuda(facts: GpuFacts) -> bool:
    """torch counts no GPU although CUDA initialised (or torch says it is available): its count, not the driver."""
    return facts.get("torch_devices") == 0 and facts.get("cuda_init_error") in (None, NONE) and (
        facts.get("cuda_init_error") == NONE or facts.get("cuda_available") is True)


def torch_miscount(facts: GpuFacts) -> tuple[str, str]:
    """(why, fix) for torch_misses_cuda."""
    visible = facts.get("cuda_visible_devices")
    mig = " (it names MIG-<uuid> devices, a form some torch releases' count does not read)" \
        if isinstance(visible, str) and "MIG-" in visible else ""
    named = f" under CUDA_VISIBLE_DEVICES={visible}{mig}" if visible not in (None, "unset") else ""
    return (f"CUDA initialises, yet torch.cuda.device_count() is 0{named}: torch's own count (its NVML-based reading "
            "of CUDA_VISIBLE_DEVICES) misses the device the driver gives CUDA, so whatever sizes its work by the "
            "count sees no GPU"), ("Use a torch build whose device count reads these devices (a newer release), or "
                                   "name the devices in a form it reads; the GPU and the driver work.")


def hides_every_device(visible: object) -> bool:
    """CUDA_VISIBLE_DEVICES set to a value that can name no device at all (its first entry neither an index nor a
    GPU-/MIG- uuid: empty, -1, NoDevFiles): CUDA then sees none (torch: 'No CUDA GPUs are available'), whatever the
    node's GPUs are. An index or uuid the node lacks is not this: it may be a GPU that fell off the bus."""
    if not isinstance(visible, str) or visible == UNSET:
        return False
    first = visible.split(",")[0].strip()
    return not (first.isdecimal() or first.lower().startswith(("gpu-", "mig-")))
