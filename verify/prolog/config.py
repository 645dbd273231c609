"""torchimages-prolog's settings: its options, Slurm's environment and our knobs, read into one Config.

A bad option is a UsageError (one line; under Slurm's Prolog= a CONFIG_ERROR, exit 0: a setting of ours is never the
node's fault); a bad TORCHIMAGES_* knob (the environment's or the settings file's) is said, traced and not applied: its
default holds and the node stays gated (_knob, settings.read). The whole run's cap (--budget + --grace) starts here (verify/prolog/deadline.py).
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

from ..shared import clockskew
from . import context, gpuset, kernlog, knobhint, settings, slurm, slurmconf
from .deadline import Deadline
from .verdict import decimal, finite_positive

T = TypeVar("T")
DEFAULT_STATE_DIR = "/var/lib/torchimages"
MAX_GPUS = 1024                 # more GPUs on one node than any Slurm node has: a setting gone wrong
# what Slurm's gres/gpu plugin writes in SLURM_JOB_GPUS (and CUDA_VISIBLE_DEVICES) for a job on a GPU node that was given
# none of its GPUs (common_gres_set_env, Slurm 17.11-20.02): Slurm's own value, no setting gone wrong
NO_DEV_FILES = "NoDevFiles"
DEFAULT_BREAKER = 0.10
DEFAULT_HANG_RUNS = 3
DEFAULT_MIN_CONFIRM_S = 10.0
# passing preflights in a row that return a node drained for an intermittent fault (revalidate.INTERMITTENT_CODES):
# one pass of a fault that comes and goes proves no repair (NVSentinel's return to service waits for the check to stay
# healthy; NVIDIA's catalog sends a recurring Xid 48, an SDC or NVLink errors to field diagnosis, not to one retry)
DEFAULT_RETURN_PASSES = 3
MAX_RETURN_PASSES = 20
# the default grace is the budget, at least this: verify's floors (its checks' share of the host's own `import torch`
# time, ~15 of them) take a healthy GPU node whose import takes 4 s to ~60 s, and a healthy node stopped on every
# run would count towards --hang-runs
MIN_GRACE_S = 60.0
# the environment knobs the prolog reads: a TORCHIMAGES_* variable that is almost one of them is a misspelt setting,
# said in one line (the run goes on with the default: one typo in a node's environment never ungates a fleet)
KNOBS = ("TORCHIMAGES_BREAKER", "TORCHIMAGES_HANG_RUNS", "TORCHIMAGES_STATE_DIR", "TORCHIMAGES_METRICS_DIR",
         clockskew.ENV, "TORCHIMAGES_RETURN_PASSES")
# what an empty knob falls back to (settings.unset_blanks: empty is unset), as said in its note
KNOB_DEFAULTS = {"TORCHIMAGES_BREAKER": f"{DEFAULT_BREAKER:g}", "TORCHIMAGES_HANG_RUNS": f"{DEFAULT_HANG_RUNS}",
                 "TORCHIMAGES_METRICS_DIR": "no metrics", clockskew.ENV: f"{clockskew.DEFAULT_S:g} s",
                 "TORCHIMAGES_RETURN_PASSES": f"{DEFAULT_RETURN_PASSES}"}

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
    # the operator's knobs gone wrong (environment or settings file): each said, its default applied, and traced in
    # every history event and the metrics of the run (settings.read: one rule, the node stays gated)
    setting_problems: list[str] = field(default_factory=list)
    hang_runs: int = DEFAULT_HANG_RUNS
    min_confirm_s: float = DEFAULT_MIN_CONFIRM_S
    return_passes: int = DEFAULT_RETURN_PASSES   # a revalidation of an intermittent fault: passes in a row it needs
    deadline: Deadline = field(default_factory=lambda: Deadline(float("inf")))   # the whole run's cap
    proc: str = kernlog.PROC
    kern: kernlog.State | None = None       # the kernel log's state once read (settled after a drain)
    # the held events a GPU reset spent before verify ran, and the reset records (cli.assess: repair.unrepaired)
    spent: tuple[list[dict[str, Any]], list[Any]] = field(default_factory=lambda: ([], []))
    kernel_log_read: bool = False           # this run read the kernel log (a revalidation of an Xid drain needs it)
    kernel_log_cause: str | None = None     # a revalidation: the kernel-log evidence the drain stood on, or None
    drained_codes: frozenset[str] = frozenset()   # a revalidation: the codes of the drains its repair must prove
    drained_checks: frozenset[str] = frozenset()  # a revalidation: the checks whose faults those drains stood on
    reset_gpus: frozenset[str] = frozenset()      # a revalidation: the GPUs (UUIDs) whose reset stood for the repair
    faulted_gpus: frozenset[str] = frozenset()    # a revalidation: the GPUs its drains named (UUIDs, PCI addresses)
    host: str = ""                          # this host's name (gethostname: what slurmd matches NodeHostName to)
    slurmd_name: str | None = None          # SLURMD_NODENAME: a claim (anyone can set it), never a proof
    under_prolog: bool = False              # run by slurmd as Prolog= (whatever --mode says): non-zero drains
    clock_skew_s: float = clockskew.DEFAULT_S   # TORCHIMAGES_CLOCK_SKEW: a GPU reset record this far ahead is believed
    closing: str | None = None              # the verdict's line on stderr, said last (notes.close)
    started: float | None = None            # when this run began (epoch): a hang streak counts runs that did not overlap
    started_up: float | None = None         # the same in /proc/uptime (a wall clock stepped back moves not it)
    job_env: bool = False                   # a job's step: its environment is the job's, never the operator's (settings)
    claim_open: bool = False                # drained with our reason, neither re-counted and recorded nor given back yet
    job_gpus: gpuset.Seen = None           # the GPUs its preflight sees, by their ids on the node (gpuset.py)

    @property
    def host_gpus(self) -> bool:
        """Allocated GPUs that are invisible are the host's fault: under Prolog=, on the host itself, and never where
        the environment is a job's (SLURM_SCRIPT_CONTEXT or a Gres count it exported would drain a healthy node)."""
        return self.mode == "prolog" and not self.job_env and bool(self.expected_gpus)


