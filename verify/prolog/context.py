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
    """SLURM_SCRIPT_CONTEXT says slurmd runs this as Prolog= or Epilog= (a claim a batch script can forge too:
    SLURM_STEP_ID and --mode step still make a step a job's, settings.job_env)."""
    return env.get("SLURM_SCRIPT_CONTEXT", "").startswith(CONTEXTS)


def by_slurmctld(env: Mapping[str, str]) -> bool:
    """SLURM_SCRIPT_CONTEXT says slurmctld runs this as PrologSlurmctld= or EpilogSlurmctld= (on the controller)."""
    return env.get("SLURM_SCRIPT_CONTEXT", "").strip() in CONTROLLER
