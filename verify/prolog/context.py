"""Whether slurmd runs this as its Prolog= or Epilog= (SLURM_SCRIPT_CONTEXT prolog_slurmd, epilog_slurmd).

Slurm's prolog and epilog semantics are one: slurmd runs either with its own environment (the operator's, never a
job's), and a non-zero exit of either drains the node ("If the Epilog fails (returns a non-zero exit code), this
will result in the node being set to a DRAIN state", slurm.conf). So a health check run as Epilog= (the check after
each job, as NVSentinel's post-job checks do) is gated, traced and exits as under Prolog=: only a drain of ours is
non-zero, and the operator's knobs in slurmd's environment hold (read as a job's, they were ignored and the epilog's
history went to another folder than the prolog's).
"""
from __future__ import annotations

from collections.abc import Mapping

CONTEXTS = ("prolog", "epilog")      # SLURM_SCRIPT_CONTEXT's prefixes for the scripts slurmd runs for a job
# PrologSlurmctld= and EpilogSlurmctld= (SLURM_SCRIPT_CONTEXT prolog_slurmctld, epilog_slurmctld) run on the
# controller's host for every job of the cluster, never on the job's nodes (SchedMD's Prolog and Epilog Guide): a
# prolog line put there (a slurm.conf slip) judged the controller's host on each job and drained it by its own host
# name (a head node that is also a compute node: drained for the GPUs of jobs it never ran); a non-zero exit there
# requeues or kills the job. Its exits are the prolog's (only a drain is non-zero), and the run is refused
# (config.py: CONFIG_ERROR, exit 0)
CONTROLLER = ("prolog_slurmctld", "epilog_slurmctld")


def by_slurmd(env: Mapping[str, str]) -> bool:
    """slurmd runs this as Prolog= or Epilog=: SLURM_SCRIPT_CONTEXT says so and no SLURM_STEP_ID says otherwise.
    SLURM_SCRIPT_CONTEXT is a claim any job can export; slurmstepd sets SLURM_STEP_ID in every step and slurmd's
    Prolog=/Epilog= environment has none, so a step that forged the context is still a step: a job's or image's
    fault still fails it, a drain still asks the requeue, and a drain refused still exits 1 (read as Prolog=, each
    exited 0 and the job ran on)."""
    return claimed(env) and not env.get("SLURM_STEP_ID", "").strip()


def claimed(env: Mapping[str, str]) -> bool:
    """SLURM_SCRIPT_CONTEXT names slurmd's Prolog= or Epilog= (forged() says when a step claims it)."""
    return env.get("SLURM_SCRIPT_CONTEXT", "").startswith(CONTEXTS)


def forged(env: Mapping[str, str]) -> str | None:
    """The note for a step's SLURM_SCRIPT_CONTEXT (one slurmd never gave it), or None."""
    if not claimed(env) or by_slurmd(env):
        return None
    return (f"SLURM_SCRIPT_CONTEXT={env['SLURM_SCRIPT_CONTEXT'][:40]!r} in a job's step (SLURM_STEP_ID "
            f"{env['SLURM_STEP_ID'].strip()[:20]}): slurmd sets it for its Prolog= and Epilog= only, which have no step; "
            "ignored, run as the step it is")


def by_slurmctld(env: Mapping[str, str]) -> bool:
    """SLURM_SCRIPT_CONTEXT says slurmctld runs this as PrologSlurmctld= or EpilogSlurmctld= (on the controller)."""
    return env.get("SLURM_SCRIPT_CONTEXT", "").strip() in CONTROLLER
