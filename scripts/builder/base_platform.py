"""`make base PLATFORM=linux/arm64`: a distro base for a CPU architecture, bootstrapped natively or under emulation.

debootstrap --arch=<arch> --variant=minbase runs the second stage through qemu-user (binfmt_misc) when the host
is another architecture. The rootfs then becomes an image whose config says that architecture: `docker import`
on this engine ignores --platform and labels everything with the engine's architecture, so the image is built
`FROM scratch` + `ADD rootfs.tar /` with `--platform linux/<arch>` through a BuildKit client. The tag follows the
platform, never the host (`plan.platforms.base_tag`): torchimages-base/<distro>:latest for linux/amd64,
torchimages-base/<distro>:latest-<arch> for the others. `builder.base` (debootstrap + import) only runs for
linux/amd64 on an amd64 host; every other (platform, host) pair comes here.

The per-platform pieces of `make build` and `make verify` live here too: the local image tag of a platform, the
client argv, the base of a platform, the wheels of an architecture, and the verify container's options.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..plan.platforms import NATIVE_NAME, arch_of, base_tag, host_platform, machine_of, select_platforms
from ..plan.spec import ImageSpec
from .base import debootstrap_to_tar, require_debootstrap
from .engine import image_exists, registry_reachable

BINFMT = Path("/proc/sys/fs/binfmt_misc")
UBUNTU_KEYRING = "/usr/share/keyrings/ubuntu-archive-keyring.gpg"
INSTALL_HINT = ("install and register it: `apt-get install qemu-user-static binfmt-support` (Debian/Ubuntu; "
                "if {binfmt} is empty mount it first: `mount -t binfmt_misc binfmt_misc {binfmt}`), or "
                "`docker run --privileged --rm tonistiigi/binfmt --install {arch}` where a registry is reachable")
MIN_QEMU = 8        # qemu-user 7.2 (Debian 12's) segfaults in `import torch` for aarch64; 10.0 runs the suite
Log = Callable[[str], None]


def emulation_problem(platform: str, binfmt: Path = BINFMT, host: str | None = None) -> str | None:
    """None when binaries of `platform` run here (natively or through a registered qemu-user handler with the F
    flag, which containers need), else one line with the cause and how to fix it."""
    if (host or host_platform()) == platform:
        return None
    arch, machine = arch_of(platform), machine_of(platform)
    hint = INSTALL_HINT.format(binfmt=binfmt, arch=arch)
    if not (binfmt / "status").exists():
        return f"binfmt_misc is not mounted at {binfmt}, so {machine} binaries cannot run on this host; {hint}"
    handler = binfmt / f"qemu-{machine}"
    if not handler.exists():
        return f"no qemu-{machine} handler is registered in {binfmt}; {hint}"
    text = handler.read_text(encoding="utf-8", errors="replace")
    if "enabled" not in text.splitlines()[:1]:
        return f"the qemu-{machine} handler in {binfmt} is disabled: `echo 1 > {handler}`"
    flags = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("flags:")), "")
    if "F" not in flags:
        return (f"the qemu-{machine} handler has no F (fix-binary) flag, so containers cannot find the "
                f"interpreter; re-register it with qemu-user-static's binfmt file (flags: F), {hint}")
    interpreter = next((line.split(" ", 1)[1].strip() for line in text.splitlines()
                        if line.startswith("interpreter ")), "")
    major = qemu_major(interpreter) if interpreter else None
    if major is not None and major < MIN_QEMU:
        return (f"{interpreter} is qemu {major}: torch's {machine} build crashes on import (SIGSEGV) under qemu "
                f"before {MIN_QEMU}; install qemu-user-static {MIN_QEMU}+ (Debian 12: `apt-get install -t "
                f"bookworm-backports qemu-user-static`) and re-register it, or run `scripts/bootstrap.sh test-tools` "
                f"as root, which does both")
    return None


def qemu_major(interpreter: str) -> int | None:
    """The major version `<interpreter> --version` reports (qemu-aarch64 version 10.0.2 → 10); None when unknown.
    The F flag pins the binary registered at registration time, so a later upgrade needs a re-registration too
    (scripts/bootstrap.sh test-tools does it). Debian registers /usr/libexec/qemu-binfmt/<arch>-binfmt-P, a link
    that refuses to run outside binfmt_misc: the link's target is asked instead."""
    try:
        proc = subprocess.run([os.path.realpath(interpreter), "--version"], capture_output=True, text=True,
                              errors="replace", timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"version (\d+)\.", proc.stdout)
    return int(match.group(1)) if match else None


