"""A bind that failed with EADDRNOTAVAIL (`Call to bind failed : Cannot assign requested address`; torch's store
`errno: 99 - Cannot assign requested address`), and whose address it was (issue 35, batch 208). Pure.

NCCL binds its bootstrap's listening socket (src/bootstrap.cc, bootstrapCreateRoot / bootstrapInit) to one of two
addresses: the job's NCCL_COMM_ID where the job set it (then NCCL first looks for an interface in that address's
subnet: `No interface found in the same subnet as remote address ...`), else the address of the interface NCCL picked
itself from the host's (`Bootstrap : Using ib0:fe80::...%ib0<0>`). The kernel refusing the first is the job's address
(not this host's: a container's own network, a wrong MASTER_ADDR); refusing the second is the host's interface
itself (an IPv6 address still tentative, a link-local one whose port dropped): the node's network state. Where the
log shows neither (no interface recorded), or torch's store names the errno, the job's address is the reading."""
from __future__ import annotations

import re

from ...facts import NcclFacts
from ...result import FAIL, CheckResult
from .transport import job_env

UNASSIGNED = re.compile(r"(?:bind failed ?: ?|errno: 99 - )Cannot assign requested address|\bEADDRNOTAVAIL\b",
                        re.IGNORECASE)
_NCCL_BIND = re.compile(r"Call to bind failed ?: ?Cannot assign requested address", re.IGNORECASE)
# the job's address in play: NCCL_COMM_ID's subnet search, or torch's own store naming the errno
_JOBS_ADDRESS = re.compile(r"same subnet as remote address|errno: 99|MASTER_ADDR|NCCL_COMM_ID", re.IGNORECASE)


def unassigned_verdict(facts: NcclFacts, said: str, failed: str, result: CheckResult) -> CheckResult | None:
    """FAIL NCCL_FAILED where a bind met EADDRNOTAVAIL: the host's where NCCL bound its own bootstrap interface's
    address, else the job's."""
    if not UNASSIGNED.search(said):
        return None
    interface = str((facts.get("nccl_log") or {}).get("interface") or "")
    if _NCCL_BIND.search(said) and interface and not job_env(facts).get("NCCL_COMM_ID") \
            and not _JOBS_ADDRESS.search(said):
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: NCCL could not bind the address of the interface its "
                              f"bootstrap picked itself from this host's ({interface}): the kernel refused an address "
                              "of the host's own interface (Cannot assign requested address)", "Check that interface on "
                              "the node (`ip addr`: an IPv6 address still `tentative`, a link-local-only address, the "
                              "port under IPoIB down: `ibstat`); drain the node until it is fixed. The job can pin "
                              "NCCL_SOCKET_IFNAME to the node's Ethernet meanwhile.", "host")
    return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: NCCL could not bind to an address that is not this "
                          "host's (Cannot assign requested address): the address the job gave for the rendezvous "
                          "(NCCL_COMM_ID, MASTER_ADDR) is not where this rank runs", "Give NCCL_COMM_ID / "
                          "MASTER_ADDR an address of rank 0's own interface as the ranks see it (inside a "
                          "container: its own network, or `--network host`), and NCCL_SOCKET_IFNAME the interface "
                          "they share.", "job")
