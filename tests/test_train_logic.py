# mypy: disable-error-code="arg-type, typeddict-item"
# (the judge takes TypedDict facts; these tests hand it partial or malformed facts, as a JSON record would)
"""The train check's pure judge and its plausibility gate, driven by hand-made facts (`handmade` in every name).

The facts are what verify/checks/train/probing.py records for a 2-node group (one rank per node); each test changes
one thing: a replica that diverges at step k, a NaN loss, a loss that does not fall, a rate above the SKU's peak.
"""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.verify_handmade import handmade_steps, handmade_train_facts
from verify import judging, replay
from verify.checks import CHECKS
from verify.checks.train import trainer
from verify.options import Options
from verify.result import CheckResult

pytestmark = pytest.mark.unit

H100 = "NVIDIA H100 80GB HBM3"
CHECK = CHECKS["train"]


def judged(facts: dict[str, Any], source: str | None = None, **options: Any) -> CheckResult:
    return judging.judge(CHECK, facts, Options(**options), source=source)


def test_handmade_a_healthy_cpu_run_passes_with_its_figures_reported_not_judged():
    r = judged(handmade_train_facts())
    assert r.status == "pass", r
    assert "replicas identical at every step" in r.summary and "not judged" in r.summary
    # across nodes the rate is the group's, not a node's figure for the fleet report
    assert r.metrics["group_tokens_per_s"].unit == "tokens/s" and "tokens_per_s" not in r.metrics
    assert r.metrics["first_step_s"].value == 0.2
    last = f"{0xabc000 + 29:016x}"
    assert [(x["node"], x["checksum"]) for x in r.data["replicas"]] == [("n1", last), ("n2", last)]
    one_node = handmade_train_facts()
    one_node["nodes"] = 1
    for rank in one_node["ranks"]:      # both ranks on n1: `nodes` is the count of node names the ranks give
        rank["node"] = "n1"
    assert judged(one_node).metrics["tokens_per_s"].value > 0


@pytest.mark.parametrize("what", ["checksum", "loss"])
def test_handmade_a_replica_that_differs_at_step_k_fails_naming_step_rank_and_node(what):
    facts = handmade_train_facts()
    k = 17
    facts["ranks"][1]["steps"][k - 1][what] = "00000000deadbeef" if what == "checksum" else 2.5001
    r = judged(facts)
    assert (r.status, r.code, r.owner) == ("fail", "TRAIN_REPLICA_MISMATCH", "host"), r
    assert f"step {k}" in r.summary and "rank 1 on node n2" in r.summary
    assert ("checksum 00000000deadbeef" if what == "checksum" else "global loss 2.5001") in r.summary
    assert r.data["divergence"] == {"step": k, "ranks": [1], "nodes": ["n2"]}


def test_handmade_the_majority_names_the_odd_rank_out_of_three():
    facts = handmade_train_facts()
    facts["ranks"].append({**copy.deepcopy(facts["ranks"][1]), "rank": 2, "node": "n3"})
    facts.update(world_size=3, nodes=3, mode="torchrun group: rank 0 of 3, n1:29500")   # a third rank on a third node: the group says so too
    facts["ranks"][0]["steps"][4]["checksum"] = "0000000000000001"
    r = judged(facts)
    assert r.code == "TRAIN_REPLICA_MISMATCH" and "step 5" in r.summary and "rank 0 on node n1" in r.summary
    assert "rank 2" not in r.summary


def test_handmade_a_nan_loss_fails_with_its_own_code():
    facts = handmade_train_facts()
    for rank in facts["ranks"]:
        del rank["steps"][12:]
        rank["steps"][-1]["loss"] = "nan"
        rank["timed_steps"] = 12 - trainer.WARMUP        # the trainer stops at the nan and times what it ran
    r = judged(facts)
    assert (r.status, r.code, r.owner) == ("fail", "TRAIN_LOSS_NOT_FINITE", "host"), r
    assert "nan at step 12" in r.summary


def test_handmade_a_loss_that_does_not_fall_fails():
    facts = handmade_train_facts()
    for rank in facts["ranks"]:
        rank["steps"] = handmade_steps(first=4.9, last=4.0)
    r = judged(facts)
    assert (r.status, r.code, r.owner) == ("fail", "TRAIN_LOSS_NOT_FALLING", "host"), r
    assert "4.900 at step 1" in r.summary


def test_handmade_a_throughput_above_the_skus_peak_is_refused_by_the_gate():
    # 10M tokens/s of a 707 MFLOP/token model on 2 H100s: 3,500 TFLOP/s per GPU, 3.5x the dense BF16 peak
    facts = handmade_train_facts(gpu=True, tokens_per_s=10e6)
    live, replayed = judged(facts), judged(facts, source="r/train.json")
    assert (live.status, live.code) == ("fail", "MEASUREMENT_INVALID"), live
    assert (replayed.status, replayed.code, replayed.owner) == ("fail", "FACTS_INVALID", "job"), replayed
    assert "above 989 TFLOP/s" in replayed.summary and "physically impossible" in replayed.summary
    assert judged(handmade_train_facts(gpu=True, tokens_per_s=300e3)).status == "pass"


