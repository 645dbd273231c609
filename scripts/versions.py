"""The host's one dotted-version key, through `packaging`: what sorts and compares torch, CUDA and driver versions."""
from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

LEADING = re.compile(r"[0-9]+(\.[0-9]+)*")


def version_key(text: str) -> tuple[int, ...]:
    """The release numbers of a version: '13.2' < '13.10', 580.65.06 → (580, 65, 6), 2.13.0+cpu → (2, 13, 0); a text
    that is no PEP 440 version (a driver's '570.86.10 beta', 'cpu') keys by its leading numbers, () without any."""
    try:
        return Version(text.strip()).release
    except InvalidVersion:
        match = LEADING.match(text.strip())
        return Version(match.group(0)).release if match else ()
