"""`make lock`: images/<tag>/requirements.lock (linux/amd64) and requirements.<arch>.lock (each other platform of
the image), the complete hashed set an image installs, per Python and platform.

Resolved with `uv pip compile --generate-hashes` for the image's Python on <machine> manylinux_2_28, from PyPI plus the
local wheel folders (a torch build that exists only in a wheel folder, e.g. 2.13.0+cpu, is locked with the hash of
that file). The header records a digest of the spec's requirement inputs; `make check-render` compares it, so a
matrix change without `make lock` fails there. The build installs the lock with `--require-hashes`.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion

from .. import ROOT
from ..errors import UserError
from ..fsutil import atomic_write
from ..plan.platforms import NATIVE_NAME, is_lock_name, lock_name, machine_of
from ..plan.spec import ImageSpec
from .wheels import fits_python

# uv's --python-platform per image platform; manylinux_2_28 is what torch's wheels need on both
UV_PLATFORMS = {"linux/amd64": "x86_64-manylinux_2_28", "linux/arm64": "aarch64-manylinux_2_28"}
PLATFORM = UV_PLATFORMS[NATIVE_NAME]
DEFAULT_FOLDERS = ("/opt/wheels", "/opt/pypi-more/files")
DIGEST_LINE = "# input-digest: "
UNRESOLVED_LINE = "# UNRESOLVED: "
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def requirements(spec: ImageSpec) -> list[str]:
    """The top-level requirements of one image (what the matrix asks for), sorted after torch."""
    reqs = [spec.torch_requirement]
    if spec.torchvision:
        reqs.append(f"torchvision=={spec.torchvision}")
    reqs += [f"{name}=={version}" for name, version in sorted(spec.packages.items())]
    reqs += [f"{name}=={version}" for name, version in sorted(spec.access_packages.items())]   # e.g. jupyterlab
    return reqs


def uv_platform(platform: str) -> str:
    """uv's --python-platform for an image platform; a UserError for one no lock can be made for."""
    try:
        return UV_PLATFORMS[platform]
    except KeyError:
        raise UserError(f"cannot lock for {platform}: locks exist for {', '.join(UV_PLATFORMS)}; list only those under "
                        f"the image's `platforms:` in matrix.yaml, then `make render`") from None


def input_digest(spec: ImageSpec, platform: str = NATIVE_NAME) -> str:
    """sha256 over the package inputs of one platform of a spec only (requirements, Python, platform, torch index):
    a change elsewhere in the spec (ENV, labels, base image, a new image beside it) never stales the lock."""
    data = {"requirements": requirements(spec), "python": spec.python, "platform": uv_platform(platform),
            "torch_index_url": spec.torch_index_url or ""}
    return "sha256:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def lock_path(spec: ImageSpec, images: Path, platform: str = NATIVE_NAME) -> Path:
    """images/<tag>/requirements.lock for linux/amd64, images/<tag>/requirements.<arch>.lock for another platform."""
    return images / spec.tag / lock_name(platform)


def lock_label(spec: ImageSpec, platform: str) -> str:
    """images/<tag>/<lock file>, as messages name it."""
    return f"images/{spec.tag}/{lock_name(platform)}"


def canonical(name: str) -> str:
    return str(canonicalize_name(name))


class IndexUnreachable(UserError):
    """The torch index of a spec cannot be reached from here and no wheel folder replaces it."""


@dataclass(frozen=True)
class Pin:
    name: str        # canonical
    version: str
    hashes: tuple[str, ...]


def parse_lock(text: str) -> list[Pin]:
    """The pins of a lock (name==version and its --hash lines)."""
    pins: list[Pin] = []
    name: str | None = None
    version: str | None = None
    hashes: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip() if not raw.lstrip().startswith("--hash") else raw.strip()
        match = PIN.match(line)
        if match:
            if name:
                pins.append(Pin(name, version or "", tuple(hashes)))
            name, version, hashes = canonical(match.group(1)), match.group(2), []
        hashes += HASH.findall(line)
    if name:
        pins.append(Pin(name, version or "", tuple(hashes)))
    return pins


