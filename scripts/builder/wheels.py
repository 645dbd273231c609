"""Local wheels: the ones an image pins, staged into build/wheels (bind-mounted into the install step)."""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from packaging.requirements import Requirement
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from ..errors import UserError
from ..plan.spec import ImageSpec
from ..versions import version_key


def exact_pin(requirement: str) -> tuple[str, str]:
    """(canonical name, version as written) of an exact `name==version` requirement (the matrix writes only those)."""
    req = Requirement(requirement)
    (pin,) = req.specifier
    return str(canonicalize_name(req.name)), pin.version


def pins(spec: ImageSpec) -> dict[str, Version]:
    """Distribution name (canonical) → the exact version the image installs."""
    wanted = {"torch": exact_pin(spec.torch_requirement)[1], **spec.packages, **spec.access_packages}
    if spec.torchvision:
        wanted["torchvision"] = spec.torchvision
    return {canonicalize_name(name): Version(version) for name, version in wanted.items()}


def fits_python(tags: frozenset[Tag], python: str) -> bool:
    """A CPython wheel for this Python (cpXY or abi3 from an older one), or a pure-Python one."""
    want = f"cp{python.replace('.', '')}"
    minor = version_key(python)[1]
    for tag in tags:
        if tag.interpreter == want or tag.interpreter in {"py3", f"py{python.replace('.', '')}"}:
            return True
        if tag.abi == "abi3" and tag.interpreter.startswith("cp3") and int(tag.interpreter[3:] or 99) <= minor:
            return True
    return False


def fits_machine(tags: frozenset[Tag], machine: str | None) -> bool:
    """A wheel for this CPU (uname -m, e.g. aarch64) or a pure one; any wheel when machine is None."""
    return machine is None or any(t.platform == "any" or t.platform.endswith(machine) for t in tags)


def wheel_name_version(filename: str) -> tuple[str, str] | None:
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


def matching_wheels(spec: ImageSpec, folders: list[Path], machine: str | None = None) -> list[Path]:
    wanted = pins(spec)
    found = []
    for folder in folders:
        for wheel in sorted(folder.glob("*.whl")):
            try:
                name, version, _, tags = parse_wheel_filename(wheel.name)
            except (InvalidWheelFilename, InvalidVersion):
                continue
            if wanted.get(name) == version and fits_python(tags, spec.python) and fits_machine(tags, machine):
                found.append(wheel)
    return found


def stage_wheels(spec: ImageSpec, folders: list[Path], target: Path, platform: str | None = None) -> list[str]:
    """Put the wheels the image pins (from the local folders) into `target`; hardlinks where possible. With a
    platform, only that architecture's wheels (and pure ones)."""
    from ..plan.platforms import machine_of
    machine = machine_of(platform) if platform else None
    try:
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        staged = []
        for wheel in matching_wheels(spec, folders, machine):
            dest = target / wheel.name
            try:
                os.link(wheel, dest)
            except OSError:
                shutil.copy2(wheel, dest)
            staged.append(wheel.name)
    except OSError as exc:
        raise UserError(f"cannot stage wheels into {target} ({exc.strerror}); check free space and permissions") from None
    return staged


@contextmanager
def stage_turn(stage: Path, echo: Callable[[str], None]) -> Iterator[None]:
    """Hold the checkout's wheel stage for one build (an flock beside it, released by the kernel if the process
    dies); a second build of the checkout says that it waits, and waits."""
    import fcntl
    try:
        stage.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(stage.parent / f".{stage.name}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise UserError(f"cannot lock the wheel stage {stage} ({exc.strerror}); check free space and "
                        "permissions of its folder") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            echo(f"==> another build of this checkout holds {stage} (its wheels); waiting for it to finish")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
