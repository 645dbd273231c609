"""What the prolog says (one line on stderr), notes in the node's history, and reads of a report, shared by the gate
(cli.py) and the return to service (revalidate.py)."""
from __future__ import annotations

import math
from typing import Any

from ..shared import gpuunits
from ..shared.closedpipe import say, to_devnull
from . import gpuset, history, kernlog
from .config import Config
from .verdict import whole_count


def _say(text: str) -> None:
    """One line on stderr; a stderr that cannot be written (closed, its reader gone, a full disk) is no reason to
    stop: the drain or resume this line comes before still happens (Slurm's Prolog= reads the exit status)."""
    say(f"torchimages-prolog: {text}")


def _out(text: str) -> None:
    """The verdict's line on stdout, said before the prolog acts on it. A stdout that cannot be written (a wrapper
    that closed it or whose reader left, /dev/full) never skips the drain that follows: a broken node returned to
    service because a print failed. Said once on stderr; stdout then points at /dev/null (nothing flushes into it
    again: the exit's own flush would raise too)."""
    try:
        print(text, flush=True)
    except (OSError, ValueError) as exc:
        to_devnull()
        _say(f"stdout not written ({type(exc).__name__}: {str(exc)[:80]}): {text}")


def _close(cfg: Config, text: str) -> None:
    """The run's verdict as a person or Slurm's log reads it last: said by the gate after every note (cli._gate)."""
    cfg.closing = text


def _note(cfg: Config, event: str, code: str | None, detail: str, extra: dict[str, Any] | None = None,
          now: float | None = None) -> None:
    """One event in the node's history, with the boot it ran in (a hang streak ends at a reboot: history.streak);
    stamped `now` (default the time it is written)."""
    clock = kernlog.host_clock(cfg.proc)      # uptime: where a run stands in its boot whatever the wall clock says
    extra = {"boot_id": clock.boot_id or None, "uptime": _up(clock.uptime), "started_up": _up(cfg.started_up),
             "started": round(cfg.started, 3) if cfg.started is not None else None, **(extra or {})}
    if cfg.job_gpus:              # the run saw these GPUs alone, or unknown ones (a hang streak: gpuset.py)
        extra.setdefault(gpuset.FIELD, gpuset.field(cfg.job_gpus))
    if cfg.setting_problems:      # a setting of ours gone wrong, its default applied: traced on every event of the run
        extra.update(setting_problems=len(cfg.setting_problems), settings="; ".join(cfg.setting_problems))
    if problem := history.record(cfg.state_dir, cfg.node, event, code, detail, now=now, extra=extra):
        _say(problem)


def _up(seconds: float | None) -> float | None:
    return round(seconds, 3) if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _report_gpus(report: dict[str, Any] | None) -> int | None:
    """The GPUs Slurm schedules that the report's gpu check saw, or None. verify writes every metric as a float
    (result.Metric: 8 GPUs are 8.0): a whole, finite, positive nvml_devices is the count of physical GPUs; NaN, 8.5
    or a bool is none. Where its NVML devices (the check's data) show a GPU in MIG mode, Slurm counts MIG devices
    (verify/shared/gpuunits.py): the count is its whole GPUs and MIG devices, None when they cannot be counted (a MIG
    GPU whose devices were not read, a device list that is not the nvml_devices counted)."""
    for c in (report or {}).get("checks") or []:
        if isinstance(c, dict) and c.get("name") == "gpu" and isinstance(c.get("metrics"), dict):
            value = (c["metrics"].get("nvml_devices") or {}).get("value") if \
                isinstance(c["metrics"].get("nvml_devices"), dict) else None
            physical = whole_count(value)
            data: dict[str, Any] = c["data"] if isinstance(c.get("data"), dict) else {}
            devices = data.get("devices")
            if physical is None or not isinstance(devices, list) or not gpuunits.any_mig(devices):
                return physical
            counted = gpuunits.units(devices) if len(devices) == physical else None
            return counted or None
    return None


def proven_gpus(report: dict[str, Any] | None) -> int | None:
    """The GPUs the report proves usable: _report_gpus, or torch's count where it is smaller on a node in no MIG mode.
    Asked --expect-gpus N, verify's gpu check fails when torch sees fewer than N (GPU_NOT_VISIBLE): a pass counting
    torch_devices 4 beside NVML's 8, where Slurm gave 8, is no report verify writes, and 4 GPUs never ran a kernel.
    (A MIG GPU may show torch one device of it: there NVML's MIG devices are the count.)"""
    seen = _report_gpus(report)
    if seen is None or report_mig(report):
        return seen
    for c in (report or {}).get("checks") or []:
        if isinstance(c, dict) and c.get("name") == "gpu" and isinstance(c.get("metrics"), dict) and \
                isinstance(c["metrics"].get("torch_devices"), dict):
            torch = whole_count(c["metrics"]["torch_devices"].get("value"))
            return seen if torch is None else min(seen, torch)
    return seen


def report_mig(report: dict[str, Any] | None) -> bool:
    """The report's gpu check lists a GPU in MIG mode."""
    for c in (report or {}).get("checks") or []:
        if isinstance(c, dict) and c.get("name") == "gpu" and isinstance(c.get("data"), dict):
            devices = c["data"].get("devices")
            return isinstance(devices, list) and gpuunits.any_mig(devices)
    return False
