"""What the shm check and the DataLoader advisor both know about shared memory: where it is, how running out reads.

A process that ran out of /dev/shm tells it only in prose: old torch dies with SIGBUS ("Bus error"), recent torch
raises "unable to allocate shared memory(shm) ... No space left on device (28)" inside a worker, and the parent
sees that text, not an errno.
"""
from __future__ import annotations

import os
import re

SHM_PATH_ENV = "VERIFY_SHM_PATH"      # where /dev/shm is mounted elsewhere (or to measure another tmpfs)
DEFAULT_SHM = "/dev/shm"


def shm_path() -> str:
    """The shared-memory folder: read when asked, not when a module is imported."""
    return os.environ.get(SHM_PATH_ENV, DEFAULT_SHM)


# Messages users see when shared memory runs out, old and new torch.
SHM_ERROR_PATTERNS = (
    re.compile(r"unable to allocate shared memory\(shm\)", re.IGNORECASE),
    re.compile(r"No space left on device", re.IGNORECASE),
    re.compile(r"Bus error", re.IGNORECASE),
    re.compile(r"DataLoader worker \(pid \d+\) is killed by signal: Bus error", re.IGNORECASE),
    re.compile(r"unable to write to file </torch_", re.IGNORECASE),
)


def recognise(text: str) -> str | None:
    """The line of the known shared-memory error in `text`, if any."""
    for pattern in SHM_ERROR_PATTERNS:
        match = pattern.search(text)
        if match:
            line = next((ln for ln in text.splitlines() if pattern.search(ln)), match.group(0))
            return line.strip()[:300]
    return None
