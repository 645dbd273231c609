"""A queue pair NCCL could not bring up because the GID index it was told to use holds no GID (`Call to ibv_modify_qp
failed with 61 No data available, ... local GID index 3, local GID ::`; ENODATA, errno 61; misc/ibvwrap.cc), and whose
it is. Pure: facts in, (why, remedy, owner) out; never the host's.

Moving a RoCE queue pair to RTR reads the local GID at the chosen index; ENODATA (an all-zero `::` beside it) says
that slot of the port's GID table is empty. The kernel fills and renumbers the table as the port's netdev gains and
loses addresses (a link flap, a neighbour's reboot, an address added), so an index the job pinned (NCCL_IB_GID_INDEX)
can point at an empty or moved slot on a healthy node (batch 307: a DGX Spark ring whose GID moved from 3 to 4).
NCCL's own choice reads the table at start and picks a filled RoCE v2 entry, so an empty slot at connect time is a
pinned index (the job's NCCL_IB_GID_INDEX, set where the log may not show it) or the table renumbered under a running
job: the rank's settings or a changing interface, never evidence of a broken adapter (which fails in its port state,
an async event or a completion error instead)."""
from __future__ import annotations

import re

from ...codes import Owner
from ...facts import NcclFacts
from .transport import job_env

# 2.27 on `failed with 61 No data available, ...` (a paste may wrap the line after the number: 61 is ENODATA on
# Linux); older `failed with error No data available`
MODIFY_QP_NODATA = re.compile(r"Call to ibv_modify_qp failed with (?:error )?(?:61\b|No data available|ENODATA)",
                              re.IGNORECASE)
# the index NCCL's message names (`..., local GID index 3, local GID ::`)
_INDEX = re.compile(r"local GID index (\d{1,4})\b")


def nogid_cause(facts: NcclFacts, said: str) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) of a queue pair refused with ENODATA (an empty GID slot), or None."""
    if not (hit := MODIFY_QP_NODATA.search(said)):
        return None
    pinned = job_env(facts).get("NCCL_IB_GID_INDEX")
    printed = _INDEX.search(said, hit.end())
    index = pinned if pinned not in (None, "") else (printed.group(1) if printed else None)
    which = (f"GID index {pinned}, which the job pinned (NCCL_IB_GID_INDEX)," if pinned not in (None, "")
             else f"GID index {index}" if index else "the GID index it used")
    return (f"; the queue pair could not be brought up (ENODATA): {which} holds no GID on this port (the kernel "
            "renumbers the GID table as the interface's addresses change); the adapter itself opened and made the "
            "queue pair",
            f"Unset NCCL_IB_GID_INDEX{'=' + index if index else ''} (NCCL picks a filled RoCE v2 GID itself at start) "
            "or set it to the index `show_gids` lists for the RoCE v2 address the ranks reach each other on.", "job")
