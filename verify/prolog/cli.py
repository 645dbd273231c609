"""`torchimages-prolog`: the preflight as a gate before a job, with the node drained only on evidence of a host fault.

As Slurm's `Prolog=` (SLURM_SCRIPT_CONTEXT=prolog_slurmd) or as a job's first step (`srun --ntasks-per-node=1
torchimages-prolog`). It reads the kernel log since its last run (Xid/SXid through NVIDIA's catalog), runs
`verify --preflight` (told how many GPUs Slurm allocated), and acts on the verdict:
- pass: exit 0.
- host fault (a lost GPU, ECC, an Xid, a hang confirmed by a second run with a longer limit): drain the node,
  `scontrol update nodename=<node> state=drain reason="torchimages:<CODE> <summary>"`, unless the breaker says
  torchimages already holds its share of the partition drained (exit 4, not drained); exit 1 after a drain (a
  first step also asks `scontrol requeue`).
- image or job fault: the node is left alone; a first step exits 1, a Prolog exits 0.
- not assessed (no report, verify crashed or ran past its limit, a check without an owner, a figure refused):
  the node is left in service; exit 3.
As Slurm's Prolog=, any non-zero exit makes Slurm drain the node itself: there, 3 and 4 exit 0 (their line, the
history and the metrics still tell them apart). Exit 2: bad arguments. Exit 5: --revalidate refused.
`--revalidate` (run on a drained node): resumes it only when torchimages drained it, it has not failed again
within the flap window after an earlier resume, and the preflight passes now.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from . import history, kernlog, metrics, slurm, xid
from .verdict import (
    EXIT_BREAKER,
    EXIT_FAULT,
    EXIT_NOT_ASSESSED,
    EXIT_PASS,
    EXIT_REFUSED,
    EXIT_USAGE,
    FAULT,
    NOT_ASSESSED,
    PASS,
    Verdict,
    confirmation,
    decide,
    finite_positive,
    merge,
    not_assessed,
    reason,
    timed_out,
)

DEFAULT_STATE_DIR = "/var/lib/torchimages"
DEFAULT_BREAKER = 0.10


@dataclass
class Config:
    budget: float
    mode: str                        # "prolog" or "step"
    node: str
    partition: str | None
    breaker: float
    state_dir: str
    metrics_dir: str | None
    dry_run: bool
    confirm_factor: float
    grace_s: float
    lookback_s: float
    kernel_log: bool
    flap_window_s: float
    expected_gpus: int | None
    python: str
    job: str | None = None
    notes: list[str] = field(default_factory=list)


class UsageError(Exception):
    """Bad arguments or environment: one line, exit 2."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="torchimages-prolog", description=__doc__.split("\n")[0])
    p.add_argument("--budget", default="30", help="the preflight's time budget in seconds (default 30)")
    p.add_argument("--mode", choices=("auto", "prolog", "step"), default="auto",
                   help="prolog (Slurm's Prolog=) or step (a job's first step); auto reads Slurm's environment")
    p.add_argument("--revalidate", action="store_true",
                   help="on a node torchimages drained: rerun the preflight and resume the node only on a pass")
    p.add_argument("--node", help="this node's Slurm name (default SLURMD_NODENAME, else the short host name)")
    p.add_argument("--partition", help="the partition the breaker counts (default SLURM_JOB_PARTITION, else all)")
    p.add_argument("--breaker", default=os.environ.get("TORCHIMAGES_BREAKER", str(DEFAULT_BREAKER)),
                   help="the largest share of a partition torchimages holds drained (default 0.10; "
                        "TORCHIMAGES_BREAKER)")
    p.add_argument("--state-dir", default=os.environ.get("TORCHIMAGES_STATE_DIR", DEFAULT_STATE_DIR),
                   help=f"history and kernel-log read times (default {DEFAULT_STATE_DIR}; TORCHIMAGES_STATE_DIR)")
    p.add_argument("--metrics-dir", default=os.environ.get("TORCHIMAGES_METRICS_DIR") or None,
                   help="node_exporter's textfile collector folder (TORCHIMAGES_METRICS_DIR); none: no metrics")
    p.add_argument("--confirm-factor", default="4", help="a timed-out check reruns alone with this x the budget")
    p.add_argument("--grace", default="120", help="seconds verify may run past its budget before it is stopped "
                   "(its checks' floors scale with the host's speed; default 120)")
    p.add_argument("--lookback", default="24", help="hours of kernel log read at most (default 24)")
    p.add_argument("--no-kernel-log", action="store_true", help="do not read the kernel log for Xids")
    p.add_argument("--flap-window", default="7", help="days: a node drained again this soon after a resume is "
                                                       "flagged for hardware inspection (default 7)")
    p.add_argument("--python", default=sys.executable, help="the Python that runs verify (default this one)")
    p.add_argument("--dry-run", action="store_true", help="print the scontrol commands instead of running them")
    return p


