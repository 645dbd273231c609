"""`python -m verify`: run the checks, print a table, write JSON/JUnit; exit 1 when any check failed.

Exit statuses: 0 nothing failed, 1 a check failed, 2 bad arguments or environment (one line on stderr, no
check run, nothing written), 128+N interrupted by signal N (the partial report is written).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn

from . import __version__, baselines, replay, scheduler
from .atomic import write_atomic
from .budget import Shares
from .checks import CHECKS
from .options import Options, parse_size
from .report import (
    build_report,
    check_writable,
    one_line,
    render_table,
    write_json,
    write_junit,
)
from .result import FAIL, CheckResult
from .runner import (
    Interrupted,
    NoTempDir,
    cleanup_owned,
    collect_environment,
    install_signal_handlers,
    restore_signal_handlers,
    run_all,
    scratch_base,
)

MAX_BYTES = 1 << 50
PREFLIGHT_CHECKS = ("gpu", "shm", "nccl")
PREFLIGHT_BUDGET_S = 30.0


class UsageError(Exception):
    """Bad input: one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _size(flag: str, minimum: int = 1) -> Any:
    def parse(text: str) -> int:
        try:
            value = parse_size(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a size; write sizes like 64m, 1g or 1048576") from None
        if value < minimum or value > MAX_BYTES:
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: give at least {minimum} byte(s), at most 1p")
        return value
    parse.__name__ = flag
    return parse


def _number(kind: type, minimum: float, exclusive: bool = False) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if value < minimum or (exclusive and value == minimum):
            raise argparse.ArgumentTypeError(f"{text!r} must be {'greater than' if exclusive else 'at least'} {minimum:g}")
        return value
    parse.__name__ = kind.__name__
    return parse


# Docker's default /dev/shm (64 MiB) fails the shm check, and the image's uid 1000 may not write to $PWD
KEEP_REPORT = ('docker run --rm --shm-size=2g --user "$(id -u):$(id -g)" -v "$PWD:/out" IMAGE verify '
               '--json /out/report.json')


def _parser() -> argparse.ArgumentParser:
    d = Options()
    p = _Parser(
        allow_abbrev=False, prog="verify", description="Check that this PyTorch environment really works: GPU, NCCL, the "
        "RDMA fabric, /dev/shm, HDF5, Arrow, torchvision, the DataLoader and a training step.",
        epilog=f"Get the JSON report out of a container: {KEEP_REPORT} --junit /out/report.xml (add --gpus all on a "
               "GPU host). Benchmark the data path: verify bench.")
    p.add_argument("--checks", default=None, help=f"comma-separated subset of: {', '.join(CHECKS)}")
    p.add_argument("--list", action="store_true", help="list the checks and exit")
    p.add_argument("--json", metavar="PATH", help="write the JSON report (schema: verify/report.schema.json)")
    p.add_argument("--junit", metavar="PATH", help="write a JUnit XML report")
    # an option whose dest is an Options field sets that field (and a replay takes it over the recorded one)
    p.add_argument("--expect-gpus", dest="expect_gpus", type=_number(int, 0), default=d.expect_gpus, metavar="N",
                   help="fail (instead of skip) when fewer than N GPUs are usable")
    p.add_argument("--shm-min", dest="shm_min_bytes", type=_size("--shm-min"), default="1g", metavar="SIZE",
                   help="/dev/shm the shm check allocates (default 1g)")
    p.add_argument("--arrow-size", dest="arrow_bytes", type=_size("--arrow-size"), default="64m", metavar="SIZE",
                   help="data the arrow check maps (default 64m)")
    p.add_argument("--arrow-min-ratio", dest="arrow_min_ratio", type=_number(float, 0.0), default=d.arrow_min_ratio,
                   help="zero-copy throughput / memory bandwidth under which arrow warns (default %(default)s)")
    p.add_argument("--nccl-min-size", dest="nccl_min_bytes", type=_size("--nccl-min-size", 4), default="1m",
                   metavar="SIZE", help="smallest all-reduce message (default 1m)")
    p.add_argument("--nccl-max-size", dest="nccl_max_bytes", type=_size("--nccl-max-size", 4), default="8g",
                   metavar="SIZE",
                   help="largest all-reduce message on GPUs (default 8g, capped at 1/8 of GPU memory; gloo stops at 16m)")
    p.add_argument("--nccl-timeout", dest="nccl_timeout_s", type=_number(float, 0.0, exclusive=True),
                   default=d.nccl_timeout_s, metavar="S",
                   help="init and per-operation timeout of the collective (default %(default)s s)")
    p.add_argument("--timeout", type=_number(float, 0.0, exclusive=True), metavar="S",
                   help="timeout of every check (default: per check)")
    p.add_argument("--no-perf", dest="gpu_perf", action="store_false",
                   help="skip the gpu check's bandwidth, TFLOP/s and SDC probes")
    p.add_argument("--preflight", action="store_true",
                   help="the short gate for a job's first step or a node's prolog: GPU visibility and health, a kernel "
                        "and SDC canary, /dev/shm and an intra-node all-reduce within --budget; ends in one line")
    p.add_argument("--budget", type=_number(float, 0.0, exclusive=True), default=None, metavar="S",
                   help=f"--preflight's time budget in seconds (default {PREFLIGHT_BUDGET_S:.0f})")
    p.add_argument("--save-facts", metavar="DIR", help="also write each check's facts to DIR/<check>.json (+ host.json)")
    p.add_argument("--from-facts", metavar="DIR", help="judge the facts recorded in DIR again, without probing")
    commands = p.add_subparsers(dest="command", metavar="COMMAND")
    # the tool parses its own arguments (and prints its own --help): everything after `bench` is handed to it
    commands.add_parser("bench", add_help=False, allow_abbrev=False,
                        help="the data-path benchmark; `verify bench --dataloader`: the DataLoader advisor")
    commands.add_parser("explain", add_help=False, help="diagnose what a cluster already printed: `verify explain "
                        "FILE...` (nvidia-smi -q, ibstat, dmesg, NCCL_DEBUG=INFO, ulimit -a; docs/explain.md)")
    return p


def option_flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Option flag -> the Options field it sets: a replay takes the recorded options, except those given."""
    fields = set(Options.__dataclass_fields__)
    return {flag: action.dest for action in parser._actions if action.dest in fields for flag in action.option_strings}


def _options(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Options:
    if args.nccl_min_bytes > args.nccl_max_bytes:
        raise UsageError(f"--nccl-min-size ({args.nccl_min_bytes} B) is larger than --nccl-max-size ({args.nccl_max_bytes} B)")
    return Options(**{field: getattr(args, field) for field in option_flags(parser).values()})


def validate_rank_env(env: dict[str, str]) -> None:
    """RANK/WORLD_SIZE/LOCAL_RANK as torchrun sets them, or not at all."""
    values = {}
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        if var in env:
            text = env[var].strip()
            if not text.isdecimal():
                raise UsageError(f"{var}={env[var]!r} is not a non-negative integer: unset it, or start verify with torchrun")
            values[var] = int(text)
    if "WORLD_SIZE" in values and values["WORLD_SIZE"] < 1:
        raise UsageError("WORLD_SIZE=0: a group has at least one rank; unset it, or start verify with torchrun")
    if values.get("RANK", 0) > 0 and not ("WORLD_SIZE" in values and env.get("MASTER_ADDR")):
        raise UsageError(f"RANK={values['RANK']} is set but there is no group (WORLD_SIZE and MASTER_ADDR must be set "
                         "too): unset RANK, or start verify with torchrun")
    if "RANK" in values and "WORLD_SIZE" in values and values["RANK"] >= values["WORLD_SIZE"]:
        raise UsageError(f"RANK={values['RANK']} is not below WORLD_SIZE={values['WORLD_SIZE']}")


def validate_test_hooks(env: dict[str, str]) -> None:
    """VERIFY_TEST_HANG_ONCE=<file> must be a file the check can create: else the hook crashed the check (a
    traceback, CHECK_CRASHED for the image) or, on a directory, silently never hung."""
    marker = env.get("VERIFY_TEST_HANG_ONCE")
    if not marker:
        return
    path = Path(marker)
    if path.is_dir():
        raise UsageError(f"VERIFY_TEST_HANG_ONCE={marker!r} is a directory: name a file (it is created at the first "
                         f"hang), e.g. {path / 'hung'}")
    if not path.exists() and not (path.parent.is_dir() and os.access(path.parent, os.W_OK)):
        raise UsageError(f"VERIFY_TEST_HANG_ONCE={marker!r}: cannot create a file there (its folder does not exist or is "
                         f"not writable): name a file in a writable folder")


def _progress(index: int, total: int, name: str, result: CheckResult | None) -> None:
    if result is None:
        print(f"[{index}/{total}] {name}: running ...", file=sys.stderr, flush=True)
    else:
        print(f"[{index}/{total}] {name}: {result.status} ({result.duration_s:.1f} s)", file=sys.stderr, flush=True)


def is_reporting_rank() -> bool:
    """Under torchrun every rank runs the checks; rank 0 alone writes reports."""
    rank = os.environ.get("RANK", "0").strip()
    return not rank.isdecimal() or int(rank) == 0


def _names(args: argparse.Namespace, default: list[str]) -> list[str]:
    if args.checks is None:
        return default
    names = [n.strip() for n in args.checks.split(",") if n.strip()]
    unknown = [n for n in names if n not in CHECKS]
    if unknown or not names:
        raise UsageError(f"unknown check {', '.join(unknown) or '(none given)'}; choose from {', '.join(CHECKS)}")
    return list(dict.fromkeys(names))


def _overrides(argv: list[str], options: Options, flags: dict[str, str]) -> dict[str, Any]:
    given = {a.split("=", 1)[0] for a in argv if a.startswith("--")}
    return {field: getattr(options, field) for flag, field in flags.items() if flag in given}


def _replay(args: argparse.Namespace, argv: list[str], options: Options, flags: dict[str, str]) -> int:
    only = _names(args, []) if args.checks is not None else None
    try:
        folder = replay.load(args.from_facts, only, _overrides(argv, options, flags))
        results = [replay.judge(r, folder.options) for r in folder.records]
    except (replay.ReplayError, baselines.BaselinesError) as exc:
        raise UsageError(str(exc)) from None
    results += [replay.unknown_result(n) for n in folder.unknown]
    host = folder.host
    tool = host.get("tool") or {}
    replay_info = {"facts_dir": args.from_facts, "host": host.get("hostname"), "recorded": host.get("recorded"),
                   "facts_schema": host.get("facts_schema", 1), "recorded_by": tool.get("version")}
    _write_reports(args, results, host.get("environment") or {}, folder.options, replay_info, None)
    return 1 if any(r.status == FAIL for r in results) else 0


def _prepare_facts_dir(directory: str) -> None:
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--save-facts {directory}: cannot create it ({exc.strerror or exc})") from None
    problem = check_writable(str(Path(directory) / "host.json"))
    if problem:
        raise UsageError(f"--save-facts {directory}: {problem}")


def _save_facts(directory: str, names: list[str], results: list[CheckResult], facts: dict[str, Any],
                environment: dict[str, Any], options: Options) -> None:
    for r in results:
        if r.name in facts or r.code != "INTERRUPTED":
            write_atomic(str(Path(directory) / f"{r.name}.json"),
                              json.dumps({"check": r.name, "facts_schema": replay.FACTS_SCHEMA,
                                          "facts": facts.get(r.name), "result": r.to_dict()},
                                         indent=1, default=repr) + "\n")
    host = {"facts_schema": replay.FACTS_SCHEMA, "hostname": platform.node(), "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tool": {"name": "verify", "version": __version__}, "checks": [r.name for r in results if r.code != "INTERRUPTED"
                                                                            or r.name in facts],
            "environment": environment, "options": asdict(options)}
    write_atomic(str(Path(directory) / "host.json"), json.dumps(host, indent=1, default=repr) + "\n")


def _write_reports(args: argparse.Namespace, results: list[CheckResult], environment: dict[str, Any],
                   options: Options, replay_info: dict[str, Any] | None, interrupted: str | None) -> None:
    if not is_reporting_rank():
        return
    print(render_table(results, environment, replay=replay_info, interrupted=interrupted))
    report = build_report(results, environment, asdict(options), replay=replay_info, interrupted=interrupted)
    if args.json:
        write_json(report, args.json)
        print(f"JSON report: {args.json}")
    if args.junit:
        write_junit(results, args.junit, interrupted=interrupted)
        print(f"JUnit report: {args.junit}")
    if not args.json and os.environ.get("VERIFY_IN_IMAGE"):
        print(f"to keep the JSON report: {KEEP_REPORT}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser = _parser()
        args, rest = parser.parse_known_args(argv)
        if args.command == "bench":
            return _bench(argv)
        if args.command == "explain":
            return _explain(argv)
        if rest:
            raise UsageError(f"unrecognized arguments: {' '.join(rest)}")
        return _main(args, argv, parser)
    except (UsageError, NoTempDir) as exc:
        print(f"verify: {one_line(exc)}", file=sys.stderr)
        return 2


def _explain(argv: list[str]) -> int:
    """`verify explain FILE... [--json PATH] [--junit PATH] [--expect-gpus N]`: each file judged by the judges of
    its kind, into the same report as a run."""
    from .explain import ExplainError, explain
    p = _Parser(prog="verify explain", allow_abbrev=False,
                description="Judge what a cluster already printed: nvidia-smi (-q, -q -x, the table, --query-gpu CSV, "
                            "topo -m, nvlink -s), dcgmi diag/health, ibstat, lspci -vv, dmesg, NCCL_DEBUG=INFO logs, "
                            "nccl-tests, ulimit -a. Each file's kind is told from its content; docs/explain.md lists "
                            "every kind. Exit 1 when a result fails, 2 on bad input.")
    p.add_argument("files", nargs="+", metavar="FILE", help="a text file a node or job printed (one result each)")
    p.add_argument("--json", metavar="PATH", help="write the JSON report (schema: verify/report.schema.json)")
    p.add_argument("--junit", metavar="PATH", help="write a JUnit XML report")
    p.add_argument("--expect-gpus", dest="expect_gpus", type=_number(int, 0), default=0, metavar="N",
                   help="fail (instead of skip) when the text shows fewer than N usable GPUs")
    try:
        args = p.parse_args(argv[argv.index("explain") + 1:])
    except UsageError as exc:                      # say whose arguments: `verify: ... required: FILE` read as verify's
        raise UsageError(f"explain: {exc} (usage: verify explain FILE... [--json PATH] [--junit PATH] "
                         "[--expect-gpus N])") from None
    for flag, path in (("--json", args.json), ("--junit", args.junit)):
        problem = _report_clash(path, args.files, args.json if flag == "--junit" else None) if path is not None else None
        if problem := problem or (check_writable(path) if path else None):
            raise UsageError(f"{flag} {path}: {problem}")
    options = Options(expect_gpus=args.expect_gpus)
    try:
        results = [explain(path, options) for path in args.files]
    except (ExplainError, baselines.BaselinesError) as exc:
        raise UsageError(str(exc)) from None
    _write_reports(args, results, {}, options, {"facts_dir": " ".join(args.files), "host": "explain", "recorded": "-",
                                                 "facts_schema": replay.FACTS_SCHEMA, "recorded_by": "verify explain"},
                   None)
    return 1 if any(r.status == FAIL for r in results) else 0


def _report_clash(path: str, inputs: list[str], other: str | None) -> str | None:
    """Why explain's report may not go to `path`: empty (an unset variable: no report written, and nothing said), one
    of the files it reads (the log replaced by its own report, hunt86), or --json's path (one report over the other)."""
    if not path.strip():
        return "is empty: give a path (an unset shell variable?)"
    for name in inputs + ([other] if other else []):
        try:
            same = os.path.abspath(name) == os.path.abspath(path) or os.path.samefile(name, path)
        except OSError:         # either is not there yet: not the same file
            continue
        if same:
            return (f"is {name}, a file explain reads: the report would replace it" if name in inputs else
                    "is --json's path too: give each report its own")
    return None


def _bench(argv: list[str]) -> int:
    """`verify bench ...`: the tool gets every argument after `bench`; options of verify itself do not apply to it."""
    if argv[0] != "bench":
        raise UsageError(f"bench takes no verify option before it ({' '.join(argv[:argv.index('bench')])}): "
                         "write `verify bench [options]`")
    from .tools.bench import main as bench_main
    return bench_main(argv[1:])


def _main(args: argparse.Namespace, argv: list[str], parser: argparse.ArgumentParser) -> int:
    if args.list:
        for check in CHECKS.values():
            print(f"{check.name:<{max(map(len, CHECKS))}} {check.what} (timeout {check.timeout_s:.0f} s)")
        return 0
    options = _options(args, parser)
    validate_rank_env(dict(os.environ))
    validate_test_hooks(dict(os.environ))
    if args.save_facts and args.from_facts:
        raise UsageError("--save-facts and --from-facts exclude each other: record on one run, replay on another")
    for flag, value in (("--json", args.json), ("--junit", args.junit), ("--save-facts", args.save_facts),
                        ("--from-facts", args.from_facts)):
        if value is not None and not value.strip():
            raise UsageError(f"{flag} is empty: give a path (an unset shell variable?)")
    for flag, path in (("--json", args.json), ("--junit", args.junit)):
        problem = check_writable(path) if path else None
        if problem:
            raise UsageError(f"{flag} {path}: {problem}")
    if args.from_facts:
        return _replay(args, argv, options, option_flags(parser))

    if args.budget is not None and not args.preflight:
        raise UsageError("--budget is --preflight's time budget: add --preflight, or use --timeout for a check's own")
    names = _names(args, list(PREFLIGHT_CHECKS if args.preflight else CHECKS))
    if args.preflight:
        options, args.timeout = preflight_options(options, args.budget or PREFLIGHT_BUDGET_S, names, args.timeout)
    if args.save_facts:
        _prepare_facts_dir(args.save_facts)
    scratch_base()
    previous = install_signal_handlers()
    try:
        return _run(args, names, options)
    finally:
        cleanup_owned()
        restore_signal_handlers(previous)


# Each preflight check's weight in the budget: the all-reduce starts one process per GPU (each imports torch and
# creates a CUDA context), so it gets the most. Shares are of the time left when a check starts (verify/budget.py):
# what the gpu check leaves on a CPU host goes to shm and nccl (docs/prolog-and-fleet.md, "Budget shares", has the figures).
PREFLIGHT_SHARES = {"gpu": 0.3, "shm": 0.2, "nccl": 0.5}
# ... and at least this many times the host's `import torch` time: gpu imports torch once, shm twice (the check's
# process and its share_memory_ child), nccl three times (the check's process and two ranks, which on 2 busy cores
# do not overlap) plus gloo's rendezvous and sweep: each with room, as measured at a load average of 13-15
PREFLIGHT_FLOORS = {"gpu": 2.5, "shm": 4.0, "nccl": 8.0}


def preflight_options(options: Options, budget: float, names: list[str],
                      timeout: float | None) -> tuple[Options, Shares]:
    """Short settings that fit the budget: no bandwidth/TFLOP sweep, a 2-run SDC canary, a 64 MiB all-reduce, and
    each check's timeout its share of the budget left when it starts (never above --timeout)."""
    from dataclasses import replace
    shares = Shares(budget, {n: PREFLIGHT_SHARES.get(n, 0.2) for n in names}, cap_s=timeout, floors=PREFLIGHT_FLOORS)
    # the all-reduce's own timeout (init and each operation) is never below the default budget's: the check's limit
    # has a floor in `import torch` times (Shares), within which spawn.py waits for its ranks; a tiny --budget gave
    # init_process_group 0.8 ms (NCCL_FAILED, the host's, for a budget of 0.001) or the ranks 5 s to start on a busy
    # host (NCCL_TIMEOUT, the host's): a healthy node blamed for a setting. A check is slow, never falsely failed.
    nccl_s = max(budget, PREFLIGHT_BUDGET_S) * PREFLIGHT_SHARES["nccl"]
    short = replace(options, gpu_perf=False, gpu_canary=True, sdc_repeats=2, nccl_min_bytes=1 << 20,
                    nccl_max_bytes=min(options.nccl_max_bytes, 64 << 20),
                    nccl_timeout_s=min(options.nccl_timeout_s, (min(nccl_s, timeout) if timeout else nccl_s) * 0.8),
                    shm_min_bytes=min(options.shm_min_bytes, 256 << 20))
    return short, shares


def _import_torch_s(environment: dict[str, Any]) -> float | None:
    phases = environment.get("phases")
    value = phases.get("import_torch") if isinstance(phases, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _preflight_line(results: list[CheckResult]) -> str:
    """The one line a prolog or a job's first step reads: verdict, code, owner, summary."""
    from .findings import RANK
    failed = sorted((r for r in results if r.status == FAIL), key=lambda r: (RANK.get(r.code or "", 10), r.name))
    if failed:
        r = failed[0]
        return f"preflight: FAIL {r.code} {r.owner} {r.name}: {one_line(r.summary)}"
    judged = [r for r in results if r.status in ("pass", "warn")]
    if not judged:
        return "preflight: SKIP FACTS_INCOMPLETE - nothing was judged"
    warned = [r for r in results if r.status == "warn"]
    if warned:
        return f"preflight: WARN {warned[0].code} {warned[0].owner} {warned[0].name}: {one_line(warned[0].summary)}"
    return f"preflight: PASS - - {len(judged)} check(s) passed"


def _phases(environment: dict[str, Any], facts: dict[str, Any], started: float | None) -> None:
    """Time to first step, per phase (seconds; None where not measured): the launcher's pull of the image, the
    container's start, then what verify itself times."""
    torch_phases: dict[str, Any] = environment["phases"] if isinstance(environment.get("phases"), dict) else {}
    loader = (facts.get("dataloader") or {}).get("measurements") or []
    first = next((r.get("first_batch_s") for r in loader if isinstance(r, dict) and r.get("first_batch_s")), None)
    environment["phases"] = {"pull": scheduler.pull_s(), "container_start": started, "import_torch": torch_phases.get("import_torch"),
                             "cuda_init": torch_phases.get("cuda_init"),
                             "process_group_init": (facts.get("nccl") or {}).get("init_s"), "first_batch": first,
                             "first_step": _first_step(facts.get("train"))}


def _first_step(train: Any) -> float | None:
    """The train check's time from its process group to its first optimizer step done (rank 0), or None."""
    ranks = train.get("ranks") if isinstance(train, dict) else None
    value = ranks[0].get("first_step_s") if isinstance(ranks, list) and ranks and isinstance(ranks[0], dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _scheduler_words(results: list[CheckResult], environment: dict[str, Any]) -> None:
    ctx: dict[str, Any] = environment["scheduler"] if isinstance(environment.get("scheduler"), dict) else {}
    for r in results:
        r.remedy = scheduler.adapt_remedy(r.remedy, ctx)


def _run(args: argparse.Namespace, names: list[str], options: Options) -> int:
    started = scheduler.container_start_s()
    environment: dict[str, Any] = {}
    facts: dict[str, Any] = {}
    try:
        print("verify: collecting the environment ...", file=sys.stderr, flush=True)
        environment = collect_environment()
        if isinstance(args.timeout, Shares):          # the preflight's floors scale with this host's torch import
            args.timeout.startup_s = _import_torch_s(environment)
        results = run_all(names, options, args.timeout, _progress, facts_out=facts)
        _phases(environment, facts, started)
        _scheduler_words(results, environment)
    except Interrupted as stop:
        cleanup_owned()
        results = stop.results or [CheckResult(n, "skip", f"not run: verify was interrupted by {stop}",
                                               remedy="Rerun verify.", code="INTERRUPTED", owner="job") for n in names]
        environment = environment or {"error": f"interrupted by {stop} while collecting the environment"}
        print(f"verify: interrupted by {stop}; writing the partial report", file=sys.stderr, flush=True)
        if args.save_facts:
            _save_facts(args.save_facts, names, results, facts, environment, options)
        _write_reports(args, results, environment, options, None, str(stop))
        if args.preflight:
            print(f"preflight: FAIL INTERRUPTED job verify: interrupted by {stop}", flush=True)
        return 128 + stop.signum
    finally:
        cleanup_owned()
    if args.save_facts:
        _save_facts(args.save_facts, names, results, facts, environment, options)
        print(f"facts: {args.save_facts}/ ({', '.join(names)}, host.json)")
    _write_reports(args, results, environment, options, None, None)
    if args.preflight:
        print(_preflight_line(results), flush=True)
    return 1 if any(r.status == FAIL for r in results) else 0
