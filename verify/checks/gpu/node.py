"""The gpu facts of one judgement seen whole (Node: the torch <-> NVML mapping resolved once), the driver the build
needs, and why no GPU is usable."""
from __future__ import annotations

import re
from typing import Any

from ... import baselines
from ...codes import Owner
from ...facts import NONE, GpuFacts, NvmlDevice
from ...shared.cuda_errors import FORWARD_COMPAT, Decoded, decode, forward_compat, undecided
from ...shared.gpumemory import where
from . import gpuidentity

# Minimum driver per CUDA major under minor-version compatibility (CUDA Toolkit release notes, table
# "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor Version Compatibility"). Our images carry
# the exact floor from compat.yaml in TORCHIMAGES_DRIVER_MIN; this table serves images built elsewhere.
DRIVER_FLOOR = {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}


DRIVER_MIN_ENV = "TORCHIMAGES_DRIVER_MIN"


def version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in str(v).split(".") if x.isdecimal())


def driver_floor(facts: GpuFacts) -> str | None:
    """The driver the image needs: TORCHIMAGES_DRIVER_MIN (our images), else the table by CUDA major."""
    if facts.get("driver_min_env"):
        return str(facts["driver_min_env"])
    cuda = facts.get("torch_cuda")
    major = str(cuda).split(".")[0] if cuda else ""
    return DRIVER_FLOOR.get(int(major)) if major.isdecimal() else None


def refusal(facts: GpuFacts, error: str | None) -> Decoded | None:
    """CUDA's refusal decoded (verify/shared/cuda_errors.py), with what the facts say of the driver where the
    cause depends on it (804: forward compatibility)."""
    decoded = decode(error)
    if decoded is not FORWARD_COMPAT:
        return decoded
    cuda_driver, torch_cuda = facts.get("cuda_driver"), facts.get("torch_cuda")
    supported = bool(cuda_driver and torch_cuda and torch_cuda != NONE
                     and version_tuple(str(cuda_driver)) >= version_tuple(str(torch_cuda)))
    return forward_compat(facts.get("driver"), supported)


# NVML_ERROR_LIB_RM_VERSION_MISMATCH: the kernel module loaded is not the user-space driver's version (a driver
# upgraded without a reboot, or a half-upgraded package set): a driver is installed and broken, whatever was expected
_RM_MISMATCH = re.compile(r"Driver/library version mismatch|RM_VERSION_MISMATCH|LibRmVersionMismatch", re.IGNORECASE)


_BOTH_REFUSED = ("Drain the node. Run `nvidia-smi` and read `dmesg` on the host itself: where they fail there too, "
                 "reinstall or fix the node's driver (on a vGPU guest, `nvidia-smi -q`'s License Status: an "
                 "unlicensed guest is restricted) and reboot; where only containers fail, the runtime lost the GPU "
                 "devices (a systemd reload under the systemd cgroup driver): restart the pods and fix the "
                 "toolkit's cgroup setting.")


def _cuda_refused(facts: GpuFacts) -> tuple[str, Decoded | None] | None:
    """CUDA's refusal of the GPU recorded beside NVML's (its first call's, or a program's error): (the text, its
    decoding where the catalog gives the host's cause). A refusal of a device that is there (46: busy or
    unavailable, no owner in its words) counts; one the catalog gives the job or the image (no device requested, the
    image's cuda-compat), one it does not decode (no driver found: no GPU shown) and an error a running program meets
    (out of memory) do not."""
    texts = [facts.get("cuda_init_error")] + [e.get("text") for e in facts.get("cuda_errors") or [] if isinstance(e, dict)]
    for text in texts:
        if not isinstance(text, str) or not text.strip() or text == NONE:
            continue
        decoded = decode(text)
        if undecided(text):
            return text.strip(), None
        if decoded is not None and decoded.refusal and decoded.owner == "host":
            return text.strip(), decoded
    return None


def _driver_answers(facts: GpuFacts) -> str:
    """Where the record holds the driver's version beside a process that has no GPU (nvidia-smi on the host read it:
    a live probe reads it through NVML, which such a process cannot load), the node's driver answers, so its GPUs are
    there and the process was not given them: a failure whether GPUs were expected or not. "" where not shown."""
    driver = facts.get("driver")
    return f", while the node's driver {driver} answers (its GPUs are there)" if driver else ""


