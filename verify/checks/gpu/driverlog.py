"""The driver's own status lines in the kernel log (`NVRM: ... [NV_ERR_RESET_REQUIRED]`, `RmInitAdapter failed!`),
judged by the one catalog (verify/shared/xidcatalog.py's RM_STATUS): what they say of a GPU's state, the host's."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ...facts import DriverError
from ...findings import Findings
from ...result import FAIL, WARN
from ...shared.xidcatalog import (
    API_MISMATCH,
    LEGACY_GPU,
    MODULE_BUILD_FAILED,
    MODULE_REJECTED,
    PROBE_FAILED,
    PROBE_NOT_CALLED,
    RM_INIT_FAILED,
    RM_INIT_RESET,
    RM_STATUS,
    api_mismatch,
    api_versions,
    legacy_gpu,
    module_build_failed,
    module_rejected,
    probe_failed,
    probe_not_called,
)


def driver_errors(events: Sequence[DriverError], found: Findings, nvml_answers: bool = False) -> None:
    """The driver's status lines (verify/shared/xidcatalog.py's RM_STATUS): a status that describes the GPU's state
    fails it under that state's code (NV_ERR_RESET_REQUIRED: a reset), once per status; a GPU the driver could not
    initialise fails the host whatever the status, as do GPUs another kernel driver keeps from it; the rest are not
    judged. `nvml_answers`: NVML, a client of this host's user space, listed GPUs that answer (an API mismatch is
    then another client's)."""
    seen: dict[str, int] = {}
    init: list[DriverError] = []
    unbound: list[DriverError] = []
    rejected: list[DriverError] = []
    refused: list[DriverError] = []
    legacy: list[DriverError] = []
    mismatch: list[DriverError] = []
    unbuilt: list[DriverError] = []
    for e in (e for e in events if isinstance(e, dict)):
        if e.get("status") == MODULE_REJECTED or module_rejected(str(e.get("text") or "")):
            rejected.append(e)
        elif e.get("status") == MODULE_BUILD_FAILED:
            unbuilt.append(e)
        elif RM_INIT_FAILED.search(str(e.get("text") or "")):
            init.append(e)
        elif e.get("status") == PROBE_NOT_CALLED or probe_not_called(str(e.get("text") or "")) is not None:
            unbound.append(e)
        elif e.get("status") == PROBE_FAILED or probe_failed(str(e.get("text") or "")) is not None:
            refused.append(e)
        elif e.get("status") == LEGACY_GPU or legacy_gpu(str(e.get("text") or "")) is not None:
            legacy.append(e)
        elif e.get("status") == API_MISMATCH or api_mismatch(str(e.get("text") or "")):
            mismatch.append(e)
        elif str(e.get("status")) in RM_STATUS:
            seen[str(e["status"])] = seen.get(str(e["status"]), 0) + 1
    _api_mismatch(mismatch, found, nvml_answers)      # the install's inconsistency, before the init failure
    _init_failures(init, found)
    _unbound(unbound, found)
    _legacy(legacy, found)              # the cause, before the probe's failure it leads to
    _probe_failed(refused, found)
    _rejected(rejected, found)
    _unbuilt(unbuilt, found, nvml_answers)
    for status, n in seen.items():
        number, code, what = RM_STATUS[status]
        found.add(FAIL, code, f"the driver logged {status} ({number:#x}){f' {n} times' if n > 1 else ''}: {what}",
                  "Drain the node, then reset the GPU (`nvidia-smi -r -i <bus id>`) or reboot; read dmesg for the Xid "
                  "or GSP error before it; RMA if it recurs." if code != "DRIVER_ERROR" else "Start the fabric "
                  "manager: `systemctl enable --now nvidia-fabricmanager` (same version as the driver).", "host")


