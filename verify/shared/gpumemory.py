"""One GPU's memory errors as NVML records them, judged by one rule: volatile uncorrectable ECC errors, retired
pages or a row remap pending, a failed row remap, an NVML recovery action. Shared because two sides apply it: the
gpu check to the devices it reads, and the prolog to a report's devices (a pass beside such a device is no report
verify writes: verify/prolog/hidden.py)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..facts import NONE, NvmlDevice
from ..findings import HANDLED, Findings
from ..result import FAIL, WARN

DATACENTER = ("H100", "H200", "H800", "H20", "A100", "A800", "A30", "B200", "B300", "GB200", "GB300", "GH200", "V100")


def where(dev: Mapping[str, Any]) -> str:
    i = dev.get("index")
    return f"device {i if i is not None else '?'} ({dev.get('name') or 'unknown model'}, {dev.get('pci_bus_id') or 'bus ?'})"


def memory(dev: NvmlDevice, found: Findings) -> None:
    i, name = dev.get("index"), str(dev.get("name") or "")
    vol, agg = dev.get("ecc_volatile_uncorrectable"), dev.get("ecc_aggregate_uncorrectable")
    sram, dram = dev.get("ecc_sram_uncorrectable"), dev.get("ecc_dram_uncorrectable")
    split = f" (SRAM {sram}, DRAM {dram})" if sram is not None or dram is not None else ""
    if vol or sram or dram:
        count = vol or (sram or 0) + (dram or 0)
        on_chip = " An SRAM error is on the chip itself: a reset is required, and a repeat means RMA." if sram else ""
        found.add(FAIL, "ECC_UNCORRECTABLE", f"{where(dev)}: {count} volatile uncorrectable ECC error(s) since the "
                  f"last reset{split}", "Drain the node, reset the GPU and run `dcgmi diag -r 3`; repeated errors "
                  f"mean RMA.{on_chip}", "host", i)
    elif agg:
        rows: Mapping[str, Any] = dev.get("row_remap") or {}
        handled = rows.get("pending") == 0 and rows.get("failed") == 0
        found.add(WARN, "ECC_UNCORRECTABLE", f"{where(dev)}: {agg} uncorrectable ECC error(s) in its lifetime "
                  f"(none since the last reset{'; row remapping handled them, nothing pending' if handled else ''})",
                  "Watch the count: if it grows, drain the node and run DCGM diagnostics.", "host", i,
                  HANDLED if handled else None)
    ecc = dev.get("ecc") if isinstance(dev.get("ecc"), list) else [None, None]
    if ecc and ecc[0] is False and any(k in name for k in DATACENTER):
        found.add(WARN, "ECC_UNCORRECTABLE", f"{where(dev)}: ECC is disabled on a data-centre GPU",
                  "Enable it: `nvidia-smi -e 1` and reset the GPU.", "host", i)
    if dev.get("retired_pages_pending"):
        found.add(FAIL, "RETIREMENT_PENDING", f"{where(dev)}: retired pages pending (take effect at the next reset)",
                  "Drain the node and reset the GPU (`nvidia-smi -r` or reboot).", "host", i)
    remap: Mapping[str, Any] = dev.get("row_remap") or {}
    if remap.get("failed"):
        found.add(FAIL, "ROW_REMAP_FAILED", f"{where(dev)}: an HBM row remap failed (no spare rows left)",
                  "Take the GPU out of service (RMA).", "host", i)
    elif remap.get("pending"):
        found.add(FAIL, "RETIREMENT_PENDING", f"{where(dev)}: row remap pending (takes effect at the next reset)",
                  "Drain the node and reset the GPU (`nvidia-smi -r` or reboot).", "host", i)
    action = dev.get("recovery_action")
    if action and action not in (NONE, "unknown"):
        what = {"reset": "a GPU reset", "reboot": "a node reboot", "drain_p2p": "draining peer-to-peer traffic",
                "drain_and_reset": "a drain, then a GPU reset"}.get(str(action), str(action))
        found.add(FAIL, "GPU_RESET_REQUIRED", f"{where(dev)}: NVML's recovery action asks for {what}",
                  f"Drain the node, then {what} (`nvidia-smi -r -i {dev.get('pci_bus_id') or '<bus id>'}` or reboot).",
                  "host", i)