class UsageError(Exception):
    """Bad arguments or environment: one line, exit 2 (as Slurm's Prolog=: not assessed, exit 0)."""


class Interrupted(Exception):
    """SIGTERM, SIGINT or SIGHUP: verify's process group is stopped and the prolog ends."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:        # a bad option is a UsageError, never argparse's exit 2
        raise UsageError(f"{message} (torchimages-prolog --help lists the options)")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="torchimages-prolog", description="Gate a Slurm node before a job (as Prolog= or a job's first "
                "step): verify --preflight, drain the node only on a host fault; --revalidate returns it to service. "
                "Exit statuses and knobs: docs/prolog-and-fleet.md, docs/prolog.md.")
    p.add_argument("--budget", default="30", help="the preflight's time budget in seconds (default 30)")
    p.add_argument("--mode", choices=("auto", "prolog", "step"), default="auto",
                   help="prolog (Slurm's Prolog=) or step (a job's first step); auto reads Slurm's environment")
    p.add_argument("--revalidate", action="store_true",
                   help="on a node torchimages drained: rerun the preflight and resume the node only on a pass")
    p.add_argument("--node", help="this node's Slurm name (default SLURMD_NODENAME, else the short host name)")
    p.add_argument("--partition", help="the partition the breaker counts (default SLURM_JOB_PARTITION, else all)")
    p.add_argument("--breaker", default=None, help="the largest share of a partition torchimages holds drained "
                   "(default 0.10; TORCHIMAGES_BREAKER)")
    p.add_argument("--state-dir", default=None,
                   help=f"history and kernel-log state (default {DEFAULT_STATE_DIR}; TORCHIMAGES_STATE_DIR)")
    p.add_argument("--metrics-dir", default=None,
                   help="node_exporter's textfile collector folder (TORCHIMAGES_METRICS_DIR); none: no metrics")
    p.add_argument("--confirm-factor", default="4", help="a timed-out check reruns alone with this x the budget (default 4)")
    p.add_argument("--grace", default=None, help="seconds the whole run may take past its budget: the prolog's "
                   f"hard cap is --budget + --grace, a confirmation included (default: the budget, at least "
                   f"{MIN_GRACE_S:g} s: 90 s with the default budget; Slurm's PrologEpilogTimeout must be above the "
                   "cap + 10 s)")
    p.add_argument("--lookback", default="24", help="hours of kernel log a first read of a boot takes, and watched Xids "
                   "count within (default 24); after a kept cursor every line is read")
    p.add_argument("--no-kernel-log", action="store_true", help="do not read the kernel log for Xids")
    p.add_argument("--flap-window", default="7", help="days: a node drained again this soon after a resume is "
                                                       "flagged for hardware inspection (default 7)")
    p.add_argument("--hang-runs", default=None, help="a preflight that hangs past budget + grace this many runs in "
                   f"a row is the host's (PREFLIGHT_HUNG; 2 or more, 0: never; default {DEFAULT_HANG_RUNS}; "
                   "TORCHIMAGES_HANG_RUNS)")
    p.add_argument("--return-passes", default=None, help="--revalidate of a drain for an intermittent fault (SDC, "
                   "a wrong kernel or all-reduce result, NVLink errors, a kernel-log Xid): passing preflights in a "
                   f"row it needs (1 to {MAX_RETURN_PASSES}; default {DEFAULT_RETURN_PASSES}; "
                   "TORCHIMAGES_RETURN_PASSES)")
    p.add_argument("--min-confirm", default=str(DEFAULT_MIN_CONFIRM_S), help="seconds: a confirmation limit "
                   "(budget x factor) below this cannot prove a hang; the timeout is then our setting's "
                   f"(default {DEFAULT_MIN_CONFIRM_S:g})")
    p.add_argument("--python", default=sys.executable, help="the Python that runs verify (default this one)")
    p.add_argument("--dry-run", action="store_true", help="print the scontrol commands instead of running them: "
                   "nothing is drained or resumed (a host fault exits 4, 0 under Prolog=) and the evidence is kept")
    return p


def parse(argv: list[str], by_slurmd: bool) -> argparse.Namespace:
    """The options. Run by slurmd (Prolog=, Epilog=), `--help` (or -h) is the setting it is: argparse printed the
    options into slurmd's log and exited 0, and every job ran ungated with no trace in the history or the metrics."""
    try:
        return _parser().parse_args(argv)
    except SystemExit as exc:
        if by_slurmd and exc.code in (0, None):
            raise UsageError("--help (or -h) in Slurm's Prolog= line: the options were listed and no preflight ran; "
                             "remove it there") from None
        raise


