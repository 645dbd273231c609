"""Which of verify's checks a revalidation's passing report must hold measured again (NVSentinel's return to service
reruns the check that failed; tests/test_cluster_hunt67.py, tests/test_cluster_hunt75.py).

Each drain since the node was last in service recorded the check whose fault it stood on (the history's `check`).
Where none of the history's drains is the one Slurm's reason stamps (the history of a state folder the gate no longer
writes: `make undrain STATE_DIR=` naming the old one), which check found this drain's fault is unknown: every check
of the preflight must measure again (a node drained for an all-reduce that returned wrong values was resumed on a
pass whose nccl check never ran). Pure.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# a drain's `check` that names no check of verify's: a hung preflight (proven by passes in a row), the kernel log's
# evidence (read again: KERNEL_LOG_UNREAD)
NOT_A_CHECK = frozenset({"preflight", "kernel-log"})
PREFLIGHT_CHECKS = frozenset({"gpu", "shm", "nccl"})     # verify/cli.py's PREFLIGHT_CHECKS
DRAIN_RECORD_S = 300            # the history's drain line is written within this of the reason's stamp


def recorded(drain: dict[str, Any], stamp: float) -> bool:
    """The history's drain line is the record of the drain Slurm's reason stamped at `stamp`."""
    epoch = drain.get("epoch")
    return isinstance(epoch, (int, float)) and not isinstance(epoch, bool) and abs(epoch - stamp) <= DRAIN_RECORD_S


def drained_checks(drains: Sequence[dict[str, Any] | None], claimed: tuple[str, int] | None) -> frozenset[str]:
    """The checks `drains` stood on; every preflight check where Slurm's drain (`claimed`) is none of them."""
    found = frozenset(str(d["check"]) for d in drains if d and isinstance(d.get("check"), str)
                      and d["check"] not in NOT_A_CHECK)
    known = not claimed or any(d and recorded(d, claimed[1]) for d in drains)
    return found if known else found | PREFLIGHT_CHECKS


def unreported(report: dict[str, Any], expected: bool = False) -> str | None:
    """Why a passing report is no report of a whole verify --preflight (PREFLIGHT_CHECKS), or None. verify writes a
    result for each check it is asked, even one a signal cut or never started (verify/runner.py
    run_all: INTERRUPTED, not run), a skip on a node without a GPU included (gpu GPU_NOT_VISIBLE, nccl
    NCCL_NOT_EXERCISED): a pass holding only the gpu check passed a node whose all-reduce over those GPUs was never
    judged (tests/test_cluster_hunt76.py), and one holding only the shm check (or a check of another name in the gpu
    check's place) passed a node whose GPUs were never looked at, where Slurm allocated none (hunt103). Asked
    --expect-gpus (`expected`: Slurm gave GPUs), verify fails an all-reduce that saw no GPU (NCCL_NOT_EXERCISED,
    verify/checks/nccl/verdict.py), never skips it. A confirmation's report (one check asked) has its own rule
    (verdict.confirmation)."""
    checks = [c for c in report.get("checks") or [] if isinstance(c, dict)]
    names = {c.get("name") for c in checks}
    if missing := sorted(PREFLIGHT_CHECKS - names):
        return f"verify --preflight passes with no result of its {', '.join(missing)} check(s), which it writes for " \
               "every check asked: not its report of this run"
    if expected and any(c.get("name") == "nccl" and c.get("status") == "skip" and c.get("code") == "NCCL_NOT_EXERCISED"
                        for c in checks):
        return "verify --preflight passes with its nccl check skipped for want of a GPU (NCCL_NOT_EXERCISED) beside " \
               "a gpu check that judged them, where asked --expect-gpus it fails that: not its report of this run"
    return None
