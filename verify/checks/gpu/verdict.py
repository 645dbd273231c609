"""The gpu check's judge: the driver, the devices, their health (NVML), whether this torch build can run on them, and
how fast. probing.py reads and measures; judge() is pure and decides from those facts alone, so every rule is tested
from recorded, translated (tests/data/real-world) or hand-made facts. The facts are described in verify/FACTS.md
(schema 3); a null field is "unknown", never "good": what decides a verdict and is unknown is named as not assessed,
and a device with no health field read warns (HEALTH_NOT_ASSESSED)."""
from __future__ import annotations

from typing import Any

from ...facts import NONE, UNSET, GpuFacts, NvmlDevice
from ...findings import Findings
from ...options import Options
from ...result import FAIL, PASS, SKIP, WARN, CheckResult
from ...shared import gpumemory, gpuunits
from ...shared.cuda_errors import decode
from ...shared.gpumemory import where
from . import aer, driverlog, fabricmanager, gpuarch, gpuhealth, gpuidentity, inforom, linkpeers, refusals, unanswering, undecoded
from .contradictions import impossible, no_gpu_contradicted
from .kernelxid import xid_tells_the_kernel_fault
from .node import DRIVER_MIN_ENV, Node, driver_floor, refusal, toolkit_symptom, version_tuple, why_no_gpu
from .perf import host_copy_low, judge_perf, judge_sdc
from .present import bears_on_a_fault, driver_read, no_gpu_shown, program_saw_a_gpu, without_the_run
from .programerrors import judge_errors
from .refusals import busy, hides_every_device, torch_misses_cuda
from .resetrequired import required as reset_required
from .resetrequired import said as reset_said

RECORD = "Record the check on the machine (`python -m verify --save-facts DIR`)."
KERNEL_TOLERANCE = 1e-1       # a 256^2 fp32 matmul (TF32 allowed) against float64: real errors are ~1e-5..1e-2


def _driver(node: Node, result: CheckResult, found: Findings) -> None:
    facts = node.facts
    driver, cuda_driver, torch_cuda = facts.get("driver"), facts.get("cuda_driver"), facts.get("torch_cuda")
    floor = driver_floor(facts)
    if floor and driver and version_tuple(driver) < version_tuple(floor):
        found.add(FAIL, "DRIVER_TOO_OLD", f"driver {driver} is too old for CUDA {torch_cuda} (needs >= {floor}"
                  f"{', from ' + DRIVER_MIN_ENV if facts.get('driver_min_env') else ''})",
                  "Update the host driver, or pick an image built for an older CUDA.", "host")
    elif cuda_driver and torch_cuda and version_tuple(cuda_driver) < version_tuple(torch_cuda):
        found.add(WARN, "DRIVER_TOO_OLD", f"driver supports CUDA {cuda_driver} < {torch_cuda}: running under "
                  "minor-version compatibility (no PTX JIT)",
                  "Update the driver to one that supports this CUDA version natively.", "host")


