"""Staging a lock's wheels: the local wheels whose name, version and sha256 the lock pins, and uv's wheel, into the
folder the build mounts (hardlinks); an emulated build's wheels fetched natively first."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from ...errors import UserError
from ...pipnoise import quieted
from ...plan.platforms import machine_of
from ...plan.spec import Target
from ..wheels import wheel_fits, wheel_name_version
from .read import parse_lock, require_current_lock
from .resolve import CA_BUNDLE


def stage_locked_wheels(target: Target, lock_text: str, folders: list[Path], into: Path,
                        warn: Callable[[str], None] | None = None,
                        label: str = "the lock") -> tuple[list[str], bool]:
    """Hardlink into `into` the local wheels whose name, version and sha256 match the lock.

    A local wheel of a locked name and version whose sha256 the lock does not list is not staged, and `warn` says so
    (one line per wheel, unless another wheel covered that pin): the build then downloads the locked file.
    Returns (staged file names, whether every pin is covered: then the build can run offline)."""
    spec, machine = target.spec, machine_of(target.platform)
    pins = {p.name: p for p in parse_lock(lock_text)}
    covered: set[str] = set()
    mismatched: list[tuple[str, Path, str]] = []
    staged = []
    into.mkdir(parents=True, exist_ok=True)
    for folder in folders:
        for wheel in sorted(folder.glob("*.whl")):
            parsed = wheel_name_version(wheel.name)
            if parsed is None:
                continue
            name, version = parsed
            pin = pins.get(name)
            if not pin or pin.version != version or not wheel_fits(wheel.name, spec.python, machine) \
                    or name in covered:
                continue
            digest = sha256_file(wheel)
            if digest not in pin.hashes:
                mismatched.append((name, wheel, digest))
                continue
            dest = into / wheel.name
            if not dest.exists():
                try:
                    os.link(wheel, dest)
                except OSError:
                    shutil.copy2(wheel, dest)
            covered.add(name)
            staged.append(wheel.name)
    for name, wheel, digest in mismatched:
        if warn is not None and name not in covered:
            warn(f"warning: {wheel}: its sha256 {digest[:16]}... is not one of the hashes {label} pins for "
                 f"{name}=={pins[name].version}; not staged (the build fetches the locked file from the index, or "
                 f"fails offline); if this wheel is the one to build with, run `make lock IMAGE={spec.tag}`")
    return staged, covered == set(pins)


_HASH_CACHE: dict[tuple[str, int, float], str] = {}


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file (cached by path, size and mtime: the wheel folders hold GBs)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime)
    if key not in _HASH_CACHE:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        _HASH_CACHE[key] = digest.hexdigest()
    return _HASH_CACHE[key]



UV_VERSION = "0.13.9"      # must equal the uv wheel templates/partials/builder.j2 installs (a test checks)


def stage_for_build(target: Target, images: Path, folders: list[Path], into: Path, uv_cache: Path,
                    warn: Callable[[str], None] | None = None) -> tuple[list[str], bool]:
    """`make build`'s hook for one platform: refuse a missing/stale/unresolved lock; stage its locked wheels and
    uv's wheel for that machine.

    Returns (staged wheel names, offline): offline when the folders hold every locked wheel."""
    spec, platform = target.spec, target.platform
    if platform not in spec.platforms:
        raise UserError(f"{spec.tag} is not built for {platform} (its platforms: {', '.join(spec.platforms)})")
    require_current_lock(target, images)
    staged, covered = stage_locked_wheels(target, target.lock_path(images).read_text(encoding="utf-8"),
                                          folders, into, warn=warn, label=target.lock_label)
    staged.append(stage_uv_wheel(folders, uv_cache, machine_of(platform), into))
    return staged, covered


def stage_uv_wheel(folders: list[Path], uv_cache: Path, machine: str, into: Path) -> str:
    """uv's pinned wheel for `machine` into the build's wheel folder (a cross build needs the builder's too)."""
    uv_wheel = find_uv_wheel(folders, uv_cache, machine)
    dest = into / uv_wheel.name
    if not dest.exists():
        shutil.copy2(uv_wheel, dest)
    return uv_wheel.name


def fetch_platform_wheels(target: Target, images: Path, cache: Path, *,
                          env: Mapping[str, str]) -> Path:
    """Download the wheels of one platform's lock natively, every hash checked, into cache/wheels-<arch>, and return
    that folder. An emulated build then installs offline from it instead of downloading GBs under the emulator.
    Files already there are kept (pip reuses a file whose hash matches)."""
    require_current_lock(target, images)    # never GBs of downloads for a lock the build then refuses
    spec, platform = target.spec, target.platform
    machine = machine_of(platform)
    folder = cache / f"wheels-{machine}"
    # pip does not widen --platform to older manylinux tags as an installer on that machine would: list them
    platforms = [w for v in range(17, 29) for w in ("--platform", f"manylinux_2_{v}_{machine}")]
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--require-hashes",
            *platforms, "--platform", f"manylinux2014_{machine}", "--implementation", "cp", "--python-version", spec.python,
            "--progress-bar", "off", "--quiet", "-r", str(target.lock_path(images)), "-d", str(folder)]
    if spec.torch_index_url:
        argv += ["--extra-index-url", spec.torch_index_url]
    child = dict(env)
    if os.path.isfile(CA_BUNDLE) and not child.get("PIP_CERT"):
        child["PIP_CERT"] = CA_BUNDLE
    try:
        folder.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(argv, capture_output=True, text=True, env=child, timeout=1800, check=False)
    except OSError as exc:
        raise UserError(f"cannot fetch the {platform} wheels into {folder} ({exc.strerror}); check free space and "
                        f"permissions of BUILD_DIR") from None
    except subprocess.TimeoutExpired:
        raise UserError(f"fetching the {platform} wheels of {spec.tag} took over 30 min; check the network, or put "
                        f"them into WHEELS=<folder>") from None
    if proc.returncode != 0:
        detail = " ".join(quieted(proc.stderr or proc.stdout).split())[-500:]
        raise UserError(f"cannot fetch the {platform} wheels of {target.lock_label}: {detail}; check the "
                        f"network, or put the wheels into WHEELS=<folder>")
    return folder


def find_uv_wheel(folders: list[Path], uv_cache: Path, machine: str = "x86_64") -> Path:
    """The uv wheel for `machine` the Dockerfile installs uv from: a wheel folder's, else one downloaded once into
    uv_cache (BUILD_DIR/cache/uv)."""
    def ours(wheel: Path) -> bool:
        return "manylinux" in wheel.name and wheel.name.endswith(f"_{machine}.whl")

    for folder in [*folders, uv_cache]:
        for wheel in sorted(folder.glob(f"uv-{UV_VERSION}-*.whl")):
            if ours(wheel):
                return wheel
    try:
        uv_cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {uv_cache} ({exc.strerror}); point BUILD_DIR at a writable folder") from None
    proc = subprocess.run([sys.executable, "-m", "pip", "download", f"uv=={UV_VERSION}", "--no-deps", "--only-binary",
                           ":all:", "--platform", f"manylinux_2_17_{machine}", "-d", str(uv_cache)],
                          capture_output=True, text=True, timeout=300, check=False)
    found = [w for w in sorted(uv_cache.glob(f"uv-{UV_VERSION}-*.whl")) if ours(w)]
    if proc.returncode != 0 or not found:
        raise UserError(f"no uv {UV_VERSION} wheel for {machine}: none in the wheel folders and `pip download uv=={UV_VERSION}` "
                        f"failed ({' '.join(quieted(proc.stderr).split()[-12:])}); put the uv wheel into WHEELS=<folder>")
    return found[0]
