"""DCGM field values: dcgm-exporter's Prometheus lines (`DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{gpu="0",UUID="GPU-..",
pci_bus_id="..",modelName=".."} 12`) and tables or lists that name a field beside its value (`| DCGM_FI_DEV_X | 8 |`,
`DCGM_FI_DEV_X: 8`), into the gpu facts' devices by DCGM's field meanings (dcgmlib/dcgm_fields.h: SBE = single-bit,
corrected; DBE = double-bit, uncorrectable; VOL since the last reset, AGG the lifetime). Only the fields below are
read; a line without a number beside its field is left out, never guessed. The exporter's `# HELP` and `# TYPE`
lines name a field and hold no value; its `DCGM_FI_DRIVER_VERSION` label is the driver. A memory temperature is not
read: the exporter prints 0 for a GDDR card that has no such sensor. `dcgmi dmon`'s short column tags
(`ESVTL` ...) are not read: the public samples found print N/A in those columns (github.com/NVIDIA/DCGM/issues/265).
A line whose field prose mentions (`The alert fires when DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{...} 3 ...`, `If ... is 5`:
verify/explain/said.py) holds no value."""
from __future__ import annotations

import re
from typing import Any

from . import dcgmseries
from .notknown import known
from .said import mentioned, printed

FIELDS: dict[str, tuple[str, ...]] = {
    "DCGM_FI_DEV_GPU_TEMP": ("temperature_c",),
    "DCGM_FI_DEV_POWER_USAGE": ("power_w",),
    "DCGM_FI_DEV_SM_CLOCK": ("sm_clock_mhz",),
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": ("ecc_volatile_correctable",),
    "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": ("ecc_aggregate_correctable",),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": ("ecc_volatile_uncorrectable",),
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": ("ecc_aggregate_uncorrectable",),
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": ("row_remap", "correctable"),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": ("row_remap", "uncorrectable"),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": ("row_remap", "failed"),
    "DCGM_FI_DEV_ROW_REMAP_PENDING": ("row_remap", "pending"),
}
_NAME = re.compile(r"\bDCGM_FI_\w+")
_PROM = re.compile(r"^\s*(DCGM_FI_\w+)\{([^}]*)\}\s+(\S+)")
_LABEL = re.compile(r'(?<!\w)(\w+)="([^"]*)"')
# a count as posters write it: 54,731,746,511 or 9.6e9; a rate (`17,657/s`) is no count (dcgmseries.py reads it)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.]|,\d)(?!\s*(?:errors?\s*)?(?:/\s*|per\s+)"
                     + dcgmseries.UNIT + ")", re.IGNORECASE)
_SUFFIX = re.compile(r"`?(_[A-Z][A-Z_]*)`?")
_DRIVER = re.compile(r"\bDriver(?: Version)?\s*[|:]\s*(\d+\.\d+(?:\.\d+)?)|\bDCGM_FI_DRIVER_VERSION=\"(\d+\.\d+(?:\.\d+)?)\"")
_FLOAT = {"temperature_c", "power_w"}         # figures with a fraction; the others are counts
_COMMENT = re.compile(r"^\s*#\s*(?:HELP|TYPE)\b")     # Prometheus metadata: a field's name, never its value


_FIELD = re.compile("|".join(FIELDS))


def detect(text: str) -> bool:
    return (any(name in text for name in FIELDS) and printed(_FIELD, text) is not None) or dcgmseries.detect(text)


# DCGM's blank values (dcgm_structs.h: DCGM_INT64_BLANK 0x7ffffffffffffff0 and the NOT_FOUND/NOT_SUPPORTED/
# NOT_PERMISSIONED values above it; DCGM_FP64_BLANK 2^47 and above for a float field): dcgm-exporter prints them as
# numbers (9223372036854775794) for a field the GPU does not report. Not a count, and no figure: every value from
# 2^47 up is one of them (no count or figure DCGM reads comes near it).
INT64_BLANK = 0x7FFFFFFFFFFFFFF0
FP64_BLANK = 140737488355328.0


def _number(value: str) -> float | None:
    try:
        number = float(value.replace(",", ""))
    except ValueError:
        return None
    return None if number != number or number >= FP64_BLANK else number


def _set(dev: dict[str, Any], field: str, value: float | None) -> None:
    if value is None or value < 0:
        return
    path = FIELDS[field]
    if len(path) == 1:
        dev[path[0]] = value if path[0] in _FLOAT else int(value)
    else:
        remap = dev.setdefault("row_remap", {"correctable": None, "uncorrectable": None, "pending": None, "failed": None})
        remap[path[1]] = int(value)


def _names(line: str) -> list[str]:
    """The fields a row names: `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` / `_AGG_TOTAL` names two (the suffix replaces as many
    of the first name's last parts as it has)."""
    names = _NAME.findall(line)
    if names:
        after = line[line.index(names[-1]) + len(names[-1]):].split("|")[0]
        for suffix in _SUFFIX.findall(after):
            parts = names[0].split("_")
            names.append("_".join(parts[: len(parts) - suffix.count("_")]) + suffix)
    return names


def parse(text: str) -> dict[str, Any]:
    devices: dict[str, dict[str, Any]] = {}
    driver = None
    for line in text.splitlines():
        if m := _DRIVER.search(line):
            driver = driver or m.group(1) or m.group(2)
        if _COMMENT.match(line) or ((m := _FIELD.search(line)) and mentioned(line, m.start())):
            continue
        if m := _PROM.match(line):
            if m.group(1) not in FIELDS:
                continue
            labels = dict(_LABEL.findall(m.group(2)))
            dev = devices.setdefault(labels.get("gpu", "?"), {
                "index": dcgmseries.number(labels.get("gpu"), "devices[].index"), "uuid": known(labels.get("UUID")),
                "pci_bus_id": known(labels.get("pci_bus_id")), "name": known(labels.get("modelName"))})
            _set(dev, m.group(1), _number(m.group(3)))
            continue
        names = [n for n in _names(line) if n in FIELDS]
        if not names:
            continue
        rest = line[line.index(_NAME.findall(line)[-1]):]
        rest = rest.split("|", 1)[1] if "|" in rest else rest.split(None, 1)[1] if len(rest.split(None, 1)) > 1 else ""
        values = _NUMBER.findall(rest)
        if not values:
            continue                    # a field named without its value (a heading, a list of fields) says nothing
        dev = devices.setdefault("?", {"index": None, "uuid": None, "pci_bus_id": None, "name": None})
        for name, value in zip(names, values, strict=False):     # prose after the value (a rate) is not a field
            _set(dev, name, _number(value))
    # the scrape's other series (its GPUs, their Xids) and the correctable counter's rate: dcgmseries.py
    return dcgmseries.read({"devices": list(devices.values()) or None, "driver": driver, "torch": None}, text)
