"""A process that crashed inside NCCL or its net plugin (a segmentation fault whose frames are NCCL's), and whose it is.
Pure: text in, a verdict out.

NCCL, or the net plugin it loaded (libnccl-net.so: HPC-X's `nccl_p2p_ib_init`, aws-ofi-nccl's `nccl_net_ofi_*`),
dereferencing a bad pointer is the software the image ships failing: a bug of that release, or a plugin built for
another NCCL interface or for fewer devices than the node has. A broken adapter, link or GPU reaches NCCL as an error
it returns (a work completion's status, an async event, a CUDA error: judged before this), never as NCCL jumping to
address 0. verify's own nccl check dying the same way is CHECK_CRASHED, the image's (verify/runner.py): one event, one
verdict, wherever it was printed.

The crash as its catchers print it: UCX's handler (HPC-X, Open MPI: `Caught signal 11 (Segmentation fault: address not
mapped to object at address (nil))`), the shell's `Segmentation fault (core dumped)`, `SIGSEGV`, and gdb's innermost
frame at address 0 (`#0  0x0000000000000000 in ?? ()`: a call through a null function pointer). NCCL's frames: its
symbols (`ncclCommInitRank`, and `pncclRedOpDestroy`, the exported alias a stripped libnccl still names), the net
plugins' (`nccl_p2p_ib_init`, `nccl_net_ofi_init`), the libraries (`libnccl.so.2`, `libnccl-net.so`). A crash whose
frames are in the driver's own libraries (`libcuda.so`, `libnvidia-*`) is not NCCL's and is not judged here; a bus
error (SIGBUS) is /dev/shm running out, the job's (SHM_TOO_SMALL), neither.
"""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

SEGV = re.compile(r"Caught signal 11\b|Segmentation fault|\b[Ss]egfault|\bSIGSEGV\b|#0\s+0x0+ in \?\? \(\)")
# case-sensitive: NCCL's identifiers, never the word NCCL in a sentence or an NCCL_* variable
NCCL_FRAME = re.compile(r"\b(?:p?nccl[A-Z]\w*|nccl_[a-z]\w*|libnccl[\w.+-]*)")
DRIVER_FRAME = re.compile(r"\blibcuda\.so|\blibnvidia-\w+")
# the innermost frame under the crash's line in a CUDA driver API function (`File "<unknown>", line 0, in
# cuMemCreate`, `#0 ... in cuMemCreate ()`) or in libcuda: the driver itself crashed, whoever called it (batch 228:
# NCCL's cuMem probe hitting a driver bug NVIDIA fixed in its r595 drivers, NVIDIA/nccl#2106)
_DRIVER_TOP = re.compile(r"\bin (cu[A-Z]\w*)\b|\b(libcuda\.so[\w.]*)")
_FRAME_LINE = re.compile(r"^\s*(?:File \"|#\d+\s|\d+\s+0x)")
# the crash said to be in NCCL in so many words, where no frame is printed (`SIGSEGV in NCCL MNNVL clique enrollment`,
# NVIDIA/nccl#2186; `segfault inside libnccl.so.2`): the same place, named instead of shown
SAID_IN_NCCL = re.compile(r"\s+(?:in|inside)\s+(?:the\s+)?(NCCL|libnccl[\w.+-]*)\b")
# Open MPI's signal handler (opal's `[host:pid] *** Process received signal ***`), kept without the `Signal:` line
# under it (issue 35, batch 155): it catches the program faults (SIGSEGV, SIGABRT, SIGFPE, SIGILL; SIGBUS too, read
# first as /dev/shm where its name is shown), never a kill from outside (SIGKILL cannot be caught): the process's own
# software crashed, whichever library it was in
CAUGHT = re.compile(r"\*\*\* Process received signal \*\*\*")


def nccl_crash(said: str) -> tuple[str, list[str]] | None:
    """(the crash as printed, NCCL's frames named after it) where the text shows a segmentation fault in NCCL's or
    its net plugin's code; None otherwise."""
    crash = SEGV.search(said)
    if not crash or DRIVER_FRAME.search(said, crash.start()):
        return None
    # the functions first (a name called, `nccl_p2p_ib_init (`), then the rest (a gdb frame's arguments, a library)
    named = sorted(NCCL_FRAME.finditer(said), key=lambda m: not re.match(r"\s*\(", said[m.end():m.end() + 3]))
    frames = list(dict.fromkeys(m.group(0) for m in named))
    if not frames and (place := SAID_IN_NCCL.match(said, crash.end())):
        frames = [place.group(1)]
    return (crash.group(0), frames) if frames else None


