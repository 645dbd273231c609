"""Scale-out commands: the CI matrix, the bake file, Kubernetes and Slurm manifests."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from . import ROOT
from .cli_more import add_image_arg, specs_of
from .errors import UserError
from .matrix import load_matrix
def _registry_image(spec) -> str:
    registry = os.environ.get("REGISTRY", "").rstrip("/")
    return f"{registry}/{spec.image}" if registry else spec.image


def _platform(spec) -> str | None:
    """PLATFORM=linux/arm64 picks the nodes of that architecture (it must be one of the image's)."""
    from .platforms import requested_platform, select_platforms
    platform = requested_platform()
    return select_platforms(list(spec.platforms), platform, spec.tag)[0] if platform else None


def cmd_ci_matrix(args: argparse.Namespace) -> int:
    from .ci_matrix import ci_matrix_json
    print(ci_matrix_json(load_matrix(Path(args.matrix)), args.per))
    return 0


def cmd_bake(args: argparse.Namespace) -> int:
    from .bake import bake_json
    specs = load_matrix(Path(args.matrix))
    out = Path(args.output) if args.output else ROOT / "docker-bake.json"
    out.write_text(bake_json(specs), encoding="utf-8")
    print(f"wrote {out.name}: {len(specs)} targets; build them all with `mkdir -p build/wheels && docker buildx bake -f {out.name}`"
          f" (a group: `docker buildx bake -f {out.name} runtime`)")
    return 0


def _positive(value: int, name: str) -> int:
    if value < 1:
        raise UserError(f"{name}={value}: must be 1 or more")
    return value


def cmd_k8s(args: argparse.Namespace) -> int:
    import yaml
    from .cluster import job_name, k8s_manifests
    nodes, gpus = _positive(args.nodes, "NODES"), _positive(args.gpus, "GPUS")
    out_dir = ROOT / "build" / "k8s"
    out_dir.mkdir(parents=True, exist_ok=True)
    for spec in specs_of(args):
        docs = k8s_manifests(spec, _registry_image(spec), nodes, gpus, platform=_platform(spec))
        path = out_dir / f"{job_name(spec.tag, nodes)}.yaml"
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
        name = job_name(spec.tag, nodes)
        print(f"wrote {path.relative_to(ROOT)}\n  kubectl apply -f {path.relative_to(ROOT)} && kubectl wait --for=condition=complete "
              f"--timeout=30m job/{name}\n  kubectl logs -l job-name={name} --tail=-1   # reports between the BEGIN/END VERIFY REPORT lines")
    return 0


def cmd_slurm(args: argparse.Namespace) -> int:
    from .cluster import job_name, slurm_script
    nodes, gpus = _positive(args.nodes, "NODES"), _positive(args.gpus, "GPUS")
    out_dir = ROOT / "build" / "slurm"
    out_dir.mkdir(parents=True, exist_ok=True)
    for spec in specs_of(args):
        path = out_dir / f"{job_name(spec.tag, nodes)}.sbatch"
        path.write_text(slurm_script(spec, _registry_image(spec), nodes, gpus, platform=_platform(spec)), encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}\n  sbatch {path.relative_to(ROOT)}")
    return 0


def add_scaleout_commands(sub: argparse._SubParsersAction) -> None:
    env = os.environ.get
    p = sub.add_parser("ci-matrix", help="print the matrix as JSON for a CI strategy.matrix")
    p.add_argument("--per", choices=["platform", "tag"], default="platform",
                   help="one entry per (image, platform) with its runner (default), or one per image")
    p.set_defaults(func=cmd_ci_matrix)
    p = sub.add_parser("bake", help="write docker-bake.json (one target per image)")
    p.add_argument("--output", help="file to write (default docker-bake.json)")
    p.set_defaults(func=cmd_bake)
    for name, func, what in (("k8s-verify", cmd_k8s, "Kubernetes Job/Indexed Job manifests"),
                             ("slurm", cmd_slurm, "a Slurm batch script (enroot/pyxis)")):
        p = sub.add_parser(name, help=f"write {what} that verify IMAGE on NODES x GPUS")
        add_image_arg(p)
        p.add_argument("--nodes", type=int, default=int(env("NODES", "1")))
        p.add_argument("--gpus", type=int, default=int(env("GPUS", "1")), help="GPUs per node")
        p.set_defaults(func=func)
