"""`torchimages-prolog`: the preflight as a gate before a job, with the node drained only on evidence of a host fault.

As Slurm's `Prolog=` (SLURM_SCRIPT_CONTEXT=prolog_slurmd) or as a job's first step (`srun --ntasks-per-node=1
torchimages-prolog`). It reads the kernel log (Xid/SXid through NVIDIA's catalog; each line once, held until acted
on), runs `verify --preflight` (told how many GPUs Slurm allocated), and acts on the verdict:
- pass: exit 0.
- host fault (a lost GPU, ECC, an Xid, a hang confirmed by a second run with a longer limit, a preflight that hung
  on --hang-runs runs in a row): drain the node with our signed reason (slurm.reason), unless the breaker says
  torchimages already holds its share of the partition drained (exit 4, not drained); exit 1 after a drain (a first
  step also asks `scontrol requeue`).
- image or job fault: the node is left alone; a first step exits 1, a Prolog exits 0.
- not assessed (no report, verify crashed or ran past its limit, a check without an owner, a figure refused, a
  setting of ours that is wrong, the prolog's own crash): the node is left in service; exit 3.
As Slurm's Prolog=, any non-zero exit makes Slurm drain the node itself: there, everything but a drain exits 0 (a
bad option, a bad TORCHIMAGES_BREAKER, a crash of ours included: their line on stderr and syslog, the history and
the metrics still tell them apart). Exit 2: bad arguments (not as Prolog=). Exit 5: --revalidate refused.
`--revalidate` (run on the drained node itself): resumes it only when torchimages drained it, its history is whole
and clean, it has not failed again within the flap window, the repair the catalog asks for is seen (a reboot since
the drain, or a GPU reset recorded since: verify/prolog/repair.py), and the preflight passes now with the GPUs the node should have (the larger of
Slurm's Gres and the drain's count).
The whole run is capped at --budget + --grace (default grace: the budget, at least 60 s), the confirmation, the kernel log and
Slurm's commands included (verify/prolog/deadline.py: a run ends by the cap + 3 s; set Slurm's PrologEpilogTimeout
above that); SIGTERM stops verify's whole process group and ends the prolog.
The drain behind the breaker (count, claim, re-count, give back) is verify/prolog/drain.py; the settings,
verify/prolog/config.py.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import tempfile
import time
from types import FrameType
from typing import Any

from ..shared.closedpipe import say
from . import busy, context, history, kernlog, metrics, rechecks, repair, settings, slurm, steplibs, stops, xid
from .beside import SLOW_CODES, busy_figure, with_proven
from .config import DEFAULT_STATE_DIR as DEFAULT_STATE_DIR
from .config import Config as Config
from .config import Interrupted as Interrupted
from .config import UsageError as UsageError
from .config import _mode, parse, spelt_out
from .config import _parser as _parser
from .config import config as config
from .config import expected_gpus as expected_gpus
from .deadline import STOP_S, Overran, arm
from .drain import DRAINED as DRAINED
from .drain import _drain as _drain
from .drain import _drain_facts as _drain_facts
from .drain import act, regained
from .notes import _out, _say, proven_gpus
from .statefile import BREAKER_LOCK_WAIT_S as BREAKER_LOCK_WAIT_S
from .thisrun import not_this_run
from .unparsed import _value, trace_state
from .verdict import (
    EXIT_BREAKER,
    EXIT_NOT_ASSESSED,
    EXIT_PASS,
    EXIT_USAGE,
    FAULT,
    NOT_ASSESSED,
    PASS,
    TIMEOUT_CODES,
    Verdict,
    confirmation,
    decide,
    merge,
    not_assessed,
    timed_out,
)
from .verifyrun import PACKAGE_ROOT as PACKAGE_ROOT
from .verifyrun import _run_verify as _run_verify
from .verifyrun import _verify_env as _verify_env
from .verifyrun import drop_job_settings, drop_shell_settings, drop_test_hooks, hooks_allowed, load_report, system_path
from .verifyrun import verify_command as verify_command

KERNLOG_SHARE = 0.1             # of the cap, for each of journalctl and dmesg
HANG_MARGIN = 1.5               # verify stopped with less than this x its budget: the cap's fault, not a hang
LARGEST_SHARE = 0.5             # of the budget, the most a check gets in verify's first run (nccl's weight)
HANG_CODES = frozenset({"PREFLIGHT_TIMEOUT", "PREFLIGHT_HUNG"})


# ---------------------------------------------------------------------------------------------------- assess

def preflight(cfg: Config, budget: float, check: str | None = None) -> tuple[Verdict, dict[str, Any] | None]:
    """verify --preflight (all its checks, or one): its verdict and report; never raises but Interrupted."""
    with tempfile.TemporaryDirectory(prefix="torchimages-prolog-") as tmp:
        out = os.path.join(tmp, "preflight.json")
        cmd = [*verify_command(cfg.python), "--preflight", "--budget", f"{budget:g}", "--json", out]
        cmd += ["--checks", check] if check else []
        cmd += ["--expect-gpus", str(cfg.expected_gpus)] if cfg.expected_gpus else []
        limit = min(budget + cfg.grace_s, cfg.deadline.for_verify())
        ran = time.time()
        rc, last = _run_verify(cmd, limit)
        if rc is None and check is not None:
            # a confirmation: its budget is all the time left (_confirm gives it only more than any check had in the
            # first run), so a stop at it is the check timing out again, or verify stuck beside it: unconfirmed (no
            # report), but a run towards --hang-runs. As BUDGET_TOO_SMALL ("raise --grace", ending the streak) a
            # check hung in the kernel after its first timeout hid the hang on every run
            return not_assessed("PREFLIGHT_TIMEOUT", f"verify --preflight --checks {check} (the confirmation) ran past "
                                f"{limit:.0f} s, all that was left of the prolog's cap of {cfg.deadline.cap:g} s, and "
                                "was stopped: no report"), None
        if rc is None and limit < HANG_MARGIN * budget:
            # stopped before it had clearly more than its own budget: the cap is our setting, no hang of the host's
            # (and no run towards --hang-runs: BUDGET_TOO_SMALL ends the streak)
            return not_assessed("BUDGET_TOO_SMALL", f"verify --preflight was stopped at {limit:.1f} s, under "
                                f"{HANG_MARGIN:g} x its budget of {budget:g} s: the prolog's cap of "
                                f"{cfg.deadline.cap:g} s (--budget + --grace) left it too little; raise --grace"), None
        if rc is None:
            return not_assessed("PREFLIGHT_TIMEOUT", f"verify --preflight ran past {limit:.0f} s (budget {budget:g} s"
                                f", within the prolog's cap of {cfg.deadline.cap:g} s: --budget + --grace) and was "
                                "stopped"), None
        report, problem, kind = load_report(out)
        if problem and kind == "invalid":
            return not_assessed("REPORT_INVALID", f"verify --preflight wrote {problem}"), None
        if not problem and (foreign := not_this_run(report, ran, time.time(), cfg.clock_skew_s,
                                                       (cfg.node, os.environ.get("SLURMD_NODENAME")))):
            return not_assessed("REPORT_INVALID", f"verify --preflight handed back {foreign}"), None
        if problem:
            how = f"was killed by {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.valid_signals() else f"exited {rc}"
            return not_assessed("PREFLIGHT_NO_REPORT", f"verify --preflight {how} and wrote no report"
                                + (f": {last}" if last else "")), None
    # a report that did not judge the GPUs Slurm allocated, or a check it was asked, is no pass (its fault is judged)
    verdict = decide(report, cfg.host_gpus, gpus_allocated=bool(cfg.expected_gpus))
    if verdict.kind == PASS and not check and (missing := rechecks.unreported(report, bool(cfg.expected_gpus))):
        return not_assessed("REPORT_INVALID", missing), report
    seen = proven_gpus(report) if verdict.kind == PASS and cfg.expected_gpus else None
    if verdict.kind == PASS and cfg.expected_gpus and (seen is None or seen < cfg.expected_gpus):
        return not_assessed("GPU_COUNT_UNPROVEN", f"the report passes, but its gpu check proves {seen or 'no'} GPU(s) "
                            f"(NVML's, or torch's where fewer) where Slurm allocated {cfg.expected_gpus}", "gpu"), report
    return verdict, report


def kernel_evidence(cfg: Config) -> tuple[tuple[str, str] | None, dict[str, int]]:
    """(code, summary) when the kernel log (read once, held until acted on) says drain; and the events by action."""
    if not cfg.kernel_log:
        return None, {}
    state, problem = kernlog.load(cfg.state_dir, cfg.node)
    if problem:
        cfg.notes.append(problem)
    # journalctl, then dmesg: each at most KERNLOG_SHARE of the cap, so that a hung one leaves verify its time
    log = kernlog.read(cfg.deadline.bound(min(kernlog.TIMEOUT_S, cfg.deadline.cap * KERNLOG_SHARE), 0.1))
    cfg.kernel_log_read = log.lines is not None
    if log.lines is None:
        cfg.notes.append(f"kernel log not read ({log.source}): Xids before this run are unknown")
        lines: list[str] = []
    else:
        lines = log.lines
    clock = kernlog.host_clock(cfg.proc)
    if kernlog.boot_key(state.boot_id) == kernlog.boot_key(clock.boot_id) and kernlog.impossible(state, clock):
        cfg.notes.append(f"kernel-log cursor {state.mono} is past this boot's uptime ({clock.uptime}): read again "
                         "from the lookback")
    if future := sum(1 for line in lines if kernlog.future(line, clock, cfg.clock_skew_s)):
        cfg.notes.append(f"{future} kernel-log line(s) stamped past this boot's uptime ({clock.uptime}) or past now "
                         f"(over {cfg.clock_skew_s:g} s of clock skew): not evidence until the clock reaches it")
    if kernlog.boot_key(state.boot_id) == kernlog.boot_key(clock.boot_id) and \
            (dropped := len(state.held) - len(kernlog.believable(state.held, clock, cfg.clock_skew_s))):
        cfg.notes.append(f"{dropped} kernel-log event(s) held in {kernlog.state_path(cfg.state_dir, cfg.node)} no "
                         "read of this boot could have kept (stamped in the future, or not as their line): not evidence")
    cfg.kern, held = kernlog.advance(state, lines, clock, cfg.lookback_s, cfg.clock_skew_s)
    if xid.judge(held):
        # held evidence logged before a GPU reset since (NVIDIA's catalog's repair) is spent (a node drained, reset, resumed)
        resets, _ = repair.read_resets(cfg.deadline.bound(min(kernlog.TIMEOUT_S, cfg.deadline.cap * KERNLOG_SHARE), 0.1))
        if (last := repair.latest_reset(resets or [], clock, cfg.clock_skew_s)) is not None:
            before, cfg.kern = cfg.kern.held, kernlog.spent_before(cfg.kern, last.time, clock, last.mono)
            cfg.spent = ([e for e in before if e not in cfg.kern.held], resets or [])   # its GPU placed after verify
            held = xid.parse([e["line"] for e in cfg.kern.held])
    if problem := kernlog.save(cfg.state_dir, cfg.node, cfg.kern):
        cfg.notes.append(problem)
    counted: dict[str, int] = {}
    for f in held:
        counted[f.action] = counted.get(f.action, 0) + 1
    return xid.judge(held), counted


def _confirm(cfg: Config, report: dict[str, Any]) -> tuple[Verdict, dict[str, Any]]:
    """The timed-out checks again, alone, with confirm-factor x the budget, within what is left of the run's time."""
    names = timed_out(report)
    wanted = cfg.budget * cfg.confirm_factor
    if wanted < cfg.min_confirm_s:
        return not_assessed("BUDGET_TOO_SMALL", f"{', '.join(names)} timed out within a budget of {cfg.budget:g} s; "
                            f"a confirmation of {wanted:g} s (under --min-confirm {cfg.min_confirm_s:g} s) proves "
                            "nothing: the budget is our setting, not the host's fault; raise --budget"), report
    # the confirmation shares the cap: it gets what is left of it, and proves a hang only with more time than any
    # check had of the budget in the first run (its largest share), now alone; the floors are the same in both runs
    had = cfg.budget * LARGEST_SHARE
    limit = round(min(wanted, cfg.deadline.for_verify()), 1)
    room = cfg.deadline.cap - cfg.deadline.reserve - cfg.budget     # what a cap leaves after a first run of the budget
    if limit <= had and min(wanted, room) <= had:
        # no run could be confirmed under these settings (a --grace or --confirm-factor too small): our setting's
        # fault, never a run towards --hang-runs (three such runs drained a healthy node as PREFLIGHT_HUNG)
        return not_assessed("BUDGET_TOO_SMALL", f"{', '.join(names)} timed out, and the prolog's settings leave a "
                            f"confirmation at most {max(0.0, min(wanted, room)):.1f} s, no more than the {had:g} s "
                            f"a check had in the first run (--budget {cfg.budget:g} s, --grace {cfg.grace_s:g} s, "
                            f"--confirm-factor {cfg.confirm_factor:g}): raise --grace"), report
    if limit <= had:
        return not_assessed("PREFLIGHT_TIMEOUT", f"{', '.join(names)} timed out, and the {limit:g} s left of the "
                            f"prolog's cap of {cfg.deadline.cap:g} s (--budget + --grace) are no more than the "
                            f"{had:g} s the largest share of the budget gave a check: too little to confirm it"), report
    _say(f"{', '.join(names)} timed out; running {'it' if len(names) == 1 else 'them'} alone with {limit:g} s to "
         "confirm")
    rerun, rerun_report = preflight(cfg, limit, ",".join(names))
    verdict = confirmation(report, rerun, rerun_report, limit, cfg.host_gpus,
                           gpus_allocated=bool(cfg.expected_gpus))
    return verdict, merge(report, rerun_report) if isinstance(rerun_report, dict) else report


