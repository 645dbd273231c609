"""The Amazon EKS node monitoring agent's accelerated-hardware conditions as it logs them: `sending condition to
exporter` with conditionType `AcceleratedHardwareReady` and Reason `DCGMHealthCode<N>`, N the code of DCGM's health
watch (dcgmlib/dcgm_errors.h; batch 296, aws/eks-node-monitoring-agent#39). A code says a fact of the schema only where
DCGM's own message for it does (explain/dcgmhealth.py reads those messages): an uncorrectable volatile ECC error, a
pending page retirement, a row remap failed or pending, a corrupt InfoROM. The agent names no GPU and no count: one
device of unknown index holds what the codes prove, a count the least they prove (1). The other codes (101, an Xid
without its number; thermal, PCIe, NVLink rates) are said, not read; the agent's own Severity is not read: the judges
decide."""
from __future__ import annotations

import functools
import re
from typing import Any

from . import inforom

_CONDITION = re.compile(r'"Reason"\s*:\s*"DCGMHealthCode(\d{1,3})"')
_HARDWARE = re.compile(r'"conditionType"\s*:\s*"AcceleratedHardwareReady"')
# dcgm_errors.h: the codes whose message names a fact of the schema, and the fact
_DBE = {4, 103}                  # DCGM_FR_VOLATILE_DBE_DETECTED, DCGM_FR_DBE_VIOLATION
_PENDING_PAGES = {6, 83}         # DCGM_FR_PENDING_PAGE_RETIREMENTS, DCGM_FR_DBE_PENDING_PAGE_RETIREMENTS
_INFOROM = 9                     # DCGM_FR_CORRUPT_INFOROM
_REMAP_FAILED = 80               # DCGM_FR_ROW_REMAP_FAILURE
_REMAP_PENDING = 85              # DCGM_FR_PENDING_ROW_REMAP
READ = _DBE | _PENDING_PAGES | {_INFOROM, _REMAP_FAILED, _REMAP_PENDING}
NAMES = {3: "DCGM_FR_PCI_REPLAY_RATE", 5: "DCGM_FR_VOLATILE_SBE_DETECTED", 10: "DCGM_FR_CLOCK_THROTTLE_THERMAL",
         12: "DCGM_FR_CLOCK_THROTTLE_POWER", 13: "DCGM_FR_NVLINK_ERROR_THRESHOLD", 14: "DCGM_FR_NVLINK_DOWN",
         101: "DCGM_FR_XID_ERROR, its Xid not named", 102: "DCGM_FR_SBE_VIOLATION",
         104: "DCGM_FR_PCIE_REPLAY_VIOLATION", 109: "DCGM_FR_SXID_ERROR"}


@functools.lru_cache(maxsize=2)         # detect, parse and unread read one text in turn
def codes(text: str) -> tuple[int, ...]:
    """The DCGM health codes the agent's hardware conditions carry, in the order first seen."""
    found = [int(m.group(1)) for line in text.splitlines() if _HARDWARE.search(line)
             for m in _CONDITION.finditer(line)]
    return tuple(dict.fromkeys(found))


def detect(text: str) -> bool:
    return "DCGMHealthCode" in text and bool(codes(text))


def parse(text: str) -> dict[str, Any]:
    said = set(codes(text))
    dev: dict[str, Any] = {"index": None}
    if said & _DBE:
        dev["ecc_volatile_uncorrectable"] = 1
    if said & _PENDING_PAGES:
        dev["retired_pages_pending"] = True
    if said & {_REMAP_FAILED, _REMAP_PENDING}:
        dev["row_remap"] = {"correctable": None, "uncorrectable": None,
                            "pending": 1 if _REMAP_PENDING in said else None,
                            "failed": 1 if _REMAP_FAILED in said else None}
    if _INFOROM in said:
        dev["nvml_errors"] = {"inforom": inforom.CORRUPTED}
    return {"torch": None, "driver": None, "devices": [dev] if len(dev) > 1 else None}


def unread(text: str) -> list[str]:
    """Each code that names no field (an Xid without its number, a thermal or PCIe violation)."""
    return [f"the EKS node monitoring agent's DCGMHealthCode{code} ({NAMES.get(code, 'a DCGM health code')}): no "
            "field holds it" for code in codes(text) if code not in READ]
