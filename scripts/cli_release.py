"""Release commands: lock, bench-build, push, attest, report (registered by scripts/cli_more.py)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .errors import UserError
from .matrix import load_matrix, select
from .render import IMAGES


def _specs(args: argparse.Namespace, default_all: bool = False):
    image = args.image or ("all" if default_all else "")
    return select(load_matrix(Path(args.matrix)), image)


def cmd_lock(args: argparse.Namespace) -> int:
    from .lock import local_folders, refresh
    specs = _specs(args, default_all=True)
    folders = local_folders(args.wheels)
    print(f"locking {len(specs)} image(s); wheel folders: {', '.join(map(str, folders)) or 'none'}")
    failures = refresh(specs, IMAGES, folders, force=args.force)
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    return 1 if failures else 0


def cmd_stage(args: argparse.Namespace) -> int:
    from .build import WHEELS_DIR, stage_wheels, wheel_folders
    from .lock import stage_for_build
    specs = _specs(args)
    if len(specs) != 1:
        raise UserError("stage-wheels prepares build/wheels for one image: IMAGE=<tag>")
    folders = wheel_folders(args.wheels)
    stage_wheels(specs[0], folders)
    staged, offline = stage_for_build(specs[0], IMAGES, folders, WHEELS_DIR)
    print(f"build/wheels for {specs[0].tag}: {', '.join(staged)}{' (offline-complete)' if offline else ''}")
    return 0


def cmd_push(args: argparse.Namespace) -> int:
    from .engine import connect
    from .publish.push import push_images
    registry = args.registry or ""
    if not registry:
        raise UserError("no registry given: make push REGISTRY=host:port (e.g. REGISTRY=127.0.0.1:5000)")
    client = connect()
    for row in push_images(client, _specs(args), registry, out_dir=Path(args.out)):
        print(f"{row.source:<48} -> {row.reference}")
    return 0


def cmd_attest(args: argparse.Namespace) -> int:
    from .publish.attest import attest_from_reports
    for line in attest_from_reports(_specs(args), Path(args.out), Path(args.reports)):
        print(line)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .publish.report import fetch_report, format_report
    ref = args.ref or os.environ.get("IMAGE", "")
    if "@sha256:" not in ref:
        raise UserError(f"IMAGE={ref or '(empty)'} is not a digest reference: make report IMAGE=host:port/repo@sha256:...")
    summary = fetch_report(ref)
    print(format_report(summary))
    return 0 if summary.verified else 1


def cmd_bench_build(args: argparse.Namespace) -> int:
    from .bench_build import run_bench
    return run_bench(_specs(args)[0], runs=args.runs, json_out=Path(args.json) if args.json else None)


def add_release_commands(sub: argparse._SubParsersAction) -> None:
    env = os.environ.get
    p = sub.add_parser("lock", help="write images/<tag>/requirements.lock (uv pip compile, hashes)")
    p.add_argument("--image", default=env("IMAGE", ""), help="tag(s) or 'all' (default: all)")
    p.add_argument("--wheels", default=env("WHEELS"), help="local wheel folder(s) (default: /opt/wheels etc.)")
    p.add_argument("--force", action="store_true", default=env("FORCE", "") not in ("", "0"),
                   help="resolve again even when the lock is current (FORCE=1)")
    p.set_defaults(func=cmd_lock)

    p = sub.add_parser("stage-wheels", help="fill build/wheels for IMAGE (uv's wheel + locked local wheels), "
                                             "for builds outside make build (bake, CI)")
    p.add_argument("--image", default=env("IMAGE", ""), help="tag (default: the default image)")
    p.add_argument("--wheels", default=env("WHEELS"), help="local wheel folder(s) (WHEELS; default PIP_FIND_LINKS)")
    p.set_defaults(func=cmd_stage)

    p = sub.add_parser("push", help="push built images to REGISTRY and print their digests")
    p.add_argument("--image", default=env("IMAGE", ""), help="tag(s) or 'all' (default: the default image)")
    p.add_argument("--registry", default=env("REGISTRY", ""), help="host:port[/prefix] (REGISTRY)")
    p.add_argument("--out", default=env("PUSH_OUT", "reports/push"), help="where pushed.json goes")
    p.set_defaults(func=cmd_push)

    p = sub.add_parser("attest", help="attach the verify report and the SBOM to pushed digests (OCI referrers)")
    p.add_argument("--image", default=env("IMAGE", ""), help="tag(s) or 'all' (default: the default image)")
    p.add_argument("--out", default=env("PUSH_OUT", "reports/push"), help="where make push wrote pushed.json")
    p.add_argument("--reports", default=env("REPORTS", "reports"), help="where make verify wrote its reports")
    p.set_defaults(func=cmd_attest)

    p = sub.add_parser("report", help="fetch and print the verify result attached to IMAGE=repo@sha256:...")
    p.add_argument("ref", nargs="?", default="", help="repo@sha256:... (default: IMAGE)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("bench-build", help="cold-build benchmark: this project's image vs a plain pip Dockerfile")
    p.add_argument("--image", default=env("IMAGE", ""), help="tag (default: the default image)")
    p.add_argument("--runs", type=int, default=int(env("BENCH_RUNS", "5")), help="import-time runs (median)")
    p.add_argument("--json", default=env("BENCH_JSON", "build/bench-build.json"), help="write results here")
    p.set_defaults(func=cmd_bench_build)