def _hung(cfg: Config, v: Verdict, events: list[dict[str, Any]]) -> Verdict:
    """A preflight that hung past budget + grace on --hang-runs runs in a row (this one included) is evidence: a
    degrading GPU stalls its checker (NVSentinel's users report dozens of kills). Not with a budget too small; the
    streak spans this boot and the flap window, never a run stamped in the future (history.streak)."""
    if v.code != "PREFLIGHT_TIMEOUT" or not cfg.hang_runs or cfg.budget * cfg.confirm_factor < cfg.min_confirm_s:
        return v
    clock = kernlog.host_clock(cfg.proc)          # hangs of another boot are no evidence against this one
    runs = history.streak(events, HANG_CODES, clock.boot_id, clock.booted, time.time(), cfg.flap_window_s,
                          cfg.clock_skew_s, started=cfg.started, uptime=clock.uptime, started_up=cfg.started_up,
                          gpus=cfg.job_gpus) + 1
    if runs < cfg.hang_runs:
        return Verdict(v.kind, v.code, v.owner, f"{v.summary}; {runs} of {cfg.hang_runs} runs in a row hung "
                       f"(--hang-runs: PREFLIGHT_HUNG drains at {cfg.hang_runs})", v.check)
    return Verdict(FAULT, "PREFLIGHT_HUNG", "host", f"the preflight hung past its budget on {runs} runs in a row "
                   f"(--hang-runs {cfg.hang_runs}): {v.summary}", "preflight")


