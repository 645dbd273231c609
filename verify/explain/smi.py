"""`nvidia-smi -q` (whole, `-d SECTION`, or grepped excerpts): its indented sections read as paths (`Fabric/Health/
Summary`) per `GPU <bus id>` block, into the gpu facts' devices. Both wordings are read: "Clocks Throttle Reasons"
(to driver 525) and "Clocks Event Reasons" (530 on); ECC as "Double Bit / Single Bit ... Total" (older) or "DRAM /
SRAM Correctable / Uncorrectable" (R450 on). A value nvidia-smi prints for what it does not know or the GPU does not
have (`N/A`, `[N/A]`, `Not Supported`, `Unknown`) is null, never a fact; only the Fabric State's `N/A` has a word of
its own in verify/FACTS.md (`not_supported`: the GPU has no fabric)."""
from __future__ import annotations

import re
from typing import Any

from ..checks.gpu.figures_table import FIGURES
from ..checks.gpu.gpuhealth import THROTTLE_BITS
from ..figures import within
from . import inforom, smipower
from .notknown import known
from .smiquery import compute_mode, recovery

_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")
_LINE = re.compile(r"^(\s*)([^:]+?)\s*(?::\s*(.*?))?\s*$")
_MARKS = ("NVSMI LOG", "Product Name", "Clocks Event Reasons", "Clocks Throttle Reasons", "Remapped Rows", "CliqueId",
          "Pending Page Blacklist", "GPU UUID", "Volatile", "Fabric", "GPU Recovery Action", "GPU Reset Status",
          # the Temperature, Power Readings and Clocks sections' own lines, which no other tool prints: a stretch of
          # one GPU's block cut above its identity (`nvidia-smi -a` in NVIDIA/nvidia-docker#1076)
          "GPU Current Temp", "GPU Shutdown Temp", "GPU Slowdown Temp", "Enforced Power Limit",
          "Default Applications Clocks",
          # the block's identity and PCI lines under its `GPU <bus id>` header, a block pasted without that header
          # (NVIDIA/nvidia-docker#1146, batch 133)
          "Minor Number", "MultiGPU Board", "GPU Link Info",
          # the report's own header line (`Attached GPUs : 1`), kept above a section cut out of `nvidia-smi -a` (batch 261)
          "Attached GPUs")
# Clocks Event/Throttle Reasons' lines -> nvml.h's bit (gpuhealth.THROTTLE_BITS), by nvidia-smi's words
REASONS = {"idle": 0x1, "applications clocks setting": 0x2, "sw power cap": 0x4, "hw slowdown": 0x8, "sync boost": 0x10,
           "sw thermal slowdown": 0x20, "hw thermal slowdown": 0x40, "hw power brake slowdown": 0x80,
           "display clock setting": 0x100}
FABRIC_STATE = {"completed": "completed", "in progress": "in_progress", "not started": "not_started",
                "n/a": "not_supported", "not supported": "not_supported"}
assert set(REASONS.values()) == set(THROTTLE_BITS)
# the report's own lines above its first GPU (a grepped GPU field flush left, `Product Name : ...`, is the GPU's)
_HEADER = frozenset({"timestamp", "driver version", "kmd version", "cuda version", "cuda umd version", "attached gpus"})


# grepped excerpts one mark short: a section's header with its first line under it (`-d PERFORMANCE`'s reasons,
# `grep -A 2 Fabric`, the Reset Status), or a line no other tool prints
_SECTIONS = re.compile(r"^\s*(?:Clocks (?:Event|Throttle) Reasons\s*\n\s*Idle|Fabric\s*\n\s*State|"
                       r"GPU Reset Status\s*\n\s*(?:Reset Required|Drain and Reset Recommended)|CliqueId|"
                       r"GPU Recovery Action|"
                       # the Clocks section beside its Max Clocks (`-d CLOCK` cut to them): NVML's clocks, no health
                       r"Max Clocks\s*\n\s*Graphics|"
                       # the ECC Errors section alone (`-d ECC` cut to its counts): its scope under it, then its counts
                       r"ECC Errors\s*\n\s*(?:Volatile|Aggregate)\b[^\n:]*\n\s*(?:(?:SRAM|DRAM) (?:Correctable|Uncorrectable)|"
                       r"(?:Single|Double) Bit\s*\n\s*[A-Za-z][A-Za-z0-9 ]*?))"
                       r"\s*:", re.MULTILINE)
