"""libibverbs' warning for a verbs device no provider of the image drives (`libibverbs: Warning: no userspace
device-specific driver found for /sys/class/infiniband_verbs/uverbs0`, rdma-core libibverbs/init.c), wherever it was
printed (above nccl-tests' rows, NVIDIA/nccl-tests#41): the fabric facts' `verbs_error`, as the line reads, judged
by verify/checks/fabric/noprovider.py."""
from __future__ import annotations

import re
from typing import Any

from .said import printed

_WARNING = re.compile(r"libibverbs: Warning: no userspace device-specific driver found for \S+")


def detect(text: str) -> bool:
    return printed(_WARNING, text) is not None


def parse(text: str) -> dict[str, Any]:
    found = printed(_WARNING, text)
    return {"verbs_error": found.group(0)} if found else {}