def assess(cfg: Config) -> tuple[Verdict, dict[str, Any] | None, dict[str, int]]:
    """The node's verdict: the kernel log's evidence, the preflight, and a second run of the timed-out checks."""
    kern, xids = kernel_evidence(cfg)
    boot = kernlog.host_clock(cfg.proc).boot_id
    with busy.running(cfg.state_dir, cfg.node, cfg.started,
                      (boot, cfg.started_up) if boot and cfg.started_up is not None else None) as run:
        if run.problem:
            cfg.notes.append(run.problem)
        verdict, report = preflight(cfg, cfg.budget)
        if verdict.kind == FAULT and not verdict.confirmed and report is not None:
            if kern:
                verdict = Verdict(FAULT, verdict.code, "host", f"{verdict.summary}; {kern[1]}", verdict.check)
            else:
                first = report
                verdict, report = _confirm(cfg, report)
                if verdict.confirmed and verdict.code in TIMEOUT_CODES and (beside := run.others()):
                    # not alone: other jobs' prologs slowed it (NVSentinel's rule reruns a stall alone)
                    verdict = not_assessed("PREFLIGHT_TIMEOUT", f"{verdict.code} in {verdict.check} timed out "
                                           f"again, but {beside}: a busy host, not a hung one", verdict.check)
                # the timeout stays unjudged; a host fault beside it needing no second run drains (verify/prolog/beside.py)
                verdict = with_proven(verdict, first, f"{', '.join(timed_out(first))} timed out")
        elif verdict.drains and verdict.code in SLOW_CODES and report is not None and (beside := run.others()):
            verdict = with_proven(busy_figure(verdict, beside), report, f"{verdict.check} measured slow")
    kern = regained(cfg, report) or kern       # held evidence a reset of another board spent (repair.unrepaired)
    if kern and not verdict.drains:
        verdict = Verdict(FAULT, kern[0], "host", kern[1], "kernel-log")
    if verdict.kind == FAULT and not verdict.confirmed:
        # a host timeout no second run confirmed is never a drain (NVSentinel's checker rule: one stall is no
        # evidence): not assessed, a run towards --hang-runs
        verdict = not_assessed("PREFLIGHT_TIMEOUT", f"{verdict.code} in {verdict.check} was not confirmed by a second "
                               f"run: {verdict.summary}", verdict.check)
    past = history.read(cfg.state_dir, cfg.node)
    if past.error or past.garbled:              # said, never skipped silently: the hang streak counts after it
        cfg.notes.append(past.error or f"{past.garbled} of {history.path(cfg.state_dir, cfg.node)}")
    verdict = _hung(cfg, verdict, past.after_garbled())     # a garbled line may have been a pass: no streak across it
    _flush_notes(cfg)                 # before the verdict's lines: the last line read is the verdict
    return verdict, report, xids


