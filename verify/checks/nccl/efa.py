"""What aws-ofi-nccl and the EFA kernel driver print when EFA fails under NCCL, and whose it is. Pure.

The lines, as printed (github.com/aws/aws-ofi-nccl; the Linux kernel's drivers/infiniband/hw/efa/efa_com.c):
- aws-ofi-nccl giving up at its initialisation: `NET/OFI Only EFA provider is supported`, `NET/OFI aws-ofi-nccl
  initialization failed`, `NET/OFI OFI fi_getinfo() call failed: No data available`, `NET/OFI Unable to find a
  protocol that worked. Failing initialization.`: NCCL goes on without the plugin (its own transports), so on one
  node nothing is lost; across nodes the fall-back is judged as such (transport.py).
- a call of the plugin that returned an error code: `NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid
  argument` (v1.0's unit tests log the same words as `WARN: Function: create_nccl_ofi_component Line: 459: NET/OFI
  ...`): the connection NCCL asked for is not made.
- `NET/OFI Unable to insert remote address into address vector for device 1. RC: 0` (its connect path, fi_av_insert
  answering 0 of 1): this instance cannot address the peer's EFA endpoint, whatever the job or image do. EFA traffic
  between instances passes only where the security group allows all traffic to and from itself, inbound and
  outbound (a 0.0.0.0/0 outbound rule carries TCP and ping, not EFA's SRD), and the instances share a subnet
  (aws/aws-ofi-nccl#663; AWS's EFA getting-started guide): the cluster's network, not the program.
- `infiniband efa_0: Failed to process command ALLOC_PD (opcode 14) comp_status 1 err -12` (efa_com.c's admin queue):
  the EFA device refused a command of its kernel driver (a protection domain, a queue pair, a registration) below
  libfabric and the plugin: the node's EFA device or driver.
- libfabric's own warning, `libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo: provider efa
  output empty list` (libfabric's src/fabric.c), above an aws-ofi-nccl failure (`NET/OFI Creating new endpoint for
  domain 0x7f9b... failed: Invalid argument`, aws/aws-ofi-nccl#889): the EFA provider sees no EFA device in the
  process, so the plugin has nothing to open: a container or task started without the EFA devices
  (`/dev/infiniband/uverbs*`), or an instance type without EFA: the launch's, no evidence against a device.
"""
from __future__ import annotations

import re

from ...facts import NcclFacts
from ...result import FAIL, CheckResult

OFI_INIT_GAVE_UP = re.compile(r"NET/OFI (?:Only EFA provider is supported|aws-ofi-nccl initialization failed|"
                              r"OFI fi_getinfo\(\) call failed|Unable to find a protocol that worked|"
                              r"Couldn't find any optimal provider)")
OFI_FAILED_CALL = re.compile(r"(?:NCCL WARN |WARN: Function: \w+ Line: \d+: )NET/OFI [^\n]*?\bRC: -?\d+[^\n]*")
AV_INSERT = re.compile(r"NET/OFI Unable to insert remote address into address vector[^\n|]*")
EFA_PROVIDER_EMPTY = re.compile(r"fi_getinfo: provider efa output empty list")
# aws-ofi-nccl's words for a call that failed (`Creating new endpoint ... failed: Invalid argument`, `Couldn't open AV`)
_OFI_FAILURE = re.compile(r"NET/OFI [^|\n;]*?(?:\bfailed\b|[Cc]ould(?: not|n't)|\bUnable to\b)[^|\n;]*")
EFA_ADMIN_REFUSED = re.compile(r"infiniband [\w.-]+: Failed to process command \w+ \(opcode \d+\) comp_status \d+ "
                               r"err -?\d+")

_REMEDY_NETWORK = ("Let EFA traffic pass between the instances: a security group with inbound and outbound rules for "
                   "all traffic to and from the group itself (the default 0.0.0.0/0 outbound rule does not carry "
                   "EFA), every instance in one subnet (a cluster placement group); `fi_pingpong -p efa` between two "
                   "nodes proves it before the job runs.")
