"""A failure NCCL's log pins on the RoCE GID a connection uses, and whose it is. Pure: facts in, (why, remedy, owner)
out; never the host's (a GID NCCL or the job chose does not make the node broken).

The signatures are NCCL's own messages (github.com/NVIDIA/nccl, src/transport/net_ib.cc and misc/ibvwrap.cc):
- `NET/IB: read failed in ncclIbRoceGetVersionNum: Invalid argument`: NCCL reads
  /sys/class/infiniband/<dev>/ports/<n>/gid_attrs/types/<index> for each GID index while it picks one, and the
  kernel answers EINVAL for an index that holds no GID in this network namespace (a pod's macvlan or SR-IOV share of
  the HCA sees only its own GIDs). Later releases skip that index ("In containerized environments, read could
  return EINVAL if the GID index is not mapped to the container sysfs"): the image's NCCL, whatever the node.
- `Call to ibv_modify_qp failed with error Connection timed out` (2.27: `failed with 110 Connection timed out, ...
  local GID index 3`), or `Network is unreachable` / `No route to host`: bringing the queue pair to RTR, the adapter
  could not resolve the peer's GID over the address the local GID carries. Where the job pinned that GID
  (NCCL_IB_GID_INDEX), its choice is the first suspect (a link-local or unrouted address's GID): the job's. Without
  it NCCL chose, and the addressing or the fabric between the nodes is the host's (not judged here).
"""
from __future__ import annotations

import re

from ...codes import Owner
from ...facts import NcclFacts
from .transport import job_env

GID_TYPE_EINVAL = re.compile(r"read failed in ncclIbRoceGetVersionNum: Invalid argument")
MODIFY_QP_UNREACHED = re.compile(r"Call to ibv_modify_qp failed with (?:error |\d+ )?(?:Connection timed out|"
                                 r"Network is unreachable|No route to host)")


def gid_cause(facts: NcclFacts, said: str) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) of a failure on the RoCE GID, or None."""
    if GID_TYPE_EINVAL.search(said):
        return ("; NCCL stopped on a GID index that holds no GID in this container's view of the adapter (EINVAL "
                "reading its RoCE type): a release that does not skip it, the image's NCCL",
                "Run a newer NCCL in the image (it skips GID entries the container cannot see); meanwhile the job "
                "can pin NCCL_IB_GID_INDEX to its own RoCE v2 GID (`show_gids`).", "image")
    pinned = job_env(facts).get("NCCL_IB_GID_INDEX")
    if pinned not in (None, "") and (unreached := MODIFY_QP_UNREACHED.search(said)):
        return (f"; the queue pair could not reach the peer ({unreached.group(0)}) over GID index {pinned}, which the "
                "job pinned (NCCL_IB_GID_INDEX): that GID's address is not routed between the nodes (a link-local "
                "one, or another subnet's)",
                f"Unset NCCL_IB_GID_INDEX={pinned} (NCCL picks a routable RoCE v2 GID itself) or set it to the RoCE "
                "v2 GID of the address the nodes reach each other on (`show_gids`, `ibv_devinfo -v`).", "job")
    return None