# ---------------------------------------------------------------------------------------------------- main

def _metrics(cfg: Config, status: int, v: Verdict | None, report: dict[str, Any] | None, xids: dict[str, int],
             started: float) -> None:
    if not cfg.metrics_dir:
        return
    try:          # the history read too: a side output's trouble never turns a drain's exit 1 into a crash's 0
        outcome: dict[str, Any] = {"verdict": v.kind if v else "refused", "code": v.code if v else None,
                                   "owner": v.owner if v else None, "exit": status,
                                   "duration_s": time.time() - started, "time": started, "xids": xids,
                                   "history": history.counts(history.read(cfg.state_dir, cfg.node).events),
                                   "setting_problems": len(cfg.setting_problems)}
        metrics.write(cfg.metrics_dir, cfg.node, report, outcome, cfg.clock_skew_s,
                      os.path.join(cfg.state_dir, "history", f".{cfg.node}.metrics.lock"))
    except metrics.Superseded as exc:     # a run that started after this one wrote its outcome: the newer stands
        _say(f"metrics not written: {exc}")
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - never the node's fault, never a drain
        line = f"metrics not written to {cfg.metrics_dir}: {type(exc).__name__}: {str(exc)[:200]}"
        _say(line)
        if cfg.under_prolog:      # slurmd's log is read by few: in syslog too, the exit status stands
            _syslog(f"torchimages-prolog: {line}")


