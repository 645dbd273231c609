"""The prolog's state files (history, kernel-log cursor, breaker lock) read and written as hostile files, and the
output of the commands it reads (journalctl, dmesg, sinfo, scontrol) taken bounded.

The state folder may be shared and writable by others, and the prolog runs as root: a symlink planted where a
history should be would make it append to any file, a FIFO or /dev/zero would hang it or exhaust its memory. So
every open is O_NOFOLLOW (a symlink is refused, never followed) and O_NONBLOCK (a FIFO does not hang the open),
every file must be a regular file (fstat after the open: no race between a check and the open), reads take at most
a cap of bytes from the file's tail, and a whole file is replaced by temp file + rename, never half-written. A
command's output is read as it comes and only its last `cap` bytes are kept (`run_tail`): a kernel log of gigabytes,
or a stand-in that prints /dev/zero, costs the prolog time (its cap bounds it), never its memory.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import selectors
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


# how long a drain or a resume waits for the breaker's lock (STATE/breaker.lock) before going on without it
BREAKER_LOCK_WAIT_S = 30.0

def count_or_none(value: object) -> bool:
    """A kept count read back from JSON: null, or an int (not a bool) of zero or more. The history and the
    kernel-log state read their fields by this, so a count of another type is a garbled line, never coerced."""
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


class Refused(OSError):
    """The path is no regular file (a symlink, FIFO, device, folder): refused with one line, never followed."""


def _why(path: str, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return f"{path} is a symbolic link: refused, not followed (replace it with a regular file)"
    return f"{path}: {exc.strerror or exc}"


def _open(path: str, flags: int, mode: int = 0o644) -> int:
    """An fd of a regular file, opened without following a symlink; Refused (one line) for anything else."""
    try:
        fd = os.open(path, flags | _FLAGS, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(exc.errno, _why(path, exc)) from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise Refused(errno.EINVAL, f"{path} is not a regular file ({kind(info.st_mode)}): refused, not read")
    return fd


def kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def problem(exc: OSError, path: str) -> str:
    """The one line an OSError of this module says."""
    return str(exc.strerror) if isinstance(exc, Refused) else _why(path, exc)


@dataclass
class Tail:
    text: str
    size: int                   # the file's size in bytes
    cut: bool                   # True: only the last `cap` bytes were read (the first, partial line dropped)


def read_tail(path: str, cap: int) -> Tail:
    """At most the last `cap` bytes of a regular file, from a line start. FileNotFoundError, Refused or OSError."""
    fd = _open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - cap)
        if start:
            os.lseek(fd, start, os.SEEK_SET)
        chunks: list[bytes] = []
        left = cap
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if start:
        data = data[data.find(b"\n") + 1:] if b"\n" in data else b""
    return Tail(data.decode("utf-8", errors="replace"), size, bool(start))


def append(path: str, data: bytes) -> int:
    """Append `data` with one write() to a regular file (created 0644); the file's size after it."""
    fd = _open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.EIO, f"short write to {path}")
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def append_to(path: str, data: bytes) -> int:
    """As append(): `data` with one write(); the fd of the file it went into, still open (the caller closes it): a
    rotation may replace the path, and only while the file is held can its inode number not be given to another (a
    new file at the path with the old one's number looked like the file written to, and the line was lost)."""
    fd = _open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.EIO, f"short write to {path}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_read(path: str) -> int:
    """An fd to read a regular file (never a symlink, FIFO or device): Refused, FileNotFoundError or OSError."""
    return _open(path, os.O_RDONLY)


def open_rw(path: str, mode: int = 0o600) -> int:
    """An fd to read and write a regular file, created `mode` (a lock file: 0600, so that no other user can hold a
    read lock on it): Refused, or OSError. One of ours an earlier version made 0644 is made `mode` here (the run lock's
    and `locked`'s: a job's user holding a read lock on the run lock had every prolog of the node see another beside
    it, on the breaker's lock kept every drain from its breaker)."""
    fd = _open(path, os.O_RDWR | os.O_CREAT, mode)
    try:
        info = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if info.st_uid == os.geteuid() and info.st_mode & 0o777 & ~mode:
        with contextlib.suppress(OSError):      # a file system that refuses it: the fd is still had
            os.fchmod(fd, mode)
    return fd


def replace(path: str, data: bytes, mode: int = 0o644) -> None:
    """Write `data` as the whole of `path`: a temp file in its folder, then a rename (a symlink there is replaced,
    never followed)."""
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-" + os.path.basename(path) + "-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_own(path: str, cap: int) -> Tail:
    """read_tail of a file in a folder the prolog makes itself (STATE/history, STATE/kernlog): a symbolic link in that
    folder's place is refused, as `folder` refuses it on write. O_NOFOLLOW guards the last name only, so a shared
    state folder's `history` replaced by a link to someone's own folder had its forged history read (a clean record
    of a drain, no flap) and believed by `make undrain`."""
    parent = os.path.dirname(path) or "."
    if os.path.islink(parent):
        raise Refused(errno.ELOOP, f"{parent} is a symbolic link: refused, not followed (the prolog makes that folder "
                      "itself; remove the link)")
    return read_tail(path, cap)


