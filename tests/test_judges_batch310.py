"""Batch 310 (translated by a helper who had not read the judges): NCCL's enqueue refusing a collective because the
algorithms and protocols the job allowed hold none for it (`Error : no algorithm/protocol available for function
ReduceScatter with datatype ncclFloat32. NCCL_ALGO was set to nvls.`) is the job's setting, before any byte moved,
never the node (NVIDIA's NCCL environment documentation: NCCL_ALGO / NCCL_PROTO restrict what NCCL may pick)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict
from verify.checks.nccl.midrun import job_side

pytestmark = pytest.mark.unit

LINE = ("Error : no algorithm/protocol available for function ReduceScatter with datatype ncclFloat32. NCCL_ALGO was "
        "set to nvls.")


@pytest.mark.parametrize("name, value", [("NCCL_ALGO", "nvls"), ("NCCL_PROTO", "LL128"), ("NCCL_ALGO", "^ring,tree")])
def test_a_forced_algorithm_without_an_implementation_is_the_job_s(name: str, value: str) -> None:
    said = f"no algorithm/protocol available for function AllGather with datatype ncclBfloat16. {name} was set to {value}."
    side = job_side(said)
    assert side is not None and f"{name}={value}" in side[0] and name in side[1]


def test_the_facts_judge_the_job_and_never_drain() -> None:
    assert nccl_verdict(error=f"reduce_scatter: {LINE}", nccl_env={"NCCL_ALGO": "nvls"}) == ("fail", "NCCL_FAILED", "job")


@pytest.mark.parametrize("text", [LINE, f"node1:12:12 [0] enqueue.cc:1830 NCCL WARN {LINE}"])
def test_nccl_s_line_bare_or_tagged_explained_is_the_job_s(text: str) -> None:
    r = explained(text + "\n")
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_the_words_without_the_setting_named_are_not_this_rule() -> None:
    assert job_side("no algorithm/protocol available for function AllReduce with datatype ncclFloat32") is None
