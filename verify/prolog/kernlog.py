"""The kernel log since the prolog's last run on this node (never further back than a lookback window).

journalctl -k first (it keeps the log across reboots and filters by time itself); where it fails or has no
journal, dmesg --time-format iso, whose lines are filtered by their own time stamps here. Where neither can be
read (no permission: kernel.dmesg_restrict), the result says so: the kernel log is then unknown, not clean.
The time of the last read is kept in STATE/kernlog/<node>.since, written whole (temp file, then rename).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime

TIMEOUT_S = 20.0
_ISO = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[,.]\d+)?([+-]\d\d:?\d\d)")


@dataclass
class KernelLog:
    lines: list[str] | None      # None: not read
    source: str                  # the command that gave them, or why none did
    since: float


def journalctl_argv(since: float) -> list[str]:
    return [shutil.which("journalctl") or "journalctl", "-k", "--no-pager", "-q", "-o", "short-iso",
            "--since", f"@{int(since)}"]


def dmesg_argv() -> list[str]:
    return [shutil.which("dmesg") or "dmesg", "--time-format", "iso"]


def _run(argv: list[str]) -> tuple[list[str] | None, str]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{os.path.basename(argv[0])}: {exc}"
    if proc.returncode != 0:
        return None, f"{os.path.basename(argv[0])} exited {proc.returncode}: {proc.stderr.strip()[-160:]}"
    return proc.stdout.splitlines(), " ".join(argv)


def stamp(line: str) -> float | None:
    """Epoch seconds of a `dmesg --time-format iso` line; None when it has no such stamp."""
    m = _ISO.match(line)
    if not m:
        return None
    try:
        return datetime.fromisoformat(m.group(1) + m.group(2)).timestamp()
    except ValueError:
        return None


def read(since: float) -> KernelLog:
    lines, source = _run(journalctl_argv(since))
    if lines:
        return KernelLog(lines, source, since)
    raw, dsource = _run(dmesg_argv())
    if raw is None:
        return KernelLog(None if lines is None else [], f"{source}; {dsource}", since)
    return KernelLog([ln for ln in raw if (t := stamp(ln)) is None or t >= since], dsource, since)


def since_path(state_dir: str, node: str) -> str:
    return os.path.join(state_dir, "kernlog", f"{node}.since")


def last_read(state_dir: str, node: str, lookback_s: float, now: float | None = None) -> float:
    """Where to start reading: the last run's time, or now - lookback when that is further back, unknown or odd."""
    now = time.time() if now is None else now
    floor = now - lookback_s
    try:
        with open(since_path(state_dir, node), encoding="utf-8") as fh:
            last = float(fh.read().strip())
    except (OSError, ValueError):
        return floor
    return last if floor <= last <= now else floor


def remember(state_dir: str, node: str, when: float) -> str | None:
    """Keep `when` as the last read; None, or why it could not be kept."""
    path = since_path(state_dir, node)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".since-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"{when:.3f}\n")
        os.replace(tmp, path)
    except OSError as exc:
        return f"cannot keep the kernel log's read time in {path}: {exc.strerror or exc}"
    return None
