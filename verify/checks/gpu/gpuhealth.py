"""One GPU's health from its NVML facts (pure logic): what is wrong, how sure we are, and who must act.

Every single-snapshot hardware reading (clock slowdown, PCIe width and generation, NVLink state) is judged by
one transient rule, counted over every read the probe made (idle, re-reads, under load): seen in two or more
reads fails; seen once is a warn that names the count, unless another finding on the same device corroborates
it. Findings carry a root-cause rank; the check's code is the one that needs action first among its failures
(else its warnings): a lost GPU, then memory (ECC, remap), then throttle or link, then performance; a lifetime
ECC count that row remapping already handled, and what was not assessed, come last.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...facts import NvmlDevice, SxidEvent, XidEvent
from ...findings import HANDLED, Findings
from ...result import FAIL, WARN, Status
from ...shared.gpumemory import where
from ...shared.xidcatalog import (
    APP,
    DRAIN,
    INFO,
    LOST,
    SXID_CORRECTED,
    WATCH,
    Judged,
    after_application,
    classify,
    relayed_by,
    storm,
    sxid_action,
    sxid_states,
)
from .gpuidentity import norm_bus, norm_uuid
from .powercap import SUPERCHIPS, power_cap
from .xidsuspect import suspect_gpus

# nvmlClocksEventReasons bits (nvml.h)
THROTTLE_BITS = {0x1: "GpuIdle", 0x2: "ApplicationsClocksSetting", 0x4: "SwPowerCap", 0x8: "HwSlowdown",
                 0x10: "SyncBoost", 0x20: "SwThermalSlowdown", 0x40: "HwThermalSlowdown",
                 0x80: "HwPowerBrakeSlowdown", 0x100: "DisplayClockSetting"}
THROTTLE_FAIL = {"HwSlowdown", "HwThermalSlowdown", "HwPowerBrakeSlowdown"}
THROTTLE_WARN = {"SwThermalSlowdown"}
TEMP_MARGIN_C = 3             # within this of the slowdown threshold warns
HBM_MARGIN_C = 5              # HBM within this of its maximum operating temperature warns

def throttle_names(mask: Any) -> set[str]:
    return {name for bit, name in THROTTLE_BITS.items() if isinstance(mask, int) and mask & bit}


def lost(dev: NvmlDevice, found: Findings) -> bool:
    if not dev.get("lost"):
        return False
    errors = dev.get("nvml_errors") or {}
    why = ", ".join(f"{k}: {v}" for k, v in sorted(errors.items())) or "GPU_IS_LOST"
    found.add(FAIL, "GPU_LOST", f"{where(dev)} is lost: NVML answers {why}",
              f"Drain the node; read `dmesg` for Xid 79/48/63/64/94/95 on {dev.get('pci_bus_id') or 'this GPU'}; reset "
              "it (`nvidia-smi -r`) or reboot the node; if it recurs, RMA the GPU.", "host", dev.get("index"))
    return True


COOLING = ("fan_speed", "temperature_c")      # fields whose read error leaves the GPU's cooling unwatched


def cooling_unread(dev: NvmlDevice, found: Findings) -> None:
    """A fan or temperature NVML could not read (nvidia-smi's `ERR!`) on a GPU that still answers: its cooling is not
    watched, a failed fan or sensor or a GPU that needs a reset; a warning, never a pass on it (the power draw read
    ERR! once is no such sign: Azure's HPC diagnostics call it transient)."""
    errors = dev.get("nvml_errors") or {}
    bad = [f"{k} ({errors[k]})" for k in COOLING if k in errors]
    if bad:
        found.add(WARN, "HEALTH_NOT_ASSESSED", f"{where(dev)}: NVML cannot read its {' and '.join(bad)}: a failed fan "
                  "or sensor, or a GPU that needs a reset", "Read `nvidia-smi -q` on the host (Fan Speed, GPU Recovery "
                  "Action); reset the GPU if it asks, and check the fan if the error stays.", "host", dev.get("index"))


def _reads(dev: Mapping[str, Any], key: str, under_load: list[Any]) -> list[Any]:
    """Every read of `key`: the first (idle) read, the re-reads, and the reads under load."""
    reads = [dev.get(key)] + [s.get(key) for s in dev.get("samples") or [] if isinstance(s, dict)] + under_load
    return [r for r in reads if r is not None]


def _confirmed(bad: int, corroborated: bool) -> Status:
    """The one transient rule: seen in two reads, or once and corroborated, fails; seen once warns."""
    return FAIL if bad >= 2 or corroborated else WARN


def clocked_down(dev: NvmlDevice, model_max: int | None = None) -> bool:
    """The SM clock, read with the reasons, is below half its maximum (NVML's, else the model's published one):
    the slowdown is real, not a stale bit."""
    clock, top = dev.get("sm_clock_mhz"), dev.get("sm_clock_max_mhz") or model_max
    return bool(clock is not None and top and clock < 0.5 * top and not throttle_names(dev.get("throttle_reasons")) & {"GpuIdle"})


def unread_reasons(dev: NvmlDevice) -> list[str]:
    """The hardware-slowdown reasons a partial mask did not read (`throttle_reasons_read`); all, when unknown."""
    if dev.get("throttle_reasons") is None:
        return []
    read = dev.get("throttle_reasons_read")
    return sorted(THROTTLE_FAIL) if read is None else sorted(THROTTLE_FAIL - throttle_names(read))


def _too_hot(dev: NvmlDevice) -> tuple[str, float] | None:
    """(what, degrees of headroom) to the slowdown threshold: absolute, or relative to T.Limit (newer drivers)."""
    temp, slowdown = dev.get("temperature_c"), dev.get("temperature_slowdown_c")
    if temp is not None and slowdown:
        return f"{temp:g} C, at its slowdown threshold ({slowdown:g} C)", slowdown - temp
    margin, at = dev.get("temperature_tlimit_c"), dev.get("temperature_slowdown_tlimit_c")
    if margin is not None and at is not None:
        return f"{margin:g} C below T.Limit, slowdown at {at:g} C", margin - at
    return None


def throttle(dev: NvmlDevice, load_masks: list[Any], found: Findings, corroborated: bool,
             model_clock: int | None = None) -> None:
    """Hardware slowdown over every read. `corroborated`: a low figure of this device, or the same slowdown on
    other GPUs of the node in the same read (a node-wide power brake), confirms a single read; so do the SM clock
    (against NVML's maximum, else the model's) and the temperature."""
    i = dev.get("index")
    reads = _reads(dev, "throttle_reasons", load_masks)
    bad = [h for h in (sorted(throttle_names(m) & THROTTLE_FAIL) for m in reads) if h]
    hot = _too_hot(dev)
    if bad:
        names = sorted({n for h in bad for n in h})
        slow = clocked_down(dev, model_clock)
        status = _confirmed(len(bad), corroborated or bool(hot and hot[1] <= 0) or slow)
        seen = f"in {len(bad)} of {len(reads)} read(s)"
        why = "" if status == FAIL else ": one transient read, not confirmed by a re-read, the clock or a low figure"
        if slow and len(bad) < 2:
            top = dev.get("sm_clock_max_mhz")
            why = (f", confirmed by the SM clock {dev.get('sm_clock_mhz')} MHz of {top or model_clock} MHz"
                   + ("" if top else " (the model's published maximum: NVML's was not read)"))
        found.add(status, "THROTTLED", f"{where(dev)}: clocks throttled by {', '.join(names)} {seen}{why}",
                  "Check cooling, power supply and the BMC event log (`nvidia-smi -q -d PERFORMANCE`).", "host", i)
    elif any(throttle_names(m) & THROTTLE_WARN for m in reads):
        found.add(WARN, "THROTTLED", f"{where(dev)}: clocks throttled by SwThermalSlowdown",
                  "Check cooling and airflow (`nvidia-smi -q -d TEMPERATURE`).", "host", i)
    if hot and hot[1] <= TEMP_MARGIN_C:
        found.add(WARN, "THROTTLED", f"{where(dev)}: {hot[0]}", "Check cooling and airflow "
                  "(`nvidia-smi -q -d TEMPERATURE`).", "host", i)
    hbm, hbm_max = dev.get("memory_temperature_c"), dev.get("memory_temperature_max_c")
    if hbm is not None and hbm_max and hbm >= hbm_max - HBM_MARGIN_C:
        found.add(FAIL if hbm >= hbm_max else WARN, "THROTTLED", f"{where(dev)}: memory (HBM) at {hbm:g} C, its "
                  f"maximum operating temperature is {hbm_max:g} C", "Check cooling and airflow; HBM above its "
                  "limit throttles memory and raises ECC error rates.", "host", i)
    power_cap(dev, where(dev), found)


def any_link_active(devices: list[Any]) -> bool:
    return any(any(s is True for s in d.get("nvlink") or []) for d in devices)


def links_undecided(dev: Mapping[str, Any], model_known: bool, peers_active: bool) -> bool:
    """Every NVLink read inactive on a GPU whose model is unknown and whose peers show no active link: a PCIe card
    without a bridge, or an SXM board with its links dead; nothing read tells which (DCGM's health watch calls both
    a failure), so the links are not assessed, never healthy."""
    reads = [r for r in _reads(dev, "nvlink", []) if isinstance(r, list) and r]
    states = [s for r in reads for s in r]
    return False in states and True not in states and not model_known and not peers_active


def nvlink(dev: dict[str, Any], expected: bool, found: Findings, bridged: bool = False, peers: int = 0) -> None:
    """Links down over every read; all links down only where the SKU or its peers have NVLink. On a bridged PCIe
    SKU (H100 PCIe: 12 of 18 links on its bridges) a fixed pattern of inactive links is the design: only a link
    that changes state between reads counts."""
    i = dev.get("index")
    reads = [r for r in _reads(dev, "nvlink", []) if isinstance(r, list) and r]
    # the error counters are judged whether or not the links' states were read (`nvidia-smi nvlink -e` alone)
    nvlink_errors(dev, found)
    if not reads:
        return
    if bridged:
        flapping = {k for r in reads for k, s in enumerate(r) if s is False and any(
            len(o) > k and o[k] is True for o in reads)}
        reads = [[(s if k in flapping else True) for k, s in enumerate(r)] for r in reads]
    down_reads = [[k for k, s in enumerate(r) if s is False] for r in reads]
    bad = [d for d in down_reads if d and (len(d) < len(reads[0]) or expected)]
    if bad:
        links = sorted({k for d in bad for k in d})
        all_down = all(len(d) == len(r) for d, r in zip(down_reads, reads, strict=False) if d)
        what = f"all {len(reads[0])} NVLink links inactive" if all_down else \
            f"NVLink link(s) {', '.join(map(str, links))} inactive of {len(reads[0])}"
        # a transient never takes every link, nor links of several GPUs at once (`peers`: linkpeers.py)
        status = _confirmed(len(bad), (all_down and expected) or (peers >= 2 and not all_down))
        seen = f" in {len(bad)} of {len(reads)} read(s)"
        why = "" if len(bad) >= 2 or (all_down and expected) else \
            f": one read, confirmed by links inactive on {peers - 1} other GPU(s) of the node" if status == FAIL else \
            ": one read, not confirmed by a re-read (links retrain after a reset)"
        found.add(status, "NVLINK_DOWN", f"{where(dev)}: {what}{seen}{why}",
                  "Check `nvidia-smi nvlink -s`, the fabric manager (`systemctl status nvidia-fabricmanager`) and "
                  "the NVSwitch trays; reset the GPU if links stay down.", "host", i)


def nvlink_errors(dev: Mapping[str, Any], found: Findings) -> None:
    """The NVLink error counters: a recovery, over 100 replays or over 1000 CRC errors fail, any other growth warns."""
    i = dev.get("index")
    errors: dict[str, Any] = dev["nvlink_errors"] if isinstance(dev.get("nvlink_errors"), dict) else {}
    grew = {k: v for k, v in errors.items() if isinstance(v, int) and v > 0}
    if grew:
        severe = errors.get("recovery", 0) or errors.get("replay", 0) > 100 or errors.get("crc", 0) > 1000
        found.add(FAIL if severe else WARN, "NVLINK_ERRORS", f"{where(dev)}: NVLink counters grew during the check: "
                  + ", ".join(f"{k} +{v}" for k, v in sorted(grew.items())),
                  "Check `nvidia-smi nvlink -e`; reseat or replace the link's cable/tray; drain if they keep growing.",
                  "host", i)


def pcie(dev: NvmlDevice, load: Sequence[Mapping[str, Any]], found: Findings, corroborated: bool,
         gpu_max: tuple[Any, Any] = (None, None)) -> None:
    """The link over every read, by the one transient rule: a width below the maximum in any read, a generation
    below it only under load (idle links slow down to save power). The maximum is the slot's (NVML's Max), else
    the GPU's own (Device Max, `lspci` LnkCap), else the model's published one (`gpu_max`). A slot below the GPU's own
    maximum warns, except on a Grace superchip's GPU (its PCIe link is by design narrower than the GPU)."""
    i = dev.get("index")
    top_gen = dev.get("pcie_gen_gpu_max") or gpu_max[0]
    top_width = dev.get("pcie_width_gpu_max") or gpu_max[1]
    gen_max = dev.get("pcie_gen_max") if dev.get("pcie_gen_max") is not None else top_gen
    width_max = dev.get("pcie_width_max") if dev.get("pcie_width_max") is not None else top_width
    samples: list[Mapping[str, Any]] = [s for s in dev.get("samples") or [] if isinstance(s, dict)]
    idle = [{"gen": dev.get("pcie_gen"), "width": dev.get("pcie_width")}] + [s for s in samples if s.get("phase") != "load"]
    load = [*load, *(s for s in samples if s.get("phase") == "load")]
    reads = [(r.get("gen"), r.get("width"), False) for r in idle] + [(r.get("gen"), r.get("width"), True) for r in load]
    bad = [(g, w, under) for g, w, under in reads
           if (w is not None and width_max and w < width_max) or (under and g is not None and gen_max and g < gen_max)]
    if bad:
        status = _confirmed(len(bad), corroborated)
        g, w, under = bad[-1]
        seen = f" in {len(bad)} of {sum(1 for r in reads if r[0] is not None or r[1] is not None)} read(s)"
        why = "" if status == FAIL else ": one read, not confirmed by a re-read or a low host-copy figure"
        found.add(status, "PCIE_DOWNGRADED", f"{where(dev)}: PCIe link Gen{g if g is not None else '?'} "
                  f"x{w if w is not None else '?'}{' under load' if under else ''}, capable of "
                  f"Gen{gen_max or '?'} x{width_max or '?'}{seen}{why}",
                  "Reseat the GPU or its riser and check the BIOS PCIe settings (`nvidia-smi -q -d PCI`).", "host", i)
    slot_gen, slot_width = dev.get("pcie_gen_max"), dev.get("pcie_width_max")
    if any(chip in str(dev.get("name") or "").upper() for chip in SUPERCHIPS):
        return      # a Grace superchip's GPU talks to its CPU over NVLink-C2C: its PCIe link is a narrow side channel
    if top_gen and slot_gen and slot_gen < top_gen:
        found.add(WARN, "PCIE_DOWNGRADED", f"{where(dev)}: the slot runs at most Gen{slot_gen}, the GPU supports "
                  f"Gen{top_gen}", "Move the GPU to a slot (or riser) of its generation, or check the BIOS link "
                  "speed setting.", "host", i)
    if top_width and slot_width and slot_width < top_width:
        found.add(WARN, "PCIE_DOWNGRADED", f"{where(dev)}: the slot is at most x{slot_width}, the GPU is x{top_width}",
                  "Move the GPU to a full-width slot (or riser).", "host", i)


def device_of(event: XidEvent, devices: Sequence[NvmlDevice]) -> NvmlDevice | None:
    """The device an Xid names: by index, by UUID (any spelling), or by PCI bus (the kernel log's `PCI:0000:3b:00`)."""
    if isinstance(event.get("index"), int):
        return next((d for d in devices if d.get("index") == event["index"]), None)
    if event.get("uuid"):
        return next((d for d in devices if d.get("uuid") and norm_uuid(d["uuid"]) == norm_uuid(event["uuid"])), None)
    if event.get("pci_bus_id"):
        bus = norm_bus(event["pci_bus_id"]).split(".")[0]
        return next((d for d in devices if d.get("pci_bus_id") and norm_bus(d["pci_bus_id"]).split(".")[0] == bus), None)
    return None


def _xid_where(e: XidEvent, devices: Sequence[NvmlDevice]) -> tuple[str, int | None, str]:
    """(how the event names its GPU, its NVML index, a key that is the same for every spelling of that GPU)."""
    dev = device_of(e, devices)
    named = where(dev) if dev else f"device {e['index']}" if e.get("index") is not None else \
        f"GPU {e.get('uuid') or 'at PCI ' + str(e.get('pci_bus_id') or '?')}"
    key = str((dev or {}).get("index")) if dev else str(e.get("index") if e.get("index") is not None else
                                                       norm_uuid(e["uuid"]) if e.get("uuid") else
                                                       norm_bus(str(e.get("pci_bus_id") or "?")).split(".")[0])
    return named, (dev or {}).get("index"), key


def _judged_events(events: Sequence[XidEvent], devices: Sequence[NvmlDevice]) -> list[tuple[Judged, XidEvent, str]]:
    """Each event through the one catalog (verify/shared/xidcatalog.py), in order: a teardown judged as its cause, a context
    switch timeout after an application fault on the same GPU as that application's."""
    faulted: set[str] = set()
    out = []
    for e in events:
        if not isinstance(e, dict) or not isinstance(e.get("xid"), int):
            continue
        key = _xid_where(e, devices)[2]
        judged = after_application(classify(e["xid"], str(e.get("text") or "")), key in faulted)
        if judged.action == APP:
            faulted.add(key)
        out.append((judged, e, key))
    return out


def _seen_where(e: XidEvent) -> str:
    """Where the event was seen, by its source: the kernel log, verify's own NVML watch (no line: during the check),
    or a tool relaying NVML's events (its line names it); an unrecorded source is said so, never guessed."""
    at = f" at {e['time']}" if e.get("time") else ""
    if e.get("source") == "kernel_log":
        return f" in the kernel log{at}"
    if e.get("source") == "nvml":
        relay = relayed_by(e.get("text"))
        return f" reported by NVML's events, as relayed by {relay}{at}" if relay else " during the check"
    return f" (where it was seen is not recorded){at}"


def xids(events: Sequence[XidEvent], devices: Sequence[NvmlDevice], found: Findings) -> None:
    """Xid events (raised while verify ran, or in the kernel log), judged by the one catalog: a DRAIN Xid fails the
    device (79: lost), a WATCH Xid warns the host, an application Xid warns the job, INFO is noted. A storm counts
    once per GPU and judged Xid."""
    judged = _judged_events(events, devices)
    counts = storm((key, j.xid) for j, _, key in judged)
    suspects = suspect_gpus(judged)
    said: set[tuple[str, int]] = set()
    for j, e, key in judged:
        if (key, j.xid) in said or j.action == INFO:
            continue
        said.add((key, j.xid))
        named, i, _ = _xid_where(e, devices)
        n = counts[(key, j.xid)]
        when = _seen_where(e)
        seen = f"Xid {j.seen} naming Xid {j.xid}" if j.seen != j.xid else f"Xid {j.xid}"
        text = f"{named}: {seen}{when}{f' ({n} times)' if n > 1 else ''}: {j.what}"
        if j.xid == LOST:
            found.add(FAIL, "GPU_LOST", f"{text} (GPU has fallen off the bus)", "Drain the node; reset the GPU or "
                      "reboot; check the PCIe slot, riser and power; RMA if it recurs.", "host", i)
        elif j.action == DRAIN:
            found.add(FAIL, j.code, text, "Drain the node; read dmesg and follow NVIDIA's Xid catalogue for this "
                      "Xid (reset, reboot or RMA).", "host", i)
        elif j.code == "RETIREMENT_PENDING":
            # Xid 63 announces what NVML's pending flag says (a row or page waiting for a reset): one condition, one
            # verdict, whichever road it was read by. Where NVML read the flag itself, the newest evidence wins: set,
            # it is judged above; clear, a reset has applied the remap since the line was logged.
            if ((device_of(e, devices) or {}).get("row_remap") or {}).get("pending") is None:
                found.add(FAIL, j.code, f"{text} (takes effect at the next reset)",
                          "Drain the node and reset the GPU (`nvidia-smi -r` or reboot).", "host", i)
        elif j.action == APP and key in suspects:
            found.add(WARN, "XID_ERROR", f"{text}: {suspects[key]} different processes faulted on this one GPU: "
                      "suspect the GPU, not each program", "Run `dcgmi diag -r 3` on the GPU (or move the jobs to "
                      "another GPU): if it fails or the faults follow the GPU, drain the node and RMA it.", "host", i)
        elif j.action == APP:
            found.add(WARN, "XID_ERROR", f"{text}: the application's fault, not the GPU's", "Tell the job's owner: "
                      "the process faulted (a bad kernel, an out-of-bounds access); the node is not drained for it.",
                      "job", i, rank=HANDLED)
        else:
            found.add(WARN, j.code, text, "Watch the node: reset the GPU at the next drain; drain if it repeats "
                      "(NVIDIA's Xid catalogue).", "host", i)


_SXID_REST = re.compile(r"SXid \([^)]*\):\s*\d+,\s*(.*)")
_WORST = {DRAIN: 0, WATCH: 1, APP: 2, INFO: 3}


def sxids(events: Sequence[SxidEvent], found: Findings) -> None:
    """NVSwitch SXids of the kernel log, by the one catalog (verify/shared/xidcatalog.py): a fatal one, or one whose documented
    impact stalls the NVLink traffic, fails the node (the switch is the host's); a non-fatal one, or one of unstated
    severity, warns; a corrected single-bit ECC one and detail lines are noted. Once per switch and SXid, at the
    worst of its lines."""
    rows = [e for e in events if isinstance(e, dict) and isinstance(e.get("sxid"), int)]
    rest = {id(e): (m.group(1) if (m := _SXID_REST.search(str(e.get("text") or ""))) else str(e.get("text") or ""))
            for e in rows}
    stated = {(e.get("pci_bus_id"), e["sxid"]) for e in rows if sxid_states(rest[id(e)])}
    worst: dict[tuple[Any, int], tuple[str, str, SxidEvent, int]] = {}
    for e in rows:
        key = (e.get("pci_bus_id"), e["sxid"])
        action, what = sxid_action(e["sxid"], rest[id(e)], key in stated)
        if action == INFO and sxid_states(rest[id(e)]) and e["sxid"] not in SXID_CORRECTED:
            action = WATCH          # a non-fatal link error: no drain, but that switch's NVLink path is not clean
        seen = worst.get(key)
        if seen is None or _WORST[action] < _WORST[seen[0]]:
            worst[key] = (action, what, e, (seen[3] if seen else 0) + 1)
        else:
            worst[key] = (*seen[:3], seen[3] + 1)
    for (bus, code), (action, what, e, n) in worst.items():
        if action not in (DRAIN, WATCH):
            continue
        text = (f"NVSwitch at PCI {bus or '?'}: SXid {code} in the kernel log" + (f" at {e['time']}" if e.get("time")
                else "") + (f" ({n} lines)" if n > 1 else "") + f": {what}")
        if action == DRAIN:
            found.add(FAIL, "XID_ERROR", text, "Drain the node: reset the GPUs and NVSwitches (reboot), check the fabric "
                      "manager's log; follow the Fabric Manager guide's SXid table (RMA the baseboard if it recurs).",
                      "host")
        else:
            found.add(WARN, "XID_ERROR", text, "Watch the node: read the fabric manager's log; drain if it repeats.",
                      "host")


FABRIC_DONE, FABRIC_NONE, FABRIC_OK = "completed", "not_supported", "success"
FABRIC_FAIL = {"route_unhealthy": "a route unhealthy", "incorrect_configuration": "an incorrect configuration"}
FABRIC_WARN = {"degraded_bandwidth": "bandwidth degraded", "route_recovery": "a route recovery in progress",
               "access_timeout_recovery": "an access-timeout recovery"}
FABRIC_REMEDY = ("Check the fabric manager (`systemctl status nvidia-fabricmanager`, same version as the driver; on "
                 "GB200/GB300 the NVLink switch trays' NMX/fabric manager) and the NVLink switches; `nvidia-smi -q | "
                 "grep -A12 Fabric`; drain until the GPU registers.")


def fabric(dev: NvmlDevice, found: Findings) -> None:
    """The GPU's NVLink fabric registration and health (NVML GPU fabric info): a GPU not registered, or a fabric
    unhealthy, is the host's (fabric manager, NVLink switch); CUDA refuses such a GPU with error 802."""
    info = dev.get("fabric")
    if not isinstance(info, dict):
        return
    state, status = str(info.get("state") or ""), str(info.get("status") or "")
    i = dev.get("index")
    if state and state != FABRIC_NONE and state != FABRIC_DONE:
        found.add(FAIL, "NVLINK_DOWN", f"{where(dev)} is not registered with the NVLink fabric (state "
                  f"{state.replace('_', ' ')})", FABRIC_REMEDY, "host", i)
        return
    if state == FABRIC_DONE and status and status.lower() != FABRIC_OK:
        found.add(FAIL, "NVLINK_DOWN", f"{where(dev)}: the fabric registration finished with an error ({status})"
                  + (f", clique {info.get('clique_id')}" if info.get("clique_id") is not None else ""), FABRIC_REMEDY,
                  "host", i)
        return
    health = info.get("health") if isinstance(info.get("health"), dict) else {}
    bad = [what for key, what in FABRIC_FAIL.items() if (health or {}).get(key) is True]
    if str((health or {}).get("summary") or "").lower() == "unhealthy":
        bad.insert(0, "health summary Unhealthy")
    if bad:
        found.add(FAIL, "NVLINK_DOWN", f"{where(dev)}: the NVLink fabric is unhealthy ({', '.join(bad)})",
                  FABRIC_REMEDY, "host", i)
        return
    slow = [what for key, what in FABRIC_WARN.items() if (health or {}).get(key) is True]
    if slow:
        found.add(WARN, "NVLINK_DOWN", f"{where(dev)}: NVLink fabric {', '.join(slow)}", FABRIC_REMEDY, "host", i)


STORM_PER_S = 10.0            # correctable errors a second between the two reads
STORM_VOLATILE = 1_000_000    # correctable errors since the last reset


def correctable(dev: NvmlDevice, found: Findings) -> None:
    """A correctable-error storm: the memory corrects what it reads, but at a rate that says it is degrading (and
    stalls NVML/DCGM calls under load). Warns, owner host: plan a reset and a field diagnostic."""
    growth = dev.get("ecc_correctable_growth")
    rate = None
    if isinstance(growth, dict) and isinstance(growth.get("count"), int) and float(growth.get("seconds") or 0) > 0:
        rate = growth["count"] / float(growth["seconds"])
    volatile = dev.get("ecc_volatile_correctable")
    storm_seen = (rate is not None and rate >= STORM_PER_S) or (isinstance(volatile, int) and volatile >= STORM_VOLATILE)
    if not storm_seen:
        return
    said = [f"{rate:,.0f} correctable ECC errors/s between the check's reads" if rate is not None else "",
            f"{volatile:,} volatile correctable since the last reset" if isinstance(volatile, int) else "",
            f"{(dev.get('row_remap') or {}).get('correctable')} row(s) remapped for correctable errors"
            if (dev.get("row_remap") or {}).get("correctable") else ""]
    found.add(WARN, "ECC_UNCORRECTABLE", f"{where(dev)}: correctable-error storm ({'; '.join(x for x in said if x)})",
              "Watch the GPU: reset it at the next drain and run `dcgmi diag -r 3`; RMA if the rate stays high.",
              "host", dev.get("index"))


def fabric_health_read(dev: NvmlDevice) -> bool:
    """Whether any bit of the GPU's fabric health mask was read (not its registration state alone)."""
    fabric = dev.get("fabric")
    health = fabric.get("health") if isinstance(fabric, dict) else None
    return isinstance(health, dict) and any(v is not None for v in health.values())