def header_digest(text: str) -> str | None:
    """The input digest a lock was resolved for (its header line), None when it has none."""
    for line in text.splitlines():
        if line.startswith(DIGEST_LINE):
            return line[len(DIGEST_LINE):].strip()
        if line and not line.startswith("#"):
            break
    return None


def lock_problem(spec: ImageSpec, images: Path, platform: str = NATIVE_NAME) -> str | None:
    """Why the lock of one platform of an image cannot be used as it is, or None when it is current."""
    path = lock_path(spec, images, platform)
    if not path.exists():
        return "missing"
    if not path.is_file():
        return "not a file (a folder or other non-file stands there: remove it)"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text (damaged: `make lock` rewrites it)"
    except OSError as exc:
        return f"unreadable ({exc.strerror}; check its permissions)"
    if header_digest(text) != input_digest(spec, platform):
        return "stale (matrix inputs changed since `make lock`)"
    if UNRESOLVED_LINE in text:
        return "unresolved: " + text.split(UNRESOLVED_LINE, 1)[1].splitlines()[0]
    if not any(p.name == "torch" for p in parse_lock(text)):
        return "incomplete (no torch pin)"
    return None


def lock_folders(wheels: tuple[Path, ...]) -> list[Path]:
    """Wheel folders used for locking: WHEELS (or PIP_FIND_LINKS's local folders) like the build, else the
    host's default ones where they exist."""
    if wheels:
        return list(wheels)
    return [Path(p) for p in DEFAULT_FOLDERS if os.path.isdir(p)]


def _wheel_name_version(filename: str) -> tuple[str, str] | None:
    """(canonical name, version as written) of a wheel file name; None for a name that is not a wheel's."""
    try:
        name, _, _, _ = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return str(name), filename.split("-")[1]


def wheel_fits(filename: str, python: str, machine: str = "x86_64") -> bool:
    """A wheel this image's Python on `machine` Linux can install: cpXY, abi3 or pure; manylinux <machine> or any."""
    try:
        _, _, _, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return False
    plat_ok = any(t.platform == "any" or (t.platform.endswith(machine) and "linux" in t.platform) for t in tags)
    return plat_ok and fits_python(tags, python)


def _torch_is_local(spec: ImageSpec, folders: list[Path], machine: str) -> bool:
    version = spec.torch_requirement.split("==", 1)[1]
    return any(_wheel_name_version(w.name) == ("torch", version) and wheel_fits(w.name, spec.python, machine)
               for folder in folders for w in folder.glob("torch-*.whl"))


def _link_folder(spec: ImageSpec, folders: list[Path], into: Path, machine: str) -> str:
    """One find-links folder of symlinks to the local wheels this image may use.

    A local-version build (torch 2.13.0+cpu) satisfies `torch==2.13.0` under PEP 440, so such wheels are left out
    unless the image's requirement names that exact local version."""
    wanted = {canonical(r.split("==")[0]): r.split("==")[1] for r in requirements(spec)}
    for folder in folders:
        for wheel in folder.glob("*.whl"):
            parsed = _wheel_name_version(wheel.name)
            if parsed is None:
                continue
            name, version = parsed
            if "+" in version and wanted.get(name) != version:
                continue
            if wheel_fits(wheel.name, spec.python, machine) and not (into / wheel.name).exists():
                (into / wheel.name).symlink_to(wheel.resolve())
    return str(into)


def _uv(explicit: str | None) -> str:
    for candidate in (explicit or "", shutil.which("uv") or "", str(Path(sys.executable).parent / "uv")):
        if candidate and os.path.isfile(candidate):
            return candidate
    raise UserError("uv not found: install it (`pip install uv`) or set UV=/path/to/uv")


def _index_reachable(url: str) -> bool:
    import urllib.request
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/torch/", timeout=10):
            return True
    except Exception:  # noqa: BLE001 - any failure means: cannot lock from it here
        return False


