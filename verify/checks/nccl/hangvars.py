"""The job's own NCCL_* variables that NCCL's maintainers say can hang a collective: a hang under one of them is
first the job's setting to undo, and the remedy names it (as the job's other settings' remedies do: bandwidth.py's
`Unset NCCL_P2P_DISABLE`, settings.py's retry budget).

- NCCL_P2P_USE_CUDA_MEMCPY=1 (off by default): P2P transfers progressed by cudaMemcpy calls from NCCL's proxy thread
  instead of NCCL's kernels. NVIDIA/nccl#907 (2023): "can give better performance on specific architectures, but can
  also cause hangs"; NVIDIA/nccl#1480 (2024), a hang under it: "Which is expected ... you should not set it unless you
  really need it"; NVIDIA/nccl#1509: a DDP all-reduce between two GPUs of one NUMA node hangs with it set.

Pure: facts in, words out; no verdict turns on it (a hang's owner is decided by its own rules)."""
from __future__ import annotations

from ...facts import NcclFacts
from .transport import job_env, switched_on

# variable -> what it does (NCCL's environment documentation), for the report
HANGS = {"NCCL_P2P_USE_CUDA_MEMCPY": "P2P copies by cudaMemcpy from NCCL's proxy thread, a mode NCCL's maintainers "
                                     "say can hang"}


def hang_settings(facts: NcclFacts) -> list[str]:
    """The job's `NAME=value` settings of HANGS switched on (any value but empty or 0)."""
    env = job_env(facts)
    return [f"{k}={env[k]}" for k in switched_on(env, HANGS)]


def hang_said(facts: NcclFacts) -> str:
    """The summary's words for them ("" where none): what the job set and what it does."""
    settings = hang_settings(facts)
    return "".join(f"; the job set {s} ({HANGS[s.split('=', 1)[0]]})" for s in settings)


def hang_tip(facts: NcclFacts) -> str | None:
    """The remedy's first step where the job set one: unset it and rerun."""
    settings = hang_settings(facts)
    if not settings:
        return None
    names = " and ".join(s.split("=", 1)[0] for s in settings)
    return f"Unset {names} in the job (it set {', '.join(settings)}) and rerun."
