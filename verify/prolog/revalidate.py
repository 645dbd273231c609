"""`--revalidate` (`make undrain NODE=n`, run on the drained node itself): NVSentinel's return to service.

The node is resumed only when torchimages drained it, its history is whole and clean, it has not failed again within
the flap window, the repair NVIDIA's Xid catalog asks for is seen (verify/prolog/repair.py: a reboot, or a GPU reset
recorded since the drain), and the preflight passes now with every GPU the node should have (the larger of Slurm's
Gres and the count recorded at the drain; a GPU drain with neither is refused), and a drain that stood on kernel-log
evidence has the kernel log read again (never with --no-kernel-log). Exit 5 with one line otherwise.
"""
from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..shared import gpuunits
from ..shared.inforom import said as inforom_corrupted
from . import history, kernlog, repair, slurm, statefile
from .config import Config, Interrupted
from .deadline import Deadline, Overran
from .notes import _close, _note, _out, _say, proven_gpus, report_mig
from .rechecks import drained_checks
from .rechecks import recorded as is_record
from .repair import repair_problem
from .statefile import BREAKER_LOCK_WAIT_S
from .verdict import EXIT_FAULT, EXIT_NOT_ASSESSED, EXIT_PASS, EXIT_REFUSED, PASS, TIMEOUT_CODES, Verdict, not_assessed, one_line

# drains whose revalidation needs no GPU count: the shm or nccl check's, or a hung preflight's, are proven gone by the
# preflight passing again (on a CPU node too); any other (the gpu check's, Xids, a check not recorded) must see them all
NO_GPU_CHECKS = frozenset({"shm", "nccl", "preflight"})
# a skip that measured all the same: on a node without GPUs the all-reduce was verified over gloo (NCCL not exercised)
MEASURED_SKIPS = frozenset({("skip", "NCCL_NOT_EXERCISED")})
# xid.judge's codes: evidence only the kernel log gives (an Xid, an SXid, an NV_ERR status line)
KERNLOG_CODES = frozenset({"XID_HISTORY", "XID_REPEATED"})
STOPPED_S = 5.0                 # sinfo's time to tell whether a resume cut short by a stop took
# drains for a GPU's memory errors: NVIDIA's catalog repairs them at a reset (pages retired, rows remapped) and the
# repair is seen in the ECC counts read again, so a GPU whose ECC is off (or set to go off at the next reset), or
# whose InfoROM (where the counts and retirements are kept) is corrupted, proves none: its errors are not counted
MEMORY_CODES = frozenset({"ECC_UNCORRECTABLE", "ROW_REMAP_FAILED", "RETIREMENT_PENDING"})
# faults that come and go: a wrong result or bits that differ on repeat (SDC), NVLink errors, an Xid only the kernel
# log showed (Xid 48's double-bit error filed as XID_HISTORY). One passing preflight is one draw, no repair proven: the
# node returns only after cfg.return_passes in a row (--return-passes), NVSentinel's rule that a node is returned
# once its check stays healthy, not on one healthy sample. A hung preflight (PREFLIGHT_HUNG) is one too: a degrading
# GPU stalls its checker on most runs, not all, so one run that finished proved nothing; and so is the same stall
# confirmed within one run (TIMEOUT_CODES: a check that timed out again alone with more time), which one pass returned;
# and a hardware slowdown (THROTTLED: thermal, power brake), which comes with the load and the room's temperature
INTERMITTENT_CODES = frozenset({"SDC_MISMATCH", "KERNEL_FAILED", "NCCL_WRONG_RESULT", "NVLINK_ERRORS",
                                "PREFLIGHT_HUNG", "THROTTLED"}) | KERNLOG_CODES | TIMEOUT_CODES
STALL_CODES = TIMEOUT_CODES | {"PREFLIGHT_HUNG"}     # drains for a checker that stalls


