"""`make base PLATFORM=linux/arm64`: a distro base for another CPU architecture, bootstrapped under emulation.

debootstrap --arch=<arch> --variant=minbase runs the second stage through qemu-user (binfmt_misc) when the host
is another architecture. The rootfs then becomes an image whose config says that architecture: `docker import`
on this engine ignores --platform and labels everything amd64, so the image is built `FROM scratch` + `ADD
rootfs.tar /` with `--platform linux/<arch>` through a BuildKit client. Tag: torchimages-base/<distro>:latest-<arch>
(linux/amd64 keeps torchimages-base/<distro>:latest).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .errors import UserError
from .platforms import PlatformFacts, arch_of, host_platform

BINFMT = Path("/proc/sys/fs/binfmt_misc")
UBUNTU_KEYRING = "/usr/share/keyrings/ubuntu-archive-keyring.gpg"
INSTALL_HINT = ("install and register it: `apt-get install qemu-user-static binfmt-support` (Debian/Ubuntu; "
                "if {binfmt} is empty mount it first: `mount -t binfmt_misc binfmt_misc {binfmt}`), or "
                "`docker run --privileged --rm tonistiigi/binfmt --install {arch}` where a registry is reachable")


def emulation_problem(facts: PlatformFacts, binfmt: Path = BINFMT, host: str | None = None) -> str | None:
    """None when binaries of `facts` run here (natively or through a registered qemu-user handler with the F
    flag, which containers need), else one line with the cause and how to fix it."""
    if (host or host_platform()) == facts.name:
        return None
    hint = INSTALL_HINT.format(binfmt=binfmt, arch=facts.arch)
    if not (binfmt / "status").exists():
        return f"binfmt_misc is not mounted at {binfmt}, so {facts.machine} binaries cannot run on this host; {hint}"
    handler = binfmt / f"qemu-{facts.machine}"
    if not handler.exists():
        return f"no qemu-{facts.machine} handler is registered in {binfmt}; {hint}"
    text = handler.read_text(encoding="utf-8", errors="replace")
    if "enabled" not in text.splitlines()[:1]:
        return f"the qemu-{facts.machine} handler in {binfmt} is disabled: `echo 1 > {handler}`"
    flags = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("flags:")), "")
    if "F" not in flags:
        return (f"the qemu-{facts.machine} handler has no F (fix-binary) flag, so containers cannot find the "
                f"interpreter; re-register it with qemu-user-static's binfmt file (flags: F), {hint}")
    return None


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


def bootstrap_platform(cli_argv: tuple[str, ...], cli_env: dict[str, str], facts: PlatformFacts, *, distro: str,
                       codename: str, mirror: str, tag: str, log: Callable[[str], None] = print) -> float:
    """debootstrap for facts.arch (emulated when foreign) and build `tag` FROM scratch for facts.name."""
    if not shutil.which("debootstrap"):
        raise UserError("debootstrap not found: `apt-get install debootstrap` (make base bootstraps distro bases with it)")
    if os.geteuid() != 0:
        raise UserError("make base runs debootstrap, which needs root: run `sudo make base`")
    problem = emulation_problem(facts)
    if problem:
        raise UserError(f"{facts.name} base on a {host_platform()} host: {problem}")
    mirror = facts.mirrors.get(distro, mirror)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"torchimages-base-{facts.arch}-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        argv = debootstrap_argv(arch=facts.arch, codename=codename, mirror=mirror, distro=distro, rootfs=rootfs)
        log(f"  {' '.join(argv)}")
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
            raise UserError(f"debootstrap --arch={facts.arch} of {distro} ({codename}) from {mirror} failed:\n{tail}\n"
                            f"check that the mirror serves {facts.arch} and is reachable (http_proxy)")
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (rootfs / junk).glob("*"):
                if item.is_file():
                    item.unlink()
        context = Path(tmp) / "context"
        context.mkdir()
        with tarfile.open(context / "rootfs.tar", "w") as tar:
            tar.add(rootfs, arcname=".")
        (context / "Dockerfile").write_text(scratch_dockerfile(), encoding="utf-8")
        build = [*cli_argv, "--platform", facts.name, "-t", tag, str(context)]
        log(f"  {' '.join(build)}")
        proc = subprocess.run(build, capture_output=True, text=True, check=False, env={**os.environ, **cli_env})
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
            raise UserError(f"building {tag} FROM scratch for {facts.name} failed:\n{tail}")
    return time.monotonic() - start


def image_arch(client, ref: str) -> str | None:
    """The architecture an image's config declares (what `docker image inspect` shows)."""
    from docker.errors import ImageNotFound
    try:
        return str(client.images.get(ref).attrs.get("Architecture") or "") or None
    except ImageNotFound:
        return None


def check_arch(client, ref: str, platform: str) -> None:
    """A UserError when `ref` exists but its config names another architecture (an import labelled amd64)."""
    found = image_arch(client, ref)
    if found is not None and found != arch_of(platform):
        raise UserError(f"{ref} says architecture {found}, not {arch_of(platform)}: rebuild it with "
                        f"`make base PLATFORM={platform} FORCE=1`")


def base_pairs(specs: list, platform: str | None) -> list[tuple]:
    """(spec, platform) for every base the selection needs: PLATFORM when given (only images built for it),
    else every platform of each image. Devel images start from NVIDIA's image: nothing to bootstrap."""
    pairs = []
    for spec in specs:
        for p in spec.platforms:
            if spec.bootstrap_base and (platform is None or p == platform):
                pairs.append((spec, p))
    return pairs


