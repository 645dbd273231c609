"""`dcgmi health -c`: DCGM's health watch report (dcgmi/Health.cpp), a boxed tree of `| left | right |` cells:
`Overall Health`, then per entity (`GPU`, `-> 0`) and per watched system (`-> NVLINK system`, `-> Memory system`) its
health word and its incidents, each message wrapped over the following rows (54 characters) and joined with `, `.
Each incident's text is DCGM's own message (dcgmlib/dcgm_errors.h); those below say a fact of the schema and are
read into the GPU's facts (a corrupt InfoROM as NVML's error on it), the rest (PCIe replays, thermal violations)
name no field (a power violation is the power cap at work: said, no fault): such a GPU is judged on what was read,
and a GPU with nothing read is not assessed, never healthy. DCGM's own health word is not read: the judges decide. Xid incidents (`Detected XID 79 for GPU 0`) are read by the relay parser (xidrelay).
DCGM 3.0's layout (its user guide's example, batch 239: `| Group 1 | Overall Health: Warning |`, `| GPU ID: 0 |
Warning |`, `| | PCIe system: Warning - Detected more than 8 PCIe |` wrapped on) is read as the later one."""
from __future__ import annotations

import re
from typing import Any

from ..shared.xidcatalog import RELAY_DCGM
from . import inforom

_HEADER = re.compile(r"Overall Health\s*[|:]\s*(Healthy|Warning|Failure)")
_OLD_ENTITY = re.compile(r"^GPU ID:\s*(\d+)$")
_OLD_SYSTEM = re.compile(r"^(\w[\w ]* system):\s*(Healthy|Warning|Failure)\s*-\s*(.*)$")
_ENTITY = re.compile(r"^->\s*(\d+)$")
# DCGM_FR_NVLINK_DOWN, DCGM_FR_GPU_EXPECTED_NVLINKS_UP
_LINK_DOWN = re.compile(r"GPU (\d+)'s NvLink link (\d+) is currently down")
_LINKS_UP = re.compile(r"Only (\d+) NvLinks are up out of the expected (\d+)")
# DCGM_FR_VOLATILE_DBE_DETECTED, DCGM_FR_VOLATILE_SBE_DETECTED
_DBE = re.compile(r"Detected (\d+) volatile double-bit ECC error\(s\) in GPU (\d+)")
_SBE = re.compile(r"single-bit ECC error\(s\) detected in GPU (\d+) Volatile SBEs: (\d+)")
# DCGM_FR_PENDING_PAGE_RETIREMENTS, DCGM_FR_DBE_PENDING_PAGE_RETIREMENTS
_PENDING_PAGES = re.compile(r"(?:A pending retired page has been detected in GPU|Pending page retirements together "
                            r"with a DBE were detected on GPU) (\d+)")
# DCGM_FR_ROW_REMAP_FAILURE, DCGM_FR_UNCORRECTABLE_ROW_REMAP, DCGM_FR_PENDING_ROW_REMAP
_REMAP_FAILED = re.compile(r"GPU (\d+) had uncorrectable memory errors and row remapping failed")
_REMAPPED = re.compile(r"GPU (\d+) had uncorrectable memory errors and (\d+) rows were remapped")
_REMAP_PENDING = re.compile(r"GPU (\d+) had memory errors and row remappings are pending")
# DCGM_FR_CORRUPT_INFOROM: NVML's error on the InfoROM, as nvidia-smi's warning is read (explain/inforom.py)
_INFOROM = re.compile(r"A corrupt InfoROM has been detected in GPU (\d+)")
MAX_LINKS = 36         # DCGM_NVLINK_MAX_LINKS_PER_GPU: a higher link number is garbled text, never a list that long


def detect(text: str) -> bool:
    return bool(_HEADER.search(text)) and ("Health Monitor Report" in text or any(
        _cells(line)[0].startswith("->") for line in text.splitlines()))


def _cells(line: str) -> tuple[str, str]:
    parts = [p.strip() for p in line.strip().strip("|").split("|")]
    return (parts[0], parts[1]) if len(parts) >= 2 else ("", "")


def _later_layout(text: str) -> str:
    """DCGM 3.0's rows in the later layout's words: its entity `GPU ID: N` an entity of the `GPU` group, its
    `X system: Warning - message` a watched system and its first message row."""
    if "GPU ID:" not in text:
        return text
    out = []
    for line in text.splitlines():
        left, right = _cells(line)
        if m := _OLD_ENTITY.match(left):
            out += ["| GPU | |", f"| -> {m.group(1)} | {right} |"]
        elif m := _OLD_SYSTEM.match(right):
            out += [f"| -> {m.group(1)} | {m.group(2)} |", f"| | {m.group(3)} |"]
        else:
            out.append(line)
    return "\n".join(out)


