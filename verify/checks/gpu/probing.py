"""The gpu check's probe: NVML (gpuprobe.py), then torch's view, kernels, figures and the canary per device; the facts
are described in verify/FACTS.md."""
from __future__ import annotations

import glob
import os
from typing import Any

from ...facts import NONE, UNSET
from ...options import Options
from . import gpuidentity, gpuprobe
from .node import DRIVER_MIN_ENV


def probe(options: Options) -> dict[str, Any]:
    import warnings

    import torch

    facts: dict[str, Any] = {
        "torch": torch.__version__, "torch_cuda": torch.version.cuda or NONE,
        "driver_min_env": os.environ.get(DRIVER_MIN_ENV), "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", UNSET),
        "device_nodes": bool(glob.glob("/dev/nvidia[0-9]*")), "nvml_library": gpuprobe.nvml_library_present(),
        "nvml_error": NONE, "driver": None, "cuda_driver": None, "devices": [],
        "cuda_available": False, "cuda_init_error": None, "torch_devices": 0, "arch_list": [], "capabilities": [],
        "torch_map": [], "kernels": [], "perf": [] if options.gpu_perf else None,
        "sdc": [] if options.gpu_perf or options.gpu_canary else None, "xid_events": None,
    }
    nvml = gpuprobe.probe_nvml(facts)
    xid = gpuprobe.XidWatch(nvml, len(facts["devices"])) if nvml is not None else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available = torch.cuda.is_available()
    facts["cuda_available"] = available
    if available:
        facts["cuda_init_error"] = NONE
    elif torch.version.cuda and facts["devices"]:
        try:
            torch.cuda.init()
            facts["cuda_init_error"] = str(caught[-1].message) if caught else NONE
        except Exception as exc:  # noqa: BLE001 - the driver's refusal is the fact
            facts["cuda_init_error"] = f"{type(exc).__name__}: {exc}"
    if available:
        _probe_torch(torch, facts, options, nvml)
    if nvml is not None:
        for dev in facts["devices"]:
            gpuprobe.finish_device(nvml, dev)
        facts["xid_events"] = xid.drain() if xid else None
        try:
            nvml.nvmlShutdown()
        except Exception as exc:  # noqa: BLE001 - a shutdown error changes no fact
            facts["nvml_shutdown_error"] = str(exc)
    return facts


def _probe_torch(torch: Any, facts: dict[str, Any], options: Options, nvml: Any) -> None:
    count = torch.cuda.device_count()
    facts["torch_devices"] = count
    facts["arch_list"] = torch.cuda.get_arch_list()
    facts["capabilities"] = [".".join(map(str, torch.cuda.get_device_capability(i))) for i in range(count)]
    facts["torch_map"] = gpuprobe.torch_identity(torch, count)
    matches = gpuidentity.match(facts["torch_map"], count, facts["devices"], facts["cuda_visible_devices"])
    for m, entry in zip(matches, facts["torch_map"], strict=True):
        entry.update(nvml_index=m.nvml_index, matched_by=m.matched_by)
    numa = {d["index"]: d.get("numa_node") for d in facts["devices"]}
    for m in matches:
        i = m.torch_index
        try:
            facts["kernels"].append(gpuprobe.kernel(torch, i))
            if options.gpu_perf or options.gpu_canary:
                facts["sdc"].append(gpuprobe.canary(torch, i, options.sdc_repeats))
            if options.gpu_perf:
                facts["perf"].append(gpuprobe.perf(torch, i, options, nvml, m.nvml_index, numa.get(m.nvml_index)))
        except Exception as exc:  # noqa: BLE001 - the failing kernel is the finding
            facts["kernels"] = [k for k in facts["kernels"] if k["index"] != i]
            facts["kernels"].append({"index": i, "max_abs_error": None, "error": f"{type(exc).__name__}: {exc}"})
