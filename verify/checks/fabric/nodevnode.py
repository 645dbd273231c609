"""An RDMA adapter whose port the kernel shows up while libibverbs lists no device and says nothing (issue 35,
batch 181). libibverbs keeps a kernel verbs device only where its character device `/dev/infiniband/uverbs<N>` can be
stat()ed (rdma-core libibverbs/init.c, try_access_device) and drops the others silently; a device it keeps but no
provider drives is reported (`no userspace device-specific driver found`, noprovider.py). So an empty device list
with no such warning, beside an adapter the same namespace lists ACTIVE, says the process was not given the adapter's
verbs device node: the container's or pod's device hand-off (device plugin, CNI, `--device /dev/infiniband`), owner
job. Only where the container's devices and the image's providers were not read: those decide it themselves
(check._container, check._userspace)."""
from __future__ import annotations

from ...facts import Adapter, FabricFacts
from ...findings import Findings
from ...result import FAIL

REMEDY = ("Give the process the adapter's verbs device: mount `/dev/infiniband/uverbs*` into the container (Kubernetes: "
          "request the RDMA device plugin's / SR-IOV resource and check the CNI injected it; Docker: `--device "
          "/dev/infiniband`); `ls /dev/infiniband` in the container shows what it holds.")


def judge(facts: FabricFacts, adapters: list[Adapter], found: Findings) -> None:
    """FABRIC_NOT_PASSED (job) where an active port's adapter has no verbs device libibverbs can open."""
    if facts.get("verbs_devices") != [] or facts.get("verbs_error") or facts.get("uverbs") is not None \
            or facts.get("providers") is not None:
        return
    up = [str(a.get("name")) for a in adapters
          if any(str(p.get("state") or "").upper() == "ACTIVE" for p in a.get("ports") or [])]
    if up:
        found.add(FAIL, "FABRIC_NOT_PASSED", f"the kernel shows {', '.join(up)} with an ACTIVE port but libibverbs "
                  "lists no device and names none it could not drive: the process was not given the verbs device "
                  "node (/dev/infiniband/uverbs*); NCCL can only use TCP sockets", REMEDY, "job")