# libnvidia-container's own wording (`nvidia-container-cli: initialization error: nvml error: driver not loaded`): the
# toolkit's hook runs on the host, only for a container that asked for GPUs, and found the host's libnvidia-ml but no
# NVIDIA kernel module: the node's driver is not loaded (not built for the running kernel, blocked, not installed).
# No container started, so it is never a container without its devices; a process's own `NVMLError_DriverNotLoaded`
# (or nvidia-smi's `couldn't communicate`) is not this rule.
_TOOLKIT_NO_DRIVER = re.compile(r"(?:nvidia-container-cli\b.*|^\s*(?:initialization error: )?)nvml error: driver not "
                                r"loaded", re.IGNORECASE)
# The same hook finding no libnvidia-ml at all (`nvidia-container-cli: initialization error: load library failed:
# libnvidia-ml.so.1: cannot open shared object file`): the toolkit is installed on the host without the driver's
# user-space, which ships that library (rocky-9.3-nvidia-container-cli-list-load-library-failed-...): the host's driver
# install, as above; a process's own missing library (`NVML Shared Library Not Found`) is not this rule.
_TOOLKIT_NO_LIBRARY = re.compile(r"nvidia-container-cli\b.*load library failed: libnvidia-ml\.so", re.IGNORECASE)
# The same hook reaching a loaded driver that failed it (`nvidia-container-cli: detection error: driver error: timed out`,
# `initialization error: driver rpc error: timed out`: libnvidia-container's own driver-query errors): the host's driver
# or a GPU behind it does not answer (aws-a100-8gpu-k8s-node-gpu-operator-crashloop-...): no container is involved yet
_TOOLKIT_DRIVER_FAILED = re.compile(r"nvidia-container-cli\b.*\bdriver (?:rpc )?error\b", re.IGNORECASE)
# The same hook refusing a device the container asked for that this node does not have (`nvidia-container-cli: device
# error: 1: unknown device`: `--gpus 2` or `device=1` on a one-GPU node; `GPU-<uuid>: unknown device`: a UUID pinned in
# the job or the image's NVIDIA_VISIBLE_DEVICES; `unknown device id: no-gpu-has-10MiB-to-run`: a GPU-sharing
# scheduler's answer): the request is the job's, no container started, and nothing shows the node's GPUs at fault
_TOOLKIT_UNKNOWN_DEVICE = re.compile(r"nvidia-container-cli\b.*\bdevice error: .*unknown device", re.IGNORECASE)


def toolkit_symptom(facts: GpuFacts) -> bool:
    """Whether NVML's error is the toolkit's hook getting no answer from the driver, or not finding a GPU asked for: a
    symptom, whose cause (a GPU the driver could not initialise, an Xid) the kernel log may name and then decides
    (batch 257: RmInitAdapter failed on one SXM card, and the hook timed out on the driver; hunt86: `device error: 3:
    unknown device` beside GPU 3's Xid 79, the GPU gone from the bus, not the job's request)."""
    error = facts.get("nvml_error")
    return isinstance(error, str) and bool(_TOOLKIT_DRIVER_FAILED.search(error) or _TOOLKIT_UNKNOWN_DEVICE.search(error))
_NO_RUNTIME_FIX = ("Start it under the NVIDIA runtime: `docker run --gpus all` (or `--runtime=nvidia`); on Kubernetes "
                   "give the pod the runtime that carries the NVIDIA hook (runtimeClassName nvidia, or the runtime the "
                   "node's containerd or CRI-O gives pods, not Docker's default-runtime) and request nvidia.com/gpu. "
                   "Where docker refuses the request (`could not select device driver`, `unknown or invalid runtime "
                   "name: nvidia`), its daemon has no NVIDIA runtime: install the NVIDIA Container Toolkit, run "
                   "`nvidia-ctk runtime configure --runtime=docker` and restart docker, or run where it is set up.")