def kernel_log_cause(drain: dict[str, Any] | None, claimed: tuple[str, int] | None,
                     also: list[dict[str, Any]]) -> str | None:
    """The code of a drain that stood on kernel-log evidence (the history's record of it, any drain since the node
    was last in service, or Slurm's reason), or None: its return to service must read the kernel log again."""
    for d in (d for d in (drain, *also) if d):
        if d.get("check") == "kernel-log" or d.get("code") in KERNLOG_CODES or d.get("kernel_log"):
            return str(d.get("kernel_log") or d.get("code"))
    return claimed[0] if claimed and claimed[0] in KERNLOG_CODES else None


def _same_host(slurm_host: str, host: str) -> bool:
    """Slurm's NodeHostName names this host: the same name, or the same short name where either is unqualified
    (slurmd matches its node by the host name, short or full); two full names must agree whole."""
    a, b = slurm_host.lower().rstrip("."), host.lower().rstrip(".")
    if not a or not b:
        return False
    if "." in a and "." in b:
        return a == b
    return a.split(".")[0] == b.split(".")[0]


def here_problem(node: str, host: str, info: dict[str, str] | None, why: str = "",
                 slurmd_name: str | None = None) -> str | None:
    """Why this host is not `node`, or None. A revalidation judges the host it runs on, so run anywhere else it
    would resume one node on another's preflight. The proof is Slurm's own record: the NodeHostName slurmctld holds
    for `node` must be this host's name (`host`: the kernel's, gethostname, which slurmd itself matches). A name
    given on the command line, the host name equal to the node name, or SLURMD_NODENAME (an environment variable
    anyone sets) prove nothing alone; a SLURMD_NODENAME naming another node contradicts it and refuses too."""
    fix = f"run it on that node (ssh {node} make undrain NODE={node})"
    if info is None:
        return (f"which host {node} is cannot be proven: Slurm's record of it was not read ({why or 'no answer'}); "
                f"{fix} once scontrol show node {node} answers")
    slurm_host = info.get("NodeHostName", "")
    if not slurm_host:
        return f"which host {node} is cannot be proven: scontrol show node {node} names no NodeHostName; {fix}"
    if not _same_host(slurm_host, host):
        return (f"this host ({host or 'no host name'}) is not {node} ({node}'s host is {slurm_host} in Slurm): {fix}")
    if slurmd_name and slurmd_name != node:
        return (f"this host runs Slurm's node {slurmd_name} (SLURMD_NODENAME), not {node}: {fix}, outside a job "
                "of another node")
    return None


def gpu_problem(report: dict[str, Any] | None, expected: int | None, mig_gres: bool = False) -> str | None:
    """Why the report does not show the GPUs the node should have (the larger of Slurm's Gres and the drain's
    count, in Slurm's units: a MIG device is one), or None."""
    if not expected:
        return None
    gpu = next((c for c in (report or {}).get("checks") or [] if isinstance(c, dict) and c.get("name") == "gpu"), None)
    if gpu is None or gpu.get("status") not in ("pass", "warn"):
        return f"the gpu check {'did not run' if gpu is None else gpu.get('status')}: the node should have {expected} GPU(s)"
    seen, mig = proven_gpus(report), report_mig(report)
    if seen is None and mig:
        return (f"a GPU is in MIG mode and the report's MIG devices cannot be counted: the {expected} GPU(s) the node "
                "should have are not proven")
    if mig_gres and not mig:
        # Slurm counts MIG devices (gpu:1g.10gb:7), the report physical GPUs: one cannot prove the other
        return (f"Slurm's Gres counts {expected} MIG device(s), and the report lists {seen or 0} GPU(s) with no MIG "
                "device: the MIG devices are not proven (verify's gpu check reads them from NVML)")
    if seen is None or seen < expected:
        return (f"the report proves {seen or 0} GPU(s){' and MIG device(s)' if mig else ''} (NVML's, or torch's where "
                f"fewer); the node should have {expected} (the larger of Slurm's Gres and the drain's count)")
    return None


