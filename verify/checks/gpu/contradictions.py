"""Facts a real machine cannot produce together (the record or the probe is wrong, not the GPU): device indices that
name no device, torch's view against NVML's, one GPU listed twice."""
from __future__ import annotations

from typing import Any

from ...facts import NONE, NvmlDevice
from . import gpuidentity
from .node import Node


def _indices_exist(node: Node) -> list[str]:
    """Per-device results and Xids name devices the node has: `<field> vs <field>`, each contradiction once."""
    why = []
    facts, count = node.facts, node.torch_count
    mig = any(d.get("mig_devices") or (isinstance(d.get("mig"), list) and d["mig"] and d["mig"][0]) for d in node.devices)
    top = count if count is not None else (len(node.devices) if node.devices and not mig else None)   # slices: more
    for key in ("kernels", "perf", "sdc"):
        raw: Any = node.facts.get(key)
        entries: list[Any] = raw if isinstance(raw, list) else []
        for n, entry in enumerate(entries):
            if top is not None and isinstance(entry, dict) and isinstance(entry.get("index"), int) and entry["index"] >= top:
                said = f"torch_devices {count}" if count is not None else f"devices[] ({len(node.devices)} listed)"
                why.append(f"{key}[{n}].index {entry['index']} names a torch device the node does not have ({said})")
                break
    # NVML numbers its devices 0 .. count-1 (nvmlDeviceGetHandleByIndex), and the probe lists every one: in its own
    # record (torch's count read beside NVML's list) an index past the devices listed names none. A capture translated
    # from nvidia-smi may list only the GPUs it is about (device 13 alone, no torch count): nothing to hold it to
    listed = len(node.devices)
    past = next((i for d in node.devices if isinstance(i := d.get("index"), int) and i >= listed), None)
    if count is not None and past is not None:
        why.append(f"devices[].index {past} names no NVML device: NVML numbers the {len(node.devices)} "
                   f"device(s) it lists 0 to {len(node.devices) - 1}")
    indices = {d.get("index") for d in node.devices}
    for n, e in enumerate(facts.get("xid_events") or []):
        if node.devices and isinstance(e, dict) and isinstance(e.get("index"), int) and e["index"] not in indices:
            why.append(f"xid_events[{n}].index {e['index']} names a device devices[] does not list "
                       f"({', '.join(str(i) for i in sorted(indices, key=str))})")
            break
    return why


# NVML's power reading is an average over a second or less: transients past the enforced limit are real (EDPp lets a
# board draw above it for milliseconds), twice the limit is no reading of a working board
POWER_OVER_LIMIT = 2.0


def _power_beyond_limit(devices: list[NvmlDevice]) -> list[str]:
    for n, d in enumerate(devices):
        power, limit = d.get("power_w"), d.get("power_limit_w") or d.get("power_default_limit_w")
        if isinstance(power, (int, float)) and isinstance(limit, (int, float)) and limit > 0 \
                and power > POWER_OVER_LIMIT * limit:
            return [f"devices[{n}].power_w {power:g} W is {power / limit:.1f}x its power limit {limit:g} W: no board "
                    f"draws over {POWER_OVER_LIMIT:g}x the limit NVML enforces"]
    return []


def _link_beyond_max(devices: list[NvmlDevice]) -> list[str]:
    """A PCIe link runs at most at the generation and width the slot and GPU support together (nvidia-smi's Max)
    and the GPU's own (Device Max): a current link past either is no reading; judged, it hid a degraded link."""
    for n, d in enumerate(devices):
        for now, tops in (("pcie_gen", ("pcie_gen_max", "pcie_gen_gpu_max")),
                          ("pcie_width", ("pcie_width_max", "pcie_width_gpu_max"))):
            current = d.get(now)
            for top in tops:
                most = d.get(top)
                if isinstance(current, int) and isinstance(most, int) and not isinstance(current, bool) \
                        and not isinstance(most, bool) and most > 0 and current > most:
                    return [f"devices[{n}].{now} {current} is above its {top} {most}: no link runs past its maximum"]
    return []


# a device NVML read (its UUID or bus id) has a name: the words for none are no name a board reports
NO_NAME = frozenset({"", "none", "null", "unknown", "n/a", "na"})


def _nameless(devices: list[NvmlDevice]) -> list[str]:
    for n, d in enumerate(devices):
        name = d.get("name")
        if isinstance(name, str) and name.strip().lower() in NO_NAME and (d.get("uuid") or d.get("pci_bus_id")):
            return [f"devices[{n}].name is {name!r} beside its uuid or pci_bus_id: a GPU NVML read has a name "
                    "(null when it was not read)"]
    return []


