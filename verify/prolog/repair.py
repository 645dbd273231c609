"""Has the repair NVIDIA's Xid catalog asks for been done since the drain? Return to service must see it.

The catalog's actions for the drains that need one (Xid 79 fallen off the bus, 48/95 ECC, 62, 64, 74, 119/120,
a reset-required Xid 154, pending retirements or row remaps: these take effect only then) are "reset the GPU" or
"reboot the node". Evidence read, never assumed:
- a reboot: another boot id (/proc/sys/kernel/random/boot_id) than the one the drain recorded, else a boot time
  (/proc/stat btime) after the drain's time;
- a GPU reset without a reboot: the driver logs nothing that tells a reset from a re-probe, so the record is the
  one NVSentinel's reset job writes after `nvidia-smi -r -i <uuid>` (ADR-020, what its syslog monitor takes as the
  Xid's remediation): `logger -t nvsentinel-gpu-reset -p daemon.err "GPU reset executed: GPU-<uuid>, success: true"`,
  read from this boot's journal with its wall-clock stamp, written by root only (_UID=0: anyone may give a syslog
  identifier, only root's record is NVSentinel's reset job's). A reset counts when it succeeded after the drain and no
  GPU's last reset since failed. Which GPU faulted is not always known (a kernel-log Xid names a PCI address, the
  record a UUID): any GPU's reset counts, unless another GPU's reset failed (that one may be the faulted GPU:
  partial evidence is no repair), and the preflight that follows must still pass with every GPU the node should
  have.
Pure but `read_resets` (journalctl, bounded).
"""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..shared import clockskew
from . import statefile, xid
from .kernlog import Clock, boot_key

# drains whose repair NVIDIA's Xid catalog names as a GPU reset or a node reboot (pending row remaps and retired
# pages take effect only then; Xid 48/95/140, filed under ECC_UNCORRECTABLE, and 64, ROW_REMAP_FAILED, ask for a GPU
# reset): return to service must see one
REBOOT_CODES = frozenset({"XID_HISTORY", "XID_REPEATED", "XID_ERROR", "GPU_LOST", "GPU_RESET_REQUIRED",
                          "RETIREMENT_PENDING", "ECC_UNCORRECTABLE", "ROW_REMAP_FAILED"})
RESET_TAG = "nvsentinel-gpu-reset"          # NVSentinel's syslog identifier for a GPU reset's result
OUTPUT_CAP = 1 << 20
_RESET = re.compile(r"^(\d{9,11}(?:\.\d+)?)\s.*?\bGPU reset executed:\s*(GPU-[0-9A-Fa-f-]{8,64}),\s*success:\s*"
                    r"(true|false)\b")
# a record of a reset whose GPU or outcome cannot be read (`success: FALSE`, `GPU-zz`): its stamp is read alone
_UNREAD = re.compile(r"^(\d{9,11}(?:\.\d+)?)\s.*?\bGPU reset executed\b", re.IGNORECASE)
HOW = (f'after `nvidia-smi -r -i <uuid>` succeeds, record it: logger -t {RESET_TAG} -p daemon.err "GPU reset '
       'executed: GPU-<uuid>, success: true" (NVSentinel\'s record); or reboot')


@dataclass(frozen=True)
class Reset:
    time: float          # epoch seconds the record was logged
    uuid: str
    success: bool
    mono: float | None = None    # seconds since this boot the journal logged it (-o json), which no clock step moves


def parse_resets(lines: list[str]) -> list[Reset]:
    """The GPU reset records of `journalctl -o json` lines, or of `-o short-unix` ones (`<epoch> <host> <tag>[pid]: GPU
    reset executed: GPU-<uuid>, success: true|false`); any other line is ignored. A stamped record of a reset whose GPU or outcome
    cannot be read (`success: FALSE`, `GPU-zz`) is a failed reset of a GPU of its own: partial evidence is no repair,
    so an earlier success never stands for a reset whose result is unknown (no later record names its GPU: a
    reboot is then the repair)."""
    found = []
    for raw in lines:
        line, mono = _from_json(raw.strip())
        if m := _RESET.match(line):
            found.append(Reset(float(m.group(1)), m.group(2).lower(), m.group(3) == "true", mono))
        elif u := _UNREAD.match(line):
            found.append(Reset(float(u.group(1)), f"unreadable record: {line[:80]}", False, mono))
    return found