def _syslog(line: str) -> None:
    """The line in syslog too: under Prolog= stderr goes to slurmd's log, which nobody may read."""
    try:
        import syslog
        syslog.openlog("torchimages-prolog", 0, syslog.LOG_DAEMON)
        # a path or value from the environment that is no UTF-8 (SLURM_CONF=/etc/\xff...) is held as surrogates,
        # which syslog cannot encode: the crash it raised made a drain's run PROLOG_CRASHED (a lost GPU in service)
        syslog.syslog(syslog.LOG_ERR, line.encode("utf-8", "backslashreplace").decode("utf-8"))
    except (ImportError, OSError, ValueError):
        pass


def _as_prolog(argv: list[str], env: dict[str, str]) -> bool:
    """Whether this run is Slurm's Prolog= (where a non-zero exit drains the node), read without the parser."""
    if context.by_slurmd(env):
        return True               # slurmd runs it as Prolog= or Epilog=: whatever --mode or --revalidate say, non-zero drains
    if "--revalidate" in argv:
        return False
    forced = _value(argv, "--mode")
    return _mode(env, forced if forced in ("prolog", "step") else "auto") == "prolog"


def ungated(argv: list[str], env: dict[str, str], code: str, problem: str, started: float,
            status: int | None = None) -> None:
    """The trace of a run that could not gate the node (a bad setting of ours, our own crash): one line on stderr
    and syslog, a not-assessed event in the history, and the metrics, wherever they can be had. Never raises."""
    _ignore_stops()
    line = f"torchimages-prolog: NOT ASSESSED: {problem} ({code}: the node stays in service, ungated)"
    say(line)                         # never raises: syslog, the history and the metrics still say it
    _syslog(line)
    try:
        _trace(argv, env, code, problem, started, status)
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - the line above is said already
        _say(f"no trace kept: {type(exc).__name__}: {str(exc)[:200]}")