# a guide's note after a line (`Volatile      # Errors counted since last GPU driver reload`, AWS re:Post's Xid
# guide): nvidia-smi prints no `#`, so the note is the guide's and the line is read without it
_NOTE = re.compile(r"\s{2,}#\s[^\n]*$")


def detect(text: str) -> bool:
    hits = sum(1 for m in _MARKS if re.search(rf"^[^\S\n]*{re.escape(m)}\b", text, re.MULTILINE))
    return "NVSMI LOG" in text or hits >= 2 or bool(_SECTIONS.search(text))


# the Power Readings section's own lines to R525 (`Power Management : Supported`, `Enforced Power Limit`): no other
# section of `-q` prints them (R530's GPU and Module Power Readings share the rest of their keys, so theirs are not)
_POWER_OWN = frozenset({"power management", "enforced power limit"})
_KEYED = re.compile(r"^(\s+)([^:\n]+?)\s*:")
_SECTION = re.compile(r"^(\s*)[A-Za-z][^:\n]*$")


def _cut_section(text: str) -> str:
    """An excerpt cut inside the Power Readings section (NVIDIA/nvidia-docker#1447: its lines, then `    Clocks`): its
    first lines are indented below the first section header that follows them, and one of them is that section's
    own; its header is put back above them. Any other section cut so is left unplaced (its lines name no section)."""
    lines = text.splitlines()
    head = next((n for n, line in enumerate(lines) if line.strip()), None)
    if head is None or not (first := _KEYED.match(lines[head])):
        return text
    keys = []
    for n in range(head, len(lines)):
        if (m := _KEYED.match(lines[n])) and len(m.group(1)) == len(first.group(1)):
            keys.append(m.group(2).strip().lower())
            continue
        section = _SECTION.match(lines[n])
        if section and len(section.group(1)) < len(first.group(1)) and _POWER_OWN & set(keys):
            return "\n".join(lines[:head] + [section.group(1) + "Power Readings"] + lines[head:])
        break
    return text


_FLAT = re.compile(r"\b(?:(Timestamp|Driver Version|KMD Version|CUDA UMD Version|CUDA Version|Attached GPUs)\s+:\s|"
                   r"(GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])(?=\s|$))")


def _unflatten(text: str) -> str:
    """A report a quote flattened onto one line (GitHub's `>` joins a paste's lines: llama.cpp#4747's `Timestamp : ...
    Driver Version : 535.129.03 CUDA Version : 12.2`, `Attached GPUs : 4 GPU 00000000:4F:00.0 Clocks Graphics : ...`):
    its header's lines and its GPUs' bus ids are put back on lines of their own. What follows a bus id on such a line
    (the sections' keys, their nesting lost) is not read: which section a key was under is no longer shown."""
    if "NVSMI LOG" not in text:
        return text
    out = []
    for line in text.splitlines():
        marks = list(_FLAT.finditer(line))
        if len(marks) < 2:
            out.append(line)
            continue
        out.append(line[:marks[0].start()].rstrip())
        for m, after in zip(marks, marks[1:] + [None], strict=True):
            end = after.start() if after else len(line)
            out.append(m.group(2) if m.group(2) else f"{m.group(1)} : {line[m.end():end].strip()}")
    return "\n".join(out)