def spelt_out(argv: list[str]) -> list[str]:
    """argv with each abbreviated long option written whole, as argparse matches it (a unique prefix: `--reval` is
    --revalidate, `--state=/x` is --state-dir=/x). What is read before or without the parser (_as_prolog, the trace)
    reads what the parser did: `--reval` with a typo beside it exited 0 as a gate run's CONFIG_ERROR, where make
    undrain's 0 says "resumed", and an abbreviated --state-dir sent the trace to another history."""
    options = [o for o in _parser()._option_string_actions if o.startswith("--")]
    out: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--":                   # what follows is no option
            return out + argv[i:]
        name, eq, value = arg.partition("=")
        if arg.startswith("--") and name not in options and len(hits := [o for o in options if o.startswith(name)]) == 1:
            arg = hits[0] + eq + value
        out.append(arg)
    return out


def _mode(env: dict[str, str], forced: str) -> str:
    if forced != "auto":
        return forced
    return "prolog" if context.by_slurmd(env) or not env.get("SLURM_STEP_ID", "").strip() else "step"


def expected_gpus(env: dict[str, str], step: bool = False) -> int | None:
    """The GPUs Slurm allocated on this node: SLURM_GPUS_ON_NODE and the distinct ids in SLURM_JOB_GPUS, the larger
    where both are set (None: none said, or SLURM_JOB_GPUS=NoDevFiles: none given). Two of Slurm's own words that
    disagree (a count of 0 beside the ids 0,1) prove the larger: the smaller let a report that never judged the GPUs
    pass. In a job's step (`step`) the ids are SLURM_STEP_GPUS where slurmstepd said the step's (it or
    SLURM_GPUS_ON_NODE, "the GPUs available to the step on this node"): the SLURM_JOB_GPUS a step has is the batch
    script's, handed on by srun, the batch host's list and not this node's (hunt85: a job of --gpus=6 on two nodes
    gave node 2 two GPUs and the batch host's list of four, and a healthy node's first step was GPU_COUNT_UNPROVEN)."""
    counts = []
    count = env.get("SLURM_GPUS_ON_NODE", "").strip()
    if count:
        if not _digits(count) or int(count) > MAX_GPUS:
            raise UsageError(f"SLURM_GPUS_ON_NODE={count!r} is not a count of GPUs (0 to {MAX_GPUS})")
        counts.append(int(count))
    stepwise = step and bool(env.get("SLURM_STEP_GPUS", "").strip() or count)
    name = ("SLURM_JOB_GPUS", "SLURM_STEP_GPUS")[stepwise]
    ids = env.get(name, "").strip()
    if ids == NO_DEV_FILES:       # Slurm's own word for "no GPU device of this node given to the job": no count
        ids = ""
    if ids:
        indices = gpu_indices(ids)
        if indices is None:
            raise UsageError(f"{name}={ids!r} is not a list of GPU indices (0,1,2 or ranges 0-3,5)")
        counts.append(len(indices))      # an index named twice is one GPU
    return max(counts, default=0) or None