def _trace(argv: list[str], env: dict[str, str], code: str, problem: str, started: float,
           status: int | None = None) -> None:
    # the first of these that is one node name: Slurm's name for the node this runs on first (a --node copied into
    # slurm.conf's Prolog= line, n2 on every node, is itself the setting this trace must show: its trace went into
    # n2's history and metrics from every other node), then --node (a step run by hand), then the host's
    names = (env.get("SLURMD_NODENAME"), _value(argv, "--node"), socket.gethostname().split(".")[0])
    node = next((n for n in names if n and not slurm.node_problem(n)), None)
    if node is None:
        return
    # a job's step: its environment is the job's, never where the operator's trace goes (verify/prolog/settings.py)
    ours = {} if settings.job_env(env, _mode(env, _value(argv, "--mode") or "auto"), "--revalidate" in argv) else env
    state = trace_state(_value(argv, "--state-dir"), ours, "--revalidate" in argv)
    try:              # a blank or relative option (the bad setting itself, maybe) is no place for it: the cwd's
        if state and (failed := history.record(state, node, "not-assessed", code, problem)):
            _say(failed)
    except ValueError:
        pass
    given = _value(argv, "--metrics-dir")      # an explicit '' is no metrics, as the run itself reads it
    # else slurmd's environment (an empty variable is unset, as the run reads it), else the state folder's settings
    # file, read leniently: a typo on another of its lines (the CONFIG_ERROR itself) left node_exporter showing the
    # last run's pass of a node now running ungated
    where = given if given is not None else ours.get("TORCHIMAGES_METRICS_DIR", "").strip() or \
        (settings.salvage(state, "TORCHIMAGES_METRICS_DIR") if state else None)
    if where and os.path.isabs(where):
        outcome: dict[str, Any] = {"verdict": NOT_ASSESSED, "code": code, "owner": None,
                                   "exit": status if status is not None else 0 if _as_prolog(argv, env) else 3,
                                   "duration_s": time.time() - started,
                                   "time": started, "xids": {}}
        try:
            metrics.write(where, node, None, outcome)
        except (OSError, ValueError, metrics.Unavailable, metrics.Superseded) as exc:
            _say(f"metrics not written to {where}: {exc}")


def _run(args: argparse.Namespace, env: dict[str, str], started: float) -> int:
    cfg = config(args, env)
    cfg.started = started
    cfg.started_up = kernlog.host_clock(cfg.proc).uptime
    if not hooks_allowed("step" if cfg.job_env else cfg.mode, cfg.state_dir):
        drop_test_hooks(os.environ)     # a job's step: its VERIFY_TEST_* would hang or crash checks (a false drain)
    drop_job_settings(os.environ, cfg.job_env)      # nor its torchrun group, paths and floors judge the node
    cfg.notes += drop_shell_settings(os.environ) if args.revalidate else []     # a return proves every GPU
    cfg.notes += steplibs.confine(os.environ, cfg.job_env)      # nor its libraries and slurm.conf (steplibs.py)
    if args.revalidate and cfg.under_prolog:
        raise UsageError("--revalidate in Slurm's Prolog= or Epilog= (slurm.conf): it is `make undrain NODE=<node>` on "
                         "a drained node; there its refusals would drain every node a job runs on: remove it there")
    disarm = arm(cfg.deadline.left() + STOP_S)    # the backstop: whatever still runs then is stopped
    try:
        with system_path(os.environ, cfg.job_env, env):     # sinfo, scontrol, journalctl: never the job's, found
            return _gate(cfg, args, started)
    finally:
        disarm()
        slurm.limit = None


def _flush_notes(cfg: Config) -> None:
    for note in cfg.notes:
        _say(note)
        if cfg.under_prolog:      # slurmd's log is read by few: a misspelt knob, a garbled state, in syslog too
            _syslog(f"torchimages-prolog: {note}")
    cfg.notes.clear()


