"""Build platforms (linux/amd64, linux/arm64): the facts of compat.yaml's `platforms:` section and the check an
image's `platforms:` must pass (`check_platforms`, the platform axis of `plan.matrix.resolve`). Pure logic, no
engine, no environment: scripts/builder/base.py and emulation.py do the emulated work; plan/spec.py's Target
names an image on one platform.

linux/amd64 is what the rest of compat.yaml describes. Every other platform lists the torch builds that exist
for it and the index serving each; an image may name a platform only where its build (same CUDA, same index)
exists there, so one Dockerfile serves every platform and only the wheels pip picks differ.
"""
from __future__ import annotations

import platform as _platform
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from ..versions import version_key

DEFAULT_PLATFORMS: tuple[str, ...] = ("linux/amd64",)
NATIVE_NAME = "linux/amd64"      # the platform whose images and bases keep the plain tag
# uname -m / docker info Architecture → the platform's architecture name
MACHINE_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
PLATFORM_MACHINES = {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}
# GitHub-hosted runners that build each platform natively (no emulation in CI).
CI_RUNNERS = {"linux/amd64": "ubuntu-24.04", "linux/arm64": "ubuntu-24.04-arm"}
# spellings that name the same platform, as containerd's platforms.Normalize reads them (arm64's default variant is
# v8, amd64's v1): PLATFORM=linux/arm64/v8, copied from `docker image inspect`, means linux/arm64
PLATFORM_ALIASES = {"linux/arm64/v8": "linux/arm64", "linux/aarch64": "linux/arm64", "linux/aarch64/v8": "linux/arm64",
                    "linux/x86_64": "linux/amd64", "linux/x86-64": "linux/amd64", "linux/amd64/v1": "linux/amd64"}
PLATFORM_NAME = re.compile(r"linux/[a-z0-9]+(/v[0-9]+)?")    # what a platform may look like (fullmatch)
AMD64_ONLY: dict[str, Any] = {"linux/amd64": {"arch": "amd64", "machine": "x86_64",
                                              "wheel_platform": "manylinux_2_28_x86_64"}}


@dataclass(frozen=True)
class PlatformFacts:
    name: str                        # linux/arm64
    arch: str                        # arm64 (Docker's and TARGETARCH's name)
    machine: str                     # aarch64 (uname -m)
    wheel_platform: str              # manylinux_2_28_aarch64
    torch_from: str | None = None    # first torch release with wheels for it; None: every release
    distros: tuple[str, ...] | None = None            # None: every distro of compat.yaml
    mirrors: dict[str, str] = field(default_factory=dict)
    devel_cuda: tuple[str, ...] | None = None          # CUDA versions with nvidia/cuda devel images for it
    torch: dict[str, dict[str, dict[str, str]]] | None = None   # release → cuda|cpu → {index, source}

    @property
    def restricted(self) -> bool:
        return self.torch is not None


# uv's --python-platform per image platform (locks, and builder.j2's cross install); manylinux_2_28 is what torch's
# wheels need on both
UV_PLATFORMS = {"linux/amd64": "x86_64-manylinux_2_28", "linux/arm64": "aarch64-manylinux_2_28"}

def parse_platforms(raw: dict[str, Any]) -> dict[str, PlatformFacts]:
    """compat.yaml's `platforms:` mapping (already schema-checked) → facts; without it only linux/amd64 is known."""
    section: dict[str, Any] = raw.get("platforms") or AMD64_ONLY
    out = {}
    for name, p in section.items():
        out[name] = PlatformFacts(
            name=name, arch=p["arch"], machine=p["machine"], wheel_platform=p["wheel_platform"],
            torch_from=p.get("torch_from"),
            distros=tuple(p["distros"]) if "distros" in p else None,
            mirrors=dict(p.get("mirrors") or {}),
            devel_cuda=tuple(p["devel_cuda"]) if "devel_cuda" in p else None,
            torch={str(v): {str(c): dict(b) for c, b in builds.items()} for v, builds in p["torch"].items()}
            if "torch" in p else None,
        )
    return out


def check_platforms(facts: dict[str, PlatformFacts], platforms: list[str], *, torch: str, cuda: str,
                    index: str, flavor: str, distro: str) -> list[str]:
    """Why this image (torch release, resolved CUDA X.Y or cpu, the index of that build, flavor, distro) cannot be
    built for each of `platforms`, each with the valid choices. Empty when every platform is possible."""
    problems: list[str] = []
    if len(set(platforms)) != len(platforms):
        problems.append(f"platforms {platforms} lists a platform twice; list each once")
    for name in dict.fromkeys(platforms):
        p = facts.get(name)
        if p is None:
            problems.append(f"unknown platform {name}; known: {', '.join(sorted(facts))}")
            continue
        if not p.restricted:
            continue
        releases = sorted(p.torch or {}, key=version_key, reverse=True)
        if p.torch_from and version_key(torch) < version_key(p.torch_from):
            problems.append(f"torch {torch} has no {p.machine} wheels (PyPI has them from {p.torch_from}); for {name} "
                            f"choose torch {', '.join(releases)}, or drop {name}")
            continue
        builds = (p.torch or {}).get(torch)
        if builds is None:
            problems.append(f"compat.yaml records no {name} builds of torch {torch}; for {name} choose torch "
                            f"{', '.join(releases)} (or add the release under platforms.{name}.torch with its source)")
            continue
        build = builds.get(cuda)
        what = "CPU" if cuda == "cpu" else f"CUDA {cuda}"
        if build is None or build.get("index") != index:
            avail = [("cpu" if c == "cpu" else f"CUDA {c}") + f" (index {b['index']})" for c, b in builds.items()]
            why = (f"from index {build['index']}, not {index}" if build is not None else "does not exist")
            problems.append(f"torch {torch} {what} for {name} {why}; builds for {name}: {', '.join(avail)}")
        if p.distros is not None and distro not in p.distros:
            problems.append(f"distro {distro} is not published for {name}; choose one of {', '.join(p.distros)}")
        if flavor == "devel" and p.devel_cuda is not None and cuda not in p.devel_cuda:
            problems.append(f"NVIDIA publishes no {p.arch} devel image for CUDA {cuda}; for {name} use CUDA "
                            f"{', '.join(p.devel_cuda)}, or flavor runtime")
    return problems


