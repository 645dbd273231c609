"""`python -m scripts <command>`: one command table (name → handler, help, knobs), the one error boundary.

Each command names the knobs (environment variables, or their flags) it uses; `Settings.load` parses and
checks exactly those, once. Only `render` (and `check-render`) read matrix.yaml and compat.yaml; every other
command reads images/<tag>/spec.json through `render.load_rendered`. Exit statuses: 0 done, 1 a build, a
check or a drift check failed, 2 bad input or environment (one line saying what to fix), 130 interrupted.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .commands.build import cmd_base, cmd_bench_build, cmd_bench_start, cmd_build, cmd_lock, cmd_stage_wheels
from .commands.common import err
from .commands.fleet import cmd_fleet_report, cmd_isolate, cmd_k8s, cmd_oci_bundle, cmd_slurm, cmd_sqsh
from .commands.plan import cmd_compat, cmd_docs_codes, cmd_lint, cmd_list, cmd_render
from .commands.publish import cmd_attest, cmd_bake, cmd_ci_matrix, cmd_gate, cmd_keygen, cmd_push, cmd_report
from .commands.verify import cmd_verify
from .errors import MatrixError, UserError, one_line
from .settings import KNOBS, Settings, misspelt_variables

Handler = Callable[[Settings, argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    handler: Handler
    knobs: tuple[str, ...] = ()
    extra: Callable[[argparse.ArgumentParser], None] | None = None


def _check_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check", action="store_true",
                   help="fail if images/ differs from a fresh render or a requirements.lock is missing or stale")


def _default_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--default", action="store_true", help="print only the default image's tag")


def _force_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--only-unreachable", action="store_true",
                   help="only where the registry base is neither in the engine nor pullable (make build)")


def _ref_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("ref", nargs="?", default="", help="registry/repo@sha256:... (default: IMAGE)")


def _per_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--per", choices=["platform", "tag"], default="platform",
                   help="one row per (image, platform) with its native runner (default), or one per image")


def _output_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", help="file to write (default build/docker-bake.json)")


# what every launcher reads (k8s-verify, slurm, isolate): SHM_SIZE too, through the one size parser, so a bad one is
# refused before anything is written (it sizes the pods' /dev/shm; under Slurm the node's is used, and said)
SCALE = ("IMAGE", "NODES", "GPUS", "REGISTRY", "PLATFORM", "LOCAL_IMAGE", "UNPINNED", "SHM_SIZE")


COMMANDS: tuple[Command, ...] = (
    Command("render", "validate matrix.yaml against compat.yaml and write images/<tag>/", cmd_render, (), _check_flag),
    Command("docs-codes", "regenerate docs/codes.md's failure-code table from verify/codes.py", cmd_docs_codes),
    Command("lint", "hadolint every images/*/Dockerfile", cmd_lint),
    Command("list", "list the rendered images", cmd_list, (), _default_flag),
    Command("compat", "refresh compat.yaml from PyPI metadata (network)", cmd_compat),
    Command("base", "bootstrap the distro bases the images need (debootstrap + import)", cmd_base, ("IMAGE", "PLATFORM", "FORCE"),
            _force_flag),
    Command("build", "build images with BuildKit", cmd_build,
            ("IMAGE", "KEEP_GOING", "CA_CERT", "WHEELS", "BASE_IMAGE", "BUILD_NETWORK", "PLATFORM", "EXTRA_BUILD_ARGS",
             "BUILD_TIMEOUT")),
    Command("verify", "run the verify suite inside built images", cmd_verify,
            ("IMAGE", "SHM_SIZE", "VERIFY_TIMEOUT", "VERIFY_ARGS", "PLATFORM")),
    Command("ci-matrix", "print the rendered images as JSON for a CI strategy.matrix", cmd_ci_matrix, (), _per_flag),
    Command("bake", "write build/docker-bake.json (one target per image)", cmd_bake, ("REGISTRY",), _output_flag),
    Command("k8s-verify", "write Kubernetes Job/Indexed Job manifests that verify IMAGE on NODES x GPUS", cmd_k8s,
            (*SCALE, "RDMA_RESOURCE")),
    Command("slurm", "write a Slurm batch script that verifies IMAGE on NODES x GPUS through LAUNCHER (pyxis, docker, "
            "oci, none)", cmd_slurm, (*SCALE, "LAUNCHER", "PREFLIGHT", "VERIFY_ARGS", "SQSH")),
    Command("isolate", "write a Slurm batch script that finds which of NODES nodes makes the all-reduce fail or slow "
            "(pairs, then suspects against known-good nodes; at most ceil(log2 N)+1 rounds)", cmd_isolate,
            (*SCALE, "LAUNCHER", "SQSH", "CLOCK_SKEW")),
    Command("oci-bundle", "make the runc bundle of IMAGE for make slurm LAUNCHER=oci (docker export + runc spec)",
            cmd_oci_bundle, ("IMAGE",)),
    Command("sqsh", "write IMAGE's root filesystem as one reproducible squashfs for enroot/pyxis nodes "
            "(build/sqsh/<tag>.sqsh + .json sidecar with its sha256)", cmd_sqsh, ("IMAGE", "PLATFORM", "SQSH_COMP")),
    Command("fleet-report", "one table and DIR/fleet.json over every node's verify report under DIR: verdicts, "
            "codes, figures against their model's fleet median, nodes to drain, time to first step", cmd_fleet_report,
            ("DIR", "STATE_DIR", "METRICS_DIR", "CLOCK_SKEW", "MAX_AGE")),
    Command("lock", "write images/<tag>/requirements.lock (uv pip compile, hashes; IMAGE default: all)", cmd_lock,
            ("IMAGE", "WHEELS", "FORCE")),
    Command("stage-wheels", "fill build/wheels for IMAGE (locked local wheels + uv's wheel) for bake and CI",
            cmd_stage_wheels, ("IMAGE", "WHEELS", "PLATFORM")),
    Command("bench-build", "cold build: IMAGE vs plain one-stage pip and uv Dockerfiles (build time, size, import torch)",
            cmd_bench_build, ("IMAGE", "CA_CERT", "WHEELS", "BASE_IMAGE", "BUILD_NETWORK", "BENCH_RUNS",
                              "BENCH_ROUNDS")),
    Command("bench-start", "cold start: IMAGE vs the plain pip image through a loopback registry into Docker (gzip) "
            "and containerd (gzip, zstd): pull, start, import torch (CUDA init, first batch on a GPU)",
            cmd_bench_start, ("IMAGE", "BENCH_AFTER")),
    Command("push", "push IMAGE's built image to REGISTRY and print its digest (several platforms: one tag, an OCI "
            "image index)", cmd_push, ("IMAGE", "REGISTRY", "PLATFORM", "INDEX_ONLY", "REGISTRY_INSECURE")),
    Command("keygen", "write a signing key pair for make attest (ECDSA P-256 or Ed25519) outside the repository",
            cmd_keygen, ("KEY_DIR", "KEY_TYPE", "FORCE")),
    Command("attest", "sign IMAGE's verify report, SBOM and build provenance (in-toto, DSSE) and attach them to its "
            "pushed digest (OCI referrers)", cmd_attest, ("IMAGE", "PLATFORM", "REGISTRY_INSECURE", "SIGNING_KEY")),
    Command("report", "verify, then print, the newest signed verify result attached to IMAGE (registry/repo@sha256:... "
            "or a tag make push recorded; TRUST= keys; REQUIRE= makes it a gate; MAX_AGE= expires it)", cmd_report,
            ("IMAGE", "REGISTRY_INSECURE", "TRUST", "REQUIRE", "MAX_AGE", "CLOCK_SKEW", "REPORT_TIMEOUT", "PLATFORM"),
            _ref_arg),
    Command("gate", "one line, exit 0 only when IMAGE (a digest, or a pushed tag) has a trusted attestation meeting "
            "REQUIRE and its driver floor fits this host's driver", cmd_gate,
            ("IMAGE", "PLATFORM", "REGISTRY_INSECURE", "TRUST", "REQUIRE", "MAX_AGE", "CLOCK_SKEW", "HOST_DRIVER",
             "REPORT_TIMEOUT"),
            _ref_arg),
)


PATH_FLAGS = {"MATRIX": ("--matrix", "matrix file (default: matrix.yaml)"),
              "COMPAT": ("--compat", "upstream facts (default: compat.yaml)"),
              "IMAGES_DIR": ("--images-dir", "rendered images (default: images/)")}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scripts",
                                     description="Verified PyTorch images: render, lint, build, verify, publish.")
    for var, (flag, what) in PATH_FLAGS.items():
        parser.add_argument(flag, dest=var, default=None, help=f"{what}; variable {var}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        for knob in command.knobs:
            row = KNOBS[knob]
            if row.switch:
                p.add_argument(row.flag, dest=knob, action="store_const", const="1", default=None,
                               help=f"{row.help}; variable {knob}")
            else:
                p.add_argument(row.flag, dest=knob, default=None, help=f"{row.help}; variable {knob}")
        if command.extra:
            command.extra(p)
        p.set_defaults(command_entry=command)
    return parser


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """The one error boundary: a UserError is one line and exit 2 (or its own code); nothing else escapes."""
    env = dict(os.environ if environ is None else environ)
    try:
        args = build_parser().parse_args(argv)
        command: Command = args.command_entry
        flags = {name: getattr(args, name, None) for name in (*PATH_FLAGS, *command.knobs)}
        settings = Settings.load(env, flags, command.knobs)
        for line in misspelt_variables(env):        # a typo on make's command line is said, never dropped unsaid
            err(f"note: {line}")
        status = int(command.handler(settings, args) or 0)
        sys.stdout.flush()              # a reader that left shows here, not in the interpreter's flush at exit
        return status
    except MatrixError as exc:          # one line per problem, each kept one line
        err("error: " + "\n".join(one_line(p) for p in exc.problems))
        return exc.exit_code
    except UserError as exc:            # one line, whatever a variable held (a newline in IMAGE stays \n)
        err(f"error: {exc.shown()}")
        return exc.exit_code
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except BrokenPipeError:
        # the reader closed stdout (`... | head -1`): Python's recipe, as verify/shared/closedpipe.py (neither side
        # imports the other): stdout onto /dev/null so the flush at exit cannot raise again, and SIGPIPE's status
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - the boundary: a bug is one line too, with a way to see more
        if env.get("TORCHIMAGES_DEBUG"):
            traceback.print_exc()
        err(f"internal error: {type(exc).__name__}: {one_line(str(exc).splitlines()[0][:300]) if str(exc) else ''} "
            f"(a bug; rerun with TORCHIMAGES_DEBUG=1 for the traceback and report it)")
        return 3