def _mode(env: dict[str, str], forced: str) -> str:
    if forced != "auto":
        return forced
    return "prolog" if env.get("SLURM_SCRIPT_CONTEXT", "").startswith("prolog") or not env.get("SLURM_STEP_ID") else "step"


def expected_gpus(env: dict[str, str]) -> int | None:
    """The GPUs Slurm allocated on this node (SLURM_GPUS_ON_NODE, else the ids in SLURM_JOB_GPUS); None: none said."""
    count = env.get("SLURM_GPUS_ON_NODE", "").strip()
    if count:
        if not count.isdigit():
            raise UsageError(f"SLURM_GPUS_ON_NODE={count!r} is not a count of GPUs")
        return int(count) or None
    ids = env.get("SLURM_JOB_GPUS", "").strip()
    if ids:
        parts = [x.strip() for x in ids.split(",")]
        if not all(x.isdigit() for x in parts):
            raise UsageError(f"SLURM_JOB_GPUS={ids!r} is not a list of GPU indices")
        return len(parts)
    return None


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--breaker {text!r} is not a share (0.1 for 10 %)") from None
    if not 0 <= value <= 1:
        raise UsageError(f"--breaker {text!r} must be a share between 0 and 1 (0.1 for 10 %)")
    return value


def config(args: argparse.Namespace, env: dict[str, str]) -> Config:
    try:
        budget = finite_positive(args.budget, "--budget", 3600)
        factor = finite_positive(args.confirm_factor, "--confirm-factor", 100)
        grace = finite_positive(args.grace, "--grace", 3600)
        lookback = finite_positive(args.lookback, "--lookback", 24 * 365) * 3600
        flap = finite_positive(args.flap_window, "--flap-window", 3650) * 86400
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not args.state_dir.strip():
        raise UsageError("--state-dir is empty: give a folder (an unset TORCHIMAGES_STATE_DIR?)")
    node = args.node or env.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    if problem := slurm.node_problem(node):
        raise UsageError(problem)
    partition = args.partition or env.get("SLURM_JOB_PARTITION") or None
    if partition and slurm.node_problem(partition):
        raise UsageError(f"partition {partition!r} is not one partition name")
    return Config(budget, _mode(env, args.mode), node, partition, _share(args.breaker), args.state_dir,
                  args.metrics_dir, args.dry_run, factor, grace, lookback, not args.no_kernel_log, flap,
                  expected_gpus(env), args.python, env.get("SLURM_JOB_ID"))


# ---------------------------------------------------------------------------------------------------- assess