def compile_lock(spec: ImageSpec, folders: list[Path], previous: str | None = None, *,
                 env: Mapping[str, str], uv: str | None = None, platform: str = NATIVE_NAME) -> str:
    """The lock text for one platform of an image (header + uv's hashed output); a UserError when it cannot be
    resolved here.

    `previous` (the lock being refreshed) gives uv its pins as preferences, so unchanged inputs keep their pins."""
    reqs = requirements(spec)
    target, machine = uv_platform(platform), machine_of(platform)
    argv = [_uv(uv), "pip", "compile", "-", "--python-version", spec.python, "--python-platform", target,
            "--generate-hashes", "--no-header", "--index-strategy", "unsafe-best-match", "--quiet"]
    links = tempfile.TemporaryDirectory(prefix="torchimages-lock-")
    argv += ["--find-links", _link_folder(spec, folders, Path(links.name), machine)]
    sources = ["PyPI"] + [f"find-links {f}" for f in folders]
    local_build = "+" in spec.torch_requirement and _torch_is_local(spec, folders, machine)
    if spec.torch_index_url and not local_build:
        if not _index_reachable(spec.torch_index_url):
            raise IndexUnreachable(f"{spec.tag}: {spec.torch_requirement} comes from {spec.torch_index_url}, which is not "
                            f"reachable, and no wheel folder holds it; run `make lock IMAGE={spec.tag}` where that "
                            f"index is reachable, or put the torch wheel into WHEELS=<folder>")
        argv += ["--extra-index-url", spec.torch_index_url]
        sources.append(spec.torch_index_url)
    child = dict(env)
    if os.path.isfile(CA_BUNDLE) and not child.get("SSL_CERT_FILE"):
        child["SSL_CERT_FILE"] = CA_BUNDLE
    with links:
        out = Path(links.name) / "out.txt"
        if previous:
            out.write_text(previous, encoding="utf-8")
        proc = subprocess.run([*argv, "--output-file", str(out)], input="\n".join(reqs) + "\n", capture_output=True,
                              text=True, env=child, cwd=ROOT, timeout=600, check=False)
        body = out.read_text(encoding="utf-8") if proc.returncode == 0 else ""
    if proc.returncode != 0:
        detail = " ".join(proc.stderr.split())[:600]
        raise UserError(f"{spec.tag}: uv could not resolve {', '.join(reqs)} for Python {spec.python} on {target}: "
                        f"{detail}; fix the pins in matrix.yaml or the index/wheel folders")
    header = [
        f"# GENERATED by `make lock` for {spec.image} - DO NOT EDIT; run `make lock IMAGE={spec.tag}` to refresh.",
        f"{DIGEST_LINE}{input_digest(spec, platform)}",
        f"# python: {spec.python}  platform: {target}  resolver: uv pip compile --generate-hashes",
        "# requirements: " + " ".join(reqs),
        "# sources: " + ", ".join(s if not s.startswith("find-links") else "find-links <wheel folder>" for s in sources),
    ]
    text = "\n".join(header) + "\n" + body
    pins = parse_lock(text)
    missing = [p.name for p in pins if not p.hashes]
    if missing:
        raise UserError(f"{spec.tag}: uv produced pins without hashes ({', '.join(missing)}); not writing the lock")
    return text


def unresolved_stub(spec: ImageSpec, why: str, platform: str = NATIVE_NAME) -> str:
    """A lock that records why it could not be resolved here: current for check-render, refused by the build."""
    return (f"# GENERATED by `make lock` for {spec.image} - DO NOT EDIT; run `make lock IMAGE={spec.tag}` to refresh.\n"
            f"{DIGEST_LINE}{input_digest(spec, platform)}\n"
            f"{UNRESOLVED_LINE}{' '.join(why.split())}\n")


def write_atomic(path: Path, text: str) -> None:
    """The lock file, atomically, readable by everyone (the image copies it for its non-root user)."""
    atomic_write(path, text)
    os.chmod(path, 0o644)