def seen_gpus(env: dict[str, str], step: bool) -> gpuset.Seen:
    """The GPUs the preflight sees, by their ids on the node, kept in the history for the hang streak (gpuset.py).
    Slurm's prolog environment: Prolog= runs outside the job's cgroup, its CUDA_VISIBLE_DEVICES naming the job's GPUs
    (SLURM_JOB_GPUS, by their ids on the node; unset, CUDA sees every GPU: None). A batch script's CUDA_VISIBLE_DEVICES
    may count from 0 in the job's device cgroup: SLURM_JOB_GPUS first. A job's step: SLURM_STEP_GPUS, which slurmstepd
    sets on each node; without it the step's CUDA_VISIBLE_DEVICES counts from 0 in its cgroup and its SLURM_JOB_GPUS
    is the batch host's (hunt85): a step given GPUs saw ones unknown (UNKNOWN), one given none (no GPU variable) the
    node's (None). --revalidate drops the shell's narrowing (config): it sees every GPU."""
    def ids(name: str) -> frozenset[int] | None:
        found = gpu_indices(text) if (text := env.get(name, "").strip()) else None
        return frozenset(found) if found else None
    if step:
        given = any(env.get(n, "").strip() for n in ("SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "SLURM_GPUS_ON_NODE",
                                                      "CUDA_VISIBLE_DEVICES"))
        return ids("SLURM_STEP_GPUS") or (gpuset.UNKNOWN if given else None)
    if "CUDA_VISIBLE_DEVICES" not in env:
        return None
    # Slurm's ids of the GPUs it names, else its own ids (by hand: no Slurm), else some GPUs (UUIDs, NoDevFiles)
    return ids("SLURM_JOB_GPUS") or ids("CUDA_VISIBLE_DEVICES") or gpuset.UNKNOWN


def gpu_indices(text: str) -> set[int] | None:
    """The GPU indices in Slurm's list, as Slurm prints it: single indices and ranges ("0-3,5", its bitmap form),
    each below MAX_GPUS; None for anything else (a range backwards, a blank entry, a word)."""
    found: set[int] = set()
    for part in (x.strip() for x in text.split(",")):
        low, dash, high = part.partition("-")
        if not _digits(low) or (dash and not _digits(high)):
            return None
        first, last = int(low), int(high) if dash else int(low)
        if first > last or last >= MAX_GPUS:
            return None
        found.update(range(first, last + 1))
    return found


def _share(text: str, source: str) -> float:
    value = decimal(text)       # one grammar for every number of ours: verdict.DECIMAL
    if value is None:
        raise UsageError(f"{source} {text!r} is not a share (0.1 for 10 %; ASCII digits, 0 written as 0)")
    if not 0 <= value <= 1:
        raise UsageError(f"{source} {text!r} must be a share between 0 and 1 (0.1 for 10 %)")
    return value