_REMEDY_DEVICE = ("Drain the node: its EFA device refused its driver's command; end stale processes holding the "
                  "device, reload or update the EFA driver (the EFA installer) or reboot, and check with "
                  "`fi_pingpong -p efa` before it takes jobs again.")


def failed_call(line: str) -> bool:
    """An aws-ofi-nccl WARN on a call that returned an error code, not its initialisation giving up."""
    return bool(OFI_FAILED_CALL.search(line)) and not OFI_INIT_GAVE_UP.search(line)


def efa_failure(facts: NcclFacts, said: str) -> tuple[str, str] | None:
    """(why, remedy) of an NCCL failure the EFA lines pin on the node or its network (owner host), or None. `said`
    is the error and the log's deciding lines; the plugin's failure line (`ofi_error`) is read beside them."""
    text = " | ".join([said, str((facts.get("nccl_log") or {}).get("ofi_error") or "")])
    if refused := EFA_ADMIN_REFUSED.search(text):
        return (f"the EFA device refused its kernel driver's command ({refused.group(0)}): the node's EFA device or "
                "driver, below libfabric and the plugin", _REMEDY_DEVICE)
    if unaddressed := AV_INSERT.search(text):
        return (f"aws-ofi-nccl could not address the peer's EFA endpoint ({unaddressed.group(0).strip()}): EFA "
                "traffic between the instances is not let through (their security group, their subnet), the "
                "cluster's network", _REMEDY_NETWORK)
    return None


_REMEDY_GAVE_UP = ("Use the libfabric and aws-ofi-nccl the EFA installer ships (or build the plugin against its "
                   "libfabric, /opt/amazon/efa), and start the job with the EFA devices; `fi_info -p efa` in the same "
                   "environment must list them.")
_REMEDY_NO_DEVICE = ("Give the container or task the EFA devices (`--device /dev/infiniband/uverbs0` ... for each, "
                     "the EFA device plugin's `vpc.amazonaws.com/efa` resource in a pod, ECS/Batch's linuxParameters "
                     "devices) on an instance type with EFA; `fi_info -p efa` inside it must list them.")


def efa_absent(facts: NcclFacts, said: str) -> tuple[str, str] | None:
    """(why, remedy) of an aws-ofi-nccl failure where libfabric said its EFA provider found no device: the job's."""
    text = " | ".join([said, str((facts.get("nccl_log") or {}).get("ofi_error") or "")])
    failure = _OFI_FAILURE.search(text)
    if not EFA_PROVIDER_EMPTY.search(text) or failure is None:
        return None
    return (f"libfabric's EFA provider found no EFA device in the process (fi_getinfo: provider efa output empty "
            f"list), then aws-ofi-nccl failed ({failure.group(0).strip()[:160]}): the container or task was started "
            "without the EFA devices (or on an instance without EFA), not a device's fault", _REMEDY_NO_DEVICE)


def efa_verdict(facts: NcclFacts, said: str, failed: str, timed_out: bool, result: CheckResult) -> CheckResult | None:
    """The failure's verdict where the EFA lines name the device or the network between instances (the host's), or
    show no EFA device given to the process (the job's)."""
    found = efa_failure(facts, said)
    if found is None and (absent := efa_absent(facts, said)):
        return result.verdict(FAIL, "NCCL_TIMEOUT" if timed_out else "NCCL_FAILED", f"{failed}; {absent[0]}",
                              absent[1], "job")
    if found is None and not timed_out and (gave_up := OFI_INIT_GAVE_UP.search(facts.get("error") or "")):
        # the run itself failed on the plugin giving up at its start (its own tests, NCCL_NET=AWS Libfabric): nothing
        # shows a device or driver refusing, so it is the software that found no provider (aws-ofi-nccl#67)
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}; aws-ofi-nccl gave up at its start ({gave_up.group(0)}): "
                              "libfabric offered it no EFA provider, and nothing shows the EFA device refusing",
                              _REMEDY_GAVE_UP, "image")
    if found is None:
        return None
    return result.verdict(FAIL, "NCCL_TIMEOUT" if timed_out else "NCCL_FAILED", f"{failed}; {found[0]}", found[1],
                          "host")
