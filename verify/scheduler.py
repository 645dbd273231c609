"""Where verify runs: the scheduler's job, step and node, the launcher, and remedies in the scheduler's words.

A user under Slurm cannot act on `docker run --gpus all`: they change `--gres`, `--container-mounts` or
`#SBATCH --exclusive`. The facts name the job, the step and the launcher (TORCHIMAGES_LAUNCHER, set by the
scripts `make slurm` writes), so a report says where it came from; TORCHIMAGES_T0 (the launcher's clock when
the step started) gives the container start time.
"""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any


def context(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """{"kind": "slurm" | "kubernetes" | None, "job", "step", "node", "launcher"}."""
    env = os.environ if env is None else env
    if env.get("SLURM_JOB_ID"):
        return {"kind": "slurm", "job": env.get("SLURM_JOB_ID"), "step": env.get("SLURM_STEP_ID"),
                "node": env.get("SLURMD_NODENAME") or env.get("SLURM_TOPOLOGY_ADDR"),
                "launcher": env.get("TORCHIMAGES_LAUNCHER")}
    if env.get("KUBERNETES_SERVICE_HOST"):
        return {"kind": "kubernetes", "job": env.get("JOB_NAME") or env.get("HOSTNAME"),
                "step": env.get("JOB_COMPLETION_INDEX"), "node": env.get("NODE_NAME"),
                "launcher": env.get("TORCHIMAGES_LAUNCHER") or "kubernetes"}
    return {"kind": None, "job": None, "step": None, "node": None, "launcher": env.get("TORCHIMAGES_LAUNCHER")}


def container_start_s(env: Mapping[str, str] | None = None, now: float | None = None) -> float | None:
    """Seconds from the launcher's TORCHIMAGES_T0 (epoch seconds) to now; None when unset or implausible."""
    env = os.environ if env is None else env
    try:
        t0 = float(env.get("TORCHIMAGES_T0", ""))
    except ValueError:
        return None
    elapsed = (time.time() if now is None else now) - t0
    return round(elapsed, 3) if 0 <= elapsed < 86400 else None


def pull_s(env: Mapping[str, str] | None = None) -> float | None:
    """Seconds the launcher spent pulling the image (TORCHIMAGES_PULL_S, set where a launcher pulls before it
    starts the container, e.g. `make slurm LAUNCHER=docker` from a registry); None when unset or implausible."""
    env = os.environ if env is None else env
    try:
        seconds = float(env.get("TORCHIMAGES_PULL_S", ""))
    except ValueError:
        return None
    return round(seconds, 3) if 0 <= seconds < 86400 else None      # NaN and inf fail both comparisons


# (phrase in a remedy, what a Slurm user does instead)
_SLURM = (
    ("`docker run --gpus all`", "`--gres=gpu:N` (or `--gpus-per-node=N`) in the job, and a launcher that passes "
                                "the GPUs in (pyxis does; `srun docker run` needs `--gpus device=$CUDA_VISIBLE_DEVICES`)"),
    ("`docker run --shm-size=2g ...` (or `--ipc=host`)", "a larger /dev/shm: pyxis mounts the node's (`--container-mounts="
                                                         "/dev/shm:/dev/shm`), `srun docker run` needs `--ipc=host` or "
                                                         "`--shm-size`"),
    ("`--shm-size=2g` or `--ipc=host`", "`--container-mounts=/dev/shm:/dev/shm` (pyxis) or `--ipc=host` (srun docker run)"),
    ("Request the GPUs in the job (`--gpus all`, nvidia.com/gpu, --gres=gpu:N)", "Request the GPUs in the job "
                                                                                 "(`#SBATCH --gres=gpu:N`)"),
    ("other processes on the GPU", "other jobs sharing the node (`#SBATCH --exclusive`)"),
)


def adapt_remedy(remedy: str | None, ctx: Mapping[str, Any]) -> str | None:
    """The remedy in the words of the scheduler the check ran under (Slurm); unchanged elsewhere."""
    if not remedy or ctx.get("kind") != "slurm":
        return remedy
    for phrase, slurm in _SLURM:
        remedy = remedy.replace(phrase, slurm)
    return remedy
