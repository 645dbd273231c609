"""shm: is /dev/shm large enough for DataLoader workers? Measured by really allocating it.

tmpfs allocates lazily: a file can be ftruncate()d past the limit and the process dies with SIGBUS when it
touches a page beyond it (what DataLoader workers report as "Bus error"). Recent torch reserves the memory
up front instead and raises "unable to allocate shared memory(shm) ... No space left on device (28)".
Both are provoked here, each in a process of its own, and recognised.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

from ...environment import stretched
from ...facts import ShmFacts
from ...options import Options, human_bytes
from ...result import FAIL, PASS, CheckResult
from ...shared.shmem import DEFAULT_SHM, recognise, shm_path

REMEDY = ("Give the container more shared memory: `docker run --shm-size=2g ...` (or `--ipc=host`); "
          "on Kubernetes mount an emptyDir with medium: Memory (sizeLimit: 2Gi) at /dev/shm; with podman/Slurm "
          "containers raise the tmpfs size of /dev/shm. Otherwise lower DataLoader num_workers or prefetch_factor.")

# Touch every page of a /dev/shm file of the required size, as a DataLoader worker's batch would.
ATTEMPT_S = 60.0     # one allocation attempt, natively

# `python -c` puts the working folder first on sys.path, and PYTHONSAFEPATH (which stops that) is 3.11+: on the jammy
# image's 3.10 a torch/ or mmap.py in the job's folder was imported by the attempt in place of the real one (a planted
# failure read as the node's /dev/shm). Dropped before any import that is not already loaded (sys is built in).
_NO_WORKDIR = 'import sys; sys.path[:] = [p for p in sys.path if p not in ("", ".")]\n'

_TOUCH = r"""
import mmap, os, sys
size, directory = int(sys.argv[1]), sys.argv[2]
fd = os.open(os.path.join(directory, f"verify-shm-{os.getpid()}"), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
os.unlink(os.path.join(directory, f"verify-shm-{os.getpid()}"))
os.ftruncate(fd, size)
m = mmap.mmap(fd, size)
page = mmap.PAGESIZE
for offset in range(0, size, page):
    m[offset] = 1
print("touched", size, flush=True)
"""

# The same amount through torch's own shared-memory path (the one DataLoader uses).
_TORCH = r"""
import sys, torch
t = torch.empty(int(sys.argv[1]), dtype=torch.uint8)
t.fill_(1)
t.share_memory_()
print("shared", t.numel(), flush=True)
"""


def _attempt(code: str, size: int, folder: str, timeout: float) -> tuple[bool, str]:
    try:
        proc = subprocess.run([sys.executable, "-c", _NO_WORKDIR + code, str(size), folder], capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s"
    if proc.returncode == 0:
        return True, proc.stdout.strip()
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        return False, f"killed by {name}" + (" (Bus error: /dev/shm exhausted)" if name == "SIGBUS" else "")
    stderr = proc.stderr.strip()
    if not stderr:
        return False, f"exit {proc.returncode}"
    return False, recognise(stderr) or stderr.splitlines()[-1]


def probe(options: Options) -> dict[str, Any]:
    folder = shm_path()
    facts: dict[str, Any] = {"path": folder, "exists": os.path.isdir(folder), "required": options.shm_min_bytes}
    if not facts["exists"]:
        return facts
    st = os.statvfs(folder)
    facts.update(size=st.f_blocks * st.f_frsize, free=st.f_bavail * st.f_frsize)
    # touching 1 GiB takes far longer under qemu-user: a slow emulator is not a small /dev/shm
    limit = stretched(ATTEMPT_S)
    facts["raw_ok"], facts["raw_msg"] = _attempt(_TOUCH, options.shm_min_bytes, folder, timeout=limit)
    facts["torch_ok"], facts["torch_msg"] = _attempt(_TORCH, options.shm_min_bytes, folder, timeout=limit)
    return facts


def judge(facts: ShmFacts, options: Options) -> CheckResult:
    result = CheckResult("shm", PASS, "")
    path = facts.get("path", DEFAULT_SHM)
    if not facts.get("exists"):
        return result.verdict(FAIL, "SHM_TOO_SMALL", f"{path} does not exist", "Mount a tmpfs at /dev/shm (" + REMEDY + ")")
    size, free, need = facts["size"], facts["free"], facts["required"]
    result.metric("size", size, "bytes")
    result.metric("free", free, "bytes")
    result.metric("required", need, "bytes")
    result.details.append(f"{path}: {human_bytes(size)} total, {human_bytes(free)} free; required {human_bytes(need)}")
    raw_ok, torch_ok = facts.get("raw_ok"), facts.get("torch_ok")
    result.details.append(f"touching {human_bytes(need)} of a /dev/shm file page by page: {'ok' if raw_ok else facts.get('raw_msg')}")
    result.details.append(f"torch share_memory_() of {human_bytes(need)}: {'ok' if torch_ok else facts.get('torch_msg')}")
    if raw_ok and torch_ok:
        result.summary = f"{human_bytes(size)} /dev/shm, {human_bytes(need)} allocated and touched"
        return result
    cause = facts.get("raw_msg") if not raw_ok else facts.get("torch_msg")
    return result.verdict(FAIL, "SHM_TOO_SMALL", f"/dev/shm is {human_bytes(size)} ({human_bytes(free)} free): "
                          f"allocating {human_bytes(need)} failed: {cause}", REMEDY)

