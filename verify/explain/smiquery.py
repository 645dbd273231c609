"""`nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`: the fields a cluster's health script asks
for, one row per GPU. The columns are named by the CSV header (`index, name, temperature.gpu, ecc.errors.
uncorrected.volatile.total [...]`, units in brackets) or, with `noheader`, by the `--query-gpu=` list of the command
line quoted above the rows. Each field nvidia-smi documents (`nvidia-smi --help-query-gpu`) that the facts hold is
read into the device; `[N/A]`, `[Not Supported]` are null (not known), never a value. A row whose width is not the
fields' is not read. A header or a `--query-gpu=` list is nvidia-smi's only where each name in it is a field
nvidia-smi documents (smifields.txt): a benchmark's CSV (`model,batch,throughput,power.draw`) is not."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..checks.gpu.gpuprobe import RECOVERY_ACTIONS
from .notknown import known

_COMMAND = re.compile(r"--query-gpu[= ]([\w.,]+)")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?")
_NOTE = re.compile(r"(?<!\s)\s+(?:<=|<-|<--|#)\s.*$")
# nvidia-smi prints NVML's recovery actions with blanks (`Drain P2P`, `Drain and Reset`): the probe's own names
_RECOVERY = {name.replace("_", " "): name for name in RECOVERY_ACTIONS.values()}


def _num(value: str) -> float | None:
    m = _NUMBER.match(value)
    return float(m.group(0)) if m else None


def _int(value: str) -> int | None:
    n = _num(value)
    return int(n) if n is not None and n == int(n) else None


def _yes(value: str) -> bool | None:
    v = value.strip().lower()
    return True if v in ("yes", "enabled", "1") else False if v in ("no", "disabled", "0") else None


def _mask(value: str) -> int | None:
    try:
        return int(value, 16) if value.lower().startswith("0x") else None
    except ValueError:
        return None


def recovery(value: str) -> str | None:
    """NVML's recovery action by nvidia-smi's word for it (`Reset`, `Drain and Reset`); a word it does not know is
    `unknown` (FACTS.md), never guessed."""
    return _RECOVERY.get(value.strip().lower(), "unknown")


# nvidia-smi's words for the compute mode: the CSV query's and -q's (`Exclusive_Process`), the table's `Compute M.`
# (`E. Process`)
COMPUTE_MODES = {"default": "default", "exclusive_process": "exclusive_process", "e. process": "exclusive_process",
                 "exclusive_thread": "exclusive_thread", "e. thread": "exclusive_thread", "prohibited": "prohibited"}


def compute_mode(value: str) -> str | None:
    return COMPUTE_MODES.get(value.strip().lower())


def _mib(value: str) -> int | None:
    n = _int(value)
    return n << 20 if n is not None else None


# query field (nvidia-smi --help-query-gpu) -> (facts field, reader)
FIELDS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "index": ("index", _int), "name": ("name", str), "uuid": ("uuid", str), "pci.bus_id": ("pci_bus_id", str),
    "driver_version": ("driver", str), "memory.total": ("memory_bytes", _mib),
    "persistence_mode": ("persistence", _yes), "compute_mode": ("compute_mode", compute_mode), "temperature.gpu": ("temperature_c", _num),
    "temperature.memory": ("memory_temperature_c", _num),
    "ecc.errors.uncorrected.volatile.total": ("ecc_volatile_uncorrectable", _int),
    "ecc.errors.uncorrected.aggregate.total": ("ecc_aggregate_uncorrectable", _int),
    "ecc.errors.corrected.volatile.total": ("ecc_volatile_correctable", _int),
    "ecc.errors.corrected.aggregate.total": ("ecc_aggregate_correctable", _int),
    "retired_pages.pending": ("retired_pages_pending", _yes),
    "remapped_rows.correctable": ("row_remap.correctable", _int),
    "remapped_rows.uncorrectable": ("row_remap.uncorrectable", _int),
    "remapped_rows.pending": ("row_remap.pending", lambda v: None if _yes(v) is None else int(bool(_yes(v)))),
    "remapped_rows.failure": ("row_remap.failed", lambda v: None if _yes(v) is None else int(bool(_yes(v)))),
    "gpu_recovery_action": ("recovery_action", recovery),
    "pcie.link.gen.current": ("pcie_gen", _int), "pcie.link.gen.gpucurrent": ("pcie_gen", _int),
    "pcie.link.gen.max": ("pcie_gen_max", _int), "pcie.link.gen.gpumax": ("pcie_gen_gpu_max", _int),
    "pcie.link.width.current": ("pcie_width", _int), "pcie.link.width.max": ("pcie_width_max", _int),
    "clocks_throttle_reasons.active": ("throttle_reasons", _mask), "clocks_event_reasons.active": ("throttle_reasons", _mask),
    "power.draw": ("power_w", _num), "power.limit": ("power_limit_w", _num),
    "enforced.power.limit": ("power_limit_w", _num), "power.default_limit": ("power_default_limit_w", _num),
    "clocks.sm": ("sm_clock_mhz", _int),
    "clocks.max.sm": ("sm_clock_max_mhz", _int),
}
# every field name `nvidia-smi --help-query-gpu` documents (data, with its source on the first line), read once
DOCUMENTED = frozenset(line.strip().lower() for line in
                       Path(__file__).with_name("smifields.txt").read_text(encoding="utf-8").splitlines()[1:]
                       if line.strip())
# names any CSV may have: a header of these alone is not nvidia-smi's
_GENERIC = {"index", "name", "uuid", "driver_version", "memory.total"}
_ALIASES = {"clocks.current.sm": "clocks.sm", "power.draw.instant": "power.draw"}


def _header(line: str) -> list[str] | None:
    """A CSV header's query fields (`temperature.gpu`, `memory.total [MiB]`), where it names any the facts hold."""
    names = [re.sub(r"(?<!\s)\s*\[[^\[\]]*\]\s*$", "", c.strip()).lower() for c in line.split(",")]
    if len(names) < 2 or not all(n in DOCUMENTED for n in names):
        return None
    names = [_ALIASES.get(n, n) for n in names]
    return names if any(n in FIELDS and n not in _GENERIC for n in names) else None


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """(fields, rows) per table: a header's, or a quoted command's `--query-gpu=` list for the rows after it."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    fields: list[str] | None = None
    for line in text.splitlines():
        line = _NOTE.sub("", line)      # a poster's note after a row (`1, Reset   <= reset required`)
        if m := _COMMAND.search(line):
            asked = [f for f in m.group(1).lower().split(",") if f]
            # a list naming what nvidia-smi does not document is another tool's (its rows are not read as these)
            fields = [_ALIASES.get(f, f) for f in asked] if all(f in DOCUMENTED for f in asked) else None
            if fields:
                tables.append((fields, []))
        elif head := _header(line):
            fields = head
            tables.append((fields, []))
        elif fields and len(fields) > 1 and len(cells := [c.strip() for c in line.split(",")]) == len(fields):
            tables[-1][1].append(cells)
        elif line.strip() and fields and not tables[-1][1]:
            continue                    # a line between the command and its rows (a prompt's echo): wait
        elif line.strip():
            fields = None               # the table ended
    return [(f, rows) for f, rows in tables if rows]


def detect(text: str) -> bool:
    return any(any(f in FIELDS for f in fields) for fields, _ in _tables(text))


def _device(fields: list[str], cells: list[str]) -> dict[str, Any]:
    dev: dict[str, Any] = {}
    for name, cell in zip(fields, cells, strict=True):
        if name not in FIELDS or (value := known(cell.strip())) is None:
            continue
        key, read = FIELDS[name]
        got = read(value.strip())
        if got is None:
            continue
        if key.startswith("row_remap."):
            dev.setdefault("row_remap", {"correctable": None, "uncorrectable": None, "pending": None, "failed": None})
            dev["row_remap"][key.split(".", 1)[1]] = got
        else:
            dev[key] = got
    if "throttle_reasons" in dev:
        dev["throttle_reasons_read"] = 0x1FF            # the active mask is NVML's, every bit read
    return dev


# the columns that name a GPU: a table with none of them names no GPU of its own
_IDENTITY = {"index", "uuid", "pci.bus_id"}


def parse(text: str) -> dict[str, Any]:
    """A script's successive queries of one host (`--query-gpu=name,pci.bus_id,uuid`, then `--query-gpu=memory.total,
    pcie.link.gen.current`, each `noheader`, runpod-gpu-benchmark's pod-test.sh): nvidia-smi lists the GPUs in one
    order every time, so a table naming no GPU (no index, UUID or bus id) with as many rows as the table before it
    holds the same GPUs' further readings, row by row, the later reading standing. Any other table is its own GPUs."""
    groups: list[list[dict[str, Any]]] = []
    for fields, rows in _tables(text):
        read = [_device(fields, cells) for cells in rows]
        if groups and not _IDENTITY & set(fields) and len(groups[-1]) == len(read):
            for dev, more in zip(groups[-1], read, strict=True):
                dev.update(more)
        else:
            groups.append(read)
    devices = [dev for group in groups for dev in group]
    driver = next((d.pop("driver") for d in devices if "driver" in d), None)
    for d in devices:
        d.pop("driver", None)
    return {"torch": None, "driver": driver, "devices": [d for d in devices if d] or None}