def impossible(node: Node) -> list[str]:
    """Facts a real machine cannot produce together, each naming its two fields: the record (or the probe) is
    wrong, not the GPU, and nothing is judged."""
    why = _indices_exist(node) + _identity_contradictions(node) + _power_beyond_limit(node.devices) \
        + _link_beyond_max(node.devices) + _nameless(node.devices)
    error = node.facts.get("nvml_error")
    # a lost GPU's bus id or UUID is the words of the error that lost it (nvidia-smi's `Unable to determine the device
    # handle for GPU 0000:3B:00.0: GPU is lost`), no reading through NVML: beside another program's refusal in the same
    # paste (the toolkit's `unknown device`), no contradiction (hunt 91)
    read = [d for d in node.devices
            if (d.get("uuid") or d.get("pci_bus_id") or d.get("name")) and d.get("lost") is not True]
    if error not in (None, NONE) and read:
        why.append(f"nvml_error says NVML did not initialise ({str(error)[:60]}), yet devices[] holds {len(read)} "
                   "device(s) read through it")
    return why


def no_gpu_contradicted(node: Node) -> list[str]:
    """A cause of "no GPU visible" the rest of the record contradicts: a CPU build, no device nodes, no NVML library,
    or NVML that initialised and lists no GPU, beside GPUs torch sees, kernels that ran on one, or devices read
    through NVML. Judged before the cause is named: such a record says nothing about which of the two is true."""
    facts, count = node.facts, node.torch_count
    # a lost GPU's bus id or UUID is the words of the error that lost it (nvidia-smi's `Unable to determine the device
    # handle for GPU 0000:3B:00.0: GPU is lost`), no reading through NVML: beside another program's refusal in the same
    # paste (the toolkit's `unknown device`), no contradiction (hunt 91)
    read = [d for d in node.devices
            if (d.get("uuid") or d.get("pci_bus_id") or d.get("name")) and d.get("lost") is not True]
    ran = [k for k in facts.get("kernels") or [] if isinstance(k, dict) and k.get("max_abs_error") is not None]
    gpus = (f"torch sees {count} device(s)" if count else f"{len(ran)} kernel(s) ran on a GPU" if ran else
            "torch says CUDA is available" if facts.get("cuda_available") is True else "")
    why = []
    if facts.get("nvml_library") is False and read:
        why.append(f"nvml_library false (NVML's library not found), yet devices[] holds {len(read)} device(s) read "
                   "through it")
    if facts.get("device_nodes") is False and (read or gpus):
        why.append(f"device_nodes false (no /dev/nvidia*), yet {gpus or f'devices[] holds {len(read)} device(s)'}")
    if facts.get("torch_cuda") == NONE and gpus:
        why.append(f"torch_cuda 'none' (a CPU build of torch), yet {gpus}")
    if facts.get("devices") == [] and facts.get("nvml_error") == NONE and gpus:
        why.append(f"devices [] with nvml_error 'none' (NVML initialised and lists no GPU), yet {gpus}")
    return why


def _identity_contradictions(node: Node) -> list[str]:
    """torch's view against NVML's: counts, hidden devices, one GPU twice, compute capabilities."""
    count, caps = node.torch_count, node.facts.get("capabilities")
    why = []
    if count is not None and caps is not None and node.facts.get("cuda_available") and len(caps) != count:
        why.append(f"{len(caps)} capabilities for {count} torch device(s)")
    named = gpuidentity.visible_count(node.facts.get("cuda_visible_devices"), node.devices)
    if named == 0 and count:
        why.append(f"CUDA_VISIBLE_DEVICES={node.facts.get('cuda_visible_devices')!r} hides every device, yet torch sees {count}")
    why += _one_gpu_twice(node.devices)
    whole = [m.nvml_index for m in node.matches if m.nvml_index is not None and not m.mig_uuid]
    if len(whole) != len(set(whole)):
        why.append("two torch devices map to the same GPU")
    for m in node.matches:
        dev = node.by_index.get(m.nvml_index)
        cc = (caps or [])[m.torch_index:m.torch_index + 1]
        if dev and dev.get("cc") and cc and cc[0] and not m.mig_uuid and cc[0] != dev.get("cc"):
            why.append(f"torch device {m.torch_index} is cc {cc[0]} but NVML says {dev.get('cc')} for device {dev.get('index')}")
    return why


def _one_gpu_twice(devices: list[NvmlDevice]) -> list[str]:
    """Two NVML devices with one UUID (or one PCI bus id) are one GPU listed twice: NVML gives each board its own."""
    why = []
    for field, norm in (("uuid", gpuidentity.norm_uuid), ("pci_bus_id", gpuidentity.norm_bus)):
        first: dict[str, int] = {}
        for n, dev in enumerate(devices):
            value = dev.get(field)
            if not isinstance(value, str) or norm(value) in ("", "n/a", "na", "unknown", "none"):
                continue
            if norm(value) in first:
                why.append(f"devices[{first[norm(value)]}].{field} and devices[{n}].{field} are both {value!r}: one "
                           "GPU listed twice")
                break
            first[norm(value)] = n
    return why
