"""The kernel's `NVRM: API mismatch` in a paste that also shows NVML answering (hunt79): nvidia-smi listing GPUs is a
client of this host's driver user space that the kernel let through, so the refused client was another release's (a
container image that bundles its own driver libraries, or lines from before the module was reloaded): no fault of
the host's driver install to drain for. The kernel log's reading then warns instead (verify/checks/gpu/driverlog.py
does the same where the facts list NVML's devices). Pure."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..checks.gpu.driverlog import answering
from ..result import WARN
from ..shared.xidcatalog import API_MISMATCH

Parse = Callable[[str], dict[str, Any]]


def nvml_answered(kinds: Sequence[tuple[str, Parse, str]], kernel_parse: Parse, text: str) -> bool:
    """Whether a gpu kind of the paste other than the kernel log lists GPUs that answer, where the text holds an API
    mismatch at all (each kind given as (check, parse, its view of the text))."""
    if "API mismatch" not in text:
        return False
    return any(check == "gpu" and parse is not kernel_parse and answering(parse(view).get("devices") or [])
               for check, parse, view in kinds)


def set_aside(facts: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The kernel log's facts without its API mismatch entries, and those entries."""
    events = facts.get("driver_errors")
    if not isinstance(events, list):
        return facts, []
    mismatch = [e for e in events if isinstance(e, dict) and e.get("status") == API_MISMATCH]
    if not mismatch:
        return facts, []
    return {**facts, "driver_errors": [e for e in events if e not in mismatch]}, mismatch


def said(result: Any, mismatch: list[dict[str, Any]]) -> None:
    """The mismatch set aside, said beside the kernel log's verdict: a warning where that verdict found nothing
    worse."""
    line = str(mismatch[0].get("text") or "")[:200]
    why = (f"the kernel refused a client of another NVIDIA driver release (`{line}`), while nvidia-smi in the same "
           "text reaches the GPUs through this host's: the refused client brought its own driver libraries (a "
           "container image that bundles libcuda / libnvidia-ml), or the lines predate a reload of the module")
    if result.status in ("pass", "skip"):
        result.verdict(WARN, "DRIVER_ERROR", why, "Find the client the line names (`the client '<name>' (pid N)`): an "
                       "image must take the host's driver libraries from the container runtime, never bundle its own.",
                       "host")
    else:
        result.details.append(why)
