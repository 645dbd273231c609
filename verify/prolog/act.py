"""What a verdict asks of Slurm: pass, or drain with our signed reason under the breaker's lock (a claim that takes
the partition past the breaker is given back), the drain's facts kept for return to service."""
from __future__ import annotations

import os
import time
from typing import Any

from . import history, kernlog, slurm, statefile
from .settings import BREAKER_LOCK_WAIT_S, DRAINED, REBOOT_CODES, Config, say
from .verdict import (
    EXIT_BREAKER,
    EXIT_FAULT,
    EXIT_NOT_ASSESSED,
    EXIT_PASS,
    NOT_ASSESSED,
    PASS,
    Verdict,
)


def log_event(cfg: Config, event: str, code: str | None, detail: str, extra: dict[str, Any] | None = None) -> None:
    if problem := history.record(cfg.state_dir, cfg.node, event, code, detail, extra=extra):
        say(problem)


def report_gpus(report: dict[str, Any] | None) -> int | None:
    """The GPUs NVML listed in the report's gpu check (nvml_devices), or None."""
    for c in (report or {}).get("checks") or []:
        if isinstance(c, dict) and c.get("name") == "gpu" and isinstance(c.get("metrics"), dict):
            value = (c["metrics"].get("nvml_devices") or {}).get("value") if \
                isinstance(c["metrics"].get("nvml_devices"), dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def _drain_facts(cfg: Config, v: Verdict, report: dict[str, Any] | None) -> dict[str, Any]:
    """What return to service must prove, kept with the drain: the GPUs the node had, its boot, the repair asked."""
    return {"gpus": cfg.expected_gpus or report_gpus(report), "boot_id": kernlog.host_clock(cfg.proc).boot_id or None,
            "action": "reboot" if v.code in REBOOT_CODES else None, "check": v.check}


def _refuse_drain(cfg: Config, v: Verdict, detail: str, line: str) -> int:
    log_event(cfg, "drain-refused", v.code, detail)
    say(line)
    return EXIT_BREAKER


def _claim(cfg: Config, v: Verdict, report: dict[str, Any] | None) -> int:
    """Count, claim (drain with our signed reason), re-count: a claim that took the partition past the breaker
    (prologs of other nodes claiming at the same time) is given back. Called under the breaker's lock. DRAINED, or
    the exit status of a drain not done."""
    rows, why = slurm.rows(cfg.partition)
    if rows is None:
        return _refuse_drain(cfg, v, f"breaker cannot count: {why}", f"{v.code} on {cfg.node} is the host's, but the "
                             f"breaker cannot count drained nodes ({why}): not drained")
    me = next((r for r in rows if r.name == cfg.node), None)
    if me is not None and me.drained and not me.ours:
        return _refuse_drain(cfg, v, f"already drained by someone else ({me.reason_text})", f"{v.code} on {cfg.node} "
                             f"is the host's; it is already drained with another reason ({me.reason_text!r}): left so")
    gate = slurm.breaker(rows, cfg.node, cfg.breaker)
    if gate.open:
        return _refuse_drain(cfg, v, gate.line(cfg.breaker, cfg.partition), f"BREAKER {v.code} on {cfg.node} is the "
                             f"host's, but {gate.line(cfg.breaker, cfg.partition)}: not drained; look at the drained "
                             "nodes first (sinfo -R)")
    text = slurm.reason(cfg.node, str(v.code), v.summary, time.time())
    if refused := slurm.scontrol("update", f"nodename={cfg.node}", "state=drain", f"reason={text}", dry_run=cfg.dry_run):
        log_event(cfg, "drain-refused", v.code, refused)
        say(f"{v.code} on {cfg.node} is the host's, but the drain failed: {refused}")
        return EXIT_FAULT
    again, _ = (None, "") if cfg.dry_run else slurm.rows(cfg.partition)
    if again is not None and slurm.over(again, cfg.node, cfg.breaker):
        slurm.scontrol("update", f"nodename={cfg.node}", "state=resume", dry_run=cfg.dry_run)
        gate = slurm.breaker(again, cfg.node, cfg.breaker)
        return _refuse_drain(cfg, v, f"claim given back: {gate.line(cfg.breaker, cfg.partition)}",
                             f"BREAKER {v.code} on {cfg.node}: other nodes were drained at the same time and "
                             f"{gate.line(cfg.breaker, cfg.partition)}: this drain was given back")
    log_event(cfg, "drain", v.code, v.summary, _drain_facts(cfg, v, report))
    if cfg.kern is not None and (problem := kernlog.save(cfg.state_dir, cfg.node, kernlog.settle(cfg.kern))):
        say(problem)                 # the kernel log's evidence was acted on: it is not counted again
    return DRAINED


def _drain(cfg: Config, v: Verdict, report: dict[str, Any] | None = None) -> int:
    lock = os.path.join(cfg.state_dir, "breaker.lock")
    try:
        os.makedirs(cfg.state_dir, exist_ok=True)       # the folder may be a link an operator made; its files not
        with statefile.locked(lock, BREAKER_LOCK_WAIT_S):
            status = _claim(cfg, v, report)
    except statefile.LockBusy as exc:
        return _refuse_drain(cfg, v, str(exc.strerror), f"{v.code} on {cfg.node} is the host's, but the breaker's "
                             f"lock was not had ({exc.strerror}): not drained")
    except OSError as exc:
        say(f"the breaker's lock {lock} cannot be taken ({statefile.problem(exc, lock)}): counting without it")
        status = _claim(cfg, v, report)
    if status != DRAINED:
        return status
    if flap := history.failed_again_after_resume(history.read(cfg.state_dir, cfg.node).events, cfg.flap_window_s):
        log_event(cfg, "inspect", v.code, flap)
        say(f"INSPECT {cfg.node}: {flap}")
    requeue = slurm.scontrol("requeue", cfg.job, dry_run=cfg.dry_run) if cfg.mode == "step" and cfg.job else None
    if requeue:
        say(requeue)
    return EXIT_FAULT


def act(cfg: Config, v: Verdict, report: dict[str, Any] | None = None) -> int:
    """What the verdict asks of Slurm, and the exit status that says it."""
    if v.kind == PASS:
        log_event(cfg, "pass", None, v.summary)
        return EXIT_PASS
    if v.kind == NOT_ASSESSED:
        log_event(cfg, "not-assessed", v.code, v.summary)
        say(f"NOT ASSESSED on {cfg.node}: {v.code}; the node stays in service (the tool's trouble is not the node's)")
        return EXIT_NOT_ASSESSED
    log_event(cfg, "fault", v.code, f"{v.owner}: {v.summary}")
    if v.owner == "host":
        return _drain(cfg, v, report)
    say(f"{v.code} is the {v.owner}'s to fix; node {cfg.node} is left in service")
    return EXIT_FAULT if cfg.mode == "step" and not cfg.under_prolog else EXIT_PASS