def check_unjudged(report: dict[str, Any] | None, checks: frozenset[str]) -> str | None:
    """Why the report does not judge (pass or warn) each check a drain stood on, or None. The repair of a fault one
    check found is proven only by that check measuring again (NVSentinel's return to service reruns the check that
    failed): a pass whose nccl check was skipped (one rank, NCCL_SINGLE_RANK) or is missing says nothing of the
    all-reduce that returned wrong values."""
    listed = {c.get("name"): c for c in (report or {}).get("checks") or [] if isinstance(c, dict)}
    for name in sorted(checks):
        c = listed.get(name)
        if c is None or not (c.get("status") in ("pass", "warn") or (c.get("status"), c.get("code")) in MEASURED_SKIPS):
            how = f"holds no {name} check" if c is None else \
                f"has the {name} check {c.get('status')} ({one_line(str(c.get('code') or 'no code'))[:40]})"
            return (f"drained for a fault of the {name} check, and the passing report {how}: the check that found "
                    "the fault did not measure again, so its repair is not proven")
    return None


def memory_unproven(report: dict[str, Any] | None, codes: frozenset[str]) -> str | None:
    """Why the report cannot prove the repair of a memory-error drain (MEMORY_CODES), or None."""
    if not codes & MEMORY_CODES:
        return None
    devices = repair.report_devices(report)
    if not devices:
        return (f"drained for {', '.join(sorted(codes & MEMORY_CODES))}, and the passing gpu check lists no GPU's ECC "
                "facts (verify lists each device): the memory errors are not read again, their repair not proven")
    for dev in devices:
        ecc, name = dev.get("ecc"), f"GPU {dev.get('index')}"
        if isinstance(ecc, list) and any(mode is False for mode in ecc[:2]):
            now = "is off" if ecc[0] is False else "goes off at the next reset"
            return (f"drained for {', '.join(sorted(codes & MEMORY_CODES))}, and {name}'s ECC {now}: the memory errors "
                    "it was drained for are not counted, so their repair is not proven; enable it (nvidia-smi -e 1), "
                    "reset the GPU and revalidate")
        if errors := inforom_corrupted(dev):
            return (f"drained for {', '.join(sorted(codes & MEMORY_CODES))}, and {name}'s InfoROM is corrupted "
                    f"({'; '.join(errors)[:160]}): the ECC counts and retired pages that would show the repair cannot "
                    "be trusted (NVIDIA: reflash or replace the GPU)")
    return None


def _no_record(cfg: Config, events: list[dict[str, Any]], drain: dict[str, Any] | None) -> str | None:
    """Why the history holds no record of the node's current drain (`drain`: its last), or None."""
    where = history.path(cfg.state_dir, cfg.node)
    if drain is None:
        # Slurm shows our drain, the history none: another --state-dir than the prolog's, or a history removed; a
        # fault that came back (the flap window) cannot be told apart
        return (f"no drain of {cfg.node} in its history {where}: give the prolog's --state-dir (make undrain "
                "STATE_DIR=..., TORCHIMAGES_STATE_DIR), or resume it by hand after a look")
    if resumed := _resumed_after(events, drain):
        # the history's last drain was resumed since: this drain's line was never written (a full disk at the drain)
        # or it is not the prolog's (our reason copied back by hand); a fault that came back within the flap window
        # of that resume cannot be told apart, as with no drain at all
        return (f"no drain of {cfg.node} in its history {where} since it was resumed on {resumed.get('time')}: this "
                "drain's record is missing, so a fault that came back cannot be told apart; resume it by hand after "
                "a look")
    return None


def _resumed_after(events: list[dict[str, Any]], drain: dict[str, Any]) -> dict[str, Any] | None:
    """The resume logged after `drain` (the history's last drain), or None."""
    at = next(i for i in range(len(events) - 1, -1, -1) if events[i] is drain)
    return next((e for e in events[at + 1:] if e["event"] == "resume"), None)