def _tree(text: str) -> tuple[dict[str, str], list[tuple[str, dict[str, str]]]]:
    """(the header's values, [(bus id, {path: value})]); an excerpt without a GPU line is one GPU of unknown bus."""
    text = _cut_section(_unflatten(text))
    header: dict[str, str] = {}
    gpus: list[tuple[str, dict[str, str]]] = []
    stack: list[tuple[int, str]] = []
    bused = False                   # a GPU block with its bus id read (the report started above)
    for raw in text.splitlines():
        if "NVSMI LOG" in raw and not header and not bused:
            gpus, stack = [], []    # the first report starts here: the lines above it are another tool's
            continue
        if not raw.strip() or raw.strip() == "--" or raw.lstrip().startswith(("#", "=")):
            continue
        if m := _GPU.match(raw.strip()):
            gpus.append((m.group(1), {}))
            bused = True
            stack = []
            continue
        m = _LINE.match(_NOTE.sub("", raw.rstrip()))
        if not m:
            continue
        indent, key, value = len(m.group(1)), m.group(2).strip(), m.group(3)
        stack = [(i, k) for i, k in stack if i < indent]
        if value is None:
            stack.append((indent, key.lower()))
            continue
        path = "/".join([k for _, k in stack] + [key.lower()])
        if not gpus and path in _HEADER:
            header[path] = value
        else:
            if not gpus:
                gpus.append(("", {}))
            gpus[-1][1][path] = value
    return header, gpus


def _find_raw(fields: dict[str, str], *tails: str) -> str | None:
    for tail in tails:
        for path, value in fields.items():
            if path == tail or path.endswith("/" + tail):
                return value
    return None


def _find(fields: dict[str, str], *tails: str) -> str | None:
    return known(_find_raw(fields, *tails))


def _int(value: str | None) -> int | None:
    m = re.match(r"^\s*(-?\d{1,19})(?!\d)", value or "")     # no count has more digits (int() refuses 4,300)
    return int(m.group(1)) if m else None


def _yes(value: str | None) -> bool | None:
    return None if value is None else value.strip().lower() in ("yes", "true", "active", "enabled")


def _ecc(fields: dict[str, str], scope: str, correctable: bool) -> int | None:
    """Volatile or Aggregate totals: the newer DRAM/SRAM lines summed, or the older Single/Double Bit Total."""
    kind = "correctable" if correctable else "uncorrectable"
    new = [v for p, v in fields.items() if f"ecc errors/{scope}/" in p and re.search(
        rf"/(sram|dram) {kind}( |$)", p) and _int(v) is not None]
    if new:
        return sum(_int(v) or 0 for v in new)
    old = _find({p: v for p, v in fields.items() if f"ecc errors/{scope}/" in p},
                f"{'single' if correctable else 'double'} bit/total")
    return _int(old)


def _reasons(fields: dict[str, str]) -> tuple[int | None, int | None]:
    mask = read = 0
    for path, value in fields.items():
        if "clocks event reasons/" not in path and "clocks throttle reasons/" not in path and \
                "clocks_event_reasons/" not in path:
            continue
        bit = REASONS.get(path.rsplit("/", 1)[-1].replace("clocks event reason ", ""))
        if bit and value.strip().lower() in ("active", "not active"):
            read |= bit
            mask |= bit if value.strip().lower() == "active" else 0
    return (mask, read) if read else (None, None)


def _fabric(fields: dict[str, str]) -> dict[str, Any] | None:
    state = _find_raw(fields, "fabric/state")      # `N/A` here is FACTS.md's `not_supported`, kept apart
    if state is None:
        return None
    summary = (_find(fields, "fabric/health/summary") or "").strip().lower()
    health = {"summary": summary if summary in ("healthy", "unhealthy") else None,     # FACTS.md's two words
              "degraded_bandwidth": {"degraded": True, "full": False}.get(
                  (_find(fields, "fabric/health/bandwidth") or "").lower()),
              "route_recovery": _bool(_find(fields, "fabric/health/route recovery in progress")),
              "route_unhealthy": _bool(_find(fields, "fabric/health/route unhealthy")),
              "access_timeout_recovery": _bool(_find(fields, "fabric/health/access timeout recovery")),
              "incorrect_configuration": None}
    config = _find(fields, "fabric/health/incorrect configuration")
    if config is not None:
        health["incorrect_configuration"] = config.strip().lower() not in ("none", "false", "no")
    status = _find(fields, "fabric/status")
    clique = _int(_find(fields, "fabric/cliqueid"))
    return {"state": FABRIC_STATE.get(state.strip().lower()), "clique_id": clique,
            "status": None if status is None else "success" if status.strip().lower() == "success" else status.strip(),
            "cluster_uuid": _find(fields, "fabric/clusteruuid"),
            "health": health if any(v is not None for v in health.values()) else None}