def incidents(text: str) -> dict[int, dict[str, str]]:
    """Per GPU index, per watched system, the text of its incidents, the wrapped rows joined again."""
    text = _later_layout(text)
    said: dict[int, dict[str, list[str]]] = {}
    gpu: int | None = None
    system = "?"
    group = "GPU"         # an excerpt may start below the group's row
    for line in text.splitlines():
        left, right = _cells(line)
        if left and not left.startswith("->") and left != "Overall Health":
            group, gpu = left, None         # `GPU`, `Switch`, `ConnectX`, ...: only a GPU's entities are GPUs
        elif (m := _ENTITY.match(left)) and group == "GPU":
            gpu, system = int(m.group(1)), "?"
            said.setdefault(gpu, {})
        elif _ENTITY.match(left):
            gpu = None
        elif left.startswith("->") and left != "-> Errors":
            system = left[2:].strip()
        if gpu is not None and right and right not in ("Healthy", "Warning", "Failure"):
            said[gpu].setdefault(system, []).append(right)
    return {g: {name: " ".join(rows) for name, rows in systems.items()} for g, systems in said.items()}


def device(index: int, text: str) -> dict[str, Any]:
    """GPU `index`'s facts from the catalog's messages DCGM said of it (also `dcgmi diag`'s: explain/dcgmdiag.py)."""
    dev: dict[str, Any] = {"index": index}
    down = sorted({int(m.group(2)) for m in _LINK_DOWN.finditer(text)
                   if int(m.group(1)) == index and int(m.group(2)) < MAX_LINKS})
    if down:   # the NVLink watch names every link that is down: a lower link it does not name is up
        dev["nvlink"] = [k not in down for k in range(max(down) + 1)]
    if m := _LINKS_UP.search(text):
        up, expected = int(m.group(1)), int(m.group(2))
        if up < expected <= MAX_LINKS:
            dev["nvlink"] = [True] * up + [False] * (expected - up)
    if m := _DBE.search(text):
        dev["ecc_volatile_uncorrectable"] = int(m.group(1))
    if m := _SBE.search(text):
        dev["ecc_volatile_correctable"] = int(m.group(2))
    if _PENDING_PAGES.search(text):
        dev["retired_pages_pending"] = True
    remap: dict[str, int | None] = {"correctable": None, "uncorrectable": None, "pending": None, "failed": None}
    if _REMAP_FAILED.search(text):
        remap["failed"] = 1
    if m := _REMAPPED.search(text):
        remap["uncorrectable"] = int(m.group(2))
    if _REMAP_PENDING.search(text):
        remap["pending"] = 1
    if any(v is not None for v in remap.values()):
        dev["row_remap"] = remap
    if any(int(m.group(1)) == index for m in _INFOROM.finditer(text)):
        dev["nvml_errors"] = {"inforom": inforom.CORRUPTED}
    return dev


# an Xid incident is the relay parser's (xidrelay), read from the same text
READ = (_LINK_DOWN, _LINKS_UP, _DBE, _SBE, _PENDING_PAGES, _REMAP_FAILED, _REMAPPED, _REMAP_PENDING, _INFOROM,
        RELAY_DCGM)


# DCGM_FR_CLOCKS_EVENT_POWER (DCGM_FR_CLOCK_THROTTLE_POWER before 3.3): the power cap lowering the clocks, the cap doing
# its job under load ("This GPU can still perform workload"; batch 273): said beside the verdict, never a fault and
# never what leaves the GPU unassessed. Thermal and other violations stay unread.
_POWER_CAP = re.compile(r"Detected clocks? (?:event|throttling) due to power violation")


def _incidents(text: str, power: bool) -> list[str]:
    return [f"GPU {index}, {system}: {said}" for index, systems in sorted(incidents(text).items())
            for system, said in systems.items() if not any(p.search(said) for p in READ)
            and bool(_POWER_CAP.search(said)) == power]


def unread(text: str) -> list[str]:
    """Each GPU's incidents that no pattern above reads (PCIe replays, thermal violations)."""
    return _incidents(text, power=False)


def said(text: str) -> list[str]:
    """The power cap's clock events, which name no fault."""
    return [f"{line} (the power cap lowering the clocks under load: no fault)" for line in _incidents(text, power=True)]


def parse(text: str) -> dict[str, Any]:
    devices = [device(index, " ".join(systems.values())) for index, systems in sorted(incidents(text).items())]
    return {"torch": None, "driver": None, "devices": devices or None}