def normalize_platform(platform: str) -> str:
    """linux/arm64/v8 → linux/arm64, linux/x86_64 → linux/amd64; any other spelling unchanged."""
    return PLATFORM_ALIASES.get(platform, platform)


def arch_of(platform: str) -> str:
    """linux/arm64 → arm64 (linux/arm64/v8 → arm64)."""
    parts = platform.split("/")
    if len(parts) < 2 or parts[0] != "linux" or not parts[1]:
        raise UserError(f"PLATFORM={platform}: expected linux/<arch>, e.g. linux/amd64 or linux/arm64")
    return parts[1]


def host_platform(machine: str | None = None) -> str:
    """The platform this host runs natively (linux/amd64 on x86_64, linux/arm64 on aarch64)."""
    machine = machine or _platform.machine()
    return f"linux/{MACHINE_ARCH.get(machine, machine)}"


def machine_of(platform: str) -> str:
    """linux/arm64 → aarch64 (what `uname -m` says there)."""
    return PLATFORM_MACHINES.get(platform, arch_of(platform))


def lock_name(platform: str) -> str:
    """The lock file of one platform of an image: requirements.lock for linux/amd64 (the name every single-platform
    image has always had), requirements.<arch>.lock for the others (requirements.arm64.lock)."""
    return "requirements.lock" if platform == NATIVE_NAME else f"requirements.{arch_of(platform)}.lock"


def is_lock_name(name: str) -> bool:
    """A file name `lock_name` gives for some platform."""
    return re.fullmatch(r"requirements(\.[a-z0-9]+)?\.lock", name) is not None


def base_tag(distro: str, platform: str) -> str:
    """The local base `make base` creates for `platform`, whatever the host: torchimages-base/<distro>:latest for
    linux/amd64 (the tag spec.json's bootstrap_base names), torchimages-base/<distro>:latest-<arch> for the others."""
    if platform == NATIVE_NAME:
        return f"torchimages-base/{distro}:latest"
    return f"torchimages-base/{distro}:latest-{arch_of(platform)}"


def select_platforms(spec_platforms: list[str], requested: str | None, tag: str) -> list[str]:
    """The platforms to build/verify for one image: PLATFORM when given (it must be one of the image's), else
    the image's first platform."""
    if requested is None:
        return [spec_platforms[0]]
    if requested not in spec_platforms:
        raise UserError(f"{tag} is not built for {requested}; its platforms: {', '.join(spec_platforms)} "
                        f"(add {requested} to its `platforms:` in matrix.yaml, or choose another PLATFORM)")
    return [requested]


def k8s_arch_selection(platforms: list[str], platform: str | None = None) -> dict[str, Any]:
    """Pod spec fields that put the pod on a node of the right CPU architecture (kubernetes.io/arch): a
    nodeSelector for one platform (PLATFORM, or the image's only one), else a node affinity over the image's."""
    archs = [arch_of(platform)] if platform else [arch_of(p) for p in platforms]
    if len(archs) == 1:
        return {"nodeSelector": {"kubernetes.io/arch": archs[0]}}
    term = {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": archs}]}
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}}


def slurm_arch_guard(platforms: list[str], platform: str | None = None) -> str:
    """A shell line that stops the job on a node of another architecture (Slurm has no standard arch selector:
    pick the partition or feature of those nodes with `sbatch -p`/`--constraint`)."""
    archs = [arch_of(platform)] if platform else [arch_of(p) for p in platforms]
    machines = sorted({m for m, a in MACHINE_ARCH.items() if a in archs and m in ("x86_64", "aarch64")})
    pattern = "|".join(machines) or "*"
    return (f'case "$(uname -m)" in {pattern}) ;; *) echo "this image is built for {", ".join(archs)}; node '
            f'$(hostname) is $(uname -m): submit to a partition of those nodes (sbatch -p ...)" >&2; exit 1;; esac')


def ci_platform_fields(platform: str) -> dict[str, str]:
    return {"platform": platform, "arch": arch_of(platform), "runner": CI_RUNNERS.get(platform, "ubuntu-24.04")}
