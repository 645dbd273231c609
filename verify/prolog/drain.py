"""The drain, behind NVSentinel's breaker: count, claim (our signed reason), re-count, and give a claim back that
took the partition past its share or that cannot be verified; what return to service must prove kept with the drain.

Split from cli.py (the gate's run: assess, then act): this is the act on a host fault, cli.act its entry.
"""
from __future__ import annotations

import dataclasses
import os
import random
import time
from typing import Any

from . import history, kernlog, repair, slurm, statefile, xid
from .config import Config, Interrupted
from .deadline import Overran
from .notes import _close, _note, _report_gpus, _say
from .repair import REBOOT_CODES
from .verdict import EXIT_BREAKER, EXIT_FAULT, EXIT_NOT_ASSESSED, EXIT_PASS, FAULT, NOT_ASSESSED, PASS, Verdict

DRAINED = -1                    # _claim's answer when the node was drained (the exit status is EXIT_FAULT)
RACED = -2                      # _claim's answer when a claim was given back for racing ones: claim again
CLAIM_TRIES = 3                 # claims at most, each after a random wait (racing prologs stop racing)
RETRY_WAIT_S = (0.2, 2.0)       # the random wait before claiming again, bounded by the run's cap
GIVE_BACK_S = 5.0               # scontrol's time to give back a claim a stop signal cut short (after the cap too)
DEV = "/dev"                    # where NVIDIA's driver makes its device files (nvidia0, nvidia1, ...)


def driver_gpus(dev: str | None = None) -> int | None:
    """The GPUs NVIDIA's driver made device files for (/dev/nvidia0, nvidia1, ...: at its load, read without NVML,
    which a stuck GPU hangs); None where there are none or the folder cannot be read."""
    try:
        names = os.listdir(dev or DEV)
    except OSError:
        return None
    return sum(1 for n in names if n.startswith("nvidia") and n[6:].isascii() and n[6:].isdigit()) or None


def _drain_facts(cfg: Config, v: Verdict, report: dict[str, Any] | None) -> dict[str, Any]:
    """What return to service must prove, kept with the drain: the GPUs the node had, its boot, the repair asked."""
    # the node's count, not the job's: Slurm allocated a job some of the GPUs (SLURM_JOB_GPUS), NVML lists them all
    # (a lost one too); a revalidation without Slurm's Gres proves the repair against the larger. A run with no
    # report to count (a hung preflight: PREFLIGHT_HUNG) counts the driver's device files, so that a node whose NVML
    # sees no GPU after its reboot is never resumed on its shm check alone
    gpus = max((n for n in (cfg.expected_gpus, _report_gpus(report)) if n), default=None)
    if gpus is None and report is None:
        gpus = driver_gpus()
    # the kernel log's evidence held at the drain (an Xid with a gpu check's fault too): return to service reads it
    findings = xid.parse([e["line"] for e in cfg.kern.held]) if cfg.kern is not None else []
    held = xid.judge(findings) if cfg.kern is not None else None
    clock = kernlog.host_clock(cfg.proc)
    # the boot and the seconds since it (which no clock step moves): a GPU reset record is after the drain by them
    return {"gpus": gpus, "boot_id": clock.boot_id or None, "uptime": clock.uptime,
            "action": "reboot" if v.code in REBOOT_CODES else None, "check": v.check,
            "kernel_log": held[0] if held else None,
            # the driver asked for the node's reboot (Xid 154, or NVML's recovery action): no GPU reset repairs it
            "reboot_only": True if any(f.reboot for f in findings) or repair.reboot_asked(report) else None,
            "faulted": repair.faulted_gpus(report, [e["line"] for e in cfg.kern.held] if cfg.kern is not None else [])}


def regained(cfg: Config, report: dict[str, Any] | None) -> tuple[str, str] | None:
    """The kernel log's evidence once the preflight's report places the GPUs of the held events a GPU reset spent at
    the gate (cli.kernel_evidence): those no reset of their own GPU repaired are held again and saved, and judged
    (xid.judge); None where none is (repair.unrepaired: NVIDIA's catalog asks for the reset of the GPU the Xid names)."""
    spent, cfg.spent = cfg.spent, ([], [])       # this run's only (a revalidation assesses again)
    # the report lists every GPU of the node but in a job's environment given some (its device cgroup hides the rest)
    sees_all = not cfg.job_env or cfg.job_gpus is None
    if cfg.kern is None or not (back := repair.unrepaired(*spent, report, kernlog.host_clock(cfg.proc), sees_all)):
        return None
    cfg.kern = dataclasses.replace(cfg.kern, held=back + cfg.kern.held)
    if problem := kernlog.save(cfg.state_dir, cfg.node, cfg.kern):
        cfg.notes.append(problem)
    cfg.notes.append(f"{len(back)} held kernel-log event(s) stand again: the GPU reset recorded since names no reset "
                     "of their GPU (NVIDIA's Xid catalog: reset that GPU, or reboot)")
    return xid.judge(xid.parse([e["line"] for e in cfg.kern.held]))