def _ecc_mode(fields: dict[str, str]) -> list[bool | None] | None:
    """ECC Mode's Current and Pending (FACTS.md `ecc`: [current, pending]); None where neither is shown."""
    mode = [{"enabled": True, "disabled": False}.get((_find(fields, f"ecc mode/{k}") or "").strip().lower())
            for k in ("current", "pending")]
    return mode if any(m is not None for m in mode) else None


def _recovery_action(fields: dict[str, str]) -> str | None:
    """NVML's recovery action: `GPU Recovery Action : Reset` (R550 on), else the older `GPU Reset Status`'s Yes
    lines (`Drain and Reset Recommended`, `Reset Required`); a line saying it is deprecated or N/A is no answer."""
    action = _find(fields, "gpu recovery action")
    if action is not None:
        return recovery(action)
    drain, reset = (_find(fields, f"gpu reset status/{k}") for k in ("drain and reset recommended", "reset required"))
    if _bool(drain):
        return "drain_and_reset"
    if _bool(reset):
        return "reset"
    return "none" if _bool(drain) is False and _bool(reset) is False else None


def _bool(value: str | None) -> bool | None:
    return {"true": True, "false": False, "yes": True, "no": False}.get((value or "").strip().lower())


# The health queries whose `Unknown Error` says NVML cannot reach the GPU (FACTS.md `lost`: Unknown Error on a query);
# a descriptive field's (`Host Max`, `Addressing Mode`, a brand) is a driver that cannot describe it, not a lost GPU
_HEALTH_QUERIES = (("temperature_c", "temperature/gpu current temp"), ("row_remap", "remapped rows"),
                   ("ecc_volatile_uncorrectable", "ecc errors"), ("power_w", "power draw"),
                   ("pcie_gen", "pcie generation/current"), ("throttle_reasons", "clocks event reasons"),
                   ("throttle_reasons", "clocks throttle reasons"))


def _unreachable(fields: dict[str, str]) -> dict[str, str]:
    return {fact: "Unknown Error" for fact, path in _HEALTH_QUERIES
            if (_find_raw(fields, path) or "").strip().lower() == "unknown error"}


def _reset_asked(fields: dict[str, str]) -> dict[str, str]:
    """The health queries NVML answered NVML_ERROR_RESET_REQUIRED (`[GPU requires reset]`): a GPU the driver serves no
    more until it is reset, judged by verify/checks/gpu/resetrequired.py (batch 197)."""
    return {fact: "GPU requires reset" for fact, path in _HEALTH_QUERIES
            if (_find_raw(fields, path) or "").strip().strip("[]").lower() == "gpu requires reset"}


def _device(n: int, bus: str, fields: dict[str, str]) -> dict[str, Any]:
    """One GPU's facts, each figure only in the range the facts hold (`Current : 16` under PCIe Generation is no
    generation, 10^30 no ECC count): outside it, null (unknown), never a figure the contract refuses."""
    dev = {k: within(FIGURES, "devices[]." + k, v) for k, v in _read(n, bus, fields).items()}
    for part in ("row_remap", "fabric"):
        if isinstance(dev.get(part), dict):
            dev[part] = {k: within(FIGURES, f"devices[].{part}.{k}", v) for k, v in dev[part].items()}
    return dev


