"""Distro bases: `make base` bootstraps the ones the matrix needs from the distribution's mirror (offline-capable),
and `make build` picks the base each target builds FROM.

Two routes. linux/amd64 on an amd64 host: debootstrap --arch=amd64 --variant=minbase into a folder, then
`docker import` as torchimages-base/<distro>:latest. Every other (platform, host) pair: `docker import` labels the
engine's architecture whatever --platform says, so debootstrap --arch=<arch> (its second stage through qemu-user
when the host is another architecture) and build the rootfs `FROM scratch` + `ADD rootfs.tar /` with
`--platform linux/<arch>` through a BuildKit client. The tag follows the platform, never the host
(`Target.base_tag`): torchimages-base/<distro>:latest for linux/amd64, :latest-<arch> for the others.
`make build` uses those tags when the registry base (debian:bookworm-slim, ...) is neither present nor pullable.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..plan.platforms import NATIVE_NAME, host_platform
from ..plan.spec import ImageSpec, Target
from .emulation import EMULATED_LIMIT_S, overrun, require_emulation
from .engine import image_exists, registry_reachable

UBUNTU_KEYRING = "/usr/share/keyrings/ubuntu-archive-keyring.gpg"
DEBOOTSTRAP_SCRIPTS = Path("/usr/share/debootstrap/scripts")
Log = Callable[[str], None]


def bases_needed(specs: list[ImageSpec]) -> dict[str, ImageSpec]:
    """bootstrap tag → one spec that needs it (devel images start from NVIDIA's image: nothing to bootstrap)."""
    needed: dict[str, ImageSpec] = {}
    for spec in specs:
        if spec.bootstrap_base:
            needed.setdefault(spec.bootstrap_base, spec)
    return needed


def debootstrap_argv(*, arch: str, codename: str, mirror: str, distro: str, rootfs: Path,
                     scripts: Path = DEBOOTSTRAP_SCRIPTS) -> list[str]:
    argv = ["debootstrap", f"--arch={arch}", "--variant=minbase"]
    ubuntu = distro.startswith("ubuntu")
    if ubuntu:
        if not Path(UBUNTU_KEYRING).exists():
            raise UserError(f"bootstrapping {distro} needs Ubuntu's archive keyring: `apt-get install ubuntu-keyring` "
                            f"(on Debian 12 from bookworm-backports: `apt-get install -t bookworm-backports "
                            f"ubuntu-keyring`)")
        argv += [f"--keyring={UBUNTU_KEYRING}", "--components=main,universe"]
    argv += [codename, str(rootfs), mirror]
    # A debootstrap older than the release has no script named after it (Debian 12's knows no noble), yet every
    # Ubuntu release since gutsy and every Debian one since squeeze uses one of two scripts: named, it bootstraps.
    if not (scripts / codename).exists():
        argv.append(str(scripts / ("gutsy" if ubuntu else "sid")))
    return argv


def scratch_dockerfile() -> str:
    return ("FROM scratch\n"
            "ADD rootfs.tar /\n"
            "ENV LANG=C.UTF-8\n"
            'CMD ["/bin/bash"]\n')


def require_debootstrap() -> None:
    """A UserError naming the fix when debootstrap cannot run here (missing, or not root)."""
    if not shutil.which("debootstrap"):
        raise UserError("debootstrap not found: `apt-get install debootstrap` (make base bootstraps distro bases with it)")
    if os.geteuid() != 0:
        raise UserError("make base runs debootstrap, which needs root: run `sudo make base`")


def _run_bounded(argv: list[str], env: Mapping[str, str] | None, limit: float | None, what: str,
                 platform: str | None) -> subprocess.CompletedProcess[str]:
    """Run `argv`; past `limit` seconds (an emulated step) it is killed and a UserError says so (overrun)."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=limit,
                              env=None if env is None else dict(env))
    except subprocess.TimeoutExpired:
        raise UserError(overrun(what, limit or 0, platform)) from None


def debootstrap_to_tar(argv: list[str], rootfs: Path, archive: Path, env: Mapping[str, str] | None,
                       log: Callable[[str], None], *, failed: str, hint: str, limit: float | None = None,
                       platform: str | None = None) -> None:
    """Run debootstrap `argv` into `rootfs`, drop apt's caches and pack the tree into `archive`. `limit`: seconds
    it may run (emulated: its second stage runs under qemu)."""
    log(f"  {' '.join(argv)}")
    proc = _run_bounded(argv, env, limit, "debootstrap", platform)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
        raise UserError(f"{failed}:\n{tail}\n{hint}", multiline=True)
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for item in (rootfs / junk).glob("*"):
            if item.is_file():
                item.unlink()
    with tarfile.open(archive, "w") as tar:
        tar.add(rootfs, arcname=".")


def bootstrap(client: Any, spec: ImageSpec, tag: str, log: Callable[[str], None]) -> float:
    """debootstrap + import; returns seconds. Needs root and debootstrap."""
    require_debootstrap()
    if host_platform() != "linux/amd64":
        raise UserError(f"{tag} is the linux/amd64 base, and this host is {host_platform()}: an import would label it "
                        f"{host_platform()}; bootstrap it with `make base PLATFORM=linux/amd64` (FROM scratch, emulated)")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="torchimages-base-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        archive = Path(tmp) / "rootfs.tar"
        argv = debootstrap_argv(arch="amd64", codename=spec.codename, mirror=spec.mirror, distro=spec.distro,
                                rootfs=rootfs)
        debootstrap_to_tar(argv, rootfs, archive, None, log,
                           failed=f"debootstrap of {spec.distro} ({spec.codename}) from {spec.mirror} failed",
                           hint="check that the mirror is reachable (http_proxy) or set the mirror in compat.yaml")
        repository, _, version = tag.rpartition(":")
        client.api.import_image_from_file(str(archive), repository=repository, tag=version,
                                          changes=['CMD ["/bin/bash"]', "ENV LANG=C.UTF-8"])
    return time.monotonic() - start


def make_bases(client: Any, specs: list[ImageSpec], force: bool, log: Callable[[str], None] = print,
               only_unreachable: bool = False) -> list[tuple[str, str, float]]:
    """(tag, outcome, seconds) per base the specs need. `only_unreachable`: leave alone the bases whose registry
    image is in the engine or pullable (what `make build` runs first, so a fresh offline machine just works)."""
    rows: list[tuple[str, str, float]] = []
    for tag, spec in bases_needed(specs).items():
        if image_exists(client, tag) and not force:
            rows.append((tag, "present", 0.0))
            continue
        if only_unreachable and (image_exists(client, spec.base_image) or registry_reachable(client, spec.base_image)):
            rows.append((spec.base_image, "registry", 0.0))
            continue
        log(f"bootstrapping {tag} ({spec.distro_name} {spec.codename}) from {spec.mirror} ...")
        rows.append((tag, "bootstrapped", bootstrap(client, spec, tag, log)))
    return rows


# ---- any platform: FROM scratch with --platform ----

def bootstrap_platform(cli_argv: tuple[str, ...], env: Mapping[str, str], target: Target, log: Log = print) -> float:
    """debootstrap for the target's architecture (emulated when foreign) and build its base tag FROM scratch."""
    require_debootstrap()
    platform, spec, tag = target.platform, target.spec, target.base_tag
    require_emulation(target, f"{platform} base on a {host_platform()} host")
    arch, mirror = target.arch, target.mirror
    limit = EMULATED_LIMIT_S if platform != host_platform() else None
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"torchimages-base-{arch}-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        context = Path(tmp) / "context"
        context.mkdir()
        debootstrap_to_tar(
            debootstrap_argv(arch=arch, codename=spec.codename, mirror=mirror, distro=spec.distro, rootfs=rootfs),
            rootfs, context / "rootfs.tar", env, log,
            failed=f"debootstrap --arch={arch} of {spec.distro} ({spec.codename}) from {mirror} failed",
            hint=f"check that the mirror serves {arch} and is reachable (http_proxy)", limit=limit, platform=platform)
        (context / "Dockerfile").write_text(scratch_dockerfile(), encoding="utf-8")
        build = [*cli_argv, "--platform", platform, "-t", tag, str(context)]
        log(f"  {' '.join(build)}")
        proc = _run_bounded(build, env, limit, f"building {tag} FROM scratch", platform)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
            raise UserError(f"building {tag} FROM scratch for {platform} failed:\n{tail}", multiline=True)
    return time.monotonic() - start


def image_arch(client: Any, ref: str) -> str | None:
    """The architecture an image's config declares (what `docker image inspect` shows); None when absent."""
    from docker.errors import ImageNotFound
    try:
        return str(client.images.get(ref).attrs.get("Architecture") or "") or None
    except ImageNotFound:
        return None


def check_arch(client: Any, ref: str, target: Target) -> None:
    """A UserError when `ref` exists but its config names another architecture (an import labelled amd64)."""
    found = image_arch(client, ref)
    if found is not None and found != target.arch:
        raise UserError(f"{ref} says architecture {found}, not {target.arch}: rebuild it with "
                        f"`make base PLATFORM={target.platform} FORCE=1`")


def base_targets(specs: list[ImageSpec], platform: str | None) -> list[Target]:
    """Every target whose base the selection needs: PLATFORM when given (only images built for it), else every
    platform of each image. Devel images start from NVIDIA's image: nothing to bootstrap."""
    return [t for spec in specs if spec.bootstrap_base for t in spec.every_target
            if platform is None or t.platform == platform]


def split_by_route(targets: list[Target], host: str) -> tuple[list[ImageSpec], list[Target]]:
    """(specs for `make_bases` — debootstrap + import, only for linux/amd64 on an amd64 host —, targets for
    `make_platform_bases`). An import labels the host's architecture and an arch-less debootstrap makes the
    host's, so on an arm64 host even the linux/amd64 base goes the platform way (tagged :latest, config amd64)."""
    imported = host == NATIVE_NAME
    native = [t.spec for t in targets if imported and t.platform == NATIVE_NAME]
    other = [t for t in targets if not (imported and t.platform == NATIVE_NAME)]
    return native, other


def make_platform_bases(client: Any, cli_argv: tuple[str, ...], env: Mapping[str, str], targets: list[Target], *,
                        force: bool, log: Log = print, only_unreachable: bool = False) -> list[tuple[str, str, float]]:
    """(tag, outcome, seconds) per base: torchimages-base/<distro>:latest[-<arch>], its config in that arch.
    `only_unreachable`: leave alone the bases whose registry image can be pulled (what `make build` runs first)."""
    rows: list[tuple[str, str, float]] = []
    done: set[str] = set()
    for target in targets:
        spec, tag = target.spec, target.base_tag
        if tag in done:
            continue
        done.add(tag)
        if image_exists(client, tag) and not force:
            check_arch(client, tag, target)
            rows.append((tag, "present", 0.0))
            continue
        if only_unreachable and not force and registry_reachable(client, spec.base_image):
            rows.append((spec.base_image, "registry", 0.0))
            continue
        log(f"bootstrapping {tag} ({spec.distro_name} {spec.codename}, {target.platform}) ...")
        seconds = bootstrap_platform(cli_argv, env, target, log=log)
        check_arch(client, tag, target)
        rows.append((tag, "bootstrapped", seconds))
    return rows


# ---- the base a build starts FROM ----

def resolve_base(client: Any, spec: ImageSpec, override: str | None = None) -> tuple[str, str]:
    """(base image to build from, why); a UserError naming `make base` when there is none."""
    if override:
        if not image_exists(client, override) and not registry_reachable(client, override):
            raise UserError(f"BASE_IMAGE={override} is neither in the engine nor pullable")
        return override, "BASE_IMAGE override"
    if image_exists(client, spec.base_image):
        return spec.base_image, "present in the engine"
    if spec.bootstrap_base and image_exists(client, spec.bootstrap_base):
        return spec.bootstrap_base, "bootstrapped locally by make base"
    if registry_reachable(client, spec.base_image):
        return spec.base_image, "pulled from the registry"
    if spec.bootstrap_base:
        raise UserError(f"{spec.tag}: base image {spec.base_image} is not in the engine and the registry cannot be "
                        f"reached; bootstrap it from the {spec.distro_name} mirror with `make base` "
                        f"(creates {spec.bootstrap_base})")
    raise UserError(f"{spec.tag}: base image {spec.base_image} is not in the engine and the registry cannot be "
                    f"reached; NVIDIA's devel images cannot be bootstrapped: `docker load` a saved copy of it "
                    f"(docker save {spec.base_image} on a connected host)")


def resolve_platform_base(client: Any, target: Target, override: str | None = None) -> tuple[str, str]:
    """(base to build a per-arch target FROM, why). The local amd64 copy of a registry base cannot serve: the
    local base of that architecture, else the registry's, else a UserError naming make base."""
    spec, platform = target.spec, target.platform
    if override:
        check_arch(client, override, target)
        return override, "BASE_IMAGE override"
    if spec.bootstrap_base:
        local = target.base_tag
        if image_arch(client, local) is not None:
            check_arch(client, local, target)
            return local, f"bootstrapped locally by make base PLATFORM={platform}"
    if registry_reachable(client, spec.base_image):
        return spec.base_image, f"the registry's {target.arch} variant"
    if spec.bootstrap_base:
        raise UserError(f"{spec.tag}: no {platform} base: the registry cannot be reached and "
                        f"{target.base_tag} does not exist; bootstrap it with "
                        f"`make base PLATFORM={platform} IMAGE={spec.tag}` (emulated on this host)")
    raise UserError(f"{spec.tag}: base image {spec.base_image} for {platform} is not reachable; `docker load` a saved "
                    f"{platform} copy and pass it as BASE_IMAGE=")


def base_for(client: Any, target: Target, override: str | None) -> tuple[str, str]:
    """(base, why) for one build target: its own architecture's base for a per-arch target, else the image's."""
    if target.per_arch:
        require_emulation(target, f"cannot build for {target.platform} here")
        return resolve_platform_base(client, target, override)
    return resolve_base(client, target.spec, override)