def _refuse_drain(cfg: Config, v: Verdict, detail: str, line: str) -> int:
    _note(cfg, "drain-refused", v.code, detail)
    _close(cfg, line)
    return EXIT_BREAKER


def _claim(cfg: Config, v: Verdict, report: dict[str, Any] | None, last_try: bool = True) -> int:
    """Count, claim (drain with our signed reason), re-count: a claim that took the partition past the breaker
    (prologs of other nodes claiming at the same time) is given back. Called under the breaker's lock. DRAINED, or
    the exit status of a drain not done."""
    rows, why = slurm.rows(cfg.partition)
    if rows is None:
        return _refuse_drain(cfg, v, f"breaker cannot count: {why}", f"{v.code} on {cfg.node} is the host's, but the "
                             f"breaker cannot count drained nodes ({why}): not drained")
    me = next((r for r in rows if r.name == cfg.node), None)
    if me is None:                # another pool's count (a --partition this node is not in) is no breaker of its own
        where = f"partition {cfg.partition}" if cfg.partition else "the cluster"
        return _refuse_drain(cfg, v, f"breaker cannot count: {cfg.node} is not listed in {where}",
                             f"{v.code} on {cfg.node} is the host's, but sinfo does not list {cfg.node} in {where}: "
                             "the breaker cannot count its pool; not drained (check --partition)")
    if me.drained and not me.ours:
        return _refuse_drain(cfg, v, f"already drained by someone else ({me.reason_text})", f"{v.code} on {cfg.node} "
                             f"is the host's; it is already drained with another reason ({me.reason_text!r}): left so")
    if me.taken_out and not me.ours:
        # NVSentinel's rule, never undo a cordon that is not ours: our drain would replace their reason, and make
        # undrain's resume would clear their DOWN or FAIL; the node is out of service already, the evidence kept
        return _refuse_drain(cfg, v, f"already out of service ({me.state[:40]}) by someone else ({me.reason_text})",
                             f"{v.code} on {cfg.node} is the host's; it is already out of service ({me.state[:40]}) "
                             f"with another reason ({me.reason_text!r}): left so")
    if me.ours and not cfg.dry_run:
        # drained by torchimages a moment ago (another prolog of this node: jobs starting together): Slurm's reason
        # stays, this fault is recorded as a drain too, and return to service owes the repair of each
        _note(cfg, "drain", v.code, f"already drained by torchimages ({me.reason_text[:80]}): {v.summary}",
              _drain_facts(cfg, v, report))
        _say(f"{v.code} on {cfg.node} is the host's; it is already drained by torchimages: its reason stays")
        _settle(cfg)
        return DRAINED
    gate = slurm.breaker(rows, cfg.node, cfg.breaker)
    if gate.open:
        return _refuse_drain(cfg, v, gate.line(cfg.breaker, cfg.partition), f"BREAKER {v.code} on {cfg.node} is the "
                             f"host's, but {gate.line(cfg.breaker, cfg.partition)}: not drained; look at the drained "
                             "nodes first (sinfo -R)")
    text = slurm.reason(cfg.node, str(v.code), v.summary, time.time())
    if cfg.dry_run:
        # nothing was drained: the history says so, the kernel log's evidence stays held for a real run, and the exit
        # is "not drained" (under Prolog= 0: a dry run in slurm.conf must not have Slurm drain the node itself)
        slurm.scontrol("update", f"nodename={cfg.node}", "state=drain", f"reason={text}", dry_run=True)
        return _refuse_drain(cfg, v, "--dry-run: not drained", f"DRY RUN {v.code} on {cfg.node} is the host's: "
                             "not drained (--dry-run)")
    cfg.claim_open = True             # until re-counted and recorded, or given back (_abandon: a stop meanwhile)
    if refused := slurm.scontrol("update", f"nodename={cfg.node}", "state=drain", f"reason={text}"):
        cfg.claim_open = False
        _note(cfg, "drain-refused", v.code, refused)
        _close(cfg, f"{v.code} on {cfg.node} is the host's, but the drain failed: {refused}")
        # under Prolog= exit 1 would have Slurm drain the node itself ("Prolog error"): a drain without our reason,
        # which no breaker counts (a busy slurmctld refusing every prolog's scontrol of a bad roll-out drained the
        # partition that way) and make undrain cannot return; not drained, the kernel log's evidence still held. A
        # first step still fails its job (exit 1): that is no drain
        return EXIT_BREAKER if cfg.under_prolog or cfg.mode == "prolog" else EXIT_FAULT
    return _recount(cfg, v, report, last_try)


