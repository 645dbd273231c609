"""Commands that talk to the engine or the network: compat, base, build, verify."""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from .errors import UserError
from .matrix import load_matrix, select
from .render import IMAGES


IMAGE_HELP = "image tag, comma-separated tags, or 'all' (default: the matrix's default image)"


def specs_of(args: argparse.Namespace):
    return select(load_matrix(Path(args.matrix)), args.image)


def add_image_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--image", default=os.environ.get("IMAGE", ""), help=IMAGE_HELP)


def cmd_compat(args: argparse.Namespace) -> int:
    from .compat_refresh import refresh
    for line in refresh():
        print(line)
    print("compat.yaml refreshed from PyPI metadata; review `git diff compat.yaml`, then `make render`")
    return 0


def cmd_base(args: argparse.Namespace) -> int:
    from .base import make_bases
    from .engine import connect
    client = connect()
    rows = make_bases(client, specs_of(args), force=args.force)
    if not rows:
        print("the selected images start from NVIDIA's devel images: nothing to bootstrap")
    for tag, outcome, seconds in rows:
        print(f"{tag:<40} {outcome:<13} {seconds:5.0f}s")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from .build import build_all, find_ca, format_table, wheel_folders
    from .engine import connect, find_build_client
    specs = specs_of(args)
    client = connect()
    cli = find_build_client()
    print(f"building {len(specs)} image(s) with {cli.describe()}")
    outcomes = build_all(client, cli, specs, Path(args.images_dir), keep_going=args.keep_going,
                         ca=find_ca(args.ca_cert), folders=wheel_folders(args.wheels), base_override=args.base_image)
    print()
    print(format_table(outcomes))
    failed = [o for o in outcomes if not o.ok]
    skipped = len(specs) - len(outcomes)
    if failed:
        logs = ", ".join(str(o.log) for o in failed if o.log)
        print(f"\n{len(failed)} build(s) failed" + (f"; full logs: {logs}" if logs else "") +
              (f"; {skipped} not attempted" if skipped else ""), file=sys.stderr)
        return 1
    if len(specs) == 1:
        print(f"\nnext: make verify IMAGE={specs[0].tag}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from .engine import connect
    from .run_verify import VerifyOutcome, echo_to_stdout, format_summary, verify_image
    specs = specs_of(args)
    client = connect()
    outcomes = []
    for spec in specs:
        try:
            outcomes.append(verify_image(client, spec, shm_size=args.shm_size, timeout=args.timeout,
                                         extra_args=shlex.split(args.verify_args or ""), echo=echo_to_stdout))
        except UserError as exc:
            if len(specs) == 1:
                raise
            outcomes.append(VerifyOutcome(spec.tag, None, 0.0, {}, problem=str(exc)))
    print()
    print(format_summary(outcomes))
    return 0 if all(o.exit_code == 0 and not o.mismatches and not o.problem for o in outcomes) else 1


def add_commands(sub: argparse._SubParsersAction) -> None:
    env = os.environ.get
    p = sub.add_parser("compat", help="refresh compat.yaml from PyPI metadata (network)")
    p.set_defaults(func=cmd_compat)

    p = sub.add_parser("base", help="bootstrap the distro bases the images need (debootstrap + import)")
    add_image_arg(p)
    p.add_argument("--force", action="store_true", help="bootstrap again even when present")
    p.set_defaults(func=cmd_base)

    p = sub.add_parser("build", help="build images with BuildKit")
    add_image_arg(p)
    p.add_argument("--keep-going", action="store_true", default=env("KEEP_GOING", "") not in ("", "0"),
                   help="build the rest after a failure (KEEP_GOING=1)")
    p.add_argument("--ca-cert", default=env("CA_CERT"), help="proxy CA bundle passed as a build secret (CA_CERT)")
    p.add_argument("--wheels", default=env("WHEELS"), help="local wheel folder(s) (WHEELS; default PIP_FIND_LINKS)")
    p.add_argument("--base-image", default=env("BASE_IMAGE"), help="build FROM this image instead (BASE_IMAGE)")
    p.add_argument("--images-dir", default=env("IMAGES_DIR", str(IMAGES)), help="where the Dockerfiles are")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("verify", help="run the verify suite inside built images")
    add_image_arg(p)
    p.add_argument("--shm-size", default=env("SHM_SIZE", "2g"), help="container /dev/shm (SHM_SIZE; default 2g)")
    p.add_argument("--timeout", type=float, default=float(env("VERIFY_TIMEOUT", "900")),
                   help="kill the container after this many seconds (VERIFY_TIMEOUT)")
    p.add_argument("--verify-args", default=env("VERIFY_ARGS", ""), help="extra arguments for verify (VERIFY_ARGS)")
    p.set_defaults(func=cmd_verify)

    from .cli_scaleout import add_scaleout_commands
    add_scaleout_commands(sub)
    # release path: lock, stage-wheels, push, attest, report, bench-build
    from .cli_release import add_release_commands
    add_release_commands(sub)