def unplaced_crash(said: str) -> str | None:
    """The segmentation fault (or the signal Open MPI's handler caught) as printed where the text names no frame at all (a catcher's signal line kept alone);
    None where it names any, NCCL's or the driver's (those are judged by their frames)."""
    crash = SEGV.search(said) or CAUGHT.search(said)
    if not crash or DRIVER_FRAME.search(said) or NCCL_FRAME.search(said) or re.search(r"\.so\b|#\d+\s+0x", said):
        return None
    return crash.group(0)


def crash_verdict(said: list[str], over: str, result: CheckResult, hung: bool) -> CheckResult | None:
    """CHECK_CRASHED, the image's, where the failure is a segmentation fault in NCCL or its net plugin; not where the
    collective hung first (a crash while the job tears a hung communicator down says nothing of why it hung)."""
    if driven := driver_crash_verdict(said, over, result, hung):
        return driven               # the driver's own frame innermost: the node's driver, whoever called it
    found = None if hung else nccl_crash(" | ".join(said))
    if not found:
        return None
    crash, frames = found
    plugin = any(f.startswith(("nccl_", "libnccl-net")) for f in frames)
    where = "the net plugin NCCL loaded" if plugin else "NCCL itself"
    return result.verdict(FAIL, "CHECK_CRASHED", f"{over} failed: the process crashed "
                          f"({crash}) in {where} ({', '.join(frames[:4])}): the NCCL or net plugin the image ships, "
                          "not the node",
                          "Run a newer NCCL (and net plugin built for it) in the image, or leave the plugin out "
                          "(NCCL_NET_PLUGIN=none: NCCL's own IB transport); report the backtrace to its developers. A "
                          "setting that avoids the crashing path (NCCL_IB_GID_INDEX, NCCL_IB_HCA) is a workaround.",
                          "image")


def unplaced_verdict(said: list[str], over: str, result: CheckResult, hung: bool) -> CheckResult | None:
    """A segmentation fault with no frame shown (its signal line kept alone) and no cause named beside it (judged
    last): the software the image ships crashing all the same, whichever library it was in: NCCL_FAILED, the image's,
    never a drain (a node's fault reaches the process as an error returned, not as a jump to a bad address)."""
    signal = None if hung else unplaced_crash(" | ".join(said))
    if not signal:
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: the process crashed "
                          f"({signal}) and no frame is shown: the software the image ships, not the node",
                          "Read the crash's backtrace (the frames under the signal line, or `gdb` on its core) to see "
                          "whose code it is: NCCL and its net plugin (a newer release, or a variable that avoids the "
                          "path, as its release notes say), the framework, or the program.", "image")


def driver_crash(said: str) -> str | None:
    """The driver function (or libcuda) the crash happened in, where the first frame printed under a segmentation
    fault is the driver's (a signal handler's own frame, libc's sigaction, skipped); None otherwise."""
    crash = SEGV.search(said)
    if not crash:
        return None
    frames = [f for f in re.split(r"\n| \| ", said[crash.end():]) if _FRAME_LINE.match(f)][:3]
    frames = [f for f in frames if "sigaction" not in f and "signal" not in f.lower()][:1]
    top = _DRIVER_TOP.search(frames[0]) if frames else None
    return (top.group(1) or top.group(2)) if top else None


def driver_crash_verdict(said: list[str], over: str, result: CheckResult, hung: bool) -> CheckResult | None:
    """A segmentation fault whose innermost frame is the CUDA driver's: the host's driver, not NCCL or the image."""
    where = None if hung else driver_crash("\n".join(said))
    if not where:
        return None
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: the process crashed "
                          f"inside the CUDA driver ({where}), whoever called it: the node's driver",
                          "Update the host's NVIDIA driver to a release that fixes the crash (its release notes); "
                          "until then a setting that avoids the call (NCCL_CUMEM_ENABLE=0 for cuMem) is a workaround.",
                          "host")