def _recount(cfg: Config, v: Verdict, report: dict[str, Any] | None, last_try: bool = True) -> int:
    """After the claim, count again: a claim that took the partition past the breaker, or one whose breaker cannot
    be verified (sinfo fails, lists nothing, or no longer lists this node), is given back, as a count that cannot be
    had before the claim refuses the drain: the tool's trouble never drains. A claim given back for racing ones is
    RACED (unless `last_try`): every racer gave its claim back, and the breaker's share went undrained."""
    again, why = slurm.rows(cfg.partition)
    if again is None or not any(r.name == cfg.node for r in again):
        why = why or f"sinfo no longer lists {cfg.node}"
        return _give_back(cfg, v, report, f"breaker cannot count after the claim: {why}", None,
                          f"{v.code} on {cfg.node} is the host's, but the breaker cannot count drained nodes after "
                          f"the claim ({why}): this drain was given back, not drained")
    if slurm.over(again, cfg.node, cfg.breaker):
        gate = slurm.breaker(again, cfg.node, cfg.breaker).line(cfg.breaker, cfg.partition)
        if not (me := next(r for r in again if r.name == cfg.node)).ours:
            # drained meanwhile under another reason (an operator's, Slurm's own): no claim of ours to give back, and
            # a resume would undo their drain (NVSentinel's rule: never undo a cordon that is not ours)
            cfg.claim_open = False
            return _refuse_drain(cfg, v, f"{gate}; drained meanwhile with another reason ({me.reason_text[:80]})",
                                 f"{v.code} on {cfg.node} is the host's; it was drained meanwhile with another reason "
                                 f"({me.reason_text!r}): left so")
        if last_try:
            return _give_back(cfg, v, report, gate, "claim given back", f"BREAKER {v.code} on {cfg.node}: other "
                              f"nodes were drained at the same time and {gate}: this drain was given back")
        if kept := slurm.scontrol("update", f"nodename={cfg.node}", "state=resume"):
            return _give_back_failed(cfg, v, report, gate, kept)
        cfg.claim_open = False
        _say(f"BREAKER {v.code} on {cfg.node}: other nodes were drained at the same time and {gate}: given back; "
             "claiming again after a random wait")
        return RACED
    _note(cfg, "drain", v.code, v.summary, _drain_facts(cfg, v, report))
    cfg.claim_open = False
    _settle(cfg)
    return DRAINED


def _give_back(cfg: Config, v: Verdict, report: dict[str, Any] | None, cause: str, done: str | None,
               line: str) -> int:
    """Resume the node just claimed (for `cause`); EXIT_BREAKER, or DRAINED when Slurm keeps it drained with our
    reason. The history's detail is `done: cause`."""
    if kept := slurm.scontrol("update", f"nodename={cfg.node}", "state=resume"):
        return _give_back_failed(cfg, v, report, cause, kept)
    cfg.claim_open = False
    return _refuse_drain(cfg, v, f"{done}: {cause}" if done else cause, line)


def _give_back_failed(cfg: Config, v: Verdict, report: dict[str, Any] | None, cause: str, kept: str) -> int:
    """Slurm kept the node drained with our reason: that is a drain, on record with what return to service must
    prove, never a "given back"."""
    _say(f"BREAKER {v.code} on {cfg.node}: {cause}, but the drain could not be given back ({kept}): it stays drained")
    _note(cfg, "drain", v.code, f"kept: the give-back failed ({kept[:120]}): {v.summary}", _drain_facts(cfg, v, report))
    cfg.claim_open = False
    _settle(cfg)
    return DRAINED