def misspelt(env: dict[str, str]) -> list[str]:
    """One line for each TORCH* variable that is no knob of the prolog's but close to one (another case, a letter
    dropped, in the prefix too); the job's own TORCHIMAGES_* variables (TORCHIMAGES_IMAGE, ...) and PyTorch's TORCH_*
    are none of them."""
    lines = []
    for name in sorted(env):
        if not name.upper().startswith("TORCH") or name in KNOBS:     # TORCHIMAGE_HANG_RUNS: the prefix misspelt
            continue
        meant = knobhint.near(name, KNOBS, cutoff=0.85)
        if meant:
            lines.append(f"{name} is no setting of the prolog's: did you mean {meant}? (ignored; its default holds)")
    return lines


def _folder(text: str, what: str, gate: bool) -> str:
    """A folder setting: never blank, and absolute where the prolog gates (slurmd's or the job's working folder is
    no setting of anyone's: a relative one would scatter the history, or the breaker's lock, across folders)."""
    if not text.strip():
        raise UsageError(f"{what} {text!r} is blank: give a folder")
    if gate and not os.path.isabs(text):
        raise UsageError(f"{what} {text!r} is not an absolute path: as Slurm's Prolog= or a job's step the working "
                         "folder is slurmd's or the job's; give it from /")
    return text if gate else os.path.abspath(text)


def _python(text: str, env: dict[str, str]) -> str:
    """--python: an executable file (a bare name looked up on PATH), or a UsageError. A blank, missing or
    non-executable one is our setting, CONFIG_ERROR, never verify's trouble (it read as PREFLIGHT_NO_REPORT)."""
    found = shutil.which(text, path=env.get("PATH", os.defpath)) if text.strip() and os.sep not in text else text
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise UsageError(f"--python {text!r} is no executable file (a Python that runs verify; default the prolog's "
                         "own)")
    return text


def _digits(text: str) -> bool:
    """ASCII digits only: str.isdigit() also takes '²' and '٣', which int() then refuses (a crash, not one line)."""
    return text.isascii() and text.isdigit()


def _count(text: str, source: str) -> int:
    if not _digits(text.strip()) or int(text) > 1000:
        raise UsageError(f"{source} {text!r} is not a count of runs (0 to 1000)")
    if int(text) == 1:
        # one run is a single timeout, which only a confirmation (or a streak) makes the host's: NVSentinel's
        # checker rule counts repeated stalls, never one
        raise UsageError(f"{source} {text!r} would drain on one hang no second run confirmed: give 2 or more "
                         "(0: never)")
    return int(text)


def _passes(text: str, source: str) -> int:
    if not _digits(text.strip()) or not 1 <= int(text) <= MAX_RETURN_PASSES:
        raise UsageError(f"{source} {text!r} is not a count of passing preflights (1 to {MAX_RETURN_PASSES})")
    return int(text)


def _return_passes(args: argparse.Namespace, knobs: dict[str, tuple[str, str]]) -> tuple[int, list[str]]:
    """(--return-passes or TORCHIMAGES_RETURN_PASSES, notes). Only a revalidation acts on it: the gate's run (Prolog=)
    says a bad one and goes on gated, never ungated by a setting it does not use."""
    given = knobs.get("TORCHIMAGES_RETURN_PASSES")
    try:
        return (_passes(args.return_passes, "--return-passes") if args.return_passes is not None else
                _passes(*given) if given else DEFAULT_RETURN_PASSES), []
    except UsageError as exc:
        if args.revalidate:
            raise
        return DEFAULT_RETURN_PASSES, [f"{exc}: only make undrain reads it; this run is gated as before"]


