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
from . import plugload
from .transport import job_env

# net.cc's WARN, as NCCL logs it and as torch quotes it under `Last error:` (either spelling of "initialize"); and
# 2.19-2.2x's `NCCL WARN Error: network gIB not found.` (ncclNetInit: NCCL_NET names a network no loaded plugin
# provides; ncclInvalidUsage follows), the same class (batch 134)
NO_NETWORK = re.compile(r"Failed to initiali[sz]e any NET plugin|\bError: network (\S+?) not found", re.IGNORECASE)
IMAGE = ("Build the image on a base whose libraries the plugin needs (a glibc at least the version dlopen names, the "
         "libraries it links), or give it the plugin's build for that base (the provider's image for the node's NCCL "
         "and plugin); `ldd` on the plugin inside the container names what is missing.")

DEVICES = ("Give the container the fabric's devices (`--device /dev/infiniband`, Kubernetes: the RDMA device plugin's "
           "resource) where NCCL_NET names IB.")
REMEDY = ("Otherwise unset NCCL_NET (or set it to a network this node has: `Socket` on one node) and check "
          "NCCL_NET_PLUGIN and the plugin's library path against the image's NCCL; NCCL_DEBUG=INFO "
          "NCCL_DEBUG_SUBSYS=INIT,NET names the network that would not start.")


def no_network_verdict(facts: NcclFacts, said: str, failed: str, found: Findings,
                       result: CheckResult) -> CheckResult | None:
    """The job's failure where NCCL said it could start no network and no host fault is among the findings; the
    container given no RDMA device (FABRIC_NOT_PASSED) is named as the cause where the facts show it."""
    hit = NO_NETWORK.search(said)
    if not hit or any(f.severity == FAIL and f.owner == "host" for f in found.items):
        return None
    forced = job_env(facts).get("NCCL_NET")
    named = f", NCCL_NET={forced}" if forced else ""
    wanted = forced or hit.group(1)
    log = facts.get("nccl_log") or {}
    unloadable = next((e for line in [said, log.get("plugin_missing"), log.get("ib_error"), *(log.get("proof") or [])]
                       for part in str(line or "").split(" | ") if (e := plugload.load_error(part.strip()))), None)
    if unloadable:
        # the plugin that provides the network is there and this process cannot load it: the image's libraries
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: NCCL could not start the network the job asked for"
                              f"{f' ({wanted})' if wanted else ''}: its net plugin is there and does not load in this "
                              f"image ({unloadable[:200]}); not the node's", f"{IMAGE} {REMEDY}", "image")
    passed = next((f for f in found.items if f.code == "FABRIC_NOT_PASSED"), None)
    why = f"; {passed.text}" if passed else ""
    return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: NCCL could start no network it was allowed to use "
                          f"(`{hit.group(0)}`{named}) and does not fall back{why}: the job's settings or container"
                          ", not the node's", f"{passed.remedy if passed else DEVICES} {REMEDY}", "job")