def _read(n: int, bus: str, fields: dict[str, str]) -> dict[str, Any]:
    mask, read = _reasons(fields)
    remap = {k: _int(_find(fields, f"remapped rows/{p}")) for k, p in (("correctable", "correctable error"),
                                                                       ("uncorrectable", "uncorrectable error"))}
    pending, failed = _find(fields, "remapped rows/pending"), _find(fields, "remapped rows/remapping failure occurred")
    remap |= {"pending": None if pending is None else int(bool(_yes(pending))),
              "failed": None if failed is None else int(bool(_yes(failed)))}
    temp = _find(fields, "temperature/gpu current temp")
    slow = _find(fields, "temperature/gpu slowdown temp")
    fabric = _fabric(fields)      # a GPU with a fabric state other than N/A sits behind NVSwitches (NVML's probe)
    return {"index": n if bus else None, "name": _find(fields, "product name"), "uuid": _find(fields, "gpu uuid"),
            "pci_bus_id": bus or _find(fields, "pci/bus id"),
            "ecc_volatile_uncorrectable": _ecc(fields, "volatile", False),
            "ecc_aggregate_uncorrectable": _ecc(fields, "aggregate", False),
            "ecc_volatile_correctable": _ecc(fields, "volatile", True),
            "ecc_aggregate_correctable": _ecc(fields, "aggregate", True),
            "retired_pages_pending": _yes(_find(fields, "pending page blacklist", "retired pages/pending")),
            "row_remap": remap if any(v is not None for v in remap.values()) else None,
            "throttle_reasons": mask, "throttle_reasons_read": read,
            "sm_clock_mhz": _int(_find(fields, "clocks/sm")), "sm_clock_max_mhz": _int(_find(fields, "max clocks/sm")),
            "pcie_gen": _int(_find(fields, "pcie generation/current")),
            "pcie_gen_max": _int(_find(fields, "pcie generation/max")),
            "pcie_width": _int(_find(fields, "link width/current")),
            "pcie_width_max": _int(_find(fields, "link width/max")),
            # Device Max: the GPU's own (FACTS.md), so the explain road sees the slot below the GPU as the facts do
            "pcie_gen_gpu_max": _int(_find(fields, "pcie generation/device max")),
            "pcie_width_gpu_max": _int(_find(fields, "link width/device max")),
            "temperature_c": float(t) if (t := _int(temp)) is not None and "N/A" not in (temp or "") else None,
            "temperature_slowdown_c": float(s) if (s := _int(slow)) else None,
            "recovery_action": _recovery_action(fields), "ecc": _ecc_mode(fields),
            "compute_mode": compute_mode(_find(fields, "compute mode") or ""),
            **smipower.limits(fields),
            "fabric": fabric, "nvswitch": True if _find(fields, "fabric/cliqueid") or (fabric or {}).get("state") in (
                "completed", "in_progress", "not_started") else None}


def parse(text: str) -> dict[str, Any]:
    facts = from_tree(*_tree(text))
    inforom.mark(text, facts["devices"])     # nvidia-smi's warning above or below its report
    return facts


def from_tree(header: dict[str, str], gpus: list[tuple[str, dict[str, str]]]) -> dict[str, Any]:
    """The gpu facts of a report read as paths (the text layout's, or the XML's renamed to it: smixml.py)."""
    devices = [{k: v for k, v in _device(n, bus, fields).items() if v is not None} for n, (bus, fields) in enumerate(gpus)]
    for dev, (_, fields) in zip(devices, gpus, strict=True):
        if errors := _unreachable(fields):
            dev.update(lost=True, nvml_errors=errors)
        if errors := _reset_asked(fields):
            dev["nvml_errors"] = {**(dev.get("nvml_errors") or {}), **errors}
    # a block that shows no nvidia-smi field is no GPU (another tool's indented lines pasted above the report)
    return {"torch": None, "driver": known(header.get("kmd version") or header.get("driver version")),
            "cuda_driver": known(header.get("cuda umd version") or header.get("cuda version")),
            "devices": [d for d in devices if d] or None}
