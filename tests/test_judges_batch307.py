"""Batch 307 (translated by a helper who had not read the judges): a RoCE queue pair refused with ENODATA (`Call to
ibv_modify_qp failed with 61 No data available, ... local GID index 3, local GID ::`) is an empty slot of the port's
GID table at the index NCCL was told to use: the job's NCCL_IB_GID_INDEX (or the table renumbered under a running job
as the interface's addresses changed), never evidence of a broken adapter (NVIDIA's NCCL environment documentation:
NCCL 2.21 on picks a RoCE v2 GID itself). A completion error or a port down stays the host's."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict
from verify.checks.nccl.nogid import nogid_cause

pytestmark = pytest.mark.unit

WARN = ("misc/ibvwrap.cc:380 (wrap_ibv_modify_qp) NCCL WARN Call to ibv_modify_qp failed with 61 No data available, on "
        "dev roceP2p1s0f0:1, curr state INIT, next state RTR, local GID index 3, local GID ::")


def test_a_pinned_gid_index_that_holds_no_gid_is_the_job_s() -> None:
    why = nogid_cause({"nccl_env": {"NCCL_IB_GID_INDEX": "3"}}, WARN)
    assert why is not None and why[2] == "job" and "NCCL_IB_GID_INDEX" in why[0] and "=3" in why[1]


def test_the_facts_with_the_pinned_index_judge_the_job() -> None:
    assert nccl_verdict(error=f"collective: {WARN}", nccl_env={"NCCL_IB_GID_INDEX": "3"}) == \
        ("fail", "NCCL_FAILED", "job")


@pytest.mark.parametrize("text", [WARN, WARN.replace(" No data available, on", "\nNo data available, on")])
def test_the_warn_as_printed_or_wrapped_after_its_number_is_never_the_node_s(text: str) -> None:
    r = explained(text + "\n")
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_another_errno_of_modify_qp_is_not_this_rule() -> None:
    assert nogid_cause({}, "NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out") is None
    assert nogid_cause({}, "NCCL WARN Call to ibv_modify_qp failed with 612 Something") is None
