"""A passing or warning check whose own data shows a failure verify fails it for: a report no verify writes.

verify's Findings.apply fails a check on any finding of severity fail, and its gpu check's memory rule
(verify/shared/gpumemory.memory: volatile uncorrectable ECC errors, retired pages or a row remap pending, a failed
row remap, an NVML recovery action) fails it on what each NVML device records. A pass beside such a finding or such a
device (a GPU with uncorrectable ECC errors "passing": a forged or corrupt report, a `--python` that is no verify)
hid a host fault. Read by verify's own rule, never a copy: refused as a report no verify writes (not assessed, never a
pass and never a drain); the host side holds the same rule (scripts/fleet/plausible.py).
"""
from __future__ import annotations

from typing import Any

from ..findings import Findings
from ..result import FAIL
from ..shared import gpumemory


def _said(value: Any, most: int = 40) -> str:
    return " ".join(str(value).split())[:most]


def hidden_failure(c: dict[str, Any]) -> str | None:
    """Why a check that passes or warns cannot, by its own data, or None."""
    if c.get("status") not in ("pass", "warn"):
        return None
    does = "passes" if c["status"] == "pass" else "warns"
    data: dict[str, Any] = c["data"] if isinstance(c.get("data"), dict) else {}
    findings = data.get("findings")
    for f in findings if isinstance(findings, list) else []:
        if isinstance(f, dict) and f.get("severity") == FAIL:
            return (f"its {_said(c.get('name'))} check {does} while its own findings list a failure "
                    f"({_said(f.get('code'))}): verify fails a check on any")
    if c.get("name") != "gpu":
        return None
    devices = data.get("devices")
    for dev in devices if isinstance(devices, list) else []:
        if not isinstance(dev, dict):
            continue
        found = Findings()
        try:
            if dev.get("row_remap") is not None and not isinstance(dev["row_remap"], dict):
                raise TypeError("row_remap")      # 0 or [] read as "none": the host side refuses it (plausible.py)
            gpumemory.memory(dev, found)        # type: ignore[arg-type]  # a device as the report holds it
        except (TypeError, ValueError, AttributeError):
            return (f"its gpu check {does} with NVML device {_said(dev.get('index'), 8)} holding memory-error fields "
                    "verify never writes")
        if fail := next((x for x in found.items if x.severity == FAIL), None):
            return (f"its gpu check {does} with NVML device {_said(dev.get('index'), 8)} showing {fail.code} "
                    f"({_said(fail.text, 100)}): verify fails it")
    return None