def refresh(specs: list[ImageSpec], images: Path, folders: list[Path], *, env: Mapping[str, str],
            uv: str | None = None, force: bool = False, echo: Callable[[str], None] = print) -> list[str]:
    """Write the lock of every platform of every spec whose lock is missing or stale (all with force); returns the
    failures. A lock left from a platform the image no longer has is removed."""
    failures = []
    for spec, platform in [(one, platform) for one in specs for platform in one.platforms]:
        label = lock_label(spec, platform)
        problem = lock_problem(spec, images, platform)
        if problem is None and not force:
            echo(f"  {label}: current")
            continue
        path = lock_path(spec, images, platform)
        if path.exists() and not path.is_file():      # nothing to rewrite in place: a person must remove it
            failures.append(f"{label} is {problem}")
            echo(f"  {label}: FAILED ({problem})")
            continue
        try:
            previous = path.read_text(encoding="utf-8") if path.exists() and not force else None
        except (OSError, UnicodeDecodeError):     # a damaged lock gives uv no preferences; it is rewritten
            previous = None
        try:
            text = compile_lock(spec, folders, previous, env=env, uv=uv, platform=platform)
        except IndexUnreachable as exc:
            failures.append(str(exc))
            if problem == "missing" or (problem or "").startswith("stale"):
                write_atomic(path, unresolved_stub(spec, str(exc), platform))
            echo(f"  {label}: UNRESOLVED (index unreachable; stub written, builds refuse it)")
            continue
        except UserError as exc:
            failures.append(str(exc))
            echo(f"  {label}: FAILED")
            continue
        write_atomic(path, text)
        echo(f"  {label}: {len(parse_lock(text))} pins ({problem or 'refreshed'})")
    for spec in specs:
        for stray in stray_locks(spec, images):
            try:
                stray.unlink()
            except OSError as exc:
                failures.append(f"cannot remove {stray} ({exc.strerror}); remove it by hand")
                continue
            echo(f"  images/{spec.tag}/{stray.name}: removed (not a platform of {spec.tag} any more)")
    return failures


def stray_locks(spec: ImageSpec, images: Path) -> list[Path]:
    """Lock files under images/<tag>/ for a platform the image no longer has."""
    wanted = {lock_name(p) for p in spec.platforms}
    folder = images / spec.tag
    return sorted(p for p in folder.glob("*.lock") if is_lock_name(p.name) and p.name not in wanted and p.is_file()) \
        if folder.is_dir() else []


def stage_locked_wheels(spec: ImageSpec, lock_text: str, folders: list[Path], target: Path,
                        machine: str = "x86_64") -> tuple[list[str], bool]:
    """Hardlink into `target` the local wheels whose name, version and sha256 match the lock.

    Returns (staged file names, whether every pin is covered: then the build can run offline)."""
    pins = {p.name: p for p in parse_lock(lock_text)}
    covered: set[str] = set()
    staged = []
    target.mkdir(parents=True, exist_ok=True)
    for folder in folders:
        for wheel in sorted(folder.glob("*.whl")):
            parsed = _wheel_name_version(wheel.name)
            if parsed is None:
                continue
            name, version = parsed
            pin = pins.get(name)
            if not pin or pin.version != version or not wheel_fits(wheel.name, spec.python, machine) \
                    or name in covered:
                continue
            if sha256_file(wheel) not in pin.hashes:
                continue
            dest = target / wheel.name
            if not dest.exists():
                try:
                    os.link(wheel, dest)
                except OSError:
                    shutil.copy2(wheel, dest)
            covered.add(name)
            staged.append(wheel.name)
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


def check_locks(specs: list[ImageSpec], images: Path, warn: Callable[[str], None]) -> list[str]:
    """`check-render` lines for locks that are missing, stale or left from a dropped platform; an unresolved stub is
    only warned about."""
    problems = []
    for spec in specs:
        for platform in spec.platforms:
            problem = lock_problem(spec, images, platform)
            if problem is None:
                continue
            if problem.startswith("unresolved"):
                warn(f"warning: {lock_label(spec, platform)} is {problem[:160]}")
                continue
            problems.append(f"{spec.tag}/{lock_name(platform)} ({problem}; run `make lock IMAGE={spec.tag}`)")
        problems += [f"{spec.tag}/{p.name} (no platform of the image uses it; run `make lock IMAGE={spec.tag}`)"
                     for p in stray_locks(spec, images)]
    return problems