def _gate(cfg: Config, args: argparse.Namespace, started: float) -> int:
    """Assess and act; the verdict's own line (DRAINED, NOT ASSESSED, REFUSED, RESUMED ...) is said last, after every
    note and the metrics' trouble: Slurm's log and a person read the last line as the outcome."""
    try:
        if args.revalidate:
            from .revalidate import revalidate  # here: it uses this module's assess (no import cycle at load)
            status, verdict, report, xids = revalidate(cfg, assess)
        else:
            verdict, report, xids = assess(cfg)
            _out(verdict.line())         # never raises: a print that failed never skips the drain
            status = act(cfg, verdict, report)
        _flush_notes(cfg)
        # the exit status, before the metrics record it (under Prolog= they showed 3 or 4 for a run that exited 0)
        status = _exit_status(cfg, args, status)
        _metrics(cfg, status, verdict, report, xids, started)
    finally:
        if cfg.closing:
            _say(cfg.closing)
    return status


def _exit_status(cfg: Config, args: argparse.Namespace, status: int) -> int:
    if (cfg.mode == "prolog" or cfg.under_prolog) and not args.revalidate and status in (EXIT_NOT_ASSESSED,
                                                                                         EXIT_BREAKER):
        return EXIT_PASS          # Slurm drains a node whose Prolog exits non-zero: that is what these avoid
    return status


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    _ignore_stops()
    raise Interrupted(signum)


def _ignore_stops() -> None:
    """One stop is enough: a second SIGTERM while verify's group is stopped, or while the trace is written, would
    raise out of the handler (a traceback, exit 1: Slurm drains the node). main restores the handlers before."""
    try:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
    except ValueError:            # not the main thread: nothing was installed
        pass


def _handle_signals() -> dict[int, Any]:
    """SIGTERM, SIGINT and SIGHUP raise Interrupted (so verify's process group is stopped); the handlers before."""
    try:
        return {sig: signal.signal(sig, _on_signal) for sig in STOP_SIGNALS}
    except ValueError:            # not the main thread (an embedding caller): its own handlers stay
        return {}


def main(argv: list[str] | None = None, env: dict[str, str] | None = None) -> int:
    """The whole command; no traceback escapes: a bad setting, a crash or a signal of ours is not assessed (exit 0
    under Prolog=, where anything else drains the node), and only evidence of a host fault exits non-zero there."""
    argv = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ) if env is None else env
    started = time.time()
    said = spelt_out(argv)          # as argparse reads it: an abbreviation (--reval) is its option
    prolog = _as_prolog(said, env)
    previous: dict[int, Any] = {}
    # the files and folders it makes (the history, the kernel-log state, the breaker's lock, the metrics) are the
    # operator's whatever umask it was given: a job's step has the job's (000 in a .bashrc made the history folder
    # 0777, where another user's job could put a history of its own making for this node)
    umask = os.umask(0o022)
    os.umask(umask | 0o022)
    try:
        previous = _handle_signals()                # inside the try: a stop from here on is PROLOG_INTERRUPTED
        if (early := stops.pending()) is not None:  # one before them (python -m verify.prolog records it: stops.py)
            stops.PENDING.clear()
            raise Interrupted(early)
        return _run(parse(argv, context.by_slurmd(env)), env, started)
    except UsageError as exc:
        if prolog:
            ungated(said, env, "CONFIG_ERROR", str(exc), started)
            return EXIT_PASS
        say(f"torchimages-prolog: {exc}")
        return EXIT_USAGE
    except Interrupted as exc:
        status = EXIT_PASS if prolog else 128 + exc.signum
        ungated(said, env, "PROLOG_INTERRUPTED", f"stopped by {exc}; verify's process group was stopped", started,
                status)
        return status
    except Overran:
        ungated(said, env, "PROLOG_OVERRAN", f"the run reached its cap ({time.time() - started:.0f} s: --budget + "
                "--grace) and what still ran was stopped", started)
        return EXIT_PASS if prolog else EXIT_NOT_ASSESSED
    except BrokenPipeError:
        raise                          # stdout's reader left: no crash of ours (__main__ ends it quietly)
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - our own crash is never the node's fault
        ungated(said, env, "PROLOG_CRASHED", f"torchimages-prolog failed: {type(exc).__name__}: {str(exc)[:200]}",
                started)
        return EXIT_PASS if prolog else EXIT_NOT_ASSESSED
    finally:
        os.umask(umask)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
