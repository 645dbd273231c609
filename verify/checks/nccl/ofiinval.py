"""A net plugin's set-up call refused as an invalid argument, with nothing beside it against the node (issue 35,
batch 116). Pure.

aws-ofi-nccl prints a call of libfabric that returned an error code as its own WARN, `NCCL WARN NET/OFI Couldn't open
AV. RC: -22, ERROR: Invalid argument` (aws/aws-ofi-nccl#24, v1.0's `create_nccl_ofi_component:459`): EINVAL is
libfabric refusing the arguments the plugin handed it (a plugin built against another libfabric, a provider
attribute it does not take, the job's FI_* settings), never a device answering. With no line of the EFA kernel driver
refusing a command and no address the peer could not be given (efa.py decides those first, for the host), the failure
shows no owner: the job's to read (the other ranks, the EFA driver's kernel log), never a drain (FACTS.md: drain only
on evidence that the host is at fault). A registration refused so is the image's (plugreg.py), a request that
completed with an error is the transport's (the completion's own rules), and the plugin giving up at its
initialisation is no failure (NCCL goes on without it: efa.py)."""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult
from . import efa, plugreg

_EINVAL = re.compile(r"\bRC: -22\b|\bInvalid argument\b|\bEINVAL\b|\bINVALID_ARGUMENT\b")
_COMPLETED = re.compile(r"completed with error", re.IGNORECASE)
# the same refusal in the plugin's words, no code printed (`NCCL WARN NET/OFI Creating new endpoint for domain 0x...
# failed: Invalid argument`, aws-ofi-nccl 1.14's nccl_net_ofi_domain_get_ep)
_WORDED = re.compile(r"NCCL WARN NET/OFI [^\n|]*?\bfailed: Invalid argument\b[^\n|]*")

REMEDY = ("Read the other ranks' logs and the EFA driver's kernel log (`dmesg | grep efa`) on the node that raised it "
          "before draining anything; run aws-ofi-nccl with the libfabric it was built against (the EFA installer's, "
          "or the image's own build of both), unset FI_* overrides the job sets, and check `fi_info -p efa` in the "
          "container.")


def refused(said: str) -> str | None:
    """The plugin's WARN of a set-up call that returned EINVAL (`RC: -22`, or said in words: `failed: Invalid
    argument`), or None. Beside libfabric's empty EFA provider (efa.py) the process was given no device: the job's
    all the same, and said so there first."""
    calls = [hit.group(0) for hit in efa.OFI_FAILED_CALL.finditer(said) if efa.failed_call(hit.group(0))]
    for line in [*calls, *(hit.group(0) for hit in _WORDED.finditer(said))]:
        if _EINVAL.search(line) and not _COMPLETED.search(line) and not plugreg.REFUSED.search(line):
            return line.strip()[:200]
    return None


def einval_verdict(said: str, failed: str, timed_out: bool, result: CheckResult) -> CheckResult | None:
    """The job's failure where the plugin's call was refused as invalid and nothing names the node."""
    line = refused(said)
    if line is None:
        return None
    return result.verdict(FAIL, "NCCL_TIMEOUT" if timed_out else "NCCL_FAILED", f"{failed}: the net plugin's call was "
                          f"refused as an invalid argument ({line}): libfabric refused what it was handed, no device "
                          "answered; nothing recorded shows the node at fault", REMEDY, "job")