def debootstrap_argv(*, arch: str, codename: str, mirror: str, distro: str, rootfs: Path) -> list[str]:
    argv = ["debootstrap", f"--arch={arch}", "--variant=minbase"]
    if distro.startswith("ubuntu"):
        if not Path(UBUNTU_KEYRING).exists():
            raise UserError(f"bootstrapping {distro} needs Ubuntu's archive keyring: `apt-get install ubuntu-keyring`")
        argv += [f"--keyring={UBUNTU_KEYRING}", "--components=main,universe"]
    return argv + [codename, str(rootfs), mirror]


def scratch_dockerfile() -> str:
    return ("FROM scratch\n"
            "ADD rootfs.tar /\n"
            "ENV LANG=C.UTF-8\n"
            'CMD ["/bin/bash"]\n')


def mirror_for(spec: ImageSpec, platform: str) -> str:
    """The distro mirror that serves `platform` (Ubuntu's ports archive for arm64), from spec.json."""
    return spec.platform_mirrors.get(platform, spec.mirror)


def bootstrap_platform(cli_argv: tuple[str, ...], env: Mapping[str, str], spec: ImageSpec, platform: str, tag: str,
                       log: Log = print) -> float:
    """debootstrap for the platform's architecture (emulated when foreign) and build `tag` FROM scratch for it."""
    require_debootstrap()
    problem = emulation_problem(platform)
    if problem:
        raise UserError(f"{platform} base on a {host_platform()} host: {problem}")
    arch, mirror = arch_of(platform), mirror_for(spec, platform)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"torchimages-base-{arch}-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        context = Path(tmp) / "context"
        context.mkdir()
        debootstrap_to_tar(
            debootstrap_argv(arch=arch, codename=spec.codename, mirror=mirror, distro=spec.distro, rootfs=rootfs),
            rootfs, context / "rootfs.tar", env, log,
            failed=f"debootstrap --arch={arch} of {spec.distro} ({spec.codename}) from {mirror} failed",
            hint=f"check that the mirror serves {arch} and is reachable (http_proxy)")
        (context / "Dockerfile").write_text(scratch_dockerfile(), encoding="utf-8")
        build = [*cli_argv, "--platform", platform, "-t", tag, str(context)]
        log(f"  {' '.join(build)}")
        proc = subprocess.run(build, capture_output=True, text=True, check=False, env=dict(env))
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


def check_arch(client: Any, ref: str, platform: str) -> None:
    """A UserError when `ref` exists but its config names another architecture (an import labelled amd64)."""
    found = image_arch(client, ref)
    if found is not None and found != arch_of(platform):
        raise UserError(f"{ref} says architecture {found}, not {arch_of(platform)}: rebuild it with "
                        f"`make base PLATFORM={platform} FORCE=1`")


def base_pairs(specs: list[ImageSpec], platform: str | None) -> list[tuple[ImageSpec, str]]:
    """(spec, platform) for every base the selection needs: PLATFORM when given (only images built for it),
    else every platform of each image. Devel images start from NVIDIA's image: nothing to bootstrap."""
    return [(spec, p) for spec in specs for p in spec.platforms
            if spec.bootstrap_base and (platform is None or p == platform)]


def split_by_route(pairs: list[tuple[ImageSpec, str]], host: str) -> tuple[list[ImageSpec], list[tuple[ImageSpec, str]]]:
    """(specs for `builder.base` — debootstrap + import, only for linux/amd64 on an amd64 host —, pairs for
    `make_platform_bases`). An import labels the host's architecture and an arch-less debootstrap makes the
    host's, so on an arm64 host even the linux/amd64 base goes the platform way (tagged :latest, config amd64)."""
    native = [s for s, p in pairs if p == NATIVE_NAME and host == NATIVE_NAME]
    other = [(s, p) for s, p in pairs if not (p == NATIVE_NAME and host == NATIVE_NAME)]
    return native, other


def make_platform_bases(client: Any, cli_argv: tuple[str, ...], env: Mapping[str, str],
                        pairs: list[tuple[ImageSpec, str]], *, force: bool, log: Log = print,
                        only_unreachable: bool = False) -> list[tuple[str, str, float]]:
    """(tag, outcome, seconds) per base: torchimages-base/<distro>:latest[-<arch>], its config in that arch.
    `only_unreachable`: leave alone the bases whose registry image can be pulled (what `make build` runs first)."""
    rows: list[tuple[str, str, float]] = []
    done: set[str] = set()
    for spec, platform in pairs:
        tag = base_tag(spec.distro, platform)
        if tag in done:
            continue
        done.add(tag)
        if image_exists(client, tag) and not force:
            check_arch(client, tag, platform)
            rows.append((tag, "present", 0.0))
            continue
        if only_unreachable and not force and registry_reachable(client, spec.base_image):
            rows.append((spec.base_image, "registry", 0.0))
            continue
        log(f"bootstrapping {tag} ({spec.distro_name} {spec.codename}, {platform}) ...")
        seconds = bootstrap_platform(cli_argv, env, spec, platform, tag, log=log)
        check_arch(client, tag, platform)
        rows.append((tag, "bootstrapped", seconds))
    return rows


