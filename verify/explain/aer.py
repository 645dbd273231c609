"""The kernel's PCIe AER lines (`pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received: ...`, `PCIe Bus Error:
severity=Corrected, type=Physical Layer`, `device [8086:6f08] error status/mask=...`, `[ 5] SDES`, `AER: can't
recover`, `device recovery failed`, `Root Port link has been reset`), in both wordings (to 6.x `Corrected` /
`Uncorrected (Non-Fatal)` `error received`; 6.x `Correctable` / `Uncorrectable (Non-Fatal)` `error message received
from`), read into the gpu facts' `pcie_aer_events` (verify/FACTS.md `PcieAerEvent`): one event per address the kernel
printed them under and severity, its repeats counted. A port is the GPU's upstream port where an `nvidia`-bound
device takes part in its recovery in the same log (the GPU below it)."""
from __future__ import annotations

import re
from typing import Any

_ADDR = r"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
# `<driver> <address>: ` as the kernel prefixes a device's message
_WHO = re.compile(r"(?:^|[\s\]:;])([\w-]+) " + _ADDR + r": ")
_SEVERITY = (r"(Corrected|Correctable|Uncorrect(?:ed|able) \(Non-Fatal\)|Uncorrect(?:ed|able) \(Fatal\))")
_RECEIVED = re.compile(r"AER: (?:Multiple )?" + _SEVERITY + r" error (?:message )?received")
_BUS_ERROR = re.compile(r"PCIe Bus Error: severity=" + _SEVERITY)
_DEVICE = re.compile(r"device \[([0-9a-fA-F]{4}:[0-9a-fA-F]{4})\] error status/mask")
_BIT = re.compile(r": +\[ ?\d{1,2}\] (\w[\w ]*?)\s*(?:\(First\))?\s*$")
_FAILED = re.compile(r"AER: (?:device recovery failed|can't recover)")
_RECOVERED = re.compile(r"AER: device recovery successful")
_RESET = re.compile(r"link has been reset|Link Reset|AER: (?:Root|Downstream) Port link has been reset")
_TIME = re.compile(r"^\s*(\[[^\]]+\]|\w{3,5}\.? +\d+ [\d:]+|\d{4}-\d\d-\d\dT[\d:.,+-]+)")
NVIDIA = "10de"
GPU_DRIVERS = ("nvidia",)


def _severity(word: str) -> str:
    word = word.lower()
    return "corrected" if word.startswith("correct") else "fatal" if "(fatal)" in word else "non_fatal"


def detect(text: str) -> bool:
    return bool(_RECEIVED.search(text) or _BUS_ERROR.search(text))


def events(text: str) -> list[dict[str, Any]]:
    """The AER events of a log, in the order first seen ([] where it has none)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    lines: dict[tuple[str, str], dict[str, int]] = {}
    last: dict[str, tuple[str, str]] = {}       # address -> its latest event's key (status lines follow it)
    gpu_involved = False                         # an nvidia-bound device took part in AER
    failed: set[str] = set()
    recovered: set[str] = set()
    reset: set[str] = set()
    for line in text.splitlines():
        who = _WHO.search(line)
        if not who:
            continue
        driver, addr = who.group(1), who.group(2).lower()
        if driver in GPU_DRIVERS and ("AER" in line or "PCIe Bus Error" in line):
            gpu_involved = True
        hit = _RECEIVED.search(line) or _BUS_ERROR.search(line)
        if hit:
            key = (addr, _severity(hit.group(1)))
            event = found.setdefault(key, {"severity": key[1], "port": addr, "driver": driver, "device_id": None,
                                           "errors": [], "gpu": None, "recovered": None, "link_reset": None,
                                           "count": 0, "text": line.strip()[:300],
                                           "time": (t.group(1) if (t := _TIME.match(line)) else None)})
            counts = lines.setdefault(key, {"bus": 0, "received": 0})
            counts["bus" if hit.re is _BUS_ERROR else "received"] += 1
            last[addr] = key
            continue
        key_of = last.get(addr)
        if key_of and (m := _DEVICE.search(line)):
            found[key_of]["device_id"] = m.group(1).lower()
        elif key_of and (m := _BIT.search(line)) and m.group(1) not in found[key_of]["errors"]:
            found[key_of]["errors"].append(m.group(1))
        if _FAILED.search(line):
            failed.add(addr)
        if _RECOVERED.search(line):
            recovered.add(addr)
        if _RESET.search(line):
            reset.add(addr)
    out = []
    for key, event in found.items():
        addr = key[0]
        event["count"] = lines[key]["bus"] or lines[key]["received"]
        vendor = (event["device_id"] or "").split(":")[0]
        if event["driver"] in GPU_DRIVERS or vendor == NVIDIA:
            event["gpu"] = True
        elif event["driver"] == "pcieport":
            event["gpu"] = True if gpu_involved else None     # the port above the GPU, or whose below: unknown
        else:
            event["gpu"] = False                                # another device's own driver
        if event["severity"] != "corrected":
            # a failed recovery on the port, or of a device below it (`nvidia ...: AER: can't recover`): not recovered
            event["recovered"] = False if failed and (addr in failed or event["driver"] == "pcieport") else \
                True if addr in recovered else None
            event["link_reset"] = True if addr in reset else None
        event["errors"] = event["errors"] or None
        out.append(event)
    return out