def _runtime_refused(facts: GpuFacts) -> tuple[str, str, Owner, str | None] | None:
    """A fault the facts prove whatever was expected, before the process's own view: the toolkit's hook on the host
    finding no driver loaded (host), or a process given neither the GPU devices nor libnvidia-ml on a node whose
    driver answers (job: started without the NVIDIA runtime, or refused it by the daemon; never a drain)."""
    error = facts.get("nvml_error")
    if isinstance(error, str) and _TOOLKIT_NO_DRIVER.search(error):
        return (f"the NVIDIA Container Toolkit's hook on the host could not initialise NVML ({error[:200]}): the "
                "node's NVIDIA kernel module is not loaded, so no container on it gets a GPU",
                "Drain the node; on the host, `lsmod | grep nvidia` and `dmesg`: load or rebuild the driver's module "
                "for the running kernel (DKMS after a kernel update, nouveau blacklisted, Secure Boot's key), or "
                "reinstall the driver, until `nvidia-smi` answers.", "host", "DRIVER_ERROR")
    if isinstance(error, str) and _TOOLKIT_NO_LIBRARY.search(error):
        return (f"the NVIDIA Container Toolkit on the host found no libnvidia-ml ({error[:200]}): the NVIDIA driver's "
                "user-space is not installed (or not where the loader looks), so no container on it gets a GPU",
                "Drain the node; install (or repair) the NVIDIA driver on the host, its libraries with it "
                "(`ldconfig -p | grep libnvidia-ml`), until `nvidia-smi` answers.", "host", "DRIVER_ERROR")
    if isinstance(error, str) and _TOOLKIT_UNKNOWN_DEVICE.search(error):
        return (f"the NVIDIA Container Toolkit refused the GPU the container asked for ({error[:200]}): the request "
                "names a GPU this node does not have, so the container never started",
                "Request GPUs this node has: `--gpus N` no more than `nvidia-smi -L` lists, `device=` an index or UUID "
                "of this node (a UUID baked into the image's NVIDIA_VISIBLE_DEVICES belongs to another machine); on "
                "Kubernetes let the device plugin assign them. If the UUID is one this node's plugin handed out, the "
                "GPU is gone: `nvidia-smi -L` on the host.", "job", "GPU_NOT_VISIBLE")
    if isinstance(error, str) and _TOOLKIT_DRIVER_FAILED.search(error):
        return (f"the NVIDIA Container Toolkit's hook on the host got no answer from the NVIDIA driver ({error[:200]}): "
                "the node's driver, or a GPU behind it, is hung or failing, so no container on it gets a GPU",
                "Drain the node; on the host, `nvidia-smi` and the kernel log (`dmesg | grep -i -e NVRM -e Xid`): a GPU "
                "that hangs the driver is replaced, a hung driver reloaded (reboot) until `nvidia-smi` answers.",
                "host", "DRIVER_ERROR")
    answers = _driver_answers(facts)
    if answers and facts.get("nvml_library") is False and facts.get("device_nodes") is False:
        return ("no /dev/nvidia* device nodes and no libnvidia-ml.so in this process" + answers + ": it was started "
                "without the NVIDIA runtime, which injects the GPUs and the driver's libraries", _NO_RUNTIME_FIX,
                "job", "GPU_NOT_VISIBLE")
    return None


