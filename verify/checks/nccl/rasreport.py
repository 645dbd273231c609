"""NCCL's RAS subsystem (2.24+, `ncclras` and its monitor mode; issue 35, batch 230) naming job processes it lost, and
NCCL's own window space running out. Pure.

- RAS keeps a TCP mesh of one thread per NCCL process and reports, from any process's view, the ones it can no longer
  reach (src/ras/client_support.cc): `DEAD` / `N job process(es) considered dead (unreachable via the RAS network)`,
  `INCOMPLETE` / `Missing communicator data from N job process(es)` or `rank(s)`, a rank's error as NCCL's class alone
  (`Rank 3 reported Remote process error`, `2 ranks reported Unhandled CUDA error`; its `Internal error` is NCCL's own,
  judged by internalerr.py), ranks at different operation counts (`MISMATCH`), and in its monitor mode
  `PEER_DEAD`, `PEER_TIMEOUT_DEAD`, `PEER_UNRESPONSIVE` (src/ras/peers.cc, rasnet.cc). Each is a peer process gone or
  behind, seen from elsewhere: the same evidence as a socket its peer closed (peergone.py). A process dies of its own
  program as often as of its node (torchrun takes down every local worker when one fails), and RAS names no cause:
  the job's to read on the process it names, never a drain. A cause of a node's own beside it (a CUDA failure, a
  completion error, an Xid) is read by the rules before this one.
- NCCL's symmetric-memory windows (2.27+, src/dev_runtime.cc) take their addresses from a space NCCL reserves per
  communicator, the size of the largest GPU's memory (or NCCL_WIN_STRIDE); `allocator.cc: Allocation failed. No
  suitable space found to accommodate size=0x... within limit=0x...` (ncclSpaceAlloc) is that space exhausted by the
  windows registered: NCCL's and its caller's bookkeeping of virtual addresses, no device memory and no hardware.
"""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult
from .spawn import LEADING_PHASE

# RAS's words for a process it lost or that fell behind (its report's sections and its monitor's events)
RAS_LOST = re.compile(r"job process(?:es)? (?:is|are) considered dead|\bPEER_(?:TIMEOUT_)?DEAD\b|\bPEER_UNRESPONSIVE\b|"
                      r"Missing communicator data from \d+ (?:job process|rank)|"
                      r"\d+ ranks? (?:has|have) not launched any operations|"
                      r"\branks? (?:has|have) launched up to operation \d+|"
                      r"Communicator ranks have different (?:status|\w+ operation counts)|"
                      r"\b(?:Rank \d+|\d+ ranks) reported (?:Remote process error|System error|Unhandled CUDA error|"
                      r"Invalid usage|Invalid argument)\b|"
                      r"\bRank \d+ \(process \d+[^)\n]*\): (?:unresponsive|considered dead)")
OWN_CAUSE = re.compile(r"Cuda failure|CUDA error \d|ibv_\w+ failed|\bIBV_WC_\w+|retry counter exceeded|"
                        r"Got completion|async (?:fatal )?event|\bXid\b", re.IGNORECASE)
WINDOW_SPACE = re.compile(r"No suitable space found to accommodate size=(0x[0-9a-fA-F]+) within limit=(0x[0-9a-fA-F]+)")

# a part of the error that is RAS's own (its sections' heads, a rank's error class, a monitor event)
_RAS_PART = re.compile(r"(?:\[[^\]\n]*\] )?(?:(?:DEAD|INCOMPLETE|MISMATCH|ERROR|TIMEOUT)\b|#\d+-\d+ \(\w+\) |Rank \d+ |"
                       r"\d+ ranks? |PEER_[A-Z_]+: Process \d+ )")
WATCHDOG = re.compile(r"timeout|timed out|watchdog", re.IGNORECASE)


def _only_ras(error: str, timeout: bool) -> bool:
    """Whether every part of the error is RAS's words (or, on a hang, the hang's own line): a failure said beside
    them (a device missing, a completion error, an NVLink error) is judged by its own rule, never hidden by RAS's."""
    parts = [p.strip() for p in LEADING_PHASE.sub("", error, count=1).split(" | ") if p.strip()]
    return all(RAS_LOST.search(p) or _RAS_PART.match(p) or (timeout and WATCHDOG.search(p)) for p in parts)


RAS_REMEDY = ("Read the log of each process RAS names (its node, PID and GPU are in the report): its exit, crash, OOM "
              "kill or stall is the cause. Where every process of one node is named, check that node is up "
              "(`scontrol show node`, its kernel log) and run `verify` there before draining it.")


def ras_verdict(error: str, over: str, timeout: bool, result: CheckResult) -> CheckResult | None:
    """FAIL (NCCL_TIMEOUT on a hang), the job's, where NCCL's RAS names processes lost or behind and the error names no
    cause of a node's own."""
    lost = RAS_LOST.search(error)
    if lost is None or OWN_CAUSE.search(error) or not _only_ras(error, timeout):
        return None
    return result.verdict(FAIL, "NCCL_TIMEOUT" if timeout else "NCCL_FAILED",
                          f"{over} {'hung' if timeout else 'failed'}: {error}; NCCL's RAS "
                          f"names job processes it lost or that fell behind ({lost.group(0)}), seen from the others: "
                          "a process gone or stalled, its cause in its own log, nothing here against a node",
                          RAS_REMEDY, "job")


def window_space_verdict(said: str, over: str, result: CheckResult) -> CheckResult | None:
    """FAIL NCCL_FAILED, the image's, where NCCL's window space for symmetric memory ran out."""
    full = WINDOW_SPACE.search(said)
    if full is None:
        return None
    size, limit = (int(x, 16) / (1 << 30) for x in full.groups())
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: NCCL could not place a "
                          f"symmetric-memory window of {size:.1f} GiB in the {limit:.1f} GiB of addresses it reserves "
                          f"for windows ({full.group(0)}): its own address bookkeeping, no device memory and no "
                          "hardware", "Register each buffer as a window once and deregister what is done with "
                          "(ncclCommWindowDeregister); a framework that registers one allocation again and again "
                          "needs NCCL's and its own fixed releases; NCCL_WIN_STRIDE sizes the space. No node is at "
                          "fault.", "image")
