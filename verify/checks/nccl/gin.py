"""A failure in NCCL's GPU-initiated networking (GIN) over GDAKI, and whose it is. Pure: facts in, (why, remedy,
owner) out; never the host's.

NCCL 2.28+ drives the NIC from the GPU through DOCA GPUNetIO for its device API and symmetric kernels (src/transport/
net_ib/gdaki/gin_host_gdaki.cc, on by default: NCCL_GIN_ENABLE=1); a DOCA call that fails prints `DOCA failure %d`
(a doca_error_t: 21, DOCA_ERROR_DRIVER, a verbs call refused) and returns ncclSystemError. NCCL's own IB transport
(the proxy path) runs over the same adapter; a GDAKI path that cannot drive it (a port flag it does not honour, such as
IBV_QPF_GRH_REQUIRED: NVIDIA/nccl#2237) is a gap in that NCCL build: the image's, or the job's where it forced GDAKI
(NCCL_GIN_TYPE=3; NCCL_GIN_ENABLE=1 is the default). A broken adapter shows in its port state, an async event or a completion error."""
from __future__ import annotations

import re

from ...codes import Owner
from ...facts import NcclFacts
from .transport import job_env

GDAKI = re.compile(r"/gdaki/|gin_host_gdaki|\(gdaki\w*\)|ncclGinGdaki\w*", re.IGNORECASE)
DOCA_FAILED = re.compile(r"\bDOCA failure -?\d+")
GIN_TYPE_GDAKI = "3"        # src/include/nccl_device/core.h: NCCL_GIN_TYPE_GDAKI (2 is the proxy, 4 GPI)


def gin_cause(facts: NcclFacts, said: str) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) of a failure in NCCL's GIN/GDAKI transport, or None."""
    found = DOCA_FAILED.search(said) or GDAKI.search(said)
    if not found:
        return None
    why = (f"; NCCL's GPU-initiated networking over GDAKI failed (`{found.group(0).strip()}`): its DOCA path could "
           "not drive this adapter, which NCCL's own IB transport (the proxy path) uses")
    if str(job_env(facts).get("NCCL_GIN_TYPE", "")).strip() == GIN_TYPE_GDAKI:
        return (f"{why}; the job forced GDAKI (NCCL_GIN_TYPE=3)", "Unset NCCL_GIN_TYPE (or set 2, GIN over the "
                "proxy) and rerun; GDAKI needs what NCCL's documentation lists for it.", "job")
    return (f"{why}: a gap in the image's NCCL build, not the node", "Run the image's NCCL at a release whose GDAKI "
            "path supports this port (or set NCCL_GIN_TYPE=2 for GIN over the proxy, NCCL_GIN_ENABLE=0 to turn it "
            "off, or run without symmetric registration); the node's own IB transport is not at fault.", "image")
