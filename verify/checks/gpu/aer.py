"""PCIe AER events on a GPU's bus (FACTS.md `PcieAerEvent`, `gpu` true): the link between the GPU and its port, the
host's whatever the job ran. An uncorrected fatal error makes the link unreliable: a failure, the GPU lost where the
kernel's recovery failed (the GPU no longer answers under the job: its hang), else the link (PCIE_DOWNGRADED, the one
PCIe code: reseat, riser, slot). An uncorrected non-fatal error lost a transaction with the link up: warned. Corrected
errors are the link's own retries: only a storm (STORM lines on one address) warns, and none is ever a drain. An event
on another device's bus, or on a port whose devices below are not shown, is not judged."""
from __future__ import annotations

from collections.abc import Sequence

from ...facts import PcieAerEvent
from ...findings import Findings
from ...result import FAIL, WARN

STORM = 10          # corrected lines on one address in one log: a link retrying, not a one-off
FIX = ("Drain the node; reseat the GPU and its riser or cable, check the slot and the BIOS PCIe settings, and the "
       "BMC event log; replace the GPU or riser if AER errors recur (`dmesg | grep -i aer`, `lspci -vvv`).")


def judgeable(events: object) -> bool:
    """Whether a record's AER events include one a rule reads (on a GPU's bus)."""
    return isinstance(events, list) and any(isinstance(e, dict) and e.get("gpu") is True for e in events)


def _said(e: PcieAerEvent) -> str:
    bits = f" ({', '.join(e.get('errors') or [])})" if e.get("errors") else ""
    where = f"{e.get('driver') or 'device'} {e.get('port') or '?'}"
    return f"PCIe AER {str(e.get('severity')).replace('_', '-')} error on {where}{bits}"


def judge(events: Sequence[PcieAerEvent], found: Findings) -> None:
    ours = [e for e in events if isinstance(e, dict) and e.get("gpu") is True]
    for e in (e for e in ours if e.get("severity") == "fatal"):
        if e.get("recovered") is False:
            found.add(FAIL, "GPU_LOST", f"{_said(e)}: the kernel's recovery failed"
                      + (" after a link reset" if e.get("link_reset") else "") + ": the GPU is gone from the bus",
                      FIX, "host")
        else:
            found.add(FAIL, "PCIE_DOWNGRADED", f"{_said(e)}: an uncorrected fatal error on the GPU's link"
                      + (", recovered by a link reset" if e.get("recovered") else ""), FIX, "host")
    for e in (e for e in ours if e.get("severity") == "non_fatal"):
        found.add(WARN, "PCIE_DOWNGRADED", f"{_said(e)}: a transaction lost on the GPU's link, the link up",
                  "Watch the node's AER counters; " + FIX[0].lower() + FIX[1:], "host")
    for e in (e for e in ours if e.get("severity") == "corrected" and (e.get("count") or 0) >= STORM):
        found.add(WARN, "PCIE_DOWNGRADED", f"{_said(e)}: {e.get('count')} corrected-error lines, a storm of the "
                  "link's retries (corrected errors alone are no fault)",
                  "Reseat the GPU and its riser at the next maintenance; no drain on corrected errors.", "host")