def _refused(node: Node, result: CheckResult, found: Findings) -> None:
    """CUDA did not initialise: its decoded refusal, the GPUs' compute mode, or (not decoded) whose it likely is."""
    facts = node.facts
    error = facts.get("cuda_init_error") if facts.get("cuda_init_error") != NONE else None
    decoded = refusal(facts, error)
    behind = " (this node's GPUs sit behind NVSwitches)" if any(d.get("nvswitch") for d in node.devices) else ""
    if any(d.get("lost") for d in node.devices):
        result.details.append(f"CUDA does not initialise: {error or 'no error text'} (a lost GPU blocks it)")
    elif decoded:
        found.add(FAIL, decoded.code, f"{decoded.said}: {decoded.cause_in(error)}{behind}", decoded.fix, decoded.owner)
    elif node.devices and hides_every_device(visible := facts.get("cuda_visible_devices")):
        # the process's own setting (a job's `export CUDA_VISIBLE_DEVICES=` before its first step): a healthy node
        # was drained for it. Where Slurm allocated GPUs its own value is Slurm's, and the prolog holds it the host's
        found.add(FAIL, "GPU_NOT_VISIBLE", f"CUDA does not initialise: {error or 'no error text'}: "
                  f"CUDA_VISIBLE_DEVICES={visible!r} names no device, while NVML lists {len(node.devices)}",
                  "Leave CUDA_VISIBLE_DEVICES to the launcher (Slurm's --gres, docker's --gpus), or set it to indices "
                  "or GPU-<uuid>s of this node.", "job")
    elif held := busy(node.devices, error):
        found.add(FAIL, "GPU_NOT_VISIBLE", f"CUDA does not initialise: {error or 'no error text'}: {held[1]}",
                  held[2], held[0])
    elif not node.devices:
        found.add(WARN, "GPU_NOT_VISIBLE", f"CUDA does not initialise: {error or 'no error text'} (the cause is not "
                  "one this verify decodes, and NVML's devices were not recorded)", "Check `nvidia-smi` and "
                  "`dmesg` on the host; read the error.", "host")
    else:
        found.add(FAIL, "GPU_NOT_VISIBLE", "torch.cuda.is_available() is False although NVML sees devices"
                  + (f": {error}" if error else ""),
                  "Check that the driver supports this CUDA build and that no other process holds the GPUs "
                  "in exclusive mode.", "host")


def _visibility(node: Node, result: CheckResult, found: Findings, options: Options) -> None:
    facts, count = node.facts, node.torch_count
    refused = facts.get("cuda_init_error") not in (None, NONE) and not facts.get("cuda_available")
    if torch_misses_cuda(facts):
        why, fix = refusals.torch_miscount(facts)
        found.add(FAIL, "GPU_NOT_VISIBLE", why, fix, "image")
    elif facts.get("cuda_available") is False or refused:
        _refused(node, result, found)
    elif count is not None and facts.get("devices") is not None:       # NVML's list unknown: nothing to compare
        result.metric("torch_devices", count, "count")
        mig_slices = sum(len(d.get("mig_devices") or []) for d in node.devices)
        visible = facts.get("cuda_visible_devices")
        named = gpuidentity.visible_count(visible, node.devices)
        if visible in (None, UNSET) and count != len(node.devices) and not (mig_slices and count <= mig_slices):
            unknown = " (CUDA_VISIBLE_DEVICES not recorded: it may hide them on purpose)" if visible is None else ""
            found.add(WARN if visible is None else FAIL, "DEVICE_COUNT_MISMATCH", f"torch sees {count} device(s), "
                      f"NVML {len(node.devices)}{unknown}", "Check CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES and the "
                      "device request.", "job")
        elif visible is None or visible == UNSET:
            pass
        elif count == 0:
            found.add(FAIL, "DEVICE_COUNT_MISMATCH", f"torch sees no device under CUDA_VISIBLE_DEVICES={visible} "
                      f"while NVML lists {len(node.devices)}", "Fix CUDA_VISIBLE_DEVICES: it names no device of "
                      "this node (indices, GPU-<uuid> or MIG-<uuid>).", "job")
        elif named is not None and count != named:
            found.add(WARN, "DEVICE_COUNT_MISMATCH", f"torch sees {count} device(s), CUDA_VISIBLE_DEVICES={visible} "
                      f"names {named} of this node's {len(node.devices)}", "Check CUDA_VISIBLE_DEVICES / "
                      "NVIDIA_VISIBLE_DEVICES and the device request.", "job")
        elif count != len(node.devices):
            result.details.append(f"torch sees {count} of {len(node.devices)} device(s): CUDA_VISIBLE_DEVICES={visible}")
    if count is None and facts.get("devices") is None:
        return                          # neither torch's count nor NVML's list recorded: nothing to count
    usable = count if count is not None else sum(1 for d in node.devices if not d.get("lost"))
    if options.expect_gpus and gpuunits.any_mig(node.devices):
        # Slurm's count on a MIG node is of MIG devices, and a CUDA process may enumerate only one of them (NVIDIA's
        # MIG user guide): NVML's list proves them, torch's count does not
        mig = gpuunits.units(node.devices, skip_lost=True)
        if mig is None:
            found.add(WARN, "GPU_NOT_VISIBLE", f"expected {options.expect_gpus} GPU(s) on a node in MIG mode, and "
                      "NVML's MIG devices were not read: they cannot be counted", "Read `nvidia-smi -L` on the host.",
                      "host")
            return
        usable = max(usable, mig)
    if options.expect_gpus and usable < options.expect_gpus:
        seen = f"torch sees {count}" if count is not None else f"NVML lists {usable} usable (torch's count not recorded)"
        found.add(FAIL, "GPU_NOT_VISIBLE", f"expected {options.expect_gpus} GPU(s), {seen}",
                  "Request the GPUs in the job (`--gpus all`, nvidia.com/gpu, --gres=gpu:N) or lower --expect-gpus.",
                  "job")


