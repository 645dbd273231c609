"""The memlock limit, as the fabric facts' `memlock` (bytes, or "unlimited"), from `ulimit -a` (bash's `max locked
memory       (kbytes, -l) 64`, zsh's `-l: locked-in-memory size (kbytes)`, busybox's `-l: locked memory (kb)`,
dash's `locked memory(kbytes)`, fish's `(kB, -l)`, tcsh's `limit`: `memorylocked 64 kbytes`, a process's
/proc/<pid>/limits: `Max locked memory 65536 65536 bytes`, the soft limit) and from what RDMA libraries print
when the limit bites: UCX's `mlx5_0: ibv_create_cq() failed: Cannot allocate memory. Please set max locked memory
(ulimit -l) to 'unlimited' (current: 64 kbytes)` (src/uct/ib/base/ib_log.c) and libibverbs' `libibverbs: Warning:
RLIMIT_MEMLOCK is 65536 bytes.` (libibverbs/init.c). Those name the verbs device in use (`verbs_devices`) where they
print it: the limit was read where RDMA runs. A call that pins memory failing with ENOMEM (NCCL's `Call to
ibv_reg_mr_iova2 failed with error Cannot allocate memory`, libfabric's EFA provider aborting on its registered
receive buffers: verify/shared/rdma.py's PINNING_ENOMEM) is the `memlock_error`, with or without the limit beside it. A library's message that prose mentions ("If NCCL prints
`Call to ibv_reg_mr_iova2 failed ...`, raise ...", verify/explain/said.py) is none."""
from __future__ import annotations

import re
from typing import Any

from ..checks.nccl.regcap import EFA_MR_FULL
from ..shared.rdma import PINNING_ENOMEM, may_pin, pinning_failed
from . import setlimit, shellimit, stracelimit
from .said import printed

# each shell's `ulimit -a` line for the memlock limit, its unit and value named
_SHELLS = tuple(re.compile(p, re.MULTILINE | re.IGNORECASE) for p in (
    r"^max locked memory\s+\((?P<unit>kbytes|bytes|blocks)?,?\s*-l\)\s+(?P<value>\S+)\s*$",            # bash
    r"^-l:\s+locked(?:-in)?[- ]memory(?: size)? \((?P<unit>kb|kbytes)\)\s+(?P<value>\S+)\s*$",       # zsh, busybox
    r"^locked memory\((?P<unit>kbytes)\)\s+(?P<value>\S+)\s*$",                                     # dash
    r"^maximum size that may be locked into memory\s+\((?P<unit>kb),\s*-l\)\s+(?P<value>\S+)\s*$",  # fish
    r"^memorylocked\s+(?P<value>\S+)(?:\s+(?P<unit>kbytes))?\s*$",                                # tcsh's `limit`
    # /proc/<pid>/limits: `Max locked memory  65536  65536  bytes` (soft, hard, unit): a daemon's, its jobs inherit it
    r"^Max locked memory\s+(?P<value>\S+)\s+\S+\s+(?P<unit>bytes)\s*$",
    # systemd: `systemctl show <unit>`'s `LimitMEMLOCK=65536` (bytes; 18446744073709551615 is RLIM_INFINITY) and a unit
    # file's `LimitMEMLOCK=infinity`, the limit of what the unit starts (slurmd's: its jobs inherit it)
    r"^(?P<systemd>LimitMEMLOCK)=(?P<value>\d+|infinity)\s*$"))
# RLIM_INFINITY as systemd and /proc print it
_INFINITE = {"unlimited", "infinity", str(2**64 - 1)}
_UCX = re.compile(r"max locked memory.*\(current:\s*(\d+|unlimited)\s*(kbytes|bytes|kb)?\)", re.IGNORECASE)
_VERBS = re.compile(r"RLIMIT_MEMLOCK is (\d+) bytes")
_DEVICE = re.compile(r"\b((?:mlx\d+|rocep\w+|irdma\w*|efa|bnxt_re|qedr|hfi1_|cxgb\d_|ionic_|erdma_)\w*)\s*:\s*ibv_")


def detect(text: str) -> bool:
    return bool(_shell(text) or printed(_UCX, text) or printed(_VERBS, text)
                or _pinning(text)) or shellimit.memlock(text) is not None or stracelimit.memlock(text) is not None


def _shell(text: str) -> re.Match[str] | None:
    return next((m for p in _SHELLS if (m := p.search(text))), None)


# the verbs registration's path in the kernel, which a trace of `pin_user_pages*` failing must show to be RDMA's
_VERBS_PATH = re.compile(r"\b(?:ib_uverbs_reg_mr|ib_umem_get|\w+_reg_user_mr)\b")


def _pinning(text: str) -> str | None:
    """The line where a call that pins memory failed with ENOMEM, as a library printed it."""
    found = printed(PINNING_ENOMEM, text) if may_pin(text) else None
    if not found or (found.group().startswith("pin_user_pages") and not _VERBS_PATH.search(text)):
        return None
    if EFA_MR_FULL.search(text):    # the kernel shows the device refused after the pages were pinned: not the limit
        return None
    end = text.find("\n", found.end())
    return pinning_failed(text[text.rfind("\n", 0, found.start()) + 1:end if end >= 0 else None])


def _library(text: str) -> dict[str, Any]:
    """A verbs library's own memlock message; the device it names is a verbs device in use."""
    devices = sorted(set(_DEVICE.findall(text)))
    verbs = printed(_VERBS, text)
    if verbs:
        return {"memlock": int(verbs.group(1)), **({"verbs_devices": devices} if devices else {})}
    found = printed(_UCX, text)
    value = found.group(1) if found else ""
    if value.lower() == "unlimited":
        return {"memlock": "unlimited"}
    unit = 1 if found and (found.group(2) or "").lower() == "bytes" else 1024
    limit = {"memlock": int(value) * unit} if value.isdecimal() else {}
    return {**limit, "verbs_devices": devices} if limit and devices else limit


def parse(text: str) -> dict[str, Any]:
    failed = _pinning(text)
    return {**_limit(text), **({"memlock_error": failed} if failed else {})}


def _limit(text: str) -> dict[str, Any]:
    found = _shell(text)
    if not found:
        shown = shellimit.memlock(text)     # a transcript's `ulimit -l` (a job step's, over the login shell's)
        traced = stracelimit.memlock(text)  # else the limit a system-call trace shows the process itself under
        found_limit = ({"memlock": shown} if shown is not None else {"memlock": traced} if traced is not None
                       else _library(text))
        chained = setlimit.memlock(text)    # else the limit a command line set for the program it ran
        return found_limit if "memlock" in found_limit or chained is None else {"memlock": chained}
    # every line that shows the limit (two hosts' `ulimit -a` in one paste, `ulimit -a` beside `ulimit -Ha`): the
    # lowest, where the fault is if either shows one (one host's listing shown twice gives one figure; the hard
    # limit is never below the soft one)
    read = [_bytes(m) for p in _SHELLS for m in p.finditer(text)]
    numbers = [v for v in read if isinstance(v, int)]
    return {"memlock": min(numbers)} if numbers else {"memlock": "unlimited"} if "unlimited" in read else {}


def _bytes(found: re.Match[str]) -> int | str | None:
    value = found.group("value")
    if value.lower() in _INFINITE:
        return "unlimited"
    named = found.groupdict()
    unit = 1 if (named.get("unit") or "").lower() == "bytes" or named.get("systemd") else 1024     # systemd's: bytes
    return int(value) * unit if value.isdecimal() else None
