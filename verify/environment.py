"""The environment section of every report: versions torch reports, container and cgroup limits.

Run as `python -m verify.environment OUT.json` so that a crashing import cannot take the runner down.
"""
from __future__ import annotations

import json
import os
import platform
import re
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from . import scheduler


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def in_container() -> str | None:
    """'docker', 'podman', 'kubernetes', 'containerd' or None."""
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if Path("/.dockerenv").exists():
        return "docker"
    if Path("/run/.containerenv").exists():
        return "podman"
    try:
        cgroup = Path("/proc/1/cgroup").read_text()
    except OSError:
        return None
    for marker in ("kubepods", "docker", "containerd", "libpod"):
        if marker in cgroup:
            return marker
    return None


def cgroup_limits() -> dict[str, Any]:
    """CPU quota (cores) and memory limit (bytes) of this cgroup; None where unlimited or unknown."""
    limits: dict[str, Any] = {"cpus": None, "memory_bytes": None, "cgroup": None}
    root = Path("/sys/fs/cgroup")
    try:
        if (root / "cgroup.controllers").exists():
            limits["cgroup"] = "v2"
            quota_text, period_text = (root / "cpu.max").read_text().split()
            limits["cpus"] = None if quota_text == "max" else round(int(quota_text) / int(period_text), 2)
            mem_text = (root / "memory.max").read_text().strip()
            limits["memory_bytes"] = None if mem_text == "max" else int(mem_text)
        elif (root / "cpu").exists():
            limits["cgroup"] = "v1"
            quota = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
            period = int((root / "cpu" / "cpu.cfs_period_us").read_text())
            limits["cpus"] = None if quota <= 0 else round(quota / period, 2)
            mem = int((root / "memory" / "memory.limit_in_bytes").read_text())
            limits["memory_bytes"] = None if mem >= 1 << 62 else mem
    except (OSError, ValueError):
        pass
    return limits


_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
_CPUINFO_MARKERS = {"x86_64": ("vendor_id", "GenuineIntel", "AuthenticAMD"), "aarch64": ("CPU implementer",)}


# How much longer a step may take under CPU emulation (qemu-user) than natively: measured on the arm64 image, a 1 GiB
# /dev/shm allocation took over 60 s under qemu on a loaded 2-core host (natively under 1 s).
EMULATED_SLOWDOWN = 4.0


def stretched(seconds: float) -> float:
    """A step's time limit here: EMULATED_SLOWDOWN times `seconds` under CPU emulation, `seconds` natively."""
    return seconds * (EMULATED_SLOWDOWN if emulation()["emulated"] else 1.0)


