"""`python -m verify`: run the checks, print a table, write JSON/JUnit; exit 1 when any check failed."""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict

from .checks import CHECKS
from .options import Options, parse_size
from .report import build_report, render_table, write_json, write_junit
from .result import FAIL, CheckResult
from .runner import collect_environment, run_all


def _parser() -> argparse.ArgumentParser:
    d = Options()
    p = argparse.ArgumentParser(
        prog="verify", description="Check that this PyTorch environment really works: GPU, NCCL, /dev/shm, HDF5, Arrow.",
        epilog="Get the JSON report out of a container: docker run --rm -v \"$PWD:/out\" IMAGE verify "
               "--json /out/report.json --junit /out/report.xml. Benchmark the data path: verify bench.")
    p.add_argument("--checks", default=",".join(CHECKS), help=f"comma-separated subset of: {', '.join(CHECKS)}")
    p.add_argument("--list", action="store_true", help="list the checks and exit")
    p.add_argument("--json", metavar="PATH", help="write the JSON report (schema: verify/report.schema.json)")
    p.add_argument("--junit", metavar="PATH", help="write a JUnit XML report")
    p.add_argument("--expect-gpus", type=int, default=d.expect_gpus, metavar="N",
                   help="fail (instead of skip) when fewer than N GPUs are usable")
    p.add_argument("--shm-min", default="1g", metavar="SIZE", help="/dev/shm the shm check allocates (default 1g)")
    p.add_argument("--arrow-size", default="64m", metavar="SIZE", help="data the arrow check maps (default 64m)")
    p.add_argument("--arrow-min-ratio", type=float, default=d.arrow_min_ratio,
                   help="zero-copy throughput / memory bandwidth under which arrow warns (default %(default)s)")
    p.add_argument("--nccl-min-size", default="1m", metavar="SIZE", help="smallest all-reduce message (default 1m)")
    p.add_argument("--nccl-max-size", default="64m", metavar="SIZE", help="largest all-reduce message (default 64m)")
    p.add_argument("--nccl-timeout", type=float, default=d.nccl_timeout_s, metavar="S",
                   help="init and per-operation timeout of the collective (default %(default)s s)")
    p.add_argument("--timeout", type=float, metavar="S", help="timeout of every check (default: per check)")
    return p


def _options(args: argparse.Namespace) -> Options:
    return Options(expect_gpus=args.expect_gpus, shm_min_bytes=parse_size(args.shm_min),
                   arrow_bytes=parse_size(args.arrow_size), arrow_min_ratio=args.arrow_min_ratio,
                   nccl_min_bytes=parse_size(args.nccl_min_size), nccl_max_bytes=parse_size(args.nccl_max_size),
                   nccl_timeout_s=args.nccl_timeout)


def _progress(index: int, total: int, name: str, result: CheckResult | None) -> None:
    if result is None:
        print(f"[{index}/{total}] {name}: running ...", file=sys.stderr, flush=True)
    else:
        print(f"[{index}/{total}] {name}: {result.status} ({result.duration_s:.1f} s)", file=sys.stderr, flush=True)


def is_reporting_rank() -> bool:
    """Under torchrun every rank runs the checks; rank 0 alone writes reports."""
    return int(os.environ.get("RANK", "0")) == 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:
        from .bench import main as bench_main
        return bench_main(argv[1:])
    args = _parser().parse_args(argv)
    if args.list:
        for name, (what, timeout) in CHECKS.items():
            print(f"{name:<6} {what} (timeout {timeout:.0f} s)")
        return 0
    names = [n.strip() for n in args.checks.split(",") if n.strip()]
    unknown = [n for n in names if n not in CHECKS]
    if unknown or not names:
        print(f"verify: unknown check {', '.join(unknown) or '(none given)'}; choose from {', '.join(CHECKS)}", file=sys.stderr)
        return 2
    try:
        options = _options(args)
    except ValueError as exc:
        print(f"verify: bad size ({exc}); write sizes like 64m, 1g or 1048576", file=sys.stderr)
        return 2
    print("verify: collecting the environment ...", file=sys.stderr, flush=True)
    environment = collect_environment()
    results = run_all(names, options, args.timeout, _progress)
    if is_reporting_rank():
        print(render_table(results, environment))
        report = build_report(results, environment, asdict(options))
        if args.json:
            write_json(report, args.json)
            print(f"JSON report: {args.json}")
        if args.junit:
            write_junit(results, args.junit)
            print(f"JUnit report: {args.junit}")
        if not args.json and os.environ.get("VERIFY_IN_IMAGE"):
            print('JSON report: docker run --rm -v "$PWD:/out" IMAGE verify --json /out/report.json')
    return 1 if any(r.status == FAIL for r in results) else 0
