"""`cat /proc/driver/nvidia/version`: the loaded NVIDIA kernel module's own line, proprietary (`NVRM version: NVIDIA
UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023`) or open (`NVRM version: NVIDIA UNIX Open Kernel
Module for x86_64  565.57.01  Release Build  (dvs-builder@...)`). The file exists only while the module is loaded,
and the module loads only beside a GPU it supports: the node's GPUs are there, and nothing of their health is read
(FACTS.md, "How unknown is judged": a driver read with no device warns HEALTH_NOT_ASSESSED)."""
from __future__ import annotations

import re
from typing import Any

# the version after either flavour's name (an aarch64 or ppc64le build names its architecture the same way)
VERSION = re.compile(r"NVRM version: NVIDIA UNIX (?:Open Kernel Module for [\w-]+|[\w-]+ Kernel Module)\s+"
                     r"(\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)(?![\d.])")


def detect(text: str) -> bool:
    return VERSION.search(text) is not None


def parse(text: str) -> dict[str, Any]:
    found = VERSION.search(text)
    return {"torch": None, "devices": None, "driver": found.group(1) if found else None}
