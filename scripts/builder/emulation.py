"""Running another CPU architecture's binaries here: qemu-user through binfmt_misc, and the verify container's
options for a target (its platform, and the engine's architecture for verify to tell emulation)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..plan.platforms import arch_of, host_platform, machine_of
from ..plan.spec import Target

BINFMT = Path("/proc/sys/fs/binfmt_misc")
INSTALL_HINT = ("install and register it: `apt-get install qemu-user-static binfmt-support` (Debian/Ubuntu; "
                "if {binfmt} is empty mount it first: `mount -t binfmt_misc binfmt_misc {binfmt}`), or "
                "`docker run --privileged --rm tonistiigi/binfmt --install {arch}` where a registry is reachable")
# One build or base bootstrap under qemu may take this long, then it is stopped with `overrun`'s message: an emulated
# step can hang rather than fail (the arm64 image's apt step once sat 37 min); a CI run must end, and say why.
EMULATED_LIMIT_S = 2700.0
MIN_QEMU = 8        # qemu-user 7.2 (Debian 12's) segfaults in `import torch` for aarch64; 10.0 runs the suite


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


def require_emulation(target: Target, doing: str) -> None:
    """A UserError naming the fix when `target`'s binaries cannot run here; `doing` says what needed them."""
    problem = emulation_problem(target.platform)
    if problem:
        raise UserError(f"{doing}: {problem}")


def verify_run_options(client: Any, target: Target) -> dict[str, Any]:
    """Extra containers.run options for verifying `target`: TORCHIMAGES_HOST_ARCH (the engine's architecture:
    verify compares it with uname -m to tell emulation) and, for a per-arch build, its platform."""
    host_arch = str(client.info().get("Architecture") or "")
    more: dict[str, Any] = {"environment": {"TORCHIMAGES_HOST_ARCH": host_arch}} if host_arch else {}
    if not target.per_arch:
        return more
    require_emulation(target, f"cannot verify {target.spec.tag} for {target.platform} here")
    return {**more, "platform": target.platform}


def overrun(what: str, limit: float, platform: str | None) -> str:
    """The one line for a step stopped at its time limit: what ran, the limit, the likely cause and the fixes."""
    where = f" for {platform} under emulation (qemu)" if platform else ""
    native = f", or build on a native {platform} machine" if platform else ""
    return (f"{what}{where} ran past its {limit:.0f} s limit and was stopped: a step hung or crawls (an apt or pip "
            f"download stalled, or a postinst is slow under qemu); see its log above, retry, or allow longer with "
            f"BUILD_TIMEOUT=<s>{native}")
