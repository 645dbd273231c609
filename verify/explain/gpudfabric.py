"""leptonai GPUd's fabric-state check (its fabric-manager component, reading NVML's nvmlDeviceGetGpuFabricInfo per
GPU), as it prints it:
- its reason, per GPU with an issue: `GPU GPU-<uuid>: <issues>` joined by `; `, after `<product> with unhealthy
  fabric state: ` (the component's reason), in a log line's `"reason":"..."` (`fabric state is not healthy`) or after
  its table's `Overall Status: UNHEALTHY - `. The issues (GPUd's `FabricState.GetIssues`, comma-joined, sorted):
  `state=<State>` when the state is not Completed, `status=<NVML error>` when the status is not Success,
  `summary=Unhealthy`, and the health mask's `bandwidth degraded`, `route recovery in progress`, `route unhealthy`,
  `access timeout recovery in progress`. So a GPU whose whole entry is shown and names no `state=` is Completed, and
  one that names no `status=` has status Success (GPUd lists each that is not);
- its table, one per GPU: `| GPU UUID | GPU-... |`, `| Clique ID | 0 |`, `| Cluster UUID | ... |`, `| State | ... |`, `| Status | Success |`,
  `| Health Summary | ... |`, `| Bandwidth | ... |`, `| Route Recovery | ... |`, `| Route Unhealthy | ... |`,
  `| Access Timeout Recovery | ... |`: the same reading with status, clique and health mask. A health field NVML
  answers `Not Supported` is null (FACTS.md).
GPUd calls any state but Completed unhealthy, a PCIe card's `Not Supported` included (its own bug, gpud PR 1147):
that is the monitor's reading, not read; the judge decides from the state. The product name is GPUd's, its spaces
written as dashes (`NVIDIA-H100-PCIe`): read back with spaces. Nothing else of the GPU is read, so its health is
not assessed, never healthy."""
from __future__ import annotations

import re
from typing import Any

_STATES = {"not supported": "not_supported", "not started": "not_started", "in progress": "in_progress",
           "completed": "completed"}
# one GPU's entry, to the next GPU's, the end of GPUd's reason (`; <product> does not support ...`), a quote or the line
_ENTRY = re.compile(r"\bGPU (GPU-[0-9a-fA-F-]{36}): ([^;\"\n]+?)(?=; |\"|\s*$)", re.MULTILINE)
_HEALTH_ISSUES = {"bandwidth degraded": "degraded_bandwidth", "route recovery in progress": "route_recovery",
                  "route unhealthy": "route_unhealthy", "access timeout recovery in progress": "access_timeout_recovery"}
_PRODUCT = re.compile(r"\b(NVIDIA-[\w-]+?) (?:with unhealthy fabric state|checked fabric state)\b")
_LABEL = re.compile(r"[A-Za-z ]+")
_NOT_SUPPORTED = "Not Supported"


def detect(text: str) -> bool:
    return bool(_reasons(text) or _tables(text))


def _fabric(**known: Any) -> dict[str, Any]:
    return {"state": None, "status": None, "clique_id": None, "cluster_uuid": None, "health": None, **known}


def _health(**known: Any) -> dict[str, Any]:
    return {"summary": None, "degraded_bandwidth": None, "route_recovery": None, "route_unhealthy": None,
            "access_timeout_recovery": None, "incorrect_configuration": None, **known}


def _issue(issue: str) -> tuple[str, Any] | None:
    """One of GPUd's issues as (field, value); None for any other text."""
    key, _, value = issue.partition("=")
    if key == "state" and value.lower() in _STATES:
        return "state", _STATES[value.lower()]
    if key == "status" and value:
        return "status", value
    if key == "summary" and value:
        return "summary", value.lower() if value in ("Unhealthy", "Healthy") else None
    field = _HEALTH_ISSUES.get(issue)
    return (field, True) if field else None


def _reasons(text: str) -> dict[str, dict[str, Any]]:
    """Each GPU's fabric from GPUd's reason: an entry is read only where every issue in it is one of GPUd's."""
    fabrics: dict[str, dict[str, Any]] = {}
    for m in _ENTRY.finditer(text):
        issues = [_issue(i.strip()) for i in m.group(2).split(",")]
        if not issues or any(i is None for i in issues):
            continue
        read = dict(i for i in issues if i is not None)
        health = {k: v for k, v in read.items() if k not in ("state", "status")}
        fabrics[m.group(1)] = _fabric(state=read.get("state", "completed"), status=read.get("status", "success"),
                                              health=_health(**health) if health else None)
    return fabrics


def _flag(value: str | None) -> bool | None:
    return {"true": True, "false": False}.get((value or "").lower())


def _tables(text: str) -> list[dict[str, str]]:
    """GPUd's per-GPU tables: the rows under each `| GPU UUID | GPU-... |`, by their label."""
    tables: list[dict[str, str]] = []
    for line in text.splitlines():
        if not (row := _row(line)):
            continue
        label, value = row
        if label == "GPU UUID" and value.startswith("GPU-"):
            tables.append({})
        if tables:
            tables[-1][label] = value
    return [t for t in tables if t.get("State", "").lower() in _STATES]


def _row(line: str) -> tuple[str, str] | None:
    """`| Label | value |` as (label, value); split by hand, as a regex of blanks beside a label that may hold blanks
    backtracks cubically on a long run of them (`|` + 10,000 blanks + `|` hung explain)."""
    s = line.strip()
    if len(s) < 3 or s[0] != "|" or s[-1] != "|":
        return None
    label, sep, value = s[1:-1].partition("|")
    label = label.strip()
    return (label, value.strip()) if sep and _LABEL.fullmatch(label) else None


def _from_table(row: dict[str, str]) -> dict[str, Any]:
    clique, cluster = row.get("Clique ID", ""), row.get("Cluster UUID")
    status = row.get("Status")
    health = _health(**{
        "summary": {"Healthy": "healthy", "Unhealthy": "unhealthy"}.get(row.get("Health Summary", "")),
        "degraded_bandwidth": {"Degraded": True, "Full": False}.get(row.get("Bandwidth", "")),
        "route_recovery": _flag(row.get("Route Recovery")),
        "route_unhealthy": _flag(row.get("Route Unhealthy")),
        "access_timeout_recovery": _flag(row.get("Access Timeout Recovery")),
    }) if any(k in row for k in ("Health Summary", "Bandwidth", "Route Recovery", "Route Unhealthy")) else None
    return _fabric(state=_STATES[row["State"].lower()],
                   status=None if not status or status == _NOT_SUPPORTED else
                   "success" if status.lower() == "success" else status,
                   clique_id=int(clique) if clique.isascii() and clique.isdecimal() and int(clique) < 1 << 32 else None, cluster_uuid=cluster or None, health=health)


def parse(text: str) -> dict[str, Any]:
    """One device per GPU UUID the reason or a table names, as printed; a table's fuller reading of a GPU wins."""
    product = _PRODUCT.search(text)
    name = product.group(1).replace("-", " ") if product else None
    fabrics = _reasons(text)
    for row in _tables(text):
        fabrics[row["GPU UUID"]] = _from_table(row)
    devices = [{"index": None, "uuid": uuid, "name": name, "fabric": fabric} for uuid, fabric in fabrics.items()]
    return {"torch": None, "devices": devices or None}