UV_VERSION = "0.13.9"      # must equal the uv wheel templates/partials/builder.j2 installs (a test checks)


def require_current_lock(spec: ImageSpec, images: Path, platform: str) -> None:
    """A UserError naming the problem when one platform's lock cannot be built from (missing, stale, unresolved...)."""
    uv_platform(platform)       # a platform no lock exists for (a hand-edited spec.json) is that, not "missing"
    problem = lock_problem(spec, images, platform)
    if problem:
        raise UserError(f"{spec.tag}: {lock_label(spec, platform)} is {problem}: run `make lock IMAGE={spec.tag}` "
                        f"(on a host that reaches the index) and commit it")


def stage_for_build(spec: ImageSpec, images: Path, folders: list[Path], target: Path,
                    uv_cache: Path, platform: str = NATIVE_NAME) -> tuple[list[str], bool]:
    """`make build`'s hook for one platform: refuse a missing/stale/unresolved lock; stage its locked wheels and
    uv's wheel for that machine.

    Returns (staged wheel names, offline): offline when the folders hold every locked wheel."""
    if platform not in spec.platforms:
        raise UserError(f"{spec.tag} is not built for {platform} (its platforms: {', '.join(spec.platforms)})")
    require_current_lock(spec, images, platform)
    machine = machine_of(platform)
    staged, covered = stage_locked_wheels(spec, lock_path(spec, images, platform).read_text(encoding="utf-8"),
                                          folders, target, machine)
    uv_wheel = find_uv_wheel(folders, uv_cache, machine)
    dest = target / uv_wheel.name
    if not dest.exists():
        shutil.copy2(uv_wheel, dest)
    staged.append(uv_wheel.name)
    return staged, covered


def fetch_platform_wheels(spec: ImageSpec, images: Path, platform: str, cache: Path, *,
                          env: Mapping[str, str]) -> Path:
    """Download the wheels of one platform's lock natively, every hash checked, into cache/wheels-<arch>, and return
    that folder. An emulated build then installs offline from it instead of downloading GBs under the emulator.
    Files already there are kept (pip reuses a file whose hash matches)."""
    require_current_lock(spec, images, platform)    # never GBs of downloads for a lock the build then refuses
    machine = machine_of(platform)
    target = cache / f"wheels-{machine}"
    # pip does not widen --platform to older manylinux tags as an installer on that machine would: list them
    platforms = [w for v in range(17, 29) for w in ("--platform", f"manylinux_2_{v}_{machine}")]
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--require-hashes",
            *platforms, "--platform", f"manylinux2014_{machine}", "--implementation", "cp", "--python-version", spec.python,
            "--progress-bar", "off", "--quiet", "-r", str(lock_path(spec, images, platform)), "-d", str(target)]
    if spec.torch_index_url:
        argv += ["--extra-index-url", spec.torch_index_url]
    child = dict(env)
    if os.path.isfile(CA_BUNDLE) and not child.get("PIP_CERT"):
        child["PIP_CERT"] = CA_BUNDLE
    try:
        target.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(argv, capture_output=True, text=True, env=child, timeout=1800, check=False)
    except OSError as exc:
        raise UserError(f"cannot fetch the {platform} wheels into {target} ({exc.strerror}); check free space and "
                        f"permissions of BUILD_DIR") from None
    except subprocess.TimeoutExpired:
        raise UserError(f"fetching the {platform} wheels of {spec.tag} took over 30 min; check the network, or put "
                        f"them into WHEELS=<folder>") from None
    if proc.returncode != 0:
        detail = " ".join((proc.stderr or proc.stdout).split())[-500:]
        raise UserError(f"cannot fetch the {platform} wheels of {lock_label(spec, platform)}: {detail}; check the "
                        f"network, or put the wheels into WHEELS=<folder>")
    return target


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
                        f"failed ({' '.join(proc.stderr.split()[-12:])}); put the uv wheel into WHEELS=<folder>")
    return found[0]