def _arch(node: Node, result: CheckResult, found: Findings) -> set[int]:
    """Each torch device's capability against the build by CUDA's rules; torch indices no code can run on."""
    if node.facts.get("arch_list") is None:
        return set()                    # not recorded: not judged
    arch_list = [a for a in node.facts.get("arch_list") or [] if isinstance(a, str)]
    if node.facts.get("cuda_available"):
        result.details.append(f"torch arch list: {' '.join(arch_list) or '(empty)'}")
    none: set[int] = set()
    for i, cc in enumerate(node.facts.get("capabilities") or []):
        capability = gpuarch.parse_capability(cc)
        if capability is None:
            continue
        sm = f"sm_{capability[0]}{capability[1]}"
        fit = gpuarch.fit(capability, arch_list)
        if fit.how == "sass":
            if fit.arch != sm:
                result.details.append(f"{node.label(i)} is {sm}: runs {fit.arch} SASS (same major, binary compatible)")
        elif fit.how == "ptx":
            found.add(WARN, "ARCH_PTX_JIT", f"{node.label(i)} is {sm}: no SASS in this build runs on it, only "
                      f"{fit.arch} PTX, JIT-compiled by the driver on first use (minutes of start-up per process "
                      "until ~/.nv/ComputeCache is warm)", f"Use a torch build with SASS for {sm} (another image "
                      "tag), or keep CUDA_CACHE_PATH on a persistent volume.", "image", (node.nvml_of(i) or {}).get("index"))
        else:
            none.add(i)
            found.add(FAIL, "ARCH_NOT_IN_BUILD", f"{node.label(i)} is {sm}: no code in this build runs on it "
                      f"({' '.join(arch_list)})", f"Use a torch build that includes {sm} SASS or older PTX (another "
                      "image tag).", "image", (node.nvml_of(i) or {}).get("index"))
    return none


def _kernels(node: Node, result: CheckResult, found: Findings, skip: set[int]) -> int | None:
    """Kernel results per torch device (torch's count unknown: those named); the number correct, None if not run."""
    kernels = node.facts.get("kernels")
    if kernels is None:
        return None
    if node.facts.get("cuda_available") is False or node.torch_count == 0:
        if kernels:
            found.add(FAIL, "MEASUREMENT_INVALID", f"{len(kernels)} kernel result(s) recorded although torch sees no "
                      "device: the facts contradict each other", "Record the check again.", "host")
        return None
    seen = {k.get("index"): k for k in kernels if isinstance(k, dict)}
    indices = range(node.torch_count) if node.torch_count is not None else sorted(i for i in seen if isinstance(i, int))
    if not indices:
        return None
    good = 0
    for i in indices:
        k = seen.get(i)
        dev = node.nvml_of(i) or {}
        if i in skip or dev.get("lost"):
            continue
        if k is None:
            found.add(FAIL, "MEASUREMENT_INVALID", f"{node.label(i)}: no kernel result (the probe verified "
                      f"{len(seen)} of {len(indices)} device(s))", "Rerun the check; a device that returns nothing is "
                      "broken or hung: drain and run `dcgmi diag -r 3`.", "host", dev.get("index"))
        elif k.get("error"):
            decoded = decode(k["error"])
            found.add(FAIL, decoded.code if decoded else "KERNEL_FAILED", f"{node.label(i)}: a kernel failed: "
                      f"{decoded.cause_in(k['error']) if decoded else k['error']}", decoded.fix if decoded else
                      "Drain the node and run `dcgmi diag -r 3`; check dmesg for Xid errors.",
                      decoded.owner if decoded else "host", dev.get("index"))
        elif (error := k.get("max_abs_error")) is None:    # ran, its figure unknown (DCGM's diag): not assessed
            continue
        else:
            result.metric(f"matmul_max_abs_error_dev{i}", error, "abs")
            if error > KERNEL_TOLERANCE:
                found.add(FAIL, "KERNEL_FAILED", f"{node.label(i)}: a 256x256 matmul is wrong (max error "
                          f"{error:.3g})", "Drain the node and run `dcgmi diag -r 3`.", "host", dev.get("index"))
            else:
                good += 1
    return good