def _micros(value: Any) -> float | None:
    return int(value) / 1e6 if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20 \
        else None


def _from_json(line: str) -> tuple[str, float | None]:
    """A `journalctl -o json` record as a short-unix line (`<epoch> <message>`) and its monotonic stamp; any other
    line as it is, with none."""
    if not line.startswith("{"):
        return line, None
    try:
        doc = json.loads(line)
    except (ValueError, RecursionError):
        return line, None
    if not isinstance(doc, dict):
        return line, None
    message = doc.get("MESSAGE")
    if isinstance(message, list):           # the journal writes a message that is no UTF-8 as its bytes
        message = bytes(b for b in message if isinstance(b, int) and 0 <= b < 256).decode(errors="replace")
    real = _micros(doc.get("__REALTIME_TIMESTAMP"))
    if real is None or not isinstance(message, str):
        return line, None
    return f"{real:.6f} {message}", _micros(doc.get("__MONOTONIC_TIMESTAMP"))


def journal_argv() -> list[str]:
    """This boot's reset records written by root only (_UID=0: the journal's own record of the sender, which no
    sender sets): a syslog identifier is anyone's to give (`logger -t nvsentinel-gpu-reset` by a job's user forged a
    repair that returned an Xid-drained node without its reset), NVSentinel's reset job runs privileged."""
    # json: each record's wall-clock stamp (the drain's time is one) and its monotonic one (the kernel log's Xids are
    # stamped so: a clock stepped between a reset and a later Xid made that Xid read as logged before the reset)
    return [shutil.which("journalctl") or "journalctl", "-b", "-t", RESET_TAG, "_UID=0", "--no-pager", "-q", "-o",
            "json"]


def read_resets(timeout: float) -> tuple[list[Reset] | None, str]:
    """This boot's GPU reset records, or None and why they could not be read (then no reset is seen)."""
    argv = journal_argv()
    try:
        proc = statefile.run_tail(argv, timeout, OUTPUT_CAP)      # the newest records, never all in memory
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"journalctl: {exc}"
    if proc.returncode != 0:
        return None, f"journalctl exited {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[-160:]}"
    return parse_resets(proc.stdout.decode(errors="replace").splitlines()), ""


def reset_since(resets: list[Reset], when: float, now: float | None = None,
                skew_s: float = clockskew.DEFAULT_S) -> Reset | None:
    """The latest successful reset after `when`, or None when there is none, or when any GPU's last reset since
    failed (which GPU faulted is not always known: a GPU whose reset failed may be the one the drain was for, and
    partial evidence is no repair). A record stamped more than skew_s (TORCHIMAGES_CLOCK_SKEW) after `now` is no
    evidence: its clock was wrong, so it may well predate the drain."""
    last: dict[str, Reset] = {}
    for r in sorted(resets, key=lambda r: r.time):
        if r.time > when and (now is None or r.time <= now + skew_s):
            last[r.uuid] = r
    if any(not r.success for r in last.values()):
        return None
    return max(last.values(), key=lambda r: r.time, default=None)   # the latest


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def uptime_after(records: Sequence[dict[str, Any]], now_boot: str) -> float | None:
    """The latest uptime (seconds since boot) the drains recorded, when every one of them recorded this boot and its
    uptime: then a reset record's monotonic stamp tells whether it came after them, whatever the wall clock did
    between (a clock stepped back after a reset put a drain logged after it before it). None otherwise."""
    ups = [float(d["uptime"]) for d in records if boot_key(d.get("boot_id")) == now_boot and _finite(d.get("uptime"))]
    return max(ups) if now_boot and records and len(ups) == len(records) else None