def resolve_platform_base(client: Any, spec: ImageSpec, platform: str, override: str | None = None) -> tuple[str, str]:
    """(base to build `spec` FROM for a non-amd64 platform, why). The local amd64 copy of a registry base
    cannot serve: the local base of that architecture, else the registry's, else a UserError naming make base."""
    if override:
        check_arch(client, override, platform)
        return override, "BASE_IMAGE override"
    if spec.bootstrap_base:
        local = base_tag(spec.distro, platform)
        if image_arch(client, local) is not None:
            check_arch(client, local, platform)
            return local, f"bootstrapped locally by make base PLATFORM={platform}"
    if registry_reachable(client, spec.base_image):
        return spec.base_image, f"the registry's {arch_of(platform)} variant"
    if spec.bootstrap_base:
        raise UserError(f"{spec.tag}: no {platform} base: the registry cannot be reached and "
                        f"{base_tag(spec.distro, platform)} does not exist; bootstrap it with "
                        f"`make base PLATFORM={platform} IMAGE={spec.tag}` (emulated on this host)")
    raise UserError(f"{spec.tag}: base image {spec.base_image} for {platform} is not reachable; `docker load` a saved "
                    f"{platform} copy and pass it as BASE_IMAGE=")


def platform_image(spec: ImageSpec, platform: str | None) -> str:
    """The local tag a single-platform build produces: the image's tag for linux/amd64 (or no PLATFORM), with
    -<arch> appended for the others, so the arm64 build does not replace the amd64 one in a local engine.
    In a registry both are one tag: a manifest list (the workflow's merge job)."""
    if platform is None or platform == NATIVE_NAME:
        return spec.image
    return f"{spec.image}-{arch_of(platform)}"


def platform_argv(cli_argv: tuple[str, ...], spec: ImageSpec, platform: str | None, build_dir: Path) -> list[str]:
    """The client argv up to the build options: `-t` the per-platform local tag and `--platform`. A comma list
    (PLATFORM=all) with a buildx builder: one multi-platform build into an OCI image index at
    <build_dir>/oci/<tag>.tar (`--load` cannot hold a manifest list in a classic engine store)."""
    if platform and "," in platform:
        if "buildx" not in cli_argv:
            raise UserError(f"a multi-platform build of {spec.tag} ({platform}) needs a buildx builder "
                            f"(`docker buildx create --use`); the classic client builds one PLATFORM at a time")
        argv = [a for a in cli_argv if a != "--load"]
        return [*argv, "--platform", platform, "-t", spec.image,
                "--output", f"type=oci,dest={build_dir / 'oci' / (spec.tag + '.tar')}"]
    argv = [*cli_argv, "-t", platform_image(spec, platform)]
    return argv + (["--platform", platform] if platform else [])


def build_platform(specs: list[ImageSpec], requested: str | None) -> str | None:
    """PLATFORM for `make build` (already checked by Settings): None (the engine's default), one platform every
    selected image has, or `all` → the images' common platform list joined with commas (one buildx build)."""
    if requested == "all":
        lists = {tuple(s.platforms) for s in specs}
        if len(lists) != 1:
            raise UserError("PLATFORM=all builds images with the same platforms together; the selected images differ: "
                            + "; ".join(f"{s.tag}: {', '.join(s.platforms)}" for s in specs)
                            + " (build them one IMAGE at a time)")
        return ",".join(next(iter(lists)))
    if requested is not None:
        for spec in specs:
            select_platforms(list(spec.platforms), requested, spec.tag)
    return requested


def platform_run_options(client: Any, spec: ImageSpec, platform: str | None) -> tuple[str, str, dict[str, Any]]:
    """(local image, report name, extra containers.run options) for verifying `spec` on `platform`: the
    per-platform tag, reports/<tag>-<arch>.json, the platform and TORCHIMAGES_HOST_ARCH (the engine's
    architecture: verify compares it with uname -m to tell emulation)."""
    host_arch = str(client.info().get("Architecture") or "")
    more: dict[str, Any] = {"environment": {"TORCHIMAGES_HOST_ARCH": host_arch}} if host_arch else {}
    if platform is None or platform == NATIVE_NAME:
        return spec.image, spec.tag, more
    problem = emulation_problem(platform)
    if problem:
        raise UserError(f"cannot verify {spec.tag} for {platform} here: {problem}")
    return platform_image(spec, platform), f"{spec.tag}-{arch_of(platform)}", {**more, "platform": platform}