def flagged_since_service(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last `inspect` the gate recorded since the node was last in service (history.last_in_service), or None."""
    return next((e for e in reversed(events[history.last_in_service(events) + 1:]) if e["event"] == "inspect"), None)


def _flapped(cfg: Config, events: list[dict[str, Any]]) -> str | None:
    """Why the node is flagged for hardware inspection (its fault came back within the flap window), or None."""
    if flap := history.failed_again_after_resume(events, cfg.flap_window_s, time.time(), cfg.clock_skew_s):
        _note(cfg, "inspect", None, flap)
        return f"flagged for hardware inspection: {flap}"
    if flagged := flagged_since_service(events):
        # the gate's own flag at the drain, under its --flap-window (slurm.conf's prolog line: 30 d), stands whatever
        # window this run was given (make undrain's default 7 d): a node the gate sent to hardware inspection is
        # returned only by a person who looked (NVSentinel: a flapping node is quarantined, not auto-remediated)
        return (f"flagged for hardware inspection when it was drained ({flagged.get('time')}: "
                f"{str(flagged.get('detail'))[:200]}); resume it by hand once inspected")
    return None


def _refused(cfg: Config, line: str, note: bool = True) -> tuple[int, Verdict | None, dict[str, Any] | None,
                                                                   dict[str, int]]:
    if note:
        _note(cfg, "resume-refused", None, line)
    _close(cfg, f"REFUSED {cfg.node}: {line}; not resumed")
    return EXIT_REFUSED, None, None, {}


def _proof(cfg: Config, row: slurm.NodeRow, info: dict[str, str] | None) -> str | None:
    """Why the node cannot be resumed before its preflight runs (its history, the repair), or None; sets the GPUs
    the preflight must see, and the kernel-log evidence its drain stood on (the log it must read)."""
    past = history.read(cfg.state_dir, cfg.node)
    if past.error:
        return f"{past.error}; without its history a fault that came back cannot be told apart"
    if past.garbled:
        return f"{past.garbled} of {history.path(cfg.state_dir, cfg.node)}: a garbled history is not a clean one; " \
               "look at the lines, remove them, and revalidate again"
    if past.cut:
        # only its last READ_CAP bytes were read: the resume before the last drain (NVSentinel's flap rule) may lie in
        # what was not, and a fault that came back would read as a first one
        return (f"{history.path(cfg.state_dir, cfg.node)} is larger than the {history.READ_CAP} bytes a reader takes "
                "(it never rotated: no lock on its file system?): read in part, a fault that came back cannot be told "
                "apart; keep its drains, resumes and inspections and its last lines, and revalidate again")
    if flap := _flapped(cfg, past.events):
        return flap
    drain = history.last_drain(past.events)
    if missing := _no_record(cfg, past.events, drain):
        return missing
    claimed = slurm.parse_reason(row.reason_text, row.name)
    if drain and claimed and not is_record(drain, claimed[1]):
        drain = None              # the history's last drain is another one: this drain's facts are unknown
    also = history.current_drains(past.events)           # every fault it was drained for since last in service
    cfg.kernel_log_cause = kernel_log_cause(drain, claimed, also)
    cfg.drained_codes = frozenset(str(c) for c in (*(d.get("code") for d in (drain, *also) if d),
                                                   claimed[0] if claimed else None) if c)
    cfg.drained_checks = drained_checks((drain, *also), claimed)      # every check where the drain's is unknown
    if cfg.kernel_log_cause and not cfg.kernel_log:
        # the evidence the drain stood on is read again, or the node is not proven: never resumed unseen
        return (f"drained for {cfg.kernel_log_cause} on kernel-log evidence (NVIDIA's Xid catalog): return to "
                "service reads the kernel log to see it has not come back; run it without --no-kernel-log")
    clock, booted = kernlog.host_clock(cfg.proc), kernlog.boot_time(cfg.proc)
    if repair_problem(drain, claimed, clock, booted, also=also, skew_s=cfg.clock_skew_s):   # no reboot: a reset will do
        resets = repair.read_resets(cfg.deadline.bound(kernlog.TIMEOUT_S))
        if problem := repair_problem(drain, claimed, clock, booted, resets, also, cfg.clock_skew_s):
            return problem
        _say(f"the GPU reset recorded since the drain is its repair ({repair.RESET_TAG}); no reboot needed")
        cfg.reset_gpus, cfg.faulted_gpus = repair.repair_gpus(drain, claimed, clock, resets[0], also, cfg.clock_skew_s)
    gres = slurm.gres_gpus((info or {}).get("Gres", ""))
    recorded = (drain or {}).get("gpus")
    recorded = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0 else None
    # evidence that disagrees proves the larger: a Gres below the GPUs the node had at its drain (a slurm.conf line
    # edited, another node's) would resume it with GPUs missing. The shell's own SLURM_GPUS_ON_NODE (make undrain
    # from a job's shell on the node: that job's share) is no count of the node's: it only raises the bar
    known = max(gres or 0, recorded or 0)
    cfg.expected_gpus = max(known, cfg.expected_gpus or 0) or None
    if gres and recorded and gres != recorded:
        _say(f"Slurm's Gres names {gres} GPU(s), the drain recorded {recorded}: the preflight must see {max(gres, recorded)}")
    gpu_drain = drain is None or any(d.get("check") not in NO_GPU_CHECKS for d in (drain, *also)) \
        or repair.needs_repair(drain, claimed, also) is not None
    if not known and gpu_drain:
        # a GPU the node lost is proven back only against the count it should have: without one, a node whose
        # NVML sees no GPU at all would pass
        return (f"the GPUs {cfg.node} should have are unknown (no Gres=gpu:N for it in Slurm, "
                f"{'no record of this drain' if drain is None else 'no count recorded at the drain'}): set the node's "
                "Gres in slurm.conf, or read nvidia-smi on it and resume it by hand")
    return None


def _drain_ids(cfg: Config, event: str = "drain") -> set[str] | None:
    """The ids of the drains (or another event's) in the node's history now (None: it cannot be read)."""
    past = history.read(cfg.state_dir, cfg.node)
    return None if past.error else {str(e.get("id")) for e in past.events if e["event"] == event}


def _resumed_meanwhile(cfg: Config, resumes: set[str] | None, since: float | None = None) -> str | None:
    """Why the node is back in service by another revalidation's proof, or None. Two `make undrain` of one node at
    once (a person and a script) each pass their preflight; the first resumes it, and the second found "its drain
    changed" and exited 5, refused, for a node in service on a proof (a script that pages on a refusal paged). It is
    so only where Slurm shows the node not drained and the history holds a resume this run did not see at its start
    (`resumes`: the ids it saw; or, before this run read any, one stamped since it began, `since`, and not in the
    future), with no drain after it."""
    if resumes is None and since is None:
        return None
    rows, _ = slurm.rows(node=cfg.node)
    now = next((r for r in rows or [] if r.name == cfg.node), None)
    past = history.read(cfg.state_dir, cfg.node)
    if now is None or now.drained or past.error:
        return None
    drained_at = max((i for i, e in enumerate(past.events) if e["event"] == "drain"), default=-1)
    after = past.events[drained_at + 1:]           # a drain after the other's resume: this one is no longer in service

    def unseen(event: dict[str, Any]) -> bool:
        if resumes is not None:
            return str(event.get("id")) not in resumes
        epoch = event.get("epoch")
        return (since is not None and isinstance(epoch, (int, float)) and not isinstance(epoch, bool)
                and math.isfinite(epoch) and since <= epoch <= time.time() + cfg.clock_skew_s)
    last = next((e for e in reversed(after) if e["event"] == "resume" and unseen(e)), None)
    if last is None:
        return None
    when = "while this one's preflight ran" if resumes is not None else "since this one began"
    tail = ", and this one's passes too" if resumes is not None else ": in service on its proof"
    return (f"another revalidation resumed it {when} ({last.get('time')}: "
            f"{one_line(str(last.get('detail')))[:120]}){tail}")


def _resumed_since_start(cfg: Config) -> str | None:
    """Why a node Slurm shows in service is so by another revalidation begun with this one, or None. The second of
    two `make undrain` started at once may read Slurm only after the first resumed the node (its interpreter slower to
    start): "not drained (idle)", exit 5, was a refusal for a node in service on a proof. The first resumes under the
    breaker's lock and records its resume before letting it go: this waits for that lock, so a resume Slurm shows is
    on record when the history is read (without a lock to be had, it is read as it is)."""
    if cfg.started is None:
        return None
    with contextlib.ExitStack() as held:
        with contextlib.suppress(OSError):
            held.enter_context(statefile.locked(os.path.join(cfg.state_dir, "breaker.lock"),
                                                cfg.deadline.bound(BREAKER_LOCK_WAIT_S)))
        return _resumed_meanwhile(cfg, None, cfg.started)


def _drained_anew(cfg: Config, before: slurm.NodeRow, drains: set[str] | None = None) -> str | None:
    """Why the drain this revalidation proved repaired is no longer the node's, or None. The preflight takes a minute
    or more; meanwhile an operator may drain the node by hand for a fault of their own (a PSU, a cable), or a prolog
    record another drain: resuming then would return a node someone else took out of service, on a proof of another
    drain (NVSentinel's rule: never undo a cordon that is not ours). Slurm's state is read again just before."""
    rows, why = slurm.rows(node=cfg.node)
    now = next((r for r in rows or [] if r.name == cfg.node), None)
    if now is None:
        return f"its state cannot be read again before the resume ({why or 'sinfo does not list it'})"
    if not now.ours or now.reason_text != before.reason_text:
        return (f"its drain changed while the preflight ran (was {before.reason_text!r}, now "
                f"{(now.reason_text if now.drained else now.state)!r}): that drain is not the one proven repaired")
    # a fault recorded under the same reason meanwhile (a running job's first step, or a prolog of a job that began
    # before the drain: "already drained by torchimages") is a drain this preflight never saw: its repair is owed
    after = _drain_ids(cfg)
    if drains is None or after is None or after - drains:
        return ("a drain was recorded in its history while the preflight ran (another fault of this node, under the "
                "same reason): that drain is not the one proven repaired")
    return None


def _stopped_resuming(cfg: Config, before: slurm.NodeRow, stop: BaseException) -> None:
    """A stop signal or the cap while scontrol resumed the node: a resume Slurm took is on record (NVSentinel's flap
    rule reads the resume before a drain: one without its line hid the fault that came back), one it did not is not."""
    slurm.limit = lambda: STOPPED_S
    rows, _ = slurm.rows(node=cfg.node)
    now = next((r for r in rows or [] if r.name == cfg.node), None)
    if now is not None and now.reason_text == before.reason_text and now.drained:
        return                    # still drained as it was: nothing was resumed
    _note(cfg, "resume", None, f"resumed, then stopped ({stop}) before its record: "
          f"{'its state unread after' if now is None else now.state}")


Assess = Callable[[Config], tuple[Verdict, dict[str, Any] | None, dict[str, int]]]


def _proven(cfg: Config, verdict: Verdict, report: dict[str, Any] | None, info: dict[str, str] | None) -> Verdict:
    """A passing preflight that still proves no repair is not assessed: fewer GPUs than the node has, a memory-error
    drain whose ECC counts are not read, a kernel-log drain whose kernel log was not read now."""
    mig_gres = gpuunits.mig_typed((info or {}).get("Gres", ""))
    if verdict.kind == PASS and (problem := gpu_problem(report, cfg.expected_gpus, mig_gres)):
        verdict = not_assessed("GPU_COUNT_UNPROVEN", problem, "gpu")
    if verdict.kind == PASS and verdict.stalled and (stall := cfg.drained_codes & STALL_CODES):
        # drained for a checker that stalls: a check that stalled again proves it is not gone (a busy host, at the gate)
        verdict = not_assessed("PREFLIGHT_TIMEOUT", f"drained for {', '.join(sorted(stall))}, and this preflight's "
                               f"check stalled again, ending only alone with more time ({verdict.summary})", "preflight")
    if verdict.kind == PASS and (problem := check_unjudged(report, cfg.drained_checks)):
        verdict = not_assessed("REPAIR_UNPROVEN", problem, sorted(cfg.drained_checks)[0])
    if verdict.kind == PASS and (problem := memory_unproven(report, cfg.drained_codes)):
        verdict = not_assessed("GPU_NOT_ASSESSED", problem, "gpu")
    if verdict.kind == PASS and (problem := repair.foreign_reset(cfg.reset_gpus, report, cfg.faulted_gpus)):
        verdict = not_assessed("REPAIR_UNPROVEN", problem, "gpu")
    if verdict.kind == PASS and cfg.kernel_log_cause and not cfg.kernel_log_read:
        verdict = not_assessed("KERNEL_LOG_UNREAD", f"drained for {cfg.kernel_log_cause} on kernel-log evidence, and "
                               "the kernel log was not read now: the Xid may be back unseen; let this user read it "
                               "(kernel.dmesg_restrict, the systemd-journal group) or run it as root", "kernel-log")
    return verdict


def passes_needed(cfg: Config) -> int:
    """Passing preflights in a row this drain's return to service needs: cfg.return_passes for an intermittent fault
    (INTERMITTENT_CODES, or any drain that stood on kernel-log evidence), else one."""
    return cfg.return_passes if cfg.drained_codes & INTERMITTENT_CODES or cfg.kernel_log_cause else 1


def _assessed(cfg: Config, assess: Assess, info: dict[str, str] | None) -> tuple[Verdict, dict[str, Any] | None,
                                                                                 dict[str, int]]:
    """The preflight, proven (_proven), run passes_needed times while it passes, each under the prolog's own cap
    (--budget + --grace: the whole run's cap is that times --return-passes); the first that does not pass is the
    verdict, so a fault that comes back on the third run keeps the node drained."""
    outer, need = cfg.deadline, passes_needed(cfg)
    codes = ", ".join(sorted(cfg.drained_codes & INTERMITTENT_CODES) or [str(cfg.kernel_log_cause)])
    try:
        for n in range(1, need + 1):
            cfg.deadline = Deadline(min(cfg.budget + cfg.grace_s, outer.left()), outer.clock)
            verdict, report, xids = assess(cfg)
            verdict = _proven(cfg, verdict, report, info)
            if verdict.kind != PASS:
                if n > 1:
                    verdict = replace(verdict, summary=f"{verdict.summary} (after {n - 1} passing run(s) of the "
                                      f"{need} in a row a drain for {codes} needs)")
                break
            if n < need:
                _say(f"preflight {n} of {need} passes: drained for {codes}, a fault that comes and goes; return to "
                     f"service needs {need} passes in a row (--return-passes, TORCHIMAGES_RETURN_PASSES)")
            elif need > 1:
                verdict = replace(verdict, summary=f"{verdict.summary} ({need} passes in a row)")
    finally:
        cfg.deadline = outer
    return verdict, report, xids


def revalidate(cfg: Config, assess: Assess) -> tuple[int, Verdict | None, dict[str, Any] | None, dict[str, int]]:
    """The return to service of cfg.node; `assess` is the gate's own (cli.assess: the kernel log, verify, its
    confirmation)."""
    info, why = slurm.node_info(cfg.node)
    if problem := here_problem(cfg.node, cfg.host, info, why, cfg.slurmd_name):
        return _refused(cfg, problem, note=False)
    rows, why = slurm.rows(node=cfg.node)
    row = next((r for r in rows or [] if r.name == cfg.node), None)
    if row is None:
        _close(cfg, f"cannot read {cfg.node}'s state: {why or 'sinfo does not list it'}; nothing done")
        return EXIT_NOT_ASSESSED, None, None, {}
    if not row.ours:
        if not row.drained and (other := _resumed_since_start(cfg)):
            _close(cfg, f"RESUMED {cfg.node} already: {other}")
            return EXIT_PASS, None, None, {}
        whose = f"drained with another reason ({row.reason_text!r})" if row.drained else f"not drained ({row.state})"
        _note(cfg, "resume-refused", None, f"{whose}: left alone")
        _close(cfg, f"REFUSED {cfg.node} is {whose}: torchimages resumes only the nodes it drained")
        return EXIT_REFUSED, None, None, {}
    drains = _drain_ids(cfg)          # read before the proof: a drain recorded after this is one the proof never saw
    resumes = _drain_ids(cfg, "resume")   # and a resume recorded after this is another revalidation's
    if problem := _proof(cfg, row, info):
        return _refused(cfg, problem, note=False)
    if (uptime := kernlog.host_clock(cfg.proc).uptime) is not None:
        # the kernel log since the repair is read whole, not the gate's lookback (24 h): an Xid logged two days after
        # the repair reboot, the node drained all weekend, is the fault back all the same
        cfg.lookback_s = max(cfg.lookback_s, uptime + 60)
    verdict, report, xids = _assessed(cfg, assess, info)
    _out(verdict.line())          # never raises: a print that failed never skips the resume's refusal
    if verdict.kind != PASS:
        status = EXIT_FAULT if verdict.drains else EXIT_NOT_ASSESSED
        _note(cfg, "resume-refused", verdict.code, verdict.summary)
        _close(cfg, f"{cfg.node} stays drained: {verdict.code or 'no verdict'}")
        return status, verdict, report, xids
    lock = os.path.join(cfg.state_dir, "breaker.lock")
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(statefile.locked(lock, cfg.deadline.bound(BREAKER_LOCK_WAIT_S)))
        except statefile.LockBusy as exc:
            # a gate run of this node is draining it now (or a prolog of another node claims): its drain is unseen yet
            line = f"the breaker's lock was not had ({exc.strerror}): a drain may be under way; revalidate again"
            _note(cfg, "resume-refused", None, line)
            _close(cfg, f"{cfg.node}: {line}; not resumed")
            return EXIT_NOT_ASSESSED, verdict, report, xids
        except OSError as exc:    # no lock on this file system, a link or FIFO in its place: as the drain does
            _say(f"the breaker's lock {lock} cannot be taken ({statefile.problem(exc, lock)}): resuming without it")
        return _resume(cfg, row, drains, verdict, report, xids, resumes)


def _resume(cfg: Config, row: slurm.NodeRow, drains: set[str] | None, verdict: Verdict,
            report: dict[str, Any] | None, xids: dict[str, int], resumes: set[str] | None = None) -> tuple[int, Verdict | None, dict[str, Any] | None,
                                                                         dict[str, int]]:
    """The last look and the resume, under the breaker's lock (the lock a gate run of this node takes to drain it):
    a gate run that found a new fault while the preflight ran either recorded its drain before the last look (seen:
    refused) or drains the node once it is resumed. Without the lock, a drain recorded between the last look and the
    resume ("already drained by torchimages": Slurm's reason stays) was undone by it: a node with a fault found a
    second ago was returned to service, its history ending in our resume."""
    if changed := _drained_anew(cfg, row, drains):
        if other := _resumed_meanwhile(cfg, resumes):
            _close(cfg, f"RESUMED {cfg.node} already: {other}")
            return EXIT_PASS, verdict, report, xids
        _note(cfg, "resume-refused", None, changed)
        if changed.startswith("its state cannot be read"):     # the tool's trouble: not assessed, as above
            _close(cfg, f"{cfg.node}: {changed}; not resumed")
            return EXIT_NOT_ASSESSED, verdict, report, xids
        _close(cfg, f"REFUSED {cfg.node}: {changed}; not resumed")
        return EXIT_REFUSED, verdict, report, xids
    try:
        refused = slurm.scontrol("update", f"nodename={cfg.node}", "state=resume", dry_run=cfg.dry_run)
    except (Interrupted, Overran) as stop:
        _stopped_resuming(cfg, row, stop)
        raise
    if refused:
        _note(cfg, "resume-refused", None, refused)
        _close(cfg, refused)
        return EXIT_REFUSED, verdict, report, xids
    if cfg.dry_run:               # not resumed: no resume in the history (a later drain would read as a flap)
        _close(cfg, f"DRY RUN {cfg.node}: the preflight passes and torchimages had drained it: not resumed (--dry-run)")
        return EXIT_PASS, verdict, report, xids
    _note(cfg, "resume", None, verdict.summary)
    _close(cfg, f"RESUMED {cfg.node}: the preflight passes and torchimages had drained it ({row.reason_text})")
    return EXIT_PASS, verdict, report, xids
