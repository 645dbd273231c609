"""Atomic writes: a temporary file beside the target, fsynced, then renamed over it.

A full disk or a kill leaves the previous file whole; a reader never sees half a file."""
from __future__ import annotations

import contextlib
import os
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
