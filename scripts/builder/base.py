"""`make base`: bootstrap the distro bases the matrix needs from the distribution's mirror, offline-capable.

debootstrap --arch=amd64 --variant=minbase into a folder, then import it into the engine as
torchimages-base/<distro>:latest. `make build` uses that tag when the registry base (debian:bookworm-slim, ...) is
neither present nor pullable. This path is linux/amd64 on an amd64 host only: `docker import` labels the engine's
architecture, so every other (platform, host) pair goes through builder.base_platform (FROM scratch, --platform).
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
from ..plan.platforms import host_platform
from ..plan.spec import ImageSpec
from .engine import image_exists, registry_reachable

UBUNTU_KEYRING = "/usr/share/keyrings/ubuntu-archive-keyring.gpg"


def bases_needed(specs: list[ImageSpec]) -> dict[str, ImageSpec]:
    """bootstrap tag → one spec that needs it (devel images start from NVIDIA's image: nothing to bootstrap)."""
    needed: dict[str, ImageSpec] = {}
    for spec in specs:
        if spec.bootstrap_base:
            needed.setdefault(spec.bootstrap_base, spec)
    return needed


def _debootstrap_argv(spec: ImageSpec, rootfs: Path) -> list[str]:
    argv = ["debootstrap", "--arch=amd64", "--variant=minbase"]
    if spec.distro.startswith("ubuntu"):
        if not Path(UBUNTU_KEYRING).exists():
            raise UserError(f"bootstrapping {spec.distro} needs Ubuntu's archive keyring: `apt-get install ubuntu-keyring`")
        argv += [f"--keyring={UBUNTU_KEYRING}", "--components=main,universe"]
    return argv + [spec.codename, str(rootfs), spec.mirror]


def require_debootstrap() -> None:
    """A UserError naming the fix when debootstrap cannot run here (missing, or not root)."""
    if not shutil.which("debootstrap"):
        raise UserError("debootstrap not found: `apt-get install debootstrap` (make base bootstraps distro bases with it)")
    if os.geteuid() != 0:
        raise UserError("make base runs debootstrap, which needs root: run `sudo make base`")


def debootstrap_to_tar(argv: list[str], rootfs: Path, archive: Path, env: Mapping[str, str] | None,
                       log: Callable[[str], None], *, failed: str, hint: str) -> None:
    """Run debootstrap `argv` into `rootfs`, drop apt's caches and pack the tree into `archive`."""
    log(f"  {' '.join(argv)}")
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env=None if env is None else dict(env))
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
        debootstrap_to_tar(_debootstrap_argv(spec, rootfs), rootfs, archive, None, log,
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
