"""libibverbs finding a verbs device the kernel exposes that no provider of the image drives (issue 35, batch 105).

While it lists devices, libibverbs matches each `/sys/class/infiniband_verbs/uverbs<N>` to a provider library
(libmlx5, libefa, ...); one no provider claims is skipped with `libibverbs: Warning: no userspace device-specific
driver found for /sys/class/infiniband_verbs/uverbs0` (rdma-core libibverbs/init.c). The kernel has the device (the
host's side is there) and the image lacks the provider for it, or carries one too old for the adapter: the image's
fault, whatever else was read (NVIDIA/nccl-tests#41: a Singularity image without libmlx5). Where libibverbs still
opened a device, the one left out is not shown to be the one the job needs: no fault."""
from __future__ import annotations

import re

from ...facts import FabricFacts
from ...findings import Findings
from ...result import FAIL

NO_PROVIDER = re.compile(r"no userspace device-specific driver found for (\S+)")
REMEDY = ("Install the verbs providers in the image (`ibverbs-providers` / `rdma-core`: libmlx5 for ConnectX, libefa "
          "for EFA) at a release that knows the host's adapter.")


def unprovided(facts: FabricFacts) -> str | None:
    """The device libibverbs found no provider for (as it named it), where it opened none."""
    found = NO_PROVIDER.search(str(facts.get("verbs_error") or ""))
    return found.group(1) if found and not facts.get("verbs_devices") else None


def no_provider(facts: FabricFacts) -> str | None:
    """What the image lacks, in FABRIC_USERSPACE_MISSING's words, or None."""
    device = unprovided(facts)
    return None if device is None else (f"a verbs provider for the kernel's device {device} (libibverbs: no userspace "
                                        "device-specific driver found)")


def judged_alone(facts: FabricFacts, found: Findings) -> bool:
    """With no adapter, device or verbs list read: the warning alone is the fault shown."""
    what = no_provider(facts)
    if what:
        found.add(FAIL, "FABRIC_USERSPACE_MISSING", f"the image cannot use the fabric: missing {what}", REMEDY, "image")
    return bool(what)
