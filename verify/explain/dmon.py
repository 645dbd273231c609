"""`nvidia-smi dmon` (device monitoring): a header of column names, `# gpu   pwr gtemp mtemp    sm   mem ...`, a line
of units, `# Idx     W     C     C     % ...`, then one row per GPU per interval, `    0    65    35    34     0 ...`;
`-` where NVML gave no value. Its columns depend on `-s` (nvidia-smi's dmon help: p power and temperatures, u
utilisation, c clocks, v violations, m memory, e ECC, t PCIe): read by name, never by position. Into the gpu facts'
devices by index: the highest power and GPU and memory temperatures its rows show (a hot interval is the one that
counts). Its ECC and violation columns are counts per interval, which facts schema 3 has no field for: not read.
Only where no richer report of the same GPUs (`-q`, the table, `--query-gpu`) is in the text."""
from __future__ import annotations

import re
from typing import Any

from . import smi, smiquery, smitable, smixml

_HEADER = re.compile(r"^\s*#\s*gpu\b((?:\s+[a-z0-9]+)+)\s*$")
_UNITS = re.compile(r"^\s*#\s*Idx\b")
_ROW = re.compile(r"^\s*(\d{1,4})((?:\s+(?:-?\d+(?:\.\d+)?|-|N/A))+)\s*$")
_FIELDS = {"pwr": "power_w", "gtemp": "temperature_c", "mtemp": "memory_temperature_c"}
_RICHER = (smixml, smi, smitable, smiquery)


def _rows(text: str) -> list[tuple[int, dict[str, float]]]:
    """(index, {column: value}) for each row under a dmon header whose cells line up with its columns."""
    rows: list[tuple[int, dict[str, float]]] = []
    names: list[str] | None = None
    for line in text.splitlines():
        if m := _HEADER.match(line):
            names = m.group(1).split()
        elif names is not None and _UNITS.match(line):
            continue
        elif names is not None and (m := _ROW.match(line)):
            cells = m.group(2).split()
            if len(cells) != len(names):
                continue                # a row cut or of another header's shape: not read by a guess
            rows.append((int(m.group(1)), {n: float(c) for n, c in zip(names, cells, strict=True)
                                           if n in _FIELDS and c not in ("-", "N/A")}))
        elif line.strip() and not line.lstrip().startswith("#"):
            names = None                # the table ended: a later number row is someone else's
    return rows


def detect(text: str) -> bool:
    return bool(_rows(text)) and not any(m.detect(text) for m in _RICHER)


def parse(text: str) -> dict[str, Any]:
    devices: dict[int, dict[str, Any]] = {}
    for index, values in _rows(text):
        dev = devices.setdefault(index, {"index": index})
        for name, value in values.items():
            key = _FIELDS[name]
            dev[key] = value if dev.get(key) is None else max(dev[key], value)
    return {"torch": None, "nvml_error": "none" if devices else None,
            "devices": [devices[i] for i in sorted(devices)] or None}
