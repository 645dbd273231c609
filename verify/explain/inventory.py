"""A GPU inventory (`dcgmi discovery -l`, `nvidia-smi -L`, `nvidia-smi topo -m`: names, bus ids, UUIDs, NUMA nodes
and no health field) pasted beside another tool's health read of the same GPUs (`dcgmi nvlink -s` under `dcgmi discovery -l`, as DCGM's own notes show
them: h800-x8-dcgm-3.1.8-dcgmi-discovery-eight-gpus-0-nvswitches-found-...). Each kind is judged on its own, and the
inventory's "no health field read" (HEALTH_NOT_ASSESSED) is not true of the file: the other tool read every GPU it
lists. That warning then ranks as no finding, so the read that judged the GPUs decides; an inventory alone, or one
beside a read of only some of its GPUs, still warns."""
from __future__ import annotations

from typing import Any

from ..checks.gpu.gpuidentity import norm_bus

# where a GPU sits is no health read either: `nvidia-smi topo -m`'s NUMA Affinity column (`numa_node`) lists the GPUs
# as an inventory does (aws-g7e-2x-rtx-pro-6000-...: topo beside the query CSV that read both GPUs' health)
IDENTITY = frozenset({"index", "name", "uuid", "pci_bus_id", "numa_node"})
# the gpu facts' fields an inventory fills without reading any health (the driver it ran on, NVML answering; torch's
# build and its answer that CUDA is there, as an environment report gives them beside its GPU names: batch 127)
_PLAIN = frozenset({"devices", "torch", "nvml_error", "driver", "cuda_driver", "torch_cuda", "cuda_available"})


def inventory(facts: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The devices of facts that list GPUs and read nothing else of them; None for any other facts."""
    devices = facts.get("devices")
    if not isinstance(devices, list) or not devices or not all(isinstance(d, dict) for d in devices):
        return None
    if any(v is not None for k, v in facts.items() if k not in _PLAIN):
        return None
    if any(v is not None for d in devices for k, v in d.items() if k not in IDENTITY):
        return None
    return devices


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """One GPU in both: the same UUID or bus id where both print one, else the same index (DCGM's GPU id and
    nvidia-smi's index both count GPUs in bus order)."""
    if a.get("uuid") and b.get("uuid"):
        return str(a["uuid"]).strip().lower() == str(b["uuid"]).strip().lower()
    if a.get("pci_bus_id") and b.get("pci_bus_id"):
        return norm_bus(str(a["pci_bus_id"])) == norm_bus(str(b["pci_bus_id"]))
    return a.get("index") is not None and a.get("index") == b.get("index")


def covered(listed: list[dict[str, Any]] | None, facts: dict[str, Any]) -> bool:
    """Whether another kind's facts read a health field of every GPU the inventory lists (listed None: a record that
    lists no GPU, `driver_only`: of at least one)."""
    devices = facts.get("devices")
    if not isinstance(devices, list):
        return False
    read = [d for d in devices if isinstance(d, dict) and any(v is not None for k, v in d.items() if k not in IDENTITY)]
    return bool(read) if listed is None else all(any(_same(gpu, d) for d in read) for gpu in listed)


def driver_only(facts: dict[str, Any]) -> bool:
    """Facts that list no GPU and read only what an inventory reads (a table cut by a terminal's wrap keeps its
    header's driver version and loses its rows): the GPUs are there and any health read of them answers it."""
    return facts.get("devices") is None and any(v is not None for v in facts.values()) and all(
        v is None for k, v in facts.items() if k not in _PLAIN)

