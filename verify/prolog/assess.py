"""The node's verdict: the kernel log's evidence, `verify --preflight` run within its limit (its report read with a
cap), and a second, longer run of the checks that timed out, or a hang seen on --hang-runs runs in a row."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from typing import Any

from . import history, kernlog, statefile, xid
from .settings import HANG_CODES, REPORT_CAP, Config, say
from .verdict import (
    FAULT,
    Verdict,
    confirmation,
    decide,
    merge,
    not_assessed,
    timed_out,
)


def _stop(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM, then SIGKILL, to the child's whole process group (verify and the checks it started)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=5)
            return
        except (ProcessLookupError, PermissionError):
            return
        except subprocess.TimeoutExpired:
            continue


def _run_verify(cmd: list[str], limit: float) -> tuple[int | None, str]:
    """(exit status or None when it ran past `limit`, the tail of stderr); its whole process group is stopped when
    it runs past it, and when the prolog itself is stopped (Interrupted) while it runs."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as err:
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        except OSError as exc:
            return 127, f"{cmd[0]}: {exc.strerror or exc}"
        try:
            rc: int | None = proc.wait(timeout=max(0.0, limit))
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            if proc.returncode is None:
                _stop(proc)
        err.seek(0, os.SEEK_END)
        err.seek(max(0, err.tell() - 8192))
        lines = [ln for ln in err.read().splitlines() if ln.strip()]
    return rc, (lines[-1] if lines else "")


def _load_report(path: str) -> tuple[Any, str | None, str]:
    """(the report verify wrote, or why there is none, and whether that is "none" (no JSON: verify's trouble) or
    "invalid" (one no verify could have written: too large, nested too deep))."""
    try:
        tail = statefile.read_tail(path, REPORT_CAP + 1)
    except OSError as exc:
        return None, f"no report ({statefile.problem(exc, path)})", "none"
    if tail.cut or tail.size > REPORT_CAP:
        return None, f"a report of {tail.size} bytes, more than any verify writes ({REPORT_CAP} at most)", "invalid"
    try:
        return json.loads(tail.text), None, ""
    except RecursionError:
        return None, "a report nested deeper than any verify writes", "invalid"
    except ValueError as exc:
        return None, f"a report that is not JSON ({str(exc)[:80]})", "none"


def preflight(cfg: Config, budget: float, check: str | None = None) -> tuple[Verdict, dict[str, Any] | None]:
    """verify --preflight (all its checks, or one): its verdict and report; never raises but Interrupted."""
    with tempfile.TemporaryDirectory(prefix="torchimages-prolog-") as tmp:
        out = os.path.join(tmp, "preflight.json")
        cmd = [cfg.python, "-m", "verify", "--preflight", "--budget", f"{budget:g}", "--json", out]
        cmd += ["--checks", check] if check else []
        cmd += ["--expect-gpus", str(cfg.expected_gpus)] if cfg.expected_gpus else []
        limit = min(budget + cfg.grace_s, cfg.deadline - time.monotonic())
        rc, last = _run_verify(cmd, limit)
        if rc is None:
            return not_assessed("PREFLIGHT_TIMEOUT", f"verify --preflight ran past {limit:.0f} s (budget {budget:g} s"
                                f" + grace, within the prolog's {cfg.budget + cfg.grace_s:g} s) and was stopped"), None
        report, problem, kind = _load_report(out)
        if problem and kind == "invalid":
            return not_assessed("REPORT_INVALID", f"verify --preflight wrote {problem}"), None
        if problem:
            how = f"was killed by {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.valid_signals() else f"exited {rc}"
            return not_assessed("PREFLIGHT_NO_REPORT", f"verify --preflight {how} and wrote no report"
                                + (f": {last}" if last else "")), None
    return decide(report, cfg.mode == "prolog" and bool(cfg.expected_gpus)), report


def kernel_evidence(cfg: Config) -> tuple[tuple[str, str] | None, dict[str, int]]:
    """(code, summary) when the kernel log (read once, held until acted on) says drain; and the events by action."""
    if not cfg.kernel_log:
        return None, {}
    state, problem = kernlog.load(cfg.state_dir, cfg.node)
    if problem:
        cfg.notes.append(problem)
    log = kernlog.read()
    if log.lines is None:
        cfg.notes.append(f"kernel log not read ({log.source}): Xids before this run are unknown")
        lines: list[str] = []
    else:
        lines = log.lines
    cfg.kern, held = kernlog.advance(state, lines, kernlog.host_clock(cfg.proc), cfg.lookback_s)
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
    limit = min(wanted, (cfg.deadline - time.monotonic()) * 0.8)
    if limit <= cfg.budget:
        return not_assessed("PREFLIGHT_TIMEOUT", f"{', '.join(names)} timed out and no time is left within the "
                            f"prolog's {cfg.budget + cfg.grace_s:g} s (--budget + --grace) to confirm it"), report
    say(f"{', '.join(names)} timed out; running {'it' if len(names) == 1 else 'them'} alone with {limit:g} s to "
         "confirm")
    rerun, rerun_report = preflight(cfg, limit, ",".join(names))
    verdict = confirmation(report, rerun, rerun_report, limit, cfg.mode == "prolog" and bool(cfg.expected_gpus))
    return verdict, merge(report, rerun_report) if isinstance(rerun_report, dict) else report


def _hung(cfg: Config, v: Verdict, events: list[dict[str, Any]]) -> Verdict:
    """A preflight that hung past budget + grace on --hang-runs runs in a row (this one included) is evidence: a
    degrading GPU stalls its checker (NVSentinel's users report dozens of kills). Not with a budget too small."""
    if v.code != "PREFLIGHT_TIMEOUT" or not cfg.hang_runs or cfg.budget * cfg.confirm_factor < cfg.min_confirm_s:
        return v
    runs = history.streak(events, HANG_CODES) + 1
    if runs < cfg.hang_runs:
        return v
    return Verdict(FAULT, "PREFLIGHT_HUNG", "host", f"the preflight hung past its budget on {runs} runs in a row "
                   f"(--hang-runs {cfg.hang_runs}): {v.summary}", "preflight")


def assess(cfg: Config) -> tuple[Verdict, dict[str, Any] | None, dict[str, int]]:
    """The node's verdict: the kernel log's evidence, the preflight, and a second run of the timed-out checks."""
    kern, xids = kernel_evidence(cfg)
    verdict, report = preflight(cfg, cfg.budget)
    if verdict.kind == FAULT and not verdict.confirmed and report is not None:
        if kern:
            verdict = Verdict(FAULT, verdict.code, "host", f"{verdict.summary}; {kern[1]}", verdict.check)
        else:
            verdict, report = _confirm(cfg, report)
    if kern and not verdict.drains:
        verdict = Verdict(FAULT, kern[0], "host", kern[1], "kernel-log")
    past = history.read(cfg.state_dir, cfg.node)
    if past.error or past.garbled:              # said, never skipped silently: the hang streak reads what is left
        cfg.notes.append(past.error or f"{past.garbled} of {history.path(cfg.state_dir, cfg.node)}")
    return _hung(cfg, verdict, past.events), report, xids
