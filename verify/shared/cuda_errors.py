"""Decode CUDA driver errors into causes a user can act on.

The numbers are cudaError_t values (CUDA Runtime API, "Data types"): 35 cudaErrorInsufficientDriver,
802 cudaErrorSystemNotReady, 803 cudaErrorSystemDriverMismatch, 804 cudaErrorCompatNotSupportedOnDevice; and the
errors of a build without code for the GPU's architecture (209 cudaErrorNoKernelImageForDevice, 500
cudaErrorSymbolNotFound, 98 cudaErrorInvalidDeviceFunction, 200 cudaErrorInvalidKernelImage) or only with PTX newer than
the driver (222 cudaErrorUnsupportedPtxVersion), whoever calls CUDA:
torch's kernels, or NCCL's (`NCCL WARN Cuda failure 'named symbol not found'`: an NCCL built without the GPU's sm_).
"unsatisfied condition: cuda>=" is the NVIDIA Container Toolkit refusing to start a container whose image
sets NVIDIA_REQUIRE_CUDA above what the host driver supports.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..codes import Owner
from .fastre import guarded


@dataclass(frozen=True)
class Decoded:
    code: str
    owner: Owner
    cause: str
    fix: str
    # CUDA refusing to initialise (a line naming it is a refusal wherever it is printed); False: an error a running
    # program meets (out of memory, a kernel's fault), a refusal only where the line says initialisation failed
    refusal: bool = True
    # the code names the failure itself whoever met it (the nccl check reports it under this code, not its own): a
    # job's out of memory is no collective's failure (docs/codes.md lists NCCL's `Cuda failure 'out of memory'` there)
    names_failure: bool = False
    # the code is the gpu check's finding (a kernel's fault, an ECC or NVLink error the GPU returned, a GPU index the
    # process lacks): a collective or a training run that met it failed under its own code (NCCL_FAILED,
    # TRAIN_FAILED), owned by the cause's owner, the cause said beside it
    gpu_finding: bool = False
    # how a report words what CUDA did, where the error was recorded as CUDA's answer to the first call
    said: str = "CUDA does not initialise"
    # the runtime's number for it before CUDA 10.1 renumbered cudaError_t (39 for 214): what a program built against
    # CUDA 10.0 or older prints (Paddle's `(0 vs. 39) Cuda Error: uncorrectable ECC error encountered`)
    before_10_1: int | None = None

    def cause_in(self, text: str | None) -> str:
        """The cause worded for the text it was decoded from: with the number the program printed for the error
        (today's or the one before 10.1), without one where it printed none: never a number it did not print."""
        lead = _LEAD.match(self.cause)
        if not lead:
            return self.cause
        printed = printed_numbers(text)
        number = next((n for n in (int(lead.group(1)), self.before_10_1) if n is not None and n in printed), None)
        return f"CUDA error{f' {number}' if number is not None else ''}{self.cause[lead.end():]}"


# a cause that names its error by number (`CUDA error 214 (uncorrectable ...)`): the number cause_in() words
_LEAD = re.compile(r"CUDA error (\d+)\b")
# a number a program printed as its error's: after the words that carry one (`error 39`, `code=214`, `cuda runtime
# error (39)`, `Cuda failure 2`, `cuInit err: 802`), or glog's CHECK_EQ against cudaSuccess (`(0 vs. 39)`)
_PRINTED = re.compile(r"\b(?:error|failure|code|returned|result|init failure|cu[A-Z]\w* err)[ =:#]*\(?(\d+)\b|"
                      r"\(0 vs\. (\d+)\)", re.IGNORECASE)


def printed_numbers(text: str | None) -> set[int]:
    """The error numbers the text prints (see _PRINTED)."""
    return {int(m.group(1) or m.group(2)) for m in _PRINTED.finditer(text or "")}


# 804: the process loaded a libcuda newer than the kernel driver (the image's cuda-compat package) on a GPU that
# cannot run it (forward compatibility works on data-centre GPUs only). Whose it is depends on the driver: see
# forward_compat(); this is the verdict where the facts show the driver already supports the build's CUDA.
FORWARD_COMPAT = Decoded("DRIVER_ERROR", "image", "CUDA error 804: forward compatibility was used on a GPU that does "
                         "not support it (it works on data-centre GPUs only), although the driver supports this "
                         "build's CUDA natively: the image's cuda-compat libraries were loaded needlessly",
                         "Drop the cuda-compat package (or /usr/local/cuda/compat on LD_LIBRARY_PATH) from the image.")


# 209/500/98/200: the build (torch's kernels, the NCCL it loads, an extension) carries no code for this GPU's
# architecture (NVIDIA/nccl#1372: NCCL built for sm_80 only, on H100; pytorch#152077: torch cu118's NCCL 2.14.3 on
# an sm_120 RTX 5090). The GPU and the driver are fine: the image's build lacks the architecture.
ARCH_GAP = Decoded("ARCH_NOT_IN_BUILD", "image", "the build has no code for this GPU's architecture (CUDA's 'no "
                   "kernel image is available' / 'named symbol not found' / 'invalid device function': the library "
                   "that launched the kernel, torch's or NCCL's, was compiled without this GPU's sm_)",
                   "Use an image whose torch and NCCL are built for this GPU's compute capability (a newer CUDA "
                   "build: cu128 or later for Blackwell), or rebuild the library with its sm_ (NCCL: NVCC_GENCODE).",
                   said="CUDA cannot run this build's kernels on this GPU")


# 222 (cudaErrorUnsupportedPtxVersion, CUDA_ERROR_UNSUPPORTED_PTX_VERSION): the build carries PTX from a newer toolkit
# than the driver's JIT knows, and no SASS this GPU runs (NVIDIA/nvbandwidth#61: built with CUDA 13.2 on driver 580,
# CUDA 13.0). CUDA's minor-version compatibility covers the runtime, never PTX: the build must embed the GPU's SASS or
# come from a toolkit the driver knows. No refusal: CUDA starts and enumerates, the first kernel fails; the driver is
# older than the build needs, and the build is the image's to fix (a driver upgrade is the site's choice, no drain):
# no code of the build runs on this GPU, ARCH_NOT_IN_BUILD (DRIVER_TOO_OLD is the host's: one code, one owner).
PTX_TOOLCHAIN = Decoded("ARCH_NOT_IN_BUILD", "image", "CUDA error 222 (the provided PTX was compiled with an unsupported "
                        "toolchain): the build carries PTX from a newer CUDA toolkit than this driver's JIT compiler "
                        "accepts, and no SASS for this GPU (minor-version compatibility covers the runtime, not PTX)",
                        "Rebuild the program with this GPU's SASS (`-gencode arch=compute_XY,code=sm_XY`) or with a "
                        "toolkit no newer than the driver's CUDA (`nvidia-smi`'s CUDA Version); or update the driver.",
                        refusal=False, said="CUDA cannot JIT this build's PTX")


# torch's start-up warning (torch/cuda/__init__.py `_check_capability`, 0.3.1 on): `Found GPU0 Tesla K80 which is of
# cuda capability 3.7. / PyTorch no longer supports this GPU because it is too old.` (from 1.x on `The minimum cuda
# capability supported by this library is 5.0.`, the least of get_arch_list()): the GPU is below every architecture
# of the build, so by CUDA's rules none of its code runs there (SASS needs the same major, PTX a GPU at least as new).
# No refusal: CUDA starts, and the first kernel fails; the build is the image's, as 209 is.
TOO_OLD = Decoded("ARCH_NOT_IN_BUILD", "image", "torch says its build no longer supports this GPU because it is too "
                  "old: the GPU's compute capability is below every architecture the build carries, so no code of it "
                  "runs there", "Use a torch build that still carries this GPU's architecture (an older release, or "
                  "one built from source with TORCH_CUDA_ARCH_LIST naming it), or move the job to newer GPUs.",
                  refusal=False, said="torch's build carries no code for this GPU")


# 2: the GPU's memory ran out for this process (cudaErrorMemoryAllocation; torch's "CUDA out of memory. Tried to
# allocate ..."; NCCL's `Cuda failure 'out of memory'` allocating its buffers). The job's use of the memory (or other
# processes on its GPUs) on a healthy GPU: a memory the GPU lost shows as ECC, retired pages or remaps in the facts.
OUT_OF_MEMORY = Decoded("GPU_OUT_OF_MEMORY", "job", "CUDA error 2 (out of memory): the GPU's memory ran out for this "
                        "process: the job's tensors, torch's cache and NCCL's buffers (or other processes on the GPU) "
                        "exceed it", "Lower the batch size (or sequence length, or shard the model further); set "
                        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation; shrink NCCL's buffers "
                        "(NCCL_BUFFSIZE, NCCL_MAX_NCHANNELS); check `nvidia-smi` for other processes on the GPU.",
                        refusal=False, names_failure=True)

# 700/716/719/710/715 and kin: a kernel faulted (cudaGetErrorString's words; NVIDIA's Xid catalog files the Xid that
# goes with them, 13 and 31, under the application's faults). Alone it is the program's kernel; the GPU's fault only
# where an Xid or ECC fact beside it says so (48, 63/64, 79, 94/95: judged from those facts, ranked above this).
KERNEL_FAULT = Decoded("CUDA_KERNEL_FAULT", "job", "a CUDA kernel faulted (illegal address, misaligned address, "
                       "illegal instruction, device-side assert or unspecified launch failure): the program's kernel, "
                       "as long as no Xid or ECC error beside it shows the GPU at fault",
                       "Rerun with CUDA_LAUNCH_BLOCKING=1 (TORCH_USE_CUDA_DSA=1) or under compute-sanitizer to find the "
                       "kernel; read the node's kernel log: Xid 48/63/64/94/95 (ECC) or 79 (off the bus) beside it make "
                       "it the GPU's: drain the node.", refusal=False, gpu_finding=True)


# 214/220: the GPU's memory or an NVLink returned data its ECC could not correct, met by a running program
# (cudaErrorECCUncorrectable, cudaErrorNvlinkUncorrectable): the GPU's fault, whoever ran on it. The job that met it
# died; the next job on that GPU meets it again (or runs out of memory) until the GPU is reset.
ECC_UNCORRECTABLE = Decoded("ECC_UNCORRECTABLE", "host", "CUDA error 214 (uncorrectable ECC error encountered): the "
                            "GPU's memory returned data its ECC could not correct", "Drain the node and reset the GPU "
                            "(`nvidia-smi -r`) or reboot; read `nvidia-smi -q -d ECC,ROW_REMAPPER` and the kernel log's "
                            "Xid 48/63/94/95; RMA if it recurs.", refusal=False, gpu_finding=True,
                            said="a running program met an uncorrectable ECC error", before_10_1=39)
NVLINK_UNCORRECTABLE = Decoded("NVLINK_ERRORS", "host", "CUDA error 220 (uncorrectable NVLink error): an NVLink "
                               "returned data its ECC could not correct", "Drain the node; check `nvidia-smi nvlink "
                               "-e` and the kernel log's Xid 74/145/149; reseat or replace the link's cable or tray.",
                               refusal=False, gpu_finding=True, said="a running program met an uncorrectable NVLink "
                               "error", before_10_1=80)


# 999: CUDA's unknown error (cudaErrorUnknown, CUDA_ERROR_UNKNOWN): the driver could not create or keep its state
# for the GPU: after a suspend and resume (nvidia_uvm wedged), /dev/nvidia-uvm not loaded or not passed, a GPU the
# driver lost, the NVSwitch fabric's state (multicast memory after the fabric manager restarted without a GPU reset);
# torch prints it at initialisation as "CUDA unknown error - this may be due to an incorrectly set up environment".
UNKNOWN_ERROR = Decoded("DRIVER_ERROR", "host", "CUDA error 999 (unknown error): the driver could not create or keep "
                        "its state for the GPU (after a suspend and resume, nvidia_uvm not loaded or wedged, a GPU the "
                        "driver lost, or on NVSwitch systems the fabric after a fabric-manager restart)",
                        "Read the kernel log for an Xid; reload the NVIDIA modules (`rmmod nvidia_uvm && modprobe "
                        "nvidia_uvm`) or reset the GPUs / reboot the node; in a container, check that /dev/nvidia-uvm "
                        "is passed.", refusal=False, before_10_1=30)


# 3 (cudaErrorInitializationError, CUDA_ERROR_NOT_INITIALIZED) as the answer to CUDA's first call (cuInit,
# cudaGetDeviceCount): the kernel driver loaded (NVML may well read the GPU) and the CUDA driver could not bring the GPU
# up: the GPU's firmware (GSP) did not start, the PCI layout a virtual machine presents is one the driver refuses, or
# the driver is in a bad state after an earlier error. Known by its name or by the number beside the runtime's string
# (`Error 3: initialization error`); a bare `CUDA error: initialization error` in a running program is as often a
# process forked after CUDA started (the job's), and is left undecoded.
NOT_INITIALISED = Decoded("DRIVER_ERROR", "host", "CUDA error 3 (initialization error): the CUDA driver could not "
                          "bring the GPU up although the kernel driver is loaded (the GPU's firmware did not start, a "
                          "virtual machine presents the GPU in a PCI layout the driver refuses, or the driver is in a "
                          "bad state after an earlier error)", "Drain the node; read the kernel log (NVRM lines, Xid, "
                          "GSP errors) and reset the GPU or reboot; in a virtual machine, pass the GPU through as the "
                          "host sees it (behind a PCIe root port); reinstall the driver if it persists.")


# 100 (cudaErrorNoDevice): the driver answered and the process sees no GPU: started without a device request
# (`--gpus`, nvidia.com/gpu, Slurm's --gres) or with CUDA_VISIBLE_DEVICES naming none it has. A node whose GPUs are
# gone shows it in NVML's facts (GPU_LOST, a lost device), judged there; this line alone is the process's view.
NO_DEVICE = Decoded("GPU_NOT_VISIBLE", "job", "CUDA error 100 (no CUDA-capable device is detected): the driver "
                    "answered and this process sees no GPU: it was started without GPUs or with a CUDA_VISIBLE_DEVICES "
                    "that names none it has", "Request the GPUs (`docker run --gpus all`, nvidia.com/gpu, `--gres=gpu:N`) "
                    "and leave CUDA_VISIBLE_DEVICES to the launcher (or set it to indices the process has); "
                    "`nvidia-smi -L` in the same container lists what it sees.", before_10_1=38)
# 101 (cudaErrorInvalidDevice): a program asked for a GPU index the process does not have: more ranks per node than
# visible GPUs (`--nproc_per_node 8` under CUDA_VISIBLE_DEVICES=2,3), or a device index from the wrong rank variable
INVALID_DEVICE = Decoded("DEVICE_COUNT_MISMATCH", "job", "CUDA error 101 (invalid device ordinal): the program asked "
                         "for a GPU index this process does not see: more ranks per node than visible GPUs, or a "
                         "CUDA_VISIBLE_DEVICES narrower than the launcher's device mapping",
                         "Start as many ranks per node as GPUs the process sees (torchrun --nproc_per_node, Slurm "
                         "--ntasks-per-node), and take the device from LOCAL_RANK within CUDA_VISIBLE_DEVICES.",
                         refusal=False, gpu_finding=True, said="a running program asked for a GPU it does not have",
                         before_10_1=10)


# cudaGetErrorString's texts of the errors a running program meets (a kernel's fault, the GPU's ECC or NVLink error):
# read by `verify explain` where a line prints one alone or says a CUDA call failed with it (verify/explain/cuda.py)
RUNNING_STRINGS = ("an illegal memory access was encountered", "an illegal instruction was encountered",
                   "unspecified launch failure", "device-side assert triggered", "misaligned address",
                   "uncorrectable ECC error encountered", "uncorrectable NVLink error detected during the execution")


# (the cudaError_t number or None, its names and strings as programs print them, what it means). The runtime's
# name (cudaErrorSystemNotReady), the driver API's (CUDA_ERROR_SYSTEM_NOT_READY) and cudaGetErrorString's text are
# each enough on their own; a bare number only after a word that makes it an error code (`Error 802`, `code=802`,
# `returned 802`).
_RULES: list[tuple[int | None, re.Pattern[str], Decoded]] = [
    # nvidia-docker 1.0 said it its own way (`Error: unsupported CUDA version: driver 8.0 < image 9.0.176`, batch 297);
    # the toolkit names the last condition of NVIDIA_REQUIRE_CUDA it tried: `cuda>=10.0 brand=tesla,driver>=384,
    # driver<385` on a 390 driver fails as `driver < 385` (batch 305), the same refusal of a driver too old
    (None, re.compile(r"unsatisfied condition: (?:cuda|driver|brand)\s*(?:[<>]=?|=)|unsupported CUDA version: driver \d+(?:\.\d+)* < image "
                      r"\d+(?:\.\d+)*", re.IGNORECASE),
     Decoded("DRIVER_TOO_OLD", "host", "the NVIDIA Container Toolkit (nvidia-docker) refused the container: the "
             "image's NVIDIA_REQUIRE_CUDA (nvidia-docker 1.0: its CUDA_VERSION) asks for a newer CUDA than the host "
             "driver supports",
             "Update the host driver, or use an image built for an older CUDA (NVIDIA_DISABLE_REQUIRE=1 only "
             "where the image carries a forward-compatibility package that matches a data-centre GPU).")),
    (35, re.compile(r"cudaErrorInsufficientDriver|CUDA_ERROR_INSUFFICIENT_DRIVER|driver version is insufficient|"
                    r"NVIDIA driver on your system is too old", re.IGNORECASE),
     Decoded("DRIVER_TOO_OLD", "host", "CUDA error 35: the driver is older than the CUDA runtime this torch was built with",
             "Update the host driver to one that supports this CUDA version, or pick an image built for an older CUDA.")),
    (802, re.compile(r"cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY|system not yet initiali[sz]ed", re.IGNORECASE),
     Decoded("DRIVER_ERROR", "host", "CUDA error 802 (system not ready): on NVSwitch systems (HGX/DGX) the fabric "
             "manager is not running or has not finished training the fabric",
             "Start it on the host: `systemctl enable --now nvidia-fabricmanager` (same version as the driver), "
             "then check `nvidia-smi -q | grep -i fabric`.", before_10_1=83)),
    (803, re.compile(r"cudaErrorSystemDriverMismatch|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH|"
                     r"unsupported display driver / cuda driver combination", re.IGNORECASE),
     Decoded("DRIVER_ERROR", "image", "CUDA error 803: a forward-compatibility libcuda (cuda-compat package) in the "
             "image does not match the host's kernel driver",
             "Remove the cuda-compat libraries from the image's library path (or match them to the kernel driver).")),
    (804, re.compile(r"cudaErrorCompatNotSupportedOnDevice|CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE|"
                     r"forward compatibility was attempted on non supported HW", re.IGNORECASE), FORWARD_COMPAT),
    # no code for this GPU: the library's device code is looked up by architecture and none matches. A bare number
    # never counts here (`error 500` is as often HTTP's): only the names and cudaGetErrorString's words.
    (None, re.compile(r"cudaErrorNoKernelImageForDevice|CUDA_ERROR_NO_BINARY_FOR_GPU|no kernel image is available|"
                      r"cudaErrorSymbolNotFound|named symbol not found|cudaErrorInvalidDeviceFunction|"
                      r"invalid device function|cudaErrorInvalidKernelImage|CUDA_ERROR_INVALID_IMAGE|"
                      r"device kernel image is invalid", re.IGNORECASE), ARCH_GAP),
    (None, re.compile(r"PyTorch no longer supports this GPU because it is too old", re.IGNORECASE), TOO_OLD),
    (222, re.compile(r"cudaErrorUnsupportedPtxVersion|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|"
                     r"PTX was compiled with an unsupported toolchain", re.IGNORECASE), PTX_TOOLCHAIN),
    # by name and words only: `Error 2` is as often errno's ENOENT or ncclSystemError's number
    (None, re.compile(r"cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|OutOfMemoryError|\bout of memory\b|"
                      r"\bCUDA (?:error|failure):? 2\b", re.IGNORECASE), OUT_OF_MEMORY),
    (None, re.compile(r"cudaErrorECCUncorrectable|CUDA_ERROR_ECC_UNCORRECTABLE|uncorrectable ECC error encountered|"
                      r"\bCUDA (?:error|failure):? 214\b", re.IGNORECASE), ECC_UNCORRECTABLE),
    (None, re.compile(r"cudaErrorNvlinkUncorrectable|CUDA_ERROR_NVLINK_UNCORRECTABLE|uncorrectable NVLink error|"
                      r"\bCUDA (?:error|failure):? 220\b", re.IGNORECASE), NVLINK_UNCORRECTABLE),
    # (nccl-tests' CUDACHECK quotes cudaGetErrorString after its source line: `Test CUDA failure common.cu:1045
    # 'unknown error'`, pyxis#81)
    (None, re.compile(r"cudaErrorUnknown\b|CUDA_ERROR_UNKNOWN\b|CUDA unknown error|CUDA error: unknown error|"
                      r"Cuda failure (?:[\w./-]+:\d+ )?(?:999 )?'unknown error|\bCUDA (?:error|failure):? 999\b|"
                      # CUDA 10.0 and older numbered it 30: torch's `cuda runtime error (30) : unknown error`,
                      # THCudaCheck's `error=30 : unknown error`
                      r"\bcuda runtime error \((?:30|999)\) ?: unknown error|\bTHCudaCheck FAIL\b.*\berror=(?:30|999) : "
                      r"unknown error", re.IGNORECASE),
     UNKNOWN_ERROR),
    (None, re.compile(r"cudaErrorInitializationError|CUDA_ERROR_NOT_INITIALIZED|\b3\)?:? initiali[sz]ation error",
                      re.IGNORECASE), NOT_INITIALISED),
    # by name and words only, as for 2: `error 100` is as often a count or an HTTP status
    (None, re.compile(r"cudaErrorNoDevice\b|CUDA_ERROR_NO_DEVICE\b|no CUDA-capable device is detected|"
                     r"\bCUDA (?:error|failure):? 100\b", re.IGNORECASE), NO_DEVICE),
    (None, re.compile(r"cudaErrorInvalidDevice\b|CUDA_ERROR_INVALID_DEVICE\b|invalid device ordinal|"
                      r"\bCUDA (?:error|failure):? 101\b", re.IGNORECASE), INVALID_DEVICE),
    (None, re.compile(r"cudaErrorIllegalAddress|CUDA_ERROR_ILLEGAL_ADDRESS|illegal memory access|"
                      r"cudaErrorMisalignedAddress|CUDA_ERROR_MISALIGNED_ADDRESS|misaligned address|"
                      r"cudaErrorLaunchFailure|CUDA_ERROR_LAUNCH_FAILED|unspecified launch failure|"
                      r"cudaErrorAssert|CUDA_ERROR_ASSERT|device-side assert|"
                      r"cudaErrorIllegalInstruction|CUDA_ERROR_ILLEGAL_INSTRUCTION|illegal instruction was encountered|"
                      r"\bCUDA (?:error|failure):? 7(?:00|1[059])\b", re.IGNORECASE), KERNEL_FAULT),
]
# a number after the words that carry one: `error 802`, `returned 802`, and a driver call's wrapper (ollama's `cuInit
# err: 802`, `cuda driver library init failure: 802`); a bare `err` is not one (NCCL's `vendor err 129` is the NIC's)
_NUMBER = r"\b(?:error|code|returned|result|init failure|cu[A-Z]\w* err)[ =:#]*\(?{}\b"
# every rule's words at once: a line that names none is passed over in one search (a log of millions of lines)
# searched over whole logs (explain): guarded by the characters its phrases start with (fastre.py: 3-4x faster)
_WORDS = "|".join(f"(?:{words.pattern})" for _, words, _ in _RULES)
_ANY_WORDS = guarded(re.compile(_WORDS, re.IGNORECASE))
ANY_WORDS = _ANY_WORDS            # named() finds nothing on a line this does not match (explain's scan of long logs)
_ANY_NUMBER = re.compile(_NUMBER.format(r"(\d+)"), re.IGNORECASE)
# where a line's CUDA message is: any rule's words or an error's number (explain's test of a mention reads before it)
MESSAGE = guarded(re.compile(_WORDS + "|" + _NUMBER.format(r"\d+"), re.IGNORECASE))


def decode(text: str | None) -> Decoded | None:
    """The known cause of a CUDA driver error message (by name, string or number), or None."""
    if not text:
        return None
    # the words and the numbers of every rule found in one pass each (a rule at a time was seconds on a long line)
    worded = bool(_ANY_WORDS.search(text))
    numbers = {m.group(1) for m in _ANY_NUMBER.finditer(text)}
    for number, words, decoded in _RULES:
        if (worded and words.search(text)) or (number is not None and str(number) in numbers):
            return decoded
    return None


def named(text: str | None) -> Decoded | None:
    """The cause where the text names the error (a name or cudaGetErrorString's words), not a bare number: enough to
    tell a CUDA error in any program's wording (nccl-tests' `Test CUDA failure common.cu:941 'system not yet
    initialized'`, gpu_burn's `Error (gpu_burn-drv.cpp:298): system not yet initialized`)."""
    if not text or not _ANY_WORDS.search(text):
        return None
    return next((decoded for _, words, decoded in _RULES if words.search(text)), None)


def named_without_driver(text: str | None) -> Decoded | None:
    """named(), for a check that holds no driver facts (the nccl and train checks: an error met mid-run): 804 is
    then judged as forward_compat does without them, the driver's."""
    decoded = named(text)
    return forward_compat(None, False) if decoded is FORWARD_COMPAT else decoded


def forward_compat(driver: str | None, supported: bool) -> Decoded:
    """Error 804 judged with the driver: the loaded libcuda is newer than the kernel driver, so the image runs a CUDA
    the driver does not support and this GPU cannot bridge the gap: the driver is too old for the image (the fix is a
    newer host driver, or an image of the driver's CUDA), unless the facts show the driver supports the build's CUDA
    (`supported`): then the image loaded its cuda-compat libraries for nothing."""
    if supported:
        return FORWARD_COMPAT
    return Decoded("DRIVER_TOO_OLD", "host", f"CUDA error 804: forward compatibility was attempted: the image's CUDA "
                   f"is newer than driver {driver or '(version not recorded)'} supports, and this GPU (not a "
                   "data-centre one) cannot run a newer CUDA through the cuda-compat package",
                   "Update the host driver to one that supports the image's CUDA natively, or use an image built for "
                   "the driver's CUDA.")


# Refusals whose words say what CUDA answered but not whose fault it is: 46 (cudaErrorDevicesUnavailable,
# CUDA_ERROR_DEVICE_UNAVAILABLE: an exclusive compute mode held by another process, or a GPU in a state that refuses
# contexts; the driver's own status lines tell which). Recognised as CUDA's refusal, never decoded to an owner.
_UNDECIDED = re.compile(r"cudaErrorDevicesUnavailable|CUDA_ERROR_DEVICE_UNAVAILABLE|"
                        r"CUDA-capable devices?(?:\(s\))? (?:is/are|are|is) busy or unavailable", re.IGNORECASE)


def undecided(text: str | None) -> bool:
    """Whether the text names a CUDA refusal this module knows but cannot give an owner from its words alone."""
    return bool(text and _UNDECIDED.search(text))