def _health(node: Node, found: Findings) -> None:
    load_masks: dict[Any, list[Any]] = {}
    load_pcie: dict[Any, Any] = {}
    load_links: dict[Any, list[Any]] = {}
    for p in node.facts.get("perf") or []:
        if not isinstance(p, dict):
            continue
        dev = node.nvml_of(p.get("index"))
        if dev is None or node.mig_of(p.get("index")):
            continue
        masks = [p.get("throttle_under_load")]
        under = p.get("pcie_under_load") if isinstance(p.get("pcie_under_load"), dict) else None
        if under:
            masks.append(under.get("throttle_reasons"))
            load_pcie[dev.get("index")] = under
        load_masks[dev.get("index")] = [m for m in masks if m is not None]
        if isinstance(p.get("nvlink_under_load"), list):
            load_links[dev.get("index")] = [p["nvlink_under_load"]]
    peers_have_links = gpuhealth.any_link_active(node.devices)
    down = linkpeers.partly_down(node.devices, lambda d: bool((m := node.table.model(d.get("name"))) and m.nvlink))
    braked = [d for d in node.devices if gpuhealth.throttle_names(d.get("throttle_reasons")) & gpuhealth.THROTTLE_FAIL]
    for dev in node.devices:
        if reset_required(dev, found, where(dev)) or gpuhealth.lost(dev, found) or unanswering.lost(dev, found):
            continue
        gpumemory.memory(dev, found)
        gpuhealth.cooling_unread(dev, found)
        inforom.corrupted(dev, found, where(dev))
        gpuhealth.correctable(dev, found)
        gpuhealth.fabric(dev, found)
        i = dev.get("index")
        corroborated = bool(found.on(i, "BANDWIDTH_LOW", "COMPUTE_LOW")) or (len(braked) >= 2 and dev in braked)
        model = node.table.model(dev.get("name"))
        gpuhealth.throttle(dev, load_masks.get(i, []), found, corroborated,
                           model.constant("sm_clock_max_mhz") if model else None)
        samples = list(dev.get("samples") or []) + [{"nvlink": links} for links in load_links.get(i, [])]
        gpuhealth.nvlink({**dev, "samples": samples}, bool(model and model.nvlink) or peers_have_links, found,
                         bridged=bool(model and not model.nvlink), peers=len(down) if i in down else 0)
        gpuhealth.pcie(dev, [load_pcie[i]] if i in load_pcie else [], found, host_copy_low(node, dev),
                       (model.constant("pcie_gen"), model.constant("pcie_width")) if model else (None, None))
    kernel_log(node.facts, node.devices, found)


def kernel_log(facts: GpuFacts, devices: list[NvmlDevice], found: Findings) -> None:
    """The node-wide kernel-log facts, judged by the one catalog: Xids (matched to `devices` where NVML listed
    them), NVSwitch SXids and the driver's status lines."""
    gpuhealth.xids([e for e in facts.get("xid_events") or [] if isinstance(e, dict)], devices, found)
    gpuhealth.sxids(facts.get("sxid_events") or [], found)
    driverlog.driver_errors(facts.get("driver_errors") or [], found, driverlog.answering(devices))
    aer.judge(facts.get("pcie_aer_events") or [], found)
    fabricmanager.judge(facts, devices, found)         # a node-wide service, as the switches' SXids