def _init_failures(events: list[DriverError], found: Findings) -> None:
    """`RmInitAdapter failed!`: the driver probed the GPU and could not bring it up; once per GPU (the line repeats
    at every retry). Its state asks for a reset (NV_ERR_INVALID_STATE: a failed boot left it locked) or it never came
    up (a firmware or VBIOS boot that timed out): the host's either way, never the job's."""
    by_gpu: dict[str, DriverError] = {}
    for e in events:
        named = re.search(r"GPU ([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)", str(e.get("text") or ""))
        by_gpu.setdefault(named.group(1).lower() if named else "?", e)
    for bus, e in by_gpu.items():
        status = str(e.get("status") or "a status not read")
        where = f"GPU {bus}" if bus != "?" else "a GPU"
        if status in RM_INIT_RESET:
            found.add(FAIL, "GPU_RESET_REQUIRED", f"the driver could not initialise {where} ({status}): its state needs "
                      "a reset", "Drain the node and reset the GPU (`nvidia-smi -r -i <bus id>`) or power-cycle the "
                      "node; retire the GPU if it recurs.", "host")
        else:
            found.add(FAIL, "GPU_NOT_VISIBLE", f"the driver could not initialise {where} ({status}): the GPU is there "
                      "and never came up, so NVML and CUDA do not list it", "Drain the node; cold power-cycle it, check "
                      "the GPU's power connectors and seating, update or reflash its firmware; replace the GPU if it "
                      "stays this way.", "host")


def _devices(events: list[DriverError], count: Callable[[str], int | None]) -> str:
    """How many NVIDIA devices the driver's lines name, the largest count a line gives (they repeat per probe)."""
    counts = [n for e in events if (n := count(str(e.get("text") or ""))) is not None]
    return f"{max(counts)} NVIDIA device(s)" if counts else "NVIDIA devices"


def _unbound(events: list[DriverError], found: Findings) -> None:
    """`NVRM: The NVIDIA probe routine was not called for N device(s)`: the GPUs are on the bus and another kernel
    driver (nouveau, a framebuffer driver) holds them, so no process on the node reaches them: the host's driver
    setup, whatever the job or the image does; once, with the largest count a line gives."""
    if not events:
        return
    what = _devices(events, probe_not_called)
    found.add(FAIL, "DRIVER_ERROR", f"the driver did not bind {what} on the bus: another kernel driver (nouveau, "
              "rivafb, nvidiafb or rivatv) holds them (`NVRM: The NVIDIA probe routine was not called`)",
              "Drain the node; blacklist nouveau (`blacklist nouveau` and `options nouveau modeset=0` in "
              "/etc/modprobe.d/), rebuild the initramfs, reboot and load the nvidia module; the node's GPUs must show "
              "in `nvidia-smi` before it takes work again.", "host")


def _legacy(events: list[DriverError], found: Findings) -> None:
    """nv.c's legacy notice (`supported through the NVIDIA 470.xx Legacy drivers ... The 510.47.03 NVIDIA driver will
    ignore this GPU`): the installed driver branch dropped a GPU that is on the bus, so nothing reaches it: the host's
    driver install (no job or image brings a GPU back the kernel driver ignores); once, naming the branches."""
    if not events:
        return
    branches = sorted({b for e in events if (b := legacy_gpu(str(e.get("text") or "")))})
    which = f"the NVIDIA {' / '.join(branches)} legacy drivers" if branches else "a legacy driver branch"
    found.add(FAIL, "DRIVER_ERROR", f"the installed driver ignores GPU(s) on the bus that only {which} support "
              " (`NVRM: ... supported through the NVIDIA ... Legacy drivers ... will ignore this GPU`): a "
              "driver branch that dropped them, so NVML and CUDA do not list them", "Drain the node; install the "
              f"branch that supports its GPUs ({which}, pinned for this node type) or retire the GPUs; `nvidia-smi` "
              "must list them before the node takes work again.", "host")


def _probe_failed(events: list[DriverError], found: Findings) -> None:
    """`NVRM: The NVIDIA probe routine failed for N device(s)`: the driver probed GPUs on the bus and could not bind
    them (a GPU this driver release does not support, one it could not map or enable): no process reaches them, the
    host's driver or GPU, as a GPU the driver could not initialise is; once, with the largest count a line gives."""
    if not events:
        return
    what = _devices(events, probe_failed)
    found.add(FAIL, "GPU_NOT_VISIBLE", f"the driver's probe failed for {what} on the bus (`NVRM: The NVIDIA probe "
              "routine failed`): it binds none of them, so NVML and CUDA do not list them", "Drain the node; read the "
              "NVRM lines before it in dmesg (a GPU this driver release does not support: install the branch that "
              "does; a GPU it could not enable: reseat or replace it).", "host")