def reset_after_uptime(resets: list[Reset], uptime: float) -> Reset | None:
    """reset_since by the journal's monotonic stamps (this boot's): the latest successful reset after `uptime`, None
    when there is none or any GPU's last reset since failed."""
    last: dict[str, Reset] = {}
    for r in sorted(resets, key=lambda r: r.mono or 0.0):
        if r.mono is not None and r.mono > uptime:
            last[r.uuid] = r
    if any(not r.success for r in last.values()):
        return None
    return max(last.values(), key=lambda r: r.mono or 0.0, default=None)


def latest_reset(resets: list[Reset], clock: Clock, skew_s: float = clockskew.DEFAULT_S) -> Reset | None:
    """This boot's latest successful GPU reset (None: none, or any GPU's last reset failed), by the journal's
    monotonic stamps where every record has one: a clock stepped back since the reset put its wall stamp in the
    future, not believed, and the Xid it repaired drained the repaired node. Else by wall stamps, within skew_s."""
    if resets and all(r.mono is not None for r in resets):
        return reset_after_uptime([r for r in resets if clock.uptime is None or (r.mono or 0.0) <= clock.uptime + 1],
                                  -1.0)
    return reset_since(resets, 0.0, clock.now, skew_s)


def needs_repair(drain: dict[str, Any] | None, claimed: tuple[str, int] | None,
                 also: Sequence[dict[str, Any]] = ()) -> str | None:
    """The code of a drain whose repair is a GPU reset or a reboot, or None: Slurm's reason, the history's record of
    this drain, or `also` (the other faults the node was drained for since it was last in service: prologs of one
    node that failed together each record theirs, and every one's repair is owed)."""
    records = [d for d in (drain, *also) if d]
    asked = next((d for d in records if d.get("action") in ("reset", "reboot")), None)
    if asked is not None:
        return str(asked.get("code") or "a reset or reboot")
    # a drain's kernel-log evidence (`kernel_log`: an Xid held beside a preflight fault, the drain filed under that
    # fault's code, CHECK_TIMEOUT) is owed its catalog repair too: an Xid 79 beside a timeout was resumed unrepaired
    codes = [c for c in (*(d.get(k) for d in records for k in ("code", "kernel_log")), claimed[0] if claimed else None)
             if c]
    return next((str(c) for c in codes if c in REBOOT_CODES), None)


def latest_drain(records: Sequence[dict[str, Any]], claimed: tuple[str, int] | None) -> float | None:
    """The latest time among the drains (and Slurm's reason stamp): a repair before it repairs no fault recorded after it
    (NVIDIA's catalog asks for the reset after the Xid, not before)."""
    times = [float(d["epoch"]) for d in records if isinstance(d.get("epoch"), (int, float))
             and not isinstance(d.get("epoch"), bool) and math.isfinite(d["epoch"])]
    times += [float(claimed[1])] if claimed else []
    return max(times, default=None)


