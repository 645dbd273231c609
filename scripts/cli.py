"""Argument parsing and the error boundary: a UserError prints one message and exits non-zero."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .errors import UserError
from .matrix import MATRIX_FILE, load_matrix
from .render import IMAGES, drift, rendered_files, write_images


def cmd_render(args: argparse.Namespace) -> int:
    specs = load_matrix(Path(args.matrix))
    files = rendered_files(specs)
    if args.check:
        changed = drift(files, IMAGES)
        # release path: a stale or missing requirements.lock fails too
        from .lock import check_locks
        changed += check_locks(specs, IMAGES)
        if changed:
            print("images/ is out of date with matrix.yaml and templates/ (rendered files are generated, never edited):", file=sys.stderr)
            for rel in changed:
                print(f"  images/{rel}", file=sys.stderr)
            print("fix: run `make render` (and `make lock` for a lock) and commit images/", file=sys.stderr)
            return 1
        print(f"images/ matches a fresh render ({len(specs)} images)")
        return 0
    removed = write_images(files, IMAGES)
    for spec in specs:
        print(f"  images/{spec.tag}/{'   (default)' if spec.default else ''}")
    for name in removed:
        print(f"  removed images/{name}/ (no longer in the matrix)")
    print(f"rendered {len(specs)} images from {Path(args.matrix).name}")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from .lint import lint
    files = sorted(IMAGES.glob("*/Dockerfile"))
    ok, output = lint(files)
    if output:
        print(output)
    print(f"hadolint: {len(files)} Dockerfiles, {'no findings' if ok else 'findings above'}")
    return 0 if ok else 1


def cmd_list(args: argparse.Namespace) -> int:
    specs = load_matrix(Path(args.matrix))
    if args.default:
        print(next(s.tag for s in specs if s.default))
        return 0
    for spec in specs:
        print(f"{spec.tag:48} {spec.description}{'  [default]' if spec.default else ''}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scripts", description="Verified PyTorch images: render, lint, build, verify.")
    parser.add_argument("--matrix", default=os.environ.get("MATRIX", str(MATRIX_FILE)), help="matrix file (default: matrix.yaml)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("render", help="validate matrix.yaml and write images/<tag>/")
    p.add_argument("--check", action="store_true", help="fail if images/ differs from a fresh render")
    p.set_defaults(func=cmd_render)
    p = sub.add_parser("lint", help="hadolint every images/*/Dockerfile")
    p.set_defaults(func=cmd_lint)
    p = sub.add_parser("list", help="list the images of the matrix")
    p.add_argument("--default", action="store_true", help="print only the default image's tag")
    p.set_defaults(func=cmd_list)
    from . import cli_more
    cli_more.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