# What a device's health is read from, by area: a field counts when it holds a value or the GPU does not have it
# (`unsupported`). An NVLink list that is empty (the GPU has none) assesses the links but is no health read.
HEALTH_AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ECC", ("ecc_volatile_uncorrectable", "ecc_sram_uncorrectable", "ecc_dram_uncorrectable",
             "ecc_aggregate_uncorrectable", "ecc_volatile_correctable", "ecc_aggregate_correctable")),
    ("pending retirement/remap", ("retired_pages_pending", "row_remap")), ("clock slowdown", ("throttle_reasons",)),
    ("temperature", ("temperature_c", "temperature_tlimit_c")), ("PCIe link", ("pcie_width", "pcie_gen")),
    ("power limit", ("power_limit_w",)), ("NVLink", ("nvlink", "fabric")))


def _read(dev: NvmlDevice, key: str) -> bool:
    samples = [s for s in dev.get("samples") or [] if isinstance(s, dict)]
    return dev.get(key) is not None or key in (dev.get("unsupported") or {}) or any(s.get(key) is not None for s in samples)


def _not_assessed(node: Node, found: Findings) -> dict[str, list[Any]]:
    """Per health area, the devices whose deciding facts are unknown; a device with no health read at all warns."""
    gaps: dict[str, list[Any]] = {}
    blind: list[NvmlDevice] = []
    active = gpuhealth.any_link_active(node.devices)
    for dev in node.devices:
        if dev.get("lost"):
            continue
        undecided = gpuhealth.links_undecided(dev, node.table.model(dev.get("name")) is not None, active)
        missing = [area for area, keys in HEALTH_AREAS if not any(_read(dev, k) for k in keys)]
        if undecided and not _read(dev, "fabric"):
            gaps.setdefault("NVLink (every link inactive, the model unknown: whether they should be up is not known)",
                            []).append(dev.get("index"))
        unread = gpuhealth.unread_reasons(dev)
        if unread and "clock slowdown" not in missing:
            gaps.setdefault(f"clock slowdown ({', '.join(unread)} not read)", []).append(dev.get("index"))
        for area in missing:
            gaps.setdefault(area, []).append(dev.get("index"))
        # the fabric's registration state says the GPU joined the NVSwitch fabric, nothing of its own health; its
        # health mask (FabricHealth) is the NVLink health FACTS.md lists, read
        health_read = [k for _, ks in HEALTH_AREAS for k in ks if _read(dev, k) and dev.get(k) != []
                       and (k, undecided) != ("nvlink", True) and (k != "fabric" or gpuhealth.fabric_health_read(dev))]
        if not health_read:
            blind.append(dev)
    if blind:
        named = where(blind[0]) if len(blind) == 1 else f"{len(blind)} devices ({', '.join(str(d.get('index')) for d in blind)})"
        found.add(WARN, "HEALTH_NOT_ASSESSED", f"{named}: no health field read ({', '.join(a for a, _ in HEALTH_AREAS)})"
                  ": not assessed, not healthy", "Read the GPU's health where NVML answers (`nvidia-smi -q` on the "
                  "host); on a replay, translate the health fields the source has, or mark those the GPU lacks as "
                  "unsupported.", "host", blind[0].get("index") if len(blind) == 1 else None)
    return gaps


def _health_said(gaps: dict[str, list[Any]], count: int) -> str:
    if not gaps:
        return "healthy"
    def which(devs: list[Any]) -> str:
        if len(devs) == count and count > 1:
            return f"all {count} devices"
        return f"device{'s' if len(devs) > 1 else ''} {', '.join(str(d if d is not None else '?') for d in devs)}"
    return "no fault in what was read; not assessed: " + ", ".join(
        f"{area} ({which(devs)})" if devs else area for area, devs in gaps.items())