def emulation(cpuinfo_path: str = "/proc/cpuinfo") -> dict[str, Any]:
    """This process's machine and whether it runs under CPU emulation (qemu-user through binfmt_misc).

    Two pieces of evidence, either enough: the host's architecture passed in by the runner
    (TORCHIMAGES_HOST_ARCH, `docker info` Architecture) differs from `uname -m`; or /proc/cpuinfo describes
    another architecture's CPU (qemu-user passes the host's file through: x86 `vendor_id` lines seen from an
    aarch64 process). A native Grace node has neither."""
    machine = platform.machine()
    mine = _ARCH.get(machine, machine)
    # `docker info` prints x86_64/aarch64; AMD64 or ARM64 (another tool's spelling) name the same machines, and a
    # value that is no machine name at all (spaces, non-ASCII) is no evidence: a false "emulated" reruns every hang
    host = os.environ.get("TORCHIMAGES_HOST_ARCH", "").strip().lower()
    if not re.fullmatch(r"[a-z0-9_]+", host):
        host = ""
    if host and _ARCH.get(host, host) != mine:
        return {"machine": machine, "emulated": True, "emulation_evidence": f"host architecture {host} (TORCHIMAGES_HOST_ARCH)"}
    try:
        cpuinfo = Path(cpuinfo_path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        cpuinfo = ""
    for arch, markers in _CPUINFO_MARKERS.items():
        if arch != mine and any(m in cpuinfo for m in markers) and not any(m in cpuinfo for m in _CPUINFO_MARKERS.get(mine, ())):
            return {"machine": machine, "emulated": True, "emulation_evidence": f"/proc/cpuinfo describes an {arch} CPU"}
    if mine == "aarch64" and re.search(r"^CPU implementer\s*:\s*0x0+\s*$", cpuinfo, re.MULTILINE):
        # qemu 8+ writes an aarch64 /proc/cpuinfo for its `max` CPU, implementer 0x00: Arm reserves that
        # code for software, so no silicon (Arm 0x41, NVIDIA 0x4e, Ampere 0xc0, ...) reports it
        return {"machine": machine, "emulated": True,
                "emulation_evidence": "/proc/cpuinfo CPU implementer 0x00 (a software CPU model, qemu's max)"}
    return {"machine": machine, "emulated": False, "emulation_evidence": None}


def _torch_facts() -> dict[str, Any]:
    start = time.monotonic()
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - any import failure is a fact to report
        return {"torch": None, "torch_error": f"{type(exc).__name__}: {exc}"}
    phases: dict[str, float | None] = {"import_torch": round(time.monotonic() - start, 3), "cuda_init": None}
    if torch.version.cuda:            # time to the first usable CUDA context: a slow driver or node shows here
        start = time.monotonic()
        try:
            if torch.cuda.is_available():
                torch.cuda.init()
                torch.zeros(1, device="cuda")
                phases["cuda_init"] = round(time.monotonic() - start, 3)
        except Exception:  # noqa: BLE001 - the gpu check diagnoses it
            pass
    facts: dict[str, Any] = {"torch": torch.__version__, "torch_build": "cuda" if torch.version.cuda else "cpu",
                             "cuda": torch.version.cuda, "cudnn": None, "nccl": None, "phases": phases}
    try:
        v = torch.backends.cudnn.version() if torch.version.cuda else None
        # 9.26.0 is reported as 92600 by cuDNN 9 (major*10000 + minor*100 + patch).
        facts["cudnn"] = f"{v // 10000}.{v % 10000 // 100}.{v % 100}" if v else None
    except Exception:  # noqa: BLE001 - libcudnn may fail to load without a driver
        facts["cudnn"] = None
    try:
        if torch.distributed.is_available() and torch.version.cuda:
            facts["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception:  # noqa: BLE001
        facts["nccl"] = None
    return facts


def _driver() -> str | None:
    try:
        import pynvml
        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
            return version.decode() if isinstance(version, bytes) else version
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no driver is a normal state on CPU hosts
        return None


def collect() -> dict[str, Any]:
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "hostname": platform.node(),
        "scheduler": scheduler.context(),
        **_torch_facts(),
        "torchvision": _dist_version("torchvision"),
        "torchdata": _dist_version("torchdata"),
        "pyarrow": _dist_version("pyarrow"),
        "h5py": _dist_version("h5py"),
        "hdf5": None,
        "numpy": _dist_version("numpy"),
        "nvidia_ml_py": _dist_version("nvidia-ml-py"),
        # The exact versions of the libraries the CUDA wheels bring (torch reports cuDNN in three parts).
        "cudnn_package": _dist_version("nvidia-cudnn-cu13") or _dist_version("nvidia-cudnn-cu12"),
        "nccl_package": _dist_version("nvidia-nccl-cu13") or _dist_version("nvidia-nccl-cu12"),
        "driver": _driver(),
        "container": in_container(),
        **cgroup_limits(),
        "cpu_count": os.cpu_count(),
        **emulation(),
    }
    try:
        import h5py
        env["hdf5"] = h5py.version.hdf5_version
    except Exception as exc:  # noqa: BLE001 - the hdf5 check diagnoses this
        env["hdf5_error"] = f"{type(exc).__name__}: {exc}"[:300]
    return env


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(collect()), encoding="utf-8")
