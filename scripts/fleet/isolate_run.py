"""The runner of `make isolate`, inside the Slurm allocation: each round's pairs as concurrent Slurm steps.

Started by the batch script `make isolate` writes, on the allocation's first node, with only the standard library
(`python3 -I`, this checkout put first by hand: isolate_job.RUNNER_BOOT). Each pair is one `srun` step on its two
nodes running the job's image through the launcher (TORCHIMAGES_ISOLATE_STEP: the launcher's srun options and
command, as JSON), `verify --checks nccl` under torchrun across the pair; its report is read back from
TORCHIMAGES_REPORTS/<round>-<pair>.json. The plan and the verdict are isolate.py's; the answer is printed and written
to TORCHIMAGES_REPORTS/isolate.json. Exit 0: no node at fault; 1: node(s) named; 2: undetermined or intermittent (no
node named; a failed pair on record is never exit 0).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..errors import UserError, one_line
from ..fsutil import atomic_write, read_bounded
from . import jsonrecord
from .isolate import Decision, Outcome, first_round, max_rounds, plan_done
from .isolate_facts import SKEW_DEFAULT_S, pair_problem, skew
from .job_knobs import ISOLATE, given, misspelt
from .job_knobs import number as _number
from .model import ISOLATE_KIND
from .plausible import BUSBW_MAX_GBPS, NODE_NAME, UNJUDGED_CODES, node_key, report_problem

KIND = ISOLATE_KIND
STEP_TIMEOUT_S = 300.0      # a pair's step ends here (TORCHIMAGES_ISOLATE_TIMEOUT overrides): a hang is a failure
NOT_EXERCISED = "NCCL_NOT_EXERCISED"    # a CPU pair over gloo: its figure is real, its check only says "no GPU"
TIMEOUT_MAX_S = 86400.0     # a pair's step: a day is past any all-reduce (and the batch script's own --time)
GPUS_MAX = 64               # make's GPUS: at most 64 per node (scripts/settings.py)
REPORT_CAP = 64 << 20       # bytes of a pair's report read at most (verify writes a few hundred KiB)
PORTS = (1024, 65536)       # the rendezvous ports a pair may take: unprivileged, below 2^16
STATUSES = frozenset({"pass", "warn", "skip", "fail"})
# a failed nccl check that is verify's own trouble, no node's: its crash and the measurements it refused (but an
# interruption: srun stops a pair's step when one node's part dies, and that is the node's)
OURS = (UNJUDGED_CODES - {"INTERRUPTED"}) | {"CHECK_CRASHED"}
# a warning that the all-reduce was slower than its baseline (verify/checks/nccl/bandwidth.py)
LOW_CODES = frozenset({"BANDWIDTH_LOW", "FABRIC_BANDWIDTH_LOW"})


MISSING = object()       # a pair's report file that is not there at all (outcome)


def outcome(nodes: tuple[str, ...], report: Any, status: int | None, seconds: float, expect_gpus: int,
            began: float | None = None, skew_s: float = SKEW_DEFAULT_S) -> Outcome:
    """A pair's result from its report (None: none written) and its step's exit status (None: killed at the
    timeout): ok only with a right all-reduce and a finite, positive bus bandwidth, measured across the pair in this
    step (isolate_facts; `began`: the step's start, epoch seconds)."""
    took = round(seconds, 1)
    if status is None:
        return Outcome(nodes, False, None, "timed out", took, hung=True)
    if not isinstance(report, dict):
        # a step that exited 0 ran verify to its end on both nodes: no file there then is the plumbing's (a reports
        # folder not shared, or not the one the runner reads), never a node's strike (our trouble names no node); a
        # file that is no report (garbled, a FIFO) is the pair's failure as before
        ours = status == 0 and report is MISSING
        return Outcome(nodes, False, None, f"no report (step exit {status})", took, ours=ours)
    if forged := report_problem(report):
        return Outcome(nodes, False, None, f"a report no verify writes: {forged}"[:200], took)
    if report.get("interrupted"):       # a run cut off by a signal cleared nothing, whatever its checks say
        return Outcome(nodes, False, None, one_line(f"interrupted by {report['interrupted']}")[:200], took)
    check = next((c for c in report.get("checks") or [] if isinstance(c, dict) and c.get("name") == "nccl"), None)
    if check is None:
        return Outcome(nodes, False, None, "the report holds no nccl check", took)
    metrics: dict[str, Any] = check["metrics"] if isinstance(check.get("metrics"), dict) else {}
    busbw, wrong = (metrics[k].get("value") if isinstance(metrics.get(k), dict) else None
                    for k in ("busbw_max", "wrong"))
    code, state = check.get("code"), check.get("status")
    accepted = state in ("pass", "warn") or (state == "skip" and code == NOT_EXERCISED and expect_gpus == 0)
    if not accepted:
        # verify's own trouble (its crash, a measurement it refused) or the image's (one image on every node): the
        # pair is not assessed, never a node's strike (the house rule: our trouble never names a node)
        ours = code in OURS or check.get("owner") == "image"
        return Outcome(nodes, False, None, one_line(f"{code or state}: {check.get('summary') or ''}")[:200], took,
                       ours=ours, wrong=code == "NCCL_WRONG_RESULT")
    if state == "warn" and code in LOW_CODES:
        # the check held the pair's figure against the GPU's or the fabric's baseline and found it low: a slow pair
        # is evidence (a node slow every other all-reduce), never a pass that clears both nodes
        return Outcome(nodes, False, None, one_line(f"{code}: {check.get('summary') or ''}")[:200], took)
    if isinstance(busbw, bool) or not isinstance(busbw, (int, float)) or not math.isfinite(busbw) or busbw <= 0 \
            or busbw > BUSBW_MAX_GBPS:
        # a figure no link reaches would be every median's reference and call each healthy pair slow
        return Outcome(nodes, False, None, f"no valid bus bandwidth ({str(busbw)[:24]}; 0 to {BUSBW_MAX_GBPS:g} GB/s)", took)
    if wrong != 0:
        return Outcome(nodes, False, None, f"{wrong!r} wrong element(s)", took, wrong=True)
    if status != 0:
        # verify exits 0 on a pass or a warning on each node: a step that exited otherwise failed on one of the two
        # (a rank that crashed after the all-reduce, a node's torchrun that never joined), whatever the report says
        return Outcome(nodes, False, None, f"the step exited {status} though its report passes: a node's part failed",
                       took)
    if why := pair_problem(report, check, nodes, began, None if began is None else began + seconds, skew_s,
                           per_node=max(expect_gpus, 1)):
        return Outcome(nodes, False, None, one_line(why)[:200], took, ours=True)
    return Outcome(nodes, True, float(busbw), "", took)


def step_argv(base: list[str], pair: tuple[str, ...], gpus: int) -> list[str]:
    """One pair's srun: its two nodes, one task each, the launcher's options and command from `base`
    (["srun", <options>..., "--", <command>...])."""
    split = base.index("--")
    options = [os.path.expandvars(o) for o in base[1:split]]       # ${TORCHIMAGES_IMAGE}, ${TORCHIMAGES_REPORTS}
    return [base[0], f"--nodes={len(pair)}", f"--ntasks={len(pair)}", "--ntasks-per-node=1",
            f"--nodelist={','.join(pair)}", "--kill-on-bad-exit=1", "--export=ALL",
            *([f"--gres=gpu:{gpus}"] if gpus else []), *options, *base[split + 1:]]


class Interrupted(Exception):
    """A signal told the runner to stop before the rounds ended (its name in args[0])."""


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


# a stop signal that came while a step was being started: held until the step is on the list _stop_all stops, so
# a signal landing between fork and that list never leaves a step behind holding its nodes (raised by _starting)
_held: list[str] = []
_holding = False


def _interrupt(signum: int, _frame: Any) -> None:
    # once: a second signal (scancel twice, Ctrl-C held) never cuts short the stop of the steps or the answer
    for each in STOP_SIGNALS:
        signal.signal(each, signal.SIG_IGN)
    if _holding:
        _held.append(signal.Signals(signum).name)
        return
    raise Interrupted(signal.Signals(signum).name)


@contextlib.contextmanager
def _starting() -> Iterator[None]:
    """A step's start and its place on the list of running steps, as one: a stop signal meanwhile is raised after."""
    global _holding
    _holding = True
    try:
        yield
    finally:
        _holding = False
    if _held:
        raise Interrupted(_held.pop())


def _stop_all(procs: list[subprocess.Popen[bytes]], grace_s: float = 5.0) -> None:
    """Each step still running told to stop at once (srun ends its step on SIGTERM: the tasks get it, then SIGKILL
    after KillWait), killed after `grace_s` (a srun that hangs)."""
    running = [p for p in procs if p.poll() is None]
    for proc in running:
        proc.send_signal(signal.SIGTERM)
    end = time.monotonic() + grace_s
    for proc in running:
        try:
            proc.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def run_round(number: int, pairs: list[tuple[str, str]], base: list[str], reports: Path, port: int, gpus: int,
              timeout_s: float, skew_s: float = SKEW_DEFAULT_S) -> list[tuple[int, Outcome]]:
    """Every pair of the round at once (disjoint nodes), each within `timeout_s`; their outcomes."""
    started: list[tuple[str, tuple[str, str], subprocess.Popen[bytes], Any, float, float]] = []
    ended: dict[str, float] = {}
    try:
        for index, pair in enumerate(pairs):
            name = f"round{number}-pair{index + 1}"
            (reports / f"{name}.json").unlink(missing_ok=True)
            env = {**os.environ, "TORCHIMAGES_GROUP": name, "RDZV_ENDPOINT": f"{pair[0]}:{port_for(port, index)}"}
            # a link left where the log goes (by an earlier step's image) is removed, never followed: a new file only
            (reports / f"{name}.log").unlink(missing_ok=True)
            log = os.fdopen(os.open(reports / f"{name}.log", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                    0o644), "wb")             # closed after the step, below
            with _starting():
                try:
                    proc = subprocess.Popen(step_argv(base, pair, gpus), env=env, stdout=log,
                                            stderr=subprocess.STDOUT)
                except BaseException:
                    log.close()
                    raise
                started.append((name, pair, proc, log, time.monotonic(), time.time()))
        deadline = time.monotonic() + timeout_s
        while len(ended) < len(started) and time.monotonic() < deadline:     # each step's own end time
            for name, _, proc, _, _, _ in started:
                if name not in ended and proc.poll() is not None:
                    ended[name] = time.monotonic()
            time.sleep(0.2)
        statuses = [proc.poll() for _, _, proc, _, _, _ in started]
        # the steps past the timeout stopped together (srun ends its step on SIGTERM), not one after another: a round
        # of hung pairs waited 30 s each and ran out the job's own time limit
        _stop_all([proc for (_, _, proc, _, _, _), status in zip(started, statuses, strict=True) if status is None],
                  grace_s=30.0)
    except BaseException:
        # the runner was told to stop (scancel, the job's time limit: KillWait is 30 s), or its own trouble stopped
        # the round (a pair's log it could not open, a step srun could not start: EAGAIN, a folder gone stale):
        # every step still running is stopped with it, never left behind holding its nodes; the round is not judged
        _stop_all([proc for _, _, proc, _, _, _ in started])
        raise
    finally:
        for _, _, _, log, _, _ in started:
            log.close()
    results = []
    for (name, pair, _, _, t0, wall), status in zip(started, statuses, strict=True):
        seconds = ended.get(name, time.monotonic()) - t0
        path = reports / f"{name}.json"
        report = _read_report(path) if os.path.lexists(path) else MISSING
        results.append((number, outcome(pair, report, status, seconds, gpus, wall, skew_s)))
    return results


def _read_report(path: Path) -> Any:
    """A pair's report, or None (none written, not JSON, too large or nested too deep, no regular file: no result,
    the pair's failure as a missing report is, never a traceback or a wait that ends the isolation unanswered). The
    step's image wrote it: a FIFO there never blocks the runner, a link is never followed (read_bounded)."""
    try:
        return jsonrecord.loads(read_bounded(path, REPORT_CAP, "verify report").decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def port_for(base: int, offset: int) -> int:
    """The rendezvous port `offset` places after `base`, wrapped into PORTS (10,000 nodes x 15 rounds stays a port)."""
    low, high = PORTS
    return low + (base - low + offset) % (high - low)


def isolate(nodes: list[str], base: list[str], reports: Path, port: int, gpus: int, timeout_s: float,
            echo: Any = print, skew_s: float = SKEW_DEFAULT_S) -> Decision:
    """Round after round until the plan says stop (at most ceil(log2 N) + 1 rounds)."""
    first_round(nodes)          # refuses fewer than two nodes, or a node named twice
    results: list[tuple[int, Outcome]] = []
    decision, pairs = plan_done(nodes, results)
    number = 0
    try:
        while pairs:
            number += 1
            echo(f"isolate: round {number} of at most {max_rounds(len(nodes))}: "
                 + ", ".join("+".join(p) for p in pairs))
            results += run_round(number, pairs, base, reports, port_for(port, number * len(nodes)), gpus, timeout_s,
                                 skew_s)
            decision, pairs = plan_done(nodes, results)
    except Interrupted as exc:
        # the finished rounds' evidence stands (a node named on it is named), but nothing is cleared: not final
        return dataclasses.replace(plan_done(nodes, results)[0], interrupted=str(exc.args[0]))
    except OSError as exc:
        # the runner's own trouble in a later round (a leftover folder where a round's report or log goes in a
        # reused reports folder, a step srun could not start, NFS gone stale) stops the rounds as a signal does: the
        # finished rounds' evidence stands and is written, a node named on it is named, nothing is cleared (it
        # ended "isolate: [Errno 21] ...", exit 2, and the node round 1 saw fail was in no answer)
        return dataclasses.replace(plan_done(nodes, results)[0],
                                   interrupted=f"the runner's own error ({one_line(exc)[:160]})")
    return decision


def format_decision(d: Decision) -> str:
    lines = [f"isolate: {d.summary}"]
    width = max([4, *(len(f.node) for f in d.findings)])
    for f in d.findings:
        lines.append(f"  {f.node:<{width}}  {f.verdict.upper() if f.verdict != 'ok' else 'ok':<12}  "
                     + ("; ".join(f.evidence) or "never paired"))
    if d.median is not None:
        lines.append(f"  median passing pair: {d.median:.3g} GB/s; {d.rounds} round(s) of at most "
                     f"{max_rounds(len(d.nodes))}")
    return "\n".join(lines)


def decision_json(d: Decision) -> dict[str, Any]:
    return {"kind": KIND, "version": 1, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "summary": d.summary, "rounds": d.rounds, "max_rounds": max_rounds(len(d.nodes)),
            "median_busbw_GBps": d.median, "spread": d.spread, "interrupted": d.interrupted,
            "named": [{"node": f.node, "verdict": f.verdict, "evidence": f.evidence} for f in d.named],
            "undetermined": d.undetermined, "intermittent": d.intermittent,
            "nodes": [asdict(f) for f in d.findings],
            "pairs": [{"round": t.round, "nodes": list(t.outcome.nodes), "verdict": t.verdict, "ratio": t.ratio,
                       "busbw_GBps": t.outcome.busbw, "why": t.outcome.why or None, "seconds": t.outcome.seconds}
                      for t in d.tried]}


def exit_status(d: Decision) -> int:
    """1: node(s) named; 2: no answer (undetermined, intermittent, a spread a median cannot read, or any failed pair
    on record that no named node explains); 0 only when every pair passed or its failure is a named node's."""
    if d.named:
        return 1
    return 2 if d.undetermined or d.spread or d.failed_pairs or d.unjudged_pairs or d.interrupted else 0


def _hostnames(nodelist: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The allocation's nodes as `scontrol show hostnames` prints them, and the entries that are not assessed, each
    with why: one that is no one host name (a hostlist or a space would make srun run its pair on other nodes), or a
    host named again however it is spelt (paired with itself, it all-reduces over its own links and would pass as
    the reference that clears its partners). One bad entry never refuses the others: they are judged."""
    try:
        proc = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                              timeout=60, check=False, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"scontrol show hostnames failed ({one_line(exc)[:120]}): run this inside a Slurm "
                        f"allocation, from the batch script make isolate writes") from None
    if proc.returncode != 0:
        raise UserError(f"scontrol show hostnames {nodelist} failed: {one_line(proc.stderr.strip())[:200]}")
    names: list[str] = []
    refused: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        name = line.strip()
        if not name:
            continue
        if not NODE_NAME.fullmatch(name):
            refused.append((name, "no one host name (a hostlist or a space would make srun run its pair on other "
                                  "nodes)"))
        elif (first := seen.get(node_key(name))) is not None:
            refused.append((name, f"the host {first} named again (a node is named twice: paired with itself it "
                                  "would pass as a reference)"))
        else:
            seen[node_key(name)] = name
            names.append(name)
    return names, refused


def _refused_line(entry: str, why: str) -> str:
    return f"isolate: not assessed: {one_line(repr(entry))[:80]} from scontrol show hostnames is {why}; the others " \
           "are judged"


def _step(text: str) -> list[str]:
    try:
        base = json.loads(text)
    except (ValueError, RecursionError):
        base = None
    if not (isinstance(base, list) and "--" in base and all(isinstance(a, str) for a in base)):
        raise UserError("TORCHIMAGES_ISOLATE_STEP is not the launcher's srun argv (JSON: [\"srun\", ..., \"--\", ...]): "
                        "write the job again with make isolate")
    return base


def main(argv: list[str] | None = None) -> int:
    """The runner (_main), and the signal handlers it installs given back when it returns (a caller in-process)."""
    previous = {each: signal.getsignal(each) for each in STOP_SIGNALS}
    _held.clear()
    try:
        return _main(argv)
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="isolate_run", description=__doc__)
    p.add_argument("--gpus", default="0")
    p.add_argument("--timeout", default=None, help=f"seconds a pair's step may take (default "
                   f"TORCHIMAGES_ISOLATE_TIMEOUT, else {STEP_TIMEOUT_S:g})")
    args = p.parse_args(argv)
    try:
        needed = ("TORCHIMAGES_ISOLATE_STEP", "TORCHIMAGES_REPORTS", "RDZV_PORT", "SLURM_JOB_NODELIST")
        if missing := next((n for n in needed if n not in os.environ), None):   # the batch script sets each
            raise KeyError(missing)
        gpus = int(_number(args.gpus, "--gpus", 0, GPUS_MAX, whole=True))
        if args.timeout is not None:
            timeout_s = _number(args.timeout, "--timeout", 0, TIMEOUT_MAX_S)
        else:             # empty is unset, said (the rule of every TORCHIMAGES_* knob: job_knobs)
            timeout, notes = given(os.environ, ISOLATE, f"{STEP_TIMEOUT_S:g} s")
            notes += given(os.environ, "TORCHIMAGES_CLOCK_SKEW", f"{SKEW_DEFAULT_S:g} s")[1]    # skew() below
            notes += misspelt(os.environ)        # sbatch's own knob misspelt: said, as make says it
            for note in notes:
                print(f"isolate: note: {note}", flush=True)
            timeout_s = _number(timeout, ISOLATE, 0, TIMEOUT_MAX_S) if timeout is not None else STEP_TIMEOUT_S
        base = _step(os.environ["TORCHIMAGES_ISOLATE_STEP"])
        reports = Path(os.environ["TORCHIMAGES_REPORTS"])
        if not reports.is_dir():
            raise UserError(f"TORCHIMAGES_REPORTS={reports} is not a folder: the batch script makes it; run this from "
                            "the script make isolate writes")
        port = int(_number(os.environ["RDZV_PORT"], "RDZV_PORT", PORTS[0], PORTS[1] - 1, whole=True))
        # an answer an earlier run left in a reused folder is not this run's: gone before the first pair, so a run
        # killed before its own answer leaves none, never the last run's "no node at fault"
        (reports / "isolate.json").unlink(missing_ok=True)
        for signum in STOP_SIGNALS:
            signal.signal(signum, _interrupt)
        nodes, refused = _hostnames(os.environ["SLURM_JOB_NODELIST"])
        for entry, why in refused:
            print(_refused_line(entry, why), flush=True)
        if len(nodes) < 2 and refused:
            raise UserError(f"isolation needs at least two nodes: a pair, and {len(nodes)} of the allocation's "
                            f"{len(nodes) + len(refused)} entries is one host name: check the allocation's node list")
        decision = isolate(nodes, base, reports, port, gpus, timeout_s, skew_s=skew())
        print(format_decision(decision))
        answer = {**decision_json(decision),
                  "not_assessed": [{"entry": entry, "why": why} for entry, why in refused]}
        atomic_write(reports / "isolate.json", json.dumps(answer, indent=1) + "\n")
        print(f"isolate: wrote {reports / 'isolate.json'}")
    except Interrupted as exc:      # stopped outside the rounds (reading the node list, writing the answer)
        print(f"isolate: undetermined: interrupted by {exc.args[0]} before an answer was written: no node named",
              file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"isolate: {exc.args[0]} is not set: run this from the batch script make isolate writes", file=sys.stderr)
        return 2
    except (UserError, ValueError, OSError) as exc:
        print(f"isolate: {one_line(exc)}", file=sys.stderr)
        return 2
    unassessed = f"; not assessed: {', '.join(one_line(repr(e))[:80] for e, _ in refused)}" if refused else ""
    print(f"isolate: {decision.summary}{unassessed}")   # the answer is the last line (the table above holds its evidence)
    # an entry that is no host name may be a node never judged: no "no node at fault" for the allocation (2, not
    # 0); a host named again was judged under its first spelling
    unjudged = any(not NODE_NAME.fullmatch(e) for e, _ in refused)
    return exit_status(decision) or (2 if unjudged else 0)


def guarded(argv: list[str] | None = None) -> int:
    """main, and a crash of ours (a traceback exits 1, which the job's exit says is "node(s) named") is one line and
    exit 2: undetermined, no node named."""
    try:
        return main(argv)
    except Exception as exc:  # noqa: BLE001 - any crash of the runner is ours, never a node's
        where = exc.__traceback__
        while where is not None and where.tb_next is not None:
            where = where.tb_next
        at = f" at {os.path.basename(where.tb_frame.f_code.co_filename)}:{where.tb_lineno}" if where else ""
        print(f"isolate: not assessed: the runner crashed ({type(exc).__name__}{at}: {one_line(exc)[:200]}): the "
              "tool's trouble, no node named", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(guarded())
