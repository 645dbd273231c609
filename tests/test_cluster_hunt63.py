# mypy: disable-error-code="arg-type, typeddict-item, index"
# (judges take their TypedDict facts; these tests hand them partial or malformed facts, as a JSON record would)
"""Round 63 of the cluster hunt (issue 36).

Class 6, facts that cannot be true: how a launcher numbers a group's ranks. torchrun (and mpirun's and srun's local
ids) number each launcher's processes 0..n-1 on its node (PyTorch's elastic agent: LOCAL_RANK in
[0, nproc_per_node)), and the trainer drives cuda:<LOCAL_RANK>: a record whose local ranks on a node skip one, or
whose one launcher on a node ran more ranks than the GPUs it saw, is no group that ran (verify/FACTS.md's rule:
refused, naming the fields, never judged and never a pass).
"""
from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.verify_handmade import assert_refused, handmade_train_facts, judged_both_ways

pytestmark = pytest.mark.unit


def _laid_out(layout: list[tuple[str, int]], gpus: int = 8) -> dict[str, Any]:
    """A healthy group (GPUs over NCCL; gpus 0: CPUs over gloo) with one rank per (node, local rank) of `layout`, as
    torchrun's rank 0 records it."""
    facts = handmade_train_facts(gpu=gpus > 0)
    first = facts["ranks"][0]
    facts["ranks"] = [{**copy.deepcopy(first), "rank": i, "node": node, "local_rank": local}
                      for i, (node, local) in enumerate(layout)]
    world = len(layout)
    facts.update(world_size=world, nodes=len({n for n, _ in layout}), gpus=gpus,
                 mode=f"torchrun group: rank 0 of {world}, n1:29500")
    return facts


def test_torchrun_numbers_a_nodes_local_ranks_from_zero_a_gap_is_refused() -> None:
    """n1 holds local rank 9 and none of 0..8: a launcher that ran it ran nine more ranks no record shows."""
    assert_refused("train", _laid_out([("n1", 0), ("n2", 9)]), "local rank 9", "local rank 8 0 time(s)")


def test_one_launcher_on_eight_gpus_runs_no_twelfth_rank_over_nccl() -> None:
    """Rank 0's node ran local ranks 0..11 under one launcher that saw 8 GPUs: cuda:8 to cuda:11 are no GPUs (NCCL
    runs one rank per GPU); the record passed at 16 ranks on 2 nodes of 8 GPUs."""
    layout = [("n1", i) for i in range(12)] + [("n2", i) for i in range(4)]
    assert_refused("train", _laid_out(layout), "local rank 11", "gpus 8")


def test_two_launchers_on_one_node_are_still_judged() -> None:
    """srun --ntasks-per-node=2 with torchrun --nproc-per-node=4 on CPU nodes: each task's local ranks are 0..3 on
    the same node name. A real group: judged, never refused."""
    layout = [("n1", i % 4) for i in range(8)] + [("n2", i % 4) for i in range(8)]
    live, replayed = judged_both_ways("train", _laid_out(layout, gpus=0))
    assert replayed.code != "FACTS_INVALID" and live.code != "MEASUREMENT_INVALID", replayed.summary


def test_a_group_with_a_failed_rank_is_not_held_to_whole_numbering() -> None:
    """A rank that failed leaves its local rank unrecorded: the gap is the failure's, judged as one."""
    facts = _laid_out([("n1", 0), ("n2", 0), ("n2", 1)])
    lost = facts["ranks"].pop(1)
    facts["failures"] = [{"rank": lost["rank"], "node": "n2", "phase": "train", "type": "RuntimeError",
                          "message": "boom"}]
    _, replayed = judged_both_ways("train", facts)
    assert (replayed.status, replayed.code) == ("fail", "TRAIN_FAILED"), replayed.summary