def why_no_gpu(facts: GpuFacts) -> tuple[str, str, Owner, str | None]:
    """(cause, remedy, owner, code) when no GPU is usable, in the order a user should look; the code is a fault the
    facts prove whether GPUs were expected or not (None: no GPU visible, a failure only where GPUs are expected)."""
    if facts.get("torch_cuda") == NONE:
        # beside GPUs the node's driver lists (nvidia-smi, NVML: no torch needed), the GPUs are there and the build
        # can never use them: the image's fault whether GPUs were expected or not (batch 152's RTX 4080 source build)
        listed = bool(facts.get("driver")) and any(isinstance(d, dict) and (d.get("name") or d.get("uuid"))
                                                   for d in facts.get("devices") or [])
        return ("this is a CPU build of torch (torch.version.cuda is None)" + (
                    f", on a node whose driver {facts.get('driver')} lists its GPUs" if listed else ""),
                ("Use a CUDA image of the matrix (e.g. a -cuda13.x- tag), or install a CUDA build of torch."), "image",
                "GPU_NOT_VISIBLE" if listed else None)
    if shown := _runtime_refused(facts):
        return shown
    if facts.get("device_nodes") is False:
        return ("no /dev/nvidia* device nodes: the container was started without GPUs",
                ("Start it with `docker run --gpus all` (NVIDIA Container Toolkit installed on the host); on "
                "Kubernetes request nvidia.com/gpu in the pod's resources; under Slurm request --gres=gpu:N."), "job", None)
    answers = _driver_answers(facts)
    if facts.get("nvml_library") is False and answers and facts.get("device_nodes") is not True:
        return ("libnvidia-ml.so is not in this process" + answers + ": the process was started without the NVIDIA "
                "runtime, which injects the GPUs and the driver's libraries", _NO_RUNTIME_FIX, "job", "GPU_NOT_VISIBLE")
    if facts.get("nvml_library") is False:
        nodes = "/dev/nvidia* exist but " if facts.get("device_nodes") is True else ""
        return (f"{nodes}libnvidia-ml.so is missing: the container toolkit is not injecting the driver",
                ("Install/configure the NVIDIA Container Toolkit (`nvidia-ctk runtime configure`) and keep "
                "NVIDIA_DRIVER_CAPABILITIES=compute,utility in the image."), "host", None)
    error = facts.get("nvml_error")
    if isinstance(error, str) and _RM_MISMATCH.search(error):
        return (f"NVML does not initialise: {error}: the loaded kernel module and the user-space driver differ",
                "Reboot the node into the installed driver, or make the driver packages consistent (the kernel "
                "module's version in /proc/driver/nvidia/version against `nvidia-smi`'s package); drain it until then. "
                "Where the host's own `nvidia-smi` works, the container's image ships driver libraries "
                "(libnvidia-ml.so, an installer that adds a driver): remove them from the image.",
                "host", "DRIVER_ERROR")
    if error not in (None, NONE) and (cuda := _cuda_refused(facts)):
        text, decoded = cuda
        return (f"NVML does not initialise ({error}) and CUDA refused a program the GPU ({text[:200]})"
                + (f": {decoded.cause_in(text)}" if decoded else ": both roads to the GPU are refused, so the node's driver "
                   "stack (the driver, or the runtime that hands its devices to containers) refuses its GPU"),
                decoded.fix if decoded else _BOTH_REFUSED, "host", decoded.code if decoded else "DRIVER_ERROR")
    return (f"NVML does not initialise: {error if error not in (None, NONE) else 'no devices listed'}",
            "Check `nvidia-smi` on the host; the driver may be too old for this CUDA build or not loaded.", "host", None)


class Node:
    """The facts of one judgement, with the torch <-> NVML mapping resolved once."""

    def __init__(self, facts: GpuFacts) -> None:
        self.facts = facts
        self.devices = [d for d in facts.get("devices") or [] if isinstance(d, dict)]
        self.by_index = {d.get("index"): d for d in self.devices}
        self.table = baselines.load()
        count = facts.get("torch_devices")
        self.torch_count = count if isinstance(count, int) else None
        self.matches = gpuidentity.match(facts.get("torch_map"), self.torch_count or 0, self.devices,
                                         facts.get("cuda_visible_devices"))
        self.by_torch = {m.torch_index: m for m in self.matches}

    def nvml_of(self, torch_index: Any) -> NvmlDevice | None:
        m = self.by_torch.get(torch_index)
        return self.by_index.get(m.nvml_index) if m and m.nvml_index is not None else None

    def mig_of(self, torch_index: Any) -> str | None:
        m = self.by_torch.get(torch_index)
        return m.mig_uuid if m else None

    def label(self, torch_index: Any) -> str:
        dev = self.nvml_of(torch_index)
        if dev is None:
            return f"torch device {torch_index}"
        mig = self.mig_of(torch_index)
        same = dev.get("index") == torch_index and not mig
        return where(dev) if same else f"torch device {torch_index} = {where(dev)}" + (f" MIG {mig}" if mig else "")