def _rejected(events: list[DriverError], found: Findings) -> None:
    """modprobe's `could not insert 'nvidia': Key was rejected by service`: the kernel refused the driver's module for
    its signature (Secure Boot, lockdown), so no driver is loaded: the host's boot chain and module signing; no job or
    image loads a kernel module. Once, however often the loader retried."""
    if not events:
        return
    module = next((m for e in events if (m := module_rejected(str(e.get("text") or "")))), "nvidia")
    found.add(FAIL, "DRIVER_ERROR", f"the kernel refused to load the {module} module for its signature (`Key was "
              "rejected by service`: Secure Boot enforces module signatures): no NVIDIA driver is loaded",
              "Drain the node; enrol the key the module is signed with (`mokutil --import`, then confirm at the next "
              "boot), or sign the module with an enrolled key (DKMS's MOK), or disable Secure Boot's enforcement; "
              "`nvidia-smi` must list the GPUs before the node takes work again.", "host")


def _unbuilt(events: list[DriverError], found: Findings, nvml_answers: bool) -> None:
    """DKMS could not build the NVIDIA module for a kernel: booted into it the node has no driver (the host's install
    after a kernel update). Where NVML answers, the running kernel has its module: the failed build is another
    kernel's, the node's next boot into it loses the driver (a warning, no drain)."""
    if not events:
        return
    kernel = next((k for e in events if (k := module_build_failed(str(e.get("text") or "")))), "a kernel")
    remedy = ("Install the headers of that kernel and rebuild (`dkms autoinstall -k <kernel>`, or the distribution's "
              "precompiled nvidia module for it), or boot the kernel the driver supports; `nvidia-smi` must list the "
              "GPUs before the node takes work.")
    if nvml_answers:
        found.add(WARN, "DRIVER_ERROR", f"DKMS could not build the NVIDIA module for kernel {kernel}; NVML answers on "
                  "the running one: booted into that kernel the node will have no driver", remedy, "host")
    else:
        found.add(FAIL, "DRIVER_ERROR", f"DKMS could not build the NVIDIA module for kernel {kernel} (`Bad return "
                  "status for module build`), and no GPU is shown answering: booted into that kernel the node has no "
                  "NVIDIA driver", "Drain the node. " + remedy, "host")


def _api_mismatch(events: list[DriverError], found: Findings, nvml_answers: bool) -> None:
    """`NVRM: API mismatch: the client has the version X, but this kernel module has the version Y`: the driver's user
    space and its loaded module are two releases (an upgrade without a reboot, a DKMS module not rebuilt for the running
    kernel), so the kernel refuses every client of that user space: the host's driver install, judged even where NVML
    lists no GPU (NVML is one of the refused clients). Once, however often the clients retried."""
    if not events:
        return
    versions = next((v for e in events if (v := api_versions(str(e.get("text") or "")))), None)
    which = f" (user space {versions[0]} over module {versions[1]})" if versions else ""
    if nvml_answers:
        # NVML is a client of this host's user space, and the kernel let it through: the refused client brought its
        # own driver libraries (a container image that bundles them), or its lines predate a module reload
        found.add(WARN, "DRIVER_ERROR", f"the kernel refused a client of another NVIDIA driver release{which} "
                  "(`NVRM: API mismatch`), while NVML reaches the GPUs through this host's: the refused client brought "
                  "its own driver libraries (a container image that bundles libcuda / libnvidia-ml), or the lines "
                  "predate a reload of the module", "Find the client the line names (`the client '<name>' (pid N)`): "
                  "an image must take the host's driver libraries from the container runtime, never bundle its own.",
                  "host")
        return
    found.add(FAIL, "DRIVER_ERROR", f"the kernel refuses the NVIDIA driver's user space{which}: it is another release "
              "than the loaded module (`NVRM: API mismatch`), so no NVIDIA client (NVML, CUDA, nvidia-persistenced) "
              "reaches the GPUs", "Drain the node; rebuild the module for the running kernel (`dkms autoinstall`) or "
              "reinstall one driver release whole, then reload the module or reboot; `nvidia-smi` must list the GPUs "
              "before the node takes work again.", "host")


def answering(devices: list[Any]) -> bool:
    """NVML lists GPUs that answer: this host's driver user space reaches the module (an API mismatch is another's,
    a container's own libraries)."""
    return any(isinstance(d, dict) and not d.get("lost") for d in devices)