def repair_problem(drain: dict[str, Any] | None, claimed: tuple[str, int] | None, clock: Clock,
                   booted: float | None, resets: tuple[list[Reset] | None, str] = (None, "not read"),
                   also: Sequence[dict[str, Any]] = (), skew_s: float = clockskew.DEFAULT_S) -> str | None:
    """Why the repair NVIDIA's Xid catalog asks for (a GPU reset or a reboot) is not seen since the drain, or None."""
    code = needs_repair(drain, claimed, also)
    if code is None:
        return None
    records = [d for d in (drain, *also) if d]
    # every drain since the node was last in service is owed its repair: the repair must come after the latest of
    # them, and a drain recorded in this boot (a second prolog's "already drained by torchimages", its line past the
    # reason's stamp) proves no reboot since, whatever a stepped clock makes of /proc/stat's btime
    boots = {b for b in (boot_key(d.get("boot_id")) for d in records) if b}
    then = boot_key((drain or {}).get("boot_id")) or min(boots, default="")
    now_boot = boot_key(clock.boot_id)
    when = latest_drain(records, claimed)
    # a reboot is the kernel's two records agreeing: another boot id, and (where both times are known) a boot after
    # the drain; a boot id that differs only in its case or spaces, or a boot that began before the drain, proves none
    # (a drain stamped past now + skew_s, by a clock that ran ahead since set right, tells nothing of when it was: no
    # boot of now began after it, and a repaired node rebooted since was refused until the clock caught up; the boot
    # ids alone decide then)
    future = when is not None and clock.now is not None and when > clock.now + skew_s
    began_before = booted is not None and when is not None and not future and booted + skew_s <= when
    if boots and now_boot and now_boot not in boots and not began_before:
        return None
    if not (boots and now_boot) and booted is not None and when is not None and booted > when:
        return None
    reboot = f"this is the same boot ({now_boot}) a drain recorded" if now_boot and now_boot in boots else \
        f"the drain names another boot, but this one began before the drain ({booted:.0f} <= {when}): no reboot " \
        "since" if then and now_boot and began_before else "no reboot seen since"
    if any(d.get("reboot_only") is True for d in records):
        # NVIDIA's Xid 154 "Node Reboot Required" (NVML's recovery action 2, 7: system reboot): a GPU reset is no
        # repair of it, whatever record says one was done (hunt102)
        return (f"drained for {code}, and the driver asked for the node's reboot (Xid 154's recovery action: node "
                f"reboot required), which no GPU reset stands for: {reboot}; reboot it and revalidate")
    seen, why = resets
    uptime = uptime_after(records, now_boot)
    if seen is not None and uptime is not None and all(r.mono is not None for r in seen):
        # by the kernel's clock, which no step moves (a record past this boot's uptime is none of this boot's)
        if reset_after_uptime([r for r in seen if clock.uptime is None or (r.mono or 0.0) <= clock.uptime + 1],
                              uptime) is not None:
            return None
    elif seen is not None and when is not None and reset_since(seen, float(when), clock.now, skew_s) is not None:
        return None
    if seen is None:
        reset = f"GPU resets not read ({why})"
    else:
        failed = [r for r in seen if when is not None and float(when) < r.time <= (clock.now or r.time) + skew_s
                  and not r.success]
        ahead = [r for r in seen if clock.now is not None and r.time > clock.now + skew_s]
        reset = f"the last GPU reset since failed ({failed[-1].uuid})" if failed else \
            f"a GPU reset record stamped {ahead[-1].time - (clock.now or 0):.0f} s in the future is not believed " \
            f"(over {skew_s:g} s of clock skew, {clockskew.ENV}: it may predate the drain)" if ahead else "no GPU reset recorded since"
    return (f"drained for {code}, whose repair is a GPU reset or a reboot (NVIDIA's Xid catalog): {reboot}, "
            f"{reset}; {HOW}")


def reset_gpus(drain: dict[str, Any] | None, claimed: tuple[str, int] | None, clock: Clock, seen: list[Reset] | None,
               also: Sequence[dict[str, Any]] = (), skew_s: float = clockskew.DEFAULT_S) -> frozenset[str]:
    """The GPUs (UUIDs, lower case) whose successful reset since the drains repair_problem took for the repair, picked
    as it picks them: by the journal's monotonic stamps against this boot's drains where all have one, else by wall
    time within skew_s."""
    records = [d for d in (drain, *also) if d]
    uptime = uptime_after(records, boot_key(clock.boot_id))
    if not seen:
        return frozenset()
    if uptime is not None and all(r.mono is not None for r in seen):
        picked = [r for r in seen if (r.mono or 0.0) > uptime and (clock.uptime is None or (r.mono or 0.0) <= clock.uptime + 1)]
    else:
        when = latest_drain(records, claimed)
        picked = [r for r in seen if when is not None and float(when) < r.time
                  and (clock.now is None or r.time <= clock.now + skew_s)]
    return frozenset(r.uuid for r in picked if r.success)


