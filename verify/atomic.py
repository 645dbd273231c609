"""The image side's one atomic write: a reader sees the old file or the new one, never half of one."""
from __future__ import annotations

import os
import tempfile


def write_atomic(path: str, data: str | bytes) -> None:
    """Write through a temporary file in the same folder (fsynced), then rename it over `path`.

    The file gets the mode a plain open() would give it (mkstemp makes 0600): a report is as readable as any new
    file. An OSError (ENOSPC included) leaves no temporary file behind and reaches the caller with its errno.
    """
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