def _numbers(args: argparse.Namespace) -> tuple[float, float, float, float, float, float]:
    try:
        budget = finite_positive(args.budget, "--budget", 3600)
        factor = finite_positive(args.confirm_factor, "--confirm-factor", 100, "")
        if factor < 1:
            # a confirmation proves a hang only with more time than the first run gave: below 1 none ever runs
            raise ValueError(f"--confirm-factor {args.confirm_factor!r} must be 1 or more: a confirmation with less "
                             "time than the budget proves no hang")
        return (budget, factor,
                finite_positive(str(max(budget, MIN_GRACE_S)) if args.grace is None else args.grace, "--grace", 3600),
                finite_positive(args.lookback, "--lookback", 24 * 365, "hours") * 3600,
                finite_positive(args.flap_window, "--flap-window", 3650, "days") * 86400,
                finite_positive(args.min_confirm, "--min-confirm", 3600))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _knobs(args: argparse.Namespace, env: dict[str, str],
           job: bool) -> tuple[str, dict[str, tuple[str, str]], list[str], list[str]]:
    """(the state folder, the knobs given by the operator with where each came from, notes, problems). A job's step
    runs with the job's environment (Slurm): its knobs come from the command line, the state folder's settings file or
    (Prolog=, by hand) slurmd's or a person's environment, never a job's (settings.py)."""
    blank = []
    if args.state_dir is None and not job and "TORCHIMAGES_STATE_DIR" in env and not env["TORCHIMAGES_STATE_DIR"].strip():
        blank.append(settings.blank_note("TORCHIMAGES_STATE_DIR", DEFAULT_STATE_DIR))     # empty is unset (below)
    state_dir = args.state_dir if args.state_dir is not None else \
        ((env.get("TORCHIMAGES_STATE_DIR", "").strip() or DEFAULT_STATE_DIR) if not job else DEFAULT_STATE_DIR)
    problems: list[str] = []
    try:
        state_dir = _folder(state_dir, ("TORCHIMAGES_STATE_DIR", "--state-dir")[args.state_dir is not None],
                            not args.revalidate)
    except UsageError as exc:
        if args.state_dir is not None:
            raise                     # an option is no knob: CONFIG_ERROR, as any bad option
        # a knob (slurmd's environment): its default holds, said and traced there, as every knob's (_knob)
        problems.append(f"{exc}: not applied, the default {DEFAULT_STATE_DIR} holds (its settings, history and lock)")
        state_dir = DEFAULT_STATE_DIR
    file, read_problems = settings.read(state_dir)
    problems += read_problems
    given = {name: found for name in settings.KNOBS if (found := settings.pick(name, env, job, file, state_dir))}
    given, blank_notes = settings.unset_blanks(given, KNOB_DEFAULTS)
    blank_notes += settings.blank_over_file(env, job, file, state_dir)
    # a misspelt knob in slurmd's (or a person's) environment is the operator's too; in a job's step, the job's
    problems += [] if job else misspelt(env)
    return state_dir, given, blank + blank_notes + (settings.ignored(env) + misspelt(env) if job else []), problems


def _knob(knobs: dict[str, tuple[str, str]], name: str, parse: Callable[[str, str], T], default: T,
          problems: list[str]) -> T:
    """One knob of the environment or the settings file: its value, or, where it is no value of that knob, its
    default, the problem said and traced (settings.read's rule: a setting of ours never drains, never ungates)."""
    given = knobs.get(name)
    if not given:
        return default
    try:
        return parse(*given)
    except (UsageError, ValueError) as exc:
        problems.append(f"{exc}: {settings.DEFAULTS_HOLD} ({KNOB_DEFAULTS.get(name, default)})")
        return default