def not_ours(path: str) -> str | None:
    """Why a kept file could have been written by someone else than root or this user, or None: it, or the folder
    holding it, belongs to another user or is writable by group or others (a shared state folder a job can write)."""
    try:
        info, where = os.lstat(path), os.stat(os.path.dirname(path) or ".")
    except OSError as exc:
        return _why(path, exc)
    owners = {0, os.geteuid()}
    if info.st_uid not in owners or where.st_uid not in owners:
        return f"{path} or its folder belongs to another user (uid {info.st_uid}, {where.st_uid}): a job could have written it"
    if (info.st_mode | where.st_mode) & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} or its folder is writable by group or others: a job could have written it (chmod go-w both)"
    return None


def folder(path: str) -> None:
    """Make the folder (and its parents); a symlink in its place is refused."""
    os.makedirs(path, exist_ok=True)
    if os.path.islink(path) or not os.path.isdir(path):
        raise Refused(errno.ENOTDIR, f"{path} is a symbolic link or not a folder: refused, not followed")


class LockBusy(OSError):
    """The lock was not had within its wait."""


class LockUnavailable(Refused):
    """The file system gives no lock at all (ENOLCK: NFS without its lock manager; EOPNOTSUPP, EINVAL): no other
    prolog holds it, so waiting is pointless and "held by another prolog" would be false. Refused, as a lock file that
    is a FIFO or a symlink is: the breaker counts without it (its re-count still keeps the share), the history
    appends without it."""


@contextlib.contextmanager
def locked(path: str, wait_s: float, clock: Callable[[], float] = time.monotonic,
           sleep: Callable[[float], None] = time.sleep) -> Iterator[None]:
    """An exclusive POSIX record lock (fcntl; it holds across hosts on NFS) on `path`, waited for at most wait_s. The
    file is 0600: a read lock is anyone's who may open the file, and a job's user holding one on a lock file made
    0644 kept every drain of the node from its breaker (LockBusy) while the GPU stayed lost; one made so before is
    made 0600 here (a holder's fd opened before stays: the breaker counts without the lock then, drain.py)."""
    fd = open_rw(path)               # 0600, and one of ours made 0644 before made 0600
    try:
        deadline = clock() + wait_s
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise LockUnavailable(exc.errno, f"{path} cannot be locked here ({exc.strerror or exc}): no lock "
                                          "to be had on this file system") from None
                if clock() >= deadline:
                    raise LockBusy(errno.EAGAIN, f"{path} is held by another prolog past {wait_s:g} s") from None
                sleep(0.02)
        yield
    finally:
        os.close(fd)                  # closing the fd releases the lock


@dataclass
class Output:
    returncode: int
    stdout: bytes               # its last `cap` bytes
    stderr: bytes               # its last ERR_CAP bytes
    cut: bool                   # True: stdout was longer than `cap` (its beginning dropped)


ERR_CAP = 8192


def run_tail(argv: list[str], timeout: float, cap: int, on_drop: Callable[[bytes], None] | None = None) -> Output:
    """Run `argv` (stdin closed), keeping the last `cap` bytes of its stdout as they come; OSError when it cannot
    start, subprocess.TimeoutExpired (the process killed) when it runs past `timeout`. Whatever is raised meanwhile
    (the prolog's cap, a signal) kills it too. `on_drop` is handed each part of stdout dropped from its beginning, in
    order (what a reader must not lose of it: the kernel log's driver lines)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    kept = {out_fd: bytearray(), err_fd: bytearray()}
    limits = {out_fd: cap, err_fd: ERR_CAP}
    seen = 0
    end = time.monotonic() + timeout
    try:
        with selectors.DefaultSelector() as sel:
            for fd in kept:
                sel.register(fd, selectors.EVENT_READ)
            while sel.get_map():
                left = end - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(argv, timeout)
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fd)
                        continue
                    buf = kept[key.fd]
                    buf += chunk
                    seen += len(chunk) if key.fd == out_fd else 0
                    if len(buf) > 2 * limits[key.fd]:       # trimmed now and then: memory stays under 2 x cap
                        if on_drop is not None and key.fd == out_fd:
                            on_drop(bytes(buf[:-limits[key.fd]]))
                        del buf[:-limits[key.fd]]
        rc = proc.wait(timeout=max(0.01, end - time.monotonic()))
    finally:
        if proc.returncode is None:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1)        # one stuck in the kernel (D state) is left behind, not waited on
        proc.stdout.close()
        proc.stderr.close()
    for fd, limit in limits.items():    # trimmed in place first: a slice, then bytes of it, would hold two copies more
        if on_drop is not None and fd == out_fd and len(kept[fd]) > limit:
            on_drop(bytes(kept[fd][:-limit or len(kept[fd])]))
        del kept[fd][:-limit or len(kept[fd])]
    return Output(rc, bytes(kept[out_fd]) if cap else b"", bytes(kept[err_fd]), seen > cap)