def _abandon(cfg: Config, v: Verdict, report: dict[str, Any] | None, stop: BaseException) -> None:
    """A stop signal (Slurm's, an operator's) or the cap came between the claim and its re-count: the claim was never
    verified against the breaker, so it is given back as a re-count that cannot be had gives it back (NVSentinel's
    breaker); it stayed drained with our reason and no drain on record, said "in service" (make undrain then found
    no drain to prove, the breaker an unverified claim). A give-back Slurm refuses is a drain on record."""
    cfg.claim_open = False
    slurm.limit = lambda: GIVE_BACK_S
    why = f"stopped ({stop}) after the claim, before the breaker re-counted"
    rows, _ = slurm.rows(node=cfg.node)
    if (me := next((r for r in rows or [] if r.name == cfg.node), None)) is not None and not me.ours:
        # stopped while scontrol drained it, before Slurm took the drain: there is no claim of ours to give back
        _note(cfg, "drain-refused", v.code, f"stopped ({stop}) before the claim took: not drained")
        return
    if kept := slurm.scontrol("update", f"nodename={cfg.node}", "state=resume"):
        _say(f"{v.code} on {cfg.node}: {why}; the claim could not be given back ({kept}): it stays drained")
        _note(cfg, "drain", v.code, f"kept: {why}, and the give-back failed ({kept[:120]}): {v.summary}",
              _drain_facts(cfg, v, report))
        _settle(cfg)
        return
    _say(f"{v.code} on {cfg.node}: {why}: the claim was given back, not drained")
    _note(cfg, "drain-refused", v.code, f"{why}: the claim was given back")


def _settle(cfg: Config) -> None:
    """The kernel log's evidence was acted on (the node is drained): it is not counted again."""
    if cfg.kern is not None and (problem := kernlog.save(cfg.state_dir, cfg.node, kernlog.settle(cfg.kern))):
        _say(problem)


def _claims(cfg: Config, v: Verdict, report: dict[str, Any] | None) -> int:
    """Claim, and claim again after a random wait while racing claims were all given back (prologs of nodes that
    failed together each saw the others and gave back: none was drained where the breaker allowed one). Each claim
    is re-counted as before, so the share is never passed; the waits only stop the racers racing."""
    for attempt in range(1, CLAIM_TRIES + 1):
        wait = random.uniform(*RETRY_WAIT_S)
        last = attempt == CLAIM_TRIES or cfg.deadline.left() - cfg.deadline.reserve < wait + 2 * slurm.TIMEOUT_S / 10
        try:
            status = _claim(cfg, v, report, last_try=last)
        except (Interrupted, Overran) as stop:
            if cfg.claim_open:
                _abandon(cfg, v, report, stop)
            raise
        if status != RACED:
            return status
        time.sleep(wait)
    return _claim(cfg, v, report)       # not reached: the last try never answers RACED


def _elsewhere(cfg: Config) -> str | None:
    """Why the node a job's environment names is not this host, or None. Slurm's prolog semantics: a batch script
    (or anything a job starts without srun) runs with the job's environment, SLURMD_NODENAME included, which it may
    export or carry from another node (a launcher that copies the head node's environment): this host's evidence
    drained the node it named. So in a job's environment the drain needs Slurm's own record (NodeHostName) to name
    this host, as `make undrain` does."""
    if not cfg.job_env or cfg.node.lower() == cfg.host.split(".")[0].lower():
        # Prolog= (slurmd names the node), an operator by hand (--node is theirs), or the name this host has (the
        # kernel's, which no job sets: slurmd's default NodeHostName is the NodeName)
        return None
    from .revalidate import _same_host
    info, why = slurm.node_info(cfg.node)
    if info is None:
        return f"which host {cfg.node} is cannot be proven ({why})"
    if not _same_host(info.get("NodeHostName", ""), cfg.host):
        return (f"this host ({cfg.host or 'no host name'}) is not {cfg.node} (its host is "
                f"{info.get('NodeHostName') or 'not named'} in Slurm): the job's environment named another node")
    return None


def _drain(cfg: Config, v: Verdict, report: dict[str, Any] | None = None) -> int:
    if elsewhere := _elsewhere(cfg):
        return _refuse_drain(cfg, v, elsewhere, f"{v.code} is the host's, but {elsewhere}: not drained")
    lock = os.path.join(cfg.state_dir, "breaker.lock")
    try:
        os.makedirs(cfg.state_dir, exist_ok=True)       # the folder may be a link an operator made; its files not
        # at most half of what is left: the claim, its re-count and a give-back still fit in the cap after it
        with statefile.locked(lock, cfg.deadline.bound(min(statefile.BREAKER_LOCK_WAIT_S, cfg.deadline.left() / 2))):
            status = _claims(cfg, v, report)
    except statefile.LockBusy as exc:
        # held past the wait: a prolog stuck in scontrol, or anyone who may open the file holding a read lock (a
        # job's user on a lock file an earlier version made 0644: every drain of the node was refused). The re-count
        # after the claim keeps the breaker's share without the lock (NVSentinel's breaker), as where there is none
        _say(f"the breaker's lock {lock} was not had ({exc.strerror}): counting without it")
        status = _claims(cfg, v, report)
    except OSError as exc:
        _say(f"the breaker's lock {lock} cannot be taken ({statefile.problem(exc, lock)}): counting without it")
        status = _claims(cfg, v, report)
    if status != DRAINED:
        return status
    if flap := history.failed_again_after_resume(history.read(cfg.state_dir, cfg.node).events, cfg.flap_window_s,
                                                 time.time(), cfg.clock_skew_s):
        _note(cfg, "inspect", v.code, flap)
        _say(f"INSPECT {cfg.node}: {flap}")
    requeue = slurm.scontrol("requeue", cfg.job) if cfg.mode == "step" and cfg.job else None
    if requeue:
        _say(requeue)
    _close(cfg, f"DRAINED {cfg.node}: {v.code} ({v.owner}'s); return to service once repaired: make undrain "
         f"NODE={cfg.node} on it")
    return EXIT_FAULT


