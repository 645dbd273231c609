"""A queue pair NCCL could not bring up because the kernel found no network device for its address (`Call to
ibv_modify_qp failed with error No such device`, ENODEV, errno 19; misc/ibvwrap.cc, 2.18 to 2.30), and whose it is.
Pure: facts in, (why, remedy, owner) out; never the host's.

On RoCE, moving a queue pair to RTR resolves the peer's address through the netdev that the chosen GID is bound to;
ENODEV says that netdev is not in the rank's network namespace: a pod's or container's share of the adapter (SR-IOV,
macvlan, an RDMA shared-device plugin) whose GID table holds entries of interfaces it was not given, or a GID index
the job pinned (NCCL_IB_GID_INDEX) to such an entry or to a link-local one (NVIDIA/nccl#925, #551, #1657: the device
opened and its queue pair was created, so the adapter answers). The rank's network set-up, the job's; an adapter
that failed shows in its port state, an async event or a completion error instead."""
from __future__ import annotations

import re

from ...codes import Owner
from ...facts import NcclFacts
from .transport import job_env

# 2.18 to 2.26 `failed with error No such device` (some builds add `errno 19`); 2.27 on `failed with 19 No such
# device, <the QP's attributes>`; mscclpp's `ibv_modify_qp failed (errno 19)`
MODIFY_QP_NODEV = re.compile(r"Call to ibv_modify_qp failed with (?:error |19 )?(?:No such device|ENODEV)"
                             r"|ibv_modify_qp failed \(errno 19\)", re.IGNORECASE)


def nodev_cause(facts: NcclFacts, said: str) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) of a queue pair refused with ENODEV, or None."""
    if not MODIFY_QP_NODEV.search(said):
        return None
    pinned = job_env(facts).get("NCCL_IB_GID_INDEX")
    gid = f"GID index {pinned}, which the job pinned (NCCL_IB_GID_INDEX)" if pinned not in (None, "") else \
        "the GID NCCL chose"
    return (f"; the queue pair could not be brought up (ENODEV): the network device {gid} is bound to is not in this "
            "rank's network namespace (a pod's or container's share of the adapter, or a link-local or foreign GID); "
            "the adapter itself opened and made the queue pair",
            "Give the pod or container the RoCE interface its RDMA device belongs to (the SR-IOV/macvlan network "
            "attachment, or `--network host`), and let NCCL pick the GID (unset NCCL_IB_GID_INDEX) or pin the RoCE v2 "
            "GID of the interface the ranks reach each other on (`show_gids`).", "job")