def _describe(node: Node, result: CheckResult) -> None:
    facts = node.facts
    result.details.append(f"driver {facts.get('driver')} (supports CUDA up to {facts.get('cuda_driver')}); "
                          f"{len(node.devices)} device(s): " + "; ".join(
                              f"{d.get('index')}: {d.get('name')}, {(d.get('memory_bytes') or 0) / 2**30:.0f} GiB, "
                              f"sm_{str(d.get('cc') or '?').replace('.', '')}, {d.get('pci_bus_id')}, {d.get('uuid')}"
                              for d in node.devices))
    if node.matches and any(m.matched_by not in ("index", "uuid", "pci_bus_id") for m in node.matches):
        result.details.append("torch -> NVML: " + ", ".join(
            f"{m.torch_index}->{m.nvml_index if m.nvml_index is not None else '?'} ({m.matched_by})" for m in node.matches))
    result.data["torch_to_nvml"] = [vars(m) for m in node.matches]
    mig = [str(d.get("index")) for d in node.devices if isinstance(d.get("mig"), list) and d["mig"] and d["mig"][0]]
    if mig:
        result.details.append(f"MIG enabled on device(s) {', '.join(mig)}")
    pending = [f"{d.get('index') if d.get('index') is not None else d.get('pci_bus_id')} ({change})"
               for d in node.devices if (change := gpuunits.mig_pending(d))]
    if pending:     # NVML's pending mode commits at a reset the driver makes only with no process on the GPU
        result.details.append(f"MIG mode pending on device(s) {', '.join(pending)}: it takes effect at the GPU's next "
                              "reset, with every process on it stopped (`nvidia-smi -r`)")
    no_persist = [str(d.get("index")) for d in node.devices if d.get("persistence") is False]
    if no_persist:
        result.details.append(f"persistence mode off on device(s) {', '.join(no_persist)} (first CUDA call is slower)")


HEALTH_FIELDS = ("lost", "ecc_volatile_uncorrectable", "ecc_aggregate_uncorrectable", "ecc_sram_uncorrectable",
                 "ecc_dram_uncorrectable", "retired_pages_pending", "row_remap", "recovery_action", "throttle_reasons",
                 "samples", "pcie_gen", "pcie_width", "pcie_gen_max", "nvlink", "nvlink_errors", "temperature_c",
                 "memory_temperature_c", "power_limit_w", "fabric", "ecc_volatile_correctable",
                 "ecc_aggregate_correctable", "ecc_correctable_growth")


def _judgeable(facts: GpuFacts, devices: list[NvmlDevice]) -> bool:
    """Whether the facts hold anything a rule reads; a judge that reads nothing must not say pass."""
    if any(dev.get(k) not in (None, []) for dev in devices for k in HEALTH_FIELDS) or any(map(inforom.said, devices)) \
            or any(map(reset_said, devices)):
        return True
    if facts.get("cuda_init_error") not in (None, NONE) or torch_misses_cuda(facts):
        return True                     # CUDA's refusal (or torch's count missing its GPUs) is a fault shown
    if aer.judgeable(facts.get("pcie_aer_events")):
        return True                     # a PCIe AER event on a GPU's bus (the kernel log)
    if any(d.get("mig_devices") or gpuunits.in_mig_mode(d) for d in devices):
        return True                     # NVML read its MIG mode or instances (nvidia-smi mig -lgi): there, not read
    if facts.get("capabilities") and facts.get("arch_list") is not None:
        return True
    if any(d.get("uuid") or d.get("pci_bus_id") or d.get("numa_node") is not None for d in devices):
        # a host tool read the device itself (nvidia-smi -L, a -q header, topo's NUMA affinity, lspci): there, not read
        return True
    if any(d.get(k) is not None for d in devices for k in ("sm_clock_mhz", "sm_clock_max_mhz", "power_w")):
        return True                     # NVML read its clocks or draw (nvidia-smi -q's Clocks): there, health not read
    if driver_read(facts):
        # the node's driver answered (dcgmi diag's Metadata, nvidia-smi's header): its GPUs are there, their health
        # not read, whether the devices are named, numbered or not listed (FACTS.md "How unknown is judged")
        return True
    return any(facts.get(k) is not None for k in ("kernels", "perf", "sdc", "xid_events", "sxid_events",
                                                  "driver_errors", "cuda_available", "cuda_errors")) or bool(
        facts.get("driver") and facts.get("torch_cuda")) or fabricmanager.shows_fault(facts, devices)