def config(args: argparse.Namespace, env: dict[str, str], clock: Callable[[], float] = time.monotonic) -> Config:
    if context.by_slurmctld(env):
        raise UsageError(f"run by slurmctld (SLURM_SCRIPT_CONTEXT={env['SLURM_SCRIPT_CONTEXT'].strip()}: "
                         "PrologSlurmctld= or EpilogSlurmctld= in slurm.conf), which runs on the controller's host, not "
                         "on the job's nodes: nothing there is a node of the job to gate; set it as Prolog= (and Epilog=)")
    budget, factor, grace, lookback, flap, min_confirm = _numbers(args)
    job = settings.job_env(env, _mode(env, args.mode), args.revalidate)
    state_dir, knobs, knob_notes, problems = _knobs(args, env, job)
    gate = not args.revalidate
    breaker = _share(args.breaker, "--breaker") if args.breaker is not None else \
        _knob(knobs, "TORCHIMAGES_BREAKER", _share, DEFAULT_BREAKER, problems)
    hang = _count(args.hang_runs, "--hang-runs") if args.hang_runs is not None else \
        _knob(knobs, "TORCHIMAGES_HANG_RUNS", _count, DEFAULT_HANG_RUNS, problems)
    passes, passes_note = _return_passes(args, knobs)
    if args.node is not None and not args.node.strip():
        # `make undrain` without NODE=: never this host's node in its place (it names the node to resume)
        raise UsageError("--node is empty: name the node (make undrain NODE=<node>, run on that node)")
    node = args.node or env.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    if problem := slurm.node_problem(node):
        raise UsageError(problem)
    slurmd = env.get("SLURMD_NODENAME")
    if args.node and slurmd and args.node != slurmd and not args.revalidate:
        # slurmd says which node this is: a --node copied into slurm.conf's Prolog= line would drain that node for
        # every other node's fault (a revalidation refuses it in one line of its own: revalidate.here_problem)
        raise UsageError(f"--node {args.node} is not this node: slurmd runs it on {slurmd} (SLURMD_NODENAME); "
                         "drop --node from the prolog line, Slurm names the node")
    partition = args.partition or env.get("SLURM_JOB_PARTITION") or None
    if partition and slurm.node_problem(partition):
        raise UsageError(f"partition {partition!r} is not one partition name")
    unset_metrics = args.metrics_dir == ""      # given, and empty: a setting of ours, said (no metrics is no default)
    metrics_dir = (_folder(args.metrics_dir, "--metrics-dir", gate) if args.metrics_dir else None) \
        if args.metrics_dir is not None else \
        _knob(knobs, "TORCHIMAGES_METRICS_DIR", lambda text, where: _folder(text, where, gate), None, problems)
    cfg = Config(budget, _mode(env, args.mode), node, partition, breaker, state_dir, metrics_dir, args.dry_run,
                 factor, grace, lookback, not args.no_kernel_log, flap, expected_gpus(env, _mode(env, args.mode) == "step"),
                 _python(args.python, env),
                 env.get("SLURM_JOB_ID"), hang_runs=hang, min_confirm_s=min_confirm, return_passes=passes)
    cfg.clock_skew_s = _knob(knobs, clockskew.ENV, lambda text, _: clockskew.allowance({clockskew.ENV: text}),
                             clockskew.DEFAULT_S, problems)
    # a revalidation may run its preflight return_passes times, each under the prolog's own cap (revalidate.py)
    cfg.deadline = Deadline((budget + grace) * (passes if args.revalidate else 1), clock)
    slurm.limit = lambda: cfg.deadline.bound(slurm.TIMEOUT_S)
    cfg.under_prolog = context.by_slurmd(env)        # Prolog= or Epilog=: slurmd drains on either's non-zero exit
    if cfg.under_prolog:
        _fit_timeout(cfg, env, clock)
    cfg.host = socket.gethostname()
    cfg.slurmd_name = env.get("SLURMD_NODENAME") or None
    cfg.job_env = job
    cfg.job_gpus = None if args.revalidate else seen_gpus(env, cfg.mode == "step")
    cfg.setting_problems = problems + passes_note
    cfg.notes += knob_notes + cfg.setting_problems + ([forged] if (forged := context.forged(env)) else [])
    if unset_metrics:
        # an empty --metrics-dir (a slurm.conf line whose variable expanded to nothing) writes no metrics: said, so a
        # fleet whose node_exporter shows nothing of the prolog is not read as a fleet of silent passes
        cfg.notes.append("--metrics-dir is empty: no metrics are written (give node_exporter's textfile collector "
                         "folder, or drop the option)")
    return cfg


def _fit_timeout(cfg: Config, env: dict[str, str], clock: Callable[[], float]) -> None:
    """Under Prolog=, the cap fitted under slurm.conf's PrologTimeout (Epilog=: EpilogTimeout), else
    PrologEpilogTimeout (slurmconf.py), said: slurmd's kill at that timeout drains the node on no evidence, past the
    breaker."""
    timeout, key, problem = slurmconf.setting(env)
    if problem:
        cfg.notes.append(problem)
    if (cap := slurmconf.fitted(cfg.deadline.cap, timeout)) is not None:
        cfg.notes.append(f"slurm.conf's {key}={timeout:g} is under the prolog's cap of "
                         f"{cfg.deadline.cap:g} s (--budget + --grace) + {slurmconf.MARGIN_S:g} s: the run is capped "
                         f"at {cap:g} s (a run that needs more is not assessed); raise {key} to "
                         f"{cfg.deadline.cap + slurmconf.MARGIN_S:g} or more")
        cfg.deadline = Deadline(cap, clock)