def reboot_asked(report: dict[str, Any] | None) -> bool:
    """Whether the report's gpu check lists a GPU whose NVML recovery action is a node reboot (verify's gpu facts:
    `recovery_action` "reboot"), which no GPU reset stands for."""
    return any(dev.get("recovery_action") == "reboot" for dev in report_devices(report))


def report_devices(report: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The devices the report's gpu check lists (dicts only; none where it has no such check or list)."""
    checks = report.get("checks") if isinstance(report, dict) else None
    gpu = next((c for c in checks or [] if isinstance(c, dict) and c.get("name") == "gpu"), None)
    data = gpu.get("data") if isinstance(gpu, dict) else None
    devices = data.get("devices") if isinstance(data, dict) else None
    return [d for d in devices if isinstance(d, dict)] if isinstance(devices, list) else []


def _uuid(device: dict[str, Any]) -> str | None:
    return device["uuid"].strip().lower() if isinstance(device.get("uuid"), str) and device["uuid"].strip() else None


def faulted_gpus(report: dict[str, Any] | None, lines: list[str]) -> list[str] | None:
    """The GPUs a drain stood on, kept with it: the PCI address (xid.device_key) of each Xid the kernel log's evidence
    stands on (a drain-worthy one, a watched one that repeated) and each device the report calls lost (its UUID, else
    its bus id), at most 16. Return to service asks for the reset of these, not of any GPU."""
    found = xid.faulted_devices(xid.parse(lines))
    for d in report_devices(report):
        if d.get("lost") is True and (key := _uuid(d) or (xid.device_key(d["pci_bus_id"])
                                                          if isinstance(d.get("pci_bus_id"), str) else None)):
            found.add(key[:80])
    return sorted(found)[:16] or None


def repair_gpus(drain: dict[str, Any] | None, claimed: tuple[str, int] | None, clock: Clock, seen: list[Reset] | None,
                also: Sequence[dict[str, Any]] = (), skew_s: float = clockskew.DEFAULT_S
                ) -> tuple[frozenset[str], frozenset[str]]:
    """(the GPUs reset since the drains, the GPUs those drains named as faulted: their `faulted`)."""
    named = {str(g).lower() for d in (drain, *also) if d and isinstance(d.get("faulted"), list)
             for g in d["faulted"][:16] if isinstance(g, str)}
    return reset_gpus(drain, claimed, clock, seen, also, skew_s), frozenset(named)


def _unreset(gpus: frozenset[str], faulted: frozenset[str], devices: list[dict[str, Any]]) -> list[str]:
    """The faulted GPUs (by UUID, or by bus id through the report's devices) no reset names; one the report cannot
    place (no UUID beside its bus id) cannot be told and is not asked for."""
    by_bus = {xid.device_key(d["pci_bus_id"]): _uuid(d) for d in devices if isinstance(d.get("pci_bus_id"), str)}
    missing = []
    for g in sorted(faulted):
        uuid = g if g.startswith(("gpu-", "mig-")) else by_bus.get(xid.device_key(g))
        if uuid and uuid not in gpus:
            missing.append(g if uuid == g else f"{g} ({uuid})")
    return missing


def foreign_reset(gpus: frozenset[str], report: dict[str, Any] | None,
                  faulted: frozenset[str] = frozenset()) -> str | None:
    """Why the GPU reset taken for the repair repaired none of this node's GPUs, or None. A reset record names a UUID,
    and NVML's UUID is the board's own: a record naming no GPU the passing report lists (a logger line copied from
    another node, a UUID mistyped) is no reset of this node, and the drain it stood for is unrepaired (hunt95). A
    report listing no UUID cannot tell: the reset counts as before (any GPU's: the limit in docs/prolog.md)."""
    devices = report_devices(report)
    listed = {u for d in devices if (u := _uuid(d))}
    if gpus and (missing := _unreset(gpus, faulted, devices)):
        return (f"the GPU(s) the drain named ({', '.join(missing)[:200]}) have no successful reset recorded since it "
                f"(reset: {', '.join(sorted(gpus))[:160]}): a reset of another GPU is no repair of the faulted one "
                f"(NVIDIA's Xid catalog: reset that GPU); reset it and record it, or reboot ({HOW})")
    if not gpus or not listed or gpus & listed:
        return None
    return (f"the GPU reset recorded since the drain ({', '.join(sorted(gpus))[:160]}) names none of the {len(listed)} "
            "GPU(s) this node's preflight lists: a reset of another board repairs nothing here; reset this node's GPU "
            f"and record it, or reboot ({HOW})")


def unrepaired(spent: list[dict[str, Any]], resets: list[Reset], report: dict[str, Any] | None,
               clock: Clock, sees_all: bool = True) -> list[dict[str, Any]]:
    """The held kernel-log events a GPU reset spent at the gate (kernlog.spent_before: any GPU's reset) that no reset
    repaired, once the preflight's report places their GPUs: each event whose GPU's bus id the report lists beside a
    UUID, with no successful reset of that UUID after the event (or one that failed since), and every event where no
    successful reset names a GPU the report lists (another node's board). The gate's side of hunt95's rule for make
    undrain (foreign_reset): NVIDIA's Xid catalog asks for the reset of the GPU the Xid names, and a reset of another
    board left an Xid 48 held by the breaker spent, the node back in service on no repair. An event on a bus id the
    report does not list, where it places every GPU it lists and every successful reset names one of them, is held
    too: that GPU is gone from the node's view, and no reset of another board repaired it (hunt100). An event whose
    GPU the report cannot place (no bus id, no UUID, no report) stays spent: any GPU's reset counts (the documented
    limit). Where the report may list only some of
    the node's GPUs (not `sees_all`: a job's step or batch script given some GPUs, whose device cgroup hides the
    others from NVML), a reset of a GPU it does not list is no other node's board: a step given GPUs 0-2 drained a
    node whose GPU 3 had its Xid 48 reset as the catalog asks (hunt100)."""
    devices = report_devices(report)
    listed = {u for d in devices if (u := _uuid(d))}
    by_bus = {xid.device_key(d["pci_bus_id"]): u for d in devices if isinstance(d.get("pci_bus_id"), str)
              and (u := _uuid(d))}
    if not spent or not listed:
        return []
    if sees_all and not any(r.success and r.uuid in listed for r in resets):
        return list(spent)            # no reset of any board this node has: none of the events was repaired
    # every GPU the report lists placed by its bus id: an Xid's GPU at a bus id it does not list is one the node no
    # longer shows (fallen off the bus, taken out), and no reset of a board it does list repaired that one
    # (each as a PCI address: a bus id NVML could not read, "N/A", places no GPU)
    # and where every successful reset names a GPU it lists (one of a board it cannot see, a job's step given other
    # GPUs, may have been the Xid's: that stays spent, the limit)
    whole = len(by_bus) == len(devices) and all(xid.is_address(k) for k in by_bus) and \
        all(r.uuid in listed for r in resets if r.success)
    back = []
    for event in spent:
        keys = {xid.device_key(f.device) for f in xid.parse([event["line"]]) if f.device and f.kind != "sxid"}
        gpus = {by_bus[k] for k in keys if k in by_bus}
        if (whole and keys - set(by_bus)) or any(not _reset_after(resets, gpu, event, clock) for gpu in gpus):
            back.append(event)
    return back


def _reset_after(resets: list[Reset], gpu: str, event: dict[str, Any], clock: Clock) -> bool:
    """The last reset of `gpu` after the held event succeeded: by the journal's monotonic stamp against the event's
    kernel stamp where both have one, else by boot time + the kernel's stamp against the record's wall stamp; an
    event the clocks cannot place counts any of its resets."""
    def after(r: Reset) -> bool:
        if event["mono"] < 0:
            return True
        if r.mono is not None:
            return r.mono > event["mono"]
        return clock.booted is None or r.time > clock.booted + event["mono"]
    mine = sorted((r for r in resets if r.uuid == gpu and after(r)), key=lambda r: r.mono or r.time)
    return bool(mine) and mine[-1].success
