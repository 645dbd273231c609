"""The GPUs a run's preflight saw, kept in the history so that a hang streak ends only at a run that saw them.

As a job's first step the preflight sees the job's GPUs alone (Slurm's device cgroup, CUDA_VISIBLE_DEVICES): on a
node shared by jobs (gres/gpu per job), the job on GPUs 0-3 whose preflight hung on a stuck GPU 2, then another job's
pass on GPUs 4-7, then a hang on 0-3 again... was "1 of 3" for ever: a pass that tested none of the stuck GPU ended
the streak (NVSentinel's checker rule counts the checker's stalls; a healthy sample of other GPUs says nothing of
the one that stalls it). Under Prolog= the preflight sees every GPU of the host: its runs keep no set (all).
config.seen_gpus reads the set a step saw.
"""
from __future__ import annotations

from typing import Any

FIELD = "job_gpus"      # the history field: the GPU indices a step's preflight saw (none kept: every GPU)


def kept(event: dict[str, Any]) -> frozenset[int] | None:
    """The GPUs an event's run saw, as the history kept them, or None (every GPU: not kept, or not a list of
    indices)."""
    value = event.get(FIELD)
    if not isinstance(value, list) or not value or \
            not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in value):
        return None
    return frozenset(value)


def covers(event: dict[str, Any], gpus: frozenset[int] | None) -> bool:
    """The event's run saw every GPU this run saw (`gpus`, None: every GPU), as far as the history tells."""
    theirs = kept(event)
    return theirs is None or (gpus is not None and gpus <= theirs)
