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


def _line(pattern: re.Pattern[str], text: str) -> str | None:
    """The first line of `text` the pattern matches in, trimmed to 300 characters; None when none does."""
    return next((ln.strip()[:300] for ln in text.splitlines() if pattern.search(ln)), None)


def recognise(text: str) -> str | None:
    """The line of the known shared-memory error in `text`, if any."""
    return next((line for pattern in SHM_ERROR_PATTERNS if (line := _line(pattern, text))), None)


# NCCL's SHM transport when /dev/shm cannot hold a segment (misc/shmutils.cc; include/shm.h before 2.12): "failed
# to extend /dev/shm/nccl-X to N bytes, error: No space left on device (28)", "Error while creating shared memory
# segment /dev/shm/nccl-X (size N), error: ...", "Call to posix_fallocate failed : No space left on device". Only
# where the line names shared memory: a full disk elsewhere is not /dev/shm's. Before 2.12 (include/shm.h) the
# creating line carries no errno: its cause is the posix_fallocate line above it, and where that line is not quoted
# a segment NCCL could not create is /dev/shm's size as well (a refused permission, from 2.12, says its errno).
NCCL_SHM_FULL = re.compile(r"(?:/dev/shm/|shared memory segment|posix_fallocate)[^\n]*?"
                           r"(?:No space left on device|\(28\))"
                           r"|Error while creating shared memory segment \S+ \(size \d+\)(?![^\n]*error)",
                           re.IGNORECASE)


def nccl_shm_full(text: str) -> str | None:
    """The line of NCCL's log saying its shared-memory segment did not fit in /dev/shm, if any."""
    return _line(NCCL_SHM_FULL, text)


# NCCL's SHM transport could not open a peer's segment (misc/shmutils.cc: `Error while attaching to shared memory
# segment /dev/shm/nccl-XXXX (size 9637888), error: No such file or directory (2)`): the ranks do not share one
# /dev/shm (separate containers or pods without --ipc=host); a segment of size 0 under a garbled name is a descriptor
# NCCL itself misread, no /dev/shm of anyone's
NCCL_SHM_ATTACH = re.compile(r"Error while attaching to shared memory segment [^\n]*?\(size (\d+)\)")


def nccl_shm_attach(text: str) -> tuple[str, int] | None:
    """(NCCL's words, the segment's size) where NCCL could not attach a peer's shared-memory segment, if any."""
    m = NCCL_SHM_ATTACH.search(text)
    return (m.group(0), int(m.group(1))) if m else None