def make_platform_bases(client, cli_argv: tuple[str, ...], cli_env: dict[str, str], pairs: list[tuple],
                        facts: dict[str, PlatformFacts], *, force: bool,
                        log: Callable[[str], None] = print) -> list[tuple[str, str, float]]:
    """(tag, outcome, seconds) per foreign-platform base: torchimages-base/<distro>:latest-<arch>."""
    from .engine import image_exists
    from .platforms import base_tag
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
        if platform not in facts:
            raise UserError(f"unknown platform {platform}; known: {', '.join(sorted(facts))}")
        log(f"bootstrapping {tag} ({spec.distro_name} {spec.codename}, {platform}) ...")
        seconds = bootstrap_platform(cli_argv, cli_env, facts[platform], distro=spec.distro, codename=spec.codename,
                                     mirror=spec.mirror, tag=tag, log=log)
        check_arch(client, tag, platform)
        rows.append((tag, "bootstrapped", seconds))
    return rows


def resolve_platform_base(client, spec, platform: str, override: str | None = None) -> tuple[str, str]:
    """(base to build `spec` FROM for a non-amd64 platform, why). The local amd64 copy of a registry base
    cannot serve: the local base of that architecture, else the registry's, else a UserError naming make base."""
    from .engine import registry_reachable
    from .platforms import base_tag
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


def platform_image(spec, platform: str | None) -> str:
    """The local tag a single-platform build produces: the image's tag for linux/amd64 (or no PLATFORM), with
    -<arch> appended for the others, so the arm64 build does not replace the amd64 one in a local engine.
    In a registry both are one tag: a manifest list (make push)."""
    if platform is None or platform == "linux/amd64":
        return str(spec.image)
    return f"{spec.image}-{arch_of(platform)}"


def platform_argv(cli_argv: tuple[str, ...], spec, platform: str | None) -> list[str]:
    """The client argv up to the build options: `-t` the per-platform local tag and `--platform`. PLATFORM=all
    with a buildx builder: one multi-platform build of every platform of the image into an OCI image index at
    build/oci/<tag>.tar (`--load` cannot hold a manifest list in a classic engine store)."""
    if platform and "," in platform:
        if "buildx" not in cli_argv:
            raise UserError(f"a multi-platform build of {spec.tag} ({platform}) needs a buildx builder "
                            f"(`docker buildx create --use`); the classic client builds one PLATFORM at a time")
        argv = [a for a in cli_argv if a != "--load"]
        return [*argv, "--platform", platform, "-t", str(spec.image),
                "--output", f"type=oci,dest=build/oci/{spec.tag}.tar"]
    argv = [*cli_argv, "-t", platform_image(spec, platform)]
    return argv + (["--platform", platform] if platform else [])


def build_platform(specs: list, requested: str | None) -> str | None:
    """PLATFORM for `make build`: None (the engine's default), one platform every selected image has, or `all`
    → the images' common platform list joined with commas (one multi-platform buildx build)."""
    from .platforms import requested_platform, select_platforms
    if requested and requested.strip() == "all":
        lists = {tuple(s.platforms) for s in specs}
        if len(lists) != 1:
            raise UserError("PLATFORM=all builds images with the same platforms together; the selected images differ: "
                            + "; ".join(f"{s.tag}: {', '.join(s.platforms)}" for s in specs) + " (build them one IMAGE at a time)")
        return ",".join(next(iter(lists)))
    platform = requested_platform(requested or "")
    if platform is not None:
        for spec in specs:
            select_platforms(list(spec.platforms), platform, spec.tag)
    return platform


def platform_run_options(client, spec, platform: str | None) -> tuple[str, str, dict]:
    """(local image, report name, extra containers.run options) for verifying `spec` on `platform`: the
    per-platform tag, reports/<tag>-<arch>.json, the platform and TORCHIMAGES_HOST_ARCH (the engine's
    architecture: verify compares it with uname -m to tell emulation)."""
    host_arch = str(client.info().get("Architecture") or "")
    more: dict = {"environment": {"TORCHIMAGES_HOST_ARCH": host_arch}} if host_arch else {}
    if platform is None or platform == "linux/amd64":
        return str(spec.image), str(spec.tag), more
    return platform_image(spec, platform), f"{spec.tag}-{arch_of(platform)}", {**more, "platform": platform}


def stage_platform_wheels(folders: list[Path], platform: str, python: str, target: Path, already: list[str]) -> list[str]:
    """For a build of another platform, every wheel of that architecture (or pure Python) in the local folders,
    dependencies included, so that the emulated pip installs from the folder instead of downloading and
    verifying TLS under emulation. The pinned wheels are already staged (`already`)."""
    from .platforms import PLATFORM_MACHINES
    machine = PLATFORM_MACHINES.get(platform)
    if machine is None:
        return []
    staged = []
    for folder in folders:
        for wheel in sorted(folder.glob("*.whl")):
            name = wheel.name
            if name in already or (target / name).exists():
                continue
            tag = name[:-4].split("-")[-1]
            abi_py = name[:-4].split("-")[-3]
            if not (tag == "any" or machine in tag):
                continue
            if not (abi_py.startswith("py") or f"cp{python.replace('.', '')}" in abi_py):
                continue
            try:
                os.link(wheel, target / name)
            except OSError:
                shutil.copy2(wheel, target / name)
            staged.append(name)
    return staged
