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
the drain), and the preflight passes now with the GPUs Slurm's Gres (else the drain) says it has.
The whole run is bounded by --budget plus --grace (a confirmation gets what is left); SIGTERM stops verify's whole
process group and ends the prolog.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import time
from types import FrameType
from typing import Any

from . import history, metrics, slurm
from .act import act
from .assess import assess
from .revalidate import revalidate
from .settings import DEFAULT_STATE_DIR, Config, Interrupted, UsageError, config, mode_of, parser, say
from .verdict import (
    EXIT_BREAKER,
    EXIT_NOT_ASSESSED,
    EXIT_PASS,
    EXIT_USAGE,
    NOT_ASSESSED,
    Verdict,
)


def _metrics(cfg: Config, status: int, v: Verdict | None, report: dict[str, Any] | None, xids: dict[str, int],
             started: float) -> None:
    if not cfg.metrics_dir:
        return
    outcome: dict[str, Any] = {"verdict": v.kind if v else "refused", "code": v.code if v else None, "owner": v.owner if v else None,
               "exit": status, "duration_s": time.time() - started, "time": started, "xids": xids,
               "history": history.counts(history.read(cfg.state_dir, cfg.node).events)}
    try:
        metrics.write(cfg.metrics_dir, cfg.node, report, outcome)
    except (OSError, ValueError, metrics.Unavailable) as exc:
        say(f"metrics not written to {cfg.metrics_dir}: {exc}")


def _syslog(line: str) -> None:
    """The line in syslog too: under Prolog= stderr goes to slurmd's log, which nobody may read."""
    try:
        import syslog
        syslog.openlog("torchimages-prolog", 0, syslog.LOG_DAEMON)
        syslog.syslog(syslog.LOG_ERR, line)
    except (ImportError, OSError):
        pass


def _value(argv: list[str], option: str) -> str | None:
    """An option's value read from a command line that did not parse (what the trace of a bad setting needs)."""
    for i, arg in enumerate(argv):
        if arg == option and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(option + "="):
            return arg.split("=", 1)[1]
    return None


def _as_prolog(argv: list[str], env: dict[str, str]) -> bool:
    """Whether this run is Slurm's Prolog= (where a non-zero exit drains the node), read without the parser."""
    if "--revalidate" in argv:
        return False
    if env.get("SLURM_SCRIPT_CONTEXT", "").startswith("prolog"):
        return True               # slurmd runs it as Prolog=: whatever --mode says, a non-zero exit drains
    forced = _value(argv, "--mode")
    return mode_of(env, forced if forced in ("prolog", "step") else "auto") == "prolog"


def ungated(argv: list[str], env: dict[str, str], code: str, problem: str, started: float) -> None:
    """The trace of a run that could not gate the node (a bad setting of ours, our own crash): one line on stderr
    and syslog, a not-assessed event in the history, and the metrics, wherever they can be had. Never raises."""
    line = f"torchimages-prolog: NOT ASSESSED: {problem} ({code}: the node stays in service, ungated)"
    print(line, file=sys.stderr, flush=True)
    _syslog(line)
    try:
        _trace(argv, env, code, problem, started)
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - the line above is said already
        print(f"torchimages-prolog: no trace kept: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)


def _trace(argv: list[str], env: dict[str, str], code: str, problem: str, started: float) -> None:
    node = _value(argv, "--node") or env.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    if slurm.node_problem(node):
        return
    state = _value(argv, "--state-dir") or env.get("TORCHIMAGES_STATE_DIR") or DEFAULT_STATE_DIR
    try:
        if failed := history.record(state, node, "not-assessed", code, problem):
            say(failed)
    except ValueError:
        pass
    where = _value(argv, "--metrics-dir") or env.get("TORCHIMAGES_METRICS_DIR")
    if where:
        outcome: dict[str, Any] = {"verdict": NOT_ASSESSED, "code": code, "owner": None,
                                   "exit": 0 if _as_prolog(argv, env) else 3, "duration_s": time.time() - started,
                                   "time": started, "xids": {}}
        try:
            metrics.write(where, node, None, outcome)
        except (OSError, ValueError, metrics.Unavailable) as exc:
            say(f"metrics not written to {where}: {exc}")


def _run(args: argparse.Namespace, env: dict[str, str], started: float) -> int:
    cfg = config(args, env)
    if args.revalidate:
        status, verdict, report, xids = revalidate(cfg)
    else:
        verdict, report, xids = assess(cfg)
        print(verdict.line(), flush=True)
        status = act(cfg, verdict, report)
    for note in cfg.notes:
        say(note)
    _metrics(cfg, status, verdict, report, xids, started)
    if (cfg.mode == "prolog" or cfg.under_prolog) and not args.revalidate and status in (EXIT_NOT_ASSESSED,
                                                                                         EXIT_BREAKER):
        return EXIT_PASS          # Slurm drains a node whose Prolog exits non-zero: that is what these avoid
    return status


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(signum)


def _handle_signals() -> dict[int, Any]:
    """SIGTERM, SIGINT and SIGHUP raise Interrupted (so verify's process group is stopped); the handlers before."""
    try:
        return {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    except ValueError:            # not the main thread (an embedding caller): its own handlers stay
        return {}


def main(argv: list[str] | None = None, env: dict[str, str] | None = None) -> int:
    """The whole command; no traceback escapes: a bad setting, a crash or a signal of ours is not assessed (exit 0
    under Prolog=, where anything else drains the node), and only evidence of a host fault exits non-zero there."""
    argv = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ) if env is None else env
    started = time.time()
    prolog = _as_prolog(argv, env)
    previous = _handle_signals()
    try:
        return _run(parser().parse_args(argv), env, started)
    except UsageError as exc:
        if prolog:
            ungated(argv, env, "CONFIG_ERROR", str(exc), started)
            return EXIT_PASS
        print(f"torchimages-prolog: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Interrupted as exc:
        ungated(argv, env, "PROLOG_INTERRUPTED", f"stopped by {exc}; verify's process group was stopped", started)
        return EXIT_PASS if prolog else 128 + exc.signum
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - our own crash is never the node's fault
        ungated(argv, env, "PROLOG_CRASHED", f"torchimages-prolog failed: {type(exc).__name__}: {str(exc)[:200]}",
                started)
        return EXIT_PASS if prolog else EXIT_NOT_ASSESSED
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
