"""NCCL could start no network at all (issue 35, batch 108): `NCCL WARN Failed to initialize any NET plugin`, after
which NCCL returns ncclInvalidUsage (`invalid usage`) from ncclCommInitRank rather than fall back.

NCCL's network set-up (ncclNetInit, src/plugin/net.cc) tries the networks it is allowed, in order: an external
plugin, then its own IB and Socket transports. It ends there only when none it may use starts: `NCCL_NET` (the job's,
a launcher's, or the image's profile's) names one network, and that one cannot start in this process: IB with no
/dev/infiniband in the container, a plugin (`gIB`, `AWS Libfabric`) that is not on the library path or was built for
another NCCL. NCCL's own Socket transport starts wherever the bootstrap found an interface, so a node whose adapters
fail leaves NCCL on sockets (a fall-back the transport rules judge), not here. The failure is the job's settings or
container, never evidence against the node (no drain): a host fault the facts show (the nccl judge's own findings,
the fabric check) still decides first."""
from __future__ import annotations

import re

from ...facts import NcclFacts
from ...findings import Findings
from ...result import FAIL, CheckResult
from .transport import job_env

# net.cc's WARN, as NCCL logs it and as torch quotes it under `Last error:` (either spelling of "initialize")
NO_NETWORK = re.compile(r"Failed to initiali[sz]e any NET plugin", re.IGNORECASE)

DEVICES = ("Give the container the fabric's devices (`--device /dev/infiniband`, Kubernetes: the RDMA device plugin's "
           "resource) where NCCL_NET names IB.")
REMEDY = ("Otherwise unset NCCL_NET (or set it to a network this node has: `Socket` on one node) and check "
          "NCCL_NET_PLUGIN and the plugin's library path against the image's NCCL; NCCL_DEBUG=INFO "
          "NCCL_DEBUG_SUBSYS=INIT,NET names the network that would not start.")


def no_network_verdict(facts: NcclFacts, said: str, failed: str, found: Findings,
                       result: CheckResult) -> CheckResult | None:
    """The job's failure where NCCL said it could start no network and no host fault is among the findings; the
    container given no RDMA device (FABRIC_NOT_PASSED) is named as the cause where the facts show it."""
    if not NO_NETWORK.search(said) or any(f.severity == FAIL and f.owner == "host" for f in found.items):
        return None
    forced = job_env(facts).get("NCCL_NET")
    named = f", NCCL_NET={forced}" if forced else ""
    passed = next((f for f in found.items if f.code == "FABRIC_NOT_PASSED"), None)
    why = f"; {passed.text}" if passed else ""
    return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: NCCL could start no network it was allowed to use "
                          f"(`Failed to initialize any NET plugin`{named}) and does not fall back{why}: the job's settings or "
                          "container, not the node's", f"{passed.remedy if passed else DEVICES} {REMEDY}", "job")