def _no_gpu(facts: GpuFacts, result: CheckResult, options: Options) -> CheckResult:
    """No GPU usable: why (a CPU build, no device nodes, NVML's refusal), a failure where GPUs are expected or where
    the facts prove a fault."""
    cause, remedy, owner, shown = why_no_gpu(facts)    # shown: a fault the facts prove, GPUs expected or not
    if (not shown or toolkit_symptom(facts)) and facts.get("torch_cuda") != NONE and (kernel := _kernel_log_faults(facts)).items:
        # the kernel log shows why no GPU is listed (the driver could not initialise one, an Xid): that fault
        return kernel.apply(result, f"no GPU visible: {cause}")
    if facts.get("nvml_error") not in (None, NONE):
        result.details.append(f"NVML: {facts['nvml_error']}")
    status = FAIL if options.expect_gpus > 0 or shown else SKIP
    return result.verdict(status, shown or "GPU_NOT_VISIBLE", f"no GPU visible: {cause}",
                          remedy if status == FAIL else remedy + " (--expect-gpus N makes this a failure)", owner)


def _kernel_log_faults(facts: GpuFacts) -> Findings:
    """The node-wide kernel-log facts (Xids, SXids, the driver's status lines) judged where NVML lists no GPU: only
    the failures they prove (a GPU the driver could not initialise, one that fell off the bus)."""
    found = Findings()
    kernel_log(facts, [], found)
    found.items = [f for f in found.items if f.severity == FAIL]
    return found


def _partial(node: Node, result: CheckResult, options: Options) -> CheckResult:
    """NVML's devices were not recorded: judge what the record does show (Xids, CUDA's refusal to initialise, the
    driver against the build, the build against the GPUs, the kernels); the devices' health is said not assessed."""
    facts = node.facts
    if (seen := program_saw_a_gpu(facts)) and not torch_misses_cuda(facts) and not bears_on_a_fault(without_the_run(facts)):
        # a program ran on the GPU, no device and no health read (one rule for CUDA's init and torch's count)
        return result.not_judged(f"{seen}, and no NVML device, health field or fault recorded beside it: a program's "
                                 "run is no health read, nothing to judge", RECORD)
    if not bears_on_a_fault(facts):
        return result.not_judged("no device, Xid, CUDA or torch fact recorded: nothing to judge", RECORD)
    if not facts.get("cuda_errors") and not bears_on_a_fault({**facts, "cuda_errors": None}):
        # a program's output read with no CUDA error in it says nothing of any GPU: never a pass on that alone
        return result.not_judged("a program's output with no CUDA error, and no GPU fact beside it: nothing to "
                                 "judge", RECORD)
    found = Findings()
    _driver(node, result, found)
    _visibility(node, result, found, options)
    good = _kernels(node, result, found, _arch(node, result, found))
    kernel_log(facts, [], found)
    events = [e for e in facts.get("xid_events") or [] if isinstance(e, dict)]
    # an undecoded error is said, not judged; beside a driver's read and CUDA's start the unread health warns
    if judge_errors(facts.get("cuda_errors") or [], found, result, node.devices) and not found.items and not bears_on_a_fault(
            {**facts, "cuda_errors": None}) and not (facts.get("driver") and program_saw_a_gpu(facts)):
        return result.not_judged("a program's CUDA error(s) the catalog does not decode, and nothing else: not "
                                 "judged", "Read the node's kernel log (Xids) and `nvidia-smi -q` beside the error.")
    xid_tells_the_kernel_fault(found)
    undecoded.unread_status(facts, found)          # a driver's status no catalog entry judges: never a pass
    result.details.append("not assessed: the devices' health (NVML's devices were not recorded)")
    said = [f"{len(events)} Xid event(s), none critical" if events else
            "Xid events " + ("none seen" if facts.get("xid_events") == [] else "not assessed")]
    if facts.get("sxid_events"):
        said.append(f"{len(facts['sxid_events'] or [])} NVSwitch SXid line(s)")
    if good:
        said.append(f"kernels correct on {good}")
    if (seen := program_saw_a_gpu(facts) or driver_read(facts)) and not found.items:
        # a program's run (CUDA's init, torch's count: one rule) or the node's driver shows GPUs there, and nothing
        # reads their health: never a pass (translators of the corpus, 12 of 12 such records)
        found.add(WARN, "HEALTH_NOT_ASSESSED", f"{seen} but no NVML device was recorded: the GPUs' health (ECC, remap, "
                  "clocks, temperature, PCIe, NVLink) is not assessed, not healthy",
                  "Read the GPUs' health where NVML answers (`nvidia-smi -q` on the host); on a replay, translate "
                  "the devices the source shows.", "host")
    return found.apply(result, "; ".join(said + ["the devices themselves not assessed"]))


