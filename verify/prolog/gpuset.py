"""The GPUs a run's preflight saw, kept in the history so that a hang streak ends only at a run that saw them.

As a job's first step the preflight sees the job's GPUs alone (Slurm's device cgroup, CUDA_VISIBLE_DEVICES): on a
node shared by jobs (gres/gpu per job), the job on GPUs 0-3 whose preflight hung on a stuck GPU 2, then another job's
pass on GPUs 4-7, then a hang on 0-3 again... was "1 of 3" for ever: a pass that tested none of the stuck GPU ended
the streak (NVSentinel's checker rule counts the checker's stalls; a healthy sample of other GPUs says nothing of
the one that stalls it). Under Prolog= the preflight sees the GPUs slurmd's CUDA_VISIBLE_DEVICES names (Slurm's
prolog environment: the job's, by their ids on the node), every GPU where it names none. A step that says no ids of
its GPUs (no SLURM_STEP_GPUS) saw some, which unknown (UNKNOWN). config.seen_gpus reads the set a run saw.
"""
from __future__ import annotations

from typing import Any, Final, Literal

FIELD = "job_gpus"      # the history field: the GPU indices a run's preflight saw (none kept: every GPU)
# a run that saw some GPUs whose ids on the node no variable gave (a step without SLURM_STEP_GPUS: its
# CUDA_VISIBLE_DEVICES is numbered from 0 inside the job's device cgroup, its SLURM_JOB_GPUS the batch host's)
UNKNOWN: Final = "unknown"
Seen = frozenset[int] | Literal["unknown"] | None     # None: every GPU of the host


def kept(event: dict[str, Any]) -> frozenset[int] | None:
    """The GPUs an event's run saw, as the history kept them, or None (every GPU, or unknown ones: not kept, UNKNOWN,
    or not a list of indices)."""
    value = event.get(FIELD)
    if not isinstance(value, list) or not value or \
            not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in value):
        return None
    return frozenset(value)


def covers(event: dict[str, Any], gpus: Seen) -> bool:
    """The event's run saw every GPU this run saw (`gpus`, None: every GPU), as far as the history tells. A run of
    unknown GPUs covers only another of unknown GPUs (both as Slurm left them, as every run before the set was kept);
    none is covered by it but that."""
    if event.get(FIELD) == UNKNOWN:
        return gpus == UNKNOWN
    theirs = kept(event)
    return theirs is None or (isinstance(gpus, frozenset) and gpus <= theirs)


def field(gpus: Seen) -> list[int] | str | None:
    """The history's value for a run that saw `gpus` (None: nothing kept, every GPU)."""
    return gpus if gpus is None or isinstance(gpus, str) else sorted(gpus)