def test_handmade_a_gpu_run_is_judged_by_mfu_against_the_sku_floor():
    ok = judged(handmade_train_facts(gpu=True, tokens_per_s=400e3))      # 141 TFLOP/s per GPU: MFU 0.14
    assert ok.status == "pass" and 0.13 < ok.metrics["mfu"].value < 0.15, ok
    slow = judged(handmade_train_facts(gpu=True, tokens_per_s=150e3))    # MFU 0.054: below 0.75x the floor 0.1
    assert (slow.status, slow.code, slow.owner) == ("fail", "TRAIN_SLOW", "host"), slow
    unknown = handmade_train_facts(gpu=True, tokens_per_s=150e3)
    unknown["device_name"] = "NVIDIA Imaginary GPU"
    r = judged(unknown)
    assert r.status == "pass" and "no baseline" in r.summary


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, "NaN", True, None])
def test_handmade_a_loss_that_is_no_number_nor_an_explicit_word_is_refused(value):
    facts = handmade_train_facts()
    facts["ranks"][0]["steps"][3]["loss"] = value
    r = judged(facts, source="r/train.json")
    assert (r.status, r.code) == ("fail", "FACTS_INVALID"), r
    assert "ranks[0].steps[3]" in r.summary


@pytest.mark.parametrize(("path", "value", "why"), [
    (("ranks", 0, "timed_s"), 0.0, "timed_s"), (("ranks", 1, "steps", 2, "checksum"), "xyz", "checksum"),
    (("config", "seq_len"), 0, "config.seq_len"), (("failures",), {}, "failures"), (("ranks", 0, "node"), 7, "node"),
])
def test_handmade_impossible_or_malformed_figures_are_refused(path, value, why):
    facts = handmade_train_facts()
    target: Any = facts
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    r = judged(facts, source="r/train.json")
    assert (r.status, r.code) == ("fail", "FACTS_INVALID") and why in r.summary, r


def test_handmade_a_missing_step_record_is_refused_and_an_empty_run_is_never_a_pass():
    facts = handmade_train_facts()
    del facts["ranks"][1]["steps"][5]["checksum"]
    assert judged(facts, source="r/train.json").code == "FACTS_INVALID"
    empty = handmade_train_facts()
    empty["ranks"] = []               # no rank answered and none failed: world_size's ranks are unaccounted for
    r = judged(empty)
    assert (r.status, r.code) == ("fail", "MEASUREMENT_INVALID") and "neither answered nor failed" in r.summary
    stepless = handmade_train_facts()
    for rank in stepless["ranks"]:
        rank["steps"] = []            # every rank answered with no step: an empty result (FACTS.md), no measurement
    r = judged(stepless)
    assert (r.status, r.code) == ("fail", "MEASUREMENT_INVALID") and "without a training step" in r.summary
    short = handmade_train_facts()
    del short["ranks"][1]["steps"][-1]
    assert judged(short).code == "MEASUREMENT_INVALID"


@pytest.mark.parametrize(("failure", "code", "owner"), [
    ({"phase": "data", "type": "RuntimeError", "message": "unable to allocate shared memory(shm) for file",
      "shm_error": "unable to allocate shared memory(shm) for file"}, "SHM_TOO_SMALL", "job"),
    ({"phase": "data", "type": "RuntimeError", "message": "DataLoader worker exited unexpectedly"}, "LOADER_FAILED", "job"),
    ({"phase": "train", "type": "DistBackendError", "message": "NCCL error: unhandled system error"}, "TRAIN_FAILED", "host"),
    ({"phase": "train", "type": "TypeError", "message": "unsupported operand"}, "CHECK_CRASHED", "image"),
    ({"phase": "timeout", "type": "timeout", "message": "no answer within 180 s"}, "TRAIN_FAILED", "host"),
])
def test_handmade_a_failed_rank_is_owned_as_the_data_path_or_the_run_decides(failure, code, owner):
    facts = handmade_train_facts()
    facts["failures"] = [{"rank": 1, "node": "n2", **failure}]
    r = judged(facts)
    assert (r.status, r.code, r.owner) == ("fail", code, owner), r
    assert "rank 1 on node n2" in r.summary


def test_handmade_a_copied_token_file_is_the_images_and_no_gpu_with_expect_gpus_fails():
    facts = handmade_train_facts()
    facts["ranks"][1]["loader"]["zero_copy"] = False
    assert (judged(facts).code, judged(facts).owner) == ("ARROW_COPIED", "image")
    r = judged(handmade_train_facts(), expect_gpus=1)
    assert (r.status, r.code) == ("fail", "GPU_NOT_VISIBLE")


def test_handmade_facts_replay_through_from_facts(tmp_path):
    folder = tmp_path / "train-2node-handmade"
    folder.mkdir()
    (folder / "host.json").write_text(json.dumps({"facts_schema": 2, "hostname": "n1", "checks": ["train"]}))
    facts = handmade_train_facts()
    facts["ranks"][1]["steps"][8]["checksum"] = "0000000000000bad"
    (folder / "train.json").write_text(json.dumps({"check": "train", "facts_schema": 2, "facts": facts, "result": None}))
    loaded = replay.load(str(folder), None, {})
    r = replay.judge(loaded.records[0], loaded.options)
    assert (r.code, r.owner) == ("TRAIN_REPLICA_MISMATCH", "host") and "step 9" in r.summary and "n2" in r.summary