def judge(facts: GpuFacts, options: Options) -> CheckResult:
    result = CheckResult("gpu", PASS, "")
    torch_cuda = facts.get("torch_cuda")
    node = Node(facts)
    result.details.append(f"torch {facts.get('torch')}, built for CUDA "
                          f"{'none (CPU build)' if torch_cuda == NONE else torch_cuda or 'unknown'}")
    result.data.update(driver=facts.get("driver"), cuda_driver=facts.get("cuda_driver"), devices=node.devices)
    result.details += fabricmanager.said(facts, node.devices)
    result.metric("nvml_devices", len(node.devices), "count")

    if facts.get("devices") is None and not no_gpu_shown(facts):
        return _partial(node, result, options)
    if contradicted := no_gpu_contradicted(node):
        return result.verdict(FAIL, "MEASUREMENT_INVALID", "the facts contradict each other: " + "; ".join(contradicted),
                              "Record the check again; facts that cannot all be true are not judged.", "host")
    if not node.devices or torch_cuda == NONE:
        return _no_gpu(facts, result, options)

    contradictions = impossible(node)
    if contradictions:
        return result.verdict(FAIL, "MEASUREMENT_INVALID", "the facts contradict each other: " + "; ".join(contradictions),
                              "Record the check again; facts that cannot all be true are not judged (if the probe "
                              "itself recorded them, report it with the facts).", "host")
    if not _judgeable(facts, node.devices):
        return result.not_judged(f"{len(node.devices)} device(s) listed, but no health field, "
                              "kernel, figure or build fact recorded: nothing to judge", RECORD)
    _describe(node, result)
    found = Findings()
    _driver(node, result, found)
    _visibility(node, result, found, options)
    no_code = _arch(node, result, found)
    good = _kernels(node, result, found, no_code)
    unjudged = judge_perf(node, result, found, options)
    _health(node, found)
    judge_errors(facts.get("cuda_errors") or [], found, result, node.devices, facts.get("cuda_visible_devices"))
    xid_tells_the_kernel_fault(found)
    gaps = _not_assessed(node, found)
    if unfigured := [k.get("index") for k in facts.get("kernels") or [] if not k.get("error") and k.get("max_abs_error") is None]:
        gaps["kernel error figure"] = unfigured
    if facts.get("xid_events") is None:
        gaps["Xid events"] = []                 # node-wide: not watched, or not in the source
    judge_sdc(node, result, found)
    result.details += unjudged
    lost = sum(1 for d in node.devices if d.get("lost"))
    names = sorted({str(d.get("name")) for d in node.devices if d.get("name")})
    count = node.torch_count if node.torch_count is not None else len(node.devices) - lost
    said = [f"{count} GPU(s) ({', '.join(names) or 'model unknown'})", f"driver {facts.get('driver') or '?'}",
            f"CUDA {torch_cuda or '?'}", _health_said(gaps, len(node.devices))]
    said.append(f"kernels correct on {good}" if good else "kernels not run" if facts.get("kernels") is None else "")
    judged_perf = [k for k in result.metrics if "_ratio_dev" in k and "peer" not in k]
    if facts.get("perf") and judged_perf and not unjudged:
        said.append("figures within baselines")
    elif facts.get("perf"):
        said.append("figures " + ("partly judged: " + unjudged[0] if unjudged else "compared with peers"))
    return found.apply(result, "; ".join(x for x in said if x))