def _service_after_drain(cfg: Config) -> dict[str, Any] | None:
    """What a pass (or a host fault, before its drain) on a node whose history stands drained says of its return to
    service (history.in_service): Slurm's state read now. Still drained (a job's step that began before the drain: Slurm lets it run), or unread: no return,
    so the drain's faults, its repair and its inspection flag still stand for make undrain. In service with no resume
    on record: resumed outside torchimages (scontrol resume by hand), recorded as the resume it was, so NVSentinel's
    flap rule (drained again soon after a resume: hardware inspection) sees it, as NVSentinel counts a manual uncordon."""
    past = history.read(cfg.state_dir, cfg.node)
    if past.error or not history.stands_drained(past.events):
        return None
    rows, why = slurm.rows(node=cfg.node)
    me = next((r for r in rows or [] if r.name == cfg.node), None)
    if me is None:
        _say(f"{cfg.node}'s history shows a drain and its state is unread ({why or 'sinfo does not list it'}): this "
             "run is no return to service")
        return {"in_service": False, "slurm_state": "unread"}
    if me.drained:
        return {"in_service": False, "slurm_state": me.state[:40]}
    _resumed_by_hand(cfg, me, past.events)
    return {"in_service": True}


def _resumed_by_hand(cfg: Config, me: slurm.NodeRow, events: list[dict[str, Any]]) -> None:
    """Slurm has the node in service (`me`) while its history stands drained: it was resumed outside torchimages
    (scontrol resume by hand), which left no resume line. Recorded as the resume it was, before this run's pass or
    drain, so NVSentinel's flap rule (drained again soon after a resume: hardware inspection) sees it. When it was
    resumed is unknown: it is stamped at the earliest it can have been (the last event the history holds, a time the
    node was drained), so the rule flags only a drain within the window of any resume time it can have had, never a
    node resumed weeks ago whose fault is new (a false inspection flag keeps a healthy node out until a person looks)."""
    found = time.time()
    # (this run's own notes are no time the node was seen drained)
    before = [e["epoch"] for e in events if cfg.started is None or e["epoch"] < cfg.started]
    earliest = min(max(before, default=found), found)
    _note(cfg, "resume", None, f"found {me.state[:40]} after its drain with no resume on record: resumed outside "
          "torchimages (scontrol resume by hand) at an unknown time, stamped at the earliest it can have been",
          {"by_hand": True, "found": round(found, 3)}, now=earliest)


def act(cfg: Config, v: Verdict, report: dict[str, Any] | None = None) -> int:
    """What the verdict asks of Slurm, and the exit status that says it."""
    # before the outcome's own line: a resume by hand is recorded where it happened, before this run's pass or fault
    service = _service_after_drain(cfg) if v.kind == PASS or (v.kind == FAULT and v.owner == "host") else None
    if v.kind == PASS:
        # a pass whose check stalled past its budget and ended only alone (a busy host) is marked: history.streak
        _note(cfg, "pass", None, v.summary, {**(service or {}), **({"stalled": True} if v.stalled else {})})
        return EXIT_PASS
    if v.kind == NOT_ASSESSED:
        _note(cfg, "not-assessed", v.code, v.summary)
        _close(cfg, f"NOT ASSESSED on {cfg.node}: {v.code}; the node stays in service (the tool's trouble is not the node's)")
        return EXIT_NOT_ASSESSED
    _note(cfg, "fault", v.code, f"{v.owner}: {v.summary}")
    if v.owner == "host":
        return _drain(cfg, v, report)
    _close(cfg, f"{v.code} is the {v.owner}'s to fix; node {cfg.node} is left in service")
    return EXIT_FAULT if cfg.mode == "step" and not cfg.under_prolog else EXIT_PASS