def _run_verify(cmd: list[str], limit: float) -> tuple[int | None, str]:
    """(exit status or None when it ran past `limit`, the tail of stderr); its whole process group is stopped."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as err:
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        except OSError as exc:
            return 127, f"{cmd[0]}: {exc.strerror or exc}"
        try:
            rc: int | None = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            rc = None
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                    proc.wait(timeout=10)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    continue
        err.seek(0)
        lines = [ln for ln in err.read().splitlines() if ln.strip()]
    return rc, (lines[-1] if lines else "")


def preflight(cfg: Config, budget: float, check: str | None = None) -> tuple[Verdict, dict[str, Any] | None]:
    """verify --preflight (all its checks, or one): its verdict and report; never raises."""
    with tempfile.TemporaryDirectory(prefix="torchimages-prolog-") as tmp:
        out = os.path.join(tmp, "preflight.json")
        cmd = [cfg.python, "-m", "verify", "--preflight", "--budget", f"{budget:g}", "--json", out]
        cmd += ["--checks", check] if check else []
        cmd += ["--expect-gpus", str(cfg.expected_gpus)] if cfg.expected_gpus else []
        rc, last = _run_verify(cmd, budget + cfg.grace_s)
        if rc is None:
            return not_assessed("PREFLIGHT_TIMEOUT", f"verify --preflight ran past {budget + cfg.grace_s:.0f} s "
                                f"(budget {budget:g} s) and was stopped"), None
        try:
            with open(out, encoding="utf-8") as fh:
                report = json.load(fh)
        except (OSError, ValueError, UnicodeDecodeError):
            how = f"was killed by {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.valid_signals() else f"exited {rc}"
            return not_assessed("PREFLIGHT_NO_REPORT", f"verify --preflight {how} and wrote no report"
                                + (f": {last}" if last else "")), None
    return decide(report, cfg.mode == "prolog" and bool(cfg.expected_gpus)), report


def kernel_evidence(cfg: Config) -> tuple[tuple[str, str] | None, dict[str, int]]:
    """(code, summary) when the kernel log since the last run says drain; and the events counted by action."""
    if not cfg.kernel_log:
        return None, {}
    now = time.time()
    since = kernlog.last_read(cfg.state_dir, cfg.node, cfg.lookback_s, now)
    log = kernlog.read(since)
    if log.lines is None:
        cfg.notes.append(f"kernel log not read ({log.source}): Xids before this run are unknown")
        return None, {}
    findings = xid.parse(log.lines)
    if problem := kernlog.remember(cfg.state_dir, cfg.node, now):
        cfg.notes.append(problem)
    counted: dict[str, int] = {}
    for f in findings:
        counted[f.action] = counted.get(f.action, 0) + 1
    return xid.judge(findings), counted


def assess(cfg: Config) -> tuple[Verdict, dict[str, Any] | None, dict[str, int]]:
    """The node's verdict: the kernel log's evidence, the preflight, and a second run of the timed-out checks."""
    kern, xids = kernel_evidence(cfg)
    verdict, report = preflight(cfg, cfg.budget)
    if verdict.kind == FAULT and not verdict.confirmed and report is not None:
        if kern:
            verdict = Verdict(FAULT, verdict.code, "host", f"{verdict.summary}; {kern[1]}", verdict.check)
        else:
            names = timed_out(report)
            limit = cfg.budget * cfg.confirm_factor
            print(f"torchimages-prolog: {', '.join(names)} timed out; running {'it' if len(names) == 1 else 'them'} "
                  f"alone with {limit:g} s to confirm", file=sys.stderr, flush=True)
            rerun, rerun_report = preflight(cfg, limit, ",".join(names))
            verdict = confirmation(report, rerun, rerun_report, limit, cfg.mode == "prolog" and bool(cfg.expected_gpus))
            report = merge(report, rerun_report) if isinstance(rerun_report, dict) else report
    if kern and not verdict.drains:
        verdict = Verdict(FAULT, kern[0], "host", kern[1], "kernel-log")
    return verdict, report, xids


# ---------------------------------------------------------------------------------------------------- act

def _say(text: str) -> None:
    print(f"torchimages-prolog: {text}", file=sys.stderr, flush=True)


def _note(cfg: Config, event: str, code: str | None, detail: str) -> None:
    if problem := history.record(cfg.state_dir, cfg.node, event, code, detail):
        _say(problem)


def _drain(cfg: Config, v: Verdict) -> int:
    rows, why = slurm.rows(cfg.partition)
    if rows is None:
        _note(cfg, "drain-refused", v.code, f"breaker cannot count: {why}")
        _say(f"{v.code} on {cfg.node} is the host's, but the breaker cannot count drained nodes ({why}): not drained")
        return EXIT_BREAKER
    gate = slurm.breaker(rows, cfg.node, cfg.breaker)
    if gate.open:
        _note(cfg, "drain-refused", v.code, gate.line(cfg.breaker, cfg.partition))
        _say(f"BREAKER {v.code} on {cfg.node} is the host's, but {gate.line(cfg.breaker, cfg.partition)}: "
             f"not drained; look at the drained nodes first (sinfo -R)")
        return EXIT_BREAKER
    if refused := slurm.scontrol("update", f"nodename={cfg.node}", "state=drain",
                                 f"reason={reason(str(v.code), v.summary)}", dry_run=cfg.dry_run):
        _note(cfg, "drain-refused", v.code, refused)
        _say(f"{v.code} on {cfg.node} is the host's, but the drain failed: {refused}")
        return EXIT_FAULT
    _note(cfg, "drain", v.code, v.summary)
    if flap := history.failed_again_after_resume(history.read(cfg.state_dir, cfg.node).events, cfg.flap_window_s):
        _note(cfg, "inspect", v.code, flap)
        _say(f"INSPECT {cfg.node}: {flap}")
    requeue = slurm.scontrol("requeue", cfg.job, dry_run=cfg.dry_run) if cfg.mode == "step" and cfg.job else None
    if requeue:
        _say(requeue)
    return EXIT_FAULT


def act(cfg: Config, v: Verdict) -> int:
    """What the verdict asks of Slurm, and the exit status that says it."""
    if v.kind == PASS:
        _note(cfg, "pass", None, v.summary)
        return EXIT_PASS
    if v.kind == NOT_ASSESSED:
        _note(cfg, "not-assessed", v.code, v.summary)
        _say(f"NOT ASSESSED on {cfg.node}: {v.code}; the node stays in service (the tool's trouble is not the node's)")
        return EXIT_NOT_ASSESSED
    _note(cfg, "fault", v.code, f"{v.owner}: {v.summary}")
    if v.owner == "host":
        return _drain(cfg, v)
    _say(f"{v.code} is the {v.owner}'s to fix; node {cfg.node} is left in service")
    return EXIT_FAULT if cfg.mode == "step" else EXIT_PASS


# ---------------------------------------------------------------------------------------------------- revalidate

def revalidate(cfg: Config) -> tuple[int, Verdict | None, dict[str, Any] | None, dict[str, int]]:
    rows, why = slurm.rows(node=cfg.node)
    row = next((r for r in rows or [] if r.name == cfg.node), None)
    if row is None:
        _say(f"cannot read {cfg.node}'s state: {why or 'sinfo does not list it'}; nothing done")
        return EXIT_NOT_ASSESSED, None, None, {}
    if not row.ours:
        whose = f"drained with another reason ({row.reason_text!r})" if row.drained else f"not drained ({row.state})"
        _note(cfg, "resume-refused", None, f"{whose}: left alone")
        _say(f"REFUSED {cfg.node} is {whose}: torchimages resumes only the nodes it drained")
        return EXIT_REFUSED, None, None, {}
    past = history.read(cfg.state_dir, cfg.node)
    if past.error:
        _say(f"REFUSED {cfg.node}: {past.error}; without its history a fault that came back cannot be told apart")
        return EXIT_REFUSED, None, None, {}
    if flap := history.failed_again_after_resume(past.events, cfg.flap_window_s):
        _note(cfg, "inspect", None, flap)
        _say(f"REFUSED {cfg.node} is flagged for hardware inspection: {flap}; not resumed")
        return EXIT_REFUSED, None, None, {}
    verdict, report, xids = assess(cfg)
    print(verdict.line(), flush=True)
    if verdict.kind != PASS:
        status = EXIT_FAULT if verdict.drains else EXIT_NOT_ASSESSED
        _note(cfg, "resume-refused", verdict.code, verdict.summary)
        _say(f"{cfg.node} stays drained: {verdict.code or 'no verdict'}")
        return status, verdict, report, xids
    if refused := slurm.scontrol("update", f"nodename={cfg.node}", "state=resume", dry_run=cfg.dry_run):
        _note(cfg, "resume-refused", None, refused)
        _say(refused)
        return EXIT_REFUSED, verdict, report, xids
    _note(cfg, "resume", None, verdict.summary)
    _say(f"RESUMED {cfg.node}: the preflight passes and torchimages had drained it ({row.reason_text})")
    return EXIT_PASS, verdict, report, xids


# ---------------------------------------------------------------------------------------------------- main

def _metrics(cfg: Config, status: int, v: Verdict | None, report: dict[str, Any] | None, xids: dict[str, int],
             started: float) -> None:
    if not cfg.metrics_dir:
        return
    outcome = {"verdict": v.kind if v else "refused", "code": v.code if v else None, "owner": v.owner if v else None,
               "exit": status, "duration_s": time.time() - started, "time": started, "xids": xids,
               "history": history.counts(history.read(cfg.state_dir, cfg.node).events)}
    try:
        metrics.write(cfg.metrics_dir, cfg.node, report, outcome)
    except (OSError, metrics.Unavailable) as exc:
        _say(f"metrics not written to {cfg.metrics_dir}: {exc}")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.time()
    env = dict(os.environ)
    try:
        cfg = config(args, env)
    except UsageError as exc:
        if _mode(env, args.mode) == "prolog" and not args.revalidate:
            # as Slurm's Prolog=, a non-zero exit drains the node: a setting of ours is never the node's fault
            print(f"torchimages-prolog: NOT ASSESSED: {exc} (exit 0 as Slurm's Prolog=: the node stays in service)",
                  file=sys.stderr)
            return EXIT_PASS
        print(f"torchimages-prolog: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.revalidate:
        status, verdict, report, xids = revalidate(cfg)
    else:
        verdict, report, xids = assess(cfg)
        print(verdict.line(), flush=True)
        status = act(cfg, verdict)
    for note in cfg.notes:
        _say(note)
    _metrics(cfg, status, verdict, report, xids, started)
    if cfg.mode == "prolog" and not args.revalidate and status in (EXIT_NOT_ASSESSED, EXIT_BREAKER):
        return EXIT_PASS          # Slurm drains a node whose Prolog exits non-zero: that is what these avoid
    return status
