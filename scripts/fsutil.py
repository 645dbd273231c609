"""Atomic writes: a temporary file beside the target, fsynced, then renamed over it.

A full disk or a kill leaves the previous file whole; a reader never sees half a file."""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from .errors import UserError


def atomic_write(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """Write `data` to `path` atomically, with permission bits `mode` (default: the temporary file's 0600) set before
    it appears; an OSError becomes one line naming the file."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise UserError(f"cannot write {path} ({exc.strerror}); check the folder exists and is writable") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise UserError(f"cannot write {path} ({exc.strerror}); the previous file is unchanged") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def check_writable(folder: Path) -> None:
    """Fail before any work when `folder` cannot take files."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-"):
            pass
    except OSError as exc:
        raise UserError(f"cannot write into {folder} ({exc.strerror}); make it writable or point the variable "
                        f"for it elsewhere") from None


class TooLarge(OSError):
    """A file larger than the reader's limit (a report, a history): refused for its size, not unreadable."""


def read_bounded(path: Path, limit: int, what: str = "file of its kind") -> bytes:
    """A regular file's bytes, at most `limit` (OSError when more): opened without following a link and without
    blocking (a FIFO or a device is refused, never waited on or read without end)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file (a FIFO, a device or a socket)")
        if info.st_size > limit:
            raise TooLarge(0, f"{info.st_size >> 20} MiB: larger than any {what}")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise TooLarge(0, f"grew past {limit >> 20} MiB while read: larger than any {what}")
        return b"".join(chunks)
    finally:
        os.close(fd)
